//! A [`Learning`] that learns nothing: messages carry control words only. For exploring a
//! protocol's schedules (iteration gaps, deadlock freedom) in the simulator without the cost
//! of models.

use super::payload::{Payload, PayloadEffect};
use super::run_learning::{payload_words, Learning};
use crate::error::Result;
use crate::protocol::{Action, Message, NodeId, Role};

/// Learning nothing; every computation takes `batch` examples of modelled time.
#[derive(Debug, Clone, Copy)]
pub struct ControlOnly {
    /// Examples charged per computation.
    pub batch: usize,
}

impl Learning for ControlOnly {
    type Node = ();

    fn node(&self, _node: NodeId, _role: Role, _workers: usize) {}

    fn compute(&self, _state: &mut (), _worker: usize, _workers: usize, _iter: u64) {}

    fn carry_out(
        &self,
        _state: &mut (),
        _node: NodeId,
        _action: &Action,
        _roles: &[Role],
    ) -> Result<Option<PayloadEffect>> {
        Ok(None)
    }

    fn outgoing(&self, _state: &mut (), _to: NodeId, _msg: &Message) -> Option<Payload> {
        None
    }

    fn receive(&self, _state: &mut (), _from: NodeId, _msg: &Message, _payload: Payload) {}

    fn applied<'a>(&self, _state: &'a ()) -> &'a [u64] {
        &[]
    }

    fn evaluate(&self, _state: &()) -> (f64, f64) {
        (f64::NAN, f64::NAN)
    }

    fn batch_size(&self, _workers: usize) -> usize {
        self.batch
    }

    fn payload_words(&self, _workers: usize) -> usize {
        payload_words(0, 0)
    }
}
