//! [`CnnWorkload`]: a network trained by SGD with momentum and weight decay on images, behind
//! the same [`Workload`] trait as the linear models, so every driver, transport and protocol
//! moves its parameters and updates unchanged (one flat `f32` buffer).

use super::config::CnnConfig;
use super::device::CnnDevice;
use super::flat;
use super::loss::{argmax, softmax_cross_entropy};
use super::network::Network;
use crate::data::{check_labels, ImageSet};
use crate::error::{CoreError, Result};
use crate::learning::Workload;
use burn::prelude::*;
use burn::tensor::TensorData;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Mutex;
use std::time::Instant;

/// Images per forward pass at evaluation (batch statistics are taken over this many).
pub const EVAL_BATCH: usize = 200;

/// Padding of the random crop.
const CROP_PAD: usize = 4;

/// A CNN on an image set.
pub struct CnnWorkload {
    cfg: CnnConfig,
    train: ImageSet,
    test: ImageSet,
    /// The network on the autodiff CPU device, its parameters loaded (cloned per update).
    trainable: Mutex<Network>,
    /// The same network on the plain device, for evaluation.
    inference: Mutex<Network>,
    dim: usize,
    initial: Vec<f32>,
    /// Each worker's momentum buffer (empty until its first update).
    velocity: Mutex<Vec<Vec<f32>>>,
    /// Mixed into the augmentation's generator, so seeds differ in crops and flips too.
    seed: u64,
    /// Where it computes.
    on: CnnDevice,
    /// burn's device for it (plain; the autodiff one is derived per update).
    device: Device,
}

impl std::fmt::Debug for CnnWorkload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CnnWorkload")
            .field("model", &self.cfg.model.name())
            .field("parameters", &self.dim)
            .field("train", &self.train.len())
            .field("test", &self.test.len())
            .field("device", &self.on)
            .finish()
    }
}

impl CnnWorkload {
    /// The network `cfg` names on `train` / `test` (normalised already), with initial
    /// parameters drawn from `seed`, on the CPU ([`CnnDevice::Cpu`]).
    ///
    /// # Errors
    /// [`CoreError::Config`] for invalid settings, empty sets, sets of different image sizes or
    /// class counts, or a label out of range.
    pub fn new(cfg: CnnConfig, train: ImageSet, test: ImageSet, seed: u64) -> Result<Self> {
        Self::new_on(cfg, train, test, seed, CnnDevice::Cpu)
    }

    /// [`Self::new`] computing on `on`. The initial parameters are drawn on the host, so every
    /// device starts a seed from the same values.
    ///
    /// # Errors
    /// As [`Self::new`], and a device this build or machine does not have
    /// ([`CnnDevice::check`]).
    pub fn new_on(
        cfg: CnnConfig,
        train: ImageSet,
        test: ImageSet,
        seed: u64,
        on: CnnDevice,
    ) -> Result<Self> {
        cfg.validate()?;
        if train.is_empty() || test.is_empty() {
            return Err(CoreError::Config(
                "cnn: the training and evaluation image sets must not be empty".into(),
            ));
        }
        if train.side != test.side || train.classes != test.classes {
            return Err(CoreError::Config(format!(
                "cnn: training images are {}px with {} classes, evaluation images {}px with {}",
                train.side, train.classes, test.side, test.classes
            )));
        }
        check_labels(&train)?;
        check_labels(&test)?;
        let device = on.burn()?;
        let train_device = device.clone().autodiff();
        let template = Network::new(&cfg, train.side, train.classes, &train_device);
        let shapes = flat::shapes(&template);
        let initial = flat::initial(&shapes, seed);
        let trainable = flat::load(template, &initial);
        let inference = flat::load(
            Network::new(&cfg, train.side, train.classes, &device),
            &initial,
        );
        Ok(Self {
            dim: initial.len(),
            cfg,
            train,
            test,
            trainable: Mutex::new(trainable),
            inference: Mutex::new(inference),
            initial,
            velocity: Mutex::new(Vec::new()),
            seed,
            on,
            device,
        })
    }

    /// The settings.
    pub fn config(&self) -> &CnnConfig {
        &self.cfg
    }

    /// Where it computes.
    pub fn device(&self) -> CnnDevice {
        self.on
    }

    /// One line for manifests: model, parameters, images.
    pub fn describe(&self) -> String {
        format!(
            "cnn: {} (width {}, {} parameters) on {}; {} training and {} evaluation images of {}x{} pixels, {} classes; SGD lr {} momentum {} weight decay {}{}, batch {} per worker{}",
            self.cfg.model.name(),
            self.cfg.width,
            self.dim,
            self.on.describe(),
            self.train.len(),
            self.test.len(),
            self.train.side,
            self.train.side,
            self.train.classes,
            self.cfg.lr,
            self.cfg.momentum,
            self.cfg.weight_decay,
            if self.cfg.lr_decay_epochs.is_empty() {
                String::new()
            } else {
                format!(
                    ", x{} at epochs {:?}",
                    self.cfg.lr_decay, self.cfg.lr_decay_epochs
                )
            },
            self.cfg.batch,
            if self.cfg.augment {
                ", random crop (pad 4) and flip"
            } else {
                ""
            }
        )
    }

    /// The training images of worker `worker`'s update `iter`: its contiguous share of the
    /// training set read cyclically (as the linear workloads do), augmented when asked with a
    /// generator seeded by `(seed, worker, iter)`.
    fn batch(&self, worker: usize, workers: usize, iter: u64) -> (Vec<f32>, Vec<i64>) {
        let n = self.train.len();
        let share = (n / workers.max(1)).max(1);
        let base = (worker * share) % n;
        let b = self.cfg.batch;
        let len = self.train.image_len();
        let mut x = vec![0.0f32; b * len];
        let mut y = Vec::with_capacity(b);
        let mut rng = ChaCha8Rng::seed_from_u64(
            self.seed ^ (worker as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ iter.rotate_left(17),
        );
        for k in 0..b {
            let r = (base + (iter as usize * b + k) % share) % n;
            let out = &mut x[k * len..(k + 1) * len];
            if self.cfg.augment {
                let dy = rng.gen_range(0..=2 * CROP_PAD);
                let dx = rng.gen_range(0..=2 * CROP_PAD);
                self.train
                    .augmented_into(r, CROP_PAD, (dy, dx), rng.gen_bool(0.5), out);
            } else {
                out.copy_from_slice(self.train.image(r));
            }
            y.push(i64::from(self.train.labels[r]));
        }
        (x, y)
    }

    /// The loss gradient of `model` on worker `worker`'s batch `iter` (no decay, no momentum).
    pub fn gradient(&self, model: &[f32], worker: usize, workers: usize, iter: u64) -> Vec<f32> {
        self.timed_gradient(model, worker, workers, iter).0
    }

    /// [`Self::gradient`] and the seconds its forward part (loading the network from the flat
    /// buffer, assembling and augmenting the batch, the forward pass and the loss) and its
    /// backward part (the backward pass and the gradient's extraction to the flat buffer) took.
    /// The forward time is taken after reading the loss's value, so a backend that computes
    /// lazily is charged where it computes.
    fn timed_gradient(
        &self,
        model: &[f32],
        worker: usize,
        workers: usize,
        iter: u64,
    ) -> (Vec<f32>, f64, f64) {
        let start = Instant::now();
        let net = flat::load(self.trainable.lock().expect("network lock").clone(), model);
        let device = self.device.clone().autodiff();
        let (x, y) = self.batch(worker, workers, iter);
        let s = self.train.side;
        let b = y.len();
        let x = Tensor::<4>::from_data(TensorData::new(x, [b, 3, s, s]), &device);
        let logits = net.forward(x);
        let (_, dlogits) = softmax_cross_entropy(&host(logits.clone()), &y, self.train.classes);
        let forward = start.elapsed().as_secs_f64();
        let start = Instant::now();
        // The loss's gradient comes from the host ([`super::loss`]); summing the logits times
        // it (a constant) hands exactly that gradient to the network's backward pass.
        let dlogits =
            Tensor::<2>::from_data(TensorData::new(dlogits, [b, self.train.classes]), &device);
        let mut grads = (logits * dlogits).sum().backward();
        let g = flat::gradient(&net, &mut grads, self.dim);
        (g, forward, start.elapsed().as_secs_f64())
    }

    /// One update of worker 0 (of 1) from `model`, timed in its three parts: what
    /// `syncbench profile` measures.
    pub fn timed_step(&self, model: &[f32], iter: u64) -> StepTimes {
        let (g, forward, backward) = self.timed_gradient(model, 0, 1, iter);
        let start = Instant::now();
        let update = self.step_from(g, model, 0, 1, iter);
        std::hint::black_box(&update);
        StepTimes {
            forward,
            backward,
            optimizer: start.elapsed().as_secs_f64(),
        }
    }

    /// The update from gradient `g`: weight decay, the worker's momentum, the scheduled rate.
    fn step_from(
        &self,
        mut g: Vec<f32>,
        model: &[f32],
        worker: usize,
        workers: usize,
        iter: u64,
    ) -> Vec<f32> {
        let wd = self.cfg.weight_decay as f32;
        if wd > 0.0 {
            for (gi, &w) in g.iter_mut().zip(model) {
                *gi += wd * w;
            }
        }
        let epochs =
            iter as f64 * (self.cfg.batch * workers.max(1)) as f64 / self.train.len() as f64;
        let lr = self.cfg.lr_at(epochs) as f32;
        let mu = self.cfg.momentum as f32;
        if mu == 0.0 {
            return g.iter().map(|&v| -lr * v).collect();
        }
        let mut v = {
            let mut all = self.velocity.lock().expect("velocity lock");
            if all.len() <= worker {
                all.resize(worker + 1, Vec::new());
            }
            std::mem::take(&mut all[worker])
        };
        // A worker's update 0 starts its run: a buffer left by an earlier run of the same
        // workload (another mode, the same seed) must not carry over.
        if v.is_empty() || iter == 0 {
            v = g;
        } else {
            for (vi, gi) in v.iter_mut().zip(&g) {
                *vi = mu * *vi + gi;
            }
        }
        let update = v.iter().map(|&vi| -lr * vi).collect();
        self.velocity.lock().expect("velocity lock")[worker] = v;
        update
    }
}

/// A tensor's floats on the host.
fn host(t: Tensor<2>) -> Vec<f32> {
    t.into_data()
        .convert::<f32>()
        .try_to_vec::<f32>()
        .expect("the networks' logits are f32")
}

/// Seconds of one training step's parts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepTimes {
    /// Loading the network, the batch, the forward pass and the loss.
    pub forward: f64,
    /// Backward pass and the gradient's extraction.
    pub backward: f64,
    /// Weight decay, momentum and the step.
    pub optimizer: f64,
}

impl StepTimes {
    /// The whole step.
    pub fn total(&self) -> f64 {
        self.forward + self.backward + self.optimizer
    }
}

impl Workload for CnnWorkload {
    fn dim(&self) -> usize {
        self.dim
    }

    fn initial_model(&self) -> Vec<f32> {
        self.initial.clone()
    }

    fn batch_size(&self, _workers: usize) -> usize {
        self.cfg.batch
    }

    /// `-lr_t v` with `v <- momentum v + (grad + weight_decay w)`, each worker keeping its own
    /// `v` (SGD with momentum as PyTorch and the papers' frameworks run it, on the worker), and
    /// `lr_t` decayed at the configured epochs, an epoch counted as `iter * batch * workers`
    /// images (every worker progressing equally). A worker's update 0 starts a fresh `v`, so
    /// runs that share the workload do not share momentum.
    fn update(&self, model: &[f32], worker: usize, workers: usize, iter: u64) -> Vec<f32> {
        let g = self.gradient(model, worker, workers, iter);
        self.step_from(g, model, worker, workers, iter)
    }

    /// Mean cross-entropy and accuracy on the evaluation images, in batches of
    /// [`EVAL_BATCH`].
    /// Each worker's momentum buffer lives here between its updates (with momentum > 0).
    fn keeps_worker_state(&self) -> bool {
        self.cfg.momentum != 0.0
    }

    fn evaluate(&self, model: &[f32]) -> (f64, f64) {
        let net = flat::load(self.inference.lock().expect("network lock").clone(), model);
        let device = self.device.clone();
        let (s, len, n) = (self.test.side, self.test.image_len(), self.test.len());
        let (mut loss, mut correct) = (0.0f64, 0usize);
        let mut start = 0;
        while start < n {
            let end = (start + EVAL_BATCH).min(n);
            let b = end - start;
            let x = Tensor::<4>::from_data(
                TensorData::new(
                    self.test.pixels[start * len..end * len].to_vec(),
                    [b, 3, s, s],
                ),
                &device,
            );
            let labels: Vec<i64> = self.test.labels[start..end]
                .iter()
                .map(|&l| i64::from(l))
                .collect();
            let logits = host(net.forward(x));
            let classes = self.test.classes;
            let (l, _) = softmax_cross_entropy(&logits, &labels, classes);
            loss += l * b as f64;
            let pred = argmax(&logits, classes);
            correct += pred
                .iter()
                .zip(&labels)
                .filter(|&(&p, &l)| p as i64 == l)
                .count();
            start = end;
        }
        (loss / n as f64, correct as f64 / n as f64)
    }
}
