//! HTTP(S) download into a `.part` file that a later call resumes with a Range request.

use crate::error::{CoreError, Result};
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

/// How a download ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Downloaded {
    /// Bytes in the file now.
    pub bytes: u64,
    /// Bytes already there from an earlier, interrupted download.
    pub resumed_from: u64,
}

/// Total size from a `Content-Range: bytes a-b/total` header.
fn range_total(h: Option<&str>) -> Option<u64> {
    h?.rsplit('/').next()?.trim().parse().ok()
}

/// Downloads `url` into `part`, continuing after the bytes `part` already holds when the server
/// honours Range requests (and starting over when it does not). Calls `progress(done, total)`
/// as bytes arrive.
///
/// # Errors
/// [`CoreError::Dataset`] naming `name` for an HTTP error status, a connection failure, or a
/// body that ends before its announced length (the `.part` file is kept, so fetching again
/// resumes); [`CoreError::Io`] for local file errors.
pub fn download(
    name: &str,
    url: &str,
    part: &Path,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<Downloaded> {
    let err = |message: String| CoreError::Dataset {
        name: name.to_string(),
        message,
    };
    let have = std::fs::metadata(part).map(|m| m.len()).unwrap_or(0);
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(30))
        .timeout_read(Duration::from_secs(120))
        .build();
    let mut req = agent.get(url);
    if have > 0 {
        req = req.set("Range", &format!("bytes={have}-"));
    }
    let resp = match req.call() {
        Ok(r) => r,
        // Asking past the end of a complete file.
        Err(ureq::Error::Status(416, r)) if have > 0 => {
            let total = range_total(r.header("Content-Range"));
            if total == Some(have) {
                progress(have, Some(have));
                return Ok(Downloaded {
                    bytes: have,
                    resumed_from: have,
                });
            }
            // The partial file does not belong to this resource: start over.
            std::fs::remove_file(part).map_err(|e| CoreError::io(part, e))?;
            return download(name, url, part, progress);
        }
        Err(ureq::Error::Status(code, r)) => {
            return Err(err(format!(
                "{url} answered HTTP {code} {}",
                r.status_text()
            )))
        }
        Err(ureq::Error::Transport(t)) => {
            return Err(err(format!("cannot download {url}: {t}")));
        }
    };
    let content_length: Option<u64> = resp.header("Content-Length").and_then(|v| v.parse().ok());
    let (start, total) = if resp.status() == 206 && have > 0 {
        (
            have,
            range_total(resp.header("Content-Range")).or(content_length.map(|l| l + have)),
        )
    } else {
        (0, content_length)
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(start > 0)
        .truncate(start == 0)
        .open(part)
        .map_err(|e| CoreError::io(part, e))?;
    let mut reader = resp.into_reader();
    let mut buf = vec![0u8; 1 << 16];
    let mut done = start;
    progress(done, total);
    let outcome = loop {
        match reader.read(&mut buf) {
            Ok(0) => break Ok(()),
            Ok(n) => {
                file.write_all(&buf[..n])
                    .map_err(|e| CoreError::io(part, e))?;
                done += n as u64;
                progress(done, total);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    file.flush().map_err(|e| CoreError::io(part, e))?;
    let short = total.is_some_and(|t| done < t);
    if outcome.is_err() || short {
        return Err(err(format!(
            "download of {url} stopped after {done} of {} bytes{}; the partial file {} is kept and `syncbench datasets fetch {name}` resumes it",
            total.map_or("?".to_string(), |t| t.to_string()),
            outcome.err().map_or(String::new(), |e| format!(" ({e})")),
            part.display()
        )));
    }
    Ok(Downloaded {
        bytes: done,
        resumed_from: start,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_range_total() {
        assert_eq!(range_total(Some("bytes 10-99/100")), Some(100));
        assert_eq!(range_total(Some("bytes */100")), Some(100));
        assert_eq!(range_total(Some("bytes 0-1/*")), None);
        assert_eq!(range_total(None), None);
    }
}
