//! Closing the endpoints of one process in step: an endpoint whose peers live in the same
//! process closes only once each of them has drained its own sends (or is gone), or a
//! deadline passes.
//!
//! Why: libfabric's shm provider (1.17) maps a peer endpoint of the same process by handing
//! out that endpoint's own region (`smr_map_to_region` finds it in a process-wide list), and
//! `fi_close` unmaps the region without taking it off the list. A sender whose write to a
//! peer is still being copied then handles the peer's reply on a region that is gone: a
//! SIGSEGV in `pthread_spin_trylock` inside `smr_ep_progress`, seen about once in eight runs
//! of the cluster driver's in-process test. Peers in other processes map the region
//! themselves, so they need no waiting: only names registered in this process are waited on.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Where an endpoint of this process stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Connected and in use.
    Open,
    /// Its own sends are done (teardown reaped them); it waits for its peers to get there too.
    Drained,
}

/// Every endpoint of this process by its address (`fi_getname`): its phase and how many
/// endpoints hold that name (one, unless a provider hands out equal names).
type Registry = Option<HashMap<Vec<u8>, (Phase, usize)>>;

static ENDPOINTS: Mutex<Registry> = Mutex::new(None);
static CHANGED: Condvar = Condvar::new();

fn endpoints() -> MutexGuard<'static, Registry> {
    ENDPOINTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// One endpoint's place in the process-wide list, from connect until it has closed (drop
/// this after `fi_close`).
#[derive(Debug)]
pub(super) struct Closing {
    name: Vec<u8>,
    /// Its peers' names (every node but itself).
    peers: Vec<Vec<u8>>,
}

impl Closing {
    /// Registers endpoint `name`, open, whose peers are `peers`.
    pub(super) fn open(name: Vec<u8>, peers: Vec<Vec<u8>>) -> Self {
        let mut g = endpoints();
        let e = g
            .get_or_insert_with(HashMap::new)
            .entry(name.clone())
            .or_insert((Phase::Open, 0));
        e.1 += 1;
        e.0 = Phase::Open;
        Closing { name, peers }
    }

    /// This endpoint has drained its sends: waits, up to `patience`, until every peer
    /// registered in this process has drained too (or closed). Returns how many were still
    /// open at the deadline (0: all were done).
    pub(super) fn drained(&self, patience: Duration) -> usize {
        let started = Instant::now();
        let mut g = endpoints();
        if let Some(e) = g.get_or_insert_with(HashMap::new).get_mut(&self.name) {
            e.0 = Phase::Drained;
        }
        CHANGED.notify_all();
        loop {
            let open = self
                .peers
                .iter()
                .filter(|p| {
                    g.as_ref()
                        .and_then(|m| m.get(*p))
                        .is_some_and(|e| e.0 == Phase::Open)
                })
                .count();
            let left = patience.saturating_sub(started.elapsed());
            if open == 0 || left.is_zero() {
                return open;
            }
            g = CHANGED
                .wait_timeout(g, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

impl Drop for Closing {
    fn drop(&mut self) {
        let mut g = endpoints();
        if let Some(m) = g.as_mut() {
            if let Some(e) = m.get_mut(&self.name) {
                e.1 -= 1;
                if e.1 == 0 {
                    m.remove(&self.name);
                }
            }
        }
        CHANGED.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(tag: &str, i: usize) -> Vec<u8> {
        format!("closing-test-{tag}-{i}").into_bytes()
    }

    /// Three endpoints of one job: none returns from `drained` before the last has drained,
    /// and all return then, well before the deadline.
    #[test]
    fn an_endpoint_waits_for_its_peers_in_the_process_to_drain() {
        let all: Vec<Vec<u8>> = (0..3).map(|i| name("job", i)).collect();
        let closing: Vec<Closing> = (0..3)
            .map(|i| {
                let peers = all.iter().filter(|n| **n != all[i]).cloned().collect();
                Closing::open(all[i].clone(), peers)
            })
            .collect();
        let order = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for (i, c) in closing.iter().enumerate() {
                let order = &order;
                s.spawn(move || {
                    std::thread::sleep(Duration::from_millis(100 * i as u64));
                    order.lock().unwrap().push(("drained", i));
                    assert_eq!(c.drained(Duration::from_secs(20)), 0);
                    order.lock().unwrap().push(("returned", i));
                });
            }
        });
        let order = order.into_inner().unwrap();
        let last_drained = order.iter().rposition(|e| e.0 == "drained").unwrap();
        let first_returned = order.iter().position(|e| e.0 == "returned").unwrap();
        assert!(last_drained < first_returned, "{order:?}");
    }

    /// Peers not in this process (never registered) and peers already closed are not waited
    /// for; a peer that never drains holds an endpoint only until the deadline.
    #[test]
    fn absent_or_closed_peers_cost_nothing_and_a_stuck_one_only_the_deadline() {
        let (a, b, far) = (name("solo", 0), name("solo", 1), name("solo", 2));
        let ca = Closing::open(a.clone(), vec![b.clone(), far.clone()]);
        let cb = Closing::open(b.clone(), vec![a.clone(), far]);
        drop(cb);
        let t = Instant::now();
        assert_eq!(ca.drained(Duration::from_secs(20)), 0);
        assert!(t.elapsed() < Duration::from_secs(5));
        let stuck = Closing::open(name("stuck", 0), vec![]);
        let c = Closing::open(name("stuck", 1), vec![name("stuck", 0)]);
        let t = Instant::now();
        assert_eq!(c.drained(Duration::from_millis(200)), 1);
        assert!(t.elapsed() >= Duration::from_millis(200));
        drop(stuck);
    }
}
