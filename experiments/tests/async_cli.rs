//! The ASYNC experiment binaries end to end on tiny configurations: files written, the
//! simulator deterministic, and bad configurations (delays out of range, a sampling rate of
//! 0, a barrier that never admits a worker) rejected with a clear error and nothing written.

mod common;

use common::tmpdir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const COMMON: &str = r#"
[common]
workers = 4
eval_every_rounds = 1
async_barrier = "asp"
staleness_lr = false
[common.compute]
ns_per_example = 100000.0
[common.network]
latency_ns = 50000
bandwidth_gbps = 10.0
[common.threads]
ring_depth = 4
stall_timeout_ms = 30000

[[datasets]]
name = "epsilon"
shape = { kind = "dense", rows = 800, features = 20, density = 1.0, nonnegative = false, label_noise = 0.1 }
sgd = { sampling_rate = 0.1, step = 8.0, rounds = 30, target_relative_error = 0.3 }
saga = { sampling_rate = 0.1, step = 4.0, rounds = 30, target_relative_error = 0.3 }
"#;

fn cds() -> String {
    format!(
        "delays = [0.0, 1.0]\nstraggler = 0\njitter_sigma = 0.0\nflat_tolerance = 0.2\nmin_speedup_at_max_delay = 1.5\n{COMMON}"
    )
}

fn pcs() -> String {
    format!(
        "jitter_sigma = 0.0\nmin_speedup = 2.0\n[production]\nshare = 0.5\nlong_tail_share = 0.5\nmoderate = [1.5, 2.5]\nlong_tail = [2.5, 10.0]\n{COMMON}"
    )
}

fn run(bin: &str, out: &Path, cfg_text: &str, extra: &[&str]) -> Output {
    let cfg = out.with_extension("toml");
    std::fs::write(&cfg, cfg_text).unwrap();
    Command::new(bin)
        .args(extra)
        .arg("--out")
        .arg(out)
        .arg("--config")
        .arg(&cfg)
        .output()
        .unwrap()
}

/// The figures' root of a [`run`] into `out`: its configuration is not a committed one, so
/// the figures go beside the built-in run's, under `out/config/<name>/`.
fn root(out: &Path) -> PathBuf {
    common::config_root(out, &out.with_extension("toml"))
}

fn read(p: PathBuf) -> String {
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn cds_writes_both_figures_and_is_deterministic() {
    let dir = tmpdir("cds");
    let (a, b) = (dir.join("a"), dir.join("b"));
    for out in [&a, &b] {
        let o = run(env!("CARGO_BIN_EXE_async-fig3-4"), out, &cds(), &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    for f in ["curves.csv", "summary.csv", "claims.csv", "manifest.json"] {
        assert!(root(&a).join("async-fig3").join(f).exists(), "{f}");
    }
    for f in ["waits.csv", "summary.csv", "claims.csv", "manifest.json"] {
        assert!(root(&a).join("async-fig4").join(f).exists(), "{f}");
    }
    assert_eq!(
        read(root(&a).join("async-fig3/curves.csv")),
        read(root(&b).join("async-fig3/curves.csv"))
    );
    let summary = read(root(&a).join("async-fig3/summary.csv"));
    for v in ["epsilon,sgd,0.0", "epsilon,asgd,1.0"] {
        assert!(summary.contains(v), "{summary}");
    }
    let claims = read(root(&a).join("async-fig4/claims.csv"));
    assert!(
        claims.contains("async-fig4/epsilon/sgd-wait-grows"),
        "{claims}"
    );
    // Without a dispatch cost the asynchronous wait is flat by construction, and says so.
    assert!(
        claims
            .lines()
            .any(|l| l.contains("async-fig4/epsilon/asgd-wait-flat")
                && l.contains("true by construction")
                && l.contains("not exercised")),
        "{claims}"
    );
    // Four workers, both variants, both delays: one wait row per worker each.
    assert_eq!(
        read(root(&a).join("async-fig4/waits.csv")).lines().count(),
        1 + 4 * 2 * 2
    );
}

/// The step grid re-derives exactly the headline's convergence claims (the sim driver's, under
/// the same ids when several drivers run), the headline rows at factor 1.
#[test]
fn the_step_sensitivity_grid_re_derives_the_sim_claims() {
    let dir = tmpdir("cds-sens");
    let out = dir.join("a");
    let cfg = format!("{}\n[sensitivity]\nstep_scale = [0.5]\n", cds());
    let o = run(
        env!("CARGO_BIN_EXE_async-fig3-4"),
        &out,
        &cfg,
        &["--driver", "sim,threads", "--seeds", "1"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sens = read(root(&out).join("async-fig3/sensitivity.csv"));
    let claims = read(root(&out).join("async-fig3/claims.csv"));
    let ids = |text: &str, setting: Option<&str>| {
        let mut v: Vec<String> = text
            .lines()
            .skip(1)
            .filter(|l| setting.is_none_or(|s| l.starts_with(s)))
            .filter_map(|l| l.split(',').find(|f| f.starts_with("async-fig3/")))
            .map(str::to_string)
            .collect();
        v.sort();
        v
    };
    let sim: Vec<String> = ids(&claims, None)
        .into_iter()
        .filter(|id| id.contains("/sim/"))
        .collect();
    assert_eq!(sim.len(), 4, "{claims}");
    assert_eq!(ids(&sens, Some("step_scale=1,true,")), sim, "{sens}");
    assert_eq!(ids(&sens, Some("step_scale=0.5,false,")), sim, "{sens}");
    // an empty grid is refused, naming the field
    let bad = format!("{}\n[sensitivity]\nstep_scale = []\n", cds());
    let o = run(
        env!("CARGO_BIN_EXE_async-fig3-4"),
        &dir.join("b"),
        &bad,
        &[],
    );
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("sensitivity.step_scale"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!root(&dir.join("b")).join("async-fig3").exists());
}

#[test]
fn saga_and_pcs_write_their_figures() {
    let dir = tmpdir("pcs");
    let out = dir.join("r");
    let o = run(env!("CARGO_BIN_EXE_async-fig5-6"), &out, &cds(), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(read(root(&out).join("async-fig5/summary.csv")).contains("epsilon,asaga,1.0"));
    let o = run(
        env!("CARGO_BIN_EXE_async-fig7-8"),
        &out,
        &pcs(),
        &["--driver", "sim,threads"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for fig in ["async-fig7", "async-fig8", "async-table3"] {
        assert!(root(&out).join(fig).join("claims.csv").exists(), "{fig}");
        assert!(
            root(&out).join(fig).join("stragglers.csv").exists(),
            "{fig}"
        );
    }
    let table = read(root(&out).join("async-table3/table.csv"));
    assert!(
        table.contains("epsilon/sim") && table.contains("epsilon/threads"),
        "{table}"
    );
    // 4 workers, share 0.5, long-tail share 0.5: one moderate and one long-tail straggler.
    let s = read(root(&out).join("async-fig7/stragglers.csv"));
    assert_eq!(s.matches("long-tail").count(), 1, "{s}");
    assert_eq!(s.matches("moderate").count(), 1, "{s}");
}

#[test]
fn bad_configurations_fail_clearly_and_write_nothing() {
    let dir = tmpdir("bad");
    let cases = [
        (
            cds().replace("delays = [0.0, 1.0]", "delays = [0.0, 15.0]"),
            "delays[1] = 15",
        ),
        (
            cds().replace("sgd = { sampling_rate = 0.1", "sgd = { sampling_rate = 0.0"),
            "datasets[0].sgd.sampling_rate = 0 is out of range: it must be a fraction in (0, 1]",
        ),
        (
            cds().replace("sgd = { sampling_rate = 0.1", "sgd = { sampling_rate = 1.5"),
            "sampling_rate = 1.5 is out of range",
        ),
        (
            cds().replace("async_barrier = \"asp\"", "async_barrier = \"ssp0\""),
            "barrier predicate 'ssp0' admits none",
        ),
        (
            cds().replace("async_barrier = \"asp\"", "async_barrier = \"often\""),
            "unknown barrier 'often'",
        ),
    ];
    for (i, (cfg, want)) in cases.iter().enumerate() {
        let out = dir.join(format!("case{i}"));
        let o = run(env!("CARGO_BIN_EXE_async-fig3-4"), &out, cfg, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "case {i} should fail");
        assert!(err.contains(want), "case {i}: {err}");
        for fig in ["async-fig3", "async-fig4"] {
            assert!(!root(&out).join(fig).exists(), "case {i}: {fig} written");
        }
    }
}
