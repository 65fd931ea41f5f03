//! The progress thread: it reads the endpoint's one completion queue all the time, so that a
//! provider with manual progress (rxm, shm) moves data while the caller computes, lands
//! writes addressed to this node, and forms connections on a peer's first write (a target
//! whose queue nobody reads never answers). Each entry goes where it belongs: the remote data
//! of a write that landed here to the notifications, everything else (a signaled request's
//! success, any request's failure) to the send completions.

use super::domain::Domain;
use super::ffi;
use crate::transport::one_sided::send_tracker::Wc;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The context of a credit return (which names no chain of the send tracker).
pub(crate) const CREDIT_CONTEXT: u64 = u64::MAX;

/// What the progress thread read, waiting to be taken.
#[derive(Debug, Default)]
pub(crate) struct Inbox {
    /// Remote completion data of writes that landed here, oldest first.
    pub(crate) notes: Mutex<VecDeque<u64>>,
    /// Send completions (a signaled request's success, any request's failure).
    pub(crate) sends: Mutex<VecDeque<Wc>>,
    /// Failures the thread noticed that belong to no request (a completion queue error).
    pub(crate) faults: Mutex<Vec<String>>,
}

/// The running thread; dropping it stops and joins it.
pub(crate) struct Progress {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Empty reads before the thread naps (spinning, then yielding, until then).
const YIELDS: u32 = 20_000;

/// Entries read per `fi_cq_read`.
const BATCH: usize = 16;

impl Progress {
    /// Starts reading `domain`'s completion queue into `inbox`.
    pub(crate) fn start(domain: Arc<Domain>, inbox: Arc<Inbox>, node: usize) -> Progress {
        let stop = Arc::new(AtomicBool::new(false));
        let halt = stop.clone();
        let thread = std::thread::Builder::new()
            .name(format!("ofi-progress-{node}"))
            .spawn(move || run(&domain, &inbox, &halt))
            .expect("spawning the ofi progress thread");
        Progress {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads until told to stop: spinning while entries come, then yielding, then (after
/// [`YIELDS`] empty reads) napping from 5 us doubling to 100 us while none do (a nap's length
/// is the latency an idle endpoint adds).
fn run(d: &Domain, inbox: &Inbox, stop: &AtomicBool) {
    let mut buf = [ffi::fi_cq_data_entry::default(); BATCH];
    let mut idle = 0u32;
    let mut nap = Duration::from_micros(5);
    while !stop.load(Ordering::Acquire) {
        // SAFETY: the completion queue is open while the domain lives (the thread holds it);
        // buf has BATCH entries of the queue's format.
        let n = unsafe { ffi::cq_read(d.cq, buf.as_mut_ptr(), BATCH) };
        if n > 0 {
            take(inbox, &buf[..n as usize]);
            idle = 0;
            nap = Duration::from_micros(5);
            continue;
        }
        if n == -(ffi::FI_EAVAIL as isize) {
            read_error(d, inbox);
            continue;
        }
        if n != -(libc::EAGAIN as isize) {
            inbox.faults.lock().expect("inbox").push(format!(
                "reading the completion queue failed: {}",
                ffi::strerror(n as i64)
            ));
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        idle += 1;
        if idle < 256 {
            std::hint::spin_loop();
        } else if idle < YIELDS {
            // Yielding keeps the latency of a busy exchange low without taking a core from
            // a thread that needs it.
            std::thread::yield_now();
        } else {
            std::thread::sleep(nap);
            nap = (nap * 2).min(Duration::from_micros(100));
        }
    }
}

/// Whether an entry is the remote data of a write that landed here. The flag alone does not
/// tell: the sockets provider also sets FI_REMOTE_CQ_DATA on the sender's completion of a
/// write that carried data. A target's entry is flagged FI_REMOTE_WRITE (not by every
/// provider: rxm omits it) or names no request (this backend posts no receives); a sender's
/// names its request.
fn landed_here(e: &ffi::fi_cq_data_entry) -> bool {
    e.flags & u64::from(ffi::FI_REMOTE_CQ_DATA) != 0
        && (e.flags & u64::from(ffi::FI_REMOTE_WRITE) != 0 || e.op_context.is_null())
}

/// Sorts successful entries: remote data to the notifications, the rest to the sends.
fn take(inbox: &Inbox, entries: &[ffi::fi_cq_data_entry]) {
    let (notes, sends): (Vec<&ffi::fi_cq_data_entry>, Vec<&ffi::fi_cq_data_entry>) =
        entries.iter().partition(|e| landed_here(e));
    if !notes.is_empty() {
        inbox
            .notes
            .lock()
            .expect("inbox")
            .extend(notes.iter().map(|e| e.data));
    }
    if !sends.is_empty() {
        inbox
            .sends
            .lock()
            .expect("inbox")
            .extend(sends.iter().map(|e| Wc {
                wr_id: e.op_context as u64,
                status: 0,
                vendor_err: 0,
            }));
    }
}

/// One error entry: a request's failure goes to the sends (status: the positive errno;
/// vendor: the provider's error), a failure of no request to the faults.
fn read_error(d: &Domain, inbox: &Inbox) {
    let mut e = ffi::fi_cq_err_entry::default();
    // SAFETY: the queue reported an error entry; e is one entry.
    let rc = unsafe { ffi::cq_readerr(d.cq, &mut e) };
    if rc != 1 {
        return;
    }
    if e.op_context.is_null() {
        // SAFETY: as above; err_data belongs to the entry just read.
        let text = unsafe { ffi::cq_strerror(d.cq, e.prov_errno, e.err_data) };
        inbox.faults.lock().expect("inbox").push(format!(
            "a completion with no request failed: {}: {text}",
            ffi::strerror(-i64::from(e.err))
        ));
        return;
    }
    inbox.sends.lock().expect("inbox").push_back(Wc {
        wr_id: e.op_context as u64,
        status: e.err.unsigned_abs().max(1),
        vendor_err: e.prov_errno as u32,
    });
}
