//! Named points in a rank's life where the fault matrix (`syncbench faults`, the `faults`
//! tests) injects a failure at a known moment, as failpoints do in databases.
//!
//! `SYNCBENCH_FAULT_POINT=<name>` (on the one rank under test) makes [`reach`] print
//! `fault point <name> reached` on stderr when the rank gets there, then either hold there
//! (`<name>` or `<name>:hold`: the harness kills or stops the process while it waits) or go on
//! (`<name>:mark`: the harness acts a moment later, mid-run). Unset, a point costs one cached
//! lookup and does nothing.
//!
//! Points: `bootstrap` (before joining the job), `start` (after the start barrier, before this
//! rank's nodes run), `gather` (before a rank other than 0 reports its outcomes), `write`
//! (rank 0, before it commits the results directory).

use std::io::Write;
use std::sync::OnceLock;
use std::time::Duration;

/// The configured point: (name, hold).
fn configured() -> Option<&'static (String, bool)> {
    static POINT: OnceLock<Option<(String, bool)>> = OnceLock::new();
    POINT
        .get_or_init(|| {
            let v = std::env::var("SYNCBENCH_FAULT_POINT").ok()?;
            let v = v.trim();
            if v.is_empty() {
                return None;
            }
            Some(match v.split_once(':') {
                Some((name, "mark")) => (name.to_string(), false),
                Some((name, _)) => (name.to_string(), true),
                None => (v.to_string(), true),
            })
        })
        .as_ref()
}

/// Marks point `name`; holds here for good when the configured point is `name` (hold mode).
pub fn reach(name: &str) {
    let Some((point, hold)) = configured() else {
        return;
    };
    if point != name {
        return;
    }
    eprintln!("fault point {name} reached");
    let _ = std::io::stderr().flush();
    if *hold {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}
