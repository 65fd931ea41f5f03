//! Which instruction-set level the CNN kernels run at: the best this CPU has, or a lower one
//! forced for a test or a comparison (`SYNCBENCH_CPU_LEVEL`, or [`force`]).
//!
//! The level changes the kernels' speed, never their bits: the matrix product
//! ([`super::matmul`]) is one fused multiply-add chain per element at every level, and the
//! other loops ([`super::simd`]) are copies and sums in a fixed order without fused
//! multiply-adds. Forcing every level this machine has and comparing the bits of a training
//! step is how the tests hold that promise (`tests/cnn_cpu_levels.rs`).

use std::sync::atomic::{AtomicU8, Ordering};

/// An x86-64 instruction-set level the kernels are compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CpuLevel {
    /// SSE2 only: the matrix product's fused multiply-add is the C library's `fmaf`
    /// (exact, slow).
    Baseline,
    /// AVX2 with FMA.
    Avx2,
    /// AVX-512 (F).
    Avx512,
}

impl CpuLevel {
    /// Every level, lowest first.
    pub const ALL: [CpuLevel; 3] = [CpuLevel::Baseline, CpuLevel::Avx2, CpuLevel::Avx512];

    /// The name `SYNCBENCH_CPU_LEVEL` takes and manifests print.
    pub fn name(self) -> &'static str {
        match self {
            CpuLevel::Baseline => "baseline",
            CpuLevel::Avx2 => "avx2",
            CpuLevel::Avx512 => "avx512",
        }
    }

    /// The level named `s`.
    pub fn parse(s: &str) -> Option<CpuLevel> {
        CpuLevel::ALL.into_iter().find(|l| l.name() == s.trim())
    }

    /// The best level this CPU runs.
    pub fn detected() -> CpuLevel {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return CpuLevel::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return CpuLevel::Avx2;
            }
        }
        CpuLevel::Baseline
    }

    /// Every level this CPU runs, lowest first.
    pub fn available() -> Vec<CpuLevel> {
        let best = CpuLevel::detected();
        CpuLevel::ALL.into_iter().filter(|&l| l <= best).collect()
    }
}

/// 0: not read yet; 1 + index into [`CpuLevel::ALL`] otherwise.
static CHOSEN: AtomicU8 = AtomicU8::new(0);

fn encode(l: CpuLevel) -> u8 {
    1 + CpuLevel::ALL.iter().position(|&x| x == l).expect("a level") as u8
}

/// The level the kernels run at now: the detected one, lowered by `SYNCBENCH_CPU_LEVEL` (read
/// once; a name it does not know, or a level above the CPU's, leaves the detected one) or by
/// [`force`].
pub fn current() -> CpuLevel {
    let c = CHOSEN.load(Ordering::Relaxed);
    if c != 0 {
        return CpuLevel::ALL[usize::from(c - 1)];
    }
    let best = CpuLevel::detected();
    let l = std::env::var("SYNCBENCH_CPU_LEVEL")
        .ok()
        .and_then(|s| CpuLevel::parse(&s))
        .map_or(best, |asked| asked.min(best));
    CHOSEN.store(encode(l), Ordering::Relaxed);
    l
}

/// Runs the kernels at `level` (at most the detected one) from now on, process-wide, and
/// returns the level now in force. Other threads' kernels change speed, not bits.
pub fn force(level: CpuLevel) -> CpuLevel {
    let l = level.min(CpuLevel::detected());
    CHOSEN.store(encode(l), Ordering::Relaxed);
    l
}

/// Whether [`current`] allows AVX2 (the [`super::simd`] loops' second copy).
#[inline]
pub fn avx2() -> bool {
    current() >= CpuLevel::Avx2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_levels_are_ordered() {
        for l in CpuLevel::ALL {
            assert_eq!(CpuLevel::parse(l.name()), Some(l));
        }
        assert_eq!(CpuLevel::parse("sse9"), None);
        assert!(CpuLevel::Baseline < CpuLevel::Avx2 && CpuLevel::Avx2 < CpuLevel::Avx512);
        let avail = CpuLevel::available();
        assert_eq!(avail[0], CpuLevel::Baseline);
        assert_eq!(*avail.last().unwrap(), CpuLevel::detected());
    }
}
