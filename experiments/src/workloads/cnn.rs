//! The image data of CNN experiments (`[images]`): a seeded synthetic twin of CIFAR
//! (`--data synthetic`) or the real CIFAR-10/100 binaries from the dataset cache
//! (`--data real`), and the CNN workload over them. The workload needs the `cnn` feature; a
//! build without it says so and how to get it.

use crate::harness::data_source::DataSource;
use anyhow::Result;
use bench_core::workload::Workload;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The `[images]` section.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageData {
    /// The real dataset, by its datasets.lock name (read with `--data real`).
    #[serde(default)]
    pub dataset: Option<String>,
    /// Training images of the twin.
    pub train_images: usize,
    /// Evaluation images of the twin.
    pub test_images: usize,
    /// Width and height of the twin's images (CIFAR: 32).
    pub side: usize,
    /// Classes (CIFAR-10: 10, CIFAR-100: 100).
    pub classes: usize,
    /// The twin's pixel noise.
    pub noise: f32,
    /// The share of the twin's images (training and evaluation alike) labelled with another
    /// class, drawn uniformly ([`bench_core::data::ImageSet::flip_labels`]): it caps the best
    /// accuracy near `1 - label_noise`, where the twin alone is separable. Default 0.
    #[serde(default)]
    pub label_noise: f64,
    /// Evaluate on `test_images` training images spread evenly over the training set (so
    /// every worker's shard is represented) instead of held-out ones: the curve is then
    /// training accuracy (ASAP Fig 8's "99% training accuracy").
    #[serde(default)]
    pub evaluate_on_training: bool,
}

impl ImageData {
    /// Checks the twin's shape (with real data the files decide it, but the twin's shape is
    /// still what `--data synthetic` runs), so a bad section fails before any run starts.
    ///
    /// # Errors
    /// As [`bench_core::data::ImageShape::validate`], or no evaluation images.
    pub fn validate(&self) -> Result<()> {
        if self.test_images == 0 {
            anyhow::bail!("images.test_images must be >= 1");
        }
        if !(0.0..1.0).contains(&self.label_noise) {
            anyhow::bail!(
                "images.label_noise must be in [0, 1), got {}",
                self.label_noise
            );
        }
        bench_core::data::ImageShape {
            images: self.train_images + self.test_images,
            side: self.side,
            classes: self.classes,
            noise: self.noise,
        }
        .validate()?;
        Ok(())
    }
}

/// What a build without the `cnn` feature answers to a CNN configuration.
pub const NO_CNN: &str = "this configuration trains a CNN, and this build has no CNN support: rebuild with `--features cnn` (e.g. `cargo run --release --features cnn --bin ...`, or the Makefile's *-cnn targets)";

#[cfg(feature = "cnn")]
mod with_cnn {
    use super::*;
    use crate::harness::data_source::DataMode;
    use anyhow::{bail, Context};
    use bench_core::data::{
        read_cifar, CifarImages, DatasetCache, DatasetLock, ImageSet, ImageShape,
    };
    use bench_core::workload::{CnnConfig, CnnWorkload};
    use std::path::{Path, PathBuf};

    impl ImageData {
        /// The CNN `cnn` on the twin drawn from `seed` (or on the real images), initial
        /// parameters from `seed`; records the data in `data`.
        ///
        /// # Errors
        /// For an invalid shape or network, or (real data) a dataset not fetched, not CIFAR,
        /// or a file that does not parse.
        pub fn workload(
            &self,
            cnn: &CnnConfig,
            seed: u64,
            data: &DataSource,
        ) -> Result<Arc<dyn Workload>> {
            let (mut train, mut test) = if data.mode() == DataMode::Real && self.dataset.is_some() {
                self.real(data)?
            } else {
                self.twin(seed, data)?
            };
            let stats = train.channel_stats();
            train.normalise(&stats);
            test.normalise(&stats);
            if self.evaluate_on_training {
                test = train.spread(self.test_images);
                data.record(format!(
                    "images: evaluated on {} training images spread over the training set (training accuracy)",
                    test.len()
                ));
            }
            let w = CnnWorkload::new_on(cnn.clone(), train, test, seed, data.device())?;
            data.record(w.describe());
            Ok(Arc::new(w))
        }

        fn twin(&self, seed: u64, data: &DataSource) -> Result<(ImageSet, ImageSet)> {
            let mut all = ImageShape {
                images: self.train_images + self.test_images,
                side: self.side,
                classes: self.classes,
                noise: self.noise,
            }
            .generate(seed)?;
            let flipped = all.flip_labels(self.label_noise, seed)?;
            let labels = if flipped > 0 {
                format!(
                    ", label noise {}: {flipped} images labelled with another class",
                    self.label_noise
                )
            } else {
                String::new()
            };
            data.record(format!(
                "images: synthetic twin{} ({} + {} images of {}x{} pixels, {} classes, noise {}{labels}, seed {seed}; bench_core::data::ImageShape: classes are grating frequency pairs x colour mixtures at a random phase, equal mean colour)",
                self.dataset.as_ref().map_or(String::new(), |d| format!(" of {d}")),
                self.train_images,
                self.test_images,
                self.side,
                self.side,
                self.classes,
                self.noise
            ));
            let n = self.train_images;
            Ok((all.slice(0..n), all.slice(n..all.len())))
        }

        fn real(&self, data: &DataSource) -> Result<(ImageSet, ImageSet)> {
            let name = self.dataset.as_deref().unwrap_or_default();
            let lock = DatasetLock::read(&crate::harness::data_source::lock_path(None))?;
            let entry = lock.get(name)?;
            if entry.format != "cifar-binary" {
                bail!("dataset '{name}' is {}, not CIFAR binary", entry.format);
            }
            let classes = entry.classes.map_or(10, |c| c as usize);
            let root = DatasetCache::from_env()?.path(entry)?;
            let (train_files, test_files) = cifar_files(&root, classes)?;
            let read = |files: &[PathBuf]| -> Result<ImageSet> {
                let mut out = CifarImages::default();
                for f in files {
                    let r = std::fs::File::open(f)
                        .with_context(|| format!("cannot open {}", f.display()))?;
                    read_cifar(std::io::BufReader::new(r), f, classes, &mut out)?;
                }
                Ok(ImageSet::from_cifar(&out, classes))
            };
            let (train, test) = (read(&train_files)?, read(&test_files)?);
            data.record(format!(
                "images: real {name} from {} ({} training + {} evaluation images, checksum {})",
                root.display(),
                train.len(),
                test.len(),
                entry.checksum.label()
            ));
            Ok((train, test))
        }
    }

    /// The training and test files of an unpacked CIFAR archive: CIFAR-10's `data_batch_*.bin`
    /// and `test_batch.bin`, CIFAR-100's `train.bin` and `test.bin`, at `root` or one folder
    /// below it.
    fn cifar_files(root: &Path, classes: usize) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
        let mut below: Vec<PathBuf> = std::fs::read_dir(root)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        below.sort();
        let mut dirs = vec![root.to_path_buf()];
        dirs.extend(below);
        for d in dirs {
            let mut train: Vec<PathBuf> = std::fs::read_dir(&d)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    let n = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                    if classes == 10 {
                        n.starts_with("data_batch_") && n.ends_with(".bin")
                    } else {
                        n == "train.bin"
                    }
                })
                .collect();
            train.sort();
            let test = d.join(if classes == 10 {
                "test_batch.bin"
            } else {
                "test.bin"
            });
            if !train.is_empty() && test.is_file() {
                return Ok((train, vec![test]));
            }
        }
        bail!(
            "{}: no CIFAR-{classes} binaries (expected {} and {} at the top or one folder down)",
            root.display(),
            if classes == 10 {
                "data_batch_*.bin"
            } else {
                "train.bin"
            },
            if classes == 10 {
                "test_batch.bin"
            } else {
                "test.bin"
            }
        )
    }
}

#[cfg(not(feature = "cnn"))]
impl ImageData {
    /// Without the `cnn` feature there is no CNN workload.
    ///
    /// # Errors
    /// Always: [`NO_CNN`].
    pub fn workload(
        &self,
        _cnn: &bench_core::workload::CnnConfig,
        _seed: u64,
        _data: &DataSource,
    ) -> Result<Arc<dyn Workload>> {
        anyhow::bail!(NO_CNN)
    }
}
