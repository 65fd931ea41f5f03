//! essp-fig2-staleness: the distribution of the clock differential (parameter age - local
//! clock) at every read, for BSP, SSP(s) and ESSP(s), on matrix factorisation by SGD with 64
//! workers (ESSP §"Consistency Models for Parameter Servers", Fig 2 left).

use crate::harness::data_source::DataSource;
use crate::harness::experiment::{self, Experiment, NoArgs, Run};
use crate::harness::output::progress;
use crate::harness::parallel::map_runs;
use crate::judge::sensitivity::{self, Knob, KnobValue, Sensitivity};
use crate::workloads::mf::{MfExperimentConfig as Config, MfSensitivity};
use anyhow::{bail, Context, Result};
use bench_core::claims::Claim;
use bench_core::driver::DriverKind;
use bench_core::metrics::seconds;
use bench_core::metrics::RunRecords;
use bench_core::workload::ClockSteps;
use serde::Serialize;
use std::collections::BTreeMap;

const FIGURE: &str = "essp-fig2-staleness";

struct EsspFig2Staleness;

#[derive(Serialize)]
struct HistRow {
    driver: String,
    mode: String,
    staleness_bound: String,
    clock_differential: i64,
    count: u64,
    fraction: f64,
}

#[derive(Serialize)]
struct SummaryRow {
    driver: String,
    mode: String,
    reads: usize,
    mean_abs_differential: f64,
    fresh_mass: f64,
    min_differential: i64,
    final_squared_loss: f64,
    makespan_s: f64,
    bytes_total: u64,
}

struct Profile {
    counts: BTreeMap<i64, u64>,
    reads: usize,
}

impl Profile {
    /// The clock differential of every row read: the row's clock (it holds every worker's
    /// updates of clocks up to it) minus the reader's clock.
    fn of(r: &RunRecords) -> Self {
        let mut counts = BTreeMap::new();
        for x in &r.row_reads {
            *counts.entry(x.differential).or_default() += x.rows;
        }
        Profile {
            reads: counts.values().sum::<u64>() as usize,
            counts,
        }
    }
    fn mean_abs(&self) -> f64 {
        self.counts
            .iter()
            .map(|(d, c)| d.abs() as f64 * *c as f64)
            .sum::<f64>()
            / self.reads.max(1) as f64
    }
    /// Share of reads within one clock of fresh (differential -1 or -2).
    fn fresh_mass(&self) -> f64 {
        self.counts
            .iter()
            .filter(|(d, _)| **d >= -2)
            .map(|(_, c)| *c)
            .sum::<u64>() as f64
            / self.reads.max(1) as f64
    }
    fn min(&self) -> i64 {
        self.counts.keys().next().copied().unwrap_or(-1)
    }
}

impl Experiment for EsspFig2Staleness {
    const BINARY: &'static str = FIGURE;
    const ABOUT: &'static str = "Staleness profiles of SSP vs ESSP (ESSP Fig 2, left) on matrix factorisation over row-level parameter-server tables: the clock differential of every row read. Writes results/essp-fig2-staleness/: differential_hist.csv, summary.csv, per-run iterations.csv and progress.csv, claims.csv, manifest.json.";
    const QUICK: &'static str = include_str!("../../../configs/essp-fig2-staleness.quick.toml");
    const PAPER: &'static str = include_str!("../../../configs/essp-fig2-staleness.paper.toml");
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    type Config = Config;
    type Args = NoArgs;

    fn validate(cfg: &Config, _: &NoArgs, _: &[DriverKind]) -> Result<()> {
        if cfg.workers == 0 || cfg.clocks == 0 || cfg.staleness.is_empty() {
            bail!("workers, clocks and the staleness list must be non-empty");
        }
        cfg.modes()?;
        Ok(())
    }

    fn run(run: &mut Run<'_, Self>) -> Result<()> {
        let (cfg, seed, data) = (run.cfg, run.seed, run.data);
        let drivers = run.drivers.to_vec();
        let modes = cfg.modes()?;
        let tables = cfg.tables(seed, data)?;
        let out = run.out();
        let pb = progress((drivers.len() * modes.len()) as u64, FIGURE);
        let (mut hist, mut summary) = (Vec::new(), Vec::new());
        let mut headline = None;
        for &driver in &drivers {
            let mut profiles: BTreeMap<String, Profile> = BTreeMap::new();
            let recs = map_runs(driver == DriverKind::Sim, &modes, |&mode| {
                pb.set_message(format!("{} {}", driver.label(), mode.label()));
                let rec = cfg
                    .run(driver, mode, &tables, seed)
                    .with_context(|| format!("{} under {}", mode.label(), driver.label()))?;
                pb.inc(1);
                Ok(rec)
            })?;
            for (&mode, rec) in modes.iter().zip(recs) {
                let dir = format!("{}-{}", driver.label(), mode.label());
                out.csv(&format!("{dir}/iterations.csv"), &rec.iterations)?;
                out.csv(&format!("{dir}/progress.csv"), &rec.progress)?;
                let p = Profile::of(&rec);
                for (&d, &c) in &p.counts {
                    hist.push(HistRow {
                        driver: driver.label().into(),
                        mode: mode.label(),
                        staleness_bound: mode.bound().map_or("none".into(), |b| b.to_string()),
                        clock_differential: d,
                        count: c,
                        fraction: c as f64 / p.reads.max(1) as f64,
                    });
                }
                summary.push(SummaryRow {
                    driver: driver.label().into(),
                    mode: mode.label(),
                    reads: p.reads,
                    mean_abs_differential: p.mean_abs(),
                    fresh_mass: p.fresh_mass(),
                    min_differential: p.min(),
                    final_squared_loss: rec.progress.last().map_or(f64::NAN, |x| x.loss),
                    makespan_s: seconds(rec.makespan),
                    bytes_total: rec.bytes_sent.iter().sum(),
                });
                profiles.insert(mode.label(), p);
            }
            let derived = claims(driver, &cfg.staleness, &profiles);
            if driver == DriverKind::Sim {
                headline = Some(derived.clone());
            }
            for c in derived {
                out.claim(c);
            }
        }
        pb.finish_and_clear();
        out.csv("differential_hist.csv", &hist)?;
        out.csv("summary.csv", &summary)?;
        let mut notes = Vec::new();
        if let (Some(grid), Some(headline)) = (&cfg.sensitivity, headline) {
            if run.seed == run.common.seed {
                let s = sensitivity(cfg, grid, headline, seed, data)?;
                s.write(run.out())?;
                notes.push(format!(
                    "sensitivity.csv (first seed, sim driver): the claims re-derived at jitter_sigma in {:?}{}; verdicts that flip over the grid: {}",
                    grid.jitter_sigma,
                    if grid.whole_clock_reads { ", each with in-clock and whole-clock reads" } else { "" },
                    s.fragile_note()
                ));
            }
        }
        notes.extend([
            "one read per table row a worker reads at a clock (the users and items of its mini-batch); clock differential = the row's clock (it holds every worker's updates of clocks <= it) - the reader's clock; BSP reads -1".into(),
            format!("row tables sharded over {} server node(s); with more than one no node holds every row and final_squared_loss is NaN", cfg.shards),
            "matrix factorisation on synthetic Netflix-shaped ratings (low rank + noise, power-law items), partitioned over workers by user; squared loss on held-out ratings".into(),
            "fresh_mass = share of reads with clock differential >= -2 (within one clock of fresh)".into(),
            cfg.reads_note(),
        ]);
        run.notes(notes);
        Ok(())
    }
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<EsspFig2Staleness>()
}

/// A read granularity of the grid: a configuration's `steps_per_clock`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Reads(Option<u64>);

impl KnobValue for Reads {
    fn setting(&self) -> String {
        // `sensitivity` checks every value of the grid before it makes the points.
        ClockSteps::from_config(self.0).map_or_else(|e| e.to_string(), ClockSteps::label)
    }
}

/// The shape claims re-derived (sim driver) at every point of `grid`: jitter values x reads
/// (the configured ones and, with `whole_clock_reads`, a clock's rows all read when it
/// begins). The configured point is `headline`'s claims, not run again.
fn sensitivity(
    cfg: &Config,
    grid: &MfSensitivity,
    headline: Vec<Claim>,
    seed: u64,
    data: &DataSource,
) -> Result<Sensitivity> {
    let jitters = MfSensitivity::grid(&grid.jitter_sigma, cfg.stragglers.jitter_sigma);
    let mut reads = vec![Reads(cfg.steps_per_clock)];
    if grid.whole_clock_reads && cfg.steps_per_clock != Some(1) {
        reads.push(Reads(Some(1)));
    }
    let modes = cfg.modes()?;
    for r in &reads {
        ClockSteps::from_config(r.0)?;
    }
    let points = sensitivity::two_knob_points(
        Knob {
            name: "jitter_sigma",
            values: &jitters,
            configured: cfg.stragglers.jitter_sigma,
        },
        Knob {
            name: "steps_per_clock",
            values: &reads,
            configured: Reads(cfg.steps_per_clock),
        },
        false,
    );
    Sensitivity::sweep(
        "essp-fig2 sensitivity",
        true,
        points,
        &headline,
        |&(jitter, Reads(steps)), setting| {
            let mut c = cfg.clone();
            c.stragglers.jitter_sigma = jitter;
            c.steps_per_clock = steps;
            let tables = c.tables(seed, data)?;
            let mut profiles = BTreeMap::new();
            let recs = map_runs(true, &modes, |&mode| {
                c.run(DriverKind::Sim, mode, &tables, seed)
                    .with_context(|| format!("sensitivity run {} at {setting:?}", mode.label()))
            })?;
            for (&mode, rec) in modes.iter().zip(&recs) {
                profiles.insert(mode.label(), Profile::of(rec));
            }
            Ok(claims(DriverKind::Sim, &c.staleness, &profiles))
        },
    )
}

fn claims(driver: DriverKind, ss: &[i64], p: &BTreeMap<String, Profile>) -> Vec<Claim> {
    let mut out = Vec::new();
    let d = driver.label();
    let bsp = &p["bsp"];
    out.push(
        Claim::check(
            format!("{FIGURE}/{d}/bsp-minus-one"),
            "BSP: every read has clock differential -1",
            "always -1",
            format!("{:?} over {} reads", bsp.counts, bsp.reads),
            bsp.counts.keys().all(|&k| k == -1),
        )
        .with_value(*bsp.counts.get(&-1).unwrap_or(&0) as f64 / bsp.reads.max(1) as f64),
    );
    for &s in ss {
        let (ssp, essp) = (&p[&format!("ssp{s}")], &p[&format!("essp{s}")]);
        out.push(
            Claim::check(
                format!("{FIGURE}/{d}/essp-mean-below-ssp-s{s}"),
                format!("mean |clock differential| of ESSP below SSP's at s = {s}"),
                "ESSP concentrated near 0, SSP nearly uniform over the window",
                format!("ESSP {:.3} vs SSP {:.3}", essp.mean_abs(), ssp.mean_abs()),
                essp.mean_abs() < ssp.mean_abs(),
            )
            .with_value(essp.mean_abs() / ssp.mean_abs()),
        );
        let fresh = Claim::check(
            format!("{FIGURE}/{d}/essp-fresh-mass-s{s}"),
            format!("share of reads within one clock of fresh: ESSP >= SSP at s = {s}"),
            "ESSP mass near fresh >= SSP's",
            format!(
                "ESSP {:.3} vs SSP {:.3}",
                essp.fresh_mass(),
                ssp.fresh_mass()
            ),
            essp.fresh_mass() >= ssp.fresh_mass(),
        )
        .with_value(essp.fresh_mass() - ssp.fresh_mass());
        // The bound keeps every read at differential -(s + 1) or fresher, so at s <= 1 both
        // modes' reads are all within one clock of fresh.
        out.push(if s <= 1 {
            fresh.not_exercised(format!(
                "true by construction: the bound s = {s} keeps every read within {} clocks, \
                 so both shares are 1",
                s + 1
            ))
        } else {
            fresh
        });
        // The figure's visible shape, not only a mean (ESSP's Fig 2: under ESSP threads
        // "usually observe parameters with staleness 1", ESSP §"ESSPTable: An efficient ESSP
        // System"; SSP's reads spread over the window).
        let mode_of =
            |h: &BTreeMap<i64, u64>| h.iter().max_by_key(|(k, c)| (**c, **k)).map(|(k, _)| *k);
        let essp_mode = mode_of(&essp.counts);
        out.push(
            Claim::check(
                format!("{FIGURE}/{d}/essp-mode-at-minus-one-s{s}"),
                format!("ESSP's most frequent clock differential is -1 at s = {s}"),
                "ESSP's mass at -1 (staleness 1)",
                format!(
                    "ESSP's mode {}, holding {:.3} of its reads",
                    essp_mode.map_or("-".into(), |m| m.to_string()),
                    essp_mode.map_or(0.0, |m| essp.counts[&m] as f64 / essp.reads.max(1) as f64)
                ),
                essp_mode == Some(-1),
            )
            .with_value(*essp.counts.get(&-1).unwrap_or(&0) as f64 / essp.reads.max(1) as f64),
        );
        let floor = 0.5 / (s as f64 + 1.0);
        let shares = (-1 - s..=-1)
            .map(|k| {
                (
                    k,
                    *ssp.counts.get(&k).unwrap_or(&0) as f64 / ssp.reads.max(1) as f64,
                )
            })
            .collect::<Vec<_>>();
        // The thinnest bin's share: what is held against the floor.
        let thinnest = shares.iter().map(|&(_, f)| f).fold(f64::INFINITY, f64::min);
        let thin = shares
            .into_iter()
            .filter(|&(_, f)| f < floor)
            .collect::<Vec<_>>();
        out.push(
            Claim::check(
                format!("{FIGURE}/{d}/ssp-spread-over-window-s{s}"),
                format!(
                    "SSP's reads spread over the window: every differential in [{}, -1] holds at least half a uniform share ({floor:.3}) at s = {s}",
                    -1 - s
                ),
                "SSP nearly uniform over the window",
                if thin.is_empty() {
                    "every bin holds at least half a uniform share".to_string()
                } else {
                    format!("thin bins (differential, share): {thin:.3?}")
                },
                thin.is_empty(),
            )
            .with_value(thinnest),
        );
        // Both modes' bound (ESSP's reads wait on the same clock rule as SSP's), each
        // exercised only where some read reaches it.
        for (label, mode, h) in [("ssp", "SSP", ssp), ("essp", "ESSP", essp)] {
            let bound = Claim::check(
                format!("{FIGURE}/{d}/{label}-bound-s{s}"),
                format!(
                    "{mode} never reads staler than its bound s = {s} (differential >= {})",
                    -1 - s
                ),
                format!(">= {}", -1 - s),
                format!("min {}", h.min()),
                h.min() >= -1 - s,
            )
            .with_value(h.min() as f64);
            out.push(if h.min() > -1 - s {
                bound.not_exercised(format!(
                    "the bound never binds (no read staler than {})",
                    h.min()
                ))
            } else {
                bound
            });
        }
    }
    out
}
