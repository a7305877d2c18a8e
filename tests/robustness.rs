//! Nothing a user types may panic or crash: every prefix of every suite file and example, and
//! hostile inputs run through the real binary, end in diagnostics with exit status 1.

mod common;

use std::path::Path;
use std::process::Command;

use common::{on_big_stack, root, run_source_in, tsl_files};
use tsl::eval::Options;
use tsl::source::FileId;

fn sources() -> Vec<(String, String)> {
    let mut files = tsl_files(&root().join("tests/suite"));
    files.extend(tsl_files(&root().join("examples")));
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("suite files are UTF-8");
            (path.display().to_string(), text)
        })
        .collect()
}

#[test]
fn every_byte_prefix_parses_without_panicking() {
    for (_, text) in sources() {
        for end in (0..=text.len()).filter(|end| text.is_char_boundary(*end)) {
            let _ = tsl::syntax::parse(FileId(0), &text[..end]);
        }
    }
}

#[test]
fn every_line_prefix_runs_without_panicking() {
    on_big_stack(|| {
        // Prefixes that save files write them here, not into the working directory.
        let directory = std::env::temp_dir().join(format!("tsl-prefixes-{}", std::process::id()));
        std::fs::create_dir_all(&directory).expect("creating a temporary directory");
        for (name, text) in sources() {
            let file = std::path::Path::new(&name)
                .file_name()
                .map_or_else(|| name.clone(), |file| file.to_string_lossy().into_owned());
            let lines: Vec<&str> = text.lines().collect();
            for count in 0..=lines.len() {
                let prefix = lines[..count].join("\n");
                let run = run_source_in(&directory, &file, &prefix, Options::default());
                for diagnostic in &run.diagnostics {
                    assert!(!diagnostic.rendered.is_empty(), "{name}: empty diagnostic");
                }
            }
        }
    });
}

/// Runs the `tsl` binary on a file holding `bytes`; returns the exit code and stderr.
fn run_binary(name: &str, bytes: &[u8]) -> (i32, String) {
    let directory = std::env::temp_dir().join(format!("tsl-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("creating a temporary directory");
    let path = directory.join(name);
    std::fs::write(&path, bytes).expect("writing the hostile input");
    let output = Command::new(env!("CARGO_BIN_EXE_tsl"))
        .arg(&path)
        .env("NO_COLOR", "1")
        .output()
        .expect("running tsl");
    let _ = std::fs::remove_file(&path);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code().unwrap_or(-1), stderr)
}

fn assert_diagnosed(name: &str, bytes: &[u8], code: &str) {
    let (status, stderr) = run_binary(name, bytes);
    assert_eq!(
        status,
        1,
        "{name}: exit status {status}\n{}",
        &stderr[..stderr.len().min(2000)]
    );
    assert!(
        stderr.contains(&format!("error[{code}]")),
        "{name}: expected error[{code}], got:\n{}",
        &stderr[..stderr.len().min(2000)]
    );
    assert!(
        stderr.len() < 100_000,
        "{name}: {} bytes of diagnostics",
        stderr.len()
    );
}

#[test]
fn hostile_inputs_end_in_diagnostics() {
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "nested.tsl",
            format!("let x = {}1{}", "(".repeat(100_000), ")".repeat(100_000)).into_bytes(),
            "syntax-error",
        ),
        (
            // A syntax error deep inside: once quadratic in the parser's error recovery.
            "nested_error.tsl",
            format!("let x = {}1 +{}", "(".repeat(100_000), ")".repeat(100_000)).into_bytes(),
            "syntax-error",
        ),
        (
            // Mismatched closers: once a walk down the lexer's bracket stack per closer.
            "mismatched.tsl",
            format!("let x = {}{}", "(".repeat(100_000), "]".repeat(100_000)).into_bytes(),
            "syntax-error",
        ),
        (
            "unclosed.tsl",
            "[".repeat(100_000).into_bytes(),
            "syntax-error",
        ),
        (
            "long_line.tsl",
            format!("print(1 {})", "1 ".repeat(5_000_000)).into_bytes(),
            "syntax-error",
        ),
        (
            "long_name.tsl",
            format!("print({})", "x".repeat(10_000_000)).into_bytes(),
            "name-error",
        ),
        (
            "sum.tsl",
            format!("let x = 1{}", " + 1".repeat(2_000_000)).into_bytes(),
            "syntax-error",
        ),
        ("utf8.tsl", b"print(1)\n\xff\xfe\n".to_vec(), "input-error"),
        (
            "nul.tsl",
            b"print(1)\nlet x = \0\0\n".to_vec(),
            "syntax-error",
        ),
        (
            "string.tsl",
            b"print(\"never closed)\n".to_vec(),
            "syntax-error",
        ),
        (
            "recursion.tsl",
            b"fn f(n) { return f(n + 1) }\nf(0)\n".to_vec(),
            "recursion-limit",
        ),
        (
            "mutual.tsl",
            b"fn a(n) { return b(n) }\nfn b(n) { return a([n]) }\na(0)\n".to_vec(),
            "recursion-limit",
        ),
        (
            "huge.tsl",
            b"let z = zeros(1000000, 1000000, 1000000)\n".to_vec(),
            "value-error",
        ),
    ];
    // Each case is a separate process: run them side by side.
    std::thread::scope(|scope| {
        for (name, bytes, code) in &cases {
            scope.spawn(move || assert_diagnosed(name, bytes, code));
        }
    });
    let binary: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let (status, _) = run_binary("binary.tsl", &binary);
    assert_eq!(status, 1);
}

#[test]
fn a_missing_script_is_an_input_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_tsl"))
        .arg(Path::new("no/such/script.tsl"))
        .output()
        .expect("running tsl");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("error[input-error]"));
}

/// Each turn of a traced loop and each call counts; past the limit (lowered here from 2^24,
/// which takes seconds to reach) the trace stops at the loop or call where it was.
#[test]
fn a_trace_that_runs_too_many_turns_ends_in_a_diagnostic() {
    let text = "\
fn step(t) {
    return t + 1
}
@compile
fn loops(x, n) {
    let t = 0
    for i in range(n) {
        for j in range(n) {
            t = t + 1
        }
    }
    return x * t
}
@compile
fn calls(x) {
    let t = 0
    for i in range(400) {
        t = step(step(t))
    }
    return x * t
}
print(loops(ones(2), 30).tolist())
print(loops(ones(2), 40))
";
    let options = Options {
        trace_turns: Some(1000),
        ..Options::default()
    };
    // 30 + 30 * 30 turns are within the limit; 40 + 40 * 40 are not.
    let run = common::run_source("turns.tsl", text, options.clone());
    assert_eq!(run.stdout, "[900.0, 900.0]\n");
    let [reported] = &run.diagnostics[..] else {
        panic!("one diagnostic expected, got {:?}", run.diagnostics);
    };
    assert_eq!(reported.code, "value-error");
    assert_eq!(
        reported.message,
        "the trace of `loops` ran more than 1000 loop turns and calls"
    );
    assert_eq!(reported.line, Some(8), "{}", reported.rendered);

    // A turn and two calls each time round.
    let calls = text.replace("print(loops(ones(2), 40))", "print(calls(ones(2)))");
    let run = common::run_source("turns.tsl", &calls, options);
    let [reported] = &run.diagnostics[..] else {
        panic!("one diagnostic expected, got {:?}", run.diagnostics);
    };
    assert_eq!(
        reported.message,
        "the trace of `calls` ran more than 1000 loop turns and calls"
    );
    assert_eq!(reported.line, Some(18), "{}", reported.rendered);
}
