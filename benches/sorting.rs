//! Benchmarks of the sorting kernels on the data of `bench/peers.py` (10M `f32` from a
//! standard normal, a 4096×1024 matrix): `sort` (values and indices), a descending `argsort`,
//! `topk(10)`, a sort of every row, and a sort of 10M `i64`.
//!
//! `cargo bench --bench sorting`; `python bench/peers.py sort argsort topk sort_rows` gives
//! the NumPy and PyTorch figures of the same sitting.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tsl::backend::cpu::{Tensor, randn, sort, topk};
use tsl::dtype::DType;

const SIZE: usize = 10_000_000;

fn sorting(criterion: &mut Criterion) {
    let x = randn(&[SIZE], &mut ChaCha8Rng::seed_from_u64(0)).expect("a 10M-element input");
    let rows = randn(&[4096, 1024], &mut ChaCha8Rng::seed_from_u64(1)).expect("a matrix");
    let integers: Tensor = x.cast(DType::I64);
    let mut group = criterion.benchmark_group("sorting");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10))
        .throughput(Throughput::Elements(SIZE as u64));
    group.bench_function("sort f32x10M", |bench| {
        bench.iter(|| sort(black_box(&x), 0, false));
    });
    group.bench_function("argsort descending f32x10M", |bench| {
        bench.iter(|| sort(black_box(&x), 0, true));
    });
    group.bench_function("topk 10 of f32x10M", |bench| {
        bench.iter(|| topk(black_box(&x), 10, 0, true));
    });
    group.bench_function("sort i64x10M", |bench| {
        bench.iter(|| sort(black_box(&integers), 0, false));
    });
    group.throughput(Throughput::Elements(4096 * 1024));
    group.bench_function("sort rows f32 4096x1024", |bench| {
        bench.iter(|| sort(black_box(&rows), 1, false));
    });
    group.finish();
}

criterion_group!(benches, sorting);
criterion_main!(benches);
