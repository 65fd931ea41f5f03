//! A failure explanation's condition (`when`) and its numbers (`why`'s placeholders), checked
//! against each run's own aggregate of the claim.
//!
//! An explanation states its mechanism as a condition on the failing claim's deciding number
//! over this run's seeds, e.g. `when = "min > 1.05"` for "slower than the comparison on every
//! seed, beyond the 5% that reads as equivalent", and quotes this run's numbers through
//! placeholders (`{median}`, `{min}`, `{max}`, `{passes}`, `{fails}`, `{seeds}`), never numbers
//! frozen in the file. A failure whose condition does not hold on a run is unexplained there.

use anyhow::{bail, Result};

/// What a condition and a why read of one claim on one run: the deciding number's median, min
/// and max over the seeds that gave one, and how many of the claim's seeds passed and failed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClaimStats {
    /// Median of the deciding number (None: the claim has none).
    pub median: Option<f64>,
    /// Smallest over seeds.
    pub min: Option<f64>,
    /// Largest over seeds.
    pub max: Option<f64>,
    /// Seeds for which the claim passed.
    pub passes: usize,
    /// Seeds behind the verdict.
    pub seeds: usize,
}

impl ClaimStats {
    fn number(&self, field: Field) -> Option<f64> {
        match field {
            Field::Median => self.median,
            Field::Min => self.min,
            Field::Max => self.max,
            Field::Passes => Some(self.passes as f64),
            Field::Fails => Some(self.seeds.saturating_sub(self.passes) as f64),
            Field::Seeds => Some(self.seeds as f64),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Median,
    Min,
    Max,
    Passes,
    Fails,
    Seeds,
}

impl Field {
    const ALL: [(&'static str, Field); 6] = [
        ("median", Field::Median),
        ("min", Field::Min),
        ("max", Field::Max),
        ("passes", Field::Passes),
        ("fails", Field::Fails),
        ("seeds", Field::Seeds),
    ];

    fn parse(word: &str) -> Option<Field> {
        Self::ALL.iter().find(|(w, _)| *w == word).map(|(_, f)| *f)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

/// One `<field> <op> <number>` clause.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Clause {
    field: Field,
    op: Op,
    bound: f64,
}

/// A condition: clauses that must all hold (`min > 1.05 and passes < 2`).
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    text: String,
    clauses: Vec<Clause>,
}

impl Condition {
    /// Parses `text`: clauses `<field> <op> <number>` joined by `and`, fields `median`, `min`,
    /// `max` (the deciding number over seeds), `passes`, `fails`, `seeds`; ops `<`, `<=`, `>`,
    /// `>=`.
    ///
    /// # Errors
    /// Naming the clause that does not parse.
    pub fn parse(text: &str) -> Result<Self> {
        let mut clauses = Vec::new();
        for part in text.split(" and ") {
            let words: Vec<&str> = part.split_whitespace().collect();
            let [field, op, bound] = words[..] else {
                bail!("condition clause {part:?} is not `<field> <op> <number>`");
            };
            let Some(field) = Field::parse(field) else {
                bail!(
                    "condition clause {part:?}: {field:?} is not one of {:?}",
                    Field::ALL.map(|(w, _)| w)
                );
            };
            let op = match op {
                "<" => Op::Lt,
                "<=" => Op::Le,
                ">" => Op::Gt,
                ">=" => Op::Ge,
                _ => bail!("condition clause {part:?}: {op:?} is not one of <, <=, >, >="),
            };
            let Ok(bound) = bound.parse::<f64>() else {
                bail!("condition clause {part:?}: {bound:?} is not a number");
            };
            clauses.push(Clause { field, op, bound });
        }
        Ok(Condition {
            text: text.to_string(),
            clauses,
        })
    }

    /// Whether every clause holds for `stats`; a clause on a number the claim lacks fails.
    pub fn holds(&self, stats: &ClaimStats) -> bool {
        self.clauses.iter().all(|c| {
            stats.number(c.field).is_some_and(|x| match c.op {
                Op::Lt => x < c.bound,
                Op::Le => x <= c.bound,
                Op::Gt => x > c.bound,
                Op::Ge => x >= c.bound,
            })
        })
    }

    /// The condition as written, with this run's value of each field it reads:
    /// `min > 1.05 (min 0.981)`.
    pub fn describe(&self, stats: &ClaimStats) -> String {
        let mut seen: Vec<Field> = Vec::new();
        for c in &self.clauses {
            if !seen.contains(&c.field) {
                seen.push(c.field);
            }
        }
        let values: Vec<String> = seen
            .iter()
            .map(|f| {
                let name = Field::ALL
                    .iter()
                    .find(|(_, g)| g == f)
                    .map_or("?", |(w, _)| w);
                format!("{name} {}", number(stats.number(*f)))
            })
            .collect();
        format!("`{}` ({})", self.text, values.join(", "))
    }
}

fn number(x: Option<f64>) -> String {
    match x {
        Some(x) if x.fract() == 0.0 && x.abs() < 1e9 => format!("{x:.0}"),
        Some(x) => format!("{x:.3}"),
        None => "none".into(),
    }
}

/// `why` with each placeholder (`{median}`, `{min}`, `{max}`, `{passes}`, `{fails}`, `{seeds}`)
/// replaced by this run's value.
pub fn render(why: &str, stats: &ClaimStats) -> String {
    let mut out = why.to_string();
    for (word, field) in Field::ALL {
        out = out.replace(&format!("{{{word}}}"), &number(stats.number(field)));
    }
    out
}

/// Checks that every `{...}` in `why` is a known placeholder.
///
/// # Errors
/// Naming the unknown placeholder.
pub fn check_placeholders(why: &str) -> Result<()> {
    let mut rest = why;
    while let Some(i) = rest.find('{') {
        let Some(j) = rest[i..].find('}') else {
            bail!("why has an unclosed {{ at {:?}", &rest[i..]);
        };
        let word = &rest[i + 1..i + j];
        if Field::parse(word).is_none() {
            bail!(
                "why names {{{word}}}, not one of {:?}",
                Field::ALL.map(|(w, _)| w)
            );
        }
        rest = &rest[i + j + 1..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(median: f64, min: f64, max: f64, passes: usize, seeds: usize) -> ClaimStats {
        ClaimStats {
            median: Some(median),
            min: Some(min),
            max: Some(max),
            passes,
            seeds,
        }
    }

    #[test]
    fn clauses_all_hold_or_the_condition_fails() {
        let c = Condition::parse("min > 1.05 and passes < 2").unwrap();
        assert!(c.holds(&stats(1.2, 1.1, 1.3, 0, 3)));
        assert!(!c.holds(&stats(1.2, 1.0, 1.3, 0, 3)));
        assert!(!c.holds(&stats(1.2, 1.1, 1.3, 2, 3)));
        let none = ClaimStats {
            median: None,
            min: None,
            max: None,
            passes: 0,
            seeds: 3,
        };
        assert!(!c.holds(&none), "a clause on a missing number fails");
        assert!(Condition::parse("fails >= 3").unwrap().holds(&none));
        assert_eq!(
            c.describe(&stats(1.2, 1.0, 1.3, 0, 3)),
            "`min > 1.05 and passes < 2` (min 1, passes 0)"
        );
    }

    #[test]
    fn bad_conditions_are_refused_naming_the_clause() {
        for (text, says) in [
            ("min >", "is not `<field> <op> <number>`"),
            ("mean > 1", "\"mean\" is not one of"),
            ("min == 1", "\"==\" is not one of"),
            ("min > x", "\"x\" is not a number"),
        ] {
            let e = Condition::parse(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn the_why_quotes_this_runs_numbers() {
        let s = stats(1.2346, 1.1, 1.3, 1, 5);
        assert_eq!(
            render("ratio {median} ({min}-{max}), {fails} of {seeds} fail", &s),
            "ratio 1.235 (1.100-1.300), 4 of 5 fail"
        );
        assert!(check_placeholders("a {median} b").is_ok());
        assert!(check_placeholders("a {mean} b").is_err());
        assert!(check_placeholders("a {median b").is_err());
    }
}
