//! Which training rows a worker's mini-batch reads: every worker owns a contiguous share of
//! the rows and walks it cyclically, `batch` rows per iteration. The SVM and least-squares SGD
//! read their batches this way (the same rows for the same worker, iteration and worker count).

/// The rows of worker `worker`'s batches in a run of `workers` workers over `rows` rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShareBatches {
    rows: usize,
    share: usize,
    base: usize,
    batch: usize,
}

impl ShareBatches {
    /// Worker `worker`'s share: `rows / workers` rows (at least one) from `worker * share`
    /// (wrapping), read `batch` at a time. A worker count of 0 counts as 1.
    ///
    /// # Panics
    /// When `rows` is 0 (a workload without training rows: the workloads refuse it).
    pub(crate) fn new(rows: usize, workers: usize, worker: usize, batch: usize) -> Self {
        assert!(rows > 0, "a batch needs training rows");
        let share = (rows / workers.max(1)).max(1);
        ShareBatches {
            rows,
            share,
            base: (worker * share) % rows,
            batch,
        }
    }

    /// The `k`-th row (0-based, below `batch`) of iteration `iter`'s batch.
    pub(crate) fn row(&self, iter: u64, k: usize) -> usize {
        (self.base + ((iter as usize * self.batch + k) % self.share)) % self.rows
    }

    /// The rows of iteration `iter`'s batch, in order.
    pub(crate) fn rows(&self, iter: u64) -> impl Iterator<Item = usize> + '_ {
        (0..self.batch).map(move |k| self.row(iter, k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_worker_walks_its_own_share_cyclically() {
        // 10 rows, 3 workers: shares of 3 from 0, 3 and 6; row 9 belongs to no share.
        let w1 = ShareBatches::new(10, 3, 1, 2);
        assert_eq!(w1.rows(0).collect::<Vec<_>>(), vec![3, 4]);
        assert_eq!(w1.rows(1).collect::<Vec<_>>(), vec![5, 3]);
        assert_eq!(w1.rows(2).collect::<Vec<_>>(), vec![4, 5]);
        let w2 = ShareBatches::new(10, 3, 2, 4);
        assert_eq!(w2.rows(0).collect::<Vec<_>>(), vec![6, 7, 8, 6]);
    }

    #[test]
    fn more_workers_than_rows_share_single_rows_wrapping() {
        let w = ShareBatches::new(3, 5, 4, 2);
        assert_eq!(w.rows(0).collect::<Vec<_>>(), vec![1, 1]);
        assert_eq!(
            ShareBatches::new(3, 0, 0, 1).rows(5).collect::<Vec<_>>(),
            vec![2]
        );
    }
}
