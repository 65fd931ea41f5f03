//! How an experiment process ends: an error chain printed as one clear line and a non-zero exit
//! code instead of a backtrace, with SIGINT and SIGTERM handled ([`super::interrupt`]).

use super::interrupt;

/// Runs a binary's body, printing an error chain as one clear message and returning a non-zero
/// exit code instead of a backtrace. SIGINT and SIGTERM stop the run cleanly ([`interrupt`]).
pub fn main_with(body: impl FnOnce() -> anyhow::Result<()>) -> std::process::ExitCode {
    end_quietly_on_broken_pipe();
    interrupt::install();
    match body() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_text(&e));
            exit_code(&e)
        }
    }
}

/// A mistake in how a command was called, found after the flags parsed (a `--device` this
/// build has not, `--cnn` on a figure without a CNN version, a figure the binary does not
/// write): it exits 2, as clap's own usage errors do, where a failed run exits 1.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A usage error as an `anyhow` error (exit 2 through [`main_with`]).
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(message.into()))
}

/// Exit code 2 when any error of the chain is a [`UsageError`], else 1.
pub fn exit_code(e: &anyhow::Error) -> std::process::ExitCode {
    if e.chain().any(|c| c.is::<UsageError>()) {
        std::process::ExitCode::from(2)
    } else {
        std::process::ExitCode::FAILURE
    }
}

/// Restores the default action of SIGPIPE, which Rust's runtime ignores: a process whose
/// output pipe closed (`syncbench datasets list | head`) then ends quietly, as `cat` does,
/// instead of panicking at its next `println!` with a stack trace. Its partial results, if it
/// was writing any, are left for the next run of the figure to sweep (as after a kill).
pub fn end_quietly_on_broken_pipe() {
    // SAFETY: signal(2) with SIG_DFL installs no handler; it only sets the disposition, at
    // start-up, before any thread that could write to the pipe.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
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

    #[test]
    fn a_usage_error_exits_2_wherever_it_is_in_the_chain() {
        let e = usage("unknown device 'tpu'").context("seed 1");
        assert_eq!(exit_code(&e), std::process::ExitCode::from(2));
        assert_eq!(error_text(&e), "seed 1: unknown device 'tpu'");
        let e = anyhow::anyhow!("run failed");
        assert_eq!(exit_code(&e), std::process::ExitCode::FAILURE);
    }
}
