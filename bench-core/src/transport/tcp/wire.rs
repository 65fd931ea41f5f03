//! The TCP wire format, pure: the handshake `[magic, job token, sender]` and the frame header
//! `[magic | kind, job token, slot, version, length in words, imm0, imm1]`, checked against the
//! job token and the ring the receiver registered. No sockets here: the fuzz target reads
//! these decoders alone.

use super::super::{NodeId, IMM_WORDS};

pub(super) const MAGIC: u64 = 0x5342_5446_0000_0000; // "SBTF"
pub(super) const KIND_WRITE: u64 = 1;
pub(super) const KIND_NOTIFY: u64 = 2;
pub(super) const KIND_BYE: u64 = 3;
/// Frame header words.
pub(super) const HEADER: usize = 7;
/// Payload words landed per read.
pub(super) const CHUNK_WORDS: usize = 8192;

pub(super) fn words_to_bytes(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Why a connection's opening words were refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HelloError {
    NotOurs,
    WrongToken,
}

impl HelloError {
    pub(super) fn text(self) -> &'static str {
        match self {
            HelloError::NotOurs => "not a syncbench peer",
            HelloError::WrongToken => "wrong job token",
        }
    }
}

/// Checks a connection's handshake `[magic, job token, sender]`; returns the sender.
pub(crate) fn decode_hello(
    hello: &[u8; 24],
    token: u64,
) -> std::result::Result<NodeId, HelloError> {
    let w = |i: usize| u64::from_le_bytes(hello[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    if w(0) != MAGIC {
        return Err(HelloError::NotOurs);
    }
    if w(1) != token {
        return Err(HelloError::WrongToken);
    }
    usize::try_from(w(2)).map_err(|_| HelloError::NotOurs)
}

/// A checked frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Frame {
    /// The sender closes the connection on purpose.
    Bye,
    /// A notification alone.
    Notify { imm: [u64; IMM_WORDS] },
    /// A write of `len` words into `slot`, then its notification unless `imm` is all ones.
    Write {
        slot: usize,
        version: u64,
        len: usize,
        imm: [u64; IMM_WORDS],
    },
}

/// Checks frame header `head` from node `from` against the job token and the ring this
/// endpoint registered for `from` (`(depth, capacity)`, `None` when it registered none).
///
/// # Errors
/// The message to record, naming `node` and `from`; the connection is then dropped.
pub(crate) fn decode_header(
    node: NodeId,
    from: NodeId,
    head: &[u8; HEADER * 8],
    token: u64,
    ring: Option<(usize, usize)>,
) -> std::result::Result<Frame, String> {
    let h = |i: usize| u64::from_le_bytes(head[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let (magic_kind, tok, slot, version, len) = (h(0), h(1), h(2), h(3), h(4));
    let imm = [h(5), h(6)];
    if magic_kind & !0xFF != MAGIC || tok != token {
        return Err(format!(
            "node {node}: node {from} sent a malformed frame (bad magic or token); connection dropped"
        ));
    }
    match magic_kind & 0xFF {
        KIND_BYE => Ok(Frame::Bye),
        KIND_NOTIFY => Ok(Frame::Notify { imm }),
        KIND_WRITE => {
            let Some((depth, capacity)) = ring else {
                return Err(format!(
                    "node {node}: node {from} wrote without a registered ring"
                ));
            };
            if slot >= depth as u64 || len > capacity as u64 {
                return Err(format!(
                    "node {node}: node {from} sent a frame for slot {slot} of {len} words, but its ring has {depth} slots of {capacity} words; connection dropped"
                ));
            }
            Ok(Frame::Write {
                slot: slot as usize,
                version,
                len: len as usize,
                imm,
            })
        }
        k => Err(format!(
            "node {node}: node {from} sent an unknown frame kind {k}; connection dropped"
        )),
    }
}
