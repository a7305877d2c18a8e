//! The REPL, driven through standard input (cells, values, commands, errors, exit status) and
//! once through a pseudo-terminal (prompts, completion, Ctrl-C, Ctrl-D).

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn tsl_with_input(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tsl"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("TSL_HISTORY", "")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running tsl");
    child
        .stdin
        .take()
        .expect("a pipe")
        .write_all(input.as_bytes())
        .expect("writing the input");
    child.wait_with_output().expect("waiting for tsl")
}

/// Runs `tsl repl` with `input` piped in.
fn repl(input: &str) -> Output {
    tsl_with_input(&["repl"], input)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn temporary_directory(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("tsl-repl-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("creating a temporary directory");
    directory
}

/// Asserts the run succeeded and printed exactly `expected`.
fn assert_prints(output: &Output, expected: &str) {
    assert_eq!(stderr(output), "", "no diagnostics expected");
    assert_eq!(stdout(output), expected);
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn definitions_persist_and_a_bare_expression_prints_its_value() {
    let output = repl("let x = 2\nfn double(a) { return a * 2 }\ndouble(x)\nx\n\"text\"\n");
    assert_prints(&output, "4\n2\ntext\n");
}

#[test]
fn statements_and_none_print_nothing_more() {
    let output = repl("let y = 3\nprint(y)\ny = 4\nnone\n[y, 2.5, \"s\"]\n");
    assert_prints(&output, "3\n[4, 2.5, \"s\"]\n");
}

#[test]
fn only_the_trailing_expression_of_a_cell_prints() {
    let output = repl("1; 2; 3\nlet z = 1; z + 1\n");
    assert_prints(&output, "3\n2\n");
}

#[test]
fn unfinished_blocks_and_brackets_continue_on_the_next_line() {
    let input = "fn f(x) {\n    let y = x + 1\n\n    return y\n}\nf(1)\nlet xs = [1,\n  2,\n  3]\nlen(xs)\n";
    assert_prints(&repl(input), "2\n3\n");
}

#[test]
fn tensors_and_std_modules_work_across_cells() {
    let input = "use std.nn as nn\nlet x = tensor([-1.0, 2.0])\nnn.relu(x)\nx.sum()\n";
    assert_prints(&repl(input), "tensor([0.0, 2.0])\ntensor(1.0)\n");
}

#[test]
fn compiled_functions_run_in_the_session() {
    let input = "@compile\nfn scale(x: f32[n]) -> f32[n] {\n    return x * 2\n}\nscale(ones(2))\nscale(ones(3))\n";
    assert_prints(
        &repl(input),
        "tensor([2.0, 2.0])\ntensor([2.0, 2.0, 2.0])\n",
    );
}

#[test]
fn an_error_renders_against_its_cell_and_the_session_goes_on() {
    let output = repl("let a = 1\nzeros(2) + zeros(3)\nprint(\"after\", a)\n");
    assert_eq!(stdout(&output), "after 1\n");
    let errors = stderr(&output);
    assert!(errors.starts_with("error[shape-error]: shapes [2] and [3] cannot broadcast"));
    assert!(errors.contains("<repl:2>:1:1"), "{errors}");
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn syntax_errors_do_not_end_the_session() {
    let output = repl("let x = )\nprint(\"unterminated\nprint(\"next\")\n");
    assert_eq!(stdout(&output), "next\n");
    let errors = stderr(&output);
    assert!(errors.contains("<repl:1>"), "{errors}");
    assert!(errors.contains("unterminated string"), "{errors}");
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn an_unfinished_cell_at_the_end_of_input_is_an_error() {
    let output = repl("print(1)\nfn f() {\n");
    assert_eq!(stdout(&output), "1\n");
    assert!(stderr(&output).contains("unexpected end of input"));
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn json_diagnostics_name_the_cell() {
    let output = tsl_with_input(&["repl", "--error-format", "json"], "1\nnosuch\n");
    let line: serde_json::Value =
        serde_json::from_str(stderr(&output).trim()).expect("one JSON diagnostic");
    assert_eq!(line["code"], "name-error");
    assert_eq!(line["file"], "<repl:2>");
}

#[test]
fn tsl_without_arguments_is_the_repl() {
    assert_prints(&tsl_with_input(&[], "1 + 1\n"), "2\n");
}

#[test]
fn type_shows_dtype_and_shape_or_the_kind() {
    let input = ":type ones(2, 3)\n:type arange(4)\n:type 1\n:type [1]\n:type print\n";
    assert_prints(&repl(input), "f32[2, 3]\ni64[4]\nint\nlist\nfunction\n");
    let output = repl(":type let x = 1\n:type\n");
    let errors = stderr(&output);
    assert!(errors.contains("expected a single expression"), "{errors}");
    assert!(errors.contains("`:type` needs EXPR"), "{errors}");
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn help_lists_every_command() {
    let output = repl(":help\n");
    let text = stdout(&output);
    for command in [
        ":help", ":type", ":graph", ":guards", ":log", ":load", ":reset", ":quit",
    ] {
        assert!(text.contains(command), "{command} missing from {text}");
    }
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn load_runs_a_file_and_keeps_its_definitions() {
    let directory = temporary_directory("load");
    let script = directory.join("helpers.tsl");
    std::fs::write(
        &script,
        "fn triple(x) { return x * 3 }\nlet loaded = 7\nprint(\"loading\")\n",
    )
    .expect("writing a script");
    let input = format!(":load {}\ntriple(loaded)\n", script.display());
    assert_prints(&repl(&input), "loading\n21\n");
    let output = repl(":load no/such/file.tsl\n1\n");
    assert_eq!(stdout(&output), "1\n");
    assert!(stderr(&output).contains("cannot read `no/such/file.tsl`: no such file"));
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn reset_forgets_the_session() {
    let output = repl("let x = 1\nx\n:reset\nx\n");
    assert_eq!(stdout(&output), "1\n");
    assert!(stderr(&output).starts_with("error[name-error]"));
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn log_validates_its_channels() {
    let output = repl(":log dynamic, guards\n:log\n:log off\n:log graph,bogus\n:log all\n");
    assert_eq!(
        stdout(&output),
        "log: dynamic, guards\nlog: dynamic, guards\nlog: off\nlog: dynamic, guards, recompiles, graph\n"
    );
    let errors = stderr(&output);
    assert!(
        errors.starts_with("error[input-error]: unknown log channel `bogus`"),
        "{errors}"
    );
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn graph_and_guards_need_a_compiled_function() {
    let input = "@compile\nfn f(x) { return x }\nfn g(x) { return x }\n\
                 :graph f\n:guards f\n:graph g\n:guards nope\n";
    let errors = stderr(&repl(input));
    let lines: Vec<&str> = errors.lines().collect();
    assert_eq!(
        lines,
        [
            "error[input-error]: `f` has not been compiled yet",
            "error[input-error]: `f` has not been compiled yet",
            "error[input-error]: `g` is not a @compile function",
            "error[input-error]: unknown function `nope`",
        ]
    );
}

#[test]
fn graph_and_guards_show_the_cache_of_a_compiled_function() {
    let input = "@compile\nfn f(x, n: int) { return x.sum() * n }\n\
                 f(ones(3), 2)\nf(ones(4), 3)\n:guards f\n:graph f\n";
    let output = repl(input);
    let text = stdout(&output);
    let guards = "graph 1 of 2:\n  x.dtype == f32\n  x.ndim == 1\n  x.size(0) == 3\n  n == 2\n\
                  graph 2 of 2:\n  x.dtype == f32\n  x.ndim == 1\n  s0 = x.size(0)\n  s1 = n\n";
    assert!(text.contains(guards), "{text}");
    assert!(text.contains("%0 = input x @0 : f32[s0]"), "{text}");
    assert!(text.contains("%2 = mul(%1, s1) : f32[]"), "{text}");
    assert_eq!(stderr(&output), "");
}

#[test]
fn commands_may_be_shortened_when_unambiguous() {
    let output = repl(":ty 1\n:g f\n:frobnicate\n:reset now\n");
    assert_eq!(stdout(&output), "int\n");
    let errors = stderr(&output);
    assert!(errors.contains("`:g` could be :graph, :guards"), "{errors}");
    assert!(errors.contains("unknown command `:frobnicate`"), "{errors}");
    assert!(errors.contains("`:reset` takes no argument"), "{errors}");
}

#[test]
fn quit_ends_the_session() {
    assert_prints(&repl("print(1)\n:quit\nprint(2)\n"), "1\n");
}

#[cfg(unix)]
mod terminal {
    use std::process::Command;
    use std::time::Duration;

    use expectrl::process::unix::WaitStatus;
    use expectrl::{ControlCode, Eof, Expect, Regex};

    /// A fresh prompt: one that follows a line break, unlike the redraws while typing.
    const PROMPT: &str = r"\n[^\n]*>>> ";
    const CONTINUATION: &str = r"\n[^\n]*\.\.\. ";

    /// The session's bytes, shown by the test harness when the test fails.
    struct Transcript;

    impl std::io::Write for Transcript {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            eprint!("{}", String::from_utf8_lossy(bytes));
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn wait_for(session: &mut impl Expect, pattern: &str, after: &str) {
        if let Err(error) = session.expect(Regex(pattern)) {
            panic!("after {after:?}, waiting for {pattern:?}: {error}");
        }
    }

    /// Types `keys`, waits for each of `outputs` in turn, then for the next `prompt`, so the
    /// next keys reach a line editor that is waiting for them.
    fn exchange(session: &mut impl Expect, keys: &str, outputs: &[&str], prompt: &str) {
        session.send(keys).expect("typing");
        for output in outputs {
            wait_for(session, &regex_escape(output), keys);
        }
        wait_for(session, prompt, keys);
    }

    fn regex_escape(text: &str) -> String {
        text.chars()
            .flat_map(|c| {
                let special = "\\.+*?()|[]{}^$".contains(c);
                special.then_some('\\').into_iter().chain([c])
            })
            .collect()
    }

    #[test]
    fn a_terminal_session_edits_completes_interrupts_and_exits() {
        let directory = super::temporary_directory("terminal");
        let history = directory.join("history");
        let mut command = Command::new(env!("CARGO_BIN_EXE_tsl"));
        command
            .arg("repl")
            .env("NO_COLOR", "1")
            .env("TERM", "xterm")
            .env("TSL_HISTORY", &history)
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        let session = expectrl::Session::spawn(command).expect("starting tsl in a pseudo-terminal");
        let mut session = expectrl::session::log(session, Transcript).expect("a transcript");
        session.set_expect_timeout(Some(Duration::from_secs(60)));
        wait_for(&mut session, PROMPT, "starting");

        // Multi-line input continues with a continuation prompt.
        exchange(&mut session, "fn add(a, b) {\r", &[], CONTINUATION);
        exchange(&mut session, "    return a + b\r", &[], CONTINUATION);
        exchange(&mut session, "}\r", &[], PROMPT);
        exchange(&mut session, "add(200, 3)\r", &["203"], PROMPT);

        // Tab completes a session name, a method after `.`, a std module and its members.
        exchange(&mut session, "let total = 40\r", &[], PROMPT);
        exchange(&mut session, "tot\t + 2\r", &["42"], PROMPT);
        exchange(&mut session, "ones(3).su\t()\r", &["tensor(3.0)"], PROMPT);
        exchange(&mut session, "use std.n\t as nn\r", &[], PROMPT);
        let relu = "nn.rel\t(tensor([-1.0, 2.0]))\r";
        exchange(&mut session, relu, &["tensor([0.0, 2.0])"], PROMPT);

        // An error is reported and the session goes on.
        let error = ["error[shape-error]", "<repl:"];
        exchange(&mut session, "zeros(2) + zeros(3)\r", &error, PROMPT);
        exchange(&mut session, "add(1000, 1)\r", &["1001"], PROMPT);

        // Ctrl-C cancels unfinished input, and interrupts a long loop.
        exchange(&mut session, "fn half(x) {\r", &[], CONTINUATION);
        exchange(&mut session, "\x03", &[], PROMPT);
        exchange(&mut session, "7 * 6\r", &["42"], PROMPT);
        let long_loop = "print(\"started\"); for i in range(10000000) { let y = i * 2 }\r";
        session.send(long_loop).expect("typing");
        wait_for(&mut session, "started", long_loop);
        std::thread::sleep(Duration::from_millis(200));
        exchange(&mut session, "\x03", &["interrupted"], PROMPT);
        exchange(
            &mut session,
            "print(\"still here\")\r",
            &["still here"],
            PROMPT,
        );

        // Ctrl-C also stops a compiled call inside its one long fused kernel (minutes of
        // work uninterrupted, longer than the 60 s this test waits for any output).
        exchange(
            &mut session,
            "@compile(dynamic = true)\r",
            &[],
            CONTINUATION,
        );
        let long = "fn long(x: f32[n]) { let y = x; for i in range(400) { y = y * 1.0001 + 0.5 }; return y.sum() }\r";
        exchange(&mut session, long, &[], PROMPT);
        exchange(&mut session, "long(ones(2))\r", &["tensor("], PROMPT);
        exchange(&mut session, "let big = ones(16000000)\r", &[], PROMPT);
        let call = "print(\"calling\"); long(big)\r";
        session.send(call).expect("typing");
        wait_for(&mut session, "calling", call);
        std::thread::sleep(Duration::from_millis(300));
        exchange(&mut session, "\x03", &["interrupted"], PROMPT);
        exchange(&mut session, "long(ones(2))\r", &["tensor("], PROMPT);

        // Ctrl-D leaves with status 0; the history was written.
        session
            .send(ControlCode::EndOfTransmission)
            .expect("Ctrl-D");
        session.expect(Eof).expect("the session ends");
        let status = session.get_process().wait().expect("waiting for tsl");
        assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
        let saved = std::fs::read_to_string(&history).expect("the history file");
        assert!(saved.contains("add(200, 3)"), "{saved}");
        assert!(saved.contains("fn add(a, b) {"), "{saved}");
    }
}

#[test]
fn the_session_goes_on_after_a_failed_check_on_the_gpu() {
    if !common::gpu_available() {
        return;
    }
    let output = repl(
        ":device gpu\n@compile\nfn f(x) {\n    check all(x > 0.0), \"x must be positive\"\n    \
         return x * 2.0\n}\nf(tensor([1.0, -2.0]))\nf(tensor([1.0, 2.0]))\nlet y = f(tensor([3.0]))\n\
         :device cpu\ny + 1.0\n:device\n",
    );
    let printed = stdout(&output);
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.len(), 5, "{printed}");
    assert!(lines[0].starts_with("device: gpu ("), "{printed}");
    // `y`, computed on the GPU, moves to the CPU when the CPU needs it.
    assert_eq!(
        lines[1..],
        [
            "tensor([2.0, 4.0])",
            "device: cpu",
            "tensor([7.0])",
            "device: cpu"
        ]
    );
    let errors = stderr(&output);
    assert!(
        errors.contains("error[device-check-failed]: x must be positive")
            && errors.contains("failed at x[1] = -2.0"),
        "{errors}"
    );
    assert_eq!(errors.matches("error[").count(), 1, "{errors}");
}
