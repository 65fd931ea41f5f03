//! Which dataset format a file holds, recognised from its content (and size, for the binary
//! CIFAR files), so that `syncbench datasets inspect` reads a file with the right reader or
//! says plainly that it does not know it, instead of reading binary bytes as a LIBSVM label.

use crate::error::{CoreError, Result};
use std::path::Path;

/// The dataset formats syncbench reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DataFormat {
    /// LIBSVM / SVMlight text: `label index:value ...` per line.
    Libsvm,
    /// CIFAR-10 binary: records of 1 label byte and 3072 pixel bytes.
    Cifar10,
    /// CIFAR-100 binary: records of a coarse and a fine label byte and 3072 pixel bytes.
    Cifar100,
    /// MovieLens `ratings.csv`: a `userId,movieId,rating,timestamp` header, then ratings.
    Movielens,
    /// A Netflix Prize per-movie file: `MovieID:` then `CustomerID,Rating,Date` lines.
    Netflix,
    /// A UCI bag-of-words `docword` file: D, W and NNZ lines, then `doc word count` lines.
    BagOfWords,
}

/// Every format, in the order [`DataFormat::name`] lists them in messages.
pub const ALL_FORMATS: [DataFormat; 6] = [
    DataFormat::Libsvm,
    DataFormat::Cifar10,
    DataFormat::Cifar100,
    DataFormat::Movielens,
    DataFormat::Netflix,
    DataFormat::BagOfWords,
];

impl DataFormat {
    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            DataFormat::Libsvm => "libsvm",
            DataFormat::Cifar10 => "cifar10",
            DataFormat::Cifar100 => "cifar100",
            DataFormat::Movielens => "movielens",
            DataFormat::Netflix => "netflix",
            DataFormat::BagOfWords => "bag-of-words",
        }
    }

    /// A format by its `--format` name.
    ///
    /// # Errors
    /// [`CoreError::Config`] listing the known names.
    pub fn parse(name: &str) -> Result<Self> {
        ALL_FORMATS
            .into_iter()
            .find(|f| f.name() == name.trim())
            .ok_or_else(|| {
                CoreError::Config(format!(
                    "unknown dataset format '{name}'; expected one of {}",
                    names()
                ))
            })
    }
}

fn names() -> String {
    ALL_FORMATS
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Bytes of a CIFAR-10 and a CIFAR-100 record.
const CIFAR10_RECORD: u64 = 1 + 3072;
const CIFAR100_RECORD: u64 = 2 + 3072;

/// Recognises the format of a file of `len` bytes that starts with `head` (a few KiB are
/// enough; the whole file works too).
///
/// Binary content is CIFAR when the size is a whole number of records and the first record's
/// labels are in range; text is recognised by its first lines.
///
/// # Errors
/// [`CoreError::DataFile`] at line 1 of `path` saying what the content looks like and which
/// formats were tried, and that `--format` forces one.
pub fn detect_format(head: &[u8], len: u64, path: &Path) -> Result<DataFormat> {
    let refuse = |what: String| CoreError::DataFile {
        path: path.to_path_buf(),
        line: 1,
        column: 1,
        message: format!(
            "{what}; not a format syncbench reads ({}); force one with --format",
            names()
        ),
    };
    if head.is_empty() {
        return Err(refuse("the file is empty".into()));
    }
    if is_binary(head) {
        let c10 = len.is_multiple_of(CIFAR10_RECORD) && head[0] < 10;
        let c100 =
            len.is_multiple_of(CIFAR100_RECORD) && head.len() >= 2 && head[0] < 20 && head[1] < 100;
        return match (c10, c100) {
            (true, false) => Ok(DataFormat::Cifar10),
            (false, true) => Ok(DataFormat::Cifar100),
            (true, true) => Err(refuse(format!(
                "a binary file of {len} bytes that could be CIFAR-10 or CIFAR-100 records"
            ))),
            (false, false) => Err(refuse(format!(
                "a binary file of {len} bytes that is not CIFAR-10 ({CIFAR10_RECORD}-byte records, label below 10) or CIFAR-100 ({CIFAR100_RECORD}-byte records, labels below 20 and 100)"
            ))),
        };
    }
    let text = String::from_utf8_lossy(head);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(5)
        .collect();
    let Some(&first) = lines.first() else {
        return Err(refuse("the file holds only blank lines".into()));
    };
    let ints = |l: &str| -> Option<usize> {
        let v: Vec<&str> = l.split_whitespace().collect();
        v.iter()
            .all(|t| t.parse::<u64>().is_ok())
            .then_some(v.len())
    };
    if first.ends_with(':') && first[..first.len() - 1].parse::<u64>().is_ok() {
        return Ok(DataFormat::Netflix);
    }
    if first
        .to_ascii_lowercase()
        .replace(' ', "")
        .starts_with("userid,movieid,rating")
    {
        return Ok(DataFormat::Movielens);
    }
    if lines.len() >= 3 && lines[..3].iter().all(|l| ints(l) == Some(1)) {
        return Ok(DataFormat::BagOfWords);
    }
    let mut tokens = first.split_whitespace();
    let label_ok = tokens
        .next()
        .is_some_and(|t| t.trim_start_matches('+').parse::<f64>().is_ok());
    let features_ok = tokens.all(|t| {
        t.starts_with('#')
            || t.split_once(':')
                .is_some_and(|(i, v)| i.parse::<u64>().is_ok() && v.parse::<f64>().is_ok())
    });
    if label_ok && features_ok {
        return Ok(DataFormat::Libsvm);
    }
    let shown: String = first.chars().take(60).collect();
    Err(refuse(format!("text whose first line is {shown:?}")))
}

/// Binary when the head has a NUL byte or many bytes that are neither printable nor
/// whitespace (UTF-8 text passes).
fn is_binary(head: &[u8]) -> bool {
    if head.contains(&0) {
        return true;
    }
    if std::str::from_utf8(head).is_ok() {
        return false;
    }
    let odd = head
        .iter()
        .filter(|&&b| b < 0x09 || (0x0e..0x20).contains(&b) || b == 0x7f)
        .count();
    odd * 20 > head.len() || String::from_utf8_lossy(head).contains('\u{fffd}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{write_bag_of_words, write_cifar, BagOfWordsShape, CifarShape};

    fn detect(bytes: &[u8]) -> Result<DataFormat> {
        detect_format(
            &bytes[..bytes.len().min(8192)],
            bytes.len() as u64,
            Path::new("f"),
        )
    }

    #[test]
    fn each_format_is_recognised() {
        assert_eq!(
            detect(b"+1 3:0.5 10:1\n-1 2:1\n").unwrap(),
            DataFormat::Libsvm
        );
        assert_eq!(detect(b"1\n-1 4:2 # c\n").unwrap(), DataFormat::Libsvm);
        assert_eq!(
            detect(b"userId,movieId,rating,timestamp\n1,2,3.5,9\n").unwrap(),
            DataFormat::Movielens
        );
        assert_eq!(
            detect(b"1:\n6,3,2005-09-06\n").unwrap(),
            DataFormat::Netflix
        );
        assert_eq!(
            detect(b"2\n5\n3\n1 1 2\n2 5 1\n").unwrap(),
            DataFormat::BagOfWords
        );
        let shape = BagOfWordsShape {
            documents: 5,
            vocabulary: 40,
            topics: 2,
            words_per_document: 10,
        };
        let mut bow = Vec::new();
        write_bag_of_words(&shape, 1, &mut bow, Path::new("b")).unwrap();
        assert_eq!(detect(&bow).unwrap(), DataFormat::BagOfWords);
        for (classes, want) in [(10, DataFormat::Cifar10), (100, DataFormat::Cifar100)] {
            let mut b = Vec::new();
            let shape = CifarShape { images: 7, classes };
            write_cifar(&shape, 3, &mut b, Path::new("c")).unwrap();
            assert_eq!(detect(&b).unwrap(), want);
        }
    }

    #[test]
    fn unknown_content_is_refused_saying_what_it_looks_like() {
        let e = detect(&[0u8, 1, 2, 200, 17, 5, 9]).unwrap_err().to_string();
        assert!(
            e.contains("binary file of 7 bytes") && e.contains("--format"),
            "{e}"
        );
        let e = detect(b"hello world\n").unwrap_err().to_string();
        assert!(e.contains("\"hello world\""), "{e}");
        assert!(detect(b"").is_err());
        assert!(detect(b"\n\n").is_err());
    }

    #[test]
    fn names_round_trip() {
        for f in ALL_FORMATS {
            assert_eq!(DataFormat::parse(f.name()).unwrap(), f);
        }
        assert!(DataFormat::parse("csv")
            .unwrap_err()
            .to_string()
            .contains("libsvm"));
    }
}
