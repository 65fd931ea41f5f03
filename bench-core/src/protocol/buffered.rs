//! ASAP's receive-buffer reduce (ASAP §4-6): every peer owns one receive buffer per
//! in-neighbour; senders overwrite it with one-sided writes, and a reduce reads the buffers as they
//! are at that moment, checking each one's header and footer versions and averaging only the whole
//! ones. Three synchronization modes decide when a peer may write and when it may reduce:
//!
//! * [`ReduceSync::Bsp`]: write to every out-neighbour, enter a global barrier, reduce when it
//!   releases. The writes are asynchronous, so the barrier says nothing about whether they
//!   landed, and a fast peer's next writes may land while a slow one still reads (ASAP §4:
//!   "just using a barrier gives no information if the recipient has finished receiving and
//!   consuming the model updates").
//! * [`ReduceSync::Async`]: write and reduce with no synchronization at all.
//! * [`ReduceSync::NotifyAck`]: write with a notification (ordered after the data), wait for the
//!   notifications of every in-neighbour, reduce, ACK every in-neighbour; write the next update
//!   only once every out-neighbour has ACKed the previous one. Sends go out before the wait, so
//!   cyclic graphs cannot deadlock. A buffer is therefore never written while its reader may read
//!   it: the no-overwrite guarantee, checked by [`BufferedPeer`] itself (a second write before the
//!   ACK is impossible by construction) and by the drivers' torn-read counts.
//!
//! This is a separate state machine from [`crate::protocol::Protocol`] on purpose: that trait
//! models message passing, where a payload is consumed when it arrives; here the payload is never
//! consumed on arrival, it sits in a buffer that the sender may overwrite until the reducer reads
//! it, and that race is what the experiment measures. Versions are `iter + 1`, so version 0 means
//! "never written".

use crate::error::{CoreError, Result};
use crate::protocol::NodeId;
use std::collections::VecDeque;

/// When a peer may write and reduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReduceSync {
    /// Writes, then a global barrier, then the reduce.
    Bsp,
    /// No synchronization.
    Async,
    /// ASAP's NOTIFY-ACK.
    NotifyAck,
}

impl ReduceSync {
    /// All modes, in the order ASAP's Fig 7 shows them.
    pub const ALL: [ReduceSync; 3] = [ReduceSync::NotifyAck, ReduceSync::Bsp, ReduceSync::Async];

    /// Label used in CSVs and on the command line.
    pub fn label(&self) -> &'static str {
        match self {
            ReduceSync::Bsp => "bsp",
            ReduceSync::Async => "async",
            ReduceSync::NotifyAck => "notify-ack",
        }
    }

    /// Parses a label.
    ///
    /// # Errors
    /// [`CoreError::Config`] for an unknown label, listing the known ones.
    pub fn parse(s: &str) -> Result<Self> {
        ReduceSync::ALL
            .into_iter()
            .find(|m| m.label() == s)
            .ok_or_else(|| {
                CoreError::Config(format!(
                    "unknown reduce synchronization '{s}' (known: notify-ack, bsp, async)"
                ))
            })
    }
}

/// Inputs a driver feeds a [`BufferedPeer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferedInput {
    /// The run begins.
    Start,
    /// The computation of the current iteration finished (the model holds its update).
    ComputeDone,
    /// The global barrier the peer entered released (BSP).
    Released,
    /// A write of `version` from in-neighbour `from` has landed, with its notification.
    Notified {
        /// Sender.
        from: NodeId,
        /// Version written.
        version: u64,
    },
    /// Out-neighbour `from` consumed this peer's last write.
    Acked {
        /// The out-neighbour.
        from: NodeId,
    },
    /// The reduce the peer asked for is done.
    Reduced,
}

/// What a [`BufferedPeer`] asks its driver to do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BufferedAction {
    /// Compute iteration `iter`'s update and apply it to the local model.
    Compute {
        /// Iteration.
        iter: u64,
    },
    /// Post a one-sided write of the local model, tagged `version` in header and footer, into
    /// this peer's receive buffer at `to`; with a notification after the data when `notify`.
    Write {
        /// Out-neighbour.
        to: NodeId,
        /// Version (iteration + 1).
        version: u64,
        /// Follow the data with a notification (NOTIFY-ACK).
        notify: bool,
    },
    /// Enter the global barrier of iteration `iter`; answer with [`BufferedInput::Released`].
    Barrier {
        /// Iteration.
        iter: u64,
    },
    /// Read the buffers of `inputs`, average the whole ones with the local model; answer with
    /// [`BufferedInput::Reduced`].
    Reduce {
        /// Iteration.
        iter: u64,
        /// In-neighbours whose buffers are read.
        inputs: Vec<NodeId>,
    },
    /// Send a control message (its own queue, not behind data) telling `to` its write was
    /// consumed.
    Ack {
        /// In-neighbour.
        to: NodeId,
    },
    /// The peer ran all its iterations.
    Finished,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Computing,
    WaitingAcks,
    WaitingBarrier,
    WaitingNotifications,
    Reducing,
    Done,
}

/// One peer of a receive-buffer reduce.
#[derive(Debug, Clone)]
pub struct BufferedPeer {
    node: NodeId,
    mode: ReduceSync,
    ins: Vec<NodeId>,
    outs: Vec<NodeId>,
    iterations: u64,
    iter: u64,
    phase: Phase,
    /// Newest version notified by each in-neighbour (index into `ins`).
    notified: Vec<u64>,
    /// ACKs still missing for the last writes (NOTIFY-ACK).
    acks_pending: usize,
    actions: VecDeque<BufferedAction>,
}

impl BufferedPeer {
    /// Peer `node` reading `ins` and writing to `outs` for `iterations` iterations.
    ///
    /// # Errors
    /// [`CoreError::Config`] for zero iterations or a peer listing itself as a neighbour.
    pub fn new(
        node: NodeId,
        mode: ReduceSync,
        ins: Vec<NodeId>,
        outs: Vec<NodeId>,
        iterations: u64,
    ) -> Result<Self> {
        if iterations == 0 {
            return Err(CoreError::Config("iterations must be >= 1".into()));
        }
        if ins.contains(&node) || outs.contains(&node) {
            return Err(CoreError::Config(format!(
                "peer {node} lists itself as a neighbour (its own model always counts once)"
            )));
        }
        Ok(BufferedPeer {
            node,
            mode,
            notified: vec![0; ins.len()],
            ins,
            outs,
            iterations,
            iter: 0,
            phase: Phase::Idle,
            acks_pending: 0,
            actions: VecDeque::new(),
        })
    }

    /// This peer.
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// Its synchronization mode.
    pub fn mode(&self) -> ReduceSync {
        self.mode
    }

    /// In-neighbours, whose buffers it reads.
    pub fn ins(&self) -> &[NodeId] {
        &self.ins
    }

    /// Out-neighbours, to which it writes.
    pub fn outs(&self) -> &[NodeId] {
        &self.outs
    }

    /// The iteration in progress (equal to the iteration count when done).
    pub fn iteration(&self) -> u64 {
        self.iter
    }

    /// True once every iteration's reduce is done.
    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Done
    }

    /// Next action, if any.
    pub fn poll_action(&mut self) -> Option<BufferedAction> {
        self.actions.pop_front()
    }

    /// What the peer waits for (deadlock reports).
    pub fn waiting_on(&self) -> String {
        let what = match self.phase {
            Phase::Idle => "the start".to_string(),
            Phase::Computing => "its computation".to_string(),
            Phase::WaitingAcks => format!("{} ACKs", self.acks_pending),
            Phase::WaitingBarrier => "the barrier".to_string(),
            Phase::WaitingNotifications => {
                let missing: Vec<String> = self
                    .ins
                    .iter()
                    .zip(&self.notified)
                    .filter(|(_, &v)| v <= self.iter)
                    .map(|(j, _)| j.to_string())
                    .collect();
                format!("notifications from {}", missing.join(", "))
            }
            Phase::Reducing => "its reduce".to_string(),
            Phase::Done => "nothing (done)".to_string(),
        };
        format!(
            "peer {} ({}) at iteration {} waits for {what}",
            self.node,
            self.mode.label(),
            self.iter
        )
    }

    fn violation(&self, message: String) -> CoreError {
        CoreError::Protocol {
            node: self.node,
            message,
        }
    }

    /// Feeds one input.
    ///
    /// # Errors
    /// [`CoreError::Protocol`] for an input the peer's state forbids: a completion it did not
    /// ask for, a notification from a peer that is not an in-neighbour or of an older version,
    /// an ACK with none outstanding.
    pub fn handle(&mut self, input: BufferedInput) -> Result<()> {
        match input {
            BufferedInput::Start => {
                if self.phase != Phase::Idle {
                    return Err(self.violation("started twice".into()));
                }
                self.compute();
            }
            BufferedInput::ComputeDone => {
                if self.phase != Phase::Computing {
                    return Err(self.violation("computation finished that never started".into()));
                }
                if self.acks_pending > 0 {
                    self.phase = Phase::WaitingAcks;
                } else {
                    self.write();
                }
            }
            BufferedInput::Released => {
                if self.phase != Phase::WaitingBarrier {
                    return Err(self.violation("barrier released without being entered".into()));
                }
                self.reduce();
            }
            BufferedInput::Notified { from, version } => {
                let k = self.ins.iter().position(|&j| j == from).ok_or_else(|| {
                    self.violation(format!("notification from {from}, not an in-neighbour"))
                })?;
                if version <= self.notified[k] {
                    return Err(self.violation(format!(
                        "notification of version {version} from {from} after version {}",
                        self.notified[k]
                    )));
                }
                self.notified[k] = version;
                if self.phase == Phase::WaitingNotifications && self.all_notified() {
                    self.reduce();
                }
            }
            BufferedInput::Acked { from } => {
                if !self.outs.contains(&from) || self.acks_pending == 0 {
                    return Err(self.violation(format!("ACK from {from} with none outstanding")));
                }
                self.acks_pending -= 1;
                if self.acks_pending == 0 && self.phase == Phase::WaitingAcks {
                    self.write();
                }
            }
            BufferedInput::Reduced => {
                if self.phase != Phase::Reducing {
                    return Err(self.violation("reduce finished that never started".into()));
                }
                if self.mode == ReduceSync::NotifyAck {
                    for &to in &self.ins {
                        self.actions.push_back(BufferedAction::Ack { to });
                    }
                }
                self.iter += 1;
                if self.iter == self.iterations {
                    self.phase = Phase::Done;
                    self.actions.push_back(BufferedAction::Finished);
                } else {
                    self.compute();
                }
            }
        }
        Ok(())
    }

    fn compute(&mut self) {
        self.phase = Phase::Computing;
        self.actions
            .push_back(BufferedAction::Compute { iter: self.iter });
    }

    fn all_notified(&self) -> bool {
        self.notified.iter().all(|&v| v > self.iter)
    }

    fn write(&mut self) {
        let notify = self.mode == ReduceSync::NotifyAck;
        for &to in &self.outs {
            self.actions.push_back(BufferedAction::Write {
                to,
                version: self.iter + 1,
                notify,
            });
        }
        match self.mode {
            ReduceSync::Bsp => {
                self.phase = Phase::WaitingBarrier;
                self.actions
                    .push_back(BufferedAction::Barrier { iter: self.iter });
            }
            ReduceSync::Async => self.reduce(),
            ReduceSync::NotifyAck => {
                self.acks_pending = self.outs.len();
                if self.all_notified() {
                    self.reduce();
                } else {
                    self.phase = Phase::WaitingNotifications;
                }
            }
        }
    }

    fn reduce(&mut self) {
        self.phase = Phase::Reducing;
        self.actions.push_back(BufferedAction::Reduce {
            iter: self.iter,
            inputs: self.ins.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(p: &mut BufferedPeer) -> Vec<BufferedAction> {
        std::iter::from_fn(|| p.poll_action()).collect()
    }

    #[test]
    fn labels_round_trip_and_unknown_is_an_error() {
        for m in ReduceSync::ALL {
            assert_eq!(ReduceSync::parse(m.label()).unwrap(), m);
        }
        assert!(ReduceSync::parse("ssp")
            .unwrap_err()
            .to_string()
            .contains("known"));
    }

    #[test]
    fn notify_ack_writes_only_after_every_ack() {
        let mut p = BufferedPeer::new(0, ReduceSync::NotifyAck, vec![1, 2], vec![1, 2], 3).unwrap();
        p.handle(BufferedInput::Start).unwrap();
        assert_eq!(drain(&mut p), vec![BufferedAction::Compute { iter: 0 }]);
        p.handle(BufferedInput::ComputeDone).unwrap();
        let a = drain(&mut p);
        assert_eq!(a.len(), 2);
        assert!(a.iter().all(|x| matches!(
            x,
            BufferedAction::Write {
                version: 1,
                notify: true,
                ..
            }
        )));
        p.handle(BufferedInput::Notified {
            from: 1,
            version: 1,
        })
        .unwrap();
        assert!(
            drain(&mut p).is_empty(),
            "reduced with a notification missing"
        );
        p.handle(BufferedInput::Notified {
            from: 2,
            version: 1,
        })
        .unwrap();
        assert_eq!(
            drain(&mut p),
            vec![BufferedAction::Reduce {
                iter: 0,
                inputs: vec![1, 2]
            }]
        );
        p.handle(BufferedInput::Reduced).unwrap();
        assert_eq!(
            drain(&mut p),
            vec![
                BufferedAction::Ack { to: 1 },
                BufferedAction::Ack { to: 2 },
                BufferedAction::Compute { iter: 1 }
            ]
        );
        p.handle(BufferedInput::ComputeDone).unwrap();
        assert!(drain(&mut p).is_empty(), "wrote again before the ACKs");
        p.handle(BufferedInput::Acked { from: 2 }).unwrap();
        assert!(drain(&mut p).is_empty());
        // Early notifications of the next version are kept for the next reduce.
        p.handle(BufferedInput::Notified {
            from: 1,
            version: 2,
        })
        .unwrap();
        p.handle(BufferedInput::Notified {
            from: 2,
            version: 2,
        })
        .unwrap();
        p.handle(BufferedInput::Acked { from: 1 }).unwrap();
        let a = drain(&mut p);
        assert_eq!(a.len(), 3);
        assert!(matches!(a[2], BufferedAction::Reduce { iter: 1, .. }));
        assert!(p.handle(BufferedInput::Acked { from: 1 }).is_ok());
        assert!(p.handle(BufferedInput::Acked { from: 2 }).is_ok());
        assert!(
            p.handle(BufferedInput::Acked { from: 2 }).is_err(),
            "ACK with none outstanding"
        );
    }

    #[test]
    fn bsp_waits_for_the_barrier_and_async_for_nothing() {
        let mut b = BufferedPeer::new(0, ReduceSync::Bsp, vec![1], vec![1], 1).unwrap();
        b.handle(BufferedInput::Start).unwrap();
        b.handle(BufferedInput::ComputeDone).unwrap();
        let a = drain(&mut b);
        assert_eq!(a[0], BufferedAction::Compute { iter: 0 });
        assert_eq!(
            a[1],
            BufferedAction::Write {
                to: 1,
                version: 1,
                notify: false
            }
        );
        assert_eq!(a[2], BufferedAction::Barrier { iter: 0 });
        assert!(b.handle(BufferedInput::Reduced).is_err());
        b.handle(BufferedInput::Released).unwrap();
        b.handle(BufferedInput::Reduced).unwrap();
        assert!(b.is_finished());
        assert_eq!(drain(&mut b).last(), Some(&BufferedAction::Finished));

        let mut s = BufferedPeer::new(0, ReduceSync::Async, vec![1], vec![1], 2).unwrap();
        s.handle(BufferedInput::Start).unwrap();
        s.handle(BufferedInput::ComputeDone).unwrap();
        let a = drain(&mut s);
        assert!(matches!(
            a.last(),
            Some(BufferedAction::Reduce { iter: 0, .. })
        ));
        assert!(s.handle(BufferedInput::Released).is_err());
    }

    #[test]
    fn bad_inputs_are_violations() {
        assert!(BufferedPeer::new(0, ReduceSync::Bsp, vec![0], vec![1], 1).is_err());
        assert!(BufferedPeer::new(0, ReduceSync::Bsp, vec![1], vec![1], 0).is_err());
        let mut p = BufferedPeer::new(0, ReduceSync::NotifyAck, vec![1], vec![1], 2).unwrap();
        assert!(p.handle(BufferedInput::ComputeDone).is_err());
        p.handle(BufferedInput::Start).unwrap();
        assert!(p
            .handle(BufferedInput::Notified {
                from: 3,
                version: 1
            })
            .is_err());
        p.handle(BufferedInput::Notified {
            from: 1,
            version: 1,
        })
        .unwrap();
        assert!(p
            .handle(BufferedInput::Notified {
                from: 1,
                version: 1
            })
            .is_err());
        assert!(p.waiting_on().contains("computation"), "{}", p.waiting_on());
    }
}
