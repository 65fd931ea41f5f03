//! Unpacking downloads: bz2, xz and gz single files, tar.gz and zip archives.

use super::lock::Compression;
use crate::error::{CoreError, Result};
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The file name without its compression suffix (`a.svm.xz` -> `a.svm`).
fn stripped(file: &str, suffix: &str) -> String {
    file.strip_suffix(suffix).unwrap_or(file).to_string()
}

/// Unpacks `download` (packed as `compression`) into the empty directory `dir` and returns the
/// path experiments read: the one decompressed file, or `dir` for archives.
///
/// # Errors
/// [`CoreError::Dataset`] naming `name` for a corrupt or truncated archive or stream;
/// [`CoreError::Io`] for local file errors.
pub fn unpack(
    name: &str,
    download: &Path,
    compression: Compression,
    dir: &Path,
) -> Result<PathBuf> {
    let bad = |what: &str, e: &dyn std::fmt::Display| CoreError::Dataset {
        name: name.to_string(),
        message: format!("cannot unpack {} ({what}): {e}", download.display()),
    };
    let file = download
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or(name)
        .to_string();
    let open = || -> Result<BufReader<std::fs::File>> {
        Ok(BufReader::new(
            std::fs::File::open(download).map_err(|e| CoreError::io(download, e))?,
        ))
    };
    let create = |out: &Path| -> Result<BufWriter<std::fs::File>> {
        Ok(BufWriter::new(
            std::fs::File::create(out).map_err(|e| CoreError::io(out, e))?,
        ))
    };
    match compression {
        Compression::None => {
            let out = dir.join(&file);
            std::fs::copy(download, &out).map_err(|e| CoreError::io(&out, e))?;
            Ok(out)
        }
        Compression::Bz2 => {
            let out = dir.join(stripped(&file, ".bz2"));
            let mut w = create(&out)?;
            let mut r = bzip2::read::MultiBzDecoder::new(open()?);
            std::io::copy(&mut r, &mut w).map_err(|e| bad("bzip2", &e))?;
            w.flush().map_err(|e| CoreError::io(&out, e))?;
            Ok(out)
        }
        Compression::Xz => {
            let out = dir.join(stripped(&file, ".xz"));
            let mut w = create(&out)?;
            lzma_rs::xz_decompress(&mut open()?, &mut w).map_err(|e| bad("xz", &e))?;
            w.flush().map_err(|e| CoreError::io(&out, e))?;
            Ok(out)
        }
        Compression::Gz => {
            let out = dir.join(stripped(&file, ".gz"));
            let mut w = create(&out)?;
            let mut r = flate2::read::MultiGzDecoder::new(open()?);
            std::io::copy(&mut r, &mut w).map_err(|e| bad("gzip", &e))?;
            w.flush().map_err(|e| CoreError::io(&out, e))?;
            Ok(out)
        }
        Compression::TarGz => {
            let mut a = tar::Archive::new(flate2::read::GzDecoder::new(open()?));
            a.unpack(dir).map_err(|e| bad("tar.gz", &e))?;
            Ok(dir.to_path_buf())
        }
        Compression::Zip => {
            let mut a = zip::ZipArchive::new(open()?).map_err(|e| bad("zip", &e))?;
            a.extract(dir).map_err(|e| bad("zip", &e))?;
            Ok(dir.to_path_buf())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("syncbench-unpack-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("out")).unwrap();
        d
    }

    #[test]
    fn every_single_file_codec_round_trips() {
        let text = b"+1 1:0.5 3:1\n-1 2:2\n".repeat(100);
        let d = tmp("codecs");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&text).unwrap();
        let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
        bz.write_all(&text).unwrap();
        let mut xz = Vec::new();
        lzma_rs::xz_compress(&mut &text[..], &mut xz).unwrap();
        for (file, bytes, c) in [
            ("a.svm.gz", gz.finish().unwrap(), Compression::Gz),
            ("a.svm.bz2", bz.finish().unwrap(), Compression::Bz2),
            ("a.svm.xz", xz, Compression::Xz),
            ("a.svm", text.clone(), Compression::None),
        ] {
            let src = d.join(file);
            std::fs::write(&src, &bytes).unwrap();
            let out_dir = d.join(format!("out-{file}"));
            std::fs::create_dir_all(&out_dir).unwrap();
            let out = unpack("t", &src, c, &out_dir).unwrap();
            assert_eq!(out, out_dir.join("a.svm"), "{file}");
            assert_eq!(std::fs::read(&out).unwrap(), text, "{file}");
            // A truncated stream is an error naming the dataset.
            if c != Compression::None {
                std::fs::write(&src, &bytes[..bytes.len() / 2]).unwrap();
                let out_dir = d.join(format!("cut-{file}"));
                std::fs::create_dir_all(&out_dir).unwrap();
                let e = unpack("t", &src, c, &out_dir).unwrap_err().to_string();
                assert!(
                    e.contains("dataset 't'") && e.contains("cannot unpack"),
                    "{file}: {e}"
                );
            }
        }
    }

    #[test]
    fn archives_unpack_into_the_directory() {
        let d = tmp("archives");
        let mut tar_gz = Vec::new();
        {
            let gz = flate2::write::GzEncoder::new(&mut tar_gz, flate2::Compression::fast());
            let mut b = tar::Builder::new(gz);
            let mut h = tar::Header::new_gnu();
            h.set_size(3);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, "set/batch.bin", &b"xyz"[..]).unwrap();
            b.into_inner().unwrap().finish().unwrap();
        }
        let src = d.join("a.tar.gz");
        std::fs::write(&src, &tar_gz).unwrap();
        let out = unpack("t", &src, Compression::TarGz, &d.join("out")).unwrap();
        assert_eq!(std::fs::read(out.join("set/batch.bin")).unwrap(), b"xyz");

        let mut zip_bytes = std::io::Cursor::new(Vec::new());
        {
            let mut z = zip::ZipWriter::new(&mut zip_bytes);
            z.start_file("ml/ratings.csv", zip::write::SimpleFileOptions::default())
                .unwrap();
            z.write_all(b"userId,movieId,rating,timestamp\n1,2,3.5,0\n")
                .unwrap();
            z.finish().unwrap();
        }
        let src = d.join("a.zip");
        std::fs::write(&src, zip_bytes.into_inner()).unwrap();
        let out_dir = d.join("zip");
        std::fs::create_dir_all(&out_dir).unwrap();
        let out = unpack("t", &src, Compression::Zip, &out_dir).unwrap();
        assert!(std::fs::read_to_string(out.join("ml/ratings.csv"))
            .unwrap()
            .starts_with("userId"));
    }
}
