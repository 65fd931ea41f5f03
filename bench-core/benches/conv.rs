//! The CNNs' convolution kernels (`bench_core::workload::conv_kernels`) at the layer shapes
//! of a CIFAR ResNet at width 16 on 32x32 images, batch 32 (the paper's ResNet-20 stages), and
//! of the quick networks (width 8 on 16x16 images): the forward pass and both gradients, with
//! the floating-point operations per second criterion's throughput reports as "elements".
//! `cargo bench -p bench-core --features cnn --bench conv`.

use bench_core::workload::conv_kernels::{backward, forward, ConvShape};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;

fn values(len: usize) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 7919) % 1009) as f32 / 1009.0 - 0.5)
        .collect()
}

fn shapes() -> Vec<(&'static str, ConvShape)> {
    let s = |n, ci, side, co, k, stride| ConvShape {
        n,
        ci,
        h: side,
        w: side,
        co,
        kh: k,
        kw: k,
        stride,
        pad: k / 2,
    };
    vec![
        ("resnet-16x32x32", s(32, 16, 32, 16, 3, 1)),
        ("resnet-32x16x16", s(32, 32, 16, 32, 3, 1)),
        ("resnet-64x8x8", s(32, 64, 8, 64, 3, 1)),
        ("resnet-down-16to32", s(32, 16, 32, 32, 3, 2)),
        ("quick-8x16x16", s(32, 8, 16, 8, 3, 1)),
        ("quick-5x5-3to8", s(32, 3, 16, 8, 5, 1)),
    ]
}

fn convolution(c: &mut Criterion) {
    let mut g = c.benchmark_group("conv");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for (name, s) in shapes() {
        let x = values(s.n * s.ci * s.h * s.w);
        let w = values(s.co * s.ci * s.kh * s.kw);
        let dy = values(s.n * s.co * s.ho() * s.wo());
        let flops = 2 * s.n * s.co * s.ho() * s.wo() * s.ci * s.kh * s.kw;
        g.throughput(Throughput::Elements(flops as u64));
        g.bench_function(format!("{name}/forward"), |b| {
            b.iter(|| forward(&s, &x, &w, None))
        });
        g.throughput(Throughput::Elements(2 * flops as u64));
        g.bench_function(format!("{name}/backward"), |b| {
            b.iter(|| backward(&s, &x, &w, &dy, true, false))
        });
    }
    g.finish();
}

criterion_group!(benches, convolution);
criterion_main!(benches);
