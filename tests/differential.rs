//! Fused against unfused: every program with `@compile` also runs compiled without fusion,
//! and the two runs must print exactly the same bytes and report exactly the same errors.
//!
//! Eager against compiled: every suite program and example that uses `@compile` runs both
//! ways and must print the same lines (integers and booleans exactly, floats within 1e-5
//! relative) and stop at the same error. Programs whose compiled run legitimately differs
//! (they ask `is_compiling()`, use `guard_or_*`/`known_true`, or show a trace-only
//! diagnostic) say so with a `# eager-differs: REASON` comment.

mod common;

use common::{differences, exact_differences, on_big_stack, root, run_file, tsl_files};
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
            exact_differences(name, &unfused, &run_file(path, Options::default()))
        },
    );
}
