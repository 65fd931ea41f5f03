//! The rows a recorded protocol [`Event`] adds to a run's results, in one place for every
//! driver: the simulator appends them to its [`RunRecords`], each node thread (threads and
//! cluster drivers) to its own outcome, and the two must not drift apart.

use super::records::{IterationRow, RowReadRow, RunRecords, WaitRow};
use crate::protocol::Event;

/// Where an event's rows go: one node's (or the whole run's) result tables.
#[derive(Debug)]
pub struct EventRows<'a> {
    /// Finished iterations.
    pub iterations: &'a mut Vec<IterationRow>,
    /// ASYNC workers' waits for tasks.
    pub waits: &'a mut Vec<WaitRow>,
    /// Row tables: clock differentials of row reads.
    pub row_reads: &'a mut Vec<RowReadRow>,
}

impl EventRows<'_> {
    /// Appends the rows `event` makes. `bytes` is asked once, for a finished iteration only:
    /// the bytes its worker sent since its previous iteration ended (the driver counts them, as
    /// only it sees the payloads). A read makes no row.
    pub fn record(self, event: Event, bytes: impl FnOnce() -> u64) {
        match event {
            Event::Iteration(r) => self.iterations.push(IterationRow::from_record(&r, bytes())),
            Event::TaskWait { worker, iter, wait } => {
                self.waits.push(WaitRow { worker, iter, wait });
            }
            Event::RowReads {
                worker,
                clock,
                differentials,
            } => self
                .row_reads
                .extend(
                    differentials
                        .into_iter()
                        .map(|(differential, rows)| RowReadRow {
                            worker,
                            clock,
                            differential,
                            rows,
                        }),
                ),
            Event::Read { .. } => {}
        }
    }
}

impl RunRecords {
    /// This run's tables, as the destination of recorded events.
    pub fn event_rows(&mut self) -> EventRows<'_> {
        EventRows {
            iterations: &mut self.iterations,
            waits: &mut self.waits,
            row_reads: &mut self.row_reads,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::IterationRecord;

    #[test]
    fn each_event_makes_its_rows_and_only_an_iteration_asks_for_bytes() {
        let mut r = RunRecords::default();
        let asked = std::cell::Cell::new(0);
        let bytes = || {
            asked.set(asked.get() + 1);
            640
        };
        r.event_rows().record(
            Event::Read {
                worker: 0,
                iter: 1,
                complete: 0,
            },
            bytes,
        );
        r.event_rows().record(
            Event::TaskWait {
                worker: 2,
                iter: 3,
                wait: 40,
            },
            bytes,
        );
        r.event_rows().record(
            Event::RowReads {
                worker: 1,
                clock: 4,
                differentials: vec![(-2, 10), (0, 5)],
            },
            bytes,
        );
        assert_eq!(asked.get(), 0);
        let it = IterationRecord {
            worker: 1,
            iter: 4,
            start: 10,
            end: 30,
            wait: 5,
            staleness: 1,
        };
        r.event_rows().record(Event::Iteration(it), bytes);
        assert_eq!(asked.get(), 1);
        assert_eq!(r.iterations, [IterationRow::from_record(&it, 640)]);
        assert_eq!(r.waits.len(), 1);
        assert_eq!((r.waits[0].worker, r.waits[0].wait), (2, 40));
        let reads: Vec<(i64, u64)> = r
            .row_reads
            .iter()
            .map(|x| (x.differential, x.rows))
            .collect();
        assert_eq!(reads, [(-2, 10), (0, 5)]);
        assert!(r.row_reads.iter().all(|x| x.worker == 1 && x.clock == 4));
    }
}
