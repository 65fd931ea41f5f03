//! Streaming LIBSVM / SVMlight reader into [`CsrMatrix`].
//!
//! Format: `label index:value index:value ... [# comment]`, indices 1-based and strictly
//! increasing within a row, `qid:N` ignored, blank and `#` lines skipped. Labels are kept as
//! parsed (±1 for binary sets, class numbers for multi-class). Memory is the CSR arrays only:
//! the file is read line by line. Every error names file, line and column.

use super::CsrMatrix;
use crate::error::{CoreError, Result};
use std::io::BufRead;
use std::path::Path;

/// Reads LIBSVM text from `reader`; `path` names it in errors. With `features = Some(d)`,
/// indices must lie in `1..=d`; otherwise the column count is the largest index.
///
/// # Errors
/// [`CoreError::DataFile`] for a bad label, a token without `:`, an index of 0, beyond `d`,
/// or not increasing, a bad or non-finite value; [`CoreError::Io`] when reading fails.
pub fn read_libsvm<R: BufRead>(
    reader: R,
    path: &Path,
    features: Option<usize>,
) -> Result<CsrMatrix> {
    let mut m = CsrMatrix::new(features.unwrap_or(0));
    let mut max_index = 0usize;
    let mut row: Vec<(u32, f32)> = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| CoreError::io(path, e))?;
        let lineno = i + 1;
        let err = |column: usize, message: String| CoreError::DataFile {
            path: path.to_path_buf(),
            line: lineno,
            column,
            message,
        };
        let content = line.split('#').next().unwrap_or("");
        let mut tokens = tokens_with_columns(content);
        let Some((col, label_tok)) = tokens.next() else {
            continue;
        };
        let label: f32 = label_tok
            .parse()
            .ok()
            .filter(|v: &f32| v.is_finite())
            .ok_or_else(|| err(col, format!("label '{label_tok}' is not a number")))?;
        row.clear();
        let mut last = 0usize;
        for (col, tok) in tokens {
            let Some((k, v)) = tok.split_once(':') else {
                return Err(err(col, format!("expected index:value, got '{tok}'")));
            };
            if k == "qid" {
                continue;
            }
            let idx: usize = k
                .parse()
                .map_err(|_| err(col, format!("index '{k}' is not a positive integer")))?;
            if idx == 0 {
                return Err(err(col, "index 0: LIBSVM indices start at 1".into()));
            }
            if let Some(d) = features {
                if idx > d {
                    return Err(err(
                        col,
                        format!("index {idx} beyond the declared {d} features"),
                    ));
                }
            }
            if idx <= last {
                return Err(err(
                    col,
                    format!("index {idx} does not increase (previous {last})"),
                ));
            }
            if idx > u32::MAX as usize {
                return Err(err(col, format!("index {idx} too large")));
            }
            let val: f32 = v
                .parse()
                .ok()
                .filter(|x: &f32| x.is_finite())
                .ok_or_else(|| {
                    err(
                        col + k.len() + 1,
                        format!("value '{v}' is not a finite number"),
                    )
                })?;
            last = idx;
            max_index = max_index.max(idx);
            row.push(((idx - 1) as u32, val));
        }
        if features.is_none() {
            m.cols = max_index;
        }
        m.push_row(&row, label);
    }
    Ok(m)
}

/// Whitespace-separated tokens with their 1-based starting columns.
fn tokens_with_columns(s: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        let rest = &s[pos..];
        let start = rest.find(|c: char| !c.is_whitespace())?;
        let tail = &rest[start..];
        let len = tail.find(char::is_whitespace).unwrap_or(tail.len());
        let col = pos + start + 1;
        pos += start + len;
        Some((col, &tail[..len]))
    })
}

/// Writes `m` in LIBSVM format (1-based indices), e.g. to ship a synthetic twin as a file.
///
/// # Errors
/// [`CoreError::Io`] when writing fails.
pub fn write_libsvm<W: std::io::Write>(m: &CsrMatrix, mut w: W, path: &Path) -> Result<()> {
    for r in 0..m.rows() {
        let (idx, val) = m.row(r);
        let mut line = format!("{}", m.labels[r]);
        for (i, v) in idx.iter().zip(val) {
            line.push_str(&format!(" {}:{}", i + 1, v));
        }
        line.push('\n');
        w.write_all(line.as_bytes())
            .map_err(|e| CoreError::io(path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Rcv1Shape;

    fn parse(s: &str, d: Option<usize>) -> Result<CsrMatrix> {
        read_libsvm(s.as_bytes(), Path::new("x.svm"), d)
    }

    #[test]
    fn parses_rows_comments_and_qid() {
        let m = parse(
            "+1 1:0.5 3:2 # note\n\n-1 qid:7 2:1e-3\n# whole-line comment\n3 4:1\n",
            None,
        )
        .unwrap();
        assert_eq!(m.rows(), 3);
        assert_eq!(m.cols, 4);
        assert_eq!(m.labels, vec![1.0, -1.0, 3.0]);
        assert_eq!(m.row(0), (&[0u32, 2][..], &[0.5f32, 2.0][..]));
        assert_eq!(m.row(1), (&[1u32][..], &[0.001f32][..]));
    }

    #[test]
    fn errors_name_line_and_column() {
        let cases = [
            ("1 1:1\n+1 0:3\n", "x.svm:2:4:", "index 0"),
            ("1 1:1 x\n", "x.svm:1:7:", "index:value"),
            ("one 1:1\n", "x.svm:1:1:", "label"),
            ("1 2:1 2:3\n", "x.svm:1:7:", "does not increase"),
            ("1 1:abc\n", "x.svm:1:5:", "value 'abc'"),
            ("1 1:1 9:1\n", "x.svm:1:7:", "beyond the declared 5"),
            ("1 1:nan\n", "x.svm:1:5:", "finite"),
        ];
        for (text, at, what) in cases {
            let e = parse(text, Some(5)).unwrap_err().to_string();
            assert!(e.starts_with(at) && e.contains(what), "{text:?}: {e}");
        }
    }

    #[test]
    fn round_trips_the_rcv1_twin() {
        let mut shape = Rcv1Shape::with_rows(300);
        shape.features = 5000;
        let m = shape.generate(4);
        let mut buf = Vec::new();
        write_libsvm(&m, &mut buf, Path::new("t")).unwrap();
        let back = read_libsvm(buf.as_slice(), Path::new("t"), Some(5000)).unwrap();
        assert_eq!(back, m);
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_arbitrary_input(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            let _ = read_libsvm(bytes.as_slice(), Path::new("fuzz"), None);
            let _ = read_libsvm(bytes.as_slice(), Path::new("fuzz"), Some(10));
        }

        #[test]
        fn round_trips_arbitrary_rows(rows in proptest::collection::vec(
            (proptest::prelude::any::<bool>(), proptest::collection::btree_map(0u32..50, -1e6f32..1e6, 0..10)),
            0..20,
        )) {
            let mut m = CsrMatrix::new(50);
            for (pos, entries) in &rows {
                let e: Vec<(u32, f32)> = entries.iter().map(|(k, v)| (*k, *v)).collect();
                m.push_row(&e, if *pos { 1.0 } else { -1.0 });
            }
            let mut buf = Vec::new();
            write_libsvm(&m, &mut buf, Path::new("t")).unwrap();
            let back = read_libsvm(buf.as_slice(), Path::new("t"), Some(50)).unwrap();
            proptest::prop_assert_eq!(back, m);
        }
    }
}
