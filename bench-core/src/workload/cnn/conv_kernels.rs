//! A 2-D convolution's forward pass and both gradients on plain `f32` slices, as im2col and one
//! matrix product per group of images ([`super::matmul`], one thread), the way PyTorch's CPU
//! convolution is built. burn's flex backend implements only the forward convolution; its
//! gradients take burn's generic defaults (the weight gradient as a convolution whose kernel is
//! the whole output gradient, the input gradient as a transposed convolution), which made a
//! training step 2-5x slower than PyTorch's on one thread (`make bench-cnn`). Here each pass is
//! one matrix product per group of images:
//!
//! - forward: `y[co][p] = sum_k w[co][k] * cols[k][p] + b[co]`, with `cols` the image's windows
//!   one row per `k` (im2col);
//! - weight gradient: `dw[co][k'] = sum_(image, p) dy[co][p] * rows[p][k']`, with `rows` the same
//!   windows one row per output pixel (im2row, `k'` in (kernel row, kernel column, channel)
//!   order, from a channels-last copy of the image), so that the product's packing reads both
//!   operands row by row; `dw` is put back in the weight's order at the end;
//! - input gradient: `dcols[k][p] = sum_co w[co][k] * dy[co][p]`, folded back onto the image
//!   (col2im), adding where windows overlap.
//!
//! `k` runs over (input channel, kernel row, kernel column) and `p` over output pixels. Images
//! with few output pixels are put side by side in one column matrix ([`ConvShape::group`]), so
//! that each product is wide enough to run near the machine's speed. Every loop's order is
//! fixed by the shapes alone and the product's by [`super::matmul`], so a run gives the same
//! bytes every time and on every x86-64 CPU, whatever its instruction set or caches.

use super::matmul::{matmul, View};
use std::cell::RefCell;

/// Output pixels a product should span at least: images with fewer are grouped.
const MIN_COLUMNS: usize = 512;

/// The most floats one group's column matrix may hold (16 MiB).
const MAX_GROUP_FLOATS: usize = 1 << 22;

/// One convolution's sizes: NCHW input, `[co, ci, kh, kw]` weight, one group, no dilation,
/// the same zero padding on every side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvShape {
    /// Images.
    pub n: usize,
    /// Input channels.
    pub ci: usize,
    /// Input height.
    pub h: usize,
    /// Input width.
    pub w: usize,
    /// Output channels.
    pub co: usize,
    /// Kernel height.
    pub kh: usize,
    /// Kernel width.
    pub kw: usize,
    /// Stride (both directions).
    pub stride: usize,
    /// Zero padding (every side).
    pub pad: usize,
}

impl ConvShape {
    /// Output height.
    pub fn ho(&self) -> usize {
        (self.h + 2 * self.pad - self.kh) / self.stride + 1
    }

    /// Output width.
    pub fn wo(&self) -> usize {
        (self.w + 2 * self.pad - self.kw) / self.stride + 1
    }

    /// Output pixels per image.
    fn p(&self) -> usize {
        self.ho() * self.wo()
    }

    /// Rows of the column matrix: input channels times kernel pixels.
    fn k(&self) -> usize {
        self.ci * self.kh * self.kw
    }

    /// Whether the column matrix of one image is the image itself (1x1, stride 1, no padding).
    fn pointwise(&self) -> bool {
        self.kh == 1 && self.kw == 1 && self.stride == 1 && self.pad == 0
    }

    /// Images per product: enough for [`MIN_COLUMNS`] output pixels, within
    /// [`MAX_GROUP_FLOATS`].
    fn group(&self) -> usize {
        let p = self.p().max(1);
        let wanted = MIN_COLUMNS.div_ceil(p);
        let fits = (MAX_GROUP_FLOATS / (self.k() * p).max(1)).max(1);
        wanted.min(fits).clamp(1, self.n.max(1))
    }

    fn check(&self, x: &[f32], weight: &[f32]) {
        assert!(
            self.kh <= self.h + 2 * self.pad && self.kw <= self.w + 2 * self.pad && self.stride > 0,
            "convolution {self:?}: kernel larger than the padded image, or stride 0"
        );
        assert_eq!(
            x.len(),
            self.n * self.ci * self.h * self.w,
            "input of {self:?}"
        );
        assert_eq!(weight.len(), self.co * self.k(), "weight of {self:?}");
    }
}

/// Output columns `[lo, hi)` whose input column `ow * stride - pad + kx` lies inside `0..w`.
#[inline(always)]
fn valid(out: usize, w: usize, stride: usize, pad: usize, kx: usize) -> (usize, usize) {
    // ow * stride + kx >= pad  and  ow * stride + kx < w + pad
    let lo = pad.saturating_sub(kx).div_ceil(stride);
    let hi = if w + pad > kx {
        (w + pad - kx).div_ceil(stride)
    } else {
        0
    };
    (lo.min(out), hi.min(out).max(lo.min(out)))
}

super::simd::avx2_or_baseline! {
    /// Writes images `n0..n0 + g` of `x` as columns: `cols[k][j * p + q]` for image `j`, output
    /// pixel `q` and row `k = (c, ky, kx)`.
    fn im2col(s: &ConvShape, x: &[f32], n0: usize, g: usize, cols: &mut [f32]) => im2col_body
}

/// [`im2col`]'s loops.
#[inline(always)]
fn im2col_body(s: &ConvShape, x: &[f32], n0: usize, g: usize, cols: &mut [f32]) {
    let (ho, wo, p) = (s.ho(), s.wo(), s.p());
    let width = g * p;
    let plane = s.h * s.w;
    for c in 0..s.ci {
        for ky in 0..s.kh {
            for kx in 0..s.kw {
                let row = ((c * s.kh + ky) * s.kw + kx) * width;
                let (lo, hi) = valid(wo, s.w, s.stride, s.pad, kx);
                for j in 0..g {
                    let image = &x[((n0 + j) * s.ci + c) * plane..][..plane];
                    let out = &mut cols[row + j * p..][..p];
                    for oy in 0..ho {
                        let line = &mut out[oy * wo..][..wo];
                        let iy = (oy * s.stride + ky).wrapping_sub(s.pad);
                        if iy >= s.h {
                            line.fill(0.0);
                            continue;
                        }
                        line[..lo].fill(0.0);
                        line[hi..].fill(0.0);
                        let src = &image[iy * s.w..][..s.w];
                        if lo == hi {
                            // no output column reads inside the image (a kernel wider than it)
                        } else if s.stride == 1 {
                            let first = lo + kx - s.pad;
                            line[lo..hi].copy_from_slice(&src[first..first + (hi - lo)]);
                        } else {
                            for (ox, v) in line[lo..hi].iter_mut().enumerate() {
                                *v = src[(lo + ox) * s.stride + kx - s.pad];
                            }
                        }
                    }
                }
            }
        }
    }
}

super::simd::avx2_or_baseline! {
    /// Adds columns back onto images `n0..n0 + g` of `dx` (the transpose of [`im2col`]).
    fn col2im(s: &ConvShape, cols: &[f32], n0: usize, g: usize, dx: &mut [f32]) => col2im_body
}

/// [`col2im`]'s loops.
#[inline(always)]
fn col2im_body(s: &ConvShape, cols: &[f32], n0: usize, g: usize, dx: &mut [f32]) {
    let (ho, wo, p) = (s.ho(), s.wo(), s.p());
    let width = g * p;
    let plane = s.h * s.w;
    for c in 0..s.ci {
        for ky in 0..s.kh {
            for kx in 0..s.kw {
                let row = ((c * s.kh + ky) * s.kw + kx) * width;
                let (lo, hi) = valid(wo, s.w, s.stride, s.pad, kx);
                for j in 0..g {
                    let image = &mut dx[((n0 + j) * s.ci + c) * plane..][..plane];
                    let from = &cols[row + j * p..][..p];
                    for oy in 0..ho {
                        let iy = (oy * s.stride + ky).wrapping_sub(s.pad);
                        if iy >= s.h {
                            continue;
                        }
                        let line = &from[oy * wo..][..wo];
                        let dst = &mut image[iy * s.w..][..s.w];
                        if lo == hi {
                            // no output column reads inside the image
                        } else if s.stride == 1 {
                            let first = lo + kx - s.pad;
                            let dst = &mut dst[first..first + (hi - lo)];
                            dst.iter_mut().zip(&line[lo..hi]).for_each(|(d, v)| *d += v);
                        } else {
                            for ox in lo..hi {
                                dst[ox * s.stride + kx - s.pad] += line[ox];
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Copies images `n0..n0 + g` of an NCHW tensor with `c` channels of `p` pixels into `[c][g * p]`.
fn gather(c: usize, p: usize, n0: usize, g: usize, images: &[f32], grouped: &mut [f32]) {
    for j in 0..g {
        for ch in 0..c {
            grouped[ch * g * p + j * p..][..p]
                .copy_from_slice(&images[((n0 + j) * c + ch) * p..][..p]);
        }
    }
}

/// The inverse of [`gather`]: writes `[c][g * p]` over images `n0..n0 + g`.
fn scatter(c: usize, p: usize, n0: usize, g: usize, grouped: &[f32], images: &mut [f32]) {
    for j in 0..g {
        for ch in 0..c {
            images[((n0 + j) * c + ch) * p..][..p]
                .copy_from_slice(&grouped[ch * g * p + j * p..][..p]);
        }
    }
}

/// Writes the `r` x `c` row-major matrix `a` transposed into `t` (`c` x `r`): eight rows read
/// side by side, eight consecutive floats written per column.
#[inline(always)]
fn transpose(r: usize, c: usize, a: &[f32], t: &mut [f32]) {
    const B: usize = 8;
    let t = &mut t[..r * c];
    let mut i = 0;
    while i + B <= r {
        let rows: [&[f32]; B] = std::array::from_fn(|q| &a[(i + q) * c..][..c]);
        for (j, out) in t.chunks_exact_mut(r).enumerate() {
            let out = &mut out[i..i + B];
            for q in 0..B {
                out[q] = rows[q][j];
            }
        }
        i += B;
    }
    for ii in i..r {
        for (j, v) in a[ii * c..][..c].iter().enumerate() {
            t[j * r + ii] = *v;
        }
    }
}

super::simd::avx2_or_baseline! {
    /// Writes images `n0..n0 + g` of `x` as rows, one per output pixel: `rows[j * p + q][k']` for
    /// image `j`, output pixel `q` and `k' = (ky, kx, c)` (channels innermost, unlike
    /// [`im2col`]'s `(c, ky, kx)`). Each image is first transposed to channels-last (`nhwc`, `h *
    /// w * ci` floats), so that a kernel row's `kw * ci` inputs are one contiguous copy.
    fn im2row(
        s: &ConvShape,
        x: &[f32],
        n0: usize,
        g: usize,
        nhwc: &mut [f32],
        rows: &mut [f32],
    ) => im2row_body
}

/// [`im2row`]'s loops.
#[inline(always)]
fn im2row_body(s: &ConvShape, x: &[f32], n0: usize, g: usize, nhwc: &mut [f32], rows: &mut [f32]) {
    let (ho, wo, p, k) = (s.ho(), s.wo(), s.p(), s.k());
    let (plane, ci) = (s.h * s.w, s.ci);
    let span = s.kw * ci;
    for j in 0..g {
        transpose(ci, plane, &x[(n0 + j) * ci * plane..][..ci * plane], nhwc);
        for oy in 0..ho {
            for ky in 0..s.kh {
                let iy = (oy * s.stride + ky).wrapping_sub(s.pad);
                for ox in 0..wo {
                    let dst = &mut rows[(j * p + oy * wo + ox) * k + ky * span..][..span];
                    if iy >= s.h {
                        dst.fill(0.0);
                        continue;
                    }
                    let line = &nhwc[iy * s.w * ci..][..s.w * ci];
                    let ix0 = (ox * s.stride) as isize - s.pad as isize;
                    if ix0 >= 0 && ix0 as usize + s.kw <= s.w {
                        dst.copy_from_slice(&line[ix0 as usize * ci..][..span]);
                        continue;
                    }
                    for (kx, seg) in dst.chunks_exact_mut(ci).enumerate() {
                        let ix = ix0 + kx as isize;
                        if ix < 0 || ix as usize >= s.w {
                            seg.fill(0.0);
                        } else {
                            seg.copy_from_slice(&line[ix as usize * ci..][..ci]);
                        }
                    }
                }
            }
        }
    }
}

/// Work buffers a thread reuses from one call to the next, so that a training step does not
/// allocate and zero its column matrices for every layer: every element a pass reads from them
/// it has written first in the same call, so reuse never changes a result.
#[derive(Default)]
struct Scratch {
    cols: Vec<f32>,
    rows: Vec<f32>,
    dcols: Vec<f32>,
    grouped: Vec<f32>,
    nhwc: Vec<f32>,
    dw_rows: Vec<f32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// The first `len` floats of `v`, grown (never shrunk) as needed.
fn sized(v: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if v.len() < len {
        v.resize(len, 0.0);
    }
    &mut v[..len]
}

/// The convolution of `x` (`[n, ci, h, w]`) with `weight` (`[co, ci, kh, kw]`) plus `bias`
/// (`[co]`), as `[n, co, ho, wo]`.
///
/// # Panics
/// When the slices' lengths do not match `s`.
pub fn forward(s: &ConvShape, x: &[f32], weight: &[f32], bias: Option<&[f32]>) -> Vec<f32> {
    SCRATCH.with_borrow_mut(|scratch| forward_with(s, x, weight, bias, scratch))
}

fn forward_with(
    s: &ConvShape,
    x: &[f32],
    weight: &[f32],
    bias: Option<&[f32]>,
    scratch: &mut Scratch,
) -> Vec<f32> {
    s.check(x, weight);
    let (p, k, g) = (s.p(), s.k(), s.group());
    let mut y = vec![0.0; s.n * s.co * p];
    let direct = s.pointwise() && g == 1;
    let cols = sized(&mut scratch.cols, if direct { 0 } else { k * g * p });
    let grouped = sized(&mut scratch.grouped, if g > 1 { s.co * g * p } else { 0 });
    let mut n0 = 0;
    while n0 < s.n {
        let g = g.min(s.n - n0);
        let width = g * p;
        let rhs: &[f32] = if direct {
            &x[n0 * k * p..][..k * p]
        } else {
            let cols = &mut cols[..k * width];
            if s.pointwise() {
                gather(s.ci, p, n0, g, x, cols);
            } else {
                im2col(s, x, n0, g, cols);
            }
            cols
        };
        if g > 1 {
            let out = &mut grouped[..s.co * width];
            matmul(
                s.co,
                width,
                k,
                out,
                false,
                weight,
                View::rows(k),
                rhs,
                View::rows(width),
            );
            scatter(s.co, p, n0, g, out, &mut y);
        } else {
            let out = &mut y[n0 * s.co * p..][..s.co * p];
            matmul(
                s.co,
                width,
                k,
                out,
                false,
                weight,
                View::rows(k),
                rhs,
                View::rows(width),
            );
        }
        n0 += g;
    }
    if let Some(b) = bias {
        assert_eq!(b.len(), s.co, "bias of {s:?}");
        for (plane, c) in y.chunks_exact_mut(p).zip((0..s.co).cycle()) {
            plane.iter_mut().for_each(|v| *v += b[c]);
        }
    }
    y
}

/// The gradients of [`forward`] for the output gradient `dy` (`[n, co, ho, wo]`).
#[derive(Debug, Clone, PartialEq)]
pub struct ConvGrads {
    /// Of the input (`[n, ci, h, w]`), when asked for.
    pub x: Option<Vec<f32>>,
    /// Of the weight (`[co, ci, kh, kw]`).
    pub weight: Vec<f32>,
    /// Of the bias (`[co]`), when asked for.
    pub bias: Option<Vec<f32>>,
}

/// The gradients of the convolution [`forward`] computes, for the output gradient `dy`.
///
/// # Panics
/// When the slices' lengths do not match `s`.
pub fn backward(
    s: &ConvShape,
    x: &[f32],
    weight: &[f32],
    dy: &[f32],
    want_x: bool,
    want_bias: bool,
) -> ConvGrads {
    SCRATCH.with_borrow_mut(|scratch| backward_with(s, x, weight, dy, want_x, want_bias, scratch))
}

fn backward_with(
    s: &ConvShape,
    x: &[f32],
    weight: &[f32],
    dy: &[f32],
    want_x: bool,
    want_bias: bool,
    scratch: &mut Scratch,
) -> ConvGrads {
    s.check(x, weight);
    let (p, k, g) = (s.p(), s.k(), s.group());
    assert_eq!(dy.len(), s.n * s.co * p, "output gradient of {s:?}");
    let mut dw = vec![0.0; s.co * k];
    let mut dx = want_x.then(|| vec![0.0; x.len()]);
    let direct = s.pointwise() && g == 1;
    let Scratch {
        cols: _,
        rows,
        dcols,
        grouped,
        nhwc,
        dw_rows,
    } = scratch;
    let dcols = sized(dcols, if want_x && !direct { k * g * p } else { 0 });
    // The weight gradient sums over pixels: its column operand is built pixel-major (im2row),
    // so that packing it reads whole rows.
    let rows = sized(rows, k * g * p);
    let nhwc = sized(nhwc, s.ci * s.h * s.w);
    let dw_rows = sized(dw_rows, s.co * k);
    let grouped = sized(grouped, if g > 1 { s.co * g * p } else { 0 });
    let mut n0 = 0;
    while n0 < s.n {
        let g = g.min(s.n - n0);
        let width = g * p;
        let dyg: &[f32] = if g > 1 {
            let grouped = &mut grouped[..s.co * width];
            gather(s.co, p, n0, g, dy, grouped);
            grouped
        } else {
            &dy[n0 * s.co * p..][..s.co * p]
        };
        // dw' += dy (co x width) * rows (width x k), in (ky, kx, c) order
        let rows = &mut rows[..k * width];
        im2row(s, x, n0, g, nhwc, rows);
        matmul(
            s.co,
            k,
            width,
            dw_rows,
            n0 > 0,
            dyg,
            View::rows(width),
            rows,
            View::rows(k),
        );
        if let Some(dx) = dx.as_mut() {
            // dcols = w^T (k x co) * dy (co x width)
            let (tl, tr) = (View::transposed(k), View::rows(width));
            if direct {
                let dst = &mut dx[n0 * k * p..][..k * p];
                matmul(k, width, s.co, dst, false, weight, tl, dyg, tr);
            } else {
                let dcols = &mut dcols[..k * width];
                matmul(k, width, s.co, dcols, false, weight, tl, dyg, tr);
                if s.pointwise() {
                    scatter(s.ci, p, n0, g, dcols, dx);
                } else {
                    col2im(s, dcols, n0, g, dx);
                }
            }
        }
        n0 += g;
    }
    // (ky, kx, c) back to the weight's (c, ky, kx)
    let taps = s.kh * s.kw;
    for (out, from) in dw.chunks_exact_mut(k).zip(dw_rows.chunks_exact(k)) {
        for (t, seg) in from.chunks_exact(s.ci).enumerate() {
            for (c, v) in seg.iter().enumerate() {
                out[c * taps + t] = *v;
            }
        }
    }
    let bias = want_bias.then(|| {
        let mut db = vec![0.0f32; s.co];
        for (plane, c) in dy.chunks_exact(p).zip((0..s.co).cycle()) {
            db[c] += plane.iter().sum::<f32>();
        }
        db
    });
    ConvGrads {
        x: dx,
        weight: dw,
        bias,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values in [-1, 1) from a fixed linear congruential sequence.
    fn values(len: usize, seed: u64) -> Vec<f32> {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    /// Every (image, output channel, output pixel, input channel, kernel pixel) the convolution
    /// sums over whose input pixel is inside the image: (y index, x index, w index).
    fn taps(s: &ConvShape) -> Vec<(usize, usize, usize)> {
        let (ho, wo) = (s.ho(), s.wo());
        let mut out = Vec::new();
        for n in 0..s.n {
            for co in 0..s.co {
                for oy in 0..ho {
                    for ox in 0..wo {
                        for c in 0..s.ci {
                            for ky in 0..s.kh {
                                for kx in 0..s.kw {
                                    let iy = (oy * s.stride + ky) as isize - s.pad as isize;
                                    let ix = (ox * s.stride + kx) as isize - s.pad as isize;
                                    if iy < 0 || ix < 0 || iy >= s.h as isize || ix >= s.w as isize
                                    {
                                        continue;
                                    }
                                    out.push((
                                        ((n * s.co + co) * ho + oy) * wo + ox,
                                        ((n * s.ci + c) * s.h + iy as usize) * s.w + ix as usize,
                                        ((co * s.ci + c) * s.kh + ky) * s.kw + kx,
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }

    fn close(name: &str, got: &[f32], want: &[f64]) {
        assert_eq!(got.len(), want.len(), "{name}: length");
        let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                (f64::from(*g) - w).abs() <= 1e-5 * scale,
                "{name}[{i}]: {g} against {w} (scale {scale})"
            );
        }
    }

    /// The kernels against the definition, summed in f64 tap by tap.
    fn check(s: ConvShape) {
        let (ho, wo) = (s.ho(), s.wo());
        let x = values(s.n * s.ci * s.h * s.w, 1);
        let w = values(s.co * s.ci * s.kh * s.kw, 2);
        let b = values(s.co, 3);
        let dy = values(s.n * s.co * ho * wo, 4);
        let mut y = vec![0.0f64; dy.len()];
        for (i, v) in y.iter_mut().enumerate() {
            *v = f64::from(b[(i / (ho * wo)) % s.co]);
        }
        let mut dx = vec![0.0f64; x.len()];
        let mut dw = vec![0.0f64; w.len()];
        for (yi, xi, wi) in taps(&s) {
            y[yi] += f64::from(w[wi]) * f64::from(x[xi]);
            dx[xi] += f64::from(w[wi]) * f64::from(dy[yi]);
            dw[wi] += f64::from(x[xi]) * f64::from(dy[yi]);
        }
        let mut db = vec![0.0f64; s.co];
        for (i, v) in dy.iter().enumerate() {
            db[(i / (ho * wo)) % s.co] += f64::from(*v);
        }
        close(&format!("y of {s:?}"), &forward(&s, &x, &w, Some(&b)), &y);
        let grads = backward(&s, &x, &w, &dy, true, true);
        close(&format!("dx of {s:?}"), grads.x.as_deref().unwrap(), &dx);
        close(&format!("dw of {s:?}"), &grads.weight, &dw);
        close(&format!("db of {s:?}"), grads.bias.as_deref().unwrap(), &db);
        let only_w = backward(&s, &x, &w, &dy, false, false);
        assert!(only_w.x.is_none() && only_w.bias.is_none());
        assert_eq!(only_w.weight, grads.weight, "dw alone of {s:?}");
    }

    fn shape(
        n: usize,
        ci: usize,
        side: usize,
        co: usize,
        k: usize,
        stride: usize,
        pad: usize,
    ) -> ConvShape {
        ConvShape {
            n,
            ci,
            h: side,
            w: side + 1,
            co,
            kh: k,
            kw: k,
            stride,
            pad,
        }
    }

    #[test]
    fn three_by_three_same_padding_matches_the_definition() {
        check(shape(3, 2, 5, 4, 3, 1, 1));
    }

    #[test]
    fn strided_and_unpadded_kernels_match_the_definition() {
        check(shape(2, 3, 7, 2, 3, 2, 1));
        check(shape(2, 3, 7, 2, 3, 2, 0));
        check(shape(2, 3, 8, 5, 3, 3, 2));
    }

    #[test]
    fn five_by_five_kernels_match_the_definition() {
        check(shape(2, 3, 6, 4, 5, 1, 2));
        // the kernel as tall as the padded image: one output row of two pixels
        check(shape(2, 1, 1, 3, 5, 1, 2));
        // an image narrower than the padding: the outer kernel columns read no pixel at all
        check(ConvShape {
            n: 2,
            ci: 1,
            h: 3,
            w: 1,
            co: 2,
            kh: 5,
            kw: 5,
            stride: 1,
            pad: 2,
        });
    }

    #[test]
    fn pointwise_kernels_match_the_definition_alone_and_grouped() {
        // 1x1 stride 1: the image is its own column matrix (one image per product at 32x32,
        // several at 4x4)
        check(shape(2, 3, 32, 4, 1, 1, 0));
        check(shape(5, 3, 4, 4, 1, 1, 0));
        // 1x1 stride 2 (a residual shortcut): columns are built
        check(shape(3, 4, 6, 8, 1, 2, 0));
    }

    #[test]
    fn several_groups_and_a_partial_last_one_match_the_definition() {
        // 12x13 pixels: groups of 4 images, then 3
        let s = shape(7, 2, 12, 3, 3, 1, 1);
        assert_eq!(s.group(), 4);
        check(s);
        // stride 2, 5x5 output pixels: groups of 21, then 9
        let s = shape(30, 2, 9, 3, 3, 2, 1);
        assert_eq!(s.group(), 21);
        check(s);
    }

    #[test]
    fn grouped_images_match_one_image_per_product() {
        let s = shape(7, 3, 4, 5, 3, 1, 1);
        assert!(s.group() > 1, "4x4 images are grouped");
        check(s);
        let one = ConvShape { n: 1, ..s };
        let x = values(s.n * s.ci * s.h * s.w, 9);
        let w = values(s.co * s.ci * 9, 8);
        let y = forward(&s, &x, &w, None);
        let per = one.ci * one.h * one.w;
        let out = one.co * one.ho() * one.wo();
        for i in 0..s.n {
            let yi = forward(&one, &x[i * per..][..per], &w, None);
            close(
                &format!("image {i} alone"),
                &yi,
                &y[i * out..][..out]
                    .iter()
                    .map(|v| f64::from(*v))
                    .collect::<Vec<_>>(),
            );
        }
    }

    #[test]
    fn the_same_inputs_give_the_same_bytes() {
        let s = shape(9, 4, 6, 6, 3, 1, 1);
        let x = values(s.n * s.ci * s.h * s.w, 5);
        let w = values(s.co * s.ci * 9, 6);
        let dy = values(s.n * s.co * s.ho() * s.wo(), 7);
        assert_eq!(forward(&s, &x, &w, None), forward(&s, &x, &w, None));
        assert_eq!(
            backward(&s, &x, &w, &dy, true, true),
            backward(&s, &x, &w, &dy, true, true)
        );
    }

    /// The loops' AVX2 copy (what the wrappers run on a CPU that has it) and their baseline
    /// copy (the bodies called directly) give the same bits, at stride 1 and 2, with and
    /// without padding, for two images at once.
    #[test]
    fn the_avx2_loops_give_the_baseline_bits() {
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        for s in [
            shape(3, 5, 9, 4, 3, 1, 1),
            shape(3, 5, 9, 4, 3, 2, 1),
            shape(3, 4, 7, 2, 5, 1, 0),
        ] {
            let (g, k, p) = (2, s.k(), s.p());
            let x = values(s.n * s.ci * s.h * s.w, 11);
            let (mut a, mut b) = (vec![0.0; k * g * p], vec![0.0; k * g * p]);
            im2col(&s, &x, 1, g, &mut a);
            im2col_body(&s, &x, 1, g, &mut b);
            assert_eq!(bits(&a), bits(&b), "im2col {s:?}");
            let cols = values(k * g * p, 12);
            let (mut a, mut b) = (x.clone(), x.clone());
            col2im(&s, &cols, 1, g, &mut a);
            col2im_body(&s, &cols, 1, g, &mut b);
            assert_eq!(bits(&a), bits(&b), "col2im {s:?}");
            let plane = s.h * s.w * s.ci;
            let (mut na, mut nb) = (vec![0.0; plane], vec![0.0; plane]);
            let (mut a, mut b) = (vec![0.0; g * p * k], vec![0.0; g * p * k]);
            im2row(&s, &x, 1, g, &mut na, &mut a);
            im2row_body(&s, &x, 1, g, &mut nb, &mut b);
            assert_eq!(bits(&a), bits(&b), "im2row {s:?}");
        }
    }
}
