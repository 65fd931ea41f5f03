//! hop-fig14-16: Backup workers (1, with token queues) against the standard protocol on ring-based
//! and double-ring graphs under random slowdown (Hop §7.3.3, Figs 14-16).

use crate::harness::experiment;
use crate::judge::comparison::{Allows, PaperComparison, DEFAULT_TOLERANCE};
use crate::papers::hop::compare::{Compare, Comparison};

struct HopFig14To16;

/// Hop's Fig 14 statement on backup workers against standard: faster on wall-clock time, so
/// better by more than the default tolerance.
const BACKUP_FASTER: PaperComparison = PaperComparison {
    quote: "training with backup workers converges faster than standard decentralized algorithms on wall-clock time",
    source: "Hop §7.3.3, Fig 14",
    allows: Allows::Better,
    tolerance: DEFAULT_TOLERANCE,
};

impl Comparison for HopFig14To16 {
    const BINARY: &'static str = "hop-fig14-16";
    const ABOUT: &'static str = "Hop: Backup workers (1, with token queues) against the standard protocol on ring-based and double-ring graphs under random slowdown (Hop §7.3.3, Figs 14-16). SVM with log loss on a synthetic webspam twin, 16 peers, every computation 6x slower with probability 1/16. Writes results/hop-fig14-16/: summary.csv (time per iteration, time to an optimum-relative loss target (90% of the way from the initial held-out loss to the reference optimum's: the near-optimum line)), curves.csv, claims.csv, manifest.json. The CNN half (Hop's CNN on a CIFAR-10 twin; the cnn feature): `hop-fig14-16 --cnn`, into results/hop-fig14-16-cnn/.";
    const QUICK: &'static str = include_str!("../../../configs/hop-fig14-16.quick.toml");
    const PAPER: &'static str = include_str!("../../../configs/hop-fig14-16.paper.toml");
    const CNN: Option<(&'static str, &'static str)> = Some((
        include_str!("../../../configs/hop-fig14-16.cnn.quick.toml"),
        include_str!("../../../configs/hop-fig14-16.cnn.paper.toml"),
    ));
    const BEFORE_STANDARD: PaperComparison = BACKUP_FASTER;
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<Compare<HopFig14To16>>()
}

#[cfg(test)]
mod tests {
    /// The CNN half's configurations (`make fig-hop-fig14-16-cnn`) parse and validate in every build.
    #[test]
    fn the_cnn_configurations_parse_and_validate() {
        for text in [
            include_str!("../../../configs/hop-fig14-16.cnn.quick.toml"),
            include_str!("../../../configs/hop-fig14-16.cnn.paper.toml"),
        ] {
            let cfg: crate::papers::hop::compare::CompareConfig = toml::from_str(text).unwrap();
            crate::papers::hop::compare::validate(&cfg).unwrap();
            assert!(cfg.common.cnn.is_some());
        }
    }
}
