//! The GPU against the CPU: every `@compile` suite program and every example runs eagerly
//! on the CPU, compiled on the GPU and eagerly on the GPU, and the runs must print the same
//! (integers and booleans exactly, floats within the tolerance of `common::lines_agree`)
//! and stop at the same first error with the same message.
//!
//! Without a GPU these tests print why and pass, unless `TSL_REQUIRE_GPU=1`.

mod common;

use common::{differences, gpu_available, on_big_stack, root, run_file, tsl_files};
use tsl::backend::DeviceKind;
use tsl::eval::Options;

fn programs() -> Vec<std::path::PathBuf> {
    let mut files = tsl_files(&root().join("tests/suite"));
    files.extend(tsl_files(&root().join("examples")));
    files
        .into_iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).expect("suite files are UTF-8");
            text.contains("@compile") && !text.contains("# eager-differs:")
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
