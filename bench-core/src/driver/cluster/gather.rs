//! Rank 0's side of a run's end: every rank's report gathered (its own too), the others told to
//! stop at the first failure, the failure worth reporting chosen (a lost rank, then a real
//! failure, then a silent rank, then a stall, then a rank stopped by another's failure), and the
//! result sent back to every rank.

use super::session;
use crate::driver::node_thread::AbortFlag;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::net::TcpStream;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A rank's report after its nodes stopped.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(bound = "O: Serialize + DeserializeOwned")]
pub(super) enum Report<O> {
    Done(Vec<O>),
    Failed {
        /// Stopped because another node or rank failed: a consequence, not a cause.
        secondary: bool,
        /// A node heard nothing for its stall timeout: often the consequence of a rank that
        /// went silent (stopped, or cut off), which is then the one to report.
        #[serde(default)]
        stalled: bool,
        message: String,
    },
}

pub(super) type Outcome<O> = std::result::Result<Vec<O>, (usize, String)>;

/// What rank 0 sends during and after a run.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(bound = "O: Serialize + DeserializeOwned")]
pub(super) enum FromRoot<O> {
    Abort(String),
    Final(Outcome<O>),
}

/// A rank's failure, for choosing the one to report.
enum Failure {
    Lost(String),
    Failed {
        secondary: bool,
        stalled: bool,
        message: String,
    },
    Silent,
}

/// How bad a rank's failure is: a lost rank, then a real failure, then a rank that never
/// reported (stopped, hung or cut off), then a stall (a node that heard nothing: usually
/// because of that silent rank), then a rank stopped by someone else's failure.
fn severity(f: &Failure) -> u8 {
    match f {
        Failure::Lost(_) => 0,
        Failure::Failed {
            secondary: false,
            stalled: false,
            ..
        } => 1,
        Failure::Silent => 2,
        Failure::Failed {
            secondary: false,
            stalled: true,
            ..
        } => 3,
        Failure::Failed {
            secondary: true, ..
        } => 4,
    }
}

/// Rank 0's side of a run: collects every rank's report (its own from `local`), tells the
/// others to stop at the first failure, and sends the result to all. Returns the result and,
/// when a rank was lost or silent, why the session cannot be used again.
pub(super) fn gather_at_root<O: Serialize + DeserializeOwned + Send + 'static>(
    streams: Vec<TcpStream>,
    abort: &Arc<AbortFlag>,
    timeout: Duration,
    local: impl FnOnce() -> Report<O> + Send + 'static,
) -> (Outcome<O>, Option<String>) {
    let size = streams.len() + 1;
    type Arrival<O> = (usize, std::result::Result<Report<O>, String>);
    let (tx, rx) = mpsc::channel::<Arrival<O>>();
    let mut writers = Vec::new();
    for (i, s) in streams.into_iter().enumerate() {
        let rank = i + 1;
        let mut reader = match s.try_clone() {
            Ok(r) => r,
            Err(e) => {
                let _ = tx.send((rank, Err(e.to_string())));
                writers.push(s);
                continue;
            }
        };
        writers.push(s);
        let tx = tx.clone();
        std::thread::spawn(move || {
            let r = session::read_frame(&mut reader).and_then(|v| {
                serde_json::from_value::<Report<O>>(v)
                    .map_err(|e| format!("sent a malformed report ({e})"))
            });
            let _ = tx.send((rank, r));
        });
    }
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let _ = tx.send((0, Ok(local())));
        });
    }
    drop(tx);
    let mut reports: Vec<Option<std::result::Result<Report<O>, String>>> =
        (0..size).map(|_| None).collect();
    let mut deadline: Option<Instant> = None;
    let mut got = 0;
    while got < size {
        let next = match deadline {
            None => rx.recv().map_err(|_| ()),
            Some(d) => rx
                .recv_timeout(d.saturating_duration_since(Instant::now()))
                .map_err(|_| ()),
        };
        let Ok((rank, r)) = next else { break };
        let failed = match &r {
            Err(e) => Some(format!("rank {rank} lost: {e}")),
            Ok(Report::Failed { message, .. }) => Some(format!("rank {rank} failed: {message}")),
            Ok(Report::Done(_)) => None,
        };
        if let (Some(why), None) = (failed, deadline) {
            abort.raise(&why);
            for w in writers.iter_mut() {
                let _ = session::write_frame(w, &FromRoot::<O>::Abort(why.clone()));
            }
            deadline = Some(Instant::now() + timeout);
        }
        reports[rank] = Some(r);
        got += 1;
    }
    let mut worst: Option<(u8, usize, String)> = None;
    let mut outcomes = Vec::new();
    let mut broken = None;
    for (rank, r) in reports.into_iter().enumerate() {
        let f = match r {
            Some(Ok(Report::Done(o))) => {
                outcomes.extend(o);
                continue;
            }
            Some(Ok(Report::Failed {
                secondary,
                stalled,
                message,
            })) => Failure::Failed {
                secondary,
                stalled,
                message,
            },
            Some(Err(e)) => Failure::Lost(e),
            None => Failure::Silent,
        };
        let message = match &f {
            Failure::Lost(e) => {
                broken.get_or_insert_with(|| format!("rank {rank} was lost"));
                format!("lost mid-run: {e}")
            }
            Failure::Failed { message, .. } => message.clone(),
            Failure::Silent => {
                broken.get_or_insert_with(|| format!("rank {rank} did not report"));
                format!(
                    "did not report within {} ms after the first failure",
                    timeout.as_millis()
                )
            }
        };
        let s = severity(&f);
        if worst.as_ref().is_none_or(|w| s < w.0) {
            worst = Some((s, rank, message));
        }
    }
    let result = match worst {
        Some((_, rank, message)) => Err((rank, message)),
        None => Ok(outcomes),
    };
    let fin = FromRoot::Final(result);
    for w in writers.iter_mut() {
        let _ = session::write_frame(w, &fin);
    }
    let FromRoot::Final(result) = fin else {
        unreachable!("built above")
    };
    (result, broken)
}
