//! Model check of the parameter-server protocols: every mode under >= 1,000 seeded random
//! schedules in the simulator, asserting at every computation the staleness bound (BSP lockstep
//! is the bound with s = 0) on ground-truth server state, and that every run finishes.

mod common;

use bench_core::driver::sim::{self, SimConfig, SimObserver};
use bench_core::learning::CountingProbe;
use bench_core::protocol::{ProtocolSpec, SyncMode};
use bench_core::straggler::StragglerConfig;
use bench_core::{CoreError, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

struct BoundChecker {
    bound: Option<u64>,
    checks: u64,
    worst: i64,
}

impl BoundChecker {
    fn new(bound: Option<u64>) -> Self {
        BoundChecker {
            bound,
            checks: 0,
            worst: 0,
        }
    }
}

impl SimObserver for BoundChecker {
    fn on_compute(&mut self, now: u64, worker: usize, iter: u64, applied: &[u64]) -> Result<()> {
        self.checks += 1;
        let complete = applied.iter().copied().min().unwrap_or(0);
        self.worst = self.worst.max(iter as i64 - complete as i64);
        if let Some(s) = self.bound {
            if complete + s < iter {
                return Err(CoreError::Protocol {
                    node: worker + 1,
                    message: format!(
                        "t={now}: worker {worker} computes clock {iter} on a model with complete={complete} (bound {s})"
                    ),
                });
            }
        }
        Ok(())
    }
}

fn random_case(seed: u64, mode: SyncMode) -> (ProtocolSpec, SimConfig, StragglerConfig) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let workers = rng.gen_range(1..=8);
    let spec = ProtocolSpec {
        mode,
        workers,
        iterations: rng.gen_range(1..=25),
    };
    let (cfg, stragglers) = common::random_cluster(&mut rng, workers);
    (spec, cfg, stragglers)
}

fn check_mode(mode_of: impl Fn(u64) -> SyncMode, schedules: u64) -> (u64, i64) {
    let (mut checks, mut worst) = (0, 0);
    for seed in 0..schedules {
        let mode = mode_of(seed);
        let (spec, cfg, stragglers) = random_case(seed, mode);
        let mut checker = BoundChecker::new(mode.bound());
        let records = sim::run(
            spec.build().unwrap(),
            &CountingProbe,
            &cfg,
            &stragglers,
            seed,
            &mut checker,
        )
        .unwrap_or_else(|e| panic!("seed {seed}, {mode:?}, {spec:?}: {e}"));
        assert_eq!(
            records.iterations.len() as u64,
            spec.workers as u64 * spec.iterations,
            "seed {seed}: every iteration of every worker finishes"
        );
        for r in &records.iterations {
            if let Some(s) = mode.bound() {
                assert!(
                    r.staleness <= s,
                    "seed {seed}: recorded staleness {} > {s}",
                    r.staleness
                );
            }
        }
        checks += checker.checks;
        worst = worst.max(checker.worst);
    }
    (checks, worst)
}

#[test]
fn bsp_lockstep_under_random_schedules() {
    let (checks, worst) = check_mode(|_| SyncMode::bsp(), 1000);
    assert!(checks > 10_000);
    assert_eq!(
        worst, 0,
        "BSP always reads a model complete up to its clock"
    );
}

#[test]
fn ssp_bound_under_random_schedules() {
    let (checks, worst) = check_mode(|seed| SyncMode::ssp((seed % 6) as i64), 1000);
    assert!(checks > 10_000);
    assert!(
        worst >= 3,
        "random schedules reach deep staleness ({worst})"
    );
}

#[test]
fn asp_never_deadlocks_and_goes_stale() {
    let (_, worst) = check_mode(|_| SyncMode::asp(), 1000);
    assert!(
        worst > 5,
        "ASP reads are unbounded in stale-ness: saw {worst}"
    );
}

#[test]
fn same_seed_same_records() {
    let (spec, cfg, st) = random_case(42, SyncMode::ssp(2));
    let a = sim::run(
        spec.build().unwrap(),
        &CountingProbe,
        &cfg,
        &st,
        42,
        &mut sim::NoObserver,
    )
    .unwrap();
    let b = sim::run(
        spec.build().unwrap(),
        &CountingProbe,
        &cfg,
        &st,
        42,
        &mut sim::NoObserver,
    )
    .unwrap();
    assert_eq!(a, b);
}

#[test]
fn checker_catches_a_protocol_looser_than_its_claim() {
    // Nodes built for SSP(4) checked against BSP's bound must be caught on some schedule.
    let caught = (0..200).any(|seed| {
        let (spec, cfg, st) = random_case(seed, SyncMode::ssp(4));
        let mut checker = BoundChecker::new(Some(0));
        sim::run(
            spec.build().unwrap(),
            &CountingProbe,
            &cfg,
            &st,
            seed,
            &mut checker,
        )
        .is_err()
    });
    assert!(caught);
}

#[test]
fn essp_bound_under_random_schedules() {
    let (checks, worst) = check_mode(|seed| SyncMode::essp((seed % 5) as i64), 1000);
    assert!(checks > 10_000);
    assert!(worst >= 2, "{worst}");
}

#[test]
fn dssp_gap_never_exceeds_lower_bound_plus_range() {
    // bound() of DSSP is s_L + r_max; the checker asserts it at every computation.
    let mut beyond_lower = 0;
    for seed in 0..1000u64 {
        let s_l = (seed % 4) as i64;
        let r_max = ((seed / 4) % 7) as i64;
        let mode = SyncMode::dssp(s_l, r_max);
        let (spec, cfg, st) = random_case(seed, mode);
        let mut checker = BoundChecker::new(mode.bound());
        let r = sim::run(
            spec.build().unwrap(),
            &CountingProbe,
            &cfg,
            &st,
            seed,
            &mut checker,
        )
        .unwrap_or_else(|e| panic!("seed {seed}, {mode:?}, {spec:?}: {e}"));
        assert_eq!(
            r.iterations.len() as u64,
            spec.workers as u64 * spec.iterations
        );
        if checker.worst > s_l {
            beyond_lower += 1;
        }
    }
    assert!(
        beyond_lower > 50,
        "the controller granted extra iterations in {beyond_lower} runs"
    );
}

#[test]
fn backup_workers_complete_every_clock_with_exactly_n_updates() {
    for seed in 0..1000u64 {
        let (mut spec, cfg, st) = random_case(seed, SyncMode::bsp());
        if spec.workers < 2 {
            spec.workers = 2;
        }
        let backups = 1 + (seed as usize % (spec.workers - 1)).min(2);
        spec.mode = SyncMode::bsp_backup(backups as i64);
        let mut eval_cfg = cfg.clone();
        eval_cfg.eval_every = 0;
        let r = sim::run(
            spec.build().unwrap(),
            &CountingProbe,
            &eval_cfg,
            &st,
            seed,
            &mut sim::NoObserver,
        )
        .unwrap_or_else(|e| panic!("seed {seed}, {spec:?}: {e}"));
        // CountingProbe adds 1 per applied update; evaluate reports the count.
        let applied = r.progress.last().unwrap().loss;
        let needed = (spec.workers - backups) as u64;
        assert_eq!(
            applied as u64,
            needed * spec.iterations,
            "seed {seed}: {spec:?}"
        );
        let computed = r.iterations.len() as u64;
        assert_eq!(
            computed,
            needed * spec.iterations + r.dropped_updates,
            "seed {seed}"
        );
    }
}
