//! The CNNs' matrix product (`bench_core::workload::matmul`, one fixed order on every CPU)
//! beside the `gemm` crate (flex's, whose order follows the CPU) on the products the
//! convolution makes at the ResNets' and the quick networks' layer shapes: what determinism
//! costs, as floating-point operations per second ("elements") of both in one run.
//! `cargo bench -p bench-core --features cnn --bench matmul`.

use bench_core::workload::matmul::{matmul, View};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;

fn values(len: usize) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 7919) % 1009) as f32 / 1009.0 - 0.5)
        .collect()
}

/// `dst (m x n) = lhs (m x k) * rhs (k x n)`, all row-major, by gemm on one thread.
fn by_gemm(m: usize, n: usize, k: usize, dst: &mut [f32], lhs: &[f32], rhs: &[f32]) {
    // SAFETY: the slices hold m x n, m x k and k x n floats (asserted by the caller's sizes).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            false,
            lhs.as_ptr(),
            1,
            k as isize,
            rhs.as_ptr(),
            1,
            n as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

fn products(c: &mut Criterion) {
    let mut g = c.benchmark_group("matmul");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    // (name, m, n, k): forward (co, pixels, ci*9), weight gradient (co, ci*9, pixels), input
    // gradient (ci*9, pixels, co) of ResNet-20's stages at width 16 on 32x32 images, and the
    // quick networks' 4- and 8-channel layers.
    let cases = [
        ("fwd-16x1024x144", 16, 1024, 144),
        ("fwd-64x512x576", 64, 512, 576),
        ("dw-16x144x1024", 16, 144, 1024),
        ("dx-144x1024x16", 144, 1024, 16),
        ("fwd-4x512x36", 4, 512, 36),
        ("fwd-8x512x72", 8, 512, 72),
        ("dense-384x32x512", 384, 32, 512),
    ];
    for (name, m, n, k) in cases {
        let (lhs, rhs) = (values(m * k), values(k * n));
        let mut dst = vec![0.0f32; m * n];
        g.throughput(Throughput::Elements((2 * m * n * k) as u64));
        g.bench_function(format!("{name}/ours"), |b| {
            b.iter(|| {
                matmul(
                    m,
                    n,
                    k,
                    &mut dst,
                    false,
                    &lhs,
                    View::rows(k),
                    &rhs,
                    View::rows(n),
                )
            })
        });
        g.bench_function(format!("{name}/gemm"), |b| {
            b.iter(|| by_gemm(m, n, k, &mut dst, &lhs, &rhs))
        });
    }
    g.finish();
}

criterion_group!(benches, products);
criterion_main!(benches);
