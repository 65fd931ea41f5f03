//! What one node of a real-time run measured, and how a run's nodes merge into its records.

use crate::metrics::{IterationRow, ProgressRow, RowReadRow, RunRecords, WaitRow};
use crate::protocol::NodeId;

/// What one node measured; several merge into a [`RunRecords`] with [`merge`]. Serialisable so
/// that ranks can send theirs to rank 0.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NodeOutcome {
    /// The node.
    pub node: NodeId,
    /// Updates it discarded as late.
    pub dropped: u64,
    /// Task waits it recorded.
    pub waits: Vec<WaitRow>,
    /// Iterations it finished.
    pub iterations: Vec<IterationRow>,
    /// Row tables: its row reads' clock differentials.
    #[serde(default)]
    pub row_reads: Vec<RowReadRow>,
    /// Evaluations of its model.
    pub progress: Vec<ProgressRow>,
    /// Bytes it sent.
    pub bytes: u64,
    /// Messages it handled.
    pub events: u64,
    /// When its protocol finished, in ns since the run started.
    pub end: u64,
}

/// Merges the outcomes of all `nodes` nodes of a run, in the order every driver reports.
pub fn merge(nodes: usize, outcomes: Vec<NodeOutcome>) -> RunRecords {
    let mut records = RunRecords {
        bytes_sent: vec![0; nodes],
        ..RunRecords::default()
    };
    for o in outcomes {
        records.iterations.extend(o.iterations);
        records.waits.extend(o.waits);
        records.row_reads.extend(o.row_reads);
        records.progress.extend(o.progress);
        if let Some(b) = records.bytes_sent.get_mut(o.node) {
            *b = o.bytes;
        }
        records.events += o.events;
        records.dropped_updates += o.dropped;
        records.makespan = records.makespan.max(o.end);
    }
    records
        .iterations
        .sort_by_key(|r| (r.end, r.worker, r.iter));
    records
        .row_reads
        .sort_by_key(|r| (r.worker, r.clock, r.differential));
    records.progress.sort_by(|a, b| a.time.total_cmp(&b.time));
    records
}
