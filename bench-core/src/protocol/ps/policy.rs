//! How the parameter-server nodes of each mode decide: the worker's read policy and the
//! server's release policy.

use super::dssp::DsspController;

/// When a worker may compute on its cached model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadPolicy {
    /// SSP/ESSP/BSP: the cache serves clock `c` while it holds every update of clocks
    /// `<= c - s - 1`; otherwise ask and block.
    Cache {
        /// Staleness bound.
        s: u64,
    },
    /// ASP: never block; keep one refresh in flight.
    Async,
    /// DSSP: push, then wait for the server's OK (a fresh model) every iteration.
    AskEveryIteration,
    /// BSP with backup workers: ask every iteration, and jump to the server's clock when the
    /// answer shows the others already finished this one (the late update was dropped).
    AskAndJump,
}

/// When the server answers a read request, and whether it pushes eagerly.
#[derive(Debug, Clone)]
pub enum ReleasePolicy {
    /// Answer once every worker completed clock `c - s - 1`; with `eager`, push the model to
    /// every worker whenever that clock advances (ESSP).
    Bounded {
        /// Staleness bound.
        s: u64,
        /// ESSP's eager push.
        eager: bool,
    },
    /// Answer at once.
    Immediate,
    /// DSSP's synchronization controller.
    Dssp(DsspController),
    /// BSP with backup workers (Chen et al., cited by DSSP §II): clock `k` completes with the
    /// first `needed` updates of clock `k`; later ones are discarded; a read for clock `c` is
    /// answered once clock `c - 1` completed.
    Backup {
        /// Updates that complete a clock (N of the N + c workers).
        needed: usize,
    },
}
