//! Sensitivity of verdicts to modelling knobs: a figure whose verdicts depend on a knob the papers
//! do not pin down (jitter, read granularity, step size, bandwidth, aggregation) re-derives its
//! claims over a small grid of that knob and writes `sensitivity.csv` beside its claims: one row
//! per (setting, claim) with the verdict there. REPORT.md then says which verdicts hold over the
//! whole grid and which flip.
//!
//! The grid runs on the first seed only (the headline runs carry the several-seed verdict);
//! the headline setting is one of the grid's rows, marked `headline = true`. So
//! `sensitivity.csv` belongs to the run's first seed: a seed run first writes it, the same seed
//! run second in a multi-seed run does not (the one exception to "a seed's bytes are the same
//! whichever way its seeds ran").

use crate::harness::output::ExperimentOutput;
use anyhow::Result;
use bench_core::claims::{Claim, Verdict};
use serde::Serialize;

/// One claim's verdict at one setting of the knobs.
#[derive(Debug, Clone, Serialize)]
pub struct SensitivityRow {
    /// The knobs' values, `knob=value` joined by `; `.
    pub setting: String,
    /// Whether this is the setting of the figure's own configuration.
    pub headline: bool,
    /// The claim.
    pub claim_id: String,
    /// Its verdict at this setting.
    pub verdict: Verdict,
    /// What was measured there.
    pub measured_value: String,
}

/// A knob's grid: `extra` values with the `configured` one, sorted, without repeats.
pub fn grid(extra: &[f64], configured: f64) -> Vec<f64> {
    let mut v = extra.to_vec();
    v.push(configured);
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// One knob of a two-knob grid: its name in `sensitivity.csv`, its values (from [`grid`] for a
/// number, so they hold the configured one) and its configured value.
#[derive(Debug, Clone, Copy)]
pub struct Knob<'a, T = f64> {
    /// Name in `sensitivity.csv`.
    pub name: &'static str,
    /// Values tried.
    pub values: &'a [T],
    /// The configuration's value.
    pub configured: T,
}

/// A value a knob takes: compared with the configured one, and written into the setting.
pub trait KnobValue: Copy + PartialEq {
    /// The value as `sensitivity.csv`'s setting writes it.
    fn setting(&self) -> String;
}

impl KnobValue for f64 {
    fn setting(&self) -> String {
        self.to_string()
    }
}

/// The points of a two-knob grid, as [`Sensitivity::sweep`] takes them: the setting, whether it
/// is the configured one, and the two values. Every combination of the knobs' values (in their
/// order, the first knob's the outer loop), or with `one_at_a_time` only those where at most one
/// knob differs from its configured value (the sweep then costs `|a| + |b| - 1` settings
/// instead of `|a| * |b|`). Every figure's grid comes from here.
pub fn two_knob_points<A: KnobValue, B: KnobValue>(
    a: Knob<'_, A>,
    b: Knob<'_, B>,
    one_at_a_time: bool,
) -> Vec<(Setting<'static>, bool, (A, B))> {
    let mut points = Vec::new();
    for &x in a.values {
        for &y in b.values {
            let (x_home, y_home) = (x == a.configured, y == b.configured);
            if one_at_a_time && !x_home && !y_home {
                continue;
            }
            let setting = vec![(a.name, x.setting()), (b.name, y.setting())];
            points.push((setting, x_home && y_home, (x, y)));
        }
    }
    points
}

/// A grid setting: `(knob, value)` pairs.
pub type Setting<'a> = Vec<(&'a str, String)>;

/// The grid's rows, in the order they were recorded.
#[derive(Debug, Default)]
pub struct Sensitivity {
    rows: Vec<SensitivityRow>,
}

impl Sensitivity {
    /// Records `claims` as derived at `setting` (`(knob, value)` pairs).
    pub fn record(&mut self, setting: &[(&str, String)], headline: bool, claims: &[Claim]) {
        let setting = setting
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        self.rows.extend(claims.iter().map(|c| SensitivityRow {
            setting: setting.clone(),
            headline,
            claim_id: c.claim_id.clone(),
            verdict: c.verdict,
            measured_value: c.measured_value.clone(),
        }));
    }

    /// Derives the claims at every point of a grid (`(setting, is the headline, point)`), with
    /// a progress bar named `what`; the headline point takes `headline`'s claims instead of
    /// running again. `parallel`: every run `derive` makes is a simulator run, so the points
    /// may share the cores ([`crate::harness::parallel::map_runs`]).
    ///
    /// # Errors
    /// The first error of `derive`.
    pub fn sweep<P: Sync>(
        what: &str,
        parallel: bool,
        points: Vec<(Setting<'_>, bool, P)>,
        headline: &[Claim],
        derive: impl Fn(&P, &[(&str, String)]) -> Result<Vec<Claim>> + Sync,
    ) -> Result<Self> {
        let mut out = Sensitivity::default();
        let pb = crate::harness::output::progress(points.len() as u64, what);
        // Points of simulator runs (`parallel`) share the cores; the claims are recorded in
        // grid order either way.
        let derived = crate::harness::parallel::map_runs(
            parallel,
            &points,
            |(setting, is_headline, point)| {
                let claims = if *is_headline {
                    None
                } else {
                    Some(derive(point, setting)?)
                };
                pb.inc(1);
                Ok(claims)
            },
        )?;
        for ((setting, _, _), claims) in points.iter().zip(derived) {
            match claims {
                None => out.record(setting, true, headline),
                Some(claims) => out.record(setting, false, &claims),
            }
        }
        pb.finish_and_clear();
        Ok(out)
    }

    /// The rows.
    pub fn rows(&self) -> &[SensitivityRow] {
        &self.rows
    }

    /// Claims whose verdict is not the same at every setting, with the settings where each
    /// passes.
    pub fn fragile(&self) -> Vec<(String, Vec<String>)> {
        let mut ids: Vec<&str> = self.rows.iter().map(|r| r.claim_id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.into_iter()
            .filter_map(|id| {
                let rows: Vec<&SensitivityRow> =
                    self.rows.iter().filter(|r| r.claim_id == id).collect();
                let first = rows[0].verdict;
                rows.iter().any(|r| r.verdict != first).then(|| {
                    (
                        id.to_string(),
                        rows.iter()
                            .filter(|r| r.verdict == Verdict::Pass)
                            .map(|r| r.setting.clone())
                            .collect(),
                    )
                })
            })
            .collect()
    }

    /// The manifest's summary of [`Self::fragile`]: each claim that flips, with the settings
    /// where it passes ("none" when every verdict holds over the grid).
    pub fn fragile_note(&self) -> String {
        let fragile = self.fragile();
        if fragile.is_empty() {
            return "none".into();
        }
        fragile
            .iter()
            .map(|(id, at)| {
                let at = if at.is_empty() {
                    "none".to_string()
                } else {
                    at.join(" | ")
                };
                format!("{id} (passes at: {at})")
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Writes `sensitivity.csv` to `out`, its claim ids as `out` writes them (a variant's
    /// renamed).
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write(&self, out: &ExperimentOutput) -> Result<()> {
        let rows: Vec<SensitivityRow> = self
            .rows
            .iter()
            .map(|r| SensitivityRow {
                claim_id: out.written_id(&r.claim_id),
                ..r.clone()
            })
            .collect();
        out.csv("sensitivity.csv", &rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_two_knob_grid_crosses_its_knobs_or_varies_one_at_a_time() {
        let a = Knob {
            name: "a",
            values: &[1.0, 2.0, 3.0],
            configured: 2.0,
        };
        let b = Knob {
            name: "b",
            values: &[0.1, 0.5],
            configured: 0.1,
        };
        let all = two_knob_points(a, b, false);
        assert_eq!(all.len(), 6);
        assert_eq!(all.iter().filter(|p| p.1).count(), 1);
        assert!(all.iter().any(|p| p.1 && p.2 == (2.0, 0.1)));
        assert!(all.iter().any(|p| !p.1 && p.2 == (3.0, 0.5)));
        let alone = two_knob_points(a, b, true);
        let values: Vec<(f64, f64)> = alone.iter().map(|p| p.2).collect();
        assert_eq!(values, vec![(1.0, 0.1), (2.0, 0.1), (2.0, 0.5), (3.0, 0.1)]);
        assert_eq!(
            alone[2].0,
            vec![("a", "2".to_string()), ("b", "0.5".to_string())]
        );
    }

    #[test]
    fn a_claim_that_flips_is_fragile_and_one_that_holds_is_not() {
        let mut s = Sensitivity::default();
        let claims = |a: bool, b: bool| {
            vec![
                Claim::check("f/a", "a", "-", "x", a),
                Claim::check("f/b", "b", "-", "y", b),
            ]
        };
        s.record(&[("jitter", "0.1".into())], true, &claims(true, true));
        s.record(&[("jitter", "0.3".into())], false, &claims(false, true));
        assert_eq!(s.rows().len(), 4);
        assert_eq!(s.rows()[0].setting, "jitter=0.1");
        assert_eq!(
            s.fragile(),
            vec![("f/a".to_string(), vec!["jitter=0.1".to_string()])]
        );
        assert_eq!(s.fragile_note(), "f/a (passes at: jitter=0.1)");
    }
}
