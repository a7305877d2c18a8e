//! The file-driven suite: every `tests/suite/**/*.tsl` and `examples/*.tsl` runs, and its
//! printed lines and diagnostics must match the `# out:` / `# error:` comments it carries.
//! Files under `tests/suite/modules/` are only used by other suite files.

mod common;

use common::{expectations, mismatches, on_big_stack, root, run_file, tsl_files};
use tsl::eval::Options;

fn check_directory(directory: &str) {
    let files: Vec<_> = tsl_files(&root().join(directory))
        .into_iter()
        .filter(|path| !path.components().any(|part| part.as_os_str() == "modules"))
        .collect();
    assert!(!files.is_empty(), "no .tsl files under {directory}");
    let failures = on_big_stack(move || {
        let mut failures = Vec::new();
        for path in &files {
            let text = std::fs::read_to_string(path).expect("suite files are UTF-8");
            let expected = expectations(&text);
            let run = run_file(path, Options::default());
            let name = path.display().to_string();
            let problems = mismatches(&name, &run, &expected);
            if !problems.is_empty() {
                failures.push(format!("{name}:\n  {}", problems.join("\n  ")));
            }
        }
        failures
    });
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n\n"));
}

#[test]
fn suite_files_match_their_expectations() {
    check_directory("tests/suite");
}

#[test]
fn examples_run_and_print_what_they_promise() {
    check_directory("examples");
}
