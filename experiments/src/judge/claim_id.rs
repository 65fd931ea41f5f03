//! One layout for every claim id: `{figure}/{part}/{name}`, the part (a panel, a graph, a
//! driver, or several of these joined by `/`) before the claim's name, and no part segment
//! where a figure has one part. A whole-curve twin's id is its time claim's with `-area` after
//! the name. `experiments/failures.toml` and the committed baselines name claims this way, so a
//! pattern such as `hop-fig17/*/staleness5-time-to-target` reads the same in every figure.

use std::fmt;

/// A claim's id, built from its figure, its part and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimId {
    figure: String,
    part: String,
    name: String,
}

impl ClaimId {
    /// The claim `name` of `figure`'s `part` (empty: the figure has one part).
    pub fn new(
        figure: impl Into<String>,
        part: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        ClaimId {
            figure: figure.into(),
            part: part.into(),
            name: name.into(),
        }
    }

    /// The id of this claim's whole-curve twin: `-area` after the name.
    pub fn twin(&self) -> ClaimId {
        ClaimId {
            name: format!("{}-area", self.name),
            ..self.clone()
        }
    }
}

impl fmt::Display for ClaimId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.part.is_empty() {
            write!(f, "{}/{}", self.figure, self.name)
        } else {
            write!(f, "{}/{}/{}", self.figure, self.part, self.name)
        }
    }
}

impl From<ClaimId> for String {
    fn from(id: ClaimId) -> String {
        id.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::ClaimId;

    #[test]
    fn the_part_comes_before_the_name_and_the_twin_after_it() {
        let id = ClaimId::new("asap-fig9", "sim", "notify-ack-before-bsp");
        assert_eq!(id.to_string(), "asap-fig9/sim/notify-ack-before-bsp");
        assert_eq!(
            id.twin().to_string(),
            "asap-fig9/sim/notify-ack-before-bsp-area"
        );
        let one_part = ClaimId::new("hop-fig13", "", "decentralized-before-ps");
        assert_eq!(one_part.to_string(), "hop-fig13/decentralized-before-ps");
        assert_eq!(
            one_part.twin().to_string(),
            "hop-fig13/decentralized-before-ps-area"
        );
    }
}
