//! hop-fig18-19: Skipping iterations (maximum jump 2 and 10) against the standard protocol with one
//! worker deterministically 4x slower (Hop §7.3.5, Figs 18-19).

use crate::harness::experiment;
use crate::judge::comparison::{Allows, PaperComparison, DEFAULT_TOLERANCE};
use crate::papers::hop::compare::{Compare, Comparison};

struct HopFig18To19;

/// Hop's Fig 19 statement on skipping iterations: superior to backup workers alone, jump 10
/// the fastest, both faster than standard; each comparison (against standard, and the
/// configuration's pairs) better by more than the default tolerance (the "more than 2 times"
/// is the iteration-speedup claim's).
const SKIPPING_FASTEST: PaperComparison = PaperComparison {
    quote: "skipping iterations exhibits superior performance over the simple backup worker setting, and jumping at most 10 iterations delivers the fastest convergence, with a speedup of more than 2 times over the standard decentralized system",
    source: "Hop §7.3.5, Fig 19",
    allows: Allows::Better,
    tolerance: DEFAULT_TOLERANCE,
};

impl Comparison for HopFig18To19 {
    const BINARY: &'static str = "hop-fig18-19";
    const ABOUT: &'static str = "Hop: Skipping iterations (maximum jump 2 and 10) against the standard protocol with one worker deterministically 4x slower (Hop §7.3.5, Figs 18-19). SVM with log loss on a synthetic webspam twin, 16 peers, worker 0 4x slower throughout. Writes results/hop-fig18-19/: summary.csv (time per iteration, time to an optimum-relative loss target (90% of the way from the initial held-out loss to the reference optimum's: the near-optimum line)), curves.csv, claims.csv, manifest.json. The CNN half (Hop's CNN on a CIFAR-10 twin; the cnn feature): `hop-fig18-19 --cnn`, into results/hop-fig18-19-cnn/.";
    const QUICK: &'static str = include_str!("../../../configs/hop-fig18-19.quick.toml");
    const PAPER: &'static str = include_str!("../../../configs/hop-fig18-19.paper.toml");
    const CNN: Option<(&'static str, &'static str)> = Some((
        include_str!("../../../configs/hop-fig18-19.cnn.quick.toml"),
        include_str!("../../../configs/hop-fig18-19.cnn.paper.toml"),
    ));
    const BEFORE_STANDARD: PaperComparison = SKIPPING_FASTEST;
    const FASTER_THAN: Option<PaperComparison> = Some(SKIPPING_FASTEST);
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<Compare<HopFig18To19>>()
}

#[cfg(test)]
mod tests {
    /// The CNN half's configurations (`make fig-hop-fig18-19-cnn`) parse and validate in every build.
    #[test]
    fn the_cnn_configurations_parse_and_validate() {
        for text in [
            include_str!("../../../configs/hop-fig18-19.cnn.quick.toml"),
            include_str!("../../../configs/hop-fig18-19.cnn.paper.toml"),
        ] {
            let cfg: crate::papers::hop::compare::CompareConfig = toml::from_str(text).unwrap();
            crate::papers::hop::compare::validate(&cfg).unwrap();
            assert!(cfg.common.cnn.is_some());
        }
    }
}
