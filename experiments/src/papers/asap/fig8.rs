//! asap-fig8: NOTIFY-ACK, BSP and ASYNC training ASAP's VGG on CIFAR-10 with 8 peers
//! all-reduce over single-slot receive buffers (ASAP §6.2, Fig 8): throughput in images per
//! second and time to the training-accuracy target. Needs the `cnn` feature; a build without it
//! writes the claims as not applicable, saying why.

use crate::harness::experiment::{self, Experiment, NoArgs, Run};
use crate::harness::output::progress;
use crate::judge::comparison::{Allows, PaperComparison, DEFAULT_TOLERANCE};
use crate::runs::buffered::{run_every_mode, BufferedCommon};
use crate::workloads::cnn::ImageData;
use anyhow::bail;
use bench_core::claims::Claim;
use bench_core::driver::buffered::BufferedRecords;
use bench_core::driver::DriverKind;
use bench_core::metrics::seconds;
use bench_core::protocol::buffered::ReduceSync;
use bench_core::workload::CnnConfig;
use serde::{Deserialize, Serialize};

const FIGURE: &str = "asap-fig8";

struct AsapFig8;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// Peers, graph, iterations, compute and network models (no `data` or `svm`).
    common: BufferedCommon,
    /// Time to this accuracy on training images is compared (the paper: 0.99).
    target_train_accuracy: f64,
    images: ImageData,
    cnn: CnnConfig,
}

#[derive(Serialize)]
struct SummaryRow {
    driver: &'static str,
    mode: &'static str,
    images_per_s: f64,
    seconds_to_target: String,
    target_train_accuracy: f64,
    best_train_accuracy: f64,
    final_loss: f64,
    share_all_inputs: f64,
    seconds: f64,
}

#[derive(Serialize)]
struct CurveRow {
    driver: &'static str,
    mode: &'static str,
    time: f64,
    iteration: f64,
    loss: f64,
    accuracy: f64,
}

/// Images every peer processed, per second of the run.
fn images_per_s(r: &BufferedRecords, c: &BufferedCommon, batch: usize) -> f64 {
    let images = (c.workers as u64 * c.iterations) as f64 * batch as f64;
    images / seconds(r.makespan).max(1e-12)
}

/// First evaluation at or above `acc`, seconds.
fn time_to_accuracy(r: &BufferedRecords, acc: f64) -> Option<f64> {
    r.progress
        .iter()
        .find(|p| p.accuracy >= acc)
        .map(|p| p.time)
}

fn show(v: Option<f64>) -> String {
    v.map_or("never".into(), |x| format!("{x:.3}"))
}

const CLAIMS: [(&str, &str, &str); 2] = [
    (
        "throughput-order",
        "VGG on CIFAR-10, 8 peers all-reduce: throughput ASYNC > NOTIFY-ACK > BSP (ASYNC above NOTIFY-ACK by more than 5%)",
        "229.3 (NA), 217.8 (BSP), 246 (ASYNC) images/s",
    ),
    (
        "notify-ack-before-bsp",
        "VGG on CIFAR-10: NOTIFY-ACK reaches the training-accuracy target before BSP; ASYNC last or never (each 'before' by more than 5% of the later one's time)",
        "NA converges fastest, ASYNC worst (99% training accuracy)",
    ),
];

/// ASAP's Fig 8 statement on NOTIFY-ACK against BSP and ASYNC: superior convergence, so
/// NOTIFY-ACK's time to the target better than each one's by more than the default tolerance.
const SUPERIOR_CONVERGENCE: PaperComparison = PaperComparison {
    quote: "We find that `NOTIFY-ACK` provides superior convergence over `BSP` and `ASYNC`",
    source: "ASAP §6.2, Fig 8",
    allows: Allows::Better,
    tolerance: DEFAULT_TOLERANCE,
};

/// ASAP's Fig 8 statement on ASYNC: the highest throughput but poor convergence, so ASYNC's
/// seconds per image better than NOTIFY-ACK's (the next) by more than the default tolerance
/// (the paper's 246 against 229.3 images/s is 7.3% more), and BSP's time to the target better
/// than ASYNC's by more than the default tolerance (ASYNC last). NOTIFY-ACK above BSP has the
/// paper's numbers only (229.3 against 217.8), no words, and stays a strict order.
const ASYNC_POOR: PaperComparison = PaperComparison {
    quote: "Finally, we find that even though ASYNC achieves the highest throughput of 246 fps, Figure 8 shows that the actual convergence is poor",
    source: "ASAP §6.2, Fig 8",
    allows: Allows::Better,
    tolerance: DEFAULT_TOLERANCE,
};

/// Claim `i`'s paper value: its text and the statements it reads.
fn paper_value(i: usize) -> String {
    match i {
        0 => format!("{}; {}", CLAIMS[0].2, ASYNC_POOR.cite()),
        1 => format!(
            "{}; {}; {}",
            CLAIMS[1].2,
            SUPERIOR_CONVERGENCE.cite(),
            ASYNC_POOR.cite()
        ),
        _ => CLAIMS[i].2.to_string(),
    }
}

impl Experiment for AsapFig8 {
    const BINARY: &'static str = FIGURE;
    const ABOUT: &'static str = "ASAP Fig 8: 8 peers all-reduce (in-degree 7) train a VGG-11 on CIFAR-10 (a seeded twin at quick scale) with single-slot receive buffers under NOTIFY-ACK, BSP and ASYNC: images/s and time to the training-accuracy target. Needs the cnn feature (`make fig-asap-fig8 CNN=1`); without it the claims are written as not applicable. Writes results/asap-fig8/: summary.csv, curves.csv, claims.csv, manifest.json.";
    const QUICK: &'static str = include_str!("../../../configs/asap-fig8.quick.toml");
    const PAPER: &'static str = include_str!("../../../configs/asap-fig8.paper.toml");
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    type Config = Config;
    type Args = NoArgs;

    fn validate(cfg: &Config, _: &NoArgs, _: &[DriverKind]) -> anyhow::Result<()> {
        cfg.common.validate()?;
        cfg.cnn.validate()?;
        cfg.images.validate()?;
        if !cfg.images.evaluate_on_training {
            bail!("asap-fig8 compares training accuracy: set images.evaluate_on_training = true");
        }
        if cfg.common.data.is_some() || cfg.common.svm.is_some() {
            bail!(
                "asap-fig8 trains its CNN ([images], [cnn]): remove [common.data] and [common.svm]"
            );
        }
        if !(cfg.target_train_accuracy > 0.0 && cfg.target_train_accuracy <= 1.0) {
            bail!(
                "target_train_accuracy must be in (0, 1], got {}",
                cfg.target_train_accuracy
            );
        }
        Ok(())
    }

    fn run(run: &mut Run<'_, Self>) -> anyhow::Result<()> {
        let (cfg, seed, data) = (run.cfg, run.seed, run.data);
        let c = &cfg.common;
        let workload = match cfg.images.workload(&cfg.cnn, seed, data) {
            Ok(w) => w,
            Err(e) if !cfg!(feature = "cnn") => {
                let drivers = run.drivers.to_vec();
                for driver in drivers {
                    for (i, (id, statement, _)) in CLAIMS.into_iter().enumerate() {
                        run.out().claim(Claim::not_applicable(
                            format!("{FIGURE}/{}/{id}", driver.label()),
                            format!("under {}: {statement}", driver.label()),
                            paper_value(i),
                            "this build has no CNN support (make fig-asap-fig8 CNN=1)",
                        ));
                    }
                }
                run.notes([format!("not run: {e}")]);
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let drivers = run.drivers.to_vec();
        let topology = c.topology(seed)?;
        let target = cfg.target_train_accuracy;
        let pb = progress((drivers.len() * ReduceSync::ALL.len()) as u64, FIGURE);
        let (mut summary, mut curves) = (Vec::new(), Vec::new());
        for &driver in &drivers {
            let runs = run_every_mode(driver, c, &topology, &workload, seed, &pb)?;
            for (mode, r) in &runs.0 {
                summary.push(SummaryRow {
                    driver: driver.label(),
                    mode: mode.label(),
                    images_per_s: images_per_s(r, c, cfg.cnn.batch),
                    seconds_to_target: show(time_to_accuracy(r, target)),
                    target_train_accuracy: target,
                    best_train_accuracy: r
                        .progress
                        .iter()
                        .map(|p| p.accuracy)
                        .fold(f64::NAN, f64::max),
                    final_loss: r.progress.last().map_or(f64::NAN, |p| p.loss),
                    share_all_inputs: r.share_full(),
                    seconds: seconds(r.makespan),
                });
                curves.extend(r.progress.iter().map(|p| CurveRow {
                    driver: driver.label(),
                    mode: mode.label(),
                    time: p.time,
                    iteration: p.iteration,
                    loss: p.loss,
                    accuracy: p.accuracy,
                }));
            }
            let (na, bsp, asy) = runs.trio();
            let tag = driver.label();
            let rate = |r| images_per_s(r, c, cfg.cnn.batch);
            let (rn, rb, ra) = (rate(na), rate(bsp), rate(asy));
            // ASYNC's "highest" three ways, read as seconds per image (lower better).
            let (async_highest, how) = ASYNC_POOR.judge(Some(1.0 / ra), Some(1.0 / rn));
            run.out().claim(
                Claim::check(
                    format!("{FIGURE}/{tag}/{}", CLAIMS[0].0),
                    format!("under {tag}: {}", CLAIMS[0].1),
                    paper_value(0),
                    format!("ASYNC {ra:.1}, NOTIFY-ACK {rn:.1}, BSP {rb:.1} images/s; seconds per image, ASYNC against NOTIFY-ACK: {how}"),
                    async_highest && rn > rb,
                )
                .with_value((ra - rn).min(rn - rb)),
            );
            let (tn, tb, ta) = (
                time_to_accuracy(na, target),
                time_to_accuracy(bsp, target),
                time_to_accuracy(asy, target),
            );
            // Three outcomes, as the paper words it: NOTIFY-ACK before BSP and ASYNC, BSP
            // before ASYNC, each better by more than the tolerance (a run that never gets
            // there loses to one that does).
            let (na_first, na_bsp) = SUPERIOR_CONVERGENCE.judge(tn, tb);
            let (na_before_async, na_async) = SUPERIOR_CONVERGENCE.judge(tn, ta);
            let (bsp_before_async, bsp_async) = ASYNC_POOR.judge(tb, ta);
            // ASYNC is last when it never reaches the target, or when both others reached it
            // before it did.
            let async_last = ta.is_none() || (na_before_async && bsp_before_async);
            // The smallest step of the order NOTIFY-ACK < BSP <= ASYNC, in seconds (ASYNC
            // never reaching the target leaves NOTIFY-ACK's lead over BSP).
            let order_margin = match (tn, tb, ta) {
                (Some(n), Some(b), Some(a)) => (b - n).min(a - b),
                (Some(n), Some(b), None) => b - n,
                _ => f64::NAN,
            };
            run.out().claim(
                Claim::check(
                    format!("{FIGURE}/{tag}/{}", CLAIMS[1].0),
                    format!("under {tag}: {}", CLAIMS[1].1),
                    paper_value(1),
                    format!(
                        "seconds to training accuracy {target}: NOTIFY-ACK {}, BSP {}, ASYNC {}; NOTIFY-ACK against BSP: {na_bsp}; against ASYNC: {na_async}; BSP against ASYNC: {bsp_async}",
                        show(tn),
                        show(tb),
                        show(ta)
                    ),
                    na_first && async_last,
                )
                .with_value(order_margin),
            );
        }
        pb.finish_and_clear();
        run.out().csv("summary.csv", &summary)?;
        run.out().csv("curves.csv", &curves)?;
        run.notes([
            format!(
                "{} peers on {} (in-degree {}), {} iterations each; one single-slot receive buffer per sender; a reduce averages the buffers whose header and footer versions agree (asap-fig7's mechanism) with the peer's own model",
                c.workers,
                topology.name(),
                topology.in_neighbors(0).len(),
                c.iterations
            ),
            format!(
                "sim: {} Gbit/s links, {} ns latency, compute {} ns per image with log-normal jitter sigma {}; throughput = workers x iterations x batch / makespan",
                c.network.bandwidth_gbps, c.network.latency_ns, c.compute.ns_per_example, c.jitter_sigma
            ),
            format!("target: training accuracy {target} (evaluated on training images; the paper: 99%, about 84% test accuracy)"),
            CHOICES.into(),
        ]);
        Ok(())
    }
}

/// What the paper leaves open and what we chose.
const CHOICES: &str = "ASAP §6.2 trains with mini-batch 1, no augmentation and a learning rate decayed every epoch without the factor; the configs state their batch, rate and decay";

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<AsapFig8>()
}
