//! A sequential reference run of a [`TableModel`]: one worker that reads every row fresh,
//! so no sync mode's staleness touches it. For a model with no closed-form optimum (LDA's
//! collapsed Gibbs sampler converges in distribution, not to a point), the level its loss
//! settles at after many sweeps is what the distributed runs' curves are read against.

use super::TableModel;
use crate::protocol::table::RowKey;

/// Where a sequential run's loss settled.
#[derive(Debug, Clone, PartialEq)]
pub struct SequentialReference {
    /// Loss before clock 0 and after every clock (`clocks + 1` values).
    pub losses: Vec<f64>,
    /// The mean loss over the last quarter of the clocks: the settled level.
    pub level: f64,
    /// `|mean(last quarter) - mean(the quarter before)| / |initial - level|`: how far the
    /// run still drifted at its end, relative to how far it came (small means settled).
    pub drift: f64,
}

/// Runs `model` for `clocks` clocks as its only worker, every step reading the dense rows as
/// the previous step left them (a sequential sampler or SGD pass), and evaluates after each.
///
/// # Panics
/// When the model names a row outside its own layout (a bug in the model, not bad input:
/// every model checks its data when built).
pub fn sequential_reference<M: TableModel>(model: &M, clocks: u64) -> SequentialReference {
    let k = model.row_len();
    let mut dense = model.initial_values(1);
    let mut local = model.local(0, 1);
    let mut losses = Vec::with_capacity(clocks as usize + 1);
    losses.push(model.evaluate(&dense).0);
    let part = 0..model.examples_per_clock(1);
    for clock in 0..clocks {
        let rows: Vec<RowKey> = model.rows(0, 1, clock, part.clone());
        let offsets: Vec<usize> = rows
            .iter()
            .map(|&r| model.offset(r).expect("the model's own rows"))
            .collect();
        let mut values = Vec::with_capacity(rows.len() * k);
        for &o in &offsets {
            values.extend_from_slice(&dense[o..o + k]);
        }
        model.compute(&mut local, &rows, &mut values, 0, 1, clock, part.clone());
        for (i, &o) in offsets.iter().enumerate() {
            dense[o..o + k].copy_from_slice(&values[i * k..(i + 1) * k]);
        }
        losses.push(model.evaluate(&dense).0);
    }
    let quarter = (losses.len() / 4).max(1);
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len().max(1) as f64;
    let n = losses.len();
    let level = mean(&losses[n - quarter..]);
    let before = mean(&losses[n.saturating_sub(2 * quarter)..n - quarter]);
    let room = (losses[0] - level).abs();
    let drift = if room > 0.0 {
        (level - before).abs() / room
    } else {
        0.0
    };
    SequentialReference {
        losses,
        level,
        drift,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::BagOfWordsShape;
    use crate::workload::{Lda, LdaConfig};

    #[test]
    fn a_long_gibbs_run_settles_below_its_start() {
        let corpus = BagOfWordsShape {
            documents: 120,
            vocabulary: 300,
            topics: 5,
            words_per_document: 50,
        }
        .generate(3);
        let cfg = LdaConfig {
            topics: 5,
            alpha: 0.1,
            beta: 0.01,
            minibatch_fraction: 0.5,
            init_seed: 5,
        };
        let lda = Lda::new(cfg, &corpus).unwrap();
        let r = sequential_reference(&lda, 120);
        assert_eq!(r.losses.len(), 121);
        assert!(
            r.level < r.losses[0] - 0.3,
            "{} vs {}",
            r.level,
            r.losses[0]
        );
        assert!(r.drift < 0.05, "still drifting: {}", r.drift);
        // Deterministic: the sampler's streams are seeded.
        assert_eq!(sequential_reference(&lda, 120), r);
    }
}
