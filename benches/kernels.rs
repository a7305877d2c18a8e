//! Benchmarks of the CPU kernels on the headline workload: `relu(x * 2.0 + 1.0) * x - 0.5`
//! and a sum, each over 10,000,000 `f32`, as the interpreter would call them one by one;
//! the data-dependent kernels (masks, nonzero, index_select, cumsum, diff, repeat_interleave,
//! unique of integers in a narrow and a wide span, and of floats) on the same input;
//! row sums and maxima of the same elements laid out as short rows; and a 1024 x 1024
//! `f32` matrix product.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ndarray::Zip;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tsl::backend::cpu::{
    BinaryOp, IndexItem, KernelError, ReduceOp, Tensor, UnaryOp, binary, binary_owned, cumsum,
    diff, index, index_select, masked_select, matmul, nonzero, randn, reduce, repeat_interleave,
    reshape, unary, unary_owned, unique,
};
use tsl::dtype::{DType, Scalar};

const SIZE: usize = 10_000_000;

/// The headline chain, one kernel call per operation, scalars as 0-d tensors.
fn chain(x: &Tensor) -> Result<Tensor, KernelError> {
    let scalar = |value| Tensor::scalar(Scalar::Float(value));
    let scaled = binary(BinaryOp::Mul, x, &scalar(2.0))?;
    let shifted = binary(BinaryOp::Add, &scaled, &scalar(1.0))?;
    let activated = unary(UnaryOp::Relu, &shifted)?;
    let product = binary(BinaryOp::Mul, &activated, x)?;
    binary(BinaryOp::Sub, &product, &scalar(0.5))
}

/// The chain as the interpreter runs it: temporaries handed over, so their buffers are
/// reused and only the first operation allocates.
fn chain_owned(x: &Tensor) -> Result<Tensor, KernelError> {
    let scalar = |value| Tensor::scalar(Scalar::Float(value));
    let scaled = binary_owned(BinaryOp::Mul, x.clone(), scalar(2.0))?;
    let shifted = binary_owned(BinaryOp::Add, scaled, scalar(1.0))?;
    let activated = unary_owned(UnaryOp::Relu, shifted)?;
    let product = binary_owned(BinaryOp::Mul, activated, x.clone())?;
    binary_owned(BinaryOp::Sub, product, scalar(0.5))
}

/// The same arithmetic in one parallel pass: the floor that fusion could reach.
fn fused(x: &Tensor) -> Tensor {
    let array = x.as_f32().expect("an f32 input");
    let out = Zip::from(array).par_map_collect(|&value| (value * 2.0 + 1.0).max(0.0) * value - 0.5);
    Tensor::from(out)
}

fn kernels(criterion: &mut Criterion) {
    let x = randn(&[SIZE], &mut ChaCha8Rng::seed_from_u64(0)).expect("a 10M-element input");
    let mut group = criterion.benchmark_group("f32x10M");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements(SIZE as u64));
    group.bench_function("relu(x*2+1)*x-0.5", |bench| {
        bench.iter(|| chain(black_box(&x)));
    });
    group.bench_function("relu(x*2+1)*x-0.5 owned", |bench| {
        bench.iter(|| chain_owned(black_box(&x)));
    });
    group.bench_function("fused reference", |bench| {
        bench.iter(|| fused(black_box(&x)));
    });
    group.bench_function("x*2", |bench| {
        let two = Tensor::scalar(Scalar::Float(2.0));
        bench.iter(|| binary(BinaryOp::Mul, black_box(&x), &two));
    });
    group.bench_function("sum", |bench| {
        bench.iter(|| reduce(ReduceOp::Sum, black_box(&x), None, false));
    });
    group.finish();
}

/// `x > 0`, the mask every data-dependent benchmark uses.
fn positive(x: &Tensor) -> Result<Tensor, KernelError> {
    binary(BinaryOp::Gt, x, &Tensor::scalar(Scalar::Float(0.0)))
}

/// `x[x > 0]` as the interpreter runs it: the comparison, then the mask index.
fn mask_index(x: &Tensor) -> Result<Tensor, KernelError> {
    index(x, &[IndexItem::Mask(positive(x)?)])
}

/// `(x.index_select(0, nonzero(x > 0)[:, 0]) * 2).sum()`, one kernel call per operation.
fn nonzero_pipeline(x: &Tensor) -> Result<Tensor, KernelError> {
    let coordinates = nonzero(&positive(x)?)?;
    let indices = index(&coordinates, &[IndexItem::full(), IndexItem::Int(0)])?;
    let selected = index_select(x, 0, &indices)?;
    let doubled = binary_owned(BinaryOp::Mul, selected, Tensor::scalar(Scalar::Float(2.0)))?;
    reduce(ReduceOp::Sum, &doubled, None, false)
}

fn data_dependent(criterion: &mut Criterion) {
    let x = randn(&[SIZE], &mut ChaCha8Rng::seed_from_u64(0)).expect("a 10M-element input");
    let mask = positive(&x).expect("a mask");
    let coordinates = nonzero(&mask).expect("coordinates");
    let indices = index(&coordinates, &[IndexItem::full(), IndexItem::Int(0)]).expect("indices");
    let times = |x: &Tensor, factor: f64| {
        let scaled = binary(BinaryOp::Mul, x, &Tensor::scalar(Scalar::Float(factor)));
        scaled.expect("a product").cast(DType::I64)
    };
    // `(x.abs() * 2).to(i64)`: counts from 0 to about 10, 1.1 on average.
    let counts = times(&unary(UnaryOp::Abs, &x).expect("magnitudes"), 2.0);
    // `(x * 1000).to(i64)`: about 8,000 distinct values.
    let thousandths = times(&x, 1000.0);
    // `(x * 1e9).to(i64)`: nearly all distinct, over a span of about 10^10.
    let billionths = times(&x, 1e9);
    let mut group = criterion.benchmark_group("f32x10M");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements(SIZE as u64));
    group.bench_function("x[x>0]", |bench| {
        bench.iter(|| mask_index(black_box(&x)));
    });
    group.bench_function("x[mask]", |bench| {
        bench.iter(|| index(black_box(&x), &[IndexItem::Mask(mask.clone())]));
    });
    group.bench_function("masked_select", |bench| {
        bench.iter(|| masked_select(black_box(&x), &mask));
    });
    group.bench_function("nonzero", |bench| {
        bench.iter(|| nonzero(black_box(&mask)));
    });
    group.bench_function("index_select nonzero", |bench| {
        bench.iter(|| index_select(black_box(&x), 0, &indices));
    });
    group.bench_function("nonzero pipeline", |bench| {
        bench.iter(|| nonzero_pipeline(black_box(&x)));
    });
    group.bench_function("cumsum", |bench| {
        bench.iter(|| cumsum(black_box(&x), 0));
    });
    group.bench_function("diff", |bench| {
        bench.iter(|| diff(black_box(&x), 0));
    });
    group.bench_function("repeat_interleave", |bench| {
        bench.iter(|| repeat_interleave(black_box(&x), &counts, None));
    });
    group.bench_function("unique i64", |bench| {
        bench.iter(|| unique(black_box(&thousandths)));
    });
    group.bench_function("unique i64 wide", |bench| {
        bench.iter(|| unique(black_box(&billionths)));
    });
    group.bench_function("unique f32", |bench| {
        bench.iter(|| unique(black_box(&x)));
    });
    group.finish();
}

/// `x.sum(1)` and `x.max(1)` over 10,080,000 `f32` as rows of 4, 12 and 24: rows short
/// enough to fold with code made for their length, on both sides of where folding across
/// rows stops paying.
fn row_reductions(criterion: &mut Criterion) {
    const ELEMENTS: usize = 10_080_000;
    let x = randn(&[ELEMENTS], &mut ChaCha8Rng::seed_from_u64(2)).expect("an input");
    let mut group = criterion.benchmark_group("rows");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(ELEMENTS as u64));
    for length in [4, 12, 24] {
        let rows = reshape(&x, &[ELEMENTS / length, length]).expect("rows");
        for (name, op) in [("sum", ReduceOp::Sum), ("max", ReduceOp::Max)] {
            group.bench_function(format!("{name}(1) of rows of {length}"), |bench| {
                bench.iter(|| reduce(op, black_box(&rows), Some(&[1]), false));
            });
        }
    }
    group.finish();
}

fn matrix_product(criterion: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let left = randn(&[1024, 1024], &mut rng).expect("a matrix");
    let right = randn(&[1024, 1024], &mut rng).expect("a matrix");
    let mut group = criterion.benchmark_group("matmul");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    group.bench_function("f32 1024x1024", |bench| {
        bench.iter(|| matmul(black_box(&left), &right));
    });
    group.finish();
}

criterion_group!(
    benches,
    kernels,
    data_dependent,
    row_reductions,
    matrix_product
);
criterion_main!(benches);
