//! The in-process notification queue of one receiver (the threads and tcp backends): many
//! producers (senders' node threads, copy engines, socket readers), one consumer (the receiver's
//! node thread).
//!
//! The fast path is a bounded ring of sequence-stamped cells on their own cache lines (Vyukov's
//! bounded queue): a push claims a position with one compare-and-swap and publishes the cell
//! with one exchange, a pop is loads and a release store. A notification thus crosses cores as
//! one cache line, with no lock taken on either side, which is what keeps the threads backend's
//! one-way latency near a cache-line ping-pong (a mutex-guarded deque takes six atomic
//! read-modify-writes and two contended lines per notification).
//!
//! The queue never refuses a push: a receiver that computes while fast senders keep notifying
//! (ASYNC's torn-buffer runs) may fall behind by any amount, as with an unbounded deque.
//! When the ring is full, pushes go to an overflow deque under the lock; once anything is
//! there, every push goes there until the receiver has drained it, and the receiver takes the
//! ring's entries first. Each producer's notifications therefore arrive in the order it pushed
//! them; between different producers, as on any fabric, there is no order.
//!
//! A receiver spins for [`SPIN`] and then sleeps on a condition variable; a producer wakes it
//! only when it has said it sleeps (a sequentially consistent handshake on `sleepers`), so a
//! spinning receiver costs the sender no system call.

use super::{NodeId, Notification, IMM_WORDS};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a waiter spins on the queue before it sleeps: a notification that arrives within
/// it is seen at cache-line speed instead of a thread wake-up.
pub(crate) const SPIN: Duration = Duration::from_micros(30);

/// Cells in the ring (a power of two); beyond them the overflow deque takes the rest.
const CELLS: usize = 256;

/// Words of a notification in a cell: sender, slot, version, then the inline words.
const WORDS: usize = 3 + IMM_WORDS;

/// One cell: its sequence word (`position` when free for the push at `position`,
/// `position + 1` once that push published it) and the notification's words.
#[repr(align(64))]
struct Cell {
    seq: AtomicU64,
    words: [AtomicU64; WORDS],
}

/// A value on a cache line of its own, so producers and the consumer do not share one.
#[repr(align(64))]
#[derive(Default)]
struct Line<T>(T);

/// The receiver's side of the overflow and of sleeping (one lock for both).
#[derive(Default)]
struct Slow {
    overflow: VecDeque<Notification>,
}

/// One receiver's notification queue (see the module docs).
pub(crate) struct Inbox {
    cells: Box<[Cell]>,
    /// The next position a producer claims.
    tail: Line<AtomicU64>,
    /// The next position the consumer takes (changed by the consumer only).
    head: Line<AtomicU64>,
    /// Entries in the overflow deque (read without the lock on every push).
    overflowed: Line<AtomicUsize>,
    /// Waiters asleep or about to sleep on `ready`.
    sleepers: Line<AtomicUsize>,
    slow: Mutex<Slow>,
    ready: Condvar,
}

impl Default for Inbox {
    fn default() -> Self {
        Inbox {
            cells: (0..CELLS as u64)
                .map(|i| Cell {
                    seq: AtomicU64::new(i),
                    words: Default::default(),
                })
                .collect(),
            tail: Line::default(),
            head: Line::default(),
            overflowed: Line::default(),
            sleepers: Line::default(),
            slow: Mutex::default(),
            ready: Condvar::new(),
        }
    }
}

impl std::fmt::Debug for Inbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbox")
            .field("tail", &self.tail.0.load(Ordering::Relaxed))
            .field("head", &self.head.0.load(Ordering::Relaxed))
            .field("overflowed", &self.overflowed.0.load(Ordering::Relaxed))
            .finish()
    }
}

impl Inbox {
    fn lock(&self) -> MutexGuard<'_, Slow> {
        // A panic while holding the lock leaves a deque that is still whole.
        self.slow.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `n` for the receiver and wakes it if it sleeps. Never blocks on the receiver.
    pub(crate) fn push(&self, n: Notification) {
        if self.overflowed.0.load(Ordering::Acquire) > 0 || !self.push_ring(&n) {
            let mut slow = self.lock();
            slow.overflow.push_back(n);
            self.overflowed.0.fetch_add(1, Ordering::SeqCst);
        }
        // Pairs with the receiver's increment before its last look at the queue: either it
        // sees this notification, or this load sees it asleep.
        if self.sleepers.0.load(Ordering::SeqCst) > 0 {
            let _slow = self.lock();
            self.ready.notify_one();
        }
    }

    /// Claims a cell and publishes `n` in it; false when the ring is full.
    fn push_ring(&self, n: &Notification) -> bool {
        let mask = CELLS as u64 - 1;
        let mut pos = self.tail.0.load(Ordering::Relaxed);
        loop {
            let cell = &self.cells[(pos & mask) as usize];
            let seq = cell.seq.load(Ordering::Acquire);
            if seq == pos {
                match self.tail.0.compare_exchange_weak(
                    pos,
                    pos + 1,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        let w = &cell.words;
                        w[0].store(n.from as u64, Ordering::Relaxed);
                        w[1].store(n.slot as u64, Ordering::Relaxed);
                        w[2].store(n.version, Ordering::Relaxed);
                        for (d, &v) in w[3..].iter().zip(&n.imm) {
                            d.store(v, Ordering::Relaxed);
                        }
                        // Publishes the words (release) and orders the sleepers check after
                        // it (sequentially consistent).
                        cell.seq.swap(pos + 1, Ordering::SeqCst);
                        return true;
                    }
                    Err(now) => pos = now,
                }
            } else if seq < pos {
                // The cell still holds the entry of one lap ago: the ring is full.
                return false;
            } else {
                pos = self.tail.0.load(Ordering::Relaxed);
            }
        }
    }

    /// Takes the next notification from the ring (the consumer only).
    fn pop_ring(&self) -> Option<Notification> {
        let pos = self.head.0.load(Ordering::Relaxed);
        let cell = &self.cells[(pos as usize) & (CELLS - 1)];
        if cell.seq.load(Ordering::SeqCst) != pos + 1 {
            return None;
        }
        let w = &cell.words;
        let mut imm = [0u64; IMM_WORDS];
        for (d, s) in imm.iter_mut().zip(&w[3..]) {
            *d = s.load(Ordering::Relaxed);
        }
        let n = Notification {
            from: w[0].load(Ordering::Relaxed) as NodeId,
            slot: w[1].load(Ordering::Relaxed) as usize,
            version: w[2].load(Ordering::Relaxed),
            imm,
        };
        cell.seq.store(pos + CELLS as u64, Ordering::Release);
        self.head.0.store(pos + 1, Ordering::Relaxed);
        Some(n)
    }

    /// The ring's next entry, else the overflow's first (taken under `slow`). Nothing while a
    /// claimed cell is still being written: its producer's later notifications may be in the
    /// overflow, and must not overtake it.
    fn pop_with(&self, slow: &mut Slow) -> Option<Notification> {
        if let Some(n) = self.pop_ring() {
            return Some(n);
        }
        if self.tail.0.load(Ordering::SeqCst) != self.head.0.load(Ordering::Relaxed) {
            return None;
        }
        let n = slow.overflow.pop_front();
        if n.is_some() {
            self.overflowed.0.fetch_sub(1, Ordering::SeqCst);
        }
        n
    }

    /// The next notification if one is queued (the consumer only).
    fn try_pop(&self) -> Option<Notification> {
        if let Some(n) = self.pop_ring() {
            return Some(n);
        }
        if self.overflowed.0.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut slow = self.lock();
        self.pop_with(&mut slow)
    }

    /// Waits up to `timeout` for the next notification (the receiver's thread only).
    pub(crate) fn wait(&self, timeout: Duration) -> Option<Notification> {
        let t0 = Instant::now();
        let spin = SPIN.min(timeout);
        loop {
            if let Some(n) = self.try_pop() {
                return Some(n);
            }
            if t0.elapsed() >= spin {
                break;
            }
            std::hint::spin_loop();
        }
        let mut slow = self.lock();
        self.sleepers.0.fetch_add(1, Ordering::SeqCst);
        let n = loop {
            if let Some(n) = self.pop_with(&mut slow) {
                break Some(n);
            }
            let left = timeout.saturating_sub(t0.elapsed());
            if left.is_zero() {
                break None;
            }
            slow = self
                .ready
                .wait_timeout(slow, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        };
        self.sleepers.0.fetch_sub(1, Ordering::SeqCst);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn note(from: NodeId, k: u64) -> Notification {
        Notification {
            from,
            slot: k as usize % 7,
            version: k,
            imm: [k, !k],
        }
    }

    #[test]
    fn a_full_ring_overflows_and_everything_comes_out_in_push_order() {
        let inbox = Inbox::default();
        let total = 3 * CELLS as u64 + 5;
        for k in 0..total {
            inbox.push(note(1, k));
        }
        assert!(inbox.overflowed.0.load(Ordering::Relaxed) > 0);
        for k in 0..total {
            assert_eq!(inbox.wait(Duration::ZERO).unwrap(), note(1, k));
        }
        assert!(inbox.wait(Duration::from_millis(1)).is_none());
        // the ring is used again once the overflow is drained
        inbox.push(note(2, 9));
        assert_eq!(inbox.overflowed.0.load(Ordering::Relaxed), 0);
        assert_eq!(inbox.wait(Duration::ZERO).unwrap(), note(2, 9));
    }

    #[test]
    fn concurrent_producers_keep_their_own_order_and_lose_nothing() {
        let inbox = Arc::new(Inbox::default());
        let per = 20_000u64;
        // A head start of more than a ring's worth: the overflow is used while the others
        // still push into it concurrently.
        for k in 0..CELLS as u64 + 10 {
            inbox.push(note(3, k));
        }
        let producers: Vec<_> = (0..3)
            .map(|p| {
                let inbox = inbox.clone();
                std::thread::spawn(move || {
                    for k in 0..per {
                        inbox.push(note(p, k));
                    }
                })
            })
            .collect();
        let mut next = [0u64; 4];
        for _ in 0..3 * per + CELLS as u64 + 10 {
            let n = inbox.wait(Duration::from_secs(10)).expect("a notification");
            assert_eq!(
                n,
                note(n.from, next[n.from]),
                "out of order from {}",
                n.from
            );
            next[n.from] += 1;
        }
        for p in producers {
            p.join().unwrap();
        }
        assert_eq!(next, [per, per, per, CELLS as u64 + 10]);
        assert!(inbox.wait(Duration::from_millis(1)).is_none());
    }

    #[test]
    fn a_sleeping_receiver_is_woken_by_a_push() {
        let inbox = Arc::new(Inbox::default());
        let r = {
            let inbox = inbox.clone();
            std::thread::spawn(move || {
                let t0 = Instant::now();
                (inbox.wait(Duration::from_secs(30)), t0.elapsed())
            })
        };
        // long enough for the receiver to have stopped spinning and gone to sleep
        std::thread::sleep(Duration::from_millis(20));
        inbox.push(note(4, 1));
        let (n, waited) = r.join().unwrap();
        assert_eq!(n, Some(note(4, 1)));
        // a lost wake-up would end the wait only at its 30 s timeout
        assert!(waited < Duration::from_secs(10), "woken after {waited:?}");
    }

    #[test]
    fn a_claimed_cell_still_being_written_is_not_overtaken_by_the_overflow() {
        let inbox = Inbox::default();
        // A producer claims the first cell and has not yet written it.
        let claimed = inbox.tail.0.fetch_add(1, Ordering::SeqCst);
        // Others fill the rest of the ring, then the overflow.
        for k in 1..CELLS as u64 + 3 {
            inbox.push(note(1, k));
        }
        assert_eq!(inbox.overflowed.0.load(Ordering::SeqCst), 3);
        // Nothing may come out before the claimed cell: the producers' later notifications
        // (in the ring behind it and in the overflow) must wait for it.
        assert!(inbox.try_pop().is_none());
        assert!(inbox.wait(Duration::from_millis(1)).is_none());
        // The producer publishes; everything follows in order.
        let cell = &inbox.cells[claimed as usize];
        let n = note(1, 0);
        cell.words[0].store(n.from as u64, Ordering::Relaxed);
        cell.words[1].store(n.slot as u64, Ordering::Relaxed);
        cell.words[2].store(n.version, Ordering::Relaxed);
        cell.words[3].store(n.imm[0], Ordering::Relaxed);
        cell.words[4].store(n.imm[1], Ordering::Relaxed);
        cell.seq.store(claimed + 1, Ordering::SeqCst);
        for k in 0..CELLS as u64 + 3 {
            assert_eq!(inbox.wait(Duration::ZERO).unwrap(), note(1, k));
        }
    }
}
