//! Streaming checksums of downloaded files.

use crate::error::{CoreError, Result};
use md5::Md5;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

/// SHA-256 and MD5 of a file, lowercase hex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDigest {
    /// SHA-256.
    pub sha256: String,
    /// MD5.
    pub md5: String,
    /// Bytes hashed.
    pub bytes: u64,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hashes `path` in one pass with both algorithms.
///
/// # Errors
/// [`CoreError::Io`] when the file cannot be read.
pub fn digest_file(path: &Path) -> Result<FileDigest> {
    let mut f = std::fs::File::open(path).map_err(|e| CoreError::io(path, e))?;
    let (mut sha, mut md5) = (Sha256::new(), Md5::new());
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(|e| CoreError::io(path, e))?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
        md5.update(&buf[..n]);
        bytes += n as u64;
    }
    Ok(FileDigest {
        sha256: hex(&sha.finalize()),
        md5: hex(&md5.finalize()),
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        let p = std::env::temp_dir().join(format!("syncbench-digest-{}", std::process::id()));
        std::fs::write(&p, b"abc").unwrap();
        let d = digest_file(&p).unwrap();
        assert_eq!(
            d.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(d.md5, "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(d.bytes, 3);
        std::fs::remove_file(&p).unwrap();
    }
}
