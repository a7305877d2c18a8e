//! Conformance on every device.
//!
//! - Kernel families, candle-style: one test body per family (`tests/suite/kernels/*.tsl`,
//!   whose `# out:` lines are the known answers), instantiated for the CPU and the GPU, each
//!   run eagerly and compiled.
//! - The GPU against the CPU: every suite program and every example (`@compile` or not)
//!   runs eagerly on the CPU, compiled on the GPU and eagerly on the GPU, and the runs must print the same
//!   (integers and booleans exactly, floats within the tolerance of `common::lines_agree`)
//!   and stop at the same first error with the same message.
//! - Failure order: programs with two failing checks, a failing check before a print, a
//!   failing gather or division before a failing check, run eagerly and compiled on both
//!   devices, print the same bytes and report the same first diagnostic, rendered.
//! - Data-dependent sizes that change between calls of one cached graph, on the GPU.
//!
//! Without a GPU the GPU halves print why and pass, unless `TSL_REQUIRE_GPU=1`.

mod common;

use common::{
    Run, differences, expectations, gpu_available, lines_agree, mismatches, on_big_stack, root,
    run_file, run_source, tsl_files,
};
use tsl::backend::DeviceKind;
use tsl::eval::{LogChannels, Options};

/// Every suite program (those without `@compile` run eagerly both ways) and every example,
/// except programs whose compiled run legitimately differs from the eager one.
fn programs() -> Vec<std::path::PathBuf> {
    let mut files = tsl_files(&root().join("tests/suite"));
    files.extend(tsl_files(&root().join("examples")));
    files
        .into_iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).expect("suite files are UTF-8");
            !text.contains("# eager-differs:")
        })
        .collect()
}

#[test]
fn compiled_and_eager_gpu_runs_agree_with_eager_cpu_runs() {
    if !gpu_available() {
        return;
    }
    let failures = on_big_stack(|| {
        let mut failures = Vec::new();
        for path in programs() {
            let name = path.display().to_string();
            let cpu = run_file(
                &path,
                Options {
                    eager: true,
                    ..Options::default()
                },
            );
            for eager in [false, true] {
                let gpu = run_file(
                    &path,
                    Options {
                        eager,
                        device: DeviceKind::Gpu,
                        ..Options::default()
                    },
                );
                let problems = differences(&name, &cpu, &gpu);
                if !problems.is_empty() {
                    let how = if eager { "eager" } else { "compiled" };
                    failures.push(format!(
                        "{name} ({how} on the GPU):\n  {}",
                        problems.join("\n  ")
                    ));
                }
            }
        }
        failures
    });
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n\n"));
}

/// The four ways a program runs: eagerly and compiled, on the CPU and on the GPU (the GPU
/// ones only when a GPU is available).
fn ways() -> Vec<(&'static str, Options)> {
    let mut ways = Vec::new();
    let devices: &[DeviceKind] = if gpu_available() {
        &[DeviceKind::Cpu, DeviceKind::Gpu]
    } else {
        &[DeviceKind::Cpu]
    };
    for &device in devices {
        for eager in [true, false] {
            let name = match (device, eager) {
                (DeviceKind::Cpu, true) => "eager on the CPU",
                (DeviceKind::Cpu, false) => "compiled on the CPU",
                (_, true) => "eager on the GPU",
                (_, false) => "compiled on the GPU",
            };
            ways.push((
                name,
                Options {
                    eager,
                    device,
                    ..Options::default()
                },
            ));
        }
    }
    ways
}

/// How `run` differs from the `# out:` and `# error:` lines of `text`: the printed lines
/// must agree (floats within the tolerance of `lines_agree`, which the GPU's reductions and
/// transcendental functions need) and the diagnostics must be exactly the expected ones.
fn against_expectations(file: &str, text: &str, run: &Run) -> Vec<String> {
    let expected = expectations(text);
    let actual: Vec<&str> = run.stdout.lines().collect();
    let mut problems = Vec::new();
    let agree = actual.len() == expected.stdout.len()
        && actual
            .iter()
            .zip(&expected.stdout)
            .all(|(a, e)| lines_agree(a, e));
    if !agree {
        problems.push(format!(
            "stdout differs\n  expected: {:?}\n  actual:   {actual:?}",
            expected.stdout
        ));
    }
    // The stdout was compared above; `mismatches` checks the diagnostics.
    let diagnostics_only = Run {
        stdout: expected
            .stdout
            .iter()
            .fold(String::new(), |text, line| text + line + "\n"),
        diagnostics: run.diagnostics.clone(),
        ..Run::default()
    };
    problems.extend(mismatches(file, &diagnostics_only, &expected));
    problems
}

/// The test body of a kernel family: its program, eagerly and compiled on `device`, gives
/// the known answers.
fn kernel_family(family: &str, device: DeviceKind) {
    if device == DeviceKind::Gpu && !gpu_available() {
        return;
    }
    let path = root().join(format!("tests/suite/kernels/{family}.tsl"));
    let text = std::fs::read_to_string(&path).expect("the family's program exists");
    let file = format!("{family}.tsl");
    let failures = on_big_stack(move || {
        let mut failures = Vec::new();
        for eager in [true, false] {
            let options = Options {
                eager,
                device,
                ..Options::default()
            };
            let problems = against_expectations(&file, &text, &run_file(&path, options));
            if !problems.is_empty() {
                let how = if eager { "eager" } else { "compiled" };
                failures.push(format!("{how}:\n  {}", problems.join("\n  ")));
            }
        }
        failures
    });
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n\n"));
}

/// Instantiates each kernel family's test body once per device.
macro_rules! on_every_device {
    ($($family:ident),* $(,)?) => {
        const FAMILIES: &[&str] = &[$(stringify!($family)),*];
        mod cpu {
            $(#[test]
            fn $family() {
                super::kernel_family(stringify!($family), tsl::backend::DeviceKind::Cpu);
            })*
        }
        mod gpu {
            $(#[test]
            fn $family() {
                super::kernel_family(stringify!($family), tsl::backend::DeviceKind::Gpu);
            })*
        }
    };
}

on_every_device!(
    elementwise,
    reduce,
    scan,
    views,
    gather,
    compact,
    matmul,
    sort,
    divide_by_one
);

#[test]
fn every_kernel_family_program_runs_on_every_device() {
    let mut files: Vec<String> = tsl_files(&root().join("tests/suite/kernels"))
        .iter()
        .filter_map(|path| Some(path.file_stem()?.to_str()?.to_string()))
        .collect();
    files.sort();
    let mut families: Vec<String> = FAMILIES.iter().map(ToString::to_string).collect();
    families.sort();
    assert_eq!(
        files, families,
        "add new family programs to `on_every_device!`"
    );
}

/// Programs whose runs fail, each with the output and the one diagnostic every way of
/// running it must give.
const FAILING: &[(&str, &str)] = &[
    (
        "two_failing_checks.tsl",
        r#"@compile
fn f(x: f32[n]) {
    print("before", x.size(0))
    check all(x > 0.0), "x must be positive"   # error: device-check-failed "x must be positive"
    check all(x < 10.0), "x must be small"
    print("after", x.sum())
    return x.sum()
}
print(f(tensor([1.0, 2.0])))   # out: before 2
# out: after tensor(3.0)
# out: tensor(3.0)
print(f(tensor([20.0, -1.0, 3.0])))   # out: before 3
print("never")
"#,
    ),
    (
        "device_check_before_a_host_check.tsl",
        r#"@compile
fn g(x: f32[n]) {
    check all(x >= 0.0), "no negatives"   # error: device-check-failed "no negatives"
    let kept = x[x > 1.0]
    check kept.size(0) >= 2, "need two, got {kept.size(0)}"
    print("kept", kept)
    return kept
}
print(g(tensor([5.0, 2.0, 0.5])))   # out: kept tensor([5.0, 2.0])
# out: tensor([5.0, 2.0])
print(g(tensor([5.0, -1.0, 0.5])))
print("never")
"#,
    ),
    (
        "host_check_before_a_print.tsl",
        r#"@compile
fn g(x: f32[n]) {
    let kept = x[x > 1.0]
    check kept.size(0) >= 2, "need two, got {kept.size(0)}"   # error: check-failed "need two, got 1"
    check all(x >= 0.0), "no negatives"
    print("kept", kept)
    return kept
}
print(g(tensor([5.0, -1.0, 0.5])))
print("never")
"#,
    ),
    (
        "failing_gather_before_a_failing_check.tsl",
        r#"@compile
fn h(x: f32[n], at: i64[k]) {
    let picked = x.index_select(0, at)   # error: shape-error "index 5 is out of range"
    check all(picked > 0.0), "picked must be positive"
    print("picked", picked)
    return picked
}
print(h(tensor([1.0, -2.0, 3.0]), tensor([2, 0])))   # out: picked tensor([3.0, 1.0])
# out: tensor([3.0, 1.0])
print(h(tensor([1.0, -2.0, 3.0]), tensor([1, 5])))
print("never")
"#,
    ),
    (
        "failing_check_before_a_failing_division.tsl",
        r#"@compile
fn d(a: i64[n], b: i64[n]) {
    check all(a > 0), "a must be positive"   # error: device-check-failed "a must be positive"
    let q = a // b
    print("quotient", q)
    return q
}
print(d(tensor([4, 2]), tensor([2, 1])))   # out: quotient tensor([2, 2], dtype=i64)
# out: tensor([2, 2], dtype=i64)
print(d(tensor([1, -2]), tensor([1, 0])))
print("never")
"#,
    ),
    (
        "failing_division_before_a_failing_check.tsl",
        r#"@compile
fn e(a: i64[n], b: i64[n]) {
    let q = a // b   # error: value-error "integer division by zero"
    check all(q < 100), "quotient too large"
    print("quotient", q)
    return q
}
print(e(tensor([1, 500]), tensor([0, 1])))
print("never")
"#,
    ),
];

#[test]
fn failing_programs_report_the_same_first_diagnostic_on_every_device() {
    let failures = on_big_stack(|| {
        let mut failures = Vec::new();
        for (file, text) in FAILING {
            let mut first: Option<(&str, String, Vec<String>)> = None;
            for (how, options) in ways() {
                let run = run_source(file, text, options);
                let problems = against_expectations(file, text, &run);
                if !problems.is_empty() {
                    failures.push(format!("{file} ({how}):\n  {}", problems.join("\n  ")));
                }
                let rendered = run.diagnostics.iter().map(|d| d.rendered.clone()).collect();
                match &first {
                    None => first = Some((how, run.stdout, rendered)),
                    Some((first_how, stdout, diagnostics)) => {
                        if *stdout != run.stdout || *diagnostics != rendered {
                            failures.push(format!(
                                "{file}: {how} differs from {first_how}:\n{}{}\nagainst\n{}{}",
                                run.stdout,
                                rendered.join("\n"),
                                stdout,
                                diagnostics.join("\n")
                            ));
                        }
                    }
                }
            }
        }
        failures
    });
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n\n"));
}

#[test]
fn one_cached_graph_serves_changing_data_dependent_sizes_on_the_gpu() {
    if !gpu_available() {
        return;
    }
    let path = root().join("tests/suite/compiled/cached_data_sizes.tsl");
    let text = std::fs::read_to_string(&path).expect("the suite program exists");
    let failures = on_big_stack(move || {
        let options = Options {
            device: DeviceKind::Gpu,
            log: LogChannels {
                recompiles: true,
                ..LogChannels::default()
            },
            ..Options::default()
        };
        let run = run_file(&path, options);
        let mut problems = against_expectations("cached_data_sizes.tsl", &text, &run);
        if !run.log.is_empty() {
            problems.push(format!("calls traced again: {:?}", run.log));
        }
        problems
    });
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n"));
}

/// A host tensor of `values` as a session value.
#[cfg(feature = "gpu")]
fn host_value(values: &[f64]) -> tsl::eval::Value {
    use tsl::dtype::Scalar;
    let elements: Vec<Scalar> = values.iter().map(|v| Scalar::Float(*v)).collect();
    let tensor =
        tsl::backend::cpu::from_elements(&[values.len()], &elements, None).expect("a small tensor");
    tsl::eval::Value::Tensor(tsl::eval::TensorValue::new(tensor))
}

#[cfg(feature = "gpu")]
#[test]
fn weights_cross_once_and_one_pipeline_serves_every_size() {
    use std::cell::RefCell;
    use std::rc::Rc;
    use tsl::eval::{Interpreter, Status, Value};
    if !gpu_available() {
        return;
    }
    on_big_stack(|| {
        let reported = Rc::new(RefCell::new(Vec::new()));
        let mut interpreter = Interpreter::new(
            Options::default(),
            Box::new(common::Collect(reported.clone())),
        );
        interpreter
            .use_device(DeviceKind::Gpu)
            .expect("the GPU opens");
        let program = "@compile\nfn f(w, x) { return (w * x + 1.0).sum() }\n";
        assert_eq!(interpreter.run_cell("setup", program.into()), Status::Ok);
        let mut call = |w: &Value, x: &[f64]| {
            let result = interpreter
                .call("f", vec![w.clone(), host_value(x)])
                .expect("the call runs");
            let Value::Tensor(tensor) = result else {
                panic!("f returns a tensor")
            };
            let total = tensor
                .host()
                .expect("a concrete result")
                .expect("it downloads");
            let stats = interpreter.gpu_stats().expect("the GPU is open");
            (total.to_scalar().expect("a 0-d result").as_f64(), stats)
        };
        let w4 = host_value(&[1.0, 2.0, 3.0, 4.0]);
        let (total, first) = call(&w4, &[1.0, 1.0, 1.0, 1.0]);
        assert_eq!(total, 14.0);
        let (total, second) = call(&w4, &[2.0, 0.0, 0.0, 0.0]);
        assert_eq!(total, 6.0);
        assert_eq!(
            second.uploads - first.uploads,
            1,
            "only the new x is uploaded; w's copy on the GPU is kept"
        );
        assert_eq!(second.pipelines, first.pipelines);
        // Other sizes: the graph becomes dynamic, and then every size runs the same kernels.
        let w8 = host_value(&[1.0; 8]);
        let (total, _) = call(&w8, &[1.0; 8]);
        assert_eq!(total, 16.0);
        let (_, dynamic) = call(&host_value(&[1.0; 6]), &[2.0; 6]);
        let (total, later) = call(&host_value(&[0.5; 1000]), &[2.0; 1000]);
        assert_eq!(total, 2000.0);
        assert_eq!(
            later.pipelines, dynamic.pipelines,
            "a new size compiled new kernels"
        );
        assert!(reported.borrow().is_empty(), "{:?}", reported.borrow());
    });
}

/// A product whose inner size needs more loop iterations in one shader invocation than
/// Mesa's llvmpipe runs (it ends loops after 65,535, leaving the sums short) is refused there
/// with a device limit; any other device computes it.
#[test]
fn products_longer_than_a_software_drivers_loops_are_refused_not_cut_short() {
    if !gpu_available() {
        return;
    }
    let program = "let x = ones(100000)\nprint(x @ x)\nprint(x.long() @ x.long())\n";
    let failures = on_big_stack(move || {
        let run = run_on_the_gpu("long_product.tsl", program);
        let refused = run.diagnostics.iter().any(|d| {
            d.message
                .contains("Mesa's software driver ends longer loops early")
        });
        match run.stdout.as_str() {
            "tensor(100000.0)\ntensor(100000, dtype=i64)\n" => Vec::new(),
            "" if refused => Vec::new(),
            other => vec![format!(
                "printed {other:?} with {:?}",
                run.diagnostics
                    .iter()
                    .map(|d| &d.message)
                    .collect::<Vec<_>>()
            )],
        }
    });
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n"));
}

/// Opening the GPU afresh for each interpreter, many times in one process, keeps working, and
/// each interpreter's GPU closes when it is dropped (`run_source` checks that). NVIDIA's
/// driver refused the 30th Vulkan instance of a process even with the earlier ones dropped.
#[test]
fn one_process_opens_the_gpu_again_and_again() {
    if !gpu_available() {
        return;
    }
    let program = "@compile\nfn f(x) { return (x * 2.0).sum() }\nprint(f(ones(1000)))\n";
    for open in 0..40 {
        let run = run_on_the_gpu("again.tsl", program);
        assert!(!run.failed, "open {open}: {:?}", run.diagnostics);
        assert_eq!(run.stdout, "tensor(2000.0)\n", "open {open}");
    }
}

/// Runs `program` on the GPU, compiled where it says `@compile`.
fn run_on_the_gpu(name: &str, program: &str) -> Run {
    run_source(
        name,
        program,
        Options {
            device: DeviceKind::Gpu,
            ..Options::default()
        },
    )
}
