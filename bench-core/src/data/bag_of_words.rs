//! UCI bag-of-words files (`docword.*.txt`): three header lines D, W and NNZ, then one
//! `docID wordID count` line per non-zero (1-based ids). Read into a [`CsrMatrix`] of
//! documents by words with counts as values. A seeded twin writer draws documents from a
//! topic model (LDA's generative process), the data ESSP's LDA experiments train on.

use super::CsrMatrix;
use crate::error::{CoreError, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;

/// Shape of a bag-of-words twin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BagOfWordsShape {
    /// Documents.
    pub documents: usize,
    /// Vocabulary size.
    pub vocabulary: usize,
    /// Topics of the hidden model.
    pub topics: usize,
    /// Mean tokens per document (NYTimes: about 330 tokens, 230 distinct words).
    pub words_per_document: usize,
}

impl BagOfWordsShape {
    /// The twin [`write_bag_of_words`] writes from `seed`, as a documents x words count
    /// matrix (no file involved).
    pub fn generate(&self, seed: u64) -> CsrMatrix {
        let mut bytes = Vec::new();
        let path = Path::new("<generated bag of words>");
        write_bag_of_words(self, seed, &mut bytes, path).expect("writing to memory");
        read_bag_of_words(&bytes[..], path).expect("the writer's own output parses")
    }
}

/// Documents without a word a header may declare beyond its non-zeros (each costs a row).
pub const MAX_EMPTY_DOCUMENTS: usize = 1 << 20;

fn too_many_empty(d: usize, nnz: usize) -> String {
    format!(
        "D = {d} documents for NNZ = {nnz} non-zeros: more than {MAX_EMPTY_DOCUMENTS} documents would be empty"
    )
}

/// Reads a UCI docword file.
///
/// # Errors
/// [`CoreError::DataFile`] naming line and column for a bad header, a malformed line, an id
/// of 0 or beyond D or W, a zero count, or a non-zero count that differs from NNZ;
/// [`CoreError::Io`] when reading fails.
pub fn read_bag_of_words<R: BufRead>(reader: R, path: &Path) -> Result<CsrMatrix> {
    let err = |line: usize, column: usize, message: String| CoreError::DataFile {
        path: path.to_path_buf(),
        line,
        column,
        message,
    };
    let mut header = [0usize; 3];
    let mut m = CsrMatrix::new(0);
    let mut row: Vec<(u32, f32)> = Vec::new();
    let mut seen = 0usize;
    let mut lines = 0usize;
    // Documents without a word pushed so far (bounded: each costs a row).
    let mut empty = 0usize;
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| CoreError::io(path, e))?;
        let lineno = i + 1;
        lines = lineno;
        if lineno <= 3 {
            header[i] = line.trim().parse().map_err(|_| {
                err(
                    lineno,
                    1,
                    format!(
                        "header line {lineno} ('{}') must be a count (D, W, NNZ)",
                        line.trim()
                    ),
                )
            })?;
            if lineno == 3 {
                // Memory follows D (a row per document) and W (u32 word indices): a header
                // out of proportion to the data is refused before anything is allocated.
                let [d, w, nnz] = header;
                if w > u32::MAX as usize {
                    return Err(err(2, 1, format!("W = {w} words: at most {}", u32::MAX)));
                }
                if d > nnz.saturating_add(MAX_EMPTY_DOCUMENTS) {
                    return Err(err(1, 1, too_many_empty(d, nnz)));
                }
                m = CsrMatrix::new(w);
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let mut col = 1;
        let mut vals = [0usize; 3];
        let mut k = 0;
        for tok in line.split(' ') {
            if tok.is_empty() {
                col += 1;
                continue;
            }
            if k == 3 {
                return Err(err(lineno, col, "more than 'docID wordID count'".into()));
            }
            vals[k] = tok
                .parse()
                .map_err(|_| err(lineno, col, format!("'{tok}' is not a positive integer")))?;
            let limit = [header[0], header[1], usize::MAX][k];
            if vals[k] == 0 || vals[k] > limit {
                let what = ["docID", "wordID", "count"][k];
                return Err(err(
                    lineno,
                    col,
                    format!("{what} {} is outside 1..={limit}", vals[k]),
                ));
            }
            col += tok.len() + 1;
            k += 1;
        }
        if k < 3 {
            return Err(err(lineno, col, "expected 'docID wordID count'".into()));
        }
        // `row` holds the words of document m.rows(); earlier documents are done.
        let doc = vals[0] - 1;
        if doc < m.rows() {
            return Err(err(
                lineno,
                1,
                format!(
                    "docID {} after docID {}: lines must be sorted by document",
                    vals[0],
                    m.rows() + 1
                ),
            ));
        }
        if doc - m.rows() > MAX_EMPTY_DOCUMENTS.saturating_sub(empty) {
            return Err(err(lineno, 1, too_many_empty(header[0], header[2])));
        }
        while m.rows() < doc {
            empty += usize::from(row.is_empty());
            row.sort_unstable_by_key(|e| e.0);
            m.push_row(&row, 0.0);
            row.clear();
        }
        row.push(((vals[1] - 1) as u32, vals[2] as f32));
        seen += 1;
    }
    if lines < 3 {
        return Err(err(lines + 1, 1, "missing the D, W, NNZ header".into()));
    }
    if header[0].saturating_sub(m.rows()) > MAX_EMPTY_DOCUMENTS.saturating_sub(empty) + 1 {
        return Err(err(lines, 1, too_many_empty(header[0], header[2])));
    }
    while m.rows() < header[0] {
        row.sort_unstable_by_key(|e| e.0);
        m.push_row(&row, 0.0);
        row.clear();
    }
    if seen != header[2] {
        return Err(err(
            lines,
            1,
            format!(
                "the header says NNZ = {} but the file has {seen} entries (truncated?)",
                header[2]
            ),
        ));
    }
    Ok(m)
}

/// Writes a seeded twin: `topics` topics, each a distribution over a few hundred words drawn
/// with Zipf-like popularity; each document mixes two or three topics and draws
/// `words_per_document` tokens on average; counts aggregated per (document, word).
///
/// # Errors
/// [`CoreError::Io`] when writing fails.
pub fn write_bag_of_words<W: Write>(
    shape: &BagOfWordsShape,
    seed: u64,
    w: &mut W,
    path: &Path,
) -> Result<()> {
    let io = |e| CoreError::io(path, e);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let v = shape.vocabulary.max(1);
    let topic_words: Vec<Vec<usize>> = (0..shape.topics.max(1))
        .map(|_| {
            (0..300.min(v))
                .map(|_| {
                    let u: f64 = rng.gen();
                    ((v as f64) * u * u) as usize % v
                })
                .collect()
        })
        .collect();
    let mut docs: Vec<BTreeMap<usize, u32>> = Vec::with_capacity(shape.documents);
    for _ in 0..shape.documents {
        let mix: Vec<usize> = (0..rng.gen_range(2..=3))
            .map(|_| rng.gen_range(0..topic_words.len()))
            .collect();
        let n = rng
            .gen_range(shape.words_per_document / 2..=shape.words_per_document * 3 / 2)
            .max(1);
        let mut counts = BTreeMap::new();
        for _ in 0..n {
            let t = &topic_words[mix[rng.gen_range(0..mix.len())]];
            // Earlier words of a topic are its frequent ones.
            let u: f64 = rng.gen();
            let word = t[((t.len() as f64) * u * u) as usize];
            *counts.entry(word).or_insert(0u32) += 1;
        }
        docs.push(counts);
    }
    let nnz: usize = docs.iter().map(BTreeMap::len).sum();
    writeln!(w, "{}\n{}\n{nnz}", shape.documents, v).map_err(io)?;
    for (d, counts) in docs.iter().enumerate() {
        for (word, c) in counts {
            writeln!(w, "{} {} {c}", d + 1, word + 1).map_err(io)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twin_round_trips_and_header_counts_are_checked() {
        let shape = BagOfWordsShape {
            documents: 40,
            vocabulary: 1000,
            topics: 5,
            words_per_document: 50,
        };
        let mut bytes = Vec::new();
        write_bag_of_words(&shape, 2, &mut bytes, Path::new("d.txt")).unwrap();
        let m = read_bag_of_words(&bytes[..], Path::new("d.txt")).unwrap();
        assert_eq!((m.rows(), m.cols), (40, 1000));
        let text = String::from_utf8(bytes.clone()).unwrap();
        let nnz: usize = text.lines().nth(2).unwrap().parse().unwrap();
        assert_eq!(m.nnz(), nnz);
        assert!(m.values.iter().all(|&c| c >= 1.0));
        // Truncation is caught by the NNZ header.
        let cut: String = text.lines().take(10).map(|l| format!("{l}\n")).collect();
        let e = read_bag_of_words(cut.as_bytes(), Path::new("d.txt"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("truncated"), "{e}");
    }

    #[test]
    fn bad_lines_name_line_and_column() {
        let ok = "3\n5\n3\n1 2 1\n3 5 2\n3 1 4\n";
        let m = read_bag_of_words(ok.as_bytes(), Path::new("d")).unwrap();
        assert_eq!(m.rows(), 3);
        assert_eq!(m.row(1).0.len(), 0, "document 2 has no words");
        assert_eq!(m.row(2), (&[0u32, 4][..], &[4.0f32, 2.0][..]));
        for (bad, want) in [
            ("3\n5\n1\n1 6 1\n", "d:4:3: wordID 6 is outside 1..=5"),
            ("3\n5\n1\n0 1 1\n", "d:4:1: docID 0"),
            ("3\n5\n1\n1 x 1\n", "d:4:3: 'x'"),
            ("3\nW\n1\n", "d:2:1: header line 2"),
            ("3\n5\n1\n1 1\n", "expected 'docID wordID count'"),
            ("3\n5\n2\n2 1 1\n1 1 1\n", "must be sorted"),
            (
                "18446744073709551615\n5\n1\n1 1 1\n",
                "d:1:1: D = 18446744073709551615 documents for NNZ = 1",
            ),
            ("3\n4294967296\n1\n", "d:2:1: W = 4294967296 words"),
        ] {
            let e = read_bag_of_words(bad.as_bytes(), Path::new("d"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
    }
}
