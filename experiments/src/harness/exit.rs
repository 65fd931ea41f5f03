//! How an experiment process ends: an error chain printed as one clear line and a non-zero exit
//! code instead of a backtrace, with SIGINT and SIGTERM handled ([`super::interrupt`]).

use super::interrupt;

/// Runs a binary's body, printing an error chain as one clear message and returning a non-zero
/// exit code instead of a backtrace. SIGINT and SIGTERM stop the run cleanly ([`interrupt`]).
pub fn main_with(body: impl FnOnce() -> anyhow::Result<()>) -> std::process::ExitCode {
    interrupt::install();
    match body() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_text(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

/// An error chain as one line, `context: cause: cause`, naming each cause once: a cause whose
/// text an outer message already includes (an error that prints its source, wrapped again) is
/// left out.
pub fn error_text(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_is_named_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory");
        let inner = anyhow::Error::new(io);
        let text = inner.to_string();
        let e = inner
            .context(format!("reading x.csv: {text}"))
            .context("cannot load the dataset");
        assert_eq!(
            error_text(&e),
            "cannot load the dataset: reading x.csv: No such file or directory"
        );
        let e = anyhow::anyhow!("root cause").context("outer");
        assert_eq!(error_text(&e), "outer: root cause");
    }
}
