//! Fused against unfused: every program with `@compile` also runs compiled without fusion,
//! and the two runs must print exactly the same bytes and report exactly the same errors;
//! so must a run that compiles every fused kernel it can to machine code.
//!
//! Eager against compiled: every suite program and example that uses `@compile` runs both
//! ways and must print the same lines (integers and booleans exactly, floats within 1e-5
//! relative, an eager value past `f32`'s range against an infinity of its sign compiled) and
//! stop at the same error. Programs whose compiled run legitimately differs
//! (they ask `is_compiling()`, use `guard_or_*`/`known_true`, or show a trace-only
//! diagnostic) say so with a `# eager-differs: REASON` comment.

mod common;

use common::{
    differences, exact_differences, lines_agree, on_big_stack, root, run_file, tsl_files,
};
use tsl::backend::Native;
use tsl::eval::Options;

/// Runs `compare` on every suite program and example that uses `@compile` (and that `skip`
/// does not exclude) and fails with every problem it reports.
fn compare_compiled_programs(
    skip: fn(&str) -> bool,
    compare: fn(&std::path::Path, &str) -> Vec<String>,
) {
    let failures = on_big_stack(move || {
        let mut files = tsl_files(&root().join("tests/suite"));
        files.extend(tsl_files(&root().join("examples")));
        let mut failures = Vec::new();
        let mut compared = 0;
        for path in files {
            let text = std::fs::read_to_string(&path).expect("suite files are UTF-8");
            if !text.contains("@compile") || skip(&text) {
                continue;
            }
            let name = path.display().to_string();
            let problems = compare(&path, &name);
            if !problems.is_empty() {
                failures.push(format!("{name}:\n  {}", problems.join("\n  ")));
            }
            compared += 1;
        }
        assert!(compared >= 10, "only {compared} programs were compared");
        failures
    });
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n\n"));
}

#[test]
fn compiled_runs_agree_with_eager_runs() {
    compare_compiled_programs(
        |text| text.contains("# eager-differs:"),
        |path, name| {
            let eager = run_file(
                path,
                Options {
                    eager: true,
                    ..Options::default()
                },
            );
            differences(name, &eager, &run_file(path, Options::default()))
        },
    );
}

#[test]
fn fused_runs_are_bitwise_equal_to_unfused_runs() {
    compare_compiled_programs(
        |_| false,
        |path, name| {
            let unfused = run_file(
                path,
                Options {
                    unfused: true,
                    ..Options::default()
                },
            );
            let fused = run_file(path, Options::default());
            let mut problems = exact_differences(name, &unfused, &fused);
            // Every fused kernel that can be, compiled to machine code whatever its size.
            let native = Options {
                native: Native::Always,
                ..Options::default()
            };
            problems.extend(exact_differences(name, &unfused, &run_file(path, native)));
            problems
        },
    );
}

/// Fused kernels give the same bits whatever the number of threads: tasks, segments and the
/// blocks totals fold in do not depend on it, and a collected output's runs are computed
/// from the same segments however rayon splits them.
#[test]
fn fused_results_do_not_depend_on_the_thread_count() {
    use rand::SeedableRng;
    use std::{cell::RefCell, rc::Rc};
    use tsl::backend::cpu::{self, Tensor};
    use tsl::eval::{Interpreter, Status, TensorValue, Value};

    const PROGRAM: &str = "
@compile
fn chain(x) { return relu(x * 2.0 + 1.0) * x - 0.5 }
@compile
fn softmax(x) {
    let e = (x - x.max(1, keepdim = true)).exp()
    return e / e.sum(1, keepdim = true)
}
@compile
fn kept(x) { return [(2.0 * x[x > 0.0]).sum(), x[x > 0.5] * 3.0, x.sum(), x.mean()] }
";
    let tensor = |shape: &[usize], seed: u64| {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        cpu::randn(shape, &mut rng).expect("random data")
    };
    let (x, rows) = (tensor(&[300_007], 1), tensor(&[257, 1031], 2));
    let run = |threads: usize| -> Vec<Tensor> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        pool.install(|| {
            let failures = Rc::new(RefCell::new(Vec::new()));
            let mut interpreter = Interpreter::new(
                Options::default(),
                Box::new(common::Collect(failures.clone())),
            );
            assert_eq!(interpreter.run_cell("setup", PROGRAM.into()), Status::Ok);
            let calls = [("chain", &x), ("softmax", &rows), ("kept", &x)];
            let mut results = Vec::new();
            for (name, argument) in calls {
                let argument = Value::Tensor(TensorValue::new(argument.clone()));
                let value = interpreter.call(name, vec![argument]);
                let value = value.unwrap_or_else(|_| panic!("{name} failed: {failures:?}"));
                let values = match value {
                    Value::List(items) => items.to_vec(),
                    other => vec![other],
                };
                for value in values {
                    let Value::Tensor(tensor) = value else {
                        panic!("{name} returns tensors");
                    };
                    let real = tensor.real().expect("a concrete tensor");
                    results.push(real.to_host().expect("on the host"));
                }
            }
            results
        })
    };
    let (one, three) = (run(1), run(3));
    assert_eq!(one.len(), 6);
    for (index, (a, b)) in one.iter().zip(&three).enumerate() {
        assert!(a == b, "result {index} differs between 1 and 3 threads");
    }
}

/// The comparison of eager and compiled output forgives one documented difference and no
/// wider one: host arithmetic on a float read from data is `f64` eagerly and `f32` in a graph,
/// so a result past `f32`'s range prints as a number eagerly and as an infinity compiled.
#[test]
fn printed_floats_agree_across_the_f32_range_difference_only() {
    assert!(lines_agree("1.0000000150474663e60", "inf"));
    assert!(lines_agree("[-1e39, 2.0]", "[-inf, 2.0]"));
    assert!(lines_agree("inf", "inf") && lines_agree("[-inf]", "[-inf]"));
    // The other sign, a value within `f32`'s range, or two different infinities: not forgiven.
    assert!(!lines_agree("1e60", "-inf"));
    assert!(!lines_agree("3.0e38", "inf"));
    assert!(!lines_agree("1.0", "inf"));
    assert!(!lines_agree("inf", "-inf"));
    assert!(!lines_agree("inf", "nan"));
    // `inf` is a number only as a word of its own.
    assert!(!lines_agree("info", "inf"));
    assert!(lines_agree("info: 1.0", "info: 1.0000001"));
    assert!(!lines_agree("infinite", "inf"));
}
