//! The step-size sensitivity of the CDS convergence claims: every dataset's step scaled by each
//! factor of the grid, the claims re-derived on the simulator (factor 1 is the headline's).

use super::claims::conv_claims;
use super::*;
use crate::harness::cli::driver_tag;
use crate::harness::parallel::map_runs;
use crate::judge::sensitivity::Sensitivity;
use crate::workloads::least_squares::{mean_wait_ms, run_variant, variant_label, Variant};
use anyhow::Result;
use bench_core::claims::Claim;
use bench_core::driver::DriverKind;
use bench_core::workload::Method;

/// The grid's step factors, with the headline's 1, sorted, without repeats.
pub(super) fn scales(grid: &CdsSensitivity) -> Vec<f64> {
    crate::judge::sensitivity::grid(&grid.step_scale, 1.0)
}

/// The convergence claims re-derived (sim driver, `seed`) with every dataset's step scaled by
/// each factor of `grid`; factor 1 is `headline`'s claims, not run again.
pub(super) fn step_sensitivity(
    cfg: &CdsConfig,
    grid: &CdsSensitivity,
    method: Method,
    fig: &str,
    headline: &[Claim],
    seed: u64,
    drivers: &[DriverKind],
) -> Result<Sensitivity> {
    // Quick-scale twins: holding them all is cheap (the paper configurations have no grid).
    let data = cfg
        .datasets
        .iter()
        .map(|d| d.prepare(seed))
        .collect::<Result<Vec<_>>>()?;
    let grid_points = scales(grid)
        .into_iter()
        .map(|k| {
            let headline = (k - 1.0).abs() < f64::EPSILON;
            (vec![("step_scale", k.to_string())], headline, k)
        })
        .collect();
    let labels = (variant_label(method, true), variant_label(method, false));
    Sensitivity::sweep(
        &format!("{fig} sensitivity"),
        true,
        grid_points,
        headline,
        |&k, _| {
            let mut claims = Vec::new();
            for (ds, d) in cfg.datasets.iter().zip(&data) {
                let mut settings = ds.settings(method);
                settings.step *= k;
                let jobs: Vec<(f64, bool)> = cfg
                    .delays
                    .iter()
                    .flat_map(|&delay| [(delay, true), (delay, false)])
                    .collect();
                let runs = map_runs(true, &jobs, |&(delay, sync)| {
                    run_variant(
                        DriverKind::Sim,
                        &cfg.common,
                        d,
                        &settings,
                        Variant { method, sync },
                        &stragglers(cfg, delay),
                        seed,
                    )
                    .map(|r| Point {
                        time: r.time_to_loss(settings.target_relative_error * d.initial_error),
                        wait: mean_wait_ms(&r),
                    })
                })?;
                let mut runs = runs.into_iter();
                let points: Vec<(Point, Point)> = cfg
                    .delays
                    .iter()
                    .map(|_| {
                        let s = runs.next().expect("synchronous run");
                        let a = runs.next().expect("asynchronous run");
                        (s, a)
                    })
                    .collect();
                let tag = driver_tag(&d.name, "/", DriverKind::Sim, drivers);
                claims.extend(conv_claims(fig, &tag, cfg, &points, labels));
            }
            Ok(claims)
        },
    )
}
