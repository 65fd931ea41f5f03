//! The wire form of a payload in a ring slot: `[n_applied, applied..., n_f32, f32 pairs...]`
//! as 64-bit words, so every transport moves it as one aligned block.

use crate::error::{CoreError, Result, TransportFault};
use crate::learning::{Params, Payload};
use crate::protocol::NodeId;
use std::sync::Arc;

/// Encodes a payload as words: `[n_applied, applied..., n_f32, f32 pairs...]`.
pub(crate) fn encode(p: &Payload) -> Vec<u64> {
    let mut w = Vec::with_capacity(2 + p.applied.len() + p.data.len().div_ceil(2));
    w.push(p.applied.len() as u64);
    w.extend(p.applied.iter().copied());
    w.push(p.data.len() as u64);
    // A scaled update's dense form is built for the wire only, not kept beside its base.
    let scaled;
    let data: &[f32] = match &p.data {
        Params::Dense(d) => d,
        Params::Scaled(s) => {
            scaled = s.to_dense_vec();
            &scaled
        }
    };
    for pair in data.chunks(2) {
        let lo = pair[0].to_bits() as u64;
        let hi = pair.get(1).map_or(0, |x| x.to_bits() as u64);
        w.push(lo | (hi << 32));
    }
    w
}

/// Decodes the words [`encode`] wrote.
///
/// # Errors
/// [`TransportFault::Malformed`] when the words are too short for the lengths they state.
pub(crate) fn decode(words: &[u64], from: NodeId) -> Result<Payload> {
    let bad = || {
        CoreError::transport(
            TransportFault::Malformed,
            format!("malformed payload from node {from}"),
        )
    };
    let na = *words.first().ok_or_else(bad)? as usize;
    let applied = words.get(1..1 + na).ok_or_else(bad)?.to_vec();
    let nf = *words.get(1 + na).ok_or_else(bad)? as usize;
    let body = words.get(2 + na..2 + na + nf.div_ceil(2)).ok_or_else(bad)?;
    let mut data = Vec::with_capacity(nf);
    for (i, w) in body.iter().enumerate() {
        data.push(f32::from_bits(*w as u32));
        if 2 * i + 1 < nf {
            data.push(f32::from_bits((*w >> 32) as u32));
        }
    }
    Ok(Payload {
        data: data.into(),
        applied: Arc::new(applied),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_round_trip() {
        let p = Payload {
            data: vec![1.5, -2.0, 3.25].into(),
            applied: Arc::new(vec![4, 5]),
        };
        let w = encode(&p);
        assert_eq!(w.len(), crate::learning::payload_words(2, 3));
        assert_eq!(decode(&w, 0).unwrap(), p);
        assert!(decode(&w[..3], 0).is_err());
    }
}
