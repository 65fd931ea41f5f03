//! The CNNs' matrix product, `dst (m x n) [+]= lhs (m x k) * rhs (k x n)`, with one fixed
//! order of arithmetic, so that every x86-64 CPU gives the same bits.
//!
//! Each element of the product is one chain of fused multiply-adds over the summed index in
//! increasing order, `c = fma(lhs[i][p], rhs[p][j], c)` for `p = 0, 1, .., k - 1`, starting
//! from `dst[i][j]` when accumulating and from zero otherwise. The blocking (which `p` a pass
//! covers, which rows and columns are computed together) and the vector width only decide
//! which elements are computed at the same time: a pass over part of `p` stores the element's
//! running value in `dst` as the `f32` it is and the next pass continues the chain from it, so
//! no blocking constant and no instruction set changes a bit. This is what a general matrix
//! library does not promise: the `gemm` crate (which flex's matmul uses, and which we used
//! before) sizes its blocks from the caches it detects, sums a block from zero before adding it
//! to `dst`, and picks AVX-512 or AVX2 kernels of different shapes at run time, so two CPUs round
//! differently.
//!
//! The kernels are the usual register-blocked ones: `lhs` packed `MR` rows at a time, `rhs`
//! `NR` columns at a time, an `MR` x `NR` tile of accumulators in registers (AVX-512: 12, 8 or 4 x 32,
//! AVX2 + FMA: 6 or 4 x 16). Without FMA (an x86-64 CPU older than 2013) the same chain runs through
//! the C library's `fmaf`, exact and much slower ([`super::cpu_level`]).

use super::cpu_level::{self, CpuLevel};

/// A matrix inside a slice: element (r, c) at `r * rs + c * cs`.
#[derive(Clone, Copy, Debug)]
pub struct View {
    /// Row stride.
    pub rs: usize,
    /// Column stride.
    pub cs: usize,
}

impl View {
    /// Row-major with `cols` columns.
    pub const fn rows(cols: usize) -> Self {
        View { rs: cols, cs: 1 }
    }

    /// Column-major with `rows` rows (the transpose of a row-major matrix): element (r, c) at
    /// `c * rows + r`.
    pub const fn transposed(rows: usize) -> Self {
        View { rs: 1, cs: rows }
    }

    /// The largest offset an `r` x `c` matrix touches, plus one.
    pub fn extent(self, r: usize, c: usize) -> usize {
        if r == 0 || c == 0 {
            0
        } else {
            (r - 1) * self.rs + (c - 1) * self.cs + 1
        }
    }
}

/// Summed-index block: a pass covers this many `p` (the packed `rhs` strip stays in L1).
const KC: usize = 256;
/// Rows of `lhs` packed at once (in L2).
const MC: usize = 96;
/// Columns of `rhs` packed at once.
const NC: usize = 2048;

/// `dst (m x n) [+]= lhs (m x k) * rhs (k x n)`; `dst` row-major with row stride `n`. The
/// order of every element's arithmetic is the module's; the bits do not depend on the CPU.
///
/// # Panics
/// When a slice is shorter than its view of the sizes needs.
#[allow(clippy::too_many_arguments)]
pub fn matmul(
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [f32],
    accumulate: bool,
    lhs: &[f32],
    lv: View,
    rhs: &[f32],
    rv: View,
) {
    assert!(
        dst.len() >= m * n && lhs.len() >= lv.extent(m, k) && rhs.len() >= rv.extent(k, n),
        "matmul {m}x{k} * {k}x{n}: operand or destination too short"
    );
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            dst[..m * n].fill(0.0);
        }
        return;
    }
    let ops = Operands {
        m,
        n,
        k,
        lhs,
        lv,
        rhs,
        rv,
        accumulate,
    };
    match cpu_level::current() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `current` never exceeds the detected level, so the CPU has AVX-512F.
        CpuLevel::Avx512 => unsafe { x86::blocked_avx512(&ops, dst) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above, AVX2 and FMA.
        CpuLevel::Avx2 => unsafe { x86::blocked_avx2(&ops, dst) },
        _ => {
            if !accumulate {
                dst[..m * n].fill(0.0);
            }
            reference(&ops, dst)
        }
    }
}

/// The product's operands.
struct Operands<'a> {
    m: usize,
    n: usize,
    k: usize,
    lhs: &'a [f32],
    lv: View,
    rhs: &'a [f32],
    rv: View,
    /// Whether the chains start from `dst` (else from zero).
    accumulate: bool,
}

/// The chain without blocking or vectors: row by row, `p` outer, `j` inner (each element's
/// `p` still in increasing order), `mul_add` exact on every CPU, from `dst` as it is. The
/// baseline level's path and the tests' reference.
fn reference(o: &Operands, dst: &mut [f32]) {
    for i in 0..o.m {
        let row = &mut dst[i * o.n..][..o.n];
        for p in 0..o.k {
            let a = o.lhs[i * o.lv.rs + p * o.lv.cs];
            for (j, c) in row.iter_mut().enumerate() {
                *c = a.mul_add(o.rhs[p * o.rv.rs + j * o.rv.cs], *c);
            }
        }
    }
}

/// Packs `rhs[p0..p0 + kc][j0..j0 + nc]` as strips of `NR` columns, `p` by `p`, zero past the
/// last column.
#[inline(always)]
fn pack_rhs<const NR: usize>(
    o: &Operands,
    p0: usize,
    kc: usize,
    j0: usize,
    nc: usize,
    out: &mut [f32],
) {
    let strips = nc.div_ceil(NR);
    for s in 0..strips {
        let j = j0 + s * NR;
        let w = NR.min(j0 + nc - j);
        let strip = &mut out[s * kc * NR..][..kc * NR];
        for p in 0..kc {
            let dst: &mut [f32; NR] = (&mut strip[p * NR..][..NR]).try_into().expect("NR floats");
            let base = (p0 + p) * o.rv.rs + j * o.rv.cs;
            if o.rv.cs == 1 && w == NR {
                // A whole strip row: a fixed-size copy the compiler keeps in registers.
                let src: &[f32; NR] = o.rhs[base..base + NR].try_into().expect("NR floats");
                *dst = *src;
            } else {
                for (q, d) in dst.iter_mut().enumerate() {
                    *d = if q < w {
                        o.rhs[base + q * o.rv.cs]
                    } else {
                        0.0
                    };
                }
            }
        }
    }
}

/// Packs `lhs[i0..i0 + mc][p0..p0 + kc]` as panels of `MR` rows, `p` by `p`, zero past the
/// last row.
#[inline(always)]
fn pack_lhs<const MR: usize>(
    o: &Operands,
    i0: usize,
    mc: usize,
    p0: usize,
    kc: usize,
    out: &mut [f32],
) {
    let panels = mc.div_ceil(MR);
    for s in 0..panels {
        let i = i0 + s * MR;
        let h = MR.min(i0 + mc - i);
        let panel = &mut out[s * kc * MR..][..kc * MR];
        for p in 0..kc {
            let dst: &mut [f32; MR] = (&mut panel[p * MR..][..MR]).try_into().expect("MR floats");
            let base = i * o.lv.rs + (p0 + p) * o.lv.cs;
            if o.lv.rs == 1 && h == MR {
                let src: &[f32; MR] = o.lhs[base..base + MR].try_into().expect("MR floats");
                *dst = *src;
            } else {
                for (r, d) in dst.iter_mut().enumerate() {
                    *d = if r < h {
                        o.lhs[base + r * o.lv.rs]
                    } else {
                        0.0
                    };
                }
            }
        }
    }
}

std::thread_local! {
    /// Packed operands, kept between products.
    static PACKED: std::cell::RefCell<(Vec<f32>, Vec<f32>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// The blocked product with an `MR` x `NR` micro-kernel `tile(kc, a, b, c, ldc, load)` that
/// continues the chains of a full tile of `c` (row stride `ldc`) over `kc` packed steps, from
/// `c` when `load` and from zero otherwise (the first pass of a product that does not
/// accumulate: `fma(a, b, 0)` is `fma(a, b, +0.0)` read from memory, bit for bit).
#[inline(always)]
fn blocked<const MR: usize, const NR: usize>(
    o: &Operands,
    dst: &mut [f32],
    tile: impl Fn(usize, *const f32, *const f32, *mut f32, usize, bool),
) {
    PACKED.with_borrow_mut(|(pa, pb)| {
        let nc_max = NC.min(o.n.div_ceil(NR) * NR);
        let mc_max = MC.min(o.m.div_ceil(MR) * MR);
        if pb.len() < KC * nc_max {
            pb.resize(KC * nc_max, 0.0);
        }
        if pa.len() < KC * mc_max {
            pa.resize(KC * mc_max, 0.0);
        }
        let mut edge = [0.0f32; 16 * 32];
        for j0 in (0..o.n).step_by(NC) {
            let nc = NC.min(o.n - j0);
            for p0 in (0..o.k).step_by(KC) {
                let kc = KC.min(o.k - p0);
                let load = o.accumulate || p0 > 0;
                pack_rhs::<NR>(o, p0, kc, j0, nc, pb);
                for i0 in (0..o.m).step_by(MC) {
                    let mc = MC.min(o.m - i0);
                    pack_lhs::<MR>(o, i0, mc, p0, kc, pa);
                    for (s, jr) in (0..nc).step_by(NR).enumerate() {
                        let w = NR.min(nc - jr);
                        let b = pb[s * kc * NR..].as_ptr();
                        for (t, ir) in (0..mc).step_by(MR).enumerate() {
                            let h = MR.min(mc - ir);
                            let a = pa[t * kc * MR..].as_ptr();
                            let at = (i0 + ir) * o.n + j0 + jr;
                            if h == MR && w == NR {
                                // The tile lies inside dst: the asserts of `matmul` and the
                                // loop bounds keep rows i0+ir.. and columns j0+jr.. in it.
                                tile(kc, a, b, dst[at..].as_mut_ptr(), o.n, load);
                            } else {
                                let e = &mut edge[..MR * NR];
                                if load {
                                    for r in 0..h {
                                        e[r * NR..][..w].copy_from_slice(&dst[at + r * o.n..][..w]);
                                    }
                                }
                                tile(kc, a, b, e.as_mut_ptr(), NR, load);
                                for r in 0..h {
                                    dst[at + r * o.n..][..w].copy_from_slice(&e[r * NR..][..w]);
                                }
                            }
                        }
                    }
                }
            }
        }
    });
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{blocked, Operands};
    use std::arch::x86_64::*;

    /// AVX-512 tiles: 32 columns (two vectors) by 12 rows, or 8 or 4 for products of few rows
    /// (a convolution's output channels), which would otherwise mostly compute padding.
    const NR512: usize = 32;
    /// AVX2 tiles: 16 columns (two vectors) by 6 rows, or 4.
    const NR256: usize = 16;

    /// The tile height of `options` (largest first) that pads `m` rows the least: 16 rows
    /// take two tiles of 8, not 12 and 4 of which 8 are padding.
    fn fewest_padded<const N: usize>(m: usize, options: [usize; N]) -> usize {
        let padded = |mr: usize| m.div_ceil(mr) * mr;
        options.into_iter().fold(options[0], |best, mr| {
            if padded(mr) < padded(best) {
                mr
            } else {
                best
            }
        })
    }

    /// # Safety
    /// The CPU has AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn blocked_avx512(o: &Operands, dst: &mut [f32]) {
        // SAFETY (the closures): AVX-512F is there (this function's contract); `blocked` hands
        // a full tile of `c` and packed panels of `kc` steps.
        match fewest_padded(o.m, [12, 8, 4]) {
            4 => blocked::<4, NR512>(o, dst, |kc, a, b, c, ldc, load| unsafe {
                tile_avx512::<4>(kc, a, b, c, ldc, load)
            }),
            8 => blocked::<8, NR512>(o, dst, |kc, a, b, c, ldc, load| unsafe {
                tile_avx512::<8>(kc, a, b, c, ldc, load)
            }),
            _ => blocked::<12, NR512>(o, dst, |kc, a, b, c, ldc, load| unsafe {
                tile_avx512::<12>(kc, a, b, c, ldc, load)
            }),
        }
    }

    /// # Safety
    /// The CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn blocked_avx2(o: &Operands, dst: &mut [f32]) {
        // SAFETY (the closures): as above, AVX2 and FMA.
        match fewest_padded(o.m, [6, 4]) {
            4 => blocked::<4, NR256>(o, dst, |kc, a, b, c, ldc, load| unsafe {
                tile_avx2::<4>(kc, a, b, c, ldc, load)
            }),
            _ => blocked::<6, NR256>(o, dst, |kc, a, b, c, ldc, load| unsafe {
                tile_avx2::<6>(kc, a, b, c, ldc, load)
            }),
        }
    }

    /// `c[r][0..32] = fma(a[p][r], b[p][0..32], c[r][..])` for `p` in `0..kc`, `r` in `0..MR`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn tile_avx512<const MR: usize>(
        kc: usize,
        a: *const f32,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        load: bool,
    ) {
        // SAFETY (whole body): the caller's tile and panels (see `blocked`).
        unsafe {
            let mut acc = [[_mm512_setzero_ps(); 2]; MR];
            for (r, row) in acc.iter_mut().enumerate().filter(|_| load) {
                row[0] = _mm512_loadu_ps(c.add(r * ldc));
                row[1] = _mm512_loadu_ps(c.add(r * ldc + 16));
            }
            for p in 0..kc {
                let b0 = _mm512_loadu_ps(b.add(p * NR512));
                let b1 = _mm512_loadu_ps(b.add(p * NR512 + 16));
                let ap = a.add(p * MR);
                for (r, row) in acc.iter_mut().enumerate() {
                    let x = _mm512_set1_ps(*ap.add(r));
                    row[0] = _mm512_fmadd_ps(x, b0, row[0]);
                    row[1] = _mm512_fmadd_ps(x, b1, row[1]);
                }
            }
            for (r, row) in acc.iter().enumerate() {
                _mm512_storeu_ps(c.add(r * ldc), row[0]);
                _mm512_storeu_ps(c.add(r * ldc + 16), row[1]);
            }
        }
    }

    /// `c[r][0..16] = fma(a[p][r], b[p][0..16], c[r][..])` for `p` in `0..kc`, `r` in `0..MR`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn tile_avx2<const MR: usize>(
        kc: usize,
        a: *const f32,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        load: bool,
    ) {
        // SAFETY (whole body): the caller's tile and panels (see `blocked`).
        unsafe {
            let mut acc = [[_mm256_setzero_ps(); 2]; MR];
            for (r, row) in acc.iter_mut().enumerate().filter(|_| load) {
                row[0] = _mm256_loadu_ps(c.add(r * ldc));
                row[1] = _mm256_loadu_ps(c.add(r * ldc + 8));
            }
            for p in 0..kc {
                let b0 = _mm256_loadu_ps(b.add(p * NR256));
                let b1 = _mm256_loadu_ps(b.add(p * NR256 + 8));
                let ap = a.add(p * MR);
                for (r, row) in acc.iter_mut().enumerate() {
                    let x = _mm256_set1_ps(*ap.add(r));
                    row[0] = _mm256_fmadd_ps(x, b0, row[0]);
                    row[1] = _mm256_fmadd_ps(x, b1, row[1]);
                }
            }
            for (r, row) in acc.iter().enumerate() {
                _mm256_storeu_ps(c.add(r * ldc), row[0]);
                _mm256_storeu_ps(c.add(r * ldc + 8), row[1]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random(n: usize, rng: &mut ChaCha8Rng) -> Vec<f32> {
        (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect()
    }

    /// Every level this CPU has gives the reference's bits, for shapes with edges in every
    /// direction, more `p` than one block, transposed operands and accumulation.
    #[test]
    fn every_level_gives_the_reference_bits() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let shapes = [
            (1, 1, 1),
            (5, 7, 3),
            (12, 32, 256),
            (13, 33, 257),
            (30, 70, 600),
            (97, 2050, 9),
            (6, 16, 1),
        ];
        for &(m, n, k) in &shapes {
            for (transposed, accumulate) in [(false, false), (true, true), (false, true)] {
                let lhs = random(m * k, &mut rng);
                let rhs = random(k * n, &mut rng);
                let start = random(m * n, &mut rng);
                let lv = if transposed {
                    View::transposed(m)
                } else {
                    View::rows(k)
                };
                let rv = View::rows(n);
                let mut want = if accumulate {
                    start.clone()
                } else {
                    vec![0.0; m * n]
                };
                let o = Operands {
                    m,
                    n,
                    k,
                    lhs: &lhs,
                    lv,
                    rhs: &rhs,
                    rv,
                    accumulate,
                };
                reference(&o, &mut want);
                for level in CpuLevel::available() {
                    cpu_level::force(level);
                    let mut got = if accumulate {
                        start.clone()
                    } else {
                        vec![f32::NAN; m * n]
                    };
                    matmul(m, n, k, &mut got, accumulate, &lhs, lv, &rhs, rv);
                    let same = got
                        .iter()
                        .zip(&want)
                        .all(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(same, "{m}x{k}x{n} at {level:?} differs from the reference");
                }
                cpu_level::force(CpuLevel::detected());
            }
        }
    }

    #[test]
    fn the_chain_is_fused() {
        // (1 + 2^-23)^2 - (1 + 2^-22) is 2^-46 exactly when the product is not rounded first;
        // rounded, it would be 0.
        let e = f32::EPSILON;
        let (lhs, rhs) = ([1.0 + e], [1.0 + e]);
        for level in CpuLevel::available() {
            cpu_level::force(level);
            let mut out = [-(1.0 + 2.0 * e)];
            matmul(
                1,
                1,
                1,
                &mut out,
                true,
                &lhs,
                View::rows(1),
                &rhs,
                View::rows(1),
            );
            assert_eq!(out[0], e * e, "{level:?}");
        }
        cpu_level::force(CpuLevel::detected());
    }
}
