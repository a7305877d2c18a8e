//! Eager execution through the interpreter: the elementwise chain
//! `relu(x * 2.0 + 1.0) * x - 0.5` on 10,000,000 f32 (compare with NumPy, see BENCHMARKS.md).

mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use tsl::eval::{Interpreter, Options, Status};

fn elementwise_chain(c: &mut Criterion) {
    let mut interpreter = Interpreter::new(Options::default(), Box::new(support::Silent));
    let setup = "seed(0)\nlet x = randn(10000000)\nlet y = x".to_string();
    assert_eq!(interpreter.run_cell("setup", setup), Status::Ok);
    let mut group = c.benchmark_group("eager");
    group.sample_size(20);
    group.bench_function("relu(x * 2.0 + 1.0) * x - 0.5, 10M f32", |b| {
        b.iter(|| {
            let cell = "y = relu(x * 2.0 + 1.0) * x - 0.5".to_string();
            interpreter.run_cell("chain", cell)
        });
    });
    group.bench_function("x.sum(), 10M f32", |b| {
        b.iter(|| interpreter.run_cell("sum", "y = x.sum()".to_string()));
    });
    group.finish();
}

criterion_group!(benches, elementwise_chain);
criterion_main!(benches);
