//! Batch normalisation with the batch's own statistics ([`super::norm`]) on plain `f32` slices,
//! forward and backward, each a fixed number of passes over the activations: the statistics
//! (two passes: the mean, then the centred squares), then one pass for the output; backward,
//! one pass for the two sums the gradients need and one for the input's gradient. Composed from
//! burn's tensor operations the layer took about 7 passes forward and 15-20 backward.
//!
//! Layout NCHW: `x[i][c][q]` for image `i`, channel `c` and pixel `q`; the statistics of
//! channel `c` run over every image and pixel (`m = n * hw` values), summed in `f64` in a fixed
//! order, so a run gives the same bytes every time. Each plane's sum is one running sum, element
//! after element, which waits an addition's latency per element; [`PLANES_AT_ONCE`] planes are
//! summed side by side so that their additions overlap, each in its own order, so the bits are
//! those of summing the planes one after another.

/// Planes summed side by side (their running sums independent, so they overlap in the
/// pipeline; each plane's own order, so its bits, unchanged).
pub const PLANES_AT_ONCE: usize = 4;

/// `sum over planes p (in order) of sum over p's elements (in order) of f(element)`, in f64,
/// both sums starting from `-0.0` as `Iterator::sum` does: bit for bit
/// `planes.map(|p| p.iter().map(f).sum::<f64>()).sum::<f64>()`, with [`PLANES_AT_ONCE`] plane
/// sums running side by side.
#[inline(always)]
fn sum_of_planes<'a>(planes: impl Iterator<Item = &'a [f32]>, f: impl Fn(f32) -> f64) -> f64 {
    let planes: Vec<&[f32]> = planes.collect();
    let mut total = -0.0f64;
    for group in planes.chunks(PLANES_AT_ONCE) {
        if let [a, b, c, d] = group {
            let mut acc = [-0.0f64; PLANES_AT_ONCE];
            for (((va, vb), vc), vd) in a.iter().zip(*b).zip(*c).zip(*d) {
                acc[0] += f(*va);
                acc[1] += f(*vb);
                acc[2] += f(*vc);
                acc[3] += f(*vd);
            }
            acc.iter().for_each(|v| total += v);
        } else {
            for p in group {
                total += p.iter().map(|v| f(*v)).sum::<f64>();
            }
        }
    }
    total
}

/// The backward pass's two sums over `x`'s and `dy`'s planes of one channel: per plane, in
/// `f32` from `0.0`, `sum dy` and `sum dy * (x - mu) * inv`, element after element; the planes'
/// sums added in order in `f64` from `0.0`. [`PLANES_AT_ONCE`] planes side by side, each in its
/// own order (the bits of one plane after another).
#[inline(always)]
fn backward_sums<'a>(
    xs: impl Iterator<Item = &'a [f32]>,
    dys: impl Iterator<Item = &'a [f32]>,
    mu: f32,
    inv: f32,
) -> (f64, f64) {
    let pairs: Vec<(&[f32], &[f32])> = xs.zip(dys).collect();
    let one = |(a, b): (f32, f32), (v, d): (&f32, &f32)| (a + d, b + d * (v - mu) * inv);
    let (mut sum, mut dot) = (0.0f64, 0.0f64);
    for group in pairs.chunks(PLANES_AT_ONCE) {
        let mut acc = [(0.0f32, 0.0f32); PLANES_AT_ONCE];
        if let [(x0, d0), (x1, d1), (x2, d2), (x3, d3)] = group {
            for ((((v0, e0), (v1, e1)), (v2, e2)), (v3, e3)) in x0
                .iter()
                .zip(*d0)
                .zip(x1.iter().zip(*d1))
                .zip(x2.iter().zip(*d2))
                .zip(x3.iter().zip(*d3))
            {
                acc[0] = one(acc[0], (v0, e0));
                acc[1] = one(acc[1], (v1, e1));
                acc[2] = one(acc[2], (v2, e2));
                acc[3] = one(acc[3], (v3, e3));
            }
        } else {
            for (j, (xp, dp)) in group.iter().enumerate() {
                acc[j] = xp.iter().zip(*dp).fold((0.0f32, 0.0f32), one);
            }
        }
        for (a, b) in &acc[..group.len()] {
            sum += f64::from(*a);
            dot += f64::from(*b);
        }
    }
    (sum, dot)
}

/// Added to the variance before its square root, as burn's and PyTorch's batch norms do.
pub const EPSILON: f64 = 1e-5;

/// A channel's batch statistics: the mean and `1 / sqrt(variance + EPSILON)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    /// Per channel.
    pub mean: Vec<f32>,
    /// Per channel.
    pub inv_std: Vec<f32>,
}

/// `[n, c, hw]`: images, channels, pixels per channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NormShape {
    /// Images.
    pub n: usize,
    /// Channels.
    pub c: usize,
    /// Pixels per image and channel.
    pub hw: usize,
}

impl NormShape {
    /// The planes of channel `ch`, one per image.
    fn planes<'a>(&self, x: &'a [f32], ch: usize) -> impl Iterator<Item = &'a [f32]> + 'a {
        let (c, hw) = (self.c, self.hw);
        (0..self.n).map(move |i| &x[(i * c + ch) * hw..][..hw])
    }

    fn check(&self, x: &[f32], per_channel: &[f32]) {
        assert_eq!(
            x.len(),
            self.n * self.c * self.hw,
            "activations of {self:?}"
        );
        assert_eq!(
            per_channel.len(),
            self.c,
            "per-channel parameter of {self:?}"
        );
    }
}

/// The batch statistics of `x`.
#[inline(always)]
pub fn stats(s: &NormShape, x: &[f32]) -> Stats {
    let m = (s.n * s.hw) as f64;
    let mut mean = Vec::with_capacity(s.c);
    let mut inv_std = Vec::with_capacity(s.c);
    for ch in 0..s.c {
        let mu = sum_of_planes(s.planes(x, ch), f64::from) / m;
        let var = sum_of_planes(s.planes(x, ch), |v| (f64::from(v) - mu).powi(2)) / m;
        mean.push(mu as f32);
        inv_std.push((1.0 / (var + EPSILON).sqrt()) as f32);
    }
    Stats { mean, inv_std }
}

super::simd::avx2_or_baseline! {
    /// `(x - mean) * inv_std * scale + shift` per channel, with the batch's statistics, which it
    /// also returns.
    ///
    /// # Panics
    /// When the slices' lengths do not match `s`.
    pub fn forward(
        s: &NormShape,
        x: &[f32],
        scale: &[f32],
        shift: &[f32],
    ) -> (Vec<f32>, Stats) => forward_body
}

/// [`forward`]'s loops.
#[inline(always)]
fn forward_body(s: &NormShape, x: &[f32], scale: &[f32], shift: &[f32]) -> (Vec<f32>, Stats) {
    s.check(x, scale);
    s.check(x, shift);
    let st = stats(s, x);
    // Written once each, in order: no zeroing pass first.
    let mut y = Vec::with_capacity(x.len());
    for (i, from) in x.chunks_exact(s.hw).enumerate() {
        let ch = i % s.c;
        let a = st.inv_std[ch] * scale[ch];
        let b = shift[ch] - st.mean[ch] * a;
        y.extend(from.iter().map(|v| v * a + b));
    }
    (y, st)
}

/// The gradients of [`forward`] for the output gradient `dy`.
#[derive(Debug, Clone, PartialEq)]
pub struct NormGrads {
    /// Of the activations.
    pub x: Vec<f32>,
    /// Of the scale, per channel.
    pub scale: Vec<f32>,
    /// Of the shift, per channel.
    pub shift: Vec<f32>,
}

super::simd::avx2_or_baseline! {
    /// The gradients of [`forward`] (with the statistics it returned) for the output gradient `dy`:
    /// with `h = (x - mean) * inv_std`, `d shift = sum dy`, `d scale = sum dy * h`, and
    /// `dx = scale * inv_std * (dy - d shift / m - h * d scale / m)`, the statistics' own
    /// dependence on `x` included.
    ///
    /// # Panics
    /// When the slices' lengths do not match `s`.
    pub fn backward(
        s: &NormShape,
        x: &[f32],
        scale: &[f32],
        st: &Stats,
        dy: &[f32],
    ) -> NormGrads => backward_body
}

/// [`backward`]'s loops.
#[inline(always)]
fn backward_body(s: &NormShape, x: &[f32], scale: &[f32], st: &Stats, dy: &[f32]) -> NormGrads {
    s.check(x, scale);
    assert_eq!(dy.len(), x.len(), "output gradient of {s:?}");
    let m = (s.n * s.hw) as f64;
    let mut d_shift = vec![0.0f32; s.c];
    let mut d_scale = vec![0.0f32; s.c];
    for ch in 0..s.c {
        let (mu, inv) = (st.mean[ch], st.inv_std[ch]);
        let (sum, dot) = backward_sums(s.planes(x, ch), s.planes(dy, ch), mu, inv);
        d_shift[ch] = sum as f32;
        d_scale[ch] = dot as f32;
    }
    let mut dx = Vec::with_capacity(x.len());
    for (i, (xp, dp)) in x.chunks_exact(s.hw).zip(dy.chunks_exact(s.hw)).enumerate() {
        let ch = i % s.c;
        let (mu, inv) = (st.mean[ch], st.inv_std[ch]);
        let k = scale[ch] * inv;
        let mean_dy = (f64::from(d_shift[ch]) / m) as f32;
        let mean_dyh = (f64::from(d_scale[ch]) / m) as f32;
        dx.extend(
            xp.iter()
                .zip(dp)
                .map(|(v, d)| k * (d - mean_dy - (v - mu) * inv * mean_dyh)),
        );
    }
    NormGrads {
        x: dx,
        scale: d_scale,
        shift: d_shift,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(len: usize, seed: u64) -> Vec<f32> {
        (0..len)
            .map(|i| {
                (((i as u64 + 3) * (seed * 2 + 7919) % 1013) as f32 / 506.5) - 1.0
                    + seed as f32 * 0.1
            })
            .collect()
    }

    /// `sum(r * forward(x))` in f64, for finite differences.
    fn objective(s: &NormShape, x: &[f32], scale: &[f32], shift: &[f32], r: &[f32]) -> f64 {
        let (y, _) = forward(s, x, scale, shift);
        y.iter()
            .zip(r)
            .map(|(a, b)| f64::from(*a) * f64::from(*b))
            .sum()
    }

    #[test]
    fn the_output_has_the_shift_for_mean_and_the_scale_for_deviation() {
        let s = NormShape { n: 3, c: 2, hw: 5 };
        let x = values(30, 1);
        let (y, _) = forward(&s, &x, &[2.0, 0.5], &[1.0, -3.0]);
        for (ch, (scale, shift)) in [(2.0f64, 1.0f64), (0.5, -3.0)].into_iter().enumerate() {
            let v: Vec<f64> = s.planes(&y, ch).flatten().map(|v| f64::from(*v)).collect();
            let mean = v.iter().sum::<f64>() / 15.0;
            let sd = (v.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / 15.0).sqrt();
            assert!((mean - shift).abs() < 1e-5, "channel {ch}: mean {mean}");
            assert!(
                (sd - scale).abs() < 1e-3 * scale,
                "channel {ch}: deviation {sd}"
            );
        }
    }

    /// The statistics agree with a plain f64 sum over the channel, on planes of several
    /// lengths.
    #[test]
    fn the_statistics_agree_with_a_plain_sum() {
        for hw in [5, 8, 13, 64] {
            let s = NormShape { n: 3, c: 2, hw };
            let x = values(3 * 2 * hw, 4);
            let st = stats(&s, &x);
            for ch in 0..2 {
                let v: Vec<f64> = s.planes(&x, ch).flatten().map(|v| f64::from(*v)).collect();
                let mean = v.iter().sum::<f64>() / v.len() as f64;
                let var = v.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / v.len() as f64;
                assert!((f64::from(st.mean[ch]) - mean).abs() < 1e-6, "hw {hw} mean");
                let inv = 1.0 / (var + EPSILON).sqrt();
                assert!(
                    (f64::from(st.inv_std[ch]) - inv).abs() < 1e-6 * inv,
                    "hw {hw} inv_std"
                );
            }
        }
    }

    /// Summing planes side by side gives the bits of summing them one after another (the
    /// forward statistics and the backward sums), for 1 to 9 planes (whole groups, a partial
    /// last one, none whole), a plane of `-0.0` among others, and planes of nothing but zeros
    /// of either sign.
    #[test]
    fn planes_side_by_side_give_the_bits_of_one_after_another() {
        for n in 1..=9 {
            let s = NormShape { n, c: 3, hw: 37 };
            let mut x = values(n * 3 * 37, 5);
            let dy = values(n * 3 * 37, 6);
            x[..37].iter_mut().for_each(|v| *v = -0.0);
            for ch in 0..3 {
                let plain: f64 = s
                    .planes(&x, ch)
                    .map(|p| p.iter().map(|v| f64::from(*v)).sum::<f64>())
                    .sum();
                let ours = sum_of_planes(s.planes(&x, ch), f64::from);
                assert_eq!(plain.to_bits(), ours.to_bits(), "n {n} channel {ch}");
                let (mu, inv) = (0.3f32, 1.7f32);
                let (mut sum, mut dot) = (0.0f64, 0.0f64);
                for (xp, dp) in s.planes(&x, ch).zip(s.planes(&dy, ch)) {
                    let (a, b) = xp.iter().zip(dp).fold((0.0f32, 0.0f32), |(a, b), (v, d)| {
                        (a + d, b + d * (v - mu) * inv)
                    });
                    sum += f64::from(a);
                    dot += f64::from(b);
                }
                let (s2, d2) = backward_sums(s.planes(&x, ch), s.planes(&dy, ch), mu, inv);
                assert_eq!((sum.to_bits(), dot.to_bits()), (s2.to_bits(), d2.to_bits()));
            }
        }
        for zero in [-0.0f32, 0.0] {
            let zeros = [zero; 8];
            let plain: f64 = [&zeros[..]; 5]
                .iter()
                .map(|p| p.iter().map(|v| f64::from(*v)).sum::<f64>())
                .sum();
            let ours = sum_of_planes([&zeros[..]; 5].into_iter(), f64::from);
            assert_eq!(plain.to_bits(), ours.to_bits(), "all {zero:?}");
        }
    }

    /// The AVX2 copy of the passes (what [`forward`] and [`backward`] run on a CPU that has
    /// it) and the baseline copy (the bodies called directly) give the same bits.
    #[test]
    fn the_avx2_passes_give_the_baseline_bits() {
        let s = NormShape { n: 6, c: 3, hw: 37 };
        let x = values(6 * 3 * 37, 8);
        let dy = values(6 * 3 * 37, 9);
        let (scale, shift) = (vec![1.5, 0.7, 1.0], vec![0.1, -0.2, 0.3]);
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        let (ya, sa) = forward(&s, &x, &scale, &shift);
        let (yb, sb) = forward_body(&s, &x, &scale, &shift);
        assert_eq!(
            (bits(&ya), bits(&sa.mean), bits(&sa.inv_std)),
            (bits(&yb), bits(&sb.mean), bits(&sb.inv_std))
        );
        let (ga, gb) = (
            backward(&s, &x, &scale, &sa, &dy),
            backward_body(&s, &x, &scale, &sb, &dy),
        );
        assert_eq!(
            (bits(&ga.x), bits(&ga.scale), bits(&ga.shift)),
            (bits(&gb.x), bits(&gb.scale), bits(&gb.shift))
        );
    }

    /// The analytic gradients against central differences of the f64 objective.
    #[test]
    fn the_gradients_match_finite_differences() {
        let s = NormShape { n: 2, c: 3, hw: 4 };
        let x = values(24, 2);
        let scale = vec![1.5, 0.7, 1.0];
        let shift = vec![0.1, -0.2, 0.3];
        let r = values(24, 3);
        let (_, st) = forward(&s, &x, &scale, &shift);
        let g = backward(&s, &x, &scale, &st, &r);
        let h = 1e-2f32;
        let diff = |f: &dyn Fn(f32) -> f64| (f(h) - f(-h)) / (2.0 * f64::from(h));
        for i in 0..x.len() {
            let num = diff(&|e| {
                let mut xe = x.clone();
                xe[i] += e;
                objective(&s, &xe, &scale, &shift, &r)
            });
            assert!(
                (num - f64::from(g.x[i])).abs() < 2e-3,
                "dx[{i}]: {num} against {}",
                g.x[i]
            );
        }
        for ch in 0..s.c {
            let num = diff(&|e| {
                let mut se = scale.clone();
                se[ch] += e;
                objective(&s, &x, &se, &shift, &r)
            });
            assert!(
                (num - f64::from(g.scale[ch])).abs() < 2e-3,
                "dscale[{ch}]: {num} against {}",
                g.scale[ch]
            );
            let num = diff(&|e| {
                let mut se = shift.clone();
                se[ch] += e;
                objective(&s, &x, &scale, &se, &r)
            });
            assert!(
                (num - f64::from(g.shift[ch])).abs() < 2e-3,
                "dshift[{ch}]: {num} against {}",
                g.shift[ch]
            );
        }
    }
}
