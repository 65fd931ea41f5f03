//! The CNNs' bits do not depend on the CPU (feature `cnn`): a training step and an evaluation
//! of every network, run at every instruction-set level this machine has (forced through
//! `cpu_level::force`: the AVX-512, AVX2 + FMA and baseline kernels), give the same bits, and
//! those bits are the ones pinned in `tests/golden/cnn-step-bits.txt`, so that a machine of
//! another kind (another vendor, ISA level or cache sizes) that runs this test checks them too.
//! After a change that moves the CNNs' arithmetic on purpose, `SYNCBENCH_BLESS=1 cargo test
//! -p bench-core --features cnn --test cnn_cpu_levels` rewrites the file.
#![cfg(feature = "cnn")]

use bench_core::data::ImageShape;
use bench_core::workload::cpu_level::{self, CpuLevel};
use bench_core::workload::{CnnConfig, CnnModel, CnnWorkload, Workload};
use sha2::{Digest, Sha256};
use std::path::PathBuf;

/// Two updates (momentum carried) and an evaluation of `model`, small enough for the
/// baseline level's software fused multiply-add; their bits as one digest.
fn step_bits(model: CnnModel) -> String {
    let mut all = ImageShape {
        images: 24,
        side: 8,
        classes: 4,
        noise: 0.15,
    }
    .generate(11)
    .unwrap();
    let stats = all.slice(0..16).channel_stats();
    all.normalise(&stats);
    let cfg = CnnConfig {
        width: 2,
        hidden: 8,
        batch: 4,
        augment: true,
        ..CnnConfig::quick(model)
    };
    let w = CnnWorkload::new(cfg, all.slice(0..16), all.slice(16..24), 3).unwrap();
    let mut m = w.initial_model();
    let mut h = Sha256::new();
    for iter in 0..2 {
        let u = w.update(&m, 0, 1, iter);
        for (x, d) in m.iter_mut().zip(&u) {
            *x += d;
        }
        for v in &u {
            h.update(v.to_bits().to_le_bytes());
        }
    }
    let (loss, acc) = w.evaluate(&m);
    h.update(loss.to_bits().to_le_bytes());
    h.update(acc.to_bits().to_le_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn golden() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/cnn-step-bits.txt")
}

#[test]
fn every_level_gives_the_same_bits_and_the_pinned_ones() {
    let levels = CpuLevel::available();
    let mut lines = Vec::new();
    for model in CnnModel::ALL {
        let mut seen: Option<(CpuLevel, String)> = None;
        for &level in levels.iter().rev() {
            assert_eq!(cpu_level::force(level), level);
            let bits = step_bits(model);
            if let Some((first, want)) = &seen {
                assert_eq!(
                    &bits,
                    want,
                    "{}: a step at {} differs from one at {}",
                    model.name(),
                    level.name(),
                    first.name()
                );
            } else {
                seen = Some((level, bits));
            }
        }
        let (_, bits) = seen.expect("at least the baseline level");
        lines.push(format!("{} {bits}", model.name()));
    }
    cpu_level::force(CpuLevel::detected());
    let text = lines.join("\n") + "\n";
    if std::env::var_os("SYNCBENCH_BLESS").is_some() {
        std::fs::write(golden(), &text).unwrap();
        return;
    }
    let pinned = std::fs::read_to_string(golden()).unwrap_or_default();
    assert_eq!(
        pinned,
        text,
        "the CNNs' step bits (levels {:?}) are not the pinned ones in {}: on this CPU they \
         differ from the machine that pinned them, or the arithmetic changed (then re-bless: \
         SYNCBENCH_BLESS=1)",
        levels,
        golden().display()
    );
}
