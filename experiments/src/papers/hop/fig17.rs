//! hop-fig17: Bounded staleness (s = 5) against the standard protocol on the ring-based graph under
//! random slowdown (Hop §7.3.4, Fig 17).

use crate::harness::experiment;
use crate::judge::comparison::{Allows, PaperComparison, DEFAULT_TOLERANCE};
use crate::papers::hop::compare::{Compare, Comparison};

struct HopFig17;

/// Hop's Fig 17 statement on bounded staleness and backup workers against standard: both
/// outperform it, so each better by more than the default tolerance.
const BOTH_OUTPERFORM: PaperComparison = PaperComparison {
    quote: "the system with staleness can achieve a similar speedup to that with backup workers, and they both outperform the standard decentralized setting",
    source: "Hop §7.3.4, Fig 17",
    allows: Allows::Better,
    tolerance: DEFAULT_TOLERANCE,
};

impl Comparison for HopFig17 {
    const BINARY: &'static str = "hop-fig17";
    const ABOUT: &'static str = "Hop: Bounded staleness (s = 5) against the standard protocol on the ring-based graph under random slowdown (Hop §7.3.4, Fig 17). SVM with log loss on a synthetic webspam twin, 16 peers, every computation 6x slower with probability 1/16. Writes results/hop-fig17/: summary.csv (time per iteration, time to an optimum-relative loss target (90% of the way from the initial held-out loss to the reference optimum's: the near-optimum line)), curves.csv, claims.csv, manifest.json. The CNN half (Hop's CNN on a CIFAR-10 twin; the cnn feature): `hop-fig17 --cnn`, into results/hop-fig17-cnn/.";
    const QUICK: &'static str = include_str!("../../../configs/hop-fig17.quick.toml");
    const PAPER: &'static str = include_str!("../../../configs/hop-fig17.paper.toml");
    const CNN: Option<(&'static str, &'static str)> = Some((
        include_str!("../../../configs/hop-fig17.cnn.quick.toml"),
        include_str!("../../../configs/hop-fig17.cnn.paper.toml"),
    ));
    const BEFORE_STANDARD: PaperComparison = BOTH_OUTPERFORM;
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<Compare<HopFig17>>()
}

#[cfg(test)]
mod tests {
    /// The CNN half's configurations (`make fig-hop-fig17-cnn`) parse and validate in every build.
    #[test]
    fn the_cnn_configurations_parse_and_validate() {
        for text in [
            include_str!("../../../configs/hop-fig17.cnn.quick.toml"),
            include_str!("../../../configs/hop-fig17.cnn.paper.toml"),
        ] {
            let cfg: crate::papers::hop::compare::CompareConfig = toml::from_str(text).unwrap();
            crate::papers::hop::compare::validate(&cfg).unwrap();
            assert!(cfg.common.cnn.is_some());
        }
    }
}
