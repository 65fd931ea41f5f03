//! The matrix's sensitivity grid: the headline claims re-derived over step sizes and jitter
//! (two knobs, from `judge::sensitivity::two_knob_points`).

use super::*;
use crate::harness::data_source::DataSource;
use crate::judge::sensitivity::{two_knob_points, Knob, KnobValue, Sensitivity, Setting};
use crate::studies::mode_matrix::learning::MatrixLearning;
use anyhow::Result;
use bench_core::claims::Claim;
use bench_core::driver::DriverKind;

/// A step size of the grid: the workload's configured one (`value` None) or another.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Step {
    pub(super) value: Option<f64>,
    pub(super) configured: f64,
}

impl KnobValue for Step {
    fn setting(&self) -> String {
        self.value.unwrap_or(self.configured).to_string()
    }
}

/// A jitter level of the grid: each pattern's own (None) or one set in every pattern at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Jitter(pub(super) Option<f64>);

impl KnobValue for Jitter {
    fn setting(&self) -> String {
        self.0.map_or("configured".to_string(), |j| j.to_string())
    }
}

/// The grid's points: every combination of the step sizes and jitter levels, or with
/// `one_at_a_time` each knob varied alone; the configured point (the headline) first.
pub(super) fn grid_points(
    configured: f64,
    grid: &Grid,
) -> Vec<(Setting<'static>, bool, (Step, Jitter))> {
    let step = |value| Step { value, configured };
    let mut steps = vec![step(None)];
    steps.extend(
        grid.eta0
            .iter()
            .filter(|&&e| e != configured)
            .map(|&e| step(Some(e))),
    );
    let mut jitters = vec![Jitter(None)];
    jitters.extend(grid.jitter_sigma.iter().map(|&j| Jitter(Some(j))));
    two_knob_points(
        Knob {
            name: "eta0",
            values: &steps,
            configured: step(None),
        },
        Knob {
            name: "jitter_sigma",
            values: &jitters,
            configured: Jitter(None),
        },
        grid.one_at_a_time,
    )
}

/// Re-derives the claims (simulator, first seed) at the grid's step sizes and jitter levels.
///
/// # Errors
/// Any run's error.
pub(super) fn sensitivity(
    cfg: &Config,
    learning: &MatrixLearning,
    grid: &Grid,
    headline: &[Claim],
    seed: u64,
    data: &DataSource,
) -> Result<Sensitivity> {
    let points = grid_points(learning.step(), grid);
    Sensitivity::sweep(
        "mode-matrix sensitivity",
        true,
        points,
        headline,
        |&(step, Jitter(jitter)), _| {
            let mut c = cfg.clone();
            let l = step
                .value
                .map_or_else(|| learning.clone(), |e| learning.with_step(e));
            if let Some(j) = jitter {
                for p in &mut c.patterns {
                    p.stragglers.jitter_sigma = j;
                }
            }
            let (workload, reference) = l.build(c.workers, seed, data)?;
            let mut o = Outcome::default();
            let on = Bench {
                workload: &workload,
                reference: reference.as_ref(),
                seed,
            };
            matrix(&c, DriverKind::Sim, &on, None, &mut o)?;
            Ok(o.claims)
        },
    )
}
