//! Fetching datasets against a local HTTP server started by the test (this machine has no
//! internet): a clean fetch, a truncated download resumed with a Range request, a checksum
//! mismatch moved aside and never handed to an experiment, pinning, and a corrupt archive that
//! leaves no partial cache entry.

use bench_core::data::{
    digest_file, pin_in_text, CacheStatus, Checksum, Compression, DatasetCache, DatasetEntry,
    DatasetLock,
};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What the server saw and how it misbehaves.
#[derive(Default)]
struct Script {
    /// Close the connection after this many body bytes on the first request.
    truncate_first_at: Option<usize>,
    /// Range headers received, in order ("" for none).
    ranges: Vec<String>,
}

/// Serves `body` at any path, honouring `Range: bytes=N-`.
fn serve(body: Vec<u8>, script: Arc<Mutex<Script>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut range = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let l = line.trim_end();
                if l.is_empty() {
                    break;
                }
                if let Some(v) = l.to_ascii_lowercase().strip_prefix("range: bytes=") {
                    range = v.trim_end_matches('-').to_string();
                }
            }
            let cut = {
                let mut s = script.lock().unwrap();
                s.ranges.push(range.clone());
                if s.ranges.len() == 1 {
                    s.truncate_first_at
                } else {
                    None
                }
            };
            let start: usize = range.parse().unwrap_or(0);
            let head = if start >= body.len() && !range.is_empty() {
                let h = format!(
                    "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                stream.write_all(h.as_bytes()).unwrap();
                continue;
            } else if range.is_empty() {
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
            } else {
                format!(
                    "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {}-{}/{}\r\nConnection: close\r\n\r\n",
                    body.len() - start,
                    start,
                    body.len() - 1,
                    body.len()
                )
            };
            let _ = stream.write_all(head.as_bytes());
            let payload = &body[start..];
            let payload = match cut {
                Some(n) => &payload[..n.min(payload.len())],
                None => payload,
            };
            let _ = stream.write_all(payload);
            let _ = stream.flush();
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    });
    format!("http://{addr}")
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("syncbench-fetch-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn sha256(bytes: &[u8], dir: &Path) -> String {
    let p = dir.join("hash-me");
    std::fs::write(&p, bytes).unwrap();
    digest_file(&p).unwrap().sha256
}

fn entry(base: &str, checksum: Checksum, bytes: Option<u64>) -> DatasetEntry {
    DatasetEntry {
        name: "tiny".into(),
        url: format!("{base}/files/tiny.svm.gz"),
        bytes,
        checksum,
        compression: Compression::Gz,
        format: "libsvm".into(),
        rows: Some(2),
        features: Some(3),
        nnz: None,
        classes: Some(2),
        source: "test".into(),
        licence: "test".into(),
        used_by: vec![],
    }
}

const TEXT: &[u8] = b"+1 1:0.5 3:1\n-1 2:2\n";

#[test]
fn fetch_verifies_unpacks_and_hands_out_the_path() {
    let dir = tmpdir("ok");
    let body = gz(&TEXT.repeat(2000));
    let sum = sha256(&body, &dir);
    let base = serve(body.clone(), Arc::default());
    let cache = DatasetCache::at(dir.join("cache"));
    let e = entry(
        &base,
        Checksum::Sha256(sum.clone()),
        Some(body.len() as u64),
    );
    assert_eq!(cache.status(&e), CacheStatus::Missing);
    assert!(cache
        .path(&e)
        .unwrap_err()
        .to_string()
        .contains("datasets fetch tiny"));
    let mut last = (0, None);
    let r = cache.fetch(&e, &mut |d, t| last = (d, t)).unwrap();
    assert_eq!(last, (body.len() as u64, Some(body.len() as u64)));
    assert_eq!(
        (r.bytes, r.resumed_from, r.unpinned),
        (body.len() as u64, 0, false)
    );
    assert_eq!(r.digest.sha256, sum);
    assert_eq!(r.path, cache.root().join("tiny/data/tiny.svm"));
    assert_eq!(std::fs::read(&r.path).unwrap(), TEXT.repeat(2000));
    assert_eq!(cache.path(&e).unwrap(), r.path);
    assert_eq!(cache.status(&e), CacheStatus::Ready(r.path.clone()));
    // Verify re-hashes the download and keeps the data.
    assert_eq!(cache.verify(&e).unwrap().digest.sha256, sum);
}

#[test]
fn a_truncated_download_is_resumed_with_a_range_request() {
    let dir = tmpdir("resume");
    let body = gz(&TEXT.repeat(5000));
    let sum = sha256(&body, &dir);
    let script = Arc::new(Mutex::new(Script {
        truncate_first_at: Some(body.len() / 3),
        ..Script::default()
    }));
    let base = serve(body.clone(), script.clone());
    let cache = DatasetCache::at(dir.join("cache"));
    let e = entry(&base, Checksum::Sha256(sum), Some(body.len() as u64));
    let err = cache.fetch(&e, &mut |_, _| {}).unwrap_err().to_string();
    assert!(
        err.contains(&format!(
            "stopped after {} of {} bytes",
            body.len() / 3,
            body.len()
        )),
        "{err}"
    );
    assert_eq!(
        cache.status(&e),
        CacheStatus::Partial((body.len() / 3) as u64)
    );
    assert!(
        cache.path(&e).is_err(),
        "a partial download is never handed out"
    );
    let r = cache.fetch(&e, &mut |_, _| {}).unwrap();
    assert_eq!(r.resumed_from, (body.len() / 3) as u64);
    assert_eq!(std::fs::read(&r.path).unwrap(), TEXT.repeat(5000));
    let ranges = script.lock().unwrap().ranges.clone();
    assert_eq!(ranges, vec![String::new(), (body.len() / 3).to_string()]);
}

#[test]
fn a_checksum_mismatch_is_moved_aside_and_never_used() {
    let dir = tmpdir("mismatch");
    let body = gz(TEXT);
    let base = serve(body.clone(), Arc::default());
    let cache = DatasetCache::at(dir.join("cache"));
    let wrong = "0".repeat(64);
    let e = entry(&base, Checksum::Sha256(wrong.clone()), None);
    let err = cache.fetch(&e, &mut |_, _| {}).unwrap_err().to_string();
    assert!(
        err.contains("checksum mismatch") && err.contains(&wrong),
        "{err}"
    );
    assert!(err.contains("tiny.svm.gz.rejected"), "{err}");
    assert!(cache.root().join("tiny/tiny.svm.gz.rejected").is_file());
    assert!(!cache.root().join("tiny/data").exists(), "nothing unpacked");
    assert!(cache.path(&e).is_err());
    assert_eq!(cache.status(&e), CacheStatus::Missing);
    // A size mismatch with no checksum is refused the same way.
    let dir2 = tmpdir("size");
    let cache2 = DatasetCache::at(dir2.join("cache"));
    let e2 = entry(&base, Checksum::Unpinned, Some(body.len() as u64 + 1));
    let err = cache2.fetch(&e2, &mut |_, _| {}).unwrap_err().to_string();
    assert!(err.contains("the lock expects"), "{err}");
}

#[test]
fn unpinned_datasets_are_fetched_then_pinned_once() {
    let dir = tmpdir("pin");
    let body = gz(TEXT);
    let sum = sha256(&body, &dir);
    let base = serve(body, Arc::default());
    let lock_path = dir.join("datasets.lock");
    let text = format!(
        "[[dataset]]\nname = \"tiny\"\nurl = \"{base}/tiny.svm.gz\"\nbytes = \"unknown\"\nchecksum = \"unpinned\"\ncompression = \"gz\"\nformat = \"libsvm\"\nsource = \"t\"\nlicence = \"t\"\n"
    );
    std::fs::write(&lock_path, &text).unwrap();
    let lock = DatasetLock::read(&lock_path).unwrap();
    let e = lock.get("tiny").unwrap();
    let cache = DatasetCache::at(dir.join("cache"));
    assert!(
        cache.download_digest(e).is_err(),
        "nothing to pin before a fetch"
    );
    let r = cache.fetch(e, &mut |_, _| {}).unwrap();
    assert!(r.unpinned);
    let d = cache.download_digest(e).unwrap();
    assert_eq!(d.sha256, sum);
    let pinned = pin_in_text(&text, &lock_path, "tiny", &d.sha256).unwrap();
    let relock = DatasetLock::parse(&pinned, &lock_path).unwrap();
    let e2 = relock.get("tiny").unwrap();
    assert_eq!(e2.checksum, Checksum::Sha256(sum.clone()));
    // The cache entry still matches the pinned lock.
    assert!(cache.path(e2).is_ok());
    assert!(pin_in_text(&pinned, &lock_path, "tiny", &sum)
        .unwrap_err()
        .to_string()
        .contains("already pinned"));
}

#[test]
fn a_corrupt_archive_leaves_no_partial_cache_entry() {
    let dir = tmpdir("corrupt");
    let mut body = gz(&TEXT.repeat(100));
    let n = body.len();
    body.truncate(n - 12); // cut the gzip trailer and some data
    let base = serve(body, Arc::default());
    let cache = DatasetCache::at(dir.join("cache"));
    let e = entry(&base, Checksum::Unpinned, None);
    let err = cache.fetch(&e, &mut |_, _| {}).unwrap_err().to_string();
    assert!(err.contains("cannot unpack"), "{err}");
    assert!(!cache.root().join("tiny/data").exists());
    assert!(!cache.root().join("tiny/data.tmp").exists());
    assert!(!cache.root().join("tiny/verified").exists());
    assert!(cache.path(&e).is_err());
}

#[test]
fn an_http_error_names_the_dataset_and_status() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let mut s = s.unwrap();
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let _ = s.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    let dir = tmpdir("404");
    let cache = DatasetCache::at(dir.join("cache"));
    let e = entry(&format!("http://{addr}"), Checksum::Unpinned, None);
    let err = cache.fetch(&e, &mut |_, _| {}).unwrap_err().to_string();
    assert!(
        err.contains("dataset 'tiny'") && err.contains("HTTP 404"),
        "{err}"
    );
}
