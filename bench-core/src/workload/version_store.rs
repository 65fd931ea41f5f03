//! Reference-counted model versions: what an ASYNC node holds of the broadcast history.

use std::collections::BTreeMap;
use std::sync::Arc;

/// Model versions by ID, each kept while something refers to it.
#[derive(Debug, Default, Clone)]
pub struct VersionStore {
    versions: BTreeMap<u64, (Arc<Vec<f32>>, usize)>,
}

impl VersionStore {
    /// Adds a reference to `version`, storing `value()` if it is not held yet.
    pub fn retain(&mut self, version: u64, value: impl FnOnce() -> Arc<Vec<f32>>) {
        self.versions
            .entry(version)
            .or_insert_with(|| (value(), 0))
            .1 += 1;
    }

    /// Drops one reference to `version`; the value goes with the last one.
    pub fn release(&mut self, version: u64) {
        if let Some(e) = self.versions.get_mut(&version) {
            e.1 -= 1;
            if e.1 == 0 {
                self.versions.remove(&version);
            }
        }
    }

    /// The value of `version`, if held.
    pub fn get(&self, version: u64) -> Option<&Arc<Vec<f32>>> {
        self.versions.get(&version).map(|(v, _)| v)
    }

    /// Number of versions held.
    pub fn len(&self) -> usize {
        self.versions.len()
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.versions.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_live_while_referenced() {
        let mut s = VersionStore::default();
        s.retain(3, || Arc::new(vec![1.0]));
        s.retain(3, || unreachable!("already held"));
        s.release(3);
        assert_eq!(s.get(3).map(|v| v[0]), Some(1.0));
        s.release(3);
        assert!(s.get(3).is_none() && s.is_empty());
        s.release(9); // releasing what is not held is a no-op
    }
}
