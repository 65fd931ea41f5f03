//! The ranking over the run's seeds (`ranking.csv`): per straggler pattern, every mode's median
//! time to target over the baseline's, the statistic the mode-matrix heatmap draws. Each seed's
//! own ranking is its `seed-ranking.csv`.
//!
//! A seed whose baseline never reached the target in a pattern says nothing about the ratios
//! there and is left out of that pattern; in a seed where it did, a mode that never reached the
//! target counts as infinitely slow. The median of an even count is the mean of the middle two,
//! or the lower one when the upper is infinite (half the seeds reached the target); a median
//! that is infinite is empty (most seeds never reached it).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The columns of a seed's matrix.csv that the ranking reads.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct SeedCell {
    pub pattern: String,
    pub mode: String,
    pub time_to_target_s: Option<f64>,
    pub vs_baseline: Option<f64>,
}

/// One row of ranking.csv.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct MedianRankRow {
    pub pattern: String,
    /// 1 for the fastest median; modes with no finite median share the rank after the last
    /// one that has one.
    pub rank: usize,
    pub mode: String,
    /// The median over the compared seeds of time to target over the baseline's; empty when
    /// no seed compared or most never reached the target.
    pub vs_baseline_median: Option<f64>,
    /// Seeds in which this mode reached the target, of those compared.
    pub seeds_reached: usize,
    /// Seeds in which the baseline reached the target in this pattern (the ones compared).
    pub seeds_compared: usize,
    /// The run's seeds.
    pub seeds_run: usize,
}

/// See the module's doc for the rule.
fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let m = if n % 2 == 1 {
        v[n / 2]
    } else if v[n / 2].is_finite() {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    } else {
        v[n / 2 - 1]
    };
    Some(m).filter(|m| m.is_finite())
}

/// The ranking of `seeds` (each seed's matrix rows, in seed order): patterns and modes in the
/// first seed's order, each pattern's modes from the fastest median to the slowest (ties keep
/// that order).
pub(super) fn across_seeds(seeds: &[Vec<SeedCell>]) -> Vec<MedianRankRow> {
    let (mut patterns, mut modes) = (Vec::<String>::new(), Vec::<String>::new());
    // (pattern, mode) -> (ratios of the compared seeds, seeds reached)
    let mut cells: BTreeMap<(String, String), (Vec<f64>, usize)> = BTreeMap::new();
    let mut compared: BTreeMap<String, usize> = BTreeMap::new();
    for rows in seeds {
        for r in rows {
            if !patterns.contains(&r.pattern) {
                patterns.push(r.pattern.clone());
            }
            if !modes.contains(&r.mode) {
                modes.push(r.mode.clone());
            }
            cells
                .entry((r.pattern.clone(), r.mode.clone()))
                .or_default();
        }
        // the baseline reached the target in a pattern iff some row of it has a ratio (its own
        // row, 1, at least)
        let reached: Vec<&str> = patterns
            .iter()
            .filter(|p| {
                rows.iter()
                    .any(|r| &r.pattern == *p && r.vs_baseline.is_some())
            })
            .map(String::as_str)
            .collect();
        for p in &reached {
            *compared.entry((*p).to_string()).or_default() += 1;
        }
        for r in rows {
            if !reached.contains(&r.pattern.as_str()) {
                continue;
            }
            let cell = cells
                .entry((r.pattern.clone(), r.mode.clone()))
                .or_default();
            match (r.vs_baseline, r.time_to_target_s) {
                (Some(v), _) => {
                    cell.0.push(v);
                    cell.1 += 1;
                }
                (None, None) => cell.0.push(f64::INFINITY),
                // reached, but the baseline's time was 0: no ratio, nothing to count
                (None, Some(_)) => {}
            }
        }
    }
    let mut out = Vec::new();
    for p in &patterns {
        let mut rows: Vec<MedianRankRow> = modes
            .iter()
            .filter_map(|m| {
                let (ratios, reached) = cells.get(&(p.clone(), m.clone()))?;
                Some(MedianRankRow {
                    pattern: p.clone(),
                    rank: 0,
                    mode: m.clone(),
                    vs_baseline_median: median(ratios.clone()),
                    seeds_reached: *reached,
                    seeds_compared: compared.get(p).copied().unwrap_or(0),
                    seeds_run: seeds.len(),
                })
            })
            .collect();
        rows.sort_by(|a, b| {
            let key = |r: &MedianRankRow| r.vs_baseline_median.unwrap_or(f64::INFINITY);
            key(a).total_cmp(&key(b))
        });
        let finite = rows
            .iter()
            .filter(|r| r.vs_baseline_median.is_some())
            .count();
        for (i, r) in rows.iter_mut().enumerate() {
            r.rank = if r.vs_baseline_median.is_some() {
                i + 1
            } else {
                finite + 1
            };
        }
        out.extend(rows);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(pattern: &str, mode: &str, t: Option<f64>, v: Option<f64>) -> SeedCell {
        SeedCell {
            pattern: pattern.into(),
            mode: mode.into(),
            time_to_target_s: t,
            vs_baseline: v,
        }
    }

    #[test]
    fn the_median_over_seeds_ranks_the_modes_and_a_mode_that_never_reached_counts_as_slow() {
        // seed 1: asp 0.5x, ssp 2x; seed 2: asp 0.7x, ssp never; seed 3: asp 0.6x, ssp 1.5x
        let seed = |asp: f64, ssp: Option<f64>| {
            vec![
                cell("slow", "bsp", Some(2.0), Some(1.0)),
                cell("slow", "asp", Some(2.0 * asp), Some(asp)),
                cell("slow", "ssp", ssp.map(|s| 2.0 * s), ssp),
            ]
        };
        let r = across_seeds(&[seed(0.5, Some(2.0)), seed(0.7, None), seed(0.6, Some(1.5))]);
        let got: Vec<(&str, usize, Option<f64>, usize)> = r
            .iter()
            .map(|r| {
                (
                    r.mode.as_str(),
                    r.rank,
                    r.vs_baseline_median,
                    r.seeds_reached,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("asp", 1, Some(0.6), 3),
                ("bsp", 2, Some(1.0), 3),
                // 1.5, 2, inf: the median is 2
                ("ssp", 3, Some(2.0), 2),
            ]
        );
        assert!(r.iter().all(|r| r.seeds_compared == 3 && r.seeds_run == 3));
    }

    #[test]
    fn seeds_whose_baseline_never_reached_are_left_out_and_an_infinite_median_is_empty() {
        let s1 = vec![
            cell("p", "bsp", Some(1.0), Some(1.0)),
            cell("p", "asp", None, None),
        ];
        let s2 = vec![
            cell("p", "bsp", None, None),
            cell("p", "asp", Some(0.5), None),
        ];
        let r = across_seeds(&[s1.clone(), s2]);
        assert_eq!(r[0].mode, "bsp");
        assert_eq!((r[0].rank, r[0].vs_baseline_median), (1, Some(1.0)));
        assert_eq!((r[1].rank, r[1].vs_baseline_median), (2, None));
        assert_eq!(
            (r[1].seeds_reached, r[1].seeds_compared, r[1].seeds_run),
            (0, 1, 2)
        );
        // an even count with the upper middle infinite takes the lower one
        let s3 = vec![
            cell("p", "bsp", Some(1.0), Some(1.0)),
            cell("p", "asp", Some(0.8), Some(0.8)),
        ];
        let r = across_seeds(&[s1, s3]);
        let asp = r.iter().find(|r| r.mode == "asp").unwrap();
        assert_eq!((asp.rank, asp.vs_baseline_median), (1, Some(0.8)));
    }

    #[test]
    fn one_seed_ranks_by_its_own_ratios() {
        let r = across_seeds(&[vec![
            cell("a", "bsp", Some(4.0), Some(1.0)),
            cell("a", "asp", Some(2.0), Some(0.5)),
            cell("b", "bsp", Some(4.0), Some(1.0)),
            cell("b", "asp", None, None),
        ]]);
        let got: Vec<(&str, &str, usize)> = r
            .iter()
            .map(|r| (r.pattern.as_str(), r.mode.as_str(), r.rank))
            .collect();
        assert_eq!(
            got,
            [
                ("a", "asp", 1),
                ("a", "bsp", 2),
                ("b", "bsp", 1),
                ("b", "asp", 2)
            ]
        );
    }
}
