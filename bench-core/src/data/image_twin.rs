//! Images for the CNN workloads, as normalised `f32` tensors in `[n, 3, side, side]` order:
//! a seeded synthetic twin of CIFAR at quick scale, or the real CIFAR images converted from the
//! verified cache.
//!
//! The twin is built so that only a network that sees spatial structure learns it: each class is
//! a pair of grating frequencies `(fx, fy)` times a colour mixture, drawn with a random phase
//! (the pattern sits anywhere in the image), a random contrast and pixel noise. Every class has
//! the same mean colour, so a linear model on pixels stays near chance, while a few convolutions
//! with ReLU and pooling detect the frequencies and reach high accuracy. The pattern
//! `cos(2π fx x + φx) cos(2π fy y + φy)` is unchanged in class by a horizontal flip (only its
//! phase moves), so the usual augmentation keeps labels right.

use crate::data::CifarImages;
use crate::error::{CoreError, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

/// Colour channels of every image.
pub const CHANNELS: usize = 3;

/// The shape of a synthetic image twin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImageShape {
    /// Images to draw.
    pub images: usize,
    /// Width and height in pixels (CIFAR: 32).
    pub side: usize,
    /// Classes (CIFAR-10: 10, CIFAR-100: 100).
    pub classes: usize,
    /// Pixel noise, as a multiple of the pattern's amplitude.
    pub noise: f32,
}

/// Images and labels, normalised per channel.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImageSet {
    /// `n * 3 * side * side` values, image-major, then channel, row, column.
    pub pixels: Vec<f32>,
    /// Class per image.
    pub labels: Vec<u16>,
    /// Width and height.
    pub side: usize,
    /// Number of classes.
    pub classes: usize,
}

impl ImageSet {
    /// Number of images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Values per image.
    pub fn image_len(&self) -> usize {
        CHANNELS * self.side * self.side
    }

    /// Image `i`'s values.
    pub fn image(&self, i: usize) -> &[f32] {
        let n = self.image_len();
        &self.pixels[i * n..(i + 1) * n]
    }

    /// Images `range` as a new set (a train/test split).
    pub fn slice(&self, range: std::ops::Range<usize>) -> ImageSet {
        let n = self.image_len();
        ImageSet {
            pixels: self.pixels[range.start * n..range.end * n].to_vec(),
            labels: self.labels[range].to_vec(),
            side: self.side,
            classes: self.classes,
        }
    }

    /// `count` images spread evenly over the set (image `i * len / count` for each `i`), so a
    /// subset of training images does not come from one worker's contiguous shard.
    pub fn spread(&self, count: usize) -> ImageSet {
        let count = count.clamp(1, self.len().max(1));
        let n = self.image_len();
        let pick: Vec<usize> = (0..count).map(|i| i * self.len() / count).collect();
        ImageSet {
            pixels: pick
                .iter()
                .flat_map(|&i| self.pixels[i * n..(i + 1) * n].iter().copied())
                .collect(),
            labels: pick.iter().map(|&i| self.labels[i]).collect(),
            side: self.side,
            classes: self.classes,
        }
    }

    /// Per-channel mean and standard deviation over every image.
    pub fn channel_stats(&self) -> [(f32, f32); CHANNELS] {
        let plane = self.side * self.side;
        let mut out = [(0.0, 1.0); CHANNELS];
        for (c, o) in out.iter_mut().enumerate() {
            let (mut s, mut s2, mut k) = (0.0f64, 0.0f64, 0.0f64);
            for i in 0..self.len() {
                for &v in &self.image(i)[c * plane..(c + 1) * plane] {
                    s += f64::from(v);
                    s2 += f64::from(v) * f64::from(v);
                    k += 1.0;
                }
            }
            let mean = s / k.max(1.0);
            let var = (s2 / k.max(1.0) - mean * mean).max(1e-12);
            *o = (mean as f32, var.sqrt() as f32);
        }
        out
    }

    /// Subtracts each channel's mean and divides by its deviation (both from `stats`, the
    /// training images' statistics, so the evaluation images are normalised the same way).
    pub fn normalise(&mut self, stats: &[(f32, f32); CHANNELS]) {
        let plane = self.side * self.side;
        let n = self.image_len();
        for img in self.pixels.chunks_mut(n) {
            for (c, &(m, s)) in stats.iter().enumerate() {
                for v in &mut img[c * plane..(c + 1) * plane] {
                    *v = (*v - m) / s;
                }
            }
        }
    }

    /// Gives a share `share` of the images (each independently, drawn from `seed`) a label
    /// drawn uniformly from the other classes: label noise, so that no network can classify
    /// more than about `1 - share` of the images right. The twin's images alone are separable
    /// (a converged network reaches 100%); the papers' networks on CIFAR-100 do not come near
    /// it (DSSP Table I: at most 0.67-0.68), and a share of wrong labels on the training and the
    /// evaluation images alike sets the twin's ceiling there. The draws use a stream of their
    /// own, so the images are the same bytes as without noise. Returns the images changed.
    ///
    /// # Errors
    /// [`CoreError::Config`] for a share outside `[0, 1)` or a set of one class.
    pub fn flip_labels(&mut self, share: f64, seed: u64) -> Result<usize> {
        if !(0.0..1.0).contains(&share) || self.classes < 2 {
            return Err(CoreError::Config(format!(
                "image label noise: a share in [0, 1) of a set with >= 2 classes; got {share} of {} classes",
                self.classes
            )));
        }
        if share == 0.0 {
            return Ok(0);
        }
        // A stream apart from the images' (seed mixed with a constant of its own).
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6c61_6265_6c5f_6e6f);
        let classes = self.classes as u16;
        let mut changed = 0;
        for l in &mut self.labels {
            if rng.gen_bool(share) {
                // Uniform over the other classes: 1..classes added modulo classes.
                let step = rng.gen_range(1..classes);
                *l = (*l + step) % classes;
                changed += 1;
            }
        }
        Ok(changed)
    }

    /// The real CIFAR images (bytes 0..255) as a set of side 32, not yet normalised.
    pub fn from_cifar(images: &CifarImages, classes: usize) -> ImageSet {
        ImageSet {
            pixels: images
                .pixels
                .iter()
                .map(|&b| f32::from(b) / 255.0)
                .collect(),
            labels: images.labels.iter().map(|&l| u16::from(l)).collect(),
            side: 32,
            classes,
        }
    }

    /// Copies image `i` into `out` (which holds one image), cropped at offset `(dy, dx)` from
    /// the image padded by `pad` zeros on each side and mirrored left-right when `flip`: the
    /// usual CIFAR augmentation (random crop with padding, horizontal flip).
    pub fn augmented_into(
        &self,
        i: usize,
        pad: usize,
        (dy, dx): (usize, usize),
        flip: bool,
        out: &mut [f32],
    ) {
        let s = self.side;
        let img = self.image(i);
        for c in 0..CHANNELS {
            for y in 0..s {
                for x in 0..s {
                    let sy = (y + dy) as isize - pad as isize;
                    let sx0 = (x + dx) as isize - pad as isize;
                    let sx = if flip { s as isize - 1 - sx0 } else { sx0 };
                    let inside = (0..s as isize).contains(&sy) && (0..s as isize).contains(&sx);
                    out[(c * s + y) * s + x] = if inside {
                        img[(c * s + sy as usize) * s + sx as usize]
                    } else {
                        0.0
                    };
                }
            }
        }
    }
}

impl ImageShape {
    /// Checks the shape.
    ///
    /// # Errors
    /// [`CoreError::Config`] for no images, a side under 8 pixels, fewer than 2 classes, more
    /// classes than the frequency grid can tell apart, or a negative noise.
    pub fn validate(&self) -> Result<()> {
        let max = Self::max_classes(self.side);
        if self.images == 0
            || self.side < 8
            || self.classes < 2
            || self.classes > max
            || self.noise.is_nan()
            || self.noise < 0.0
        {
            return Err(CoreError::Config(format!(
                "image twin: images >= 1, side >= 8, 2 <= classes <= {max} (at side {}), noise >= 0; got images {}, side {}, classes {}, noise {}",
                self.side, self.images, self.side, self.classes, self.noise
            )));
        }
        Ok(())
    }

    /// Frequencies per axis the twin uses at `side` pixels (below the Nyquist limit with room).
    fn frequencies(side: usize) -> usize {
        (side / 4).clamp(2, 6)
    }

    /// Classes the frequency pairs and four colour mixtures can tell apart at `side`.
    pub fn max_classes(side: usize) -> usize {
        let f = Self::frequencies(side);
        f * f * 4
    }

    /// Draws the twin from `seed`.
    ///
    /// # Errors
    /// As [`Self::validate`].
    pub fn generate(&self, seed: u64) -> Result<ImageSet> {
        self.validate()?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let f = Self::frequencies(self.side);
        // Four colour mixtures with zero mean over channels' signs: every class has the same
        // mean colour, so only the spatial pattern tells classes apart.
        let mixtures: Vec<[f32; CHANNELS]> = (0..4)
            .map(|_| {
                let mut m = [0.0f32; CHANNELS];
                for v in &mut m {
                    *v = rng.gen_range(0.4..1.0) * if rng.gen_bool(0.5) { 1.0 } else { -1.0 };
                }
                m
            })
            .collect();
        let noise = Normal::new(0.0f32, self.noise.max(1e-9)).expect("finite noise");
        let s = self.side;
        let plane = s * s;
        let mut pixels = Vec::with_capacity(self.images * CHANNELS * plane);
        let mut labels = Vec::with_capacity(self.images);
        let tau = std::f32::consts::TAU;
        for _ in 0..self.images {
            let class = rng.gen_range(0..self.classes);
            let (fx, fy) = (1 + class % f, 1 + (class / f) % f);
            let mix = mixtures[class / (f * f)];
            let (px, py) = (rng.gen_range(0.0..tau), rng.gen_range(0.0..tau));
            let contrast = rng.gen_range(0.7f32..1.3);
            for m in mix {
                for y in 0..s {
                    let cy = (tau * fy as f32 * y as f32 / s as f32 + py).cos();
                    for x in 0..s {
                        let cx = (tau * fx as f32 * x as f32 / s as f32 + px).cos();
                        pixels.push(0.5 + 0.25 * contrast * m * cx * cy + noise.sample(&mut rng));
                    }
                }
            }
            labels.push(class as u16);
        }
        Ok(ImageSet {
            pixels,
            labels,
            side: s,
            classes: self.classes,
        })
    }
}

/// Checks that every label of `set` is below its class count.
///
/// # Errors
/// [`CoreError::Config`] naming the first image whose label is out of range.
pub fn check_labels(set: &ImageSet) -> Result<()> {
    match set
        .labels
        .iter()
        .position(|&l| usize::from(l) >= set.classes)
    {
        Some(i) => Err(CoreError::Config(format!(
            "image {i} has label {} but there are {} classes",
            set.labels[i], set.classes
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> ImageShape {
        ImageShape {
            images: 200,
            side: 16,
            classes: 10,
            noise: 0.1,
        }
    }

    #[test]
    fn label_noise_changes_the_share_asked_to_other_classes_and_nothing_else() {
        let clean = ImageShape {
            images: 4000,
            ..shape()
        }
        .generate(5)
        .unwrap();
        let mut noisy = clean.clone();
        let changed = noisy.flip_labels(0.3, 5).unwrap();
        assert_eq!(noisy.pixels, clean.pixels);
        let differ = clean
            .labels
            .iter()
            .zip(&noisy.labels)
            .filter(|(a, b)| a != b)
            .count();
        // Every flipped label moves to another class, and about 30% are flipped.
        assert_eq!(differ, changed);
        assert!((1100..1300).contains(&changed), "{changed} of 4000");
        check_labels(&noisy).unwrap();
        // Seeded, and no noise is no change.
        let mut again = clean.clone();
        again.flip_labels(0.3, 5).unwrap();
        assert_eq!(again, noisy);
        let mut none = clean.clone();
        assert_eq!(none.flip_labels(0.0, 5).unwrap(), 0);
        assert_eq!(none, clean);
        assert!(none.flip_labels(1.0, 5).is_err());
        assert!(none.flip_labels(-0.1, 5).is_err());
    }

    #[test]
    fn the_twin_is_seeded_and_shaped() {
        let a = shape().generate(5).unwrap();
        assert_eq!(a, shape().generate(5).unwrap());
        assert_ne!(a, shape().generate(6).unwrap());
        assert_eq!(a.pixels.len(), 200 * 3 * 16 * 16);
        assert!(a.labels.iter().all(|&l| l < 10));
        check_labels(&a).unwrap();
        // Every class appears in 200 draws of 10.
        let mut seen = [false; 10];
        a.labels.iter().for_each(|&l| seen[usize::from(l)] = true);
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn classes_share_their_mean_colour() {
        // The class cannot be read from the mean pixel of a channel: per-class channel means
        // differ by far less than the pattern's amplitude (0.25).
        let set = ImageShape {
            images: 2000,
            ..shape()
        }
        .generate(1)
        .unwrap();
        let plane = 16 * 16;
        let mut sums = vec![[0.0f64; 3]; 10];
        let mut counts = [0usize; 10];
        for i in 0..set.len() {
            let l = usize::from(set.labels[i]);
            counts[l] += 1;
            for (c, sum) in sums[l].iter_mut().enumerate() {
                *sum += set.image(i)[c * plane..(c + 1) * plane]
                    .iter()
                    .map(|&v| f64::from(v))
                    .sum::<f64>()
                    / plane as f64;
            }
        }
        for (l, s) in sums.iter().enumerate() {
            for v in s {
                let mean = v / counts[l] as f64;
                assert!((mean - 0.5).abs() < 0.02, "class {l}: channel mean {mean}");
            }
        }
    }

    #[test]
    fn a_spread_subset_takes_images_from_every_part_of_the_set() {
        let set = shape().generate(4).unwrap();
        let sub = set.spread(4);
        assert_eq!(sub.len(), 4);
        for (k, i) in [0, 50, 100, 150].into_iter().enumerate() {
            assert_eq!(sub.image(k), set.image(i));
            assert_eq!(sub.labels[k], set.labels[i]);
        }
        assert_eq!(set.spread(10_000).len(), set.len());
    }

    #[test]
    fn normalising_gives_zero_mean_unit_deviation() {
        let mut set = shape().generate(2).unwrap();
        let stats = set.channel_stats();
        set.normalise(&stats);
        for (m, s) in set.channel_stats() {
            assert!(m.abs() < 1e-4 && (s - 1.0).abs() < 1e-3, "{m} {s}");
        }
    }

    #[test]
    fn impossible_shapes_are_refused_by_name() {
        let e = ImageShape {
            classes: 1000,
            ..shape()
        }
        .generate(1)
        .unwrap_err();
        assert!(e.to_string().contains("classes"), "{e}");
        let mut bad = shape().generate(1).unwrap();
        bad.labels[3] = 10;
        assert!(check_labels(&bad)
            .unwrap_err()
            .to_string()
            .contains("image 3"));
    }

    #[test]
    fn a_crop_at_the_padding_offset_without_flip_is_the_image() {
        let set = shape().generate(3).unwrap();
        let mut out = vec![0.0; set.image_len()];
        set.augmented_into(4, 4, (4, 4), false, &mut out);
        assert_eq!(out, set.image(4));
        // A flip twice is the image; a shifted crop brings in zeros at the border.
        let mut once = vec![0.0; set.image_len()];
        set.augmented_into(4, 4, (4, 4), true, &mut once);
        // A flip mirrors every row: pixel (c, y, x) comes from (c, y, side - 1 - x).
        let img = set.image(4);
        for (c, y, x) in [(0, 0, 0), (1, 5, 3), (2, 15, 9)] {
            assert_eq!(once[(c * 16 + y) * 16 + x], img[(c * 16 + y) * 16 + 15 - x]);
        }
        assert_ne!(once, img);
        let flipped = ImageSet {
            pixels: once.clone(),
            labels: vec![0],
            side: 16,
            classes: 10,
        };
        let mut twice = vec![0.0; set.image_len()];
        flipped.augmented_into(0, 4, (4, 4), true, &mut twice);
        assert_eq!(twice, set.image(4));
        set.augmented_into(4, 4, (0, 0), false, &mut out);
        assert_eq!(out[0], 0.0);
    }
}
