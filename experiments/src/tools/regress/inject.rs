//! Injected regressions for the measured tiers' self-test: `--inject shm-copy=1.3` makes every
//! one-sided write of the shm transport take 1.3 times as long (the shm transport copies the
//! payload inside `post_write`; the wrapper times that call and spins for the extra 0.3),
//! which is what a change that slows the shm copy by 30% looks like from outside.
//! The injection wraps the endpoint, so the transport's own code is measured unchanged
//! otherwise; it exists to prove that `syncbench regress` catches such a change (and names it)
//! and to measure how often it cries wolf without one.

use anyhow::{bail, Result};
use bench_core::transport::{
    AlignedWords, Completion, Endpoint, NodeId, Notification, SlotRead, IMM_WORDS,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The injections `--inject` accepts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Injection {
    /// Every shm write takes this many times as long (1 = unchanged).
    pub shm_copy: f64,
}

impl Injection {
    /// No injection.
    pub fn none() -> Injection {
        Injection { shm_copy: 1.0 }
    }

    /// Parses `name=factor` items, comma-separated (`shm-copy=1.3`).
    ///
    /// # Errors
    /// An unknown name, or a factor that is not a number in 1..=10.
    pub fn parse(spec: &str) -> Result<Injection> {
        let mut inj = Injection::none();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((name, value)) = item.split_once('=') else {
                bail!("--inject: '{item}' is not name=factor (e.g. shm-copy=1.3)");
            };
            let f: f64 = value
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("--inject: '{value}' in '{item}' is not a number"))?;
            if !(1.0..=10.0).contains(&f) {
                bail!("--inject: factor {f} in '{item}' must lie in 1..=10");
            }
            match name.trim() {
                "shm-copy" => inj.shm_copy = f,
                other => bail!("--inject: unknown injection '{other}' (known: shm-copy)"),
            }
        }
        Ok(inj)
    }

    /// Whether anything is injected.
    pub fn any(&self) -> bool {
        self.shm_copy > 1.0
    }
}

/// An endpoint whose writes take `factor` times as long as the wrapped endpoint's.
pub struct SlowCopy<E> {
    inner: E,
    extra: f64,
}

impl<E: Endpoint> SlowCopy<E> {
    /// Wraps `inner`; `factor` 1 changes nothing.
    pub fn new(inner: E, factor: f64) -> SlowCopy<E> {
        SlowCopy {
            inner,
            extra: (factor - 1.0).max(0.0),
        }
    }
}

impl<E: Endpoint> Endpoint for SlowCopy<E> {
    fn node(&self) -> NodeId {
        self.inner.node()
    }
    fn remote_depth(&self, to: NodeId) -> bench_core::Result<usize> {
        self.inner.remote_depth(to)
    }
    fn post_write(
        &mut self,
        to: NodeId,
        slot: usize,
        version: u64,
        data: Option<Arc<AlignedWords>>,
        len: usize,
        notify: Option<[u64; IMM_WORDS]>,
    ) -> bench_core::Result<u64> {
        let t0 = Instant::now();
        let id = self
            .inner
            .post_write(to, slot, version, data, len, notify)?;
        // the copy is done when the shm transport's post_write returns: stretch it
        let extra = t0.elapsed().mul_f64(self.extra);
        let t1 = Instant::now();
        while t1.elapsed() < extra {
            std::hint::spin_loop();
        }
        Ok(id)
    }
    fn post_notify(&mut self, to: NodeId, imm: [u64; IMM_WORDS]) -> bench_core::Result<u64> {
        self.inner.post_notify(to, imm)
    }
    fn poll_completion(&mut self) -> Option<Completion> {
        self.inner.poll_completion()
    }
    fn wait_notification(&mut self, timeout: Duration) -> Option<Notification> {
        self.inner.wait_notification(timeout)
    }
    fn read_slot(
        &self,
        from: NodeId,
        slot: usize,
        out: &mut Vec<u64>,
    ) -> bench_core::Result<SlotRead> {
        self.inner.read_slot(from, slot, out)
    }
    fn health(&self) -> bench_core::Result<()> {
        self.inner.health()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_or_are_refused_by_name() {
        assert_eq!(Injection::parse("").unwrap(), Injection::none());
        assert!(!Injection::none().any());
        let i = Injection::parse("shm-copy=1.3").unwrap();
        assert_eq!(i.shm_copy, 1.3);
        assert!(i.any());
        for bad in ["shm-copy", "shm-copy=x", "shm-copy=0.5", "nic=2"] {
            let e = Injection::parse(bad).unwrap_err().to_string();
            assert!(e.contains("--inject"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_slowed_endpoint_still_delivers_the_same_bytes() {
        use bench_core::transport::threads::ThreadsFabric;
        let mut f = ThreadsFabric::new(2);
        f.register(0, 1, 64, 2).unwrap();
        let mut e = f.endpoints();
        let mut b = e.pop().unwrap();
        let mut a = SlowCopy::new(e.pop().unwrap(), 2.5);
        let src = Arc::new(AlignedWords::from_words(&(0..64).collect::<Vec<u64>>()));
        a.post_write(1, 1, 7, Some(src), 64, Some([3, 4])).unwrap();
        let n = b.wait_notification(Duration::from_secs(5)).unwrap();
        let mut out = Vec::new();
        let r = b.read_slot(0, 1, &mut out).unwrap();
        assert!(r.consistent(), "{r:?} {n:?}");
        assert_eq!(out, (0..64).collect::<Vec<u64>>());
    }
}
