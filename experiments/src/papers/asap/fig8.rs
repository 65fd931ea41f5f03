//! asap-fig8: NOTIFY-ACK, BSP and ASYNC training ASAP's VGG on CIFAR-10 with 8 peers
//! all-reduce over single-slot receive buffers (ASAP §6.2, Fig 8): throughput in images per
//! second and time to the training-accuracy target. Needs the `cnn` feature; a build without it
//! writes the claims as not applicable, saying why.

use crate::harness::experiment::{self, Experiment, NoArgs, Run};
use crate::harness::output::progress;
use crate::judge::claim_id::ClaimId;
use crate::judge::comparison::{Allows, PaperComparison, DEFAULT_TOLERANCE};
use crate::judge::reference::ReferenceWords;
use crate::judge::time_to_target::TimeToTarget;
use crate::judge::verdict::Judge;
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

fn show(v: Option<f64>) -> String {
    v.map_or("never".into(), |x| format!("{x:.3}"))
}

/// The figure's claims: id, statement (for a build without CNN support, which cannot judge
/// them) and the paper's numbers. The three time claims are judged by the one time-to-target
/// comparison ([`TimeToTarget`]), at the configured training accuracy.
const CLAIMS: [(&str, &str, &str); 4] = [
    (
        "throughput-order",
        "VGG on CIFAR-10, 8 peers all-reduce: throughput ASYNC > NOTIFY-ACK > BSP (ASYNC above NOTIFY-ACK by more than 5%)",
        "229.3 (NA), 217.8 (BSP), 246 (ASYNC) images/s",
    ),
    (
        "notify-ack-before-bsp",
        "VGG on CIFAR-10: NOTIFY-ACK reaches the training-accuracy target before BSP, by more than 5% of its time",
        "NA converges fastest (99% training accuracy)",
    ),
    (
        "notify-ack-before-async",
        "VGG on CIFAR-10: NOTIFY-ACK reaches the training-accuracy target before ASYNC, by more than 5% of its time",
        "NA converges fastest (99% training accuracy)",
    ),
    (
        "bsp-before-async",
        "VGG on CIFAR-10: BSP reaches the training-accuracy target before ASYNC (ASYNC last or never), by more than 5% of its time",
        "ASYNC converges worst (99% training accuracy)",
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

/// Claim `i`'s paper value: its text and the statement it reads.
fn paper_value(i: usize) -> String {
    let words = if i == 1 || i == 2 {
        &SUPERIOR_CONVERGENCE
    } else {
        &ASYNC_POOR
    };
    format!("{}; {}", CLAIMS[i].2, words.cite())
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
        let judge = Judge::at_accuracy(target, ReferenceWords::TRAINING_ACCURACY);
        for &driver in &drivers {
            let runs = run_every_mode(driver, c, &topology, &workload, seed, &pb)?;
            for (mode, r) in &runs.0 {
                let reached = judge.judge([(mode.label(), &r.progress[..])]);
                summary.push(SummaryRow {
                    driver: driver.label(),
                    mode: mode.label(),
                    images_per_s: images_per_s(r, c, cfg.cnn.batch),
                    seconds_to_target: show(reached.seconds_to_target(&mode.label())),
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
            // NOTIFY-ACK before BSP and before ASYNC, BSP before ASYNC (ASYNC last: never
            // getting there is last), each by the paper's words and the one engine's gates.
            let judged = judge.judge([
                ("NOTIFY-ACK", &na.progress[..]),
                ("BSP", &bsp.progress[..]),
                ("ASYNC", &asy.progress[..]),
            ]);
            for (i, words, ours, theirs) in [
                (1, &SUPERIOR_CONVERGENCE, "NOTIFY-ACK", "BSP"),
                (2, &SUPERIOR_CONVERGENCE, "NOTIFY-ACK", "ASYNC"),
                (3, &ASYNC_POOR, "BSP", "ASYNC"),
            ] {
                let comparison =
                    TimeToTarget::new(ClaimId::new(FIGURE, tag, CLAIMS[i].0), words, ours, theirs)
                        .stated(format!(
                            "under {tag}: {ours} reaches training accuracy {target} {}",
                            words.before(theirs)
                        ))
                        .with_numbers(CLAIMS[i].2);
                for claim in judged.time_claims(comparison) {
                    run.out().claim(claim);
                }
            }
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
