//! SIGINT and SIGTERM in the experiment binaries: the run stops, the partial results directory
//! of every figure being written is removed (the previous complete results at the same path are
//! left as they were), a line says what was interrupted, and the process exits with 128 + the
//! signal number (130 for SIGINT, 143 for SIGTERM), as shells report it.
//!
//! The handler runs on its own thread (signal-hook's iterator), so it may take locks and touch
//! the file system; a results commit in progress finishes before the cleanup starts.

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::sync::Once;

/// The signals an interrupt handler answers.
pub const SIGNALS: [i32; 2] = [SIGINT, SIGTERM];

/// Name of a signal number, for messages.
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// Installs the handler once per process (later calls do nothing). When the handler cannot be
/// installed the process keeps the default behaviour (killed by the signal; the next run of
/// the figure sweeps its partial directory) and says so.
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let mut signals = match Signals::new(SIGNALS) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("warning: cannot handle SIGINT/SIGTERM ({e}); an interrupted run leaves its partial results for the next run to remove");
                return;
            }
        };
        let spawned = std::thread::Builder::new()
            .name("interrupt".into())
            .spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    stop(sig);
                }
            });
        if let Err(e) = spawned {
            eprintln!("warning: cannot start the interrupt handler ({e})");
        }
    });
}

/// Removes the partial results, says what was interrupted, and exits with 128 + `sig`.
fn stop(sig: i32) -> ! {
    let removed = bench_core::metrics::abandon_partials();
    let program = std::env::args()
        .next()
        .map(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map_or(a.clone(), |n| n.to_string_lossy().to_string())
        })
        .unwrap_or_else(|| "experiment".into());
    if removed.is_empty() {
        eprintln!(
            "interrupted by {}: {program} stopped; no results were being written",
            signal_name(sig)
        );
    }
    for path in removed {
        eprintln!(
            "interrupted by {}: {program} stopped while writing {}; its partial results were removed (earlier complete results there are untouched)",
            signal_name(sig),
            path.display()
        );
    }
    std::process::exit(128 + sig)
}
