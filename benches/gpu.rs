//! Compiled functions on the GPU: a fused elementwise chain and a sum over 16M f32, a square
//! f32 matmul, mask indexing `x[x > 0.0]` over 16M f32 (compaction and the count read back),
//! and the overhead of a cached call on four elements. Every benchmark is named after the
//! adapter it ran on, since a figure means nothing without its device (see BENCHMARKS.md).
//!
//! Without a usable adapter the benchmark prints why and does nothing. Sizes:
//! `TSL_BENCH_GPU_ELEMENTS` (default 16,777,216) and `TSL_BENCH_GPU_MATMUL` (the matmul side;
//! default 4096 on a hardware adapter, 512 on Mesa's software rasteriser, where 4096² takes
//! minutes per call).
//!
//! Kernels are queued, not waited for, so timings that must include the work end with a read
//! of one element, which waits for everything queued before it (the read's own cost, one
//! small kernel and a 4-byte map, is spread over the calls timed together). The throughput criterion
//! prints for the chain and the sum is the bytes a perfect kernel moves (one read and one
//! write of 4 bytes per element for the chain, one read for the sum); for matmul it counts
//! 2n³ floating-point operations as elements.

mod support;

use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};
use tsl::backend::DeviceKind;
use tsl::eval::{Evaluated, Interpreter, Options, Status, Value};

const PROGRAM: &str = "
@compile
fn chain(x) { return relu(x * 2.0 + 1.0) * x - 0.5 }

@compile
fn total(x) { return x.sum() }

@compile
fn product(a, b) { return a @ b }

@compile
fn positives(x) { return x[x > 0.0] }

@compile
fn affine(x) { return x * 2.0 + 1.0 }

fn first(x) { return x.reshape(-1)[0].item() }
";

fn size_from_env(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(text) => text
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text} is not a size")),
        Err(_) => default,
    }
}

/// A session computing on the GPU with the benchmark functions defined, or why not.
fn gpu_session() -> Result<Interpreter, String> {
    let mut interpreter = Interpreter::new(Options::default(), Box::new(support::Silent));
    interpreter
        .use_device(DeviceKind::Gpu)
        .map_err(|diagnostic| match &diagnostic.help {
            Some(help) => format!("{} ({help})", diagnostic.message),
            None => diagnostic.message.clone(),
        })?;
    assert_eq!(
        interpreter.run_cell("setup", PROGRAM.to_string()),
        Status::Ok
    );
    Ok(interpreter)
}

/// The value of `expression`, computed on the session's device.
fn value(interpreter: &mut Interpreter, expression: &str) -> Value {
    match interpreter.evaluate_expression("input", expression.to_string()) {
        Evaluated::Done(Some(value)) => value,
        _ => panic!("`{expression}` did not evaluate"),
    }
}

fn call(interpreter: &mut Interpreter, function: &str, arguments: &[&Value]) -> Value {
    let arguments = arguments.iter().map(|&value| value.clone()).collect();
    interpreter
        .call(function, arguments)
        .unwrap_or_else(|diagnostic| panic!("{function} failed: {}", diagnostic.message))
}

/// Waits for everything queued so far by reading one element of `result` back.
fn wait_for(interpreter: &mut Interpreter, result: &Value) {
    call(interpreter, "first", &[result]);
}

/// Times `iterations` calls of `function`, then one wait for the last result.
fn timed_calls(
    interpreter: &mut Interpreter,
    function: &str,
    arguments: &[&Value],
    iterations: u64,
) -> Duration {
    let start = Instant::now();
    let mut last = None;
    for _ in 0..iterations {
        last = Some(call(interpreter, function, arguments));
    }
    if let Some(last) = last {
        wait_for(interpreter, &last);
    }
    start.elapsed()
}

fn bench_calls(
    group: &mut BenchmarkGroup<'_, WallTime>,
    interpreter: &mut Interpreter,
    name: &str,
    function: &str,
    arguments: &[&Value],
) {
    // The first call traces, compiles the graph and builds its pipelines.
    let warm = call(interpreter, function, arguments);
    wait_for(interpreter, &warm);
    group.bench_function(name, |b| {
        b.iter_custom(|iterations| timed_calls(interpreter, function, arguments, iterations));
    });
}

fn main() {
    let mut interpreter = match gpu_session() {
        Ok(interpreter) => interpreter,
        Err(why) => {
            println!("skipping the GPU benchmarks: {why}");
            return;
        }
    };
    let device = interpreter.device();
    let software = device.contains("llvmpipe") || device.contains("lavapipe");
    let elements = size_from_env("TSL_BENCH_GPU_ELEMENTS", 1 << 24);
    let side = size_from_env("TSL_BENCH_GPU_MATMUL", if software { 512 } else { 4096 });
    println!("benchmarking on {device}: {elements} elements, matmul {side}x{side}");

    let x = value(&mut interpreter, &format!("randn({elements})"));
    let a = value(&mut interpreter, &format!("randn({side}, {side})"));
    let b = value(&mut interpreter, &format!("randn({side}, {side})"));
    let small = value(&mut interpreter, "tensor([1.0, -2.0, 3.0, 4.0])");

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group(format!("gpu [{device}]"));
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let bytes = elements as u64 * 4;

    group.throughput(Throughput::Bytes(2 * bytes));
    let name = format!("chain relu(x * 2.0 + 1.0) * x - 0.5, {elements} f32");
    bench_calls(&mut group, &mut interpreter, &name, "chain", &[&x]);

    group.throughput(Throughput::Bytes(bytes));
    let name = format!("x.sum(), {elements} f32");
    bench_calls(&mut group, &mut interpreter, &name, "total", &[&x]);

    group.throughput(Throughput::Elements(2 * (side as u64).pow(3)));
    let name = format!("a @ b, {side}x{side} f32 (elements = flops)");
    bench_calls(&mut group, &mut interpreter, &name, "product", &[&a, &b]);

    group.throughput(Throughput::Bytes(bytes));
    let name = format!("x[x > 0.0], {elements} f32");
    bench_calls(&mut group, &mut interpreter, &name, "positives", &[&x]);
    group.finish();

    // Call overheads, without a throughput.
    let mut group = criterion.benchmark_group(format!("gpu calls [{device}]"));
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let name = "affine(x), cache hit, 4 f32, queued";
    bench_calls(&mut group, &mut interpreter, name, "affine", &[&small]);
    let name = "affine(x), cache hit, 4 f32, with the result read back";
    group.bench_function(name, |bencher| {
        bencher.iter(|| {
            let result = call(&mut interpreter, "affine", &[&small]);
            wait_for(&mut interpreter, &result);
        });
    });
    group.finish();
    criterion.final_summary();
}
