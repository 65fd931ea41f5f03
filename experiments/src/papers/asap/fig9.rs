//! asap-fig9: SVM on a webspam twin with 25 peers on the root expander, NOTIFY-ACK vs BSP vs
//! ASYNC over receive buffers (ASAP §6.2, Fig 9): time to an optimum-relative loss target (half
//! way from the initial held-out loss to the reference optimum's).

use crate::harness::experiment::{self, Experiment, NoArgs, Run};
use crate::harness::output::progress;
use crate::judge::claim_id::ClaimId;
use crate::judge::comparison::{Allows, PaperComparison, DEFAULT_TOLERANCE};
use crate::judge::format::show;
use crate::judge::sensitivity::{self, Knob, Sensitivity};
use crate::judge::time_to_target::TimeToTarget;
use crate::judge::verdict::{Judge, Judged};
use crate::runs::buffered::{run_every_mode, AsyncKnobs, BufferedCommon, ModeRuns};
use bench_core::claims::Claim;
use bench_core::driver::DriverKind;
use bench_core::metrics::seconds;
use bench_core::protocol::buffered::ReduceSync;
use bench_core::topology::Topology;
use bench_core::workload::Workload;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

const FIGURE: &str = "asap-fig9";

struct AsapFig9;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    common: BufferedCommon,
    /// The knobs the verdicts are re-derived over (sensitivity.csv; first seed, sim driver).
    #[serde(default)]
    sensitivity: Option<Grid>,
}

/// `[sensitivity]`: knobs the ASAP paper does not pin down for Fig 9, each a list of values tried
/// besides the configured one (the grid is their product).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Grid {
    /// Log-normal sigma of the per-iteration compute noise: how far the peers drift apart, which
    /// a global barrier pays for and NOTIFY-ACK's per-neighbour waits do not.
    #[serde(default)]
    jitter_sigma: Vec<f64>,
    /// NIC bandwidths (Gbit/s): how much of an iteration is communication.
    #[serde(default)]
    bandwidth_gbps: Vec<f64>,
    /// ASYNC's model (`[sensitivity.asynchrony]`): averaging torn buffers, starting apart;
    /// tried at the configured jitter and bandwidth.
    #[serde(default)]
    asynchrony: AsyncKnobs,
}

#[derive(Serialize)]
struct SummaryRow {
    driver: &'static str,
    mode: &'static str,
    seconds: f64,
    seconds_to_target: String,
    target_loss: f64,
    best_loss: f64,
    final_loss: f64,
    final_accuracy: f64,
    share_all_inputs: f64,
    iterations_per_second: f64,
}

#[derive(Serialize)]
struct CurveRow {
    driver: &'static str,
    mode: &'static str,
    time: f64,
    iteration: f64,
    loss: f64,
}

impl Experiment for AsapFig9 {
    const BINARY: &'static str = FIGURE;
    const ABOUT: &'static str = "ASAP Fig 9: 25 peers on the root expander train SVM (hinge loss) on a webspam twin; each reduce averages the whole buffers of its in-neighbours under NOTIFY-ACK, BSP (global barrier) or ASYNC. The target is 90% of the way from the initial held-out loss to the reference optimum's: the near-optimum line (with real data: the larger of NOTIFY-ACK's and BSP's final losses); the claims compare when each reaches it and whether ASYNC does. Writes results/asap-fig9/: summary.csv, curves.csv, claims.csv, manifest.json.";
    const QUICK: &'static str = include_str!("../../../configs/asap-fig9.quick.toml");
    const PAPER: &'static str = include_str!("../../../configs/asap-fig9.paper.toml");
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    type Config = Config;
    type Args = NoArgs;

    fn validate(cfg: &Config, _: &NoArgs, _: &[DriverKind]) -> anyhow::Result<()> {
        cfg.common.validate()?;
        cfg.common.svm_setup()?;
        Ok(())
    }

    fn run(run: &mut Run<'_, Self>) -> anyhow::Result<()> {
        let (cfg, seed, data) = (run.cfg, run.seed, run.data);
        let drivers = run.drivers.to_vec();
        let c = &cfg.common;
        let topology = c.topology(seed)?;
        let workload = c.workload(seed, data)?;
        let (twin, svm) = c.svm_setup()?;
        let reference = twin.reference(svm, seed, data);
        let out = run.out();
        let pb = progress((drivers.len() * ReduceSync::ALL.len()) as u64, FIGURE);
        let (mut summary, mut curves) = (Vec::new(), Vec::new());
        let mut ref_rows = Vec::new();
        let mut way_rows = Vec::new();
        let mut target_notes: Vec<String> = Vec::new();
        let mut headline = None;
        let judge = Judge::new(reference.as_ref());
        for &driver in &drivers {
            let runs = run_every_mode(driver, c, &topology, &workload, seed, &pb)?;
            let judged = judge_runs(judge, &runs);
            let target = judged.target;
            if !target_notes.contains(&judged.rule) {
                target_notes.push(judged.rule.clone());
            }
            for (mode, r) in &runs.0 {
                let last = r.progress.last();
                summary.push(SummaryRow {
                    driver: driver.label(),
                    mode: mode.label(),
                    seconds: seconds(r.makespan),
                    seconds_to_target: show(r.time_to_loss(target)),
                    target_loss: target,
                    best_loss: r.progress.iter().map(|p| p.loss).fold(f64::NAN, f64::min),
                    final_loss: last.map_or(f64::NAN, |p| p.loss),
                    final_accuracy: last.map_or(f64::NAN, |p| p.accuracy),
                    share_all_inputs: r.share_full(),
                    iterations_per_second: c.iterations as f64 / seconds(r.makespan),
                });
                for p in &r.progress {
                    curves.push(CurveRow {
                        driver: driver.label(),
                        mode: mode.label(),
                        time: p.time,
                        iteration: p.iteration,
                        loss: p.loss,
                    });
                }
            }
            let tag = driver.label();
            ref_rows.extend(judged.reference_rows(tag));
            way_rows.extend(judged.way_rows(tag));
            out.claim(
                judged
                    .near_optimum_claim(ClaimId::new(FIGURE, tag, "best-run-near-optimum").into()),
            );
            let claims = mode_claims(tag, &judged, &runs);
            if driver == DriverKind::Sim {
                headline = Some(claims.clone());
            }
            for claim in claims {
                out.claim(claim);
            }
        }
        pb.finish_and_clear();
        out.csv("summary.csv", &summary)?;
        out.csv("curves.csv", &curves)?;
        out.csv("reference.csv", &ref_rows)?;
        out.csv("ways.csv", &way_rows)?;
        let mut notes: Vec<String> = reference.iter().map(|r| r.note("svm")).collect();
        notes.extend(target_notes);
        notes.push(format!(
            "{} peers on {}, {} iterations each, SVM ({:?} loss, eta0 {}) on a webspam twin of {} features; peer 0 evaluated every {} of its iterations; reduces average only whole buffers (header = footer)",
            c.workers,
            topology.name(),
            c.iterations,
            svm.loss,
            svm.eta0,
            twin.features,
            c.eval_every
        ));
        if let (Some(grid), Some(headline)) = (&cfg.sensitivity, headline) {
            if seed == run.common.seed {
                let on = Fixed {
                    topology: &topology,
                    workload: &workload,
                    seed,
                    judge,
                };
                let s = sensitivity(cfg, grid, &headline, &on)?;
                s.write(run.out())?;
                notes.push(format!(
                    "sensitivity.csv (first seed, sim driver): the claims re-derived at jitter_sigma in {:?} x bandwidth_gbps in {:?} (besides the configured {} and {}), and at the configured ones with ASYNC averaging {:?} buffers and peers starting within {:?} ns of each other (configured: {}, {} ns); verdicts that flip over the grid: {}",
                    grid.jitter_sigma,
                    grid.bandwidth_gbps,
                    c.jitter_sigma,
                    c.network.bandwidth_gbps,
                    grid.asynchrony.async_reads.iter().map(|r| r.label()).collect::<Vec<_>>(),
                    grid.asynchrony.start_spread_ns,
                    c.async_reads.label(),
                    c.start_spread_ns,
                    s.fragile_note()
                ));
            }
        }
        run.notes(notes);
        Ok(())
    }
}

/// The runs read against the target NOTIFY-ACK's and BSP's curves decide; ASYNC is asked
/// whether it gets there at all.
fn judge_runs<'a, 'r>(judge: Judge<'a>, runs: &'r ModeRuns) -> Judged<'a, 'r, &'static str> {
    judge.judge_by(
        runs.0.iter().map(|(m, r)| (m.label(), &r.progress[..])),
        |&m| m != ReduceSync::Async.label(),
    )
}

/// ASAP's Fig 9 statement on NOTIFY-ACK against BSP: faster, so NOTIFY-ACK's time to the
/// target better than BSP's by more than the default tolerance (the claim checks the direction,
/// not the "3X").
const FASTER_THAN_BSP: PaperComparison = PaperComparison {
    quote: "We find that using fine-grained NOTIFY-ACK improves the convergence performance and is about 3X faster than BSP for the webspam dataset",
    source: "ASAP §6.2, Fig 9",
    allows: Allows::Better,
    tolerance: DEFAULT_TOLERANCE,
};

/// The figure's claims on one driver's runs (`tag` names the driver), against the target.
fn mode_claims(tag: &str, judged: &Judged<'_, '_, &'static str>, runs: &ModeRuns) -> Vec<Claim> {
    let target = judged.target;
    let (_, _, asy) = runs.trio();
    let mut claims = vec![judged.every_run_reaches_claim(
        ClaimId::new(FIGURE, tag, "notify-ack-and-bsp-reach-target").into(),
    )];
    let ta = judged.seconds_to_target(&ReduceSync::Async.label());
    // Three outcomes, as the paper words it: "faster" is better by more than the tolerance.
    claims.extend(
        judged.time_claims(
            TimeToTarget::new(
                ClaimId::new(FIGURE, tag, "notify-ack-before-bsp"),
                &FASTER_THAN_BSP,
                ReduceSync::NotifyAck.label(),
                ReduceSync::Bsp.label(),
            )
            .stated(format!(
                "under {tag}, NOTIFY-ACK reaches loss {target:.4} {}",
                FASTER_THAN_BSP.before("BSP")
            )),
        ),
    );
    let async_best = asy.progress.iter().map(|p| p.loss).fold(f64::NAN, f64::min);
    claims.push(
        Claim::check(
            ClaimId::new(FIGURE, tag, "async-misses-target"),
            format!("under {tag}, ASYNC never reaches loss {target:.4}"),
            "ASYNC does not converge to the correct value",
            format!(
                "ASYNC best loss {:.4}, reaches the target at {} s; {:.0}% of its reduces had every input",
                async_best,
                show(ta),
                100.0 * asy.share_full()
            ),
            ta.is_none(),
        )
        // ASYNC's best loss over the target (above 1: it never got there).
        .with_value(async_best / target),
    );
    claims
}

/// What every point of the sensitivity grid runs on, whatever the knobs.
struct Fixed<'a> {
    topology: &'a Topology,
    workload: &'a Arc<dyn Workload>,
    seed: u64,
    judge: Judge<'a>,
}

/// The claims re-derived over `grid` under the sim driver: jitter x bandwidth at the configured
/// ASYNC model, then ASYNC's knobs (what it averages, how far apart the peers start) at the
/// configured jitter and bandwidth; the configured point is `headline`'s claims, not run again.
///
/// # Errors
/// Any error of the runs.
fn sensitivity(
    cfg: &Config,
    grid: &Grid,
    headline: &[Claim],
    on: &Fixed<'_>,
) -> anyhow::Result<Sensitivity> {
    let c = &cfg.common;
    let jitters = sensitivity::grid(&grid.jitter_sigma, c.jitter_sigma);
    let bandwidths = sensitivity::grid(&grid.bandwidth_gbps, c.network.bandwidth_gbps);
    let mut points: Vec<(sensitivity::Setting<'static>, bool, BufferedCommon)> =
        sensitivity::two_knob_points(
            Knob {
                name: "jitter_sigma",
                values: &jitters,
                configured: c.jitter_sigma,
            },
            Knob {
                name: "bandwidth_gbps",
                values: &bandwidths,
                configured: c.network.bandwidth_gbps,
            },
            false,
        )
        .into_iter()
        .map(|(mut setting, home, (jitter, bandwidth))| {
            let mut at = c.clone();
            at.jitter_sigma = jitter;
            at.network.bandwidth_gbps = bandwidth;
            setting.extend(AsyncKnobs::setting(&at));
            (setting, home, at)
        })
        .collect();
    for (knobs, at) in grid.asynchrony.points(c) {
        let mut setting = vec![
            ("jitter_sigma", c.jitter_sigma.to_string()),
            ("bandwidth_gbps", c.network.bandwidth_gbps.to_string()),
        ];
        setting.extend(knobs);
        points.push((setting, false, at));
    }
    Sensitivity::sweep("asap-fig9 sensitivity", true, points, headline, |at, _| {
        let hidden = indicatif::ProgressBar::hidden();
        let runs = run_every_mode(
            DriverKind::Sim,
            at,
            on.topology,
            on.workload,
            on.seed,
            &hidden,
        )?;
        Ok(mode_claims("sim", &judge_runs(on.judge, &runs), &runs))
    })
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<AsapFig9>()
}
