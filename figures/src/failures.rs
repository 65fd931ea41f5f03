//! Failing claims grouped for a reader: the papers' claims apart from the harness's own
//! checks, each group by class (`claims.csv`'s `kind`, `class` and `why` columns), and the
//! failures nobody has explained listed on their own. `figures explained` exits non-zero on
//! those, so CI cannot land a failure without its class and evidence.

use crate::table::Table;
use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;

/// The classes in the order the report lists them (bench-core's `FailureClass` words).
pub const CLASSES: [&str; 4] = [
    "not reproduced",
    "model differs",
    "paper inconsistent",
    "machine limit",
];

/// One failing claim as its figure's claims.csv reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// Figure id.
    pub figure: String,
    /// Claim id.
    pub claim_id: String,
    /// `paper`, `harness`, `invariant` or `model check` (`paper` when the column is missing: an
    /// older claims.csv).
    pub kind: String,
    /// The class, empty when unexplained.
    pub class: String,
    /// The evidence, empty when unexplained.
    pub why: String,
    /// What the run measured.
    pub measured: String,
}

impl Failure {
    /// Whether it carries a known class and a why. A failing invariant is a bug, never
    /// explained.
    pub fn explained(&self) -> bool {
        !self.is_invariant()
            && CLASSES.contains(&self.class.as_str())
            && !self.why.trim().is_empty()
    }

    /// Whether the failing claim is an invariant of the code (a bound or theorem it enforces).
    pub fn is_invariant(&self) -> bool {
        self.kind == "invariant"
    }
}

/// The failing claims of one figure's claims.csv.
///
/// # Errors
/// When the file cannot be read or lacks its basic columns.
pub fn read(figure: &str, claims: &Path) -> Result<Vec<Failure>> {
    let t = Table::read(claims)?;
    let opt = |i: usize, name: &str| -> Result<String> {
        Ok(if t.has(name) {
            t.str(i, name)?.to_string()
        } else {
            String::new()
        })
    };
    let mut out = Vec::new();
    for i in 0..t.len() {
        if t.str(i, "verdict")? != "fail" {
            continue;
        }
        let kind = opt(i, "kind")?;
        out.push(Failure {
            figure: figure.to_string(),
            claim_id: t.str(i, "claim_id")?.to_string(),
            kind: if kind.is_empty() {
                "paper".into()
            } else {
                kind
            },
            class: opt(i, "class")?,
            why: opt(i, "why")?,
            measured: t.str(i, "measured_value")?.to_string(),
        });
    }
    Ok(out)
}

/// Every failure under `results` (each figure directory's claims.csv), in figure order.
///
/// # Errors
/// When a claims.csv cannot be read.
pub fn collect(results: &Path) -> Result<Vec<Failure>> {
    let mut out = Vec::new();
    for f in crate::figs::ALL.iter().chain(crate::figs::BENCHES) {
        let path = results.join(f.id).join("claims.csv");
        if path.exists() {
            out.extend(read(f.id, &path)?);
        }
    }
    Ok(out)
}

fn md(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The report's failure section: paper claims, then harness checks, each by class, then the
/// unexplained ones.
pub fn section(failures: &[Failure]) -> Result<String> {
    let mut s = String::new();
    if failures.is_empty() {
        return Ok(s);
    }
    writeln!(
        s,
        "## Failures by class\n\n\
         Every failing claim with its class and one line of evidence (`claims.csv`'s `class` and `why`, \
         from `experiments/failures.toml`). Classes: _not reproduced_ (the paper's result does not \
         reproduce on a model that follows the paper), _model differs_ (our model differs from the \
         paper's system where it decides the claim), _paper inconsistent_ (the paper contradicts \
         itself), _machine limit_ (this machine, not the algorithm).\n"
    )?;
    let violated: Vec<&Failure> = failures.iter().filter(|f| f.is_invariant()).collect();
    if !violated.is_empty() {
        writeln!(
            s,
            "### Invariants violated ({})\n\nA bound or theorem the code enforces did not hold: \
             a bug in the code, not a finding about a paper (`figures explained` fails on it).\n\n\
             | claim | measured |\n|---|---|",
            violated.len()
        )?;
        for f in violated {
            writeln!(s, "| `{}` | {} |", md(&f.claim_id), md(&f.measured))?;
        }
        writeln!(s)?;
    }
    for (kind, title) in [
        ("paper", "The papers' claims"),
        ("harness", "The harness's own checks"),
        ("model check", "Checks of our model"),
    ] {
        let of_kind: Vec<&Failure> = failures
            .iter()
            .filter(|f| f.kind == kind && f.explained())
            .collect();
        if of_kind.is_empty() {
            continue;
        }
        writeln!(s, "### {title} ({} failing)\n", of_kind.len())?;
        for class in CLASSES {
            let rows: Vec<&&Failure> = of_kind.iter().filter(|f| f.class == class).collect();
            if rows.is_empty() {
                continue;
            }
            writeln!(
                s,
                "**{class}** ({})\n\n| claim | why | measured |\n|---|---|---|",
                rows.len()
            )?;
            for f in rows {
                writeln!(
                    s,
                    "| `{}` | {} | {} |",
                    md(&f.claim_id),
                    md(&f.why),
                    md(&f.measured)
                )?;
            }
            writeln!(s)?;
        }
    }
    let unexplained: Vec<&Failure> = failures
        .iter()
        .filter(|f| !f.explained() && !f.is_invariant())
        .collect();
    if !unexplained.is_empty() {
        writeln!(
            s,
            "### Unexplained ({})\n\nFailing claims without a class and why: add them to \
             `experiments/failures.toml` with the evidence (`figures explained` fails until then).\n\n\
             | claim | measured |\n|---|---|",
            unexplained.len()
        )?;
        for f in unexplained {
            writeln!(s, "| `{}` | {} |", md(&f.claim_id), md(&f.measured))?;
        }
        writeln!(s)?;
    }
    Ok(s)
}

/// `figures explained`: the unexplained failures under `results`, one per line on stdout, and
/// an error when there is any.
///
/// # Errors
/// When an invariant fails, a failure has no class or why, or a claims.csv cannot be read.
pub fn check(results: &Path) -> Result<usize> {
    let all = collect(results)?;
    let violated: Vec<&Failure> = all.iter().filter(|f| f.is_invariant()).collect();
    for f in &violated {
        println!("{} (invariant violated): {}", f.claim_id, f.measured);
    }
    if !violated.is_empty() {
        anyhow::bail!(
            "{} invariant(s) violated under {}: a bound or theorem the code enforces did not hold, which is a bug in the code (not explainable in experiments/failures.toml)",
            violated.len(),
            results.display()
        );
    }
    let unexplained: Vec<&Failure> = all.iter().filter(|f| !f.explained()).collect();
    for f in &unexplained {
        println!("{}: {}", f.claim_id, f.measured);
    }
    if !unexplained.is_empty() {
        anyhow::bail!(
            "{} of {} failing claims under {} have no class or why: explain each in experiments/failures.toml (class and one line of evidence), or fix the claim",
            unexplained.len(),
            all.len(),
            results.display()
        );
    }
    Ok(all.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_kind_and_class_and_names_the_unexplained() {
        let root = std::env::temp_dir().join(format!("syncbench-failures-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dir = root.join("asap-fig3");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("claims.csv"),
            "claim_id,statement,paper_value,measured_value,verdict,kind,class,why\n\
             asap-fig3/a,s,p,1.5,fail,paper,model differs,ours differs here\n\
             asap-fig3/b,s,p,2.5,fail,harness,machine limit,two shared cores\n\
             asap-fig3/c,s,p,3.5,fail,paper,,\n\
             asap-fig3/d,s,p,4.5,pass,paper,,\n",
        )
        .unwrap();
        let all = collect(&root).unwrap();
        assert_eq!(all.len(), 3);
        let s = section(&all).unwrap();
        let paper = s.find("### The papers' claims (1 failing)").unwrap();
        let harness = s.find("### The harness's own checks (1 failing)").unwrap();
        let unexplained = s.find("### Unexplained (1)").unwrap();
        assert!(paper < harness && harness < unexplained, "{s}");
        assert!(
            s.contains("**model differs** (1)")
                && s.contains("| `asap-fig3/a` | ours differs here | 1.5 |")
        );
        assert!(s.contains("| `asap-fig3/c` | 3.5 |"), "{s}");
        let e = check(&root).unwrap_err().to_string();
        assert!(e.contains("1 of 3 failing claims"), "{e}");
        // Explained, the check passes.
        std::fs::write(
            dir.join("claims.csv"),
            "claim_id,statement,paper_value,measured_value,verdict,kind,class,why\n\
             asap-fig3/a,s,p,1.5,fail,paper,model differs,ours differs here\n",
        )
        .unwrap();
        assert_eq!(check(&root).unwrap(), 1);
        // A failing invariant is a bug: listed apart, never explained, and the check fails.
        std::fs::write(
            dir.join("claims.csv"),
            "claim_id,statement,paper_value,measured_value,verdict,kind,class,why\n\
             asap-fig3/a,s,p,1.5,fail,paper,model differs,ours differs here\n\
             asap-fig3/e,s,p,7 > 5,fail,invariant,model differs,no excuse\n",
        )
        .unwrap();
        let all = collect(&root).unwrap();
        let s = section(&all).unwrap();
        assert!(
            s.contains("### Invariants violated (1)") && !s.contains("Unexplained"),
            "{s}"
        );
        let e = check(&root).unwrap_err().to_string();
        assert!(e.contains("1 invariant(s) violated"), "{e}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
