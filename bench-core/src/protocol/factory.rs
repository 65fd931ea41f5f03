//! The one place that turns a configuration into protocol nodes.

use super::coord::{BarrierPredicate, Collect, Coordinator, TaskWorker};
use super::ps::{PsServer, PsWorker, SyncMode};
use super::Protocol;
use crate::error::{CoreError, Result};

/// Everything needed to build the nodes of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtocolSpec {
    /// The synchronization mode.
    pub mode: SyncMode,
    /// Number of workers.
    pub workers: usize,
    /// Iterations (clocks) each worker runs.
    pub iterations: u64,
}

impl ProtocolSpec {
    /// Builds every node of the run: node 0 is the parameter server, nodes `1..=workers` are the
    /// workers (worker index = node - 1), matching the star topology.
    ///
    /// # Errors
    /// [`CoreError::Config`] for an invalid mode, zero workers or zero iterations.
    pub fn build(&self) -> Result<Vec<Box<dyn Protocol>>> {
        self.mode.validate()?;
        if self.workers == 0 {
            return Err(CoreError::Config("a run needs at least one worker".into()));
        }
        if self.iterations == 0 {
            return Err(CoreError::Config(
                "a run needs at least one iteration".into(),
            ));
        }
        self.mode.check_workers(self.workers)?;
        let (read, release) = self.mode.policies(self.workers);
        let mut nodes: Vec<Box<dyn Protocol>> = Vec::with_capacity(self.workers + 1);
        nodes.push(Box::new(PsServer::new(
            0,
            self.workers,
            self.iterations,
            release,
        )));
        for w in 0..self.workers {
            nodes.push(Box::new(PsWorker::new(w + 1, w, 0, self.iterations, read)));
        }
        Ok(nodes)
    }

    /// Node count including the server.
    pub fn nodes(&self) -> usize {
        self.workers + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_checks_the_run() {
        let spec = |mode, workers| ProtocolSpec {
            mode,
            workers,
            iterations: 3,
        };
        assert!(spec(SyncMode::bsp(), 0).build().is_err());
        assert!(spec(SyncMode::bsp_backup(4), 4).build().is_err());
        assert!(spec(SyncMode::ssp(-1), 4).build().is_err());
        assert_eq!(spec(SyncMode::bsp_backup(1), 4).build().unwrap().len(), 5);
    }
}

/// An ASYNC run: a coordinator at node 0 and `workers` task workers at nodes `1..=workers`.
#[derive(Debug, Clone)]
pub struct AsyncSpec {
    /// Worker count P.
    pub workers: usize,
    /// Tasks to finish in all (a synchronous run of R rounds: R * P).
    pub tasks: u64,
    /// Which available workers get tasks.
    pub barrier: BarrierPredicate,
    /// How results reach the model.
    pub collect: Collect,
}

impl AsyncSpec {
    /// The run's nodes.
    ///
    /// # Errors
    /// [`CoreError::Config`] for no workers or no tasks.
    pub fn build(&self) -> Result<Vec<Box<dyn Protocol>>> {
        if self.workers == 0 || self.tasks == 0 {
            return Err(CoreError::Config(format!(
                "an ASYNC run needs at least one worker and one task, got {} workers and {} tasks",
                self.workers, self.tasks
            )));
        }
        let mut nodes: Vec<Box<dyn Protocol>> = vec![Box::new(Coordinator::new(
            0,
            1,
            self.workers,
            self.barrier.clone(),
            self.collect,
            self.tasks,
        ))];
        for w in 0..self.workers {
            nodes.push(Box::new(TaskWorker::new(w + 1, w, 0)));
        }
        Ok(nodes)
    }
}
