//! The workloads of BENCHMARKS.md ("Compiled code against NumPy and PyTorch"), each run as an
//! eager TSL function and as a compiled one, on the same data as `bench/peers.py` uses for
//! NumPy and PyTorch: 10M f32 from a standard normal (and those times a million as i64 for
//! `%` and `//`), a 4096×1024 matrix for the row softmax (and a 2,500,000×4 one for a
//! softmax, flags and an integer `where` over short rows), and 1024×1024 and 500×500
//! matrices for matmul (500 rows end in a tile of 8 rows, which the 1024-row product never
//! runs), and a 4096×4096 matrix times a vector of 4096 on either side.
//!
//! The chain runs once more with its fused kernel interpreted rather than compiled to machine
//! code, to measure what the compiled loop gains.
//!
//! `cargo bench --bench workloads` (add a filter on the printed names, such as `-- softmax`,
//! to run some).

mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tsl::backend::{Native, cpu};
use tsl::dtype::{DType, Scalar};
use tsl::eval::{Interpreter, Options, Status, TensorValue, Value};

/// Each workload twice: `NAME` compiled and `NAME_eager`.
const PROGRAM: &str = "
@compile
fn chain(x) { return relu(x * 2.0 + 1.0) * x - 0.5 }
fn chain_eager(x) { return relu(x * 2.0 + 1.0) * x - 0.5 }

@compile
fn positives(x) { return x[x > 0.0] }
fn positives_eager(x) { return x[x > 0.0] }

@compile
fn pipeline(x) { return (x.index_select(0, nonzero(x > 0.0).squeeze(1)) * 2.0).sum() }
fn pipeline_eager(x) { return (x.index_select(0, nonzero(x > 0.0).squeeze(1)) * 2.0).sum() }

@compile
fn softmax(x) {
    let e = (x - x.max(1, keepdim = true)).exp()
    return e / e.sum(1, keepdim = true)
}
fn softmax_eager(x) {
    let e = (x - x.max(1, keepdim = true)).exp()
    return e / e.sum(1, keepdim = true)
}

@compile
fn flags(x) { return [(x > 2.0).any(1), (x != 0.0).all(1)] }
fn flags_eager(x) { return [(x > 2.0).any(1), (x != 0.0).all(1)] }

@compile
fn scaled(k) { return where(k > 0, k * k.sum(1, keepdim = true), -k) }
fn scaled_eager(k) { return where(k > 0, k * k.sum(1, keepdim = true), -k) }

@compile
fn divide(k) { return [k % 7, k // 1000] }
fn divide_eager(k) { return [k % 7, k // 1000] }

@compile
fn total(x) { return x.sum() }
fn total_eager(x) { return x.sum() }

@compile
fn product(a, b) { return a @ b }
fn product_eager(a, b) { return a @ b }
";

fn normal_tensor(shape: &[usize], seed: u64) -> cpu::Tensor {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    cpu::randn(shape, &mut rng).expect("the benchmark data fits")
}

fn normal(shape: &[usize], seed: u64) -> Value {
    Value::Tensor(TensorValue::new(normal_tensor(shape, seed)))
}

fn workloads(c: &mut Criterion) {
    let mut interpreter = Interpreter::new(Options::default(), Box::new(support::Silent));
    assert_eq!(
        interpreter.run_cell("setup", PROGRAM.to_string()),
        Status::Ok
    );
    let x = normal(&[10_000_000], 0);
    let rows = normal(&[4096, 1024], 1);
    let short_rows = normal(&[2_500_000, 4], 8);
    // The short rows times three, as integers.
    let short_ints = cpu::binary(
        cpu::BinaryOp::Mul,
        &normal_tensor(&[2_500_000, 4], 8),
        &cpu::Tensor::scalar(Scalar::Float(3.0)),
    )
    .expect("the benchmark data fits")
    .cast(DType::I64);
    let short_ints = Value::Tensor(TensorValue::new(short_ints));
    // The 10M values times a million, as integers.
    let millionths = cpu::binary(
        cpu::BinaryOp::Mul,
        &normal_tensor(&[10_000_000], 0),
        &cpu::Tensor::scalar(Scalar::Float(1e6)),
    )
    .expect("the benchmark data fits")
    .cast(DType::I64);
    let millionths = Value::Tensor(TensorValue::new(millionths));
    let (a, b) = (normal(&[1024, 1024], 2), normal(&[1024, 1024], 3));
    let (small_a, small_b) = (normal(&[500, 500], 4), normal(&[500, 500], 5));
    let (big, vector) = (normal(&[4096, 4096], 6), normal(&[4096], 7));
    let cases: [(&str, &str, Vec<Value>); 13] = [
        (
            "chain",
            "relu(x * 2.0 + 1.0) * x - 0.5, 10M f32",
            vec![x.clone()],
        ),
        ("positives", "x[x > 0], 10M f32", vec![x.clone()]),
        (
            "pipeline",
            "nonzero -> index_select -> * 2 -> sum, 10M f32",
            vec![x.clone()],
        ),
        ("softmax", "row softmax, 4096x1024 f32", vec![rows]),
        (
            "softmax",
            "row softmax, 2500000x4 f32",
            vec![short_rows.clone()],
        ),
        (
            "flags",
            "any and all over rows, 2500000x4 f32",
            vec![short_rows],
        ),
        (
            "scaled",
            "where(k > 0, k * row sum, -k), 2500000x4 i64",
            vec![short_ints],
        ),
        ("divide", "[k % 7, k // 1000], 10M i64", vec![millionths]),
        ("total", "x.sum(), 10M f32", vec![x.clone()]),
        ("product", "matmul 1024x1024 f32", vec![a, b]),
        ("product", "matmul 500x500 f32", vec![small_a, small_b]),
        (
            "product",
            "matmul 4096x4096 @ 4096 f32",
            vec![big.clone(), vector.clone()],
        ),
        ("product", "matmul 4096 @ 4096x4096 f32", vec![vector, big]),
    ];
    let mut group = c.benchmark_group("workloads");
    group.sample_size(10);
    for (name, label, arguments) in cases {
        for (suffix, mode) in [("", "compiled"), ("_eager", "eager")] {
            let function = format!("{name}{suffix}");
            interpreter
                .call(&function, arguments.clone())
                .expect("the workload runs");
            group.bench_function(format!("{label}, {mode}"), |bench| {
                bench.iter(|| interpreter.call(&function, arguments.clone()));
            });
        }
    }
    // The chain's fused kernel interpreted instead of compiled to machine code.
    let mut interpreted = Interpreter::new(
        Options {
            native: Native::Never,
            ..Options::default()
        },
        Box::new(support::Silent),
    );
    assert_eq!(
        interpreted.run_cell("setup", PROGRAM.to_string()),
        Status::Ok
    );
    let chain = [x];
    interpreted
        .call("chain", chain.to_vec())
        .expect("the workload runs");
    group.bench_function(
        "relu(x * 2.0 + 1.0) * x - 0.5, 10M f32, compiled, kernel interpreted",
        |bench| bench.iter(|| interpreted.call("chain", chain.to_vec())),
    );
    group.finish();
}

criterion_group!(benches, workloads);
criterion_main!(benches);
