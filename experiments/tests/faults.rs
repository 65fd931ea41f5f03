//! The fault matrix, asserted: for each fault injected into a 4-rank ps-modes job, the other
//! ranks stop with a non-zero exit naming the rank at fault, within the timeouts, and the
//! results directory keeps the earlier complete results with nothing partial left (or, when
//! rank 0 is killed while writing, what it left is removed by the next run).

use experiments::tools::faults::{self, Fault, CLUSTER_TIMEOUT_MS, STALL_TIMEOUT_MS};
use std::path::Path;

fn check(index: usize) {
    let s = faults::scenarios()[index];
    let dir = std::env::temp_dir().join(format!(
        "syncbench-faults-test-{}-{index}",
        std::process::id()
    ));
    let o = faults::run(Path::new(env!("CARGO_BIN_EXE_ps-modes")), &s, &dir)
        .unwrap_or_else(|e| panic!("{}: {e:#}", s.name));
    let table = faults::report(std::slice::from_ref(&o));
    assert_eq!(
        o.earlier_results_intact,
        s.fault != Fault::Strangers,
        "only a completed run replaces the earlier results: {table}"
    );
    // Generous bounds: the tests share two cores with the rest of the suite.
    let bound = (STALL_TIMEOUT_MS + 2 * CLUSTER_TIMEOUT_MS) as f64 / 1000.0 + 15.0;
    assert!(o.stop_seconds < bound, "{table}");
    match s.fault {
        Fault::Kill { rank: 0, .. } => {
            // The others had their results from rank 0 before it started writing: they end
            // normally and write nothing; rank 0's partial directory stays (SIGKILL cannot be
            // caught) until the next run of the figure removes it.
            assert!(o.exit_codes[1..].iter().all(|c| *c == Some(0)), "{table}");
            assert_eq!(o.swept_by_next_run, Some(true), "{table}");
        }
        Fault::Kill { rank, .. } | Fault::Stop { rank, .. } => {
            assert!(o.others_failed(rank), "{table}");
            assert!(o.leftovers.is_empty(), "{table}");
            let named = o
                .messages
                .iter()
                .enumerate()
                .filter(|(r, _)| *r != rank)
                .all(|(_, m)| {
                    m.contains(&format!("rank {rank}")) || m.contains(&format!("rank(s) {rank}"))
                });
            assert!(named, "{table}");
        }
        Fault::Strangers => {
            assert!(o.exit_codes.iter().all(|c| *c == Some(0)), "{table}");
            assert_eq!(o.rejected_strangers, 3, "{table}");
            assert!(o.leftovers.is_empty(), "{table}");
        }
        Fault::RootPortTaken => {
            assert!(o.others_failed(usize::MAX), "{table}");
            assert!(o.leftovers.is_empty(), "{table}");
            assert!(
                o.messages[0].contains("cannot listen on the root address"),
                "{table}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_rank_killed_while_joining() {
    check(0);
}

#[test]
fn a_rank_killed_at_its_first_iteration() {
    check(1);
}

#[test]
fn a_rank_killed_mid_run() {
    check(2);
}

#[test]
fn a_rank_killed_while_reporting() {
    check(3);
}

#[test]
fn rank_0_killed_while_writing() {
    check(4);
}

#[test]
fn a_rank_stopped_mid_run() {
    check(5);
}

#[test]
fn strangers_on_rank_0s_port() {
    check(6);
}

#[test]
fn rank_0s_port_taken() {
    check(7);
}
