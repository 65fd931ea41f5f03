//! Hop's update queue (Hop §4.1): received updates tagged `(iter, w_id)`, kept as rotating
//! per-iteration queues over a window of `capacity` iterations starting at `base`.

use crate::protocol::NodeId;
use std::collections::VecDeque;

/// What [`UpdateQueue::enqueue`] did with an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enqueued {
    /// Stored.
    Stored,
    /// Older than the window: the receiver has moved past it (dropped).
    Stale,
}

/// Updates of iterations `base..base + capacity`, one FIFO per iteration, indexed by
/// `iter % capacity` (the "#queues = max gap + 1" of Hop's implementation).
#[derive(Debug, Clone)]
pub struct UpdateQueue {
    slots: Vec<VecDeque<NodeId>>,
    base: u64,
}

impl UpdateQueue {
    /// A queue for `capacity >= 1` iterations from iteration 0.
    pub fn new(capacity: usize) -> Self {
        UpdateQueue {
            slots: vec![VecDeque::new(); capacity.max(1)],
            base: 0,
        }
    }

    fn cap(&self) -> u64 {
        self.slots.len() as u64
    }

    /// Oldest iteration the queue accepts.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Pushes an update of `iter` from `from`.
    ///
    /// # Errors
    /// The iteration is `capacity` or more ahead of the base: the bound on the iteration gap
    /// the capacity was sized for does not hold (a protocol bug). Returns the window.
    pub fn enqueue(&mut self, iter: u64, from: NodeId) -> Result<Enqueued, (u64, u64)> {
        if iter < self.base {
            return Ok(Enqueued::Stale);
        }
        if iter >= self.base + self.cap() {
            return Err((self.base, self.base + self.cap()));
        }
        let slot = (iter % self.cap()) as usize;
        self.slots[slot].push_back(from);
        Ok(Enqueued::Stored)
    }

    fn slot(&self, iter: u64) -> Option<&VecDeque<NodeId>> {
        (iter >= self.base && iter < self.base + self.cap())
            .then(|| &self.slots[(iter % self.cap()) as usize])
    }

    /// Entries tagged `iter` (any iteration when None) from `from` (any sender when None).
    pub fn size(&self, iter: Option<u64>, from: Option<NodeId>) -> usize {
        let count =
            |q: &VecDeque<NodeId>| q.iter().filter(|&&f| from.is_none_or(|x| x == f)).count();
        match iter {
            Some(k) => self.slot(k).map_or(0, count),
            None => (self.base..self.base + self.cap())
                .filter_map(|k| self.slot(k))
                .map(count)
                .sum(),
        }
    }

    /// Newest iteration holding an entry from `from`.
    pub fn newest(&self, from: NodeId) -> Option<u64> {
        (self.base..self.base + self.cap())
            .rev()
            .find(|&k| self.slot(k).is_some_and(|q| q.contains(&from)))
    }

    /// Takes the first `m` entries matching the tags (oldest iteration first, FIFO within an
    /// iteration), or nothing when fewer than `m` match (the caller blocks).
    pub fn dequeue(
        &mut self,
        m: usize,
        iter: Option<u64>,
        from: Option<NodeId>,
    ) -> Option<Vec<(u64, NodeId)>> {
        if self.size(iter, from) < m {
            return None;
        }
        let mut out = Vec::with_capacity(m);
        let iters: Vec<u64> = match iter {
            Some(k) => vec![k],
            None => (self.base..self.base + self.cap()).collect(),
        };
        for k in iters {
            if out.len() == m {
                break;
            }
            let cap = self.cap();
            let q = &mut self.slots[(k % cap) as usize];
            let mut kept = VecDeque::with_capacity(q.len());
            while let Some(f) = q.pop_front() {
                if out.len() < m && from.is_none_or(|x| x == f) {
                    out.push((k, f));
                } else {
                    kept.push_back(f);
                }
            }
            *q = kept;
        }
        Some(out)
    }

    /// Moves the window to start at `base`, returning the entries now stale.
    pub fn advance(&mut self, base: u64) -> Vec<(u64, NodeId)> {
        let mut dropped = Vec::new();
        while self.base < base {
            let k = self.base;
            let cap = self.cap();
            dropped.extend(self.slots[(k % cap) as usize].drain(..).map(|f| (k, f)));
            self.base += 1;
        }
        dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tagged_enqueue_dequeue_size() {
        let mut q = UpdateQueue::new(3);
        assert_eq!(q.enqueue(0, 5), Ok(Enqueued::Stored));
        assert_eq!(q.enqueue(1, 6), Ok(Enqueued::Stored));
        assert_eq!(q.enqueue(0, 6), Ok(Enqueued::Stored));
        assert_eq!(q.enqueue(3, 6), Err((0, 3)), "outside the window");
        assert_eq!(q.size(None, None), 3);
        assert_eq!(q.size(Some(0), None), 2);
        assert_eq!(q.size(None, Some(6)), 2);
        assert_eq!(q.newest(6), Some(1));
        assert_eq!(q.newest(9), None);
        assert_eq!(
            q.dequeue(3, Some(0), None),
            None,
            "blocks: only 2 of iter 0"
        );
        assert_eq!(q.dequeue(1, None, Some(6)), Some(vec![(0, 6)]));
        assert_eq!(q.dequeue(1, Some(0), None), Some(vec![(0, 5)]));
        assert_eq!(q.advance(2), vec![(1, 6)]);
        assert_eq!(q.enqueue(1, 7), Ok(Enqueued::Stale));
        assert_eq!(q.enqueue(4, 7), Ok(Enqueued::Stored), "rotated into slot 1");
        assert_eq!(q.size(Some(4), Some(7)), 1);
    }
}
