//! sim-validation's receive-buffer part (`[torn]`): asap-fig7's reduce modes run under the
//! measuring driver (real concurrent one-sided copies, so real torn reads) and predicted by the
//! simulator's in-flight-write model, once over this machine's measured transport and copy
//! speed at each mode's measured pace and once over the configured network; the rows and the
//! two claims (share within a bound, modes in the measured order).

use super::{error, measure_network, NetworkRow, FIGURE};
use crate::runs::buffered::{run_buffered, run_every_mode, BufferedCommon, ModeRuns};
use anyhow::{bail, Result};
use bench_core::claims::Claim;
use bench_core::driver::buffered::BufferedRecords;
use bench_core::driver::DriverKind;
use bench_core::metrics::seconds;
use bench_core::protocol::buffered::ReduceSync;
use bench_core::transport::perf;
use serde::{Deserialize, Serialize};

/// `[torn]`: asap-fig7's setting (one-sided writes into single-slot receive buffers), run under
/// the measuring driver (threads or cluster: real concurrent copies, so real torn reads) and
/// predicted by the simulator's in-flight-write model.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TornPart {
    /// The receive-buffer setting, as asap-fig7's `[common]`. Its network and copy speed are
    /// the configuration-only prediction's; the measured prediction replaces them with this
    /// machine's transport (the measured runs') and copy speed, measured in the run.
    pub(super) common: BufferedCommon,
    /// Reduces with at least this many consistent inputs count as good (ASAP §6.2, Fig 7: 5 of 7).
    pub(super) good_inputs: usize,
    /// How far (percentage points) the measured-network prediction of each mode's share of
    /// good reduces may be from the measured run's: the bound the claim checks.
    pub(super) bound_points: f64,
}

/// One (mode, quantity) of the receive-buffer validation.
#[derive(Debug, Clone, Serialize)]
pub(super) struct TornRow {
    mode: &'static str,
    quantity: &'static str,
    measured: f64,
    /// The simulator over this machine's measured transport and copy speed.
    predicted: f64,
    predicted_error: f64,
    /// The simulator over the configured network (asap-fig7's own sim runs).
    config: f64,
    config_error: f64,
    /// `points` (predicted - measured, in percentage points, for shares) or `relative`
    /// ((predicted - measured) / measured).
    error_unit: &'static str,
}

/// What the receive-buffer validation measured and predicted.
pub(super) struct TornValidation {
    pub(super) rows: Vec<TornRow>,
    pub(super) network: NetworkRow,
    pub(super) copy_gbps: f64,
    /// Per mode, the computation per iteration the paced prediction modelled (ns).
    pub(super) paces: Vec<(&'static str, f64)>,
}

/// Reduces per second per peer.
fn reduce_rate(r: &BufferedRecords) -> f64 {
    let peers = r.bytes_sent.len().max(1) as f64;
    r.reduces.len() as f64 / peers / seconds(r.makespan.max(1))
}

/// asap-fig7's three reduce modes of `t` run under `driver` (every rank of a cluster job runs
/// them), with the graph and the workload they ran on.
pub(super) struct TornMeasured {
    runs: ModeRuns,
    topology: bench_core::topology::Topology,
    workload: std::sync::Arc<dyn bench_core::workload::Workload>,
}

/// Runs asap-fig7's three reduce modes of `t` under `driver`.
///
/// # Errors
/// A run that fails.
pub(super) fn measure_torn(
    t: &TornPart,
    driver: DriverKind,
    seed: u64,
    data: &crate::harness::data_source::DataSource,
    pb: &indicatif::ProgressBar,
) -> Result<TornMeasured> {
    let topology = t.common.topology(seed)?;
    let workload = t.common.workload(seed, data)?;
    let runs = run_every_mode(driver, &t.common, &topology, &workload, seed, pb)?;
    Ok(TornMeasured {
        runs,
        topology,
        workload,
    })
}

/// Predicts the measured receive-buffer runs with the simulator, over transport `backend` and
/// the copy speed measured here, and over the configured network.
///
/// # Errors
/// A measurement or simulation that fails.
pub(super) fn predict_torn(
    t: &TornPart,
    m: TornMeasured,
    backend: &str,
    probe_messages: usize,
    seed: u64,
    pb: &indicatif::ProgressBar,
) -> Result<TornValidation> {
    let TornMeasured {
        runs: measured,
        topology,
        workload,
    } = m;
    let words = bench_core::learning::payload_words(1, workload.dim());
    let (network, measured_net) = measure_network(backend, words, probe_messages)?;
    // Gbit/s to GB/s: the simulator charges a reduce bytes / copy_gbps ns per buffer read.
    let copy_gbps = perf::word_copy(words * 8, 200, 8).average / 8.0;
    let mut here = t.common.clone();
    here.network = measured_net;
    here.copy_gbps = copy_gbps;
    let config = run_every_mode(DriverKind::Sim, &t.common, &topology, &workload, seed, pb)?;
    // The prediction replays each mode's measured pace: a first simulation over the measured
    // transport gives the simulator's own time per iteration, and the modelled computation is
    // then raised (or lowered) by what the measured run took beyond it, so the in-flight-write
    // model is tested at the measured ratio of write time to iteration time (2 cores run 8
    // peers and their copies here; the simulator gives every peer a core).
    let batch = workload.batch_size(t.common.workers).max(1) as f64;
    let mut predicted = Vec::new();
    let mut paces = Vec::new();
    for mode in ReduceSync::ALL {
        pb.set_message(format!("{} simulated at the measured pace", mode.label()));
        let target = reduce_rate(measured.get(mode));
        if !(target.is_finite() && target > 0.0) {
            bail!(
                "torn: the measured {} run completed no reduce: no pace to simulate at",
                mode.label()
            );
        }
        // The iteration time the simulator gives grows with the modelled computation, but not
        // one for one (under BSP an iteration waits for the slowest of the jittered
        // computations): a first correction adds the measured time beyond the simulator's
        // own, then two secant steps on (computation, iteration time) take up the rest.
        let mut paced = here.clone();
        let mut run = run_buffered(DriverKind::Sim, &paced, &topology, mode, &workload, seed)?;
        let goal = 1e9 / target;
        let mut prev: Option<(f64, f64)> = None;
        for _ in 0..3 {
            let (c, t) = (paced.compute.ns_per_example, 1e9 / reduce_rate(&run));
            let slope = prev
                .map(|(pc, pt)| (t - pt) / ((c - pc) * batch))
                .filter(|k| k.is_finite() && *k > 0.0)
                .unwrap_or(1.0);
            prev = Some((c, t));
            paced.compute.ns_per_example = (c + (goal - t) / slope / batch).max(1.0);
            run = run_buffered(DriverKind::Sim, &paced, &topology, mode, &workload, seed)?;
        }
        paces.push((mode.label(), paced.compute.ns_per_example * batch));
        predicted.push((mode, run));
        pb.inc(4);
    }
    let predicted = ModeRuns(predicted);
    Ok(TornValidation {
        rows: torn_rows(t.good_inputs, &measured, &predicted, &config),
        network,
        copy_gbps,
        paces,
    })
}

/// Per mode: the share of reduces with every input consistent, with at least `good`, and the
/// reduces per second per peer, measured and predicted twice.
fn torn_rows(
    good: usize,
    measured: &ModeRuns,
    predicted: &ModeRuns,
    config: &ModeRuns,
) -> Vec<TornRow> {
    let mut rows = Vec::new();
    for mode in ReduceSync::ALL {
        let (m, p, c) = (measured.get(mode), predicted.get(mode), config.get(mode));
        for (quantity, unit) in [
            ("share_all_inputs", "points"),
            ("share_at_least_good", "points"),
            ("reduce_rate_hz", "relative"),
        ] {
            let value = |r: &BufferedRecords| match quantity {
                "share_all_inputs" => r.share_full(),
                "share_at_least_good" => r.share_at_least(good),
                _ => reduce_rate(r),
            };
            let (mv, pv, cv) = (value(m), value(p), value(c));
            let err = |x: f64| match unit {
                "points" => (x - mv) * 100.0,
                _ => error(Some(x), Some(mv)).unwrap_or(f64::NAN),
            };
            rows.push(TornRow {
                mode: mode.label(),
                quantity,
                measured: mv,
                predicted: pv,
                predicted_error: err(pv),
                config: cv,
                config_error: err(cv),
                error_unit: unit,
            });
        }
    }
    rows
}

/// The measured-network prediction of every mode's share of good reduces is within the bound.
pub(super) fn torn_share_claim(t: &TornPart, rows: &[TornRow]) -> Claim {
    let errs: Vec<(&str, f64)> = rows
        .iter()
        .filter(|r| r.quantity == "share_at_least_good")
        .map(|r| (r.mode, r.predicted_error))
        .collect();
    let worst = errs
        .iter()
        .copied()
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()));
    let statement = format!(
        "the simulator predicts each reduce mode's share of reduces with >= {} consistent inputs within {} points of the measured run",
        t.good_inputs, t.bound_points
    );
    let id = format!("{FIGURE}/torn-good-share-within-{}pts", t.bound_points);
    let paper = "not a paper claim: the in-flight-write model's accuracy against real concurrent copies on this machine (asap-fig7's setting)";
    let Some((mode, worst)) = worst else {
        return Claim::check(id, statement, paper, "no mode ran", false);
    };
    let detail = errs
        .iter()
        .map(|(m, e)| format!("{m} {e:+.1}"))
        .collect::<Vec<_>>()
        .join(", ");
    Claim::check(
        id,
        statement,
        paper,
        format!(
            "largest |error| {:.1} points ({mode}); {detail}",
            worst.abs()
        ),
        worst.abs() <= t.bound_points,
    )
    .with_value(worst.abs())
}

/// The simulator (measured network) ranks the reduce modes by their share of good reduces as the
/// run measured by `measured_by` (a driver) does: the qualitative result ASAP §6.2, Fig 7 rests on.
pub(super) fn torn_order_claim(good: usize, measured_by: &str, rows: &[TornRow]) -> Claim {
    let shares = |f: fn(&TornRow) -> f64| -> Vec<(&str, f64)> {
        rows.iter()
            .filter(|r| r.quantity == "share_at_least_good")
            .map(|r| (r.mode, f(r)))
            .collect()
    };
    let (m, p) = (shares(|r| r.measured), shares(|r| r.predicted));
    let order = |v: &[(&str, f64)]| {
        let mut v = v.to_vec();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        v.iter()
            .map(|x| format!("{} {:.1}%", x.0, x.1 * 100.0))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // Pairs the measured run separates by more than a point must come out the same way.
    let (mut agree, mut separated, mut agreeing) = (true, 0, 0);
    for (i, a) in m.iter().enumerate() {
        for (j, b) in m.iter().enumerate() {
            if (a.1 - b.1) > 0.01 {
                separated += 1;
                if p[i].1 <= p[j].1 {
                    agree = false;
                } else {
                    agreeing += 1;
                }
            }
        }
    }
    let statement = format!("the simulator orders the reduce modes by their share of reduces with >= {good} consistent inputs as the {measured_by} run does");
    let paper = "ASAP §6.2, Fig 7: NOTIFY-ACK > BSP > ASYNC";
    if separated == 0 {
        return Claim::not_applicable(
            format!("{FIGURE}/torn-order-agrees"),
            statement,
            paper,
            format!(
                "the {measured_by} run separates no two modes by more than a point ({}): no order to predict",
                order(&m)
            ),
        );
    }
    Claim::check(
        format!("{FIGURE}/torn-order-agrees"),
        statement,
        paper,
        format!("{measured_by}: {}; simulator: {}", order(&m), order(&p)),
        agree,
    )
    // The share of the separated pairs the simulator orders the same way.
    .with_value(agreeing as f64 / separated as f64)
}

#[cfg(test)]
mod tests {
    use super::super::{Config, SimValidation};
    use super::*;
    use crate::harness::experiment::Experiment;

    fn share(mode: &'static str, measured: f64, predicted: f64) -> TornRow {
        TornRow {
            mode,
            quantity: "share_at_least_good",
            measured,
            predicted,
            predicted_error: (predicted - measured) * 100.0,
            config: f64::NAN,
            config_error: f64::NAN,
            error_unit: "points",
        }
    }

    /// The order claim holds when every pair the threads run separates by more than a point
    /// comes out the same way in the simulator, and the share claim checks the largest error.
    #[test]
    fn torn_claims_read_the_shares() {
        use bench_core::claims::Verdict;
        let same = [
            share("notify-ack", 1.0, 1.0),
            share("bsp", 0.9, 0.85),
            share("async", 0.6, 0.7),
        ];
        assert_eq!(torn_order_claim(5, "threads", &same).verdict, Verdict::Pass);
        let swapped = [
            share("notify-ack", 1.0, 1.0),
            share("bsp", 0.9, 0.6),
            share("async", 0.6, 0.7),
        ];
        assert_eq!(
            torn_order_claim(5, "threads", &swapped).verdict,
            Verdict::Fail
        );
        // within a point in the measured run: either order is fine
        let close = [
            share("notify-ack", 1.0, 0.99),
            share("bsp", 0.995, 1.0),
            share("async", 0.8, 0.7),
        ];
        assert_eq!(
            torn_order_claim(5, "threads", &close).verdict,
            Verdict::Pass
        );
        // nothing separated: nothing to predict
        let flat = [share("notify-ack", 1.0, 0.9), share("bsp", 1.0, 1.0)];
        assert_eq!(
            torn_order_claim(5, "threads", &flat).verdict,
            Verdict::NotApplicable
        );
        let t = TornPart {
            common: toml::from_str::<Config>(SimValidation::QUICK)
                .unwrap()
                .torn
                .unwrap()
                .common,
            good_inputs: 5,
            bound_points: 10.0,
        };
        assert_eq!(torn_share_claim(&t, &same).verdict, Verdict::Pass);
        let c = torn_share_claim(&t, &swapped);
        assert_eq!(c.verdict, Verdict::Fail);
        assert!(
            c.measured_value.contains("30.0 points (bsp)"),
            "{}",
            c.measured_value
        );
    }
}
