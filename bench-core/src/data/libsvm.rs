//! Streaming LIBSVM / SVMlight reader into [`CsrMatrix`].
//!
//! Format: `label index:value index:value ... [# comment]`, indices 1-based and strictly
//! increasing within a row, `qid:N` ignored, blank and `#` lines skipped. Labels are kept as
//! parsed (±1 for binary sets, class numbers for multi-class). Memory is the CSR arrays only
//! (grown by a quarter at a time, trimmed at the end: at most 1.25x their contents while
//! reading) plus the reader's buffer: the file is streamed. Every error names file, line and
//! column.

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
    mut reader: R,
    path: &Path,
    features: Option<usize>,
) -> Result<CsrMatrix> {
    let mut p = LineParser {
        m: CsrMatrix::new(features.unwrap_or(0)),
        max_index: 0,
        path,
        features,
        lineno: 0,
    };
    // Lines are parsed in place in the reader's buffer; only a line that straddles two
    // buffer fills is copied (into `carry`). Memory stays the CSR arrays plus one buffer.
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let buf = reader.fill_buf().map_err(|e| CoreError::io(path, e))?;
        if buf.is_empty() {
            if !carry.is_empty() {
                p.line(&carry)?;
            }
            break;
        }
        let len = buf.len();
        let mut start = 0;
        if !carry.is_empty() {
            match memchr::memchr(b'\n', buf) {
                Some(nl) => {
                    carry.extend_from_slice(&buf[..=nl]);
                    p.line(&carry)?;
                    carry.clear();
                    start = nl + 1;
                }
                None => {
                    carry.extend_from_slice(buf);
                    reader.consume(len);
                    continue;
                }
            }
        }
        while let Some(nl) = memchr::memchr(b'\n', &buf[start..]) {
            p.line(&buf[start..start + nl + 1])?;
            start += nl + 1;
        }
        carry.extend_from_slice(&buf[start..]);
        reader.consume(len);
    }
    let LineParser {
        mut m, max_index, ..
    } = p;
    if features.is_none() {
        m.cols = max_index;
    }
    m.shrink_to_fit();
    Ok(m)
}

/// Parses lines into a growing matrix.
struct LineParser<'a> {
    m: CsrMatrix,
    max_index: usize,
    path: &'a Path,
    features: Option<usize>,
    lineno: usize,
}

impl LineParser<'_> {
    fn line(&mut self, line: &[u8]) -> Result<()> {
        self.lineno += 1;
        let (path, lineno, features) = (self.path, self.lineno, self.features);
        let m = &mut self.m;
        let err = |column: usize, message: String| CoreError::DataFile {
            path: path.to_path_buf(),
            line: lineno,
            column,
            message,
        };
        // A comment runs from '#' to the end of the line.
        let content = line;
        let mut tokens = Tokens { s: content, pos: 0 };
        let Some((col, label_tok)) = tokens.next() else {
            return Ok(());
        };
        let label: f32 = std::str::from_utf8(label_tok)
            .ok()
            .and_then(|t| t.parse().ok())
            .filter(|v: &f32| v.is_finite())
            .ok_or_else(|| {
                err(
                    col,
                    format!(
                        "label '{}' is not a number",
                        String::from_utf8_lossy(label_tok)
                    ),
                )
            })?;
        let s = content;
        let mut i = tokens.pos;
        let mut last = 0usize;
        loop {
            while i < s.len() && s[i].is_ascii_whitespace() {
                i += 1;
            }
            if i == s.len() || s[i] == b'#' {
                break;
            }
            let col = i + 1;
            // index digits, then ':'
            let kstart = i;
            let mut idx = 0usize;
            while i < s.len() && s[i].is_ascii_digit() && i - kstart < 19 {
                idx = idx * 10 + usize::from(s[i] - b'0');
                i += 1;
            }
            if i == s.len() || s[i] != b':' || i == kstart {
                let mut end = i;
                while end < s.len() && !s[end].is_ascii_whitespace() && s[end] != b'#' {
                    end += 1;
                }
                let tok = &s[kstart..end];
                i = end;
                match tok.iter().position(|&b| b == b':') {
                    Some(3) if tok.starts_with(b"qid") => continue,
                    Some(c) => {
                        return Err(err(
                            col,
                            format!(
                                "index '{}' is not a positive integer",
                                String::from_utf8_lossy(&tok[..c])
                            ),
                        ))
                    }
                    None => {
                        return Err(err(
                            col,
                            format!(
                                "expected index:value, got '{}'",
                                String::from_utf8_lossy(tok)
                            ),
                        ))
                    }
                }
            }
            let klen = i - kstart;
            i += 1;
            let vstart = i;
            while i < s.len() && !s[i].is_ascii_whitespace() && s[i] != b'#' {
                i += 1;
            }
            let v = &s[vstart..i];
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
            let val: f32 = super::fast_float::fast_f32(v)
                .or_else(|| std::str::from_utf8(v).ok().and_then(|t| t.parse().ok()))
                .filter(|x: &f32| x.is_finite())
                .ok_or_else(|| {
                    err(
                        col + klen + 1,
                        format!(
                            "value '{}' is not a finite number",
                            String::from_utf8_lossy(v)
                        ),
                    )
                })?;
            last = idx;
            if m.indices.len() == m.indices.capacity() {
                // Grow by a quarter, not double: the arrays never hold more than 1.25x their
                // contents (and are trimmed when the file ends).
                let extra = (m.indices.capacity() / 4).max(1 << 12);
                m.indices.reserve_exact(extra);
                m.values.reserve_exact(extra);
            }
            m.indices.push((idx - 1) as u32);
            m.values.push(val);
        }
        self.max_index = self.max_index.max(last);
        m.indptr.push(m.indices.len());
        m.labels.push(label);
        Ok(())
    }
}

/// Tokens separated by ASCII whitespace, up to a `#` comment, with their 1-based starting
/// columns.
struct Tokens<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let s = self.s;
        let mut i = self.pos;
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == s.len() || s[i] == b'#' {
            self.pos = i;
            return None;
        }
        let start = i;
        while i < s.len() && !s[i].is_ascii_whitespace() && s[i] != b'#' {
            i += 1;
        }
        self.pos = i;
        Some((start + 1, &s[start..i]))
    }
}

/// Writes `m` in LIBSVM format (1-based indices), e.g. to ship a synthetic twin as a file.
///
/// # Errors
/// [`CoreError::Io`] when writing fails.
pub fn write_libsvm<W: std::io::Write>(m: &CsrMatrix, mut w: W, path: &Path) -> Result<()> {
    for r in 0..m.rows() {
        let (idx, val) = m.row(r);
        use std::fmt::Write as _;
        let mut line = format!("{}", m.labels[r]);
        for (i, v) in idx.iter().zip(val) {
            let _ = write!(line, " {}:{}", i + 1, v);
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
    fn lines_straddling_buffer_fills_parse_the_same() {
        let mut shape = Rcv1Shape::with_rows(50);
        shape.features = 500;
        let m = shape.generate(9);
        let mut buf = Vec::new();
        write_libsvm(&m, &mut buf, Path::new("t")).unwrap();
        buf.pop(); // no final newline
        for cap in [1, 7, 64, 1 << 16] {
            let r = std::io::BufReader::with_capacity(cap, buf.as_slice());
            assert_eq!(
                read_libsvm(r, Path::new("t"), Some(500)).unwrap(),
                m,
                "capacity {cap}"
            );
        }
        let e = read_libsvm(
            std::io::BufReader::with_capacity(3, "1 1:1\n1 2:x\n".as_bytes()),
            Path::new("s.svm"),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("s.svm:2:5:"), "{e}");
    }

    #[test]
    fn memory_is_the_arrays_only() {
        let m = Rcv1Shape::with_rows(2000).generate(1);
        let mut buf = Vec::new();
        write_libsvm(&m, &mut buf, Path::new("t")).unwrap();
        let back = read_libsvm(buf.as_slice(), Path::new("t"), None).unwrap();
        assert_eq!(back.heap_bytes(), back.raw_bytes());
        assert_eq!(back.raw_bytes(), back.nnz() * 8 + 2001 * 8 + 2000 * 4);
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
            // Lines straddling buffer fills take the copying path.
            let small = std::io::BufReader::with_capacity(5, bytes.as_slice());
            let _ = read_libsvm(small, Path::new("fuzz"), None);
        }

        #[test]
        fn never_panics_on_near_valid_input(lines in proptest::collection::vec(
            proptest::string::string_regex("[-+]?[0-9]{0,3}( +[0-9]{0,4}:[-+0-9.eE]{0,12}| qid:[0-9]| #x){0,6}").unwrap(),
            0..30,
        )) {
            let text = lines.join("\n");
            let a = read_libsvm(text.as_bytes(), Path::new("fuzz"), Some(5000));
            let b = read_libsvm(std::io::BufReader::with_capacity(7, text.as_bytes()), Path::new("fuzz"), Some(5000));
            proptest::prop_assert_eq!(a.map_err(|e| e.to_string()), b.map_err(|e| e.to_string()));
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
