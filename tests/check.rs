//! `tsl check` over the suite and the examples: no false errors (every error it reports is
//! one the file expects at that line), every expected error that needs no input values is
//! reported (syntax errors, data-dependent errors in compiled functions, and anything marked
//! `# check:` or `# check-note:`), and each problem is reported once, in line order.

mod common;

use common::{check_file, expectations, on_big_stack, root, tsl_files};
use tsl::diag::Severity;

const ALWAYS_STATIC: [&str; 3] = ["syntax-error", "data-dependent-guard", "data-dependent-int"];

#[test]
fn tsl_check_reports_exactly_the_static_errors() {
    let mut files: Vec<_> = tsl_files(&root().join("tests/suite"))
        .into_iter()
        .filter(|path| !path.components().any(|part| part.as_os_str() == "modules"))
        .collect();
    files.extend(tsl_files(&root().join("examples")));
    let failures = on_big_stack(move || {
        let mut failures = Vec::new();
        for path in &files {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(path).expect("suite files are UTF-8");
            let expected = expectations(&text);
            let run = check_file(path);
            for reported in run
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
            {
                let line = reported.line_in(&name);
                let wanted = expected
                    .diagnostics
                    .iter()
                    .any(|want| want.code == reported.code && Some(want.line) == line);
                if !wanted {
                    failures.push(format!("{name}: false error\n{}", reported.rendered));
                }
            }
            failures.extend(repeated_or_unordered(&name, &run));
            let must_report = expected
                .diagnostics
                .iter()
                .filter(|want| want.static_only || ALWAYS_STATIC.contains(&want.code.as_str()));
            for want in must_report {
                let found = run.diagnostics.iter().any(|reported| {
                    reported.code == want.code
                        && reported.line_in(&name) == Some(want.line)
                        && want.help.as_ref().is_none_or(|help| {
                            reported
                                .help
                                .as_ref()
                                .is_some_and(|got| got.contains(help.as_str()))
                        })
                });
                if !found {
                    failures.push(format!(
                        "{name}: tsl check missed {} at line {}",
                        want.code, want.line
                    ));
                }
            }
        }
        failures
    });
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n\n"));
}

/// The builtin table's signatures say what running a builtin accepts: `tsl check` reports a
/// call with no arguments, or with one positional argument too many, exactly when running it
/// fails (with the same code) and never when running fails for another reason.
#[test]
fn builtin_signatures_agree_with_running_them() {
    let failures = on_big_stack(|| {
        let mut failures = Vec::new();
        for def in tsl::eval::builtin_defs() {
            let params: Vec<_> = def.params().collect();
            let mut calls = Vec::new();
            let positional = params.iter().take_while(|param| !param.variadic).count();
            let too_many = vec!["1"; positional + 1].join(", ");
            if def.is_function() {
                calls.push(format!("{}()", def.name()));
                if positional == params.len() {
                    calls.push(format!("{}({too_many})", def.name()));
                }
            }
            if def.is_method() {
                calls.push(format!("zeros(2).{}()", def.name()));
                if positional == params.len() && positional > 0 {
                    let too_many = vec!["1"; positional].join(", ");
                    calls.push(format!("zeros(2).{}({too_many})", def.name()));
                }
            }
            for call in calls {
                let text = format!("let result = {call}\n");
                let ran = common::run_source("call.tsl", &text, tsl::eval::Options::default());
                let checked = common::check_source("call.tsl", &text);
                let is_arity = |message: &str| {
                    message.contains("is missing the argument") || message.contains("takes at most")
                };
                let statically: Vec<String> = checked
                    .diagnostics
                    .iter()
                    .filter(|d| is_arity(&d.message))
                    .map(|d| d.code.clone())
                    .collect();
                let first_error = ran
                    .diagnostics
                    .iter()
                    .find(|d| d.severity == Severity::Error);
                let agree = match (statically.as_slice(), first_error) {
                    ([code], Some(error)) => *code == error.code,
                    ([], error) => error.is_none_or(|error| !is_arity(&error.message)),
                    _ => false,
                };
                if !agree {
                    failures.push(format!(
                        "{call}: running reports {:?}, tsl check {statically:?}",
                        first_error.map(|error| &error.message)
                    ));
                }
            }
        }
        failures
    });
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n"));
}

/// Diagnostics reported twice, or out of line order.
fn repeated_or_unordered(name: &str, run: &common::Run) -> Vec<String> {
    let mut problems = Vec::new();
    let keys: Vec<(Option<usize>, &str, &str)> = run
        .diagnostics
        .iter()
        .map(|d| (d.line_in(name), d.code.as_str(), d.message.as_str()))
        .collect();
    for (index, key) in keys.iter().enumerate() {
        if keys[..index].contains(key) {
            problems.push(format!("{name}: reported twice: {key:?}"));
        }
    }
    let lines: Vec<usize> = keys.iter().filter_map(|key| key.0).collect();
    if lines.windows(2).any(|pair| pair[0] > pair[1]) {
        problems.push(format!("{name}: not in line order: {lines:?}"));
    }
    problems
}
