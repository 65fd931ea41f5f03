//! `syncbench graph` end to end: JSON agrees with an independent SVD (one-sided Jacobi, written
//! here) to 1e-9 on random graphs, regular or not, weighted or not; bad input fails clearly.

mod common;

use common::tmpdir;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_syncbench"))
}

/// Singular values by one-sided Jacobi rotations (Hestenes), descending.
fn jacobi_singular_values(mut a: Vec<Vec<f64>>) -> Vec<f64> {
    let n = a.len();
    for _sweep in 0..100 {
        let mut rotated = false;
        for i in 0..n {
            for j in i + 1..n {
                let (mut alpha, mut beta, mut gamma) = (0.0, 0.0, 0.0);
                for row in &a {
                    alpha += row[i] * row[i];
                    beta += row[j] * row[j];
                    gamma += row[i] * row[j];
                }
                if gamma.abs() <= 1e-15 * (alpha * beta).sqrt() || gamma == 0.0 {
                    continue;
                }
                rotated = true;
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                for row in a.iter_mut() {
                    let (x, y) = (row[i], row[j]);
                    row[i] = c * x - s * y;
                    row[j] = s * x + c * y;
                }
            }
        }
        if !rotated {
            break;
        }
    }
    let mut s: Vec<f64> = (0..n)
        .map(|c| a.iter().map(|r| r[c] * r[c]).sum::<f64>().sqrt())
        .collect();
    s.sort_by(|x, y| y.total_cmp(x));
    s
}

/// P = diag(d_in)^-1 A from an edge list, self-loops added (weight 1) where absent.
fn transition(n: usize, edges: &[(usize, usize, f64)]) -> Vec<Vec<f64>> {
    let mut a = vec![vec![0.0; n]; n];
    for &(s, d, w) in edges {
        a[d][s] = w;
    }
    for (i, row) in a.iter_mut().enumerate() {
        if row[i] == 0.0 {
            row[i] = 1.0;
        }
        let d: f64 = row.iter().sum();
        for x in row.iter_mut() {
            *x /= d;
        }
    }
    a
}

fn write_graph(path: &Path, n: usize, edges: &[(usize, usize, f64)], weighted: bool) {
    let mut s = format!("# random test graph\nnodes {n}\n");
    for &(a, b, w) in edges {
        if weighted {
            s.push_str(&format!("{a} {b} {w:.17}\n"));
        } else {
            s.push_str(&format!("{a} {b}\n"));
        }
    }
    std::fs::write(path, s).unwrap();
}

fn graph_json(path: &Path) -> serde_json::Value {
    let out = bin()
        .args(["graph", "--json", "--file"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn json_matches_independent_svd_on_random_graphs() {
    let dir = tmpdir("svd");
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for case in 0..24 {
        let n = rng.gen_range(2..=20);
        let weighted = case % 2 == 1;
        let mut edges = Vec::new();
        if case % 3 == 0 {
            // regular: circulant with random offsets
            let offs: Vec<usize> = (0..rng.gen_range(1..n.min(4)))
                .map(|_| rng.gen_range(1..n))
                .collect();
            for i in 0..n {
                for &o in &offs {
                    let j = (i + o) % n;
                    if !edges.iter().any(|&(a, b, _)| a == i && b == j) {
                        edges.push((
                            i,
                            j,
                            if weighted {
                                rng.gen_range(0.1..3.0)
                            } else {
                                1.0
                            },
                        ));
                    }
                }
            }
        } else {
            let p = rng.gen_range(0.05..0.6);
            for a in 0..n {
                for b in 0..n {
                    if a != b && rng.gen_bool(p) {
                        edges.push((
                            a,
                            b,
                            if weighted {
                                rng.gen_range(0.1..3.0)
                            } else {
                                1.0
                            },
                        ));
                    }
                }
            }
        }
        let path = dir.join(format!("g{case}.txt"));
        write_graph(&path, n, &edges, weighted);
        let v = graph_json(&path);
        let s = jacobi_singular_values(transition(n, &edges));
        let expected = 1.0 - s[1];
        let got = v["spectral_gap_sv"].as_f64().unwrap();
        assert!(
            (got - expected).abs() < 1e-9,
            "case {case} (n={n}, weighted={weighted}): syncbench {got} vs Jacobi {expected}"
        );
        assert_eq!(v["nodes"].as_u64().unwrap() as usize, n);
        assert_eq!(v["edges"].as_u64().unwrap() as usize, edges.len());
        assert!(v["connected"].is_boolean());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn symmetric_graphs_have_equal_gaps() {
    // Undirected regular graphs give a symmetric P: |eigenvalues| = singular values.
    for kind in ["ring", "ring-based", "double-ring", "complete"] {
        let out = bin()
            .args(["graph", "--json", "--nodes", "16", "--kind", kind])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let (sv, eig) = (
            v["spectral_gap_sv"].as_f64().unwrap(),
            v["spectral_gap_eig"].as_f64().unwrap(),
        );
        assert!((sv - eig).abs() < 1e-9, "{kind}: {sv} vs {eig}");
    }
}

#[test]
fn disconnected_file_has_gap_zero() {
    let dir = tmpdir("disc");
    let path = dir.join("two.txt");
    std::fs::write(&path, "0 1\n1 0\n2 3\n3 2\n").unwrap();
    let v = graph_json(&path);
    assert!(v["spectral_gap_sv"].as_f64().unwrap().abs() < 1e-9);
    assert!(v["spectral_gap_eig"].as_f64().unwrap().abs() < 1e-9);
    assert_eq!(v["connected"], serde_json::Value::Bool(false));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_fails_naming_the_problem() {
    let dir = tmpdir("bad");
    let path = dir.join("bad.txt");
    std::fs::write(&path, "# ok\n0 1\n1 zero\n").unwrap();
    let out = bin().args(["graph", "--file"]).arg(&path).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.txt:3:"), "{err}");
    let missing = dir.join("missing.txt");
    std::fs::write(&missing, "0 1\n1 3\n3 0\n").unwrap();
    let out = bin()
        .args(["graph", "--file"])
        .arg(&missing)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("node 2"));
    let out = bin()
        .args(["graph", "--kind", "hypercube"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("hypercube"));
    let out = bin()
        .args(["graph", "--kind", "ring", "--nodes", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 2"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hop_fig21_gap_of_the_eight_node_ring_based_graph() {
    let out = bin()
        .args(["graph", "--json", "--nodes", "8", "--kind", "ring-based"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Hop's Fig 21 (§7.3.6) gives 0.6667 for this graph.
    let g = v["spectral_gap_laplacian"].as_f64().unwrap();
    assert!((g - 2.0 / 3.0).abs() < 1e-6, "{g}");
    let text = bin()
        .args(["graph", "--nodes", "8", "--kind", "ring-based"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("1 - Re l2(D^-1 A)): 0.666667"));
}

/// A figure's random-regular graph from its seed: the same edges as the experiments' builder
/// (`bench_core::topology::random_regular`), every node of degree D, another seed another graph.
#[test]
fn random_regular_graphs_are_built_from_their_seed() {
    let json = |seed: &str| -> serde_json::Value {
        let out = bin()
            .args([
                "graph",
                "--json",
                "--kind",
                "random-regular-3",
                "--nodes",
                "10",
            ])
            .args(["--seed", seed])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = json("7");
    let want = bench_core::topology::random_regular(10, 3, 7).unwrap();
    assert_eq!(v["edge_list"], serde_json::to_value(want.edges()).unwrap());
    assert_eq!(v["regular"], true);
    // Out-degrees count the self-loop.
    assert!(v["out_degrees"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d.as_u64() == Some(4)));
    assert_eq!(json("7")["edge_list"], v["edge_list"]);
    assert_ne!(json("8")["edge_list"], v["edge_list"]);
    let bad = bin()
        .args(["graph", "--kind", "random-regular-x", "--nodes", "10"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("random-regular-x"));
}
