//! `syncbench datasets ...`: list, fetch, verify, pin and locate the datasets of
//! `datasets.lock`, and inspect local files.

use crate::harness::data_source::lock_path;
use anyhow::{Context, Result};
use bench_core::data::{pin_in_text, DatasetCache, DatasetLock};
use clap::Subcommand;
use std::path::{Path, PathBuf};

/// The datasets subcommands.
#[derive(Debug, Subcommand)]
pub enum DatasetsCommand {
    /// Every dataset of the lock: name, format, shape, checksum state and cache state.
    List,
    /// Download each NAME (resuming a partial download), verify its checksum and size, unpack
    /// it into the cache, and print the path experiments read (one line per dataset).
    Fetch {
        /// Lock-file names (see `list`); all are checked against the lock before any download.
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
    },
    /// Re-hash the download of NAME against the lock; a mismatch moves it aside.
    Verify {
        /// Lock-file name.
        name: String,
    },
    /// Record the sha256 of NAME's download in the lock (only for `unpinned` entries: a pinned
    /// checksum is never overwritten).
    Pin {
        /// Lock-file name.
        name: String,
    },
    /// Print the path of NAME's verified data (an error if it is not fetched and verified).
    Path {
        /// Lock-file name.
        name: String,
    },
    /// Write a seeded synthetic twin of NAME (its column count, density, value distribution
    /// and class balance, ROWS rows) in the dataset's own format (ratings twins as MovieLens
    /// CSV).
    Twin {
        /// Lock-file name.
        name: String,
        /// Rows (examples, images, ratings or documents).
        #[arg(long, default_value_t = 10_000)]
        rows: usize,
        /// Seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Mean non-zeros per row for sparse LIBSVM twins (default: the dataset's own).
        #[arg(long)]
        nnz_per_row: Option<f64>,
        /// Output file (written under a temporary name, renamed when complete).
        #[arg(long)]
        out: PathBuf,
    },
    /// Write the rows a figure trains on, as LIBSVM files: every SVM [data] twin (training and
    /// held-out rows) and every ASYNC [[datasets]] least-squares twin of CONFIG, generated
    /// from SEED by the same call the figure makes, into a new folder with an index.tsv.
    FigureTwins {
        /// The figure's configuration (e.g. experiments/configs/hop-fig12.quick.toml; the
        /// quick configurations are the ones compiled into the binaries).
        #[arg(long)]
        config: PathBuf,
        /// The run's seed (a figure's first seed is 1 unless --seed said otherwise).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The folder to create (it must not exist; written under a temporary name first).
        #[arg(long)]
        out_dir: PathBuf,
    },
    /// Read a local dataset file and print what it holds: the format (recognised from the
    /// content: LIBSVM, CIFAR-10/100 binary, MovieLens CSV, Netflix per-movie, UCI
    /// bag-of-words), then its sizes, label or rating counts and parse time.
    Inspect {
        /// The file.
        file: PathBuf,
        /// Read the file as this format instead of recognising it: libsvm, cifar10, cifar100,
        /// movielens, netflix or bag-of-words.
        #[arg(long)]
        format: Option<String>,
        /// LIBSVM: declared feature count: indices beyond it are errors. Default: the largest
        /// index.
        #[arg(long)]
        features: Option<usize>,
        /// Print one JSON object (keys: file, format, detected, parse_seconds, and the
        /// format's counts; LIBSVM: rows, features, nnz, labels).
        #[arg(long)]
        json: bool,
    },
}

/// Runs one datasets subcommand.
///
/// # Errors
/// Any lock, cache, download or parse error, with its context.
pub fn run(command: DatasetsCommand, lock: Option<PathBuf>) -> Result<()> {
    if let DatasetsCommand::Inspect {
        file,
        format,
        features,
        json,
    } = &command
    {
        return inspect(file, format.as_deref(), *features, *json);
    }
    if let DatasetsCommand::FigureTwins {
        config,
        seed,
        out_dir,
    } = &command
    {
        let files = crate::tools::figure_twins::export(config, *seed, out_dir)?;
        eprintln!(
            "{}: {} files of the rows it trains on with seed {seed} -> {}",
            config.display(),
            files.len(),
            out_dir.display()
        );
        return Ok(());
    }
    let lock_file = lock_path(lock);
    let lock = DatasetLock::read(&lock_file)?;
    let cache = DatasetCache::from_env()?;
    match command {
        DatasetsCommand::List => {
            println!("lock:  {}", lock_file.display());
            println!("cache: {}", cache.root().display());
            println!(
                "{:<20} {:<14} {:>11} {:>10} {:<10} cache",
                "name", "format", "rows", "features", "checksum"
            );
            for e in &lock.entries {
                let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
                let sum = match &e.checksum {
                    bench_core::data::Checksum::Unpinned => "unpinned",
                    bench_core::data::Checksum::Md5(_) => "md5",
                    bench_core::data::Checksum::Sha256(_) => "sha256",
                };
                println!(
                    "{:<20} {:<14} {:>11} {:>10} {:<10} {}",
                    e.name,
                    e.format,
                    opt(e.rows),
                    opt(e.features),
                    sum,
                    cache.status(e).label()
                );
            }
        }
        DatasetsCommand::Fetch { names } => {
            let entries = names
                .iter()
                .map(|n| lock.get(n))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            for (name, e) in names.iter().zip(entries) {
                fetch_one(&cache, e, name, &lock_file)?;
            }
        }
        DatasetsCommand::Verify { name } => {
            let e = lock.get(&name)?;
            let r = cache.verify(e)?;
            eprintln!(
                "{name}: {} ({} bytes, sha256 {})",
                if r.unpinned {
                    "unpinned, nothing to compare with"
                } else {
                    "checksum matches"
                },
                r.bytes,
                r.digest.sha256
            );
            println!("{}", r.path.display());
        }
        DatasetsCommand::Pin { name } => {
            let e = lock.get(&name)?;
            let d = cache.download_digest(e)?;
            let text = std::fs::read_to_string(&lock_file)
                .with_context(|| format!("cannot read {}", lock_file.display()))?;
            let pinned = pin_in_text(&text, &lock_file, &name, &d.sha256)?;
            let tmp = lock_file.with_extension("lock.tmp");
            std::fs::write(&tmp, pinned)
                .with_context(|| format!("cannot write {}", tmp.display()))?;
            std::fs::rename(&tmp, &lock_file)
                .with_context(|| format!("cannot replace {}", lock_file.display()))?;
            println!(
                "{name}: pinned sha256:{} in {}",
                d.sha256,
                lock_file.display()
            );
        }
        DatasetsCommand::Path { name } => {
            println!("{}", cache.path(lock.get(&name)?)?.display());
        }
        DatasetsCommand::Twin {
            name,
            rows,
            seed,
            nnz_per_row,
            out,
        } => {
            let e = lock.get(&name)?;
            let mut twin = bench_core::data::Twin::of(e, rows)?;
            if let Some(z) = nnz_per_row {
                match &mut twin {
                    bench_core::data::Twin::Sparse(s) if z > 0.0 => s.nnz_per_row = z,
                    _ => anyhow::bail!(
                        "--nnz-per-row must be > 0 and applies to sparse LIBSVM twins only ({name} is {})",
                        e.format
                    ),
                }
            }
            let tmp = out.with_extension("twin.tmp");
            let written = twin.write(seed, &tmp).and_then(|()| {
                std::fs::rename(&tmp, &out).map_err(|err| bench_core::CoreError::io(&out, err))
            });
            if let Err(err) = written {
                let _ = std::fs::remove_file(&tmp);
                return Err(err.into());
            }
            eprintln!(
                "{name}: {rows} rows of its synthetic twin (seed {seed}) -> {}",
                out.display()
            );
        }
        DatasetsCommand::Inspect { .. } | DatasetsCommand::FigureTwins { .. } => {
            unreachable!("handled above")
        }
    }
    Ok(())
}

fn inspect(file: &Path, format: Option<&str>, features: Option<usize>, json: bool) -> Result<()> {
    use bench_core::data::{detect_format, DataFormat};
    use std::io::Read;
    let open = || -> Result<std::io::BufReader<std::fs::File>> {
        let f =
            std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
        Ok(std::io::BufReader::with_capacity(1 << 20, f))
    };
    let (format, detected) = match format {
        Some(name) => (DataFormat::parse(name)?, false),
        None => {
            let len = std::fs::metadata(file)
                .with_context(|| format!("cannot open {}", file.display()))?
                .len();
            let mut head = Vec::with_capacity(64 << 10);
            open()?
                .take(64 << 10)
                .read_to_end(&mut head)
                .with_context(|| format!("cannot read {}", file.display()))?;
            (detect_format(&head, len, file)?, true)
        }
    };
    let t0 = std::time::Instant::now();
    // (name, value) pairs of the summary, in print order.
    let mut facts: Vec<(&str, serde_json::Value)> = Vec::new();
    match format {
        DataFormat::Libsvm => {
            let m = bench_core::data::read_libsvm(open()?, file, features)?;
            let mut labels: std::collections::BTreeMap<String, usize> = Default::default();
            for l in &m.labels {
                *labels.entry(format!("{l}")).or_default() += 1;
            }
            facts.push(("rows", m.rows().into()));
            facts.push(("features", m.cols.into()));
            facts.push(("nnz", m.nnz().into()));
            facts.push(("labels", serde_json::to_value(labels)?));
            facts.push(("raw_bytes", m.raw_bytes().into()));
            facts.push(("heap_bytes", m.heap_bytes().into()));
        }
        DataFormat::Cifar10 | DataFormat::Cifar100 => {
            let classes = if format == DataFormat::Cifar10 {
                10
            } else {
                100
            };
            let mut out = bench_core::data::CifarImages::default();
            bench_core::data::read_cifar(open()?, file, classes, &mut out)?;
            facts.push(("images", out.len().into()));
            facts.push(("image_shape", serde_json::json!([3, 32, 32])));
            facts.push(("labels", serde_json::to_value(counts(&out.labels))?));
            if let Some(c) = &out.coarse {
                facts.push(("coarse_labels", serde_json::to_value(counts(c))?));
            }
        }
        DataFormat::Movielens | DataFormat::Netflix => {
            let mut out = bench_core::data::RatingsData::default();
            if format == DataFormat::Movielens {
                bench_core::data::read_movielens(open()?, file, &mut out)?;
            } else {
                bench_core::data::read_netflix_movie(open()?, file, &mut out)?;
            }
            let values = out.ratings.iter().map(|r| r.value as f64);
            let (lo, hi) = values
                .clone()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                    (a.min(v), b.max(v))
                });
            let mean = values.sum::<f64>() / out.ratings.len().max(1) as f64;
            facts.push(("ratings", out.ratings.len().into()));
            facts.push(("users", out.user_ids.len().into()));
            facts.push(("items", out.item_ids.len().into()));
            if !out.ratings.is_empty() {
                facts.push(("rating_min", lo.into()));
                facts.push(("rating_max", hi.into()));
                facts.push(("rating_mean", mean.into()));
            }
        }
        DataFormat::BagOfWords => {
            let m = bench_core::data::read_bag_of_words(open()?, file)?;
            let tokens: f64 = m.values.iter().map(|&v| v as f64).sum();
            facts.push(("documents", m.rows().into()));
            facts.push(("vocabulary", m.cols.into()));
            facts.push(("nnz", m.nnz().into()));
            facts.push(("tokens", (tokens as u64).into()));
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    if json {
        let mut v = serde_json::Map::new();
        v.insert("file".into(), file.display().to_string().into());
        v.insert("format".into(), format.name().into());
        v.insert("detected".into(), detected.into());
        for (k, x) in facts {
            v.insert(k.into(), x);
        }
        v.insert("parse_seconds".into(), secs.into());
        println!("{}", serde_json::Value::Object(v));
    } else {
        println!("{:<14}{}", "file:", file.display());
        println!(
            "{:<14}{} ({})",
            "format:",
            format.name(),
            if detected {
                "recognised from the content"
            } else {
                "as --format said"
            }
        );
        for (k, x) in facts {
            println!("{:<14}{x}", format!("{}:", k.replace('_', " ")));
        }
        println!("{:<14}{secs:.3} s", "parsed in:");
    }
    Ok(())
}

/// How many of each label.
fn counts(labels: &[u8]) -> std::collections::BTreeMap<u8, usize> {
    let mut m = std::collections::BTreeMap::new();
    for &l in labels {
        *m.entry(l).or_insert(0) += 1;
    }
    m
}

/// Fetches one dataset (`datasets fetch`), printing where experiments read it.
fn fetch_one(
    cache: &DatasetCache,
    e: &bench_core::data::DatasetEntry,
    name: &str,
    lock_file: &std::path::Path,
) -> Result<()> {
    let bar = crate::harness::output::progress(e.bytes.unwrap_or(0), &format!("fetch {name}"));
    let r = cache.fetch(e, &mut |done, total| {
        if let Some(t) = total {
            bar.set_length(t);
        }
        bar.set_position(done);
    });
    bar.finish_and_clear();
    let r = r?;
    if r.resumed_from > 0 {
        eprintln!("resumed after {} bytes", r.resumed_from);
    }
    eprintln!("{name}: {} bytes, sha256 {}", r.bytes, r.digest.sha256);
    if r.unpinned {
        eprintln!(
            "{name} has no checksum in {}: run `syncbench datasets pin {name}` to record this one",
            lock_file.display()
        );
    }
    println!("{}", r.path.display());
    Ok(())
}
