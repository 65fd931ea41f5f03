//! Control messages exchanged by protocol nodes, and their fixed-size wire encoding.

use crate::error::{CoreError, Result};

/// Which bytes the driver attaches to a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadKind {
    /// Control only.
    None,
    /// The sender's update computed for the message's clock.
    Update,
    /// A snapshot of the sender's model.
    Model,
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
}

/// Size of an encoded message in 64-bit words.
pub const MESSAGE_WORDS: usize = 2;

impl Message {
    /// Payload the driver attaches.
    pub fn payload(&self) -> PayloadKind {
        match self {
            Message::Update { .. } => PayloadKind::Update,
            Message::ReadRequest { .. } => PayloadKind::None,
            Message::Model { .. } => PayloadKind::Model,
        }
    }

    /// The clock that keys this message's payload at the receiver (0 when none).
    pub fn payload_key(&self) -> u64 {
        match *self {
            Message::Update { clock } => clock,
            _ => 0,
        }
    }

    /// Fixed-size wire form: `[tag, value]`.
    pub fn encode(&self) -> [u64; MESSAGE_WORDS] {
        match *self {
            Message::Update { clock } => [1, clock],
            Message::ReadRequest { clock } => [2, clock],
            Message::Model { complete } => [3, complete],
        }
    }

    /// Parses the wire form; `from` only names the peer in the error.
    ///
    /// # Errors
    /// [`CoreError::Transport`] for an unknown tag (garbage from a peer).
    pub fn decode(words: [u64; MESSAGE_WORDS], from: usize) -> Result<Self> {
        Ok(match words[0] {
            1 => Message::Update { clock: words[1] },
            2 => Message::ReadRequest { clock: words[1] },
            3 => Message::Model { complete: words[1] },
            tag => {
                return Err(CoreError::Transport(format!(
                    "peer {from} sent a message with unknown tag {tag:#x}"
                )))
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
        ] {
            assert_eq!(Message::decode(m.encode(), 0).unwrap(), m);
        }
        let e = Message::decode([99, 0], 3).unwrap_err().to_string();
        assert!(e.contains("peer 3"), "{e}");
    }
}
