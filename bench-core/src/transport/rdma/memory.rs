//! A buffer registered with a device. The region owns its buffer, so the registration can never
//! outlive the memory it names: deregistration runs in Drop, before the buffer is freed.

use super::{err, RdmaDevice};
use crate::error::Result;
use crate::transport::aligned::{AlignedWords, PAGE};
use ibverbs_sys as ffi;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Bytes this process has registered (pinned) and not yet deregistered.
static PINNED: AtomicU64 = AtomicU64::new(0);

/// Bytes this process has pinned through registrations now.
pub fn pinned_bytes() -> u64 {
    PINNED.load(Ordering::Relaxed)
}

/// Checks that pinning `more` bytes beside `pinned` stays within the locked-memory limit
/// (`limit`; None: unlimited, or a process that may lock any amount).
///
/// # Errors
/// Above the limit: how much, and how to raise it.
fn check_memlock(limit: Option<u64>, pinned: u64, more: u64) -> Result<()> {
    match limit {
        Some(l) if pinned + more > l => Err(err(format!(
            "registering {more} bytes would pin {} bytes in all, above this process's locked-memory limit of {l} bytes (`ulimit -l`): raise it (`ulimit -l unlimited`, or memlock in /etc/security/limits.conf; containers: --ulimit memlock=-1)",
            pinned + more
        ))),
        _ => Ok(()),
    }
}

/// RLIMIT_MEMLOCK's soft limit, None when unlimited or when this process may lock any
/// amount (it holds CAP_IPC_LOCK; root in a container usually does not).
fn memlock_limit() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if may_lock_any(&status) {
        return None;
    }
    // SAFETY: a plain libc call filling a local struct.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut r) != 0 || r.rlim_cur == libc::RLIM_INFINITY {
            return None;
        }
        Some(r.rlim_cur)
    }
}

/// Whether a /proc/<pid>/status text shows CAP_IPC_LOCK (bit 14) in the effective set.
fn may_lock_any(status: &str) -> bool {
    const CAP_IPC_LOCK: u32 = 14;
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_IPC_LOCK) != 0)
}

/// The access a registration asks for: local writes, and with `remote`, RDMA writes from
/// peers. Never IBV_ACCESS_RELAXED_ORDERING: the seqlock of a slot that a reader polls
/// without a notification relies on the responder placing one queue pair's WRITEs in posting
/// order ([`super`]).
pub(super) fn access_flags(remote: bool) -> ffi::ibv_access_flags {
    let mut access = ffi::ibv_access_flags::IBV_ACCESS_LOCAL_WRITE;
    if remote {
        access |= ffi::ibv_access_flags::IBV_ACCESS_REMOTE_WRITE;
    }
    access
}

/// A registered, page-aligned buffer of words.
pub(super) struct MemoryRegion {
    mr: NonNull<ffi::ibv_mr>,
    words: AlignedWords,
    /// Bytes registered (whole pages).
    bytes: u64,
    _dev: Arc<RdmaDevice>,
}

// SAFETY: the registration is a handle the verbs library lets any thread use; the buffer is
// only accessed through atomics (AlignedWords is Send + Sync).
unsafe impl Send for MemoryRegion {}

impl MemoryRegion {
    /// Registers `words` (rounded up to whole pages) for local writes, and with `remote`, for
    /// RDMA writes from peers.
    ///
    /// # Errors
    /// [`crate::error::CoreError::Transport`] when the device refuses the registration (e.g.
    /// the locked-memory limit, `ulimit -l`).
    pub fn register(dev: &Arc<RdmaDevice>, words: AlignedWords, remote: bool) -> Result<Self> {
        let bytes = ((words.len().max(1) * 8).next_multiple_of(PAGE)) as u64;
        check_memlock(memlock_limit(), pinned_bytes(), bytes)?;
        let access = access_flags(remote);
        // SAFETY: the protection domain is valid while `dev` lives (the region keeps an Arc);
        // the address range is the buffer's own allocation, which is page-aligned and whole
        // pages long (AlignedWords), and the region owns it until after deregistration.
        let mr = unsafe {
            ffi::ibv_reg_mr(
                dev.pd(),
                words.addr() as *mut std::ffi::c_void,
                bytes as usize,
                access.0 as i32,
            )
        };
        let mr = NonNull::new(mr).ok_or_else(|| {
            err(format!(
                "cannot register {} bytes on {}: {} (check the locked-memory limit, ulimit -l)",
                words.len() * 8,
                dev.name(),
                std::io::Error::last_os_error()
            ))
        })?;
        PINNED.fetch_add(bytes, Ordering::Relaxed);
        Ok(MemoryRegion {
            mr,
            words,
            bytes,
            _dev: dev.clone(),
        })
    }

    /// The registered buffer.
    pub fn words(&self) -> &AlignedWords {
        &self.words
    }

    /// Bytes registered (pinned): the buffer rounded up to whole pages.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The buffer's address, as work requests name it.
    pub fn addr(&self) -> u64 {
        self.words.addr() as u64
    }

    /// Key for local access (scatter/gather entries).
    pub fn lkey(&self) -> u32 {
        // SAFETY: the registration is valid until Drop.
        unsafe { self.mr.as_ref().lkey }
    }

    /// Key peers write with.
    pub fn rkey(&self) -> u32 {
        // SAFETY: as above.
        unsafe { self.mr.as_ref().rkey }
    }
}

impl Drop for MemoryRegion {
    fn drop(&mut self) {
        // SAFETY: registered in `register`, deregistered once here, before `words` is freed
        // (fields drop after this body). Queue pairs that might still read the buffer are
        // destroyed first by their owners (the endpoint drops its peers' queue pairs before
        // their staging regions).
        unsafe {
            ffi::ibv_dereg_mr(self.mr.as_ptr());
        }
        PINNED.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registrations_beyond_the_locked_memory_limit_are_refused_with_the_fix() {
        assert!(check_memlock(None, 1 << 40, 1 << 40).is_ok());
        assert!(check_memlock(Some(64 << 20), 32 << 20, 32 << 20).is_ok());
        let e = check_memlock(Some(64 << 10), 60 << 10, 8 << 10)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("69632 bytes in all") && e.contains("ulimit -l"),
            "{e}"
        );
    }

    #[test]
    fn registrations_never_ask_for_relaxed_ordering() {
        let relaxed = ffi::ibv_access_flags::IBV_ACCESS_RELAXED_ORDERING.0;
        assert_ne!(relaxed, 0);
        for remote in [false, true] {
            assert_eq!(access_flags(remote).0 & relaxed, 0, "remote {remote}");
        }
        // Exactly local write, and remote write for the receive region.
        assert_eq!(access_flags(false).0, 1);
        assert_eq!(access_flags(true).0, 1 | 2);
    }

    #[test]
    fn cap_ipc_lock_is_read_from_the_effective_set() {
        // root on a host: every capability; root in a default container: no CAP_IPC_LOCK.
        assert!(may_lock_any("Name:\tx\nCapEff:\t000001ffffffffff\n"));
        assert!(!may_lock_any("CapEff:\t00000000a80425fb\n"));
        assert!(may_lock_any("CapEff:\t0000000000004000\n"));
        assert!(!may_lock_any("no such line\n"));
    }
}
