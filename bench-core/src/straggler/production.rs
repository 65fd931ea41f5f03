//! Production-cluster stragglers (PCS, ASYNC §6.3): a share of the workers straggle, most
//! of them moderately and the rest with long-tail delays, drawn per task from a fixed seed.

use crate::error::{CoreError, Result};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The PCS pattern. A straggling task takes `1 + delay` times as long, where `delay` is drawn
/// uniformly from the worker's range for every task after its first `warmup_tasks` (ASYNC's
/// Spark code sleeps `coeff x average task time` once a warm-up has passed).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProductionStragglers {
    /// Share of workers that straggle (paper: 0.25).
    pub share: f64,
    /// Share of the stragglers with long-tail delays (paper: 0.2).
    pub long_tail_share: f64,
    /// Delay range of moderate stragglers, in multiples of the task time (paper: 1.5-2.5).
    pub moderate: [f64; 2],
    /// Delay range of long-tail stragglers (paper: 2.5-10).
    pub long_tail: [f64; 2],
    /// Tasks each worker runs before its delays start.
    #[serde(default)]
    pub warmup_tasks: u64,
}

impl ProductionStragglers {
    /// The paper's pattern with no warm-up.
    pub fn paper() -> Self {
        ProductionStragglers {
            share: 0.25,
            long_tail_share: 0.2,
            moderate: [1.5, 2.5],
            long_tail: [2.5, 10.0],
            warmup_tasks: 0,
        }
    }

    /// Checks shares and ranges.
    ///
    /// # Errors
    /// [`CoreError::Config`] naming the bad field.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("share", self.share),
            ("long_tail_share", self.long_tail_share),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(CoreError::Config(format!(
                    "production stragglers: {name} must be in [0, 1], got {v}"
                )));
            }
        }
        for (name, [lo, hi]) in [("moderate", self.moderate), ("long_tail", self.long_tail)] {
            if !(lo >= 0.0 && hi >= lo && hi.is_finite()) {
                return Err(CoreError::Config(format!(
                    "production stragglers: {name} must be a range 0 <= lo <= hi, got [{lo}, {hi}]"
                )));
            }
        }
        Ok(())
    }

    /// Per worker, its delay range (None: not a straggler). With P workers,
    /// `round(share * P)` straggle, `round(long_tail_share * stragglers)` of them long-tail,
    /// chosen by a seeded shuffle (32 workers: 6 moderate and 2 long-tail, as the paper).
    pub fn assignment(&self, workers: usize, seed: u64) -> Vec<Option<[f64; 2]>> {
        let mut order: Vec<usize> = (0..workers).collect();
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed ^ 0x5043_5300_5043_5300));
        let stragglers = (self.share * workers as f64).round() as usize;
        let long = (self.long_tail_share * stragglers as f64).round() as usize;
        let mut out = vec![None; workers];
        for (i, &w) in order.iter().take(stragglers).enumerate() {
            out[w] = Some(if i < long {
                self.long_tail
            } else {
                self.moderate
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_split_for_32_workers() {
        let p = ProductionStragglers::paper();
        let a = p.assignment(32, 7);
        assert_eq!(a, p.assignment(32, 7));
        let long = a.iter().filter(|r| **r == Some([2.5, 10.0])).count();
        let moderate = a.iter().filter(|r| **r == Some([1.5, 2.5])).count();
        assert_eq!((moderate, long), (6, 2));
        assert!(p.validate().is_ok());
        let bad = ProductionStragglers { share: 1.5, ..p };
        assert!(bad.validate().unwrap_err().to_string().contains("share"));
    }

    #[test]
    fn delays_start_after_the_warm_up() {
        let cfg = crate::straggler::StragglerConfig {
            slow: vec![],
            jitter_sigma: 0.0,
            production: Some(ProductionStragglers {
                share: 1.0,
                long_tail_share: 0.0,
                warmup_tasks: 2,
                ..ProductionStragglers::paper()
            }),
            random: None,
            trace: None,
        };
        let mut s = cfg.sampler(4, 1, 3).unwrap();
        let f: Vec<f64> = (0..50).map(|_| s.next_factor()).collect();
        assert_eq!(&f[..2], &[1.0, 1.0]);
        assert!(f[2..].iter().all(|x| (2.5..3.5).contains(x)), "{f:?}");
        assert!(f[2..].iter().any(|&x| x != f[2]), "drawn per task");
    }
}
