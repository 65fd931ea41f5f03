//! LDA topic modelling by collapsed Gibbs sampling on row tables (ESSP's LDA on Bösen).
//!
//! Table 0 holds the word-topic counts `n_wk` (one row of K counts per word), table 1 a single
//! row of topic totals `n_k`. Documents are split contiguously over the workers, and each
//! worker keeps its documents' topic assignments `z` and document-topic counts `n_dk` to itself
//! (they never leave it). At clock `c` a worker samples every token of the next
//! `minibatch_fraction` of its documents: remove the token's topic from the counts, draw a new
//! one with probability `(n_dk + alpha)(n_wk + beta) / (n_k + V beta)`, add it back. It reads
//! the rows of the words it samples and the totals row from its cache, and INCs them by the
//! changes; the paper's sparsified sampler (Yao, Mimno and McCallum 2009) draws from this same
//! distribution, faster. Counts read stale can be negative; they are clamped at 0 when
//! sampling.
//!
//! The loss is the negative word log-likelihood per token,
//! `-(sum_k [lgamma(V beta) - lgamma(n_k + V beta) + sum_w (lgamma(n_wk + beta) - lgamma(beta))]) / tokens`,
//! the part of LDA's log-likelihood the server's tables hold (the document part lives on the
//! workers); lower is better. Accuracy is not defined (NaN).

use super::tables::{TableLearning, TableModel};
use crate::data::CsrMatrix;
use crate::error::{CoreError, Result};
use crate::protocol::table::RowKey;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::ops::Range;

/// The word-topic count table.
pub const WORD_TOPIC_TABLE: u32 = 0;
/// The topic-totals table (one row).
pub const TOPIC_TOTAL_TABLE: u32 = 1;

/// Hyper-parameters.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LdaConfig {
    /// Topics K.
    pub topics: usize,
    /// Document-topic Dirichlet prior.
    pub alpha: f64,
    /// Topic-word Dirichlet prior.
    pub beta: f64,
    /// Share of a worker's documents sampled per clock, (0, 1] (the paper: 50%).
    pub minibatch_fraction: f64,
    /// Seed of the initial topic assignments and of the samplers.
    pub init_seed: u64,
}

/// LDA over a corpus of documents (rows of a documents x words count matrix).
#[derive(Debug)]
pub struct Lda {
    cfg: LdaConfig,
    vocabulary: usize,
    /// Each document's tokens (word ids), counts expanded.
    docs: Vec<Vec<u32>>,
    tokens: usize,
}

/// A worker's own state: topic assignments and document-topic counts of its documents.
#[derive(Debug)]
pub struct LdaLocal {
    first: usize,
    z: Vec<Vec<u32>>,
    ndk: Vec<Vec<u32>>,
}

impl Lda {
    /// # Errors
    /// [`CoreError::Config`] for a bad hyper-parameter, an empty corpus, a count that is not
    /// a whole number, or more words than a table holds.
    pub fn new(cfg: LdaConfig, corpus: &CsrMatrix) -> Result<Self> {
        if cfg.topics < 2 || cfg.topics > 65_536 {
            return Err(CoreError::out_of_range(
                "lda.topics",
                "in 2..=65536",
                cfg.topics,
            ));
        }
        if !(cfg.alpha > 0.0 && cfg.beta > 0.0) {
            return Err(CoreError::Config(
                "lda.alpha and lda.beta must be > 0".into(),
            ));
        }
        if !(cfg.minibatch_fraction > 0.0 && cfg.minibatch_fraction <= 1.0) {
            return Err(CoreError::out_of_range(
                "lda.minibatch_fraction",
                "in (0, 1]",
                cfg.minibatch_fraction,
            ));
        }
        if u32::try_from(corpus.cols).is_err() {
            return Err(CoreError::Config("more than 2^32 words".into()));
        }
        let mut docs = Vec::with_capacity(corpus.rows());
        for d in 0..corpus.rows() {
            let mut tokens = Vec::new();
            for i in corpus.indptr[d]..corpus.indptr[d + 1] {
                let c = corpus.values[i];
                if c < 0.0 || c.fract() != 0.0 {
                    return Err(CoreError::Config(format!(
                        "document {d}: word {} has count {c}, not a whole number",
                        corpus.indices[i]
                    )));
                }
                tokens.extend(std::iter::repeat_n(corpus.indices[i], c as usize));
            }
            docs.push(tokens);
        }
        let tokens: usize = docs.iter().map(Vec::len).sum();
        if tokens == 0 {
            return Err(CoreError::Config("the corpus has no tokens".into()));
        }
        Ok(Lda {
            cfg,
            vocabulary: corpus.cols,
            docs,
            tokens,
        })
    }

    /// Tokens in the corpus.
    pub fn tokens(&self) -> usize {
        self.tokens
    }

    fn share(&self, workers: usize) -> usize {
        (self.docs.len() / workers.max(1)).max(1)
    }

    /// Documents per clock of one worker.
    fn docs_per_clock(&self, workers: usize) -> usize {
        ((self.share(workers) as f64 * self.cfg.minibatch_fraction).ceil() as usize).max(1)
    }

    /// Positions `part` of the mini-batch worker `worker` samples at `clock` (the next
    /// `docs_per_clock` documents of its share, wrapping around), without walking the ones
    /// before.
    fn minibatch_part(
        &self,
        worker: usize,
        workers: usize,
        clock: u64,
        part: Range<usize>,
    ) -> impl Iterator<Item = usize> {
        let share = self.share(workers);
        let first = (worker * share).min(self.docs.len());
        let len = share.min(self.docs.len() - first);
        let n = self.docs_per_clock(workers);
        let m = n.min(len);
        (part.start.min(m)..part.end.min(m)).map(move |b| first + (clock as usize * n + b) % len)
    }

    /// Documents some worker owns (the remainder of an uneven split is left out).
    fn owned(&self, workers: usize) -> usize {
        (self.share(workers) * workers).min(self.docs.len())
    }

    fn initial_z(&self, doc: usize) -> Vec<u32> {
        let mut rng = ChaCha8Rng::seed_from_u64(
            self.cfg.init_seed ^ (doc as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
        );
        self.docs[doc]
            .iter()
            .map(|_| rng.gen_range(0..self.cfg.topics as u32))
            .collect()
    }

    fn totals_offset(&self) -> usize {
        self.vocabulary * self.cfg.topics
    }

    /// The initial counts of the documents `workers` workers own, in the dense layout.
    fn initial_counts(&self, workers: usize) -> Vec<f32> {
        let k = self.cfg.topics;
        let mut v = vec![0.0f32; (self.vocabulary + 1) * k];
        let t = self.totals_offset();
        for d in 0..self.owned(workers) {
            for (&w, &z) in self.docs[d].iter().zip(&self.initial_z(d)) {
                v[w as usize * k + z as usize] += 1.0;
                v[t + z as usize] += 1.0;
            }
        }
        v
    }
}

/// `lgamma` for `x > 0` (Lanczos, g = 7, 9 terms; relative error about 1e-15).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection.
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// LDA learned through row tables.
pub type LdaTables = TableLearning<Lda>;

impl TableModel for Lda {
    type Local = LdaLocal;

    fn row_len(&self) -> usize {
        self.cfg.topics
    }

    fn rows_total(&self) -> usize {
        self.vocabulary + 1
    }

    fn offset(&self, key: RowKey) -> Result<usize> {
        let row = key.row as usize;
        match key.table {
            WORD_TOPIC_TABLE if row < self.vocabulary => Ok(row * self.cfg.topics),
            TOPIC_TOTAL_TABLE if row == 0 => Ok(self.totals_offset()),
            _ => Err(CoreError::Config(format!(
                "row {} of table {} is out of range: the LDA tables hold {} word rows (table \
                 {WORD_TOPIC_TABLE}) and one totals row (table {TOPIC_TOTAL_TABLE})",
                key.row, key.table, self.vocabulary
            ))),
        }
    }

    fn initial_values(&self, workers: usize) -> Vec<f32> {
        // The counts of the workers' initial assignments.
        self.initial_counts(workers)
    }

    fn local(&self, worker: usize, workers: usize) -> LdaLocal {
        let share = self.share(workers);
        let first = (worker * share).min(self.docs.len());
        let last = (first + share).min(self.docs.len());
        let z: Vec<Vec<u32>> = (first..last).map(|d| self.initial_z(d)).collect();
        let ndk = z
            .iter()
            .map(|zd| {
                let mut c = vec![0u32; self.cfg.topics];
                for &t in zd {
                    c[t as usize] += 1;
                }
                c
            })
            .collect();
        LdaLocal { first, z, ndk }
    }

    fn examples_per_clock(&self, workers: usize) -> usize {
        // Worker 0's mini-batch (every worker's share is as long).
        self.docs_per_clock(workers)
            .min(self.share(workers).min(self.docs.len()))
    }

    fn rows(&self, worker: usize, workers: usize, clock: u64, part: Range<usize>) -> Vec<RowKey> {
        let mut rows: Vec<RowKey> = self
            .minibatch_part(worker, workers, clock, part)
            .flat_map(|d| self.docs[d].iter())
            .map(|&w| RowKey {
                table: WORD_TOPIC_TABLE,
                row: w,
            })
            .collect();
        rows.push(RowKey {
            table: TOPIC_TOTAL_TABLE,
            row: 0,
        });
        rows.sort_unstable();
        rows.dedup();
        rows
    }

    fn compute(
        &self,
        local: &mut LdaLocal,
        rows: &[RowKey],
        values: &mut [f32],
        worker: usize,
        workers: usize,
        clock: u64,
        part: Range<usize>,
    ) {
        let k = self.cfg.topics;
        let (alpha, beta) = (self.cfg.alpha, self.cfg.beta);
        let vbeta = self.vocabulary as f64 * beta;
        // One stream per (worker, clock, first document of the step); the first step's is the
        // stream a whole-clock computation draws from.
        let mut rng = ChaCha8Rng::seed_from_u64(
            self.cfg.init_seed
                ^ ((worker as u64) << 40)
                ^ clock.wrapping_mul(0x2545_f491_4f6c_dd1d)
                ^ (part.start as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
        );
        // The totals row sorts last (table 1 after table 0).
        let t = (rows.len() - 1) * k;
        let mut p = vec![0.0f64; k];
        let docs: Vec<usize> = self.minibatch_part(worker, workers, clock, part).collect();
        for d in docs {
            let li = d - local.first;
            for i in 0..self.docs[d].len() {
                let w = self.docs[d][i];
                let o = rows
                    .binary_search(&RowKey {
                        table: WORD_TOPIC_TABLE,
                        row: w,
                    })
                    .expect("the mini-batch's words")
                    * k;
                let old = local.z[li][i] as usize;
                local.ndk[li][old] -= 1;
                values[o + old] -= 1.0;
                values[t + old] -= 1.0;
                let mut sum = 0.0;
                for (j, pj) in p.iter_mut().enumerate() {
                    let nwk = f64::from(values[o + j]).max(0.0);
                    let nk = f64::from(values[t + j]).max(0.0);
                    sum += (f64::from(local.ndk[li][j]) + alpha) * (nwk + beta) / (nk + vbeta);
                    *pj = sum;
                }
                let u = rng.gen::<f64>() * sum;
                let new = p.partition_point(|&c| c <= u).min(k - 1);
                local.z[li][i] = new as u32;
                local.ndk[li][new] += 1;
                values[o + new] += 1.0;
                values[t + new] += 1.0;
            }
        }
    }

    fn evaluate(&self, values: &[f32]) -> (f64, f64) {
        let k = self.cfg.topics;
        let (beta, v) = (self.cfg.beta, self.vocabulary as f64);
        let t = self.totals_offset();
        let (lg_beta, lg_vbeta) = (ln_gamma(beta), ln_gamma(v * beta));
        let mut ll = 0.0;
        for j in 0..k {
            ll += lg_vbeta - ln_gamma(f64::from(values[t + j]).max(0.0) + v * beta);
        }
        for c in &values[..t] {
            let c = f64::from(*c).max(0.0);
            if c > 0.0 {
                ll += ln_gamma(c + beta) - lg_beta;
            }
        }
        (-ll / self.tokens as f64, f64::NAN)
    }

    fn batch_size(&self, workers: usize) -> usize {
        // Tokens sampled per clock, on average.
        let per_doc = self.tokens as f64 / self.docs.len() as f64;
        ((self.docs_per_clock(workers) as f64 * per_doc).round() as usize).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::BagOfWordsShape;
    use crate::learning::Learning;
    use crate::protocol::Role;
    use std::sync::Arc;

    fn lda() -> Lda {
        let corpus = BagOfWordsShape {
            documents: 60,
            vocabulary: 200,
            topics: 4,
            words_per_document: 40,
        }
        .generate(3);
        let cfg = LdaConfig {
            topics: 4,
            alpha: 0.1,
            beta: 0.01,
            minibatch_fraction: 0.5,
            init_seed: 5,
        };
        Lda::new(cfg, &corpus).unwrap()
    }

    #[test]
    fn ln_gamma_matches_known_values() {
        for (x, want) in [
            (1.0, 0.0),
            (2.0, 0.0),
            (5.0, 24f64.ln()),
            (0.5, std::f64::consts::PI.sqrt().ln()),
            (100.5, 361.435_540_467_777_4),
        ] {
            assert!(
                (ln_gamma(x) - want).abs() < 1e-9,
                "{x}: {} vs {want}",
                ln_gamma(x)
            );
        }
    }

    #[test]
    fn gibbs_sampling_keeps_counts_whole_and_raises_the_likelihood() {
        let m = Arc::new(lda());
        let t = LdaTables::new(m.clone(), 1, 1).unwrap();
        let shard = t.node(0, Role::Server, 1);
        let start = m.initial_values(1);
        let total: f32 = start[m.totals_offset()..].iter().sum();
        assert_eq!(total as usize, m.tokens(), "one worker owns every document");
        let before = m.evaluate(&start).0;
        // One worker sampling on the full table, as a sequential sampler does.
        let mut local = m.local(0, 1);
        let mut values = start.clone();
        for clock in 0..20 {
            let all = 0..m.examples_per_clock(1);
            let rows = m.rows(0, 1, clock, all.clone());
            let mut v: Vec<f32> = rows
                .iter()
                .flat_map(|r| {
                    let o = m.offset(*r).unwrap();
                    values[o..o + 4].to_vec()
                })
                .collect();
            m.compute(&mut local, &rows, &mut v, 0, 1, clock, all);
            for (j, r) in rows.iter().enumerate() {
                let o = m.offset(*r).unwrap();
                values[o..o + 4].copy_from_slice(&v[j * 4..j * 4 + 4]);
            }
        }
        assert!(values.iter().all(|c| *c >= 0.0 && c.fract() == 0.0));
        let total: f32 = values[m.totals_offset()..].iter().sum();
        assert_eq!(total as usize, m.tokens());
        let after = m.evaluate(&values).0;
        assert!(after < before, "per-token loss {before} -> {after}");
        // The learning's shard starts from the same counts.
        let (l0, acc) = t.evaluate(&shard);
        assert!((l0 - before).abs() < 1e-12 && acc.is_nan());
    }

    #[test]
    fn bad_settings_and_rows_are_refused() {
        let corpus = BagOfWordsShape {
            documents: 4,
            vocabulary: 10,
            topics: 2,
            words_per_document: 5,
        }
        .generate(1);
        let mut cfg = LdaConfig {
            topics: 1,
            alpha: 0.1,
            beta: 0.01,
            minibatch_fraction: 0.5,
            init_seed: 5,
        };
        assert!(Lda::new(cfg, &corpus)
            .unwrap_err()
            .to_string()
            .contains("topics"));
        cfg.topics = 2;
        let m = Lda::new(cfg, &corpus).unwrap();
        let e = m
            .offset(RowKey {
                table: WORD_TOPIC_TABLE,
                row: 10,
            })
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 10 of table 0 is out of range"), "{e}");
    }
}
