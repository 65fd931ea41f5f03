//! Compute-time perturbations: per-worker speed factors and seeded jitter.

mod production;
mod trace;

pub use production::ProductionStragglers;
pub use trace::{StragglerTrace, TraceReplay, TraceRow};

use crate::error::{CoreError, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};

/// A worker slowed down by a constant factor.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlowWorker {
    /// 0-based worker index.
    pub worker: usize,
    /// How many times slower than the others (>= 1 slows down, < 1 speeds up).
    pub factor: f64,
}

/// Per-worker multiplicative compute-time factors with log-normal jitter (default: none).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StragglerConfig {
    /// Workers slowed by a constant factor ("worker k is x times slower").
    #[serde(default)]
    pub slow: Vec<SlowWorker>,
    /// Sigma of the log-normal jitter applied to every computation (0 = none).
    #[serde(default)]
    pub jitter_sigma: f64,
    /// Production-cluster stragglers on top of the constant factors (ASYNC's PCS).
    #[serde(default)]
    pub production: Option<ProductionStragglers>,
    /// Hop's random slowdown: every computation of every worker is `factor` times slower with
    /// probability `probability` (default 1/n).
    #[serde(default)]
    pub random: Option<RandomSlowdown>,
    /// A recorded trace replayed as per-computation factors ([`TraceReplay`]).
    #[serde(default)]
    pub trace: Option<TraceReplay>,
}

/// Random slowdown (Hop §7.3.1: each worker 6x slower with probability 1/n per iteration).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomSlowdown {
    /// How many times slower a slowed computation is (> 0).
    pub factor: f64,
    /// Probability per computation, in [0, 1]; default 1 / workers.
    #[serde(default)]
    pub probability: Option<f64>,
}

impl StragglerConfig {
    /// Per-worker factors for `workers` workers.
    ///
    /// # Errors
    /// [`CoreError::Config`] for a worker index out of range or a non-positive factor; a trace
    /// that cannot be read or does not cover every worker.
    pub fn factors(&self, workers: usize) -> Result<Vec<f64>> {
        if let Some(t) = &self.trace {
            let trace = t.trace()?;
            if workers > 0 {
                trace.factors(workers - 1, t.unit_ns)?;
            }
        }
        self.constant_factors(workers)
    }

    fn constant_factors(&self, workers: usize) -> Result<Vec<f64>> {
        let mut f = vec![1.0; workers];
        for s in &self.slow {
            if s.worker >= workers {
                return Err(CoreError::Config(format!(
                    "straggler worker {} out of range: the run has workers 0..{}",
                    s.worker,
                    workers.saturating_sub(1)
                )));
            }
            if !(s.factor > 0.0 && s.factor.is_finite()) {
                return Err(CoreError::Config(format!(
                    "straggler factor for worker {} must be > 0, got {}",
                    s.worker, s.factor
                )));
            }
            f[s.worker] = s.factor;
        }
        if !(self.jitter_sigma >= 0.0 && self.jitter_sigma.is_finite()) {
            return Err(CoreError::out_of_range(
                "jitter_sigma",
                ">= 0",
                self.jitter_sigma,
            ));
        }
        Ok(f)
    }

    /// A sampler of per-iteration factors for one worker, seeded from the run seed.
    ///
    /// # Errors
    /// As [`StragglerConfig::factors`].
    pub fn sampler(&self, workers: usize, worker: usize, seed: u64) -> Result<StragglerSampler> {
        let base = self.constant_factors(workers)?[worker];
        let trace = match &self.trace {
            Some(t) => Some(t.trace()?.factors(worker, t.unit_ns)?),
            None => None,
        };
        let production = match &self.production {
            Some(p) => {
                p.validate()?;
                p.assignment(workers, seed)[worker].map(|range| (range, p.warmup_tasks))
            }
            None => None,
        };
        let random = match self.random {
            Some(r) => {
                let p = r.probability.unwrap_or(1.0 / workers.max(1) as f64);
                if !(r.factor > 0.0 && r.factor.is_finite() && (0.0..=1.0).contains(&p)) {
                    return Err(CoreError::Config(format!(
                        "random slowdown needs factor > 0 and probability in [0, 1], got {} and {p}",
                        r.factor
                    )));
                }
                Some((r.factor, p))
            }
            None => None,
        };
        Ok(StragglerSampler {
            base,
            trace,
            production,
            random,
            tasks: 0,
            jitter: if self.jitter_sigma > 0.0 {
                Some(LogNormal::new(0.0, self.jitter_sigma).expect("sigma checked"))
            } else {
                None
            },
            rng: ChaCha8Rng::seed_from_u64(
                seed ^ (0x9E37_79B9_7F4A_7C15u64.wrapping_mul(worker as u64 + 1)),
            ),
            step: 0,
            current: 1.0,
        })
    }
}

/// Draws the factor of each successive computation of one worker.
#[derive(Debug, Clone)]
pub struct StragglerSampler {
    base: f64,
    /// A replayed trace's factors for this worker, cycled.
    trace: Option<Vec<f64>>,
    /// PCS delay range and warm-up of this worker.
    production: Option<([f64; 2], u64)>,
    /// Random slowdown factor and probability.
    random: Option<(f64, f64)>,
    tasks: u64,
    jitter: Option<LogNormal<f64>>,
    rng: ChaCha8Rng,
    /// Steps of the current computation done, and its factor ([`Self::next_step_factor`]).
    step: u64,
    current: f64,
}

impl StragglerSampler {
    /// Factor for the next computation.
    pub fn next_factor(&mut self) -> f64 {
        let mut f = match &self.jitter {
            Some(j) => self.base * j.sample(&mut self.rng),
            None => self.base,
        };
        if let Some(([lo, hi], warmup)) = self.production {
            if self.tasks >= warmup {
                f *= 1.0
                    + if hi > lo {
                        self.rng.gen_range(lo..hi)
                    } else {
                        lo
                    };
            }
        }
        if let Some((factor, p)) = self.random {
            if self.rng.gen_bool(p) {
                f *= factor;
            }
        }
        if let Some(t) = &self.trace {
            f *= t[(self.tasks % t.len() as u64) as usize];
        }
        self.tasks += 1;
        f
    }

    /// Factor for the next of `steps` steps that make up one computation (a row-table clock's
    /// read-compute steps): one draw per computation, shared by its steps, so that splitting a
    /// computation does not average its slowdown away. With `steps` = 1, [`Self::next_factor`].
    pub fn next_step_factor(&mut self, steps: u64) -> f64 {
        if self.step == 0 {
            self.current = self.next_factor();
        }
        self.step = (self.step + 1) % steps.max(1);
        self.current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steps_of_one_computation_share_its_factor() {
        let c = StragglerConfig {
            slow: vec![],
            jitter_sigma: 0.5,
            production: None,
            random: None,
            trace: None,
        };
        let (mut whole, mut split) = (c.sampler(4, 1, 9).unwrap(), c.sampler(4, 1, 9).unwrap());
        for _ in 0..5 {
            let f = whole.next_factor();
            let steps: Vec<f64> = (0..3).map(|_| split.next_step_factor(3)).collect();
            assert_eq!(steps, vec![f; 3]);
        }
        let mut one = c.sampler(4, 1, 9).unwrap();
        let mut again = c.sampler(4, 1, 9).unwrap();
        for _ in 0..4 {
            assert_eq!(one.next_step_factor(1), again.next_factor());
        }
    }

    #[test]
    fn a_replayed_trace_multiplies_the_other_factors_and_cycles() {
        let rows = vec![
            TraceRow {
                worker: 0,
                iter: 0,
                compute_ns: 100,
                wait_ns: 0,
            },
            TraceRow {
                worker: 0,
                iter: 1,
                compute_ns: 300,
                wait_ns: 0,
            },
        ];
        let c = StragglerConfig {
            slow: vec![SlowWorker {
                worker: 0,
                factor: 2.0,
            }],
            trace: Some(TraceReplay::of(
                StragglerTrace::from_rows(rows, "t").unwrap(),
                "t",
                Some(100.0),
            )),
            ..StragglerConfig::default()
        };
        let mut s = c.sampler(1, 0, 1).unwrap();
        let f: Vec<f64> = (0..4).map(|_| s.next_factor()).collect();
        assert_eq!(f, vec![2.0, 6.0, 2.0, 6.0]);
        // the trace covers one worker: a run of two is refused up front
        let e = c.factors(2).unwrap_err().to_string();
        assert!(e.contains("the run has worker 1"), "{e}");
    }

    #[test]
    fn factors_and_errors() {
        let c = StragglerConfig {
            slow: vec![SlowWorker {
                worker: 2,
                factor: 2.0,
            }],
            jitter_sigma: 0.0,
            production: None,
            random: None,
            trace: None,
        };
        assert_eq!(c.factors(3).unwrap(), vec![1.0, 1.0, 2.0]);
        assert!(c
            .factors(2)
            .unwrap_err()
            .to_string()
            .contains("out of range"));
        let mut s = c.sampler(3, 2, 1).unwrap();
        assert_eq!(s.next_factor(), 2.0);
        let j = StragglerConfig {
            slow: vec![],
            jitter_sigma: 0.2,
            production: None,
            random: None,
            trace: None,
        };
        let a: Vec<f64> = (0..5)
            .map(|_| 0.0)
            .scan(j.sampler(3, 0, 9).unwrap(), |s, _| Some(s.next_factor()))
            .collect();
        let b: Vec<f64> = (0..5)
            .map(|_| 0.0)
            .scan(j.sampler(3, 0, 9).unwrap(), |s, _| Some(s.next_factor()))
            .collect();
        assert_eq!(a, b);
        assert!(a.iter().any(|&x| x != 1.0));
        let r = StragglerConfig {
            slow: vec![],
            jitter_sigma: 0.0,
            production: None,
            random: Some(RandomSlowdown {
                factor: 6.0,
                probability: None,
            }),
            trace: None,
        };
        let mut s = r.sampler(4, 0, 3).unwrap();
        let f: Vec<f64> = (0..4000).map(|_| s.next_factor()).collect();
        assert!(f.iter().all(|&x| x == 1.0 || x == 6.0));
        let slowed = f.iter().filter(|&&x| x == 6.0).count();
        assert!((800..1200).contains(&slowed), "about 1/4 slowed: {slowed}");
    }
}
