//! The cost of calling a compiled function whose graph is already cached: argument binding,
//! the cache lookup (argument structure, globals, duck sizing, guards) and the executor's
//! dispatch, measured on tensors of four elements so the kernels cost little, next to the
//! kernels alone and to an eager call of the same body (see BENCHMARKS.md). Two more
//! measure costs per operation over a function of [`CHAIN`] operations: a cache hit run
//! unfused (one kernel per operation, so the time over [`CHAIN`] is the dispatch of one
//! operation) and fused, and the first call of a fresh interpreter (tracing the body,
//! building the cache entry with its passes and fusion, and running it once).

mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tsl::backend::cpu::{self, BinaryOp, Tensor};
use tsl::dtype::Scalar;
use tsl::eval::{Interpreter, Options, Status, TensorValue, Value};
use tsl::graph::op::Op;

const PROGRAM: &str = "
@compile
fn affine(x) { return x * 2.0 + 1.0 }

fn affine_eager(x) { return x * 2.0 + 1.0 }

@compile
fn masked(x: f32[n], y: f32[n]) {
    let keep = x > 0.0
    let total = where(keep, x * y, 0.0).sum()
    check all(y >= 0.0), \"y must not be negative\"
    return total / n
}

@compile(dynamic = false)
fn many(x) { return x + 1.0 }
";

/// Operations in `chain(x)`.
const CHAIN: usize = 64;

/// `chain(x)`: [`CHAIN`] elementwise operations, a multiplication and an addition per line.
fn chain_program() -> String {
    use std::fmt::Write as _;
    let mut text = String::from("@compile\nfn chain(x) {\n    let v0 = x\n");
    for line in 1..=CHAIN / 2 {
        let _ = writeln!(text, "    let v{line} = v{} * 1.01 + 0.5", line - 1);
    }
    let _ = writeln!(text, "    return v{}\n}}", CHAIN / 2);
    text
}

fn interpreter_with(options: Options, program: &str) -> Interpreter {
    let mut interpreter = Interpreter::new(options, Box::new(support::Silent));
    assert_eq!(
        interpreter.run_cell("setup", program.to_string()),
        Status::Ok
    );
    interpreter
}

fn interpreter() -> Interpreter {
    interpreter_with(Options::default(), PROGRAM)
}

fn small(values: &[f32]) -> Value {
    let data = values
        .iter()
        .map(|v| Scalar::Float(f64::from(*v)))
        .collect::<Vec<_>>();
    let tensor = cpu::from_elements(&[values.len()], &data, None).expect("a small tensor");
    Value::Tensor(TensorValue::new(tensor))
}

fn calls(c: &mut Criterion) {
    let mut interpreter = interpreter();
    let x = small(&[1.0, -2.0, 3.0, 4.0]);
    let y = small(&[0.5, 1.0, 2.0, 0.0]);
    interpreter
        .call("affine", vec![x.clone()])
        .expect("the first call traces");
    interpreter
        .call("masked", vec![x.clone(), y.clone()])
        .expect("the first call traces");
    // Eight cached graphs, one per size; the benchmark hits the last one tried.
    for size in 1..=8 {
        let ones = small(&vec![1.0; size]);
        interpreter
            .call("many", vec![ones])
            .expect("a trace per size");
    }
    let eight = small(&[1.0; 8]);

    let mut group = c.benchmark_group("compiled");
    group.bench_function("affine(x), cache hit, 4 f32", |b| {
        b.iter(|| interpreter.call("affine", vec![x.clone()]));
    });
    group.bench_function("affine kernels alone (mul, add), 4 f32", |b| {
        let data = match &x {
            Value::Tensor(tensor) => tensor
                .real()
                .and_then(|data| data.to_host().ok())
                .expect("concrete"),
            _ => unreachable!("x is a tensor"),
        };
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        b.iter(|| {
            let two = Tensor::scalar(Scalar::Float(2.0));
            let one = Tensor::scalar(Scalar::Float(1.0));
            let scaled = cpu::run(
                &Op::Binary(BinaryOp::Mul),
                vec![data.clone(), two],
                &mut rng,
            );
            let scaled = scaled.expect("mul").remove(0);
            cpu::run(&Op::Binary(BinaryOp::Add), vec![scaled, one], &mut rng)
        });
    });
    group.bench_function("affine_eager(x), eager call, 4 f32", |b| {
        b.iter(|| interpreter.call("affine_eager", vec![x.clone()]));
    });
    group.bench_function(
        "masked(x, y), cache hit, 7 ops and a device assert, 4 f32",
        |b| {
            b.iter(|| interpreter.call("masked", vec![x.clone(), y.clone()]));
        },
    );
    group.bench_function("many(x), hit on the 8th cached graph, 8 f32", |b| {
        b.iter(|| interpreter.call("many", vec![eight.clone()]));
    });
    group.finish();
}

/// Costs per operation of `chain(x)`: reported per call; divide by [`CHAIN`].
fn per_operation(c: &mut Criterion) {
    let x = small(&[1.0, -2.0, 3.0, 4.0]);
    let program = chain_program();
    let mut group = c.benchmark_group("compiled");
    for (name, unfused) in [("unfused", true), ("fused", false)] {
        let options = Options {
            unfused,
            ..Options::default()
        };
        let mut interpreter = interpreter_with(options, &program);
        interpreter
            .call("chain", vec![x.clone()])
            .expect("the first call traces");
        group.bench_function(
            format!("chain(x), cache hit, {name}, {CHAIN} ops, 4 f32"),
            |b| b.iter(|| interpreter.call("chain", vec![x.clone()])),
        );
    }
    group.bench_function(
        format!("chain(x), first call: trace, compile and run, {CHAIN} ops, 4 f32"),
        |b| {
            b.iter_batched(
                || interpreter_with(Options::default(), &program),
                |mut interpreter| {
                    interpreter
                        .call("chain", vec![x.clone()])
                        .expect("the first call traces");
                    interpreter
                },
                criterion::BatchSize::SmallInput,
            );
        },
    );
    group.finish();
}

criterion_group!(benches, calls, per_operation);
criterion_main!(benches);
