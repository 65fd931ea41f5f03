//! Why a claim failed, and whose claim it is: the `kind`, `class` and `why` columns of
//! `claims.csv`. A failure a reader cannot classify is a defect of the reproduction, so every
//! failing claim carries a class and one line of evidence; the report groups failures by class
//! and keeps the papers' claims apart from the harness's own checks.

/// Whose statement a claim checks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ClaimKind {
    /// A statement of one of the papers (a figure's or table's result).
    #[default]
    Paper,
    /// The harness's own check (the simulator against real runs, bound tightness, the mode
    /// matrix's restated headlines): not a paper's result, reported apart.
    Harness,
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
