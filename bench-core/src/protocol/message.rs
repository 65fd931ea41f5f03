//! Control messages exchanged by protocol nodes, and their fixed-size wire encoding.

use crate::error::{CoreError, Result, TransportFault};

/// Which bytes the driver attaches to a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadKind {
    /// Control only.
    None,
    /// The sender's update computed for the message's clock.
    Update,
    /// A snapshot of the sender's model.
    Model,
    /// ASYNC: a task result (gradient sums and the examples they cover).
    TaskResult,
    /// ASYNC: the value of one broadcast model version.
    Version,
}

/// The control part of a message. Parameters never travel here; see [`PayloadKind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Message {
    /// Worker to server: my update for `clock` (INC + CLOCK in ESSP's terms).
    Update {
        /// Worker clock the update belongs to.
        clock: u64,
    },
    /// Worker to server: I am at `clock` and need a model holding every update of clocks
    /// `<= clock - s - 1`.
    ReadRequest {
        /// Requesting worker's clock.
        clock: u64,
    },
    /// Server to worker: a model snapshot holding every worker's updates of clocks `< complete`.
    Model {
        /// Clocks completed by every worker and included in the snapshot.
        complete: u64,
    },
    /// ASYNC coordinator to worker: compute task `iter` (the worker's own task counter) on
    /// broadcast model version `version`. Only the version's ID travels (ASYNCbroadcast).
    Task {
        /// The worker's task number (< 2^56).
        iter: u64,
        /// Model version to compute on.
        version: u64,
    },
    /// ASYNC worker to coordinator: the result of task `iter`, computed on `version`.
    TaskResult {
        /// The worker's task number (< 2^56).
        iter: u64,
        /// Model version it was computed on.
        version: u64,
    },
    /// ASYNC worker to coordinator: send me the value of broadcast version `version`.
    VersionRequest {
        /// Version wanted.
        version: u64,
    },
    /// ASYNC coordinator to worker: the value of broadcast version `version`.
    VersionData {
        /// Version carried.
        version: u64,
    },
    /// ASYNC coordinator to worker: no more tasks; finish.
    Stop,
    /// Peer to in-neighbour: one token; the sender entered iteration `iter` (Hop's token
    /// queues).
    Token {
        /// Iteration the sender entered.
        iter: u64,
    },
    /// Peer to in-neighbour: your update of `clock` has been reduced (NOTIFY-ACK).
    Ack {
        /// Iteration acknowledged.
        clock: u64,
    },
    /// Row tables, worker to shard: the coalesced INCs of my clock `clock` to your rows, and
    /// CLOCK (sent to every shard at the end of every clock, with or without rows).
    RowInc {
        /// The clock the increments belong to.
        clock: u64,
    },
    /// Row tables, worker to shard: I read at step `step` of `clock` and some of your rows in
    /// my cache are missing or too stale (which rows follows from the shared access plan and
    /// what the shard sent me before: see [`crate::protocol::table`]).
    RowRequest {
        /// The reading worker's clock.
        clock: u64,
        /// The step of the clock that reads (< 2^56).
        step: u64,
    },
    /// Row tables, shard to worker: the rows answering your request of clock `clock`, each at
    /// shard clock `stamp` (holding every worker's INCs of clocks `< stamp`).
    Rows {
        /// The request's clock (< 2^56).
        clock: u64,
        /// Shard clock of the rows.
        stamp: u64,
    },
    /// Row tables (ESSP), shard to worker: the shard clock advanced to `stamp`; here is every
    /// row you registered with your first `upto` requests.
    RowPush {
        /// Requests of yours the shard had received (< 2^56).
        upto: u64,
        /// Shard clock of the rows.
        stamp: u64,
    },
}

/// Size of an encoded message in 64-bit words.
pub const MESSAGE_WORDS: usize = 2;

impl Message {
    /// Payload the driver attaches.
    pub fn payload(&self) -> PayloadKind {
        match self {
            Message::Update { .. } => PayloadKind::Update,
            Message::ReadRequest { .. } | Message::RowRequest { .. } => PayloadKind::None,
            Message::Model { .. } | Message::Rows { .. } | Message::RowPush { .. } => {
                PayloadKind::Model
            }
            Message::RowInc { .. } => PayloadKind::Update,
            Message::TaskResult { .. } => PayloadKind::TaskResult,
            Message::VersionData { .. } => PayloadKind::Version,
            Message::Task { .. }
            | Message::VersionRequest { .. }
            | Message::Stop
            | Message::Token { .. }
            | Message::Ack { .. } => PayloadKind::None,
        }
    }

    /// The clock that keys this message's payload at the receiver (0 when none).
    pub fn payload_key(&self) -> u64 {
        match *self {
            Message::Update { clock } | Message::RowInc { clock } => clock,
            Message::TaskResult { version, .. } | Message::VersionData { version } => version,
            _ => 0,
        }
    }

    /// Fixed-size wire form: `[tag | extra << 8, value]`, where only task messages (their task
    /// number) and row-table messages (a request's step, an answer's clock, a push's count)
    /// use the 56-bit `extra`.
    pub fn encode(&self) -> [u64; MESSAGE_WORDS] {
        match *self {
            Message::Update { clock } => [1, clock],
            Message::ReadRequest { clock } => [2, clock],
            Message::Model { complete } => [3, complete],
            Message::Task { iter, version } => [4 | (iter << 8), version],
            Message::TaskResult { iter, version } => [5 | (iter << 8), version],
            Message::VersionRequest { version } => [6, version],
            Message::VersionData { version } => [7, version],
            Message::Stop => [8, 0],
            Message::Token { iter } => [9, iter],
            Message::Ack { clock } => [10, clock],
            Message::RowInc { clock } => [11, clock],
            Message::RowRequest { clock, step } => [12 | (step << 8), clock],
            Message::Rows { clock, stamp } => [13 | (clock << 8), stamp],
            Message::RowPush { upto, stamp } => [14 | (upto << 8), stamp],
        }
    }

    /// Parses the wire form; `from` only names the peer in the error.
    ///
    /// # Errors
    /// [`CoreError::Transport`] for an unknown tag (garbage from a peer).
    pub fn decode(words: [u64; MESSAGE_WORDS], from: usize) -> Result<Self> {
        let (tag, extra, value) = (words[0] & 0xff, words[0] >> 8, words[1]);
        let garbage = || {
            CoreError::transport(
                TransportFault::Malformed,
                format!(
                    "peer {from} sent a malformed message [{:#x}, {:#x}]",
                    words[0], words[1]
                ),
            )
        };
        if extra != 0 && !matches!(tag, 4 | 5 | 12 | 13 | 14) {
            return Err(garbage());
        }
        Ok(match tag {
            1 => Message::Update { clock: value },
            2 => Message::ReadRequest { clock: value },
            3 => Message::Model { complete: value },
            4 => Message::Task {
                iter: extra,
                version: value,
            },
            5 => Message::TaskResult {
                iter: extra,
                version: value,
            },
            6 => Message::VersionRequest { version: value },
            7 => Message::VersionData { version: value },
            8 if value == 0 => Message::Stop,
            8 => return Err(garbage()),
            9 => Message::Token { iter: value },
            10 => Message::Ack { clock: value },
            11 => Message::RowInc { clock: value },
            12 => Message::RowRequest {
                clock: value,
                step: extra,
            },
            13 => Message::Rows {
                clock: extra,
                stamp: value,
            },
            14 => Message::RowPush {
                upto: extra,
                stamp: value,
            },
            tag => {
                return Err(CoreError::transport(
                    TransportFault::Malformed,
                    format!("peer {from} sent a message with unknown tag {tag:#x}"),
                ))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_garbage() {
        for m in [
            Message::Update { clock: 7 },
            Message::ReadRequest { clock: 0 },
            Message::Model { complete: u64::MAX },
            Message::Task {
                iter: (1 << 56) - 1,
                version: u64::MAX,
            },
            Message::TaskResult {
                iter: 3,
                version: 9,
            },
            Message::VersionRequest { version: 4 },
            Message::VersionData { version: 5 },
            Message::Stop,
            Message::Token { iter: 3 },
            Message::Ack { clock: 8 },
            Message::RowInc { clock: 2 },
            Message::RowRequest { clock: 6, step: 0 },
            Message::RowRequest {
                clock: 7,
                step: (1 << 56) - 1,
            },
            Message::Rows {
                clock: (1 << 56) - 1,
                stamp: 4,
            },
            Message::RowPush { upto: 3, stamp: 9 },
        ] {
            assert_eq!(Message::decode(m.encode(), 0).unwrap(), m);
        }
        let e = Message::decode([99, 0], 3).unwrap_err().to_string();
        assert!(e.contains("peer 3"), "{e}");
        let e = Message::decode([1 | (5 << 8), 0], 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("peer 2") && e.contains("malformed"), "{e}");
        assert!(Message::decode([8, 1], 2).is_err());
    }
}
