//! The CDS figures' claims from each delay's (synchronous, asynchronous) times: convergence
//! (the asynchronous variant faster at every delay, its speedup at the largest delay, its time
//! nearly flat over the delays) and waits (the asynchronous variant's wait flat, the
//! synchronous one's growing with the delay).

use super::*;
use crate::judge::format::show;
use crate::ExperimentOutput;
use bench_core::claims::Claim;

fn spread(v: &[f64]) -> f64 {
    let max = v.iter().copied().fold(f64::NAN, f64::max);
    let min = v.iter().copied().fold(f64::NAN, f64::min);
    (max - min) / min
}

/// The smallest of `v`, NaN when any is NaN (a comparison that could not be made).
fn least(v: impl IntoIterator<Item = f64>) -> f64 {
    v.into_iter().fold(f64::INFINITY, |m, x| {
        if m.is_nan() || x.is_nan() {
            f64::NAN
        } else {
            m.min(x)
        }
    })
}

/// The smallest step up from one delay to the next.
fn least_step(v: &[f64]) -> f64 {
    least(v.windows(2).map(|w| w[1] - w[0]))
}

/// The convergence figure's claims for one dataset (`tag`), from each delay's (synchronous,
/// asynchronous) time to target: the asynchronous variant faster at every delay, its speedup at
/// the largest delay, its time nearly independent of the delay, and both variants reaching the
/// target at every delay. A variant that never reaches the target loses to one that does.
pub(super) fn conv_claims(
    fig: &str,
    tag: &str,
    cfg: &CdsConfig,
    points: &[(Point, Point)],
    (s, a): (&str, &str),
) -> Vec<Claim> {
    let mut out = Vec::new();
    let pairs: Vec<String> = cfg
        .delays
        .iter()
        .zip(points)
        .map(|(d, (sp, ap))| {
            format!(
                "{:.0}%: {s} {} / {a} {}",
                d * 100.0,
                show(sp.time),
                show(ap.time)
            )
        })
        .collect();
    let faster = points.iter().all(|(sp, ap)| match (sp.time, ap.time) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(st), Some(at)) => at < st,
    });
    // The smallest speedup over the delays (a synchronous run that never gets there: no
    // bound; an asynchronous one: none to give).
    let least_speedup = least(points.iter().map(|(sp, ap)| match (sp.time, ap.time) {
        (Some(st), Some(at)) => st / at,
        (None, Some(_)) => f64::INFINITY,
        _ => f64::NAN,
    }));
    out.push(
        Claim::check(
            format!("{fig}/{tag}/{a}-faster-each-delay"),
            format!("{a} reaches the target error before {s} at every delay"),
            format!("{a} always faster"),
            pairs.join("; "),
            faster,
        )
        .with_value(least_speedup),
    );
    let (last_d, (sp, ap)) = (
        cfg.delays.last().copied().unwrap_or(0.0),
        points.last().expect("at least one delay"),
    );
    let speedup = match (sp.time, ap.time) {
        (Some(st), Some(at)) => st / at,
        (None, Some(_)) => f64::INFINITY,
        _ => 0.0,
    };
    out.push(
        Claim::check(
            format!("{fig}/{tag}/speedup-at-max-delay"),
            format!(
                "{a} speedup over {s} at {:.0}% delay >= {}",
                last_d * 100.0,
                cfg.min_speedup_at_max_delay
            ),
            "about 2x at 100%",
            format!("{speedup:.2}x"),
            speedup >= cfg.min_speedup_at_max_delay,
        )
        // A measured speedup only: not the stand-ins for a run that never got there.
        .with_value(if sp.time.is_some() && ap.time.is_some() {
            speedup
        } else {
            f64::NAN
        }),
    );
    let times: Vec<Option<f64>> = points.iter().map(|(_, ap)| ap.time).collect();
    let all: Option<Vec<f64>> = times.iter().copied().collect();
    let flat = all.as_deref().map_or(f64::NAN, spread);
    let (measured, ok) = match all {
        Some(t) => (
            format!(
                "{a} times {:?} s: spread {:.1}%",
                t.iter()
                    .map(|x| (x * 1000.0).round() / 1000.0)
                    .collect::<Vec<_>>(),
                spread(&t) * 100.0
            ),
            spread(&t) < cfg.flat_tolerance,
        ),
        None => (format!("{a} misses the target at some delay"), false),
    };
    out.push(
        Claim::check(
            format!("{fig}/{tag}/{a}-independent-of-delay"),
            format!(
                "{a} time-to-target varies < {:.0}% across delays",
                cfg.flat_tolerance * 100.0
            ),
            format!("{a} nearly independent of the delay"),
            measured,
            ok,
        )
        .with_value(flat),
    );
    // The papers' curves: both variants converge at every delay, the synchronous one later.
    let missed: Vec<String> = cfg
        .delays
        .iter()
        .zip(points)
        .flat_map(|(d, (sp, ap))| {
            [(s, sp), (a, ap)]
                .into_iter()
                .filter(|(_, p)| p.time.is_none())
                .map(move |(v, _)| format!("{v} at {:.0}%", d * 100.0))
        })
        .collect();
    let runs = 2 * points.len();
    out.push(
        Claim::check(
            format!("{fig}/{tag}/every-run-reaches-target"),
            format!("{s} and {a} reach the target error at every delay"),
            "every compared run converges in the paper's figure",
            if missed.is_empty() {
                format!("{} of {} runs reach it", 2 * points.len(), 2 * points.len())
            } else {
                format!("never: {}", missed.join(", "))
            },
            missed.is_empty() && !points.is_empty(),
        )
        .with_value(runs.saturating_sub(missed.len()) as f64 / runs.max(1) as f64),
    );
    out
}

pub(super) fn wait_claims(
    out: &mut ExperimentOutput,
    fig: &str,
    tag: &str,
    cfg: &CdsConfig,
    points: &[(Point, Point)],
    (s, a): (&str, &str),
) {
    let sw: Vec<f64> = points.iter().map(|(sp, _)| sp.wait).collect();
    let aw: Vec<f64> = points.iter().map(|(_, ap)| ap.wait).collect();
    let fmt = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    out.claim(
        Claim::check(
            format!("{fig}/{tag}/{s}-wait-grows"),
            format!("{s}'s mean wait increases monotonically with the delay"),
            "grows with the delay",
            format!("{s} waits {} ms at delays {:?}", fmt(&sw), cfg.delays),
            sw.windows(2).all(|w| w[1] > w[0]),
        )
        .with_value(least_step(&sw)),
    );
    let sp = spread(&aw);
    out.claim(
        Claim::check(
            format!("{fig}/{tag}/{a}-wait-flat"),
            format!(
                "{a}'s mean wait stays within {:.0}% across delays",
                cfg.flat_tolerance * 100.0
            ),
            "flat",
            format!("{a} waits {} ms: spread {:.1}%", fmt(&aw), sp * 100.0),
            sp < cfg.flat_tolerance,
        )
        .with_value(sp),
    );
    // async.txt: the difference "is more noticeable when the delay increases to 100%".
    let gap: Vec<f64> = sw.iter().zip(&aw).map(|(s, a)| s - a).collect();
    let grows = gap.windows(2).all(|w| w[1] > w[0])
        && gap.len() > 1
        && gap[gap.len() - 1] > 0.0
        && gap[0] <= 0.5 * gap[gap.len() - 1];
    // The smallest margin of the claim's conditions (ms): each step's growth, the largest
    // delay's gap, and half of it less the smallest delay's.
    let gap_margin = match (gap.first(), gap.last()) {
        (Some(&first), Some(&last)) if gap.len() > 1 => {
            least([least_step(&gap), last, 0.5 * last - first])
        }
        _ => f64::NAN,
    };
    out.claim(
        Claim::check(
            format!("{fig}/{tag}/wait-gap-grows"),
            format!(
                "{s}'s wait minus {a}'s grows at every delay step, the smallest delay's at most half the largest's"
            ),
            "the difference is more noticeable as the delay grows",
            format!("gap {} ms at delays {:?}", fmt(&gap), cfg.delays),
            grows,
        )
        .with_value(gap_margin),
    );
}
