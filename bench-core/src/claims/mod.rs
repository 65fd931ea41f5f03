//! Claims: each figure's statements evaluated on measured data, written to `claims.csv` as
//! `claim_id,statement,paper_value,measured_value,verdict,kind,class,why`. A claim that does
//! not hold is a `fail` with its numbers and, once explained, its class and evidence
//! ([`explanation`]); nothing is tuned to pass. A run of several seeds writes each seed's
//! claims and their aggregate ([`across_seeds`]).

mod across_seeds;
mod explanation;

pub use across_seeds::{across_seeds, SeededClaim};
pub use explanation::{ClaimKind, FailureClass};

/// Outcome of a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Holds on the measured data.
    Pass,
    /// Does not hold.
    Fail,
    /// Cannot be evaluated in this run (say why in `measured_value`).
    #[serde(rename = "n.a.")]
    NotApplicable,
    /// Evaluated, but the run could not have told a pass from a fail: the target was crossed
    /// before the compared runs could differ, the compared runs were identical, a bound never
    /// bound, or the claim holds by construction. Counted apart from pass and fail; why is said
    /// in `measured_value`.
    #[serde(rename = "not exercised")]
    NotExercised,
    /// Several seeds evaluated it and they disagree: more than [`UNDECIDED_SHARE`] of the seeds
    /// that exercised it went the other way (with three seeds, any split). Counted apart and
    /// never as a pass; the harness runs further seeds for it, up to a cap, before it says so
    /// ([`across_seeds`]).
    #[serde(rename = "undecided")]
    Undecided,
}

/// The largest share of a claim's exercised seeds that may disagree with the others for the
/// claim to be decided: one seed in five (4 of 5 or 6 of 7 agreeing decides; 2 of 3 does not).
pub const UNDECIDED_SHARE: f64 = 0.2;

impl Verdict {
    /// The word `claims.csv` writes.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::NotApplicable => "n.a.",
            Verdict::NotExercised => "not exercised",
            Verdict::Undecided => "undecided",
        }
    }
}

/// One row of `claims.csv`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Claim {
    /// Stable id, `<figure>/<short-name>`.
    pub claim_id: String,
    /// The statement checked.
    pub statement: String,
    /// What the paper reports.
    pub paper_value: String,
    /// What this run measured.
    pub measured_value: String,
    /// Whether it holds.
    pub verdict: Verdict,
    /// The claim's deciding number, where it has one (a ratio, a share, a margin): aggregated
    /// over seeds as median, min and max ([`across_seeds`]). Not a column of a one-seed
    /// `claims.csv`, whose format stays as it was.
    #[serde(skip)]
    pub value: Option<f64>,
    /// A paper's statement, the harness's own check, an invariant of the code or a check of our
    /// model ([`ClaimKind`]).
    #[serde(default)]
    pub kind: ClaimKind,
    /// For a failure: why it fails, in one of four classes (empty until explained).
    #[serde(default)]
    pub class: Option<FailureClass>,
    /// For a failure: one line of evidence for its class (empty until explained).
    #[serde(default)]
    pub why: String,
}

impl Claim {
    /// A claim whose verdict is `holds`.
    pub fn check(
        claim_id: impl Into<String>,
        statement: impl Into<String>,
        paper_value: impl Into<String>,
        measured_value: impl Into<String>,
        holds: bool,
    ) -> Self {
        Claim {
            claim_id: claim_id.into(),
            statement: statement.into(),
            paper_value: paper_value.into(),
            measured_value: measured_value.into(),
            verdict: if holds { Verdict::Pass } else { Verdict::Fail },
            value: None,
            kind: ClaimKind::Paper,
            class: None,
            why: String::new(),
        }
    }

    /// The claim with its deciding number `value` (what [`across_seeds`] spreads).
    pub fn with_value(mut self, value: f64) -> Self {
        self.value = value.is_finite().then_some(value);
        self
    }

    /// This claim marked not exercised, `why` appended to its measured value (the numbers stay,
    /// so a reader sees what would have been decided). A claim this run could not evaluate
    /// (n.a.) stays n.a.
    pub fn not_exercised(mut self, why: impl std::fmt::Display) -> Self {
        if self.verdict != Verdict::NotApplicable {
            self.measured_value = format!("{} [not exercised: {why}]", self.measured_value);
            self.verdict = Verdict::NotExercised;
        }
        self
    }

    /// The claim as the harness's own check rather than a paper's statement.
    pub fn harness(self) -> Self {
        self.of_kind(ClaimKind::Harness)
    }

    /// The claim counted as `kind`.
    pub fn of_kind(mut self, kind: ClaimKind) -> Self {
        self.kind = kind;
        self
    }

    /// A failing claim with its class and one line of evidence; a claim that does not fail
    /// keeps no explanation (there is nothing to explain).
    pub fn explained(mut self, class: FailureClass, why: impl Into<String>) -> Self {
        if self.verdict == Verdict::Fail {
            self.class = Some(class);
            self.why = why.into();
        }
        self
    }

    /// A claim this run cannot evaluate, with the reason.
    pub fn not_applicable(
        claim_id: impl Into<String>,
        statement: impl Into<String>,
        paper_value: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Claim {
            claim_id: claim_id.into(),
            statement: statement.into(),
            paper_value: paper_value.into(),
            measured_value: reason.into(),
            verdict: Verdict::NotApplicable,
            value: None,
            kind: ClaimKind::Paper,
            class: None,
            why: String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        assert_eq!(
            Claim::check("a", "s", "1", "2", false).verdict,
            Verdict::Fail
        );
        assert_eq!(
            Claim::check("a", "s", "1", "1", true).verdict,
            Verdict::Pass
        );
        let mut w = csv::Writer::from_writer(vec![]);
        w.serialize(Claim::not_applicable("a", "s", "p", "no gpu"))
            .unwrap();
        let s = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert!(s.contains("n.a."), "{s}");
        let c = Claim::check("a", "s", "1", "t = 2", true).not_exercised("crossed at once");
        assert_eq!(c.verdict, Verdict::NotExercised);
        assert_eq!(c.measured_value, "t = 2 [not exercised: crossed at once]");
        let mut w = csv::Writer::from_writer(vec![]);
        w.serialize(&c).unwrap();
        let s = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert!(s.ends_with(",not exercised,paper,,\n"), "{s}");
        let failed = Claim::check("a", "s", "1", "2", false)
            .harness()
            .explained(FailureClass::ModelDiffers, "a, b");
        let mut w = csv::Writer::from_writer(vec![]);
        w.serialize(&failed).unwrap();
        let s = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert!(
            s.starts_with("claim_id,statement,paper_value,measured_value,verdict,kind,class,why\n"),
            "{s}"
        );
        assert!(s.ends_with(",fail,harness,model differs,\"a, b\"\n"), "{s}");
        let back: Claim = csv::Reader::from_reader(s.as_bytes())
            .deserialize()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(back, failed);
        // A pass keeps no explanation; an old claims.csv without the columns still reads.
        assert_eq!(
            Claim::check("a", "s", "1", "1", true)
                .explained(FailureClass::NotReproduced, "x")
                .class,
            None
        );
        let old: Claim = csv::Reader::from_reader(
            "claim_id,statement,paper_value,measured_value,verdict\na,s,1,2,fail\n".as_bytes(),
        )
        .deserialize()
        .next()
        .unwrap()
        .unwrap();
        assert_eq!(
            (old.kind, old.class, old.why.as_str()),
            (ClaimKind::Paper, None, "")
        );
        let na = Claim::not_applicable("a", "s", "p", "no gpu").not_exercised("x");
        assert_eq!(na.verdict, Verdict::NotApplicable);
        for v in [
            Verdict::Pass,
            Verdict::Fail,
            Verdict::NotApplicable,
            Verdict::NotExercised,
            Verdict::Undecided,
        ] {
            let mut w = csv::Writer::from_writer(vec![]);
            w.serialize(v).unwrap();
            let s = String::from_utf8(w.into_inner().unwrap()).unwrap();
            assert_eq!(s.trim_end(), v.word());
        }
    }
}
