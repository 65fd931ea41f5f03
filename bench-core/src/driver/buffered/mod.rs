//! Drivers of ASAP's receive-buffer reduce ([`crate::protocol::buffered`]): peers train a
//! [`Workload`] by model averaging, every write lands in the receiver's single buffer for that
//! sender, and every reduce reads those buffers as they are, averaging only the whole ones.
//!
//! * [`sim`]: virtual time. A write's bytes land over an interval (latency, then the NIC's
//!   serialization, as [`NetworkModel`] models it); a reduce reads its buffers one after the other
//!   at `copy_gbps`; a read is torn when any write to that buffer lands during it. Same seed,
//!   same records.
//! * [`threads`]: one OS thread per peer over the threads transport; writes are carried out by
//!   the copy engines while readers read, so torn buffers are real and detected by the header and
//!   footer versions.
//! * [`cluster`]: the same peers across processes (tcp or shm), with a barrier of its own.

pub mod cluster;
pub mod sim;
pub mod threads;
pub mod torn;

use super::{ComputeModel, NetworkModel};
use crate::error::{CoreError, Result};
use crate::learning::Workload;
use crate::metrics::ProgressRow;
use crate::protocol::buffered::{BufferedPeer, ReduceSync};
use crate::straggler::StragglerConfig;
use crate::topology::Topology;
use std::sync::Arc;

/// Header and footer words around every buffer, in bytes.
pub const BUFFER_OVERHEAD_BYTES: u64 = 24;
/// Bytes of one control message (notification-only or ACK).
pub const CONTROL_BYTES: u64 = 16;

/// Settings of one receive-buffer run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferedConfig {
    /// Iterations every peer runs.
    pub iterations: u64,
    /// Evaluate the evaluated peer's model every this many of its iterations (0: start and end
    /// only).
    pub eval_every: u64,
    /// Compute-time model (a floor under the real computation under threads).
    pub compute: ComputeModel,
    /// Network model (sim).
    pub network: NetworkModel,
    /// Memory bandwidth of a reduce's reads, in GB/s (sim): a buffer of B bytes takes B / copy
    /// time to read, during which a landing write tears it.
    pub copy_gbps: f64,
    /// A peer that waits this long for anything reports a deadlock (threads).
    pub stall_timeout_ms: u64,
    /// What an ASYNC reduce averages: the whole buffers only (ASAP §6.2, the default) or
    /// whatever its buffers hold, torn ones included.
    #[serde(default, skip_serializing_if = "AsyncReads::is_default")]
    pub async_reads: AsyncReads,
    /// Peers start at seeded offsets drawn uniformly from `0..=start_spread_ns` (as they finish
    /// loading their data at different times, ASAP §6.2) instead of all at 0. A global
    /// barrier realigns them at its first release and NOTIFY-ACK at its first waits; ASYNC
    /// keeps the offsets: it runs at its own pace.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub start_spread_ns: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

/// What an ASYNC reduce averages (ASAP §6.2). BSP and NOTIFY-ACK always check.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum AsyncReads {
    /// Only buffers whose header and footer versions agree: ASAP §6.2 ("We check the
    /// incoming intermediate model updates for consistency as described above").
    #[default]
    Whole,
    /// Every buffer ever written, as the read finds it, torn ones included (ASAP §4's
    /// "a receiver may perform a reduce with partial or torn model updates" without the check).
    AsRead,
}

impl AsyncReads {
    fn is_default(&self) -> bool {
        *self == AsyncReads::Whole
    }

    /// Label in configurations and CSVs.
    pub fn label(&self) -> &'static str {
        match self {
            AsyncReads::Whole => "whole",
            AsyncReads::AsRead => "as-read",
        }
    }
}

impl BufferedConfig {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`CoreError::Config`] naming the bad value.
    pub fn validate(&self, nodes: usize) -> Result<()> {
        if self.iterations == 0 {
            return Err(CoreError::Config("iterations must be >= 1".into()));
        }
        if !(self.copy_gbps.is_finite() && self.copy_gbps > 0.0) {
            return Err(CoreError::out_of_range("copy_gbps", "> 0", self.copy_gbps));
        }
        if self.compute.measured {
            return Err(CoreError::Config(
                "compute.measured is not supported by the receive-buffer drivers (the sim must stay reproducible)".into(),
            ));
        }
        self.network.validate(nodes)
    }

    /// Whether a reduce of `mode` averages torn buffers as read.
    pub fn averages_torn(&self, mode: ReduceSync) -> bool {
        mode == ReduceSync::Async && self.async_reads == AsyncReads::AsRead
    }

    /// When peer `node` starts, ns: 0, or its seeded offset within `start_spread_ns`.
    pub fn start_offset_ns(&self, node: usize, seed: u64) -> u64 {
        if self.start_spread_ns == 0 {
            return 0;
        }
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(
            seed ^ 0x5354_4152_5453_5052 ^ (node as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        rng.gen_range(0..=self.start_spread_ns)
    }
}

/// One reduce: how many of its buffers were whole, and how many whole and of the reducer's own
/// iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReduceRow {
    /// Reducing peer.
    pub worker: usize,
    /// Its iteration.
    pub iter: u64,
    /// Buffers read (its in-degree).
    pub inputs_expected: usize,
    /// Buffers whose header and footer versions matched (and that had been written at all).
    pub inputs_consistent: usize,
    /// Consistent buffers holding the version of this very iteration (the rest are whole but
    /// older).
    pub inputs_current: usize,
    /// When the reduce finished, ns.
    pub time: u64,
}

/// Everything a receive-buffer run measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BufferedRecords {
    /// Every reduce, in completion order (sim) or per peer (threads, sorted by time).
    pub reduces: Vec<ReduceRow>,
    /// Evaluations of the evaluated peer's model.
    pub progress: Vec<ProgressRow>,
    /// Bytes each peer sent (data and control).
    pub bytes_sent: Vec<u64>,
    /// Time the last peer finished, ns.
    pub makespan: u64,
}

impl BufferedRecords {
    /// Share of reduces that used at least `k` consistent inputs.
    pub fn share_at_least(&self, k: usize) -> f64 {
        if self.reduces.is_empty() {
            return 0.0;
        }
        self.reduces
            .iter()
            .filter(|r| r.inputs_consistent >= k)
            .count() as f64
            / self.reduces.len() as f64
    }

    /// Share of reduces that used every input.
    pub fn share_full(&self) -> f64 {
        if self.reduces.is_empty() {
            return 0.0;
        }
        self.reduces
            .iter()
            .filter(|r| r.inputs_consistent == r.inputs_expected)
            .count() as f64
            / self.reduces.len() as f64
    }

    /// First time the evaluated loss is at or below `target`, seconds.
    pub fn time_to_loss(&self, target: f64) -> Option<f64> {
        self.progress
            .iter()
            .find(|p| p.loss <= target)
            .map(|p| p.time)
    }
}

/// What a run trains and on which graph.
pub struct BufferedSetup<'a> {
    /// Communication graph: a peer reads the buffers of its in-neighbours.
    pub topology: &'a Topology,
    /// Synchronization mode.
    pub mode: ReduceSync,
    /// What is trained.
    pub workload: Arc<dyn Workload>,
    /// Compute-time perturbations.
    pub stragglers: &'a StragglerConfig,
    /// Peer whose model is evaluated.
    pub eval_node: usize,
    /// Run seed.
    pub seed: u64,
}

impl BufferedSetup<'_> {
    /// One state machine per peer.
    ///
    /// # Errors
    /// An evaluated peer outside the graph, or a graph with self-loops.
    pub fn peers(&self, iterations: u64) -> Result<Vec<BufferedPeer>> {
        let n = self.topology.nodes();
        if self.eval_node >= n {
            return Err(CoreError::Config(format!(
                "evaluated peer {} outside the graph's {n} nodes",
                self.eval_node
            )));
        }
        (0..n)
            .map(|i| {
                BufferedPeer::new(
                    i,
                    self.mode,
                    self.topology.in_neighbors(i),
                    self.topology.out_neighbors(i),
                    iterations,
                )
            })
            .collect()
    }
}

/// Replaces `model` by the average of itself and `inputs` (ASAP §3.1, Eq 3.2 with uniform
/// weights over the inputs actually used: a torn buffer is left out and the average taken over
/// the rest, as ASAP "adjusts the number of intermediate models").
pub fn average_into(model: &mut [f32], inputs: &[Arc<Vec<f32>>]) {
    if inputs.is_empty() {
        return;
    }
    let k = (inputs.len() + 1) as f64;
    for (j, m) in model.iter_mut().enumerate() {
        let s: f64 = f64::from(*m) + inputs.iter().map(|x| f64::from(x[j])).sum::<f64>();
        *m = (s / k) as f32;
    }
}

/// Computes one iteration's update on `model` and applies it.
pub fn step(workload: &dyn Workload, model: &mut [f32], worker: usize, workers: usize, iter: u64) {
    let u = workload.update(model, worker, workers, iter);
    model.iter_mut().zip(&u).for_each(|(m, d)| *m += d);
}

/// Bytes of one buffer write of a `dim`-parameter model.
pub fn write_bytes(dim: usize) -> u64 {
    dim as u64 * 4 + BUFFER_OVERHEAD_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn average_counts_the_own_model_once() {
        let mut m = vec![1.0, 2.0];
        average_into(
            &mut m,
            &[Arc::new(vec![3.0, 4.0]), Arc::new(vec![5.0, 0.0])],
        );
        assert_eq!(m, vec![3.0, 2.0]);
        let mut m = vec![1.0];
        average_into(&mut m, &[]);
        assert_eq!(m, vec![1.0]);
    }

    #[test]
    fn shares_come_from_the_rows() {
        let row = |c| ReduceRow {
            worker: 0,
            iter: 0,
            inputs_expected: 7,
            inputs_consistent: c,
            inputs_current: c,
            time: 0,
        };
        let r = BufferedRecords {
            reduces: vec![row(7), row(5), row(2), row(7)],
            ..Default::default()
        };
        assert_eq!(r.share_full(), 0.5);
        assert_eq!(r.share_at_least(5), 0.75);
        assert_eq!(BufferedRecords::default().share_full(), 0.0);
    }
}
