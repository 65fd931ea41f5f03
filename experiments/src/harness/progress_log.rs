//! Progress where stderr is not a terminal: a log file, `make reproduce-all`'s job logs, CI.
//! indicatif draws nothing there, so a long seed printed nothing for minutes (hop-table1 at paper
//! scale: 154-290 s). Every [`PROGRESS_SECONDS_ENV`] seconds (default 60) a line per unfinished
//! bar says how far it is, how long it has run and about how long is left, as the bar would.

use indicatif::{ProgressBar, WeakProgressBar};
use std::io::IsTerminal;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Seconds between progress lines on a stderr that is not a terminal (a decimal; 0: none).
pub const PROGRESS_SECONDS_ENV: &str = "SYNCBENCH_PROGRESS_SECONDS";
const DEFAULT_SECONDS: f64 = 60.0;

/// The bars being watched: weak, so that a bar dropped without being finished is forgotten.
static WATCHED: Mutex<Vec<WeakProgressBar>> = Mutex::new(Vec::new());

/// Watches `pb` when stderr is not a terminal: from then on it gets a line every interval
/// until it finishes. The first bar starts the one thread that writes the lines.
pub fn watch(pb: &ProgressBar) {
    if std::io::stderr().is_terminal() {
        return;
    }
    static EVERY: OnceLock<Option<Duration>> = OnceLock::new();
    let Some(every) = *EVERY.get_or_init(interval) else {
        return;
    };
    WATCHED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(pb.downgrade());
    static WRITER: OnceLock<()> = OnceLock::new();
    WRITER.get_or_init(|| {
        // No writer thread (the system refused one): no lines, the run goes on.
        let _ = std::thread::Builder::new()
            .name("progress-log".into())
            .spawn(move || loop {
                std::thread::sleep(every);
                write_lines();
            });
    });
}

/// The interval from [`PROGRESS_SECONDS_ENV`]; None for 0. A value that is not a number of
/// seconds from [`MIN_SECONDS`] to a day is said once and the default used: a progress line is
/// not worth failing a run for (nor flooding its log).
fn interval() -> Option<Duration> {
    match std::env::var(PROGRESS_SECONDS_ENV) {
        Err(_) => Some(Duration::from_secs_f64(DEFAULT_SECONDS)),
        Ok(v) => parse_interval(&v).unwrap_or_else(|| {
            eprintln!(
                "{PROGRESS_SECONDS_ENV}={v:?} is not 0 or a number of seconds from {MIN_SECONDS} to 86400: progress lines every {DEFAULT_SECONDS} s"
            );
            Some(Duration::from_secs_f64(DEFAULT_SECONDS))
        }),
    }
}

/// The shortest interval taken: below it the lines would flood the log.
const MIN_SECONDS: f64 = 0.01;

/// `Some(None)` for 0 (no lines), `Some(Some(d))` for an interval, None for anything else.
fn parse_interval(v: &str) -> Option<Option<Duration>> {
    let s = v.trim().parse::<f64>().ok()?;
    if s == 0.0 {
        return Some(None);
    }
    if !(MIN_SECONDS..=86_400.0).contains(&s) {
        return None;
    }
    Some(Some(Duration::from_secs_f64(s)))
}

/// One line per watched bar that is still running.
fn write_lines() {
    let lines = keep_running(&mut WATCHED.lock().unwrap_or_else(|e| e.into_inner()));
    for l in lines {
        eprintln!("{l}");
    }
}

/// Forgets the finished and dropped bars of `watched`; the lines of the others.
fn keep_running(watched: &mut Vec<WeakProgressBar>) -> Vec<String> {
    let mut lines = Vec::new();
    watched.retain(|w| match w.upgrade() {
        Some(pb) if !pb.is_finished() => {
            lines.push(line(&pb));
            true
        }
        _ => false,
    });
    lines
}

/// `<prefix> <message>: <pos>/<len> after <elapsed>, about <eta> left` (no estimate before the
/// first step is done).
fn line(pb: &ProgressBar) -> String {
    line_at(pb, pb.elapsed())
}

/// What is left at the mean pace so far: `elapsed / pos` per step for the `len - pos` steps
/// left. indicatif's own estimate weighs recent steps and decays while no step completes, so
/// with steps minutes long (a CNN run per mode) it read "about 15875148 min left" a few
/// minutes into a step.
fn left(elapsed: Duration, pos: u64, len: u64) -> Duration {
    elapsed.mul_f64(len.saturating_sub(pos) as f64 / pos.max(1) as f64)
}

fn line_at(pb: &ProgressBar, elapsed: Duration) -> String {
    let (pos, len) = (pb.position(), pb.length().unwrap_or(0));
    let what = [
        pb.prefix().trim().to_string(),
        pb.message().trim().to_string(),
    ]
    .into_iter()
    .filter(|s| !s.is_empty())
    .collect::<Vec<_>>()
    .join(" ");
    let left = if pos == 0 {
        "no estimate yet".to_string()
    } else {
        format!("about {} left", minutes_seconds(left(elapsed, pos, len)))
    };
    format!(
        "{what}: {pos}/{len} after {}, {left}",
        minutes_seconds(elapsed)
    )
}

/// `42 s`, `3 min 05 s`.
pub(crate) fn minutes_seconds(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s} s")
    } else {
        format!("{} min {:02} s", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_says_how_far_and_how_long_is_left() {
        let pb = ProgressBar::hidden();
        pb.set_length(10);
        pb.set_prefix("hop-table1 seed 2");
        assert_eq!(
            line(&pb),
            "hop-table1 seed 2: 0/10 after 0 s, no estimate yet"
        );
        pb.set_message("ring");
        pb.set_position(4);
        let l = line(&pb);
        assert!(l.starts_with("hop-table1 seed 2 ring: 4/10 after "), "{l}");
        assert!(l.contains(", about ") && l.ends_with(" left"), "{l}");
        // At the mean pace so far: 4 steps in 2 min, 6 left, 3 min.
        assert_eq!(
            line_at(&pb, Duration::from_secs(120)),
            "hop-table1 seed 2 ring: 4/10 after 2 min 00 s, about 3 min 00 s left"
        );
        assert_eq!(left(Duration::from_secs(60), 3, 3), Duration::ZERO);
    }

    #[test]
    fn intervals_outside_the_range_are_refused() {
        assert_eq!(parse_interval("0"), Some(None));
        assert_eq!(
            parse_interval(" 0.5 "),
            Some(Some(Duration::from_millis(500)))
        );
        for bad in ["soon", "-1", "1e-10", "1e20", "NaN", "inf", ""] {
            assert_eq!(parse_interval(bad), None, "{bad}");
        }
    }

    #[test]
    fn durations_read_as_minutes_and_seconds() {
        assert_eq!(minutes_seconds(Duration::from_secs(42)), "42 s");
        assert_eq!(minutes_seconds(Duration::from_secs(185)), "3 min 05 s");
    }

    #[test]
    fn finished_and_dropped_bars_get_no_line() {
        let running = ProgressBar::hidden();
        running.set_length(3);
        running.set_prefix("running");
        let finished = ProgressBar::hidden();
        finished.finish();
        let dropped = ProgressBar::hidden();
        let mut watched = vec![
            finished.downgrade(),
            running.downgrade(),
            dropped.downgrade(),
        ];
        drop(dropped);
        let lines = keep_running(&mut watched);
        assert_eq!(lines, ["running: 0/3 after 0 s, no estimate yet"]);
        assert_eq!(watched.len(), 1);
    }
}
