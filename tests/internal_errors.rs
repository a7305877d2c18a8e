//! No panic is ever silent: a panic anywhere (a statement, a trace, a kernel on a rayon
//! worker, a REPL command) ends as an `internal-error` diagnostic that says where TSL
//! panicked and asks for a report, in `run`, `check`, `graph` and the REPL, which keeps
//! going. Panics are injected on purpose with `TSL_INJECT_PANIC`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const SCRIPT: &str = "@compile
fn f(x: f32[n]) -> f32[n] {
    return x * 2.0
}
print(f(ones(3)))
";

/// The script, written once per test (tests run side by side).
fn script(test: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("tsl-internal-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("creating a temporary directory");
    let path = directory.join(format!("{test}.tsl"));
    std::fs::write(&path, SCRIPT).expect("writing a script");
    path
}

fn tsl(point: &str, args: &[&str], input: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tsl"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("TSL_HISTORY", "")
        .env("TSL_INJECT_PANIC", point)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running tsl");
    let mut stdin = child.stdin.take().expect("a pipe");
    stdin
        .write_all(input.unwrap_or_default().as_bytes())
        .expect("writing the input");
    drop(stdin);
    child.wait_with_output().expect("waiting for tsl")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The run failed with exactly one internal error for the injected panic, and nothing of
/// Rust's own panic message.
fn assert_internal_error(output: &Output, point: &str) {
    let stderr = stderr(output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.matches("error[internal-error]").count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("injected panic at {point}")),
        "{stderr}"
    );
    assert!(stderr.contains("TSL panicked at src/"), "{stderr}");
    assert!(stderr.contains("please report it"), "{stderr}");
    assert!(
        !stderr.contains("thread '"),
        "Rust's panic message leaked:\n{stderr}"
    );
}

#[test]
fn a_panic_while_running_is_an_internal_error_at_the_code_being_run() {
    let path = script("running");
    let path = path.to_str().expect("a UTF-8 path");
    for point in ["statement", "trace", "kernel"] {
        let output = tsl(point, &["run", path], None);
        assert_internal_error(&output, point);
        assert!(
            stderr(&output).contains("running.tsl:5:"),
            "{point}: the diagnostic points at the line that was running\n{}",
            stderr(&output)
        );
    }
}

#[test]
fn a_panic_in_check_and_graph_is_an_internal_error() {
    let path = script("static");
    let path = path.to_str().expect("a UTF-8 path");
    assert_internal_error(&tsl("trace", &["check", path], None), "trace");
    assert_internal_error(&tsl("trace", &["graph", path, "--fn", "f"], None), "trace");
}

#[test]
fn an_internal_error_is_json_in_json_mode() {
    let path = script("json");
    let output = tsl(
        "kernel",
        &[
            "--error-format",
            "json",
            path.to_str().expect("a UTF-8 path"),
        ],
        None,
    );
    let line = stderr(&output);
    let json: serde_json::Value = serde_json::from_str(line.trim()).expect("one JSON line");
    assert_eq!(json["code"], "internal-error");
    assert_eq!(json["line"], 5);
}

#[test]
fn the_repl_reports_a_panic_and_keeps_going() {
    let input = "let x = 20\n:type x\nx + 1\n";
    let output = tsl("command", &["repl"], Some(input));
    assert_internal_error(&output, "command");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "21\n");

    // The cell's statement panics; the next cell (a bare expression) still runs.
    let output = tsl("statement", &["repl"], Some("let x = 20\nprint(2)\n"));
    assert_internal_error(&output, "statement");
    assert!(
        stderr(&output).contains("<repl:1>:1:1"),
        "{}",
        stderr(&output)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "2\n");
}
