//! The coordinator's side of ASYNC's history broadcast: the model version each worker's task
//! names is kept until the worker has fetched it (or got a newer task), so a worker that asks
//! for its task's version gets exactly that value, and versions nobody can ask for are dropped.

use super::version_store::VersionStore;
use crate::learning::Payload;
use crate::protocol::NodeId;
use std::collections::HashMap;
use std::sync::Arc;

/// Versions named by tasks whose workers may still ask for the value.
#[derive(Debug, Default)]
pub struct TaskVersions {
    versions: VersionStore,
    outstanding: HashMap<NodeId, u64>,
}

impl TaskVersions {
    /// A task naming `version` (whose value is `model`) was sent to `to`: keep the value until
    /// `to` fetches it, and drop `to`'s hold on the version of its previous task.
    pub fn task_sent(&mut self, to: NodeId, version: u64, model: &[f32]) {
        self.versions.retain(version, || Arc::new(model.to_vec()));
        if let Some(old) = self.outstanding.insert(to, version) {
            self.versions.release(old);
        }
    }

    /// The payload answering `to`'s request for `version` (None when it is not held), releasing
    /// `to`'s hold on it.
    pub fn version_data(&mut self, to: NodeId, version: u64) -> Option<Payload> {
        let data = self.versions.get(version)?.clone();
        if self.outstanding.get(&to) == Some(&version) {
            self.outstanding.remove(&to);
            self.versions.release(version);
        }
        Some(Payload {
            data: data.into(),
            applied: Arc::new(vec![version]),
        })
    }
}
