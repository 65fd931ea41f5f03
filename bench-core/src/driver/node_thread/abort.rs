//! A stop request from outside a node (another rank failed, the user interrupted), shared by
//! the nodes of a process and checked between their waits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// A reason to stop that comes from outside the node (another rank failed), checked between
/// waits.
#[derive(Debug, Default)]
pub struct AbortFlag {
    raised: AtomicBool,
    reason: Mutex<String>,
}

impl AbortFlag {
    /// Asks every node watching this flag to stop, giving `reason`.
    pub fn raise(&self, reason: &str) {
        let mut r = self.reason.lock().expect("abort reason lock");
        if !self.raised.load(Ordering::SeqCst) {
            *r = reason.to_string();
            self.raised.store(true, Ordering::SeqCst);
        }
    }

    /// The reason, once raised.
    pub fn reason(&self) -> Option<String> {
        self.raised
            .load(Ordering::SeqCst)
            .then(|| self.reason.lock().expect("abort reason lock").clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abort_flag_keeps_the_first_reason() {
        let f = AbortFlag::default();
        assert_eq!(f.reason(), None);
        f.raise("rank 2 lost");
        f.raise("later");
        assert_eq!(f.reason().as_deref(), Some("rank 2 lost"));
    }
}
