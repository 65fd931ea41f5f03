//! Why a claim failed, and whose claim it is: the `kind`, `class` and `why` columns of
//! `claims.csv`. A failure a reader cannot classify is a defect of the reproduction, so every
//! failing claim carries a class and one line of evidence; the report groups failures by class
//! and keeps the papers' claims apart from the harness's own checks.

/// Whose statement a claim checks, which decides how it is counted: the report's headline counts
/// the papers' claims alone first, and an invariant that fails is a bug of the code (CI fails on
/// it) rather than a verdict about a paper.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum ClaimKind {
    /// A statement of one of the papers (a figure's or table's result).
    #[default]
    #[serde(rename = "paper")]
    Paper,
    /// The harness's own check that a run is fit to judge (it learned, it got near the
    /// optimum, the budget reached the target, the straggler slowed it down) or a restated
    /// headline (the mode matrix, ps-modes): not a paper's result, reported apart.
    #[serde(rename = "harness")]
    Harness,
    /// A bound or theorem the code enforces (a staleness bound, Hop's iteration-gap theorem,
    /// bytes sent equal to out-degree times the model): it cannot fail unless the code is
    /// wrong, so it is no evidence for a paper; a failure is a bug and fails CI.
    #[serde(rename = "invariant")]
    Invariant,
    /// A check of our model itself: the simulator against measured runs, how tight a bound
    /// gets in practice.
    #[serde(rename = "model check")]
    Model,
}

impl ClaimKind {
    /// Every kind, in the order the report lists them.
    pub const ALL: [ClaimKind; 4] = [
        ClaimKind::Paper,
        ClaimKind::Harness,
        ClaimKind::Invariant,
        ClaimKind::Model,
    ];

    /// The word `claims.csv` writes in its `kind` column.
    pub fn word(self) -> &'static str {
        match self {
            ClaimKind::Paper => "paper",
            ClaimKind::Harness => "harness",
            ClaimKind::Invariant => "invariant",
            ClaimKind::Model => "model check",
        }
    }

    /// The kind `word` names, if any.
    pub fn from_word(word: &str) -> Option<ClaimKind> {
        ClaimKind::ALL.into_iter().find(|k| k.word() == word)
    }
}

/// Why a failing claim fails, in one of four classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum FailureClass {
    /// The paper's result does not reproduce on a model that follows the paper.
    #[serde(rename = "not reproduced")]
    NotReproduced,
    /// Our model differs from the paper's system in a way that decides the claim.
    #[serde(rename = "model differs")]
    ModelDiffers,
    /// The paper contradicts itself (text against figure, or two passages), so no run can
    /// satisfy every reading.
    #[serde(rename = "paper inconsistent")]
    PaperInconsistent,
    /// A limit of the machine the run used (2 shared cores, no RDMA NIC, no GPU), not of the
    /// algorithm.
    #[serde(rename = "machine limit")]
    MachineLimit,
}

impl FailureClass {
    /// Every class, in the order the report lists them.
    pub const ALL: [FailureClass; 4] = [
        FailureClass::NotReproduced,
        FailureClass::ModelDiffers,
        FailureClass::PaperInconsistent,
        FailureClass::MachineLimit,
    ];

    /// The word `claims.csv` writes.
    pub fn word(self) -> &'static str {
        match self {
            FailureClass::NotReproduced => "not reproduced",
            FailureClass::ModelDiffers => "model differs",
            FailureClass::PaperInconsistent => "paper inconsistent",
            FailureClass::MachineLimit => "machine limit",
        }
    }

    /// The class `word` names (what a failure table writes), if any.
    pub fn from_word(word: &str) -> Option<FailureClass> {
        FailureClass::ALL.into_iter().find(|c| c.word() == word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_through_csv() {
        for c in FailureClass::ALL {
            assert_eq!(FailureClass::from_word(c.word()), Some(c));
            let mut w = csv::Writer::from_writer(vec![]);
            w.serialize(c).unwrap();
            let s = String::from_utf8(w.into_inner().unwrap()).unwrap();
            assert_eq!(s.trim_end(), c.word());
        }
        assert_eq!(FailureClass::from_word("tuned"), None);
        for k in ClaimKind::ALL {
            assert_eq!(ClaimKind::from_word(k.word()), Some(k));
            let mut w = csv::Writer::from_writer(vec![]);
            w.serialize(k).unwrap();
            let s = String::from_utf8(w.into_inner().unwrap()).unwrap();
            assert_eq!(s.trim_end(), k.word());
        }
        assert_eq!(ClaimKind::from_word("claim"), None);
        let mut w = csv::Writer::from_writer(vec![]);
        w.serialize(ClaimKind::Harness).unwrap();
        assert_eq!(
            String::from_utf8(w.into_inner().unwrap())
                .unwrap()
                .trim_end(),
            "harness"
        );
    }
}
