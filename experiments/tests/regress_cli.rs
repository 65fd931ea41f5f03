//! `syncbench regress`: it catches what it should (a changed sim CSV, a claim that stopped
//! passing), stays quiet on an unchanged run, and keeps its exit codes apart (0 ok, 1
//! regressed, 2 no baseline or no results, 4 the required device is absent).

mod common;

use common::output_text as text;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `syncbench regress` on the exact, claims and bounds tiers only: the measured tiers have
/// their own test (regress_measured.rs), alone in its binary so that no other test shares the
/// cores while it measures.
fn regress(args: &[&str], results: &Path, baseline: &Path) -> Output {
    let mut all = args.to_vec();
    all.extend(["--rounds", "0"]);
    common::regress(&all, results, baseline)
}

/// A figure directory as the experiments write it.
fn figure(results: &Path, name: &str, driver: &str, claims: &[(&str, &str)]) {
    let d = results.join(name);
    std::fs::create_dir_all(d.join("seeds/2")).unwrap();
    std::fs::write(
        d.join("manifest.json"),
        format!("{{\"experiment\": \"{name}\", \"driver\": \"{driver}\"}}"),
    )
    .unwrap();
    std::fs::write(d.join("summary.csv"), "mode,time\nbsp,1.5\n").unwrap();
    std::fs::write(d.join("seeds/2/summary.csv"), "mode,time\nbsp,1.6\n").unwrap();
    let mut c = String::from("claim_id,statement,paper_value,measured_value,verdict\n");
    for (id, v) in claims {
        c.push_str(&format!("{name}/{id},s,p,m,{v}\n"));
    }
    std::fs::write(d.join("claims.csv"), c).unwrap();
}

#[test]
fn regressions_are_caught_named_and_kept_apart_by_exit_code() {
    let dir = common::tmpdir("regress");
    let (results, baseline) = (dir.join("results"), dir.join("baselines/here.json"));
    figure(&results, "sim-fig", "sim", &[("a", "pass"), ("b", "fail")]);
    figure(
        &results,
        "timed-fig",
        "threads",
        &[("c", "pass"), ("d", "fail")],
    );

    // no baseline yet: an infrastructure error, naming the file
    let o = regress(&[], &results, &baseline);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no baseline at"), "{}", text(&o));

    let o = regress(&["accept"], &results, &baseline);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // summary.csv, seeds/2/summary.csv and claims.csv of the sim figure
    assert!(text(&o).contains("3 sim CSVs, 4 claims"), "{}", text(&o));

    // base against base: quiet
    let o = regress(&[], &results, &baseline);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let md = std::fs::read_to_string(results.join("regress.md")).unwrap();
    assert!(
        md.contains("Every sim CSV, claim, bound and measured metric"),
        "{md}"
    );
    assert!(results.join("regress.json").is_file());

    // a threads figure's bytes move run to run: not compared
    std::fs::write(results.join("timed-fig/summary.csv"), "mode,time\nbsp,9\n").unwrap();
    let o = regress(&[], &results, &baseline);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    // a changed sim result (a seed's file): exact tier, the file named
    std::fs::write(
        results.join("sim-fig/seeds/2/summary.csv"),
        "mode,time\nbsp,1.7\n",
    )
    .unwrap();
    let o = regress(&[], &results, &baseline);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("REGRESSED  exact    sim-fig/seeds/2/summary.csv"),
        "{}",
        text(&o)
    );
    std::fs::write(
        results.join("sim-fig/seeds/2/summary.csv"),
        "mode,time\nbsp,1.6\n",
    )
    .unwrap();

    // a claim that stopped passing (in a figure whose bytes are not compared): claims tier;
    // one that started passing is an improvement, not a failure
    figure(
        &results,
        "timed-fig",
        "threads",
        &[("c", "fail"), ("d", "fail")],
    );
    // (a threads figure's claim rests on wall-clock timings: noisy, exit 3, until confirmed)
    let o = regress(&[], &results, &baseline);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("noisy      claims   timed-fig/c"),
        "{}",
        text(&o)
    );
    // (in a sim figure the claim's change would also be a byte change of its claims.csv)
    figure(
        &results,
        "timed-fig",
        "threads",
        &[("c", "pass"), ("d", "pass")],
    );
    let o = regress(
        &["--history", dir.join("history.jsonl").to_str().unwrap()],
        &results,
        &baseline,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("improved"), "{}", text(&o));
    let history = std::fs::read_to_string(dir.join("history.jsonl")).unwrap();
    assert!(history.contains("\"improved\":1"), "{history}");

    // a figure that disappears is a regression of its own (its claims are only "removed")
    std::fs::remove_dir_all(results.join("timed-fig")).unwrap();
    let o = regress(&[], &results, &baseline);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("REGRESSED  figures  timed-fig"),
        "{}",
        text(&o)
    );

    // results of mixed revisions are not accepted as a baseline unless forced
    let mixed = dir.join("mixed");
    figure(&mixed, "x", "sim", &[("a", "pass")]);
    figure(&mixed, "y", "sim", &[("b", "pass")]);
    for (f, rev) in [("x", "aaa"), ("y", "bbb")] {
        std::fs::write(
            mixed.join(f).join("manifest.json"),
            format!("{{\"driver\": \"sim\", \"git_revision\": \"{rev}\", \"scale\": \"quick\"}}"),
        )
        .unwrap();
    }
    let other = dir.join("mixed.json");
    let o = regress(&["accept"], &mixed, &other);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("2 revisions"), "{}", text(&o));
    let o = regress(&["accept", "--force"], &mixed, &other);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // results of another scale are not comparable: an error, not a list of changed files
    for f in ["x", "y"] {
        std::fs::write(
            mixed.join(f).join("manifest.json"),
            "{\"driver\": \"sim\", \"git_revision\": \"aaa\", \"scale\": \"paper\"}",
        )
        .unwrap();
    }
    let o = regress(&[], &mixed, &other);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("not comparable"), "{}", text(&o));

    // nothing to compare: an error, never an empty pass
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = regress(&[], &empty, &baseline);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no figure directories"), "{}", text(&o));

    // a testbed run on a machine without RDMA: a skip (4), not a pass
    if !experiments::tools::regress::fingerprint::Fingerprint::here().has_active_rdma() {
        for action in ["compare", "check"] {
            let o = regress(&[action, "--require", "rdma"], &results, &baseline);
            assert_eq!(o.status.code(), Some(4), "{}", text(&o));
            assert!(text(&o).contains("skipped"), "{}", text(&o));
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A real sim experiment: the same seed reproduces the baseline's bytes; a changed setting
/// (one more iteration) is caught in the exact tier, naming the figure's files.
#[test]
fn a_real_sim_run_reproduces_its_baseline_and_a_changed_one_is_caught() {
    let dir = common::tmpdir("regress-real");
    // Each run's figures are under <out>/config/ps/ (a configuration of our own goes beside the
    // built-in run's); that is the results root regress reads.
    let run = |iterations: u64, out: &Path| -> PathBuf {
        let cfg = dir.join(format!("{iterations}/ps.toml"));
        std::fs::create_dir_all(cfg.parent().unwrap()).unwrap();
        std::fs::write(&cfg, common::ps_config(4, iterations, 50_000.0)).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_ps-modes"))
            .args(["--seeds", "1", "--driver", "sim", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        common::config_root(out, &cfg)
    };
    let baseline = dir.join("b.json");
    let a = run(20, &dir.join("a"));
    // --force: a working tree under development may be dirty
    let o = regress(&["accept", "--force"], &a, &baseline);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let again = run(20, &dir.join("again"));
    let o = regress(&[], &again, &baseline);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let changed = run(21, &dir.join("changed"));
    let o = regress(&[], &changed, &baseline);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("exact    ps-modes/"), "{}", text(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_broken_bound_fails_under_any_driver_and_is_never_accepted() {
    let dir = common::tmpdir("regress-bounds");
    let (results, baseline) = (dir.join("results"), dir.join("base.json"));
    figure(&results, "timed-fig", "threads", &[("c", "pass")]);
    let table = results.join("timed-fig/table.csv");
    std::fs::write(&table, "mode,violations\nhop,0\n").unwrap();
    let o = regress(&["accept", "--force"], &results, &baseline);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = regress(&[], &results, &baseline);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    // a threads figure is not hashed, but its bounds are checked
    std::fs::write(&table, "mode,violations\nhop,0\nhop-s2,3\n").unwrap();
    let o = regress(&[], &results, &baseline);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("REGRESSED  bounds   timed-fig/table.csv"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("row 3: violations = 3"), "{}", text(&o));
    // and such results are not accepted as a baseline
    let before = std::fs::read_to_string(&baseline).unwrap();
    let o = regress(&["accept"], &results, &baseline);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("bounds broken in timed-fig/table.csv"),
        "{}",
        text(&o)
    );
    assert_eq!(
        std::fs::read_to_string(&baseline).unwrap(),
        before,
        "nothing overwritten"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The hosted runners' committed baseline (ci.yml's gate) and this machine's hold the same
/// snapshot: the sim's bytes and the verdicts do not depend on the machine, so both are
/// accepted from one clean run (`make regress-accept` and `make regress-accept-hosted`), and
/// one left behind after a change of results fails here rather than on the hosted runner.
#[test]
fn the_hosted_baseline_holds_the_same_snapshot_as_this_machines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../baselines");
    let read = |name: &str| -> serde_json::Value {
        let p = root.join(name);
        serde_json::from_str(
            &std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
        )
        .unwrap()
    };
    let (hosted, here) = (read("github-hosted.json"), read("dev-vm.json"));
    for part in ["exact", "claims", "figures", "scales"] {
        assert!(
            hosted["snapshot"][part] == here["snapshot"][part],
            "baselines/github-hosted.json and baselines/dev-vm.json differ in snapshot.{part}: re-accept both from one clean run (make regress-accept TESTBED=dev-vm ABSOLUTE=info; make regress-accept-hosted)"
        );
    }
    assert!(
        hosted["measured"].is_null(),
        "the hosted baseline holds measured samples: they would be another machine's"
    );
    assert_eq!(hosted["testbed"], "github-hosted");
}
