//! Running one fuzz case every way TSL can run it, and what counts as a problem.
//!
//! In the test process (fast; no memory limit, so mutants keep sizes small): compiled, eager,
//! `tsl check` and `tsl graph` of every compiled function, each with a deadline enforced
//! through the session's interrupt flag. In a child process (the `tsl` binary under
//! `ulimit -v` and a wall-clock timeout): `run`, `--eager`, `check`, `graph` and the piped
//! REPL. A problem is a panic (an `internal-error`), an abort or a signal, a timeout, an exit
//! status other than 0 or 1, or compiled and eager runs that disagree on what they print or
//! on their first error (code, line and message, values included).

use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tsl::diag::Severity;
use tsl::eval::{Interpreter, Options, Status};

use crate::common::{self, Reported, Run, differences};

/// Everything that can go wrong with a case, as one line each.
pub type Problems = Vec<String>;

/// Runs the case at `path` (text `text`) in the test process: compiled and eager (which
/// must agree), `check` and `graph`. `limit` bounds each run.
pub fn in_process(path: &Path, text: &str, limit: Duration) -> Problems {
    let name = path.display().to_string();
    // Cases save and load files next to themselves: the eager run starts from the files the
    // compiled run started from.
    let files = Files::snapshot(path.parent().unwrap_or(Path::new(".")));
    let compiled = run_in_process(Options::default(), limit, |interpreter| {
        interpreter.run_source(&name, Some(path), text.to_string())
    });
    files.restore();
    let eager = run_in_process(
        Options {
            eager: true,
            ..Options::default()
        },
        limit,
        |interpreter| interpreter.run_source(&name, Some(path), text.to_string()),
    );
    let checked = run_in_process(Options::default(), limit, |interpreter| {
        tsl::check::check_file(interpreter, path)
    });
    let graphs = run_in_process(Options::default(), limit, |interpreter| {
        graph_every_function(interpreter, path)
    });
    let mut problems = Vec::new();
    for (mode, outcome) in [
        ("compiled", &compiled),
        ("eager", &eager),
        ("check", &checked),
        ("graph", &graphs),
    ] {
        let expected = |problem: &&String| {
            matches!(mode, "compiled" | "eager")
                && runs_eagerly(mode == "eager", text)
                && eager_may_run_long(text)
                && problem.starts_with(UNFINISHED)
        };
        problems.extend(
            outcome
                .problems
                .iter()
                .filter(|problem| !expected(problem))
                .map(|problem| format!("{mode}: {problem}")),
        );
    }
    if problems.is_empty() && comparable(text) {
        problems.extend(differences(&name, &eager.run, &compiled.run));
    }
    problems
}

/// The files of one directory (not its subdirectories) and their contents.
struct Files {
    directory: PathBuf,
    contents: Vec<(PathBuf, Vec<u8>)>,
}

impl Files {
    fn snapshot(directory: &Path) -> Files {
        let contents = Files::paths(directory)
            .into_iter()
            .filter_map(|path| Some((path.clone(), std::fs::read(&path).ok()?)))
            .collect();
        Files {
            directory: directory.to_path_buf(),
            contents,
        }
    }

    /// Puts the directory back as it was: files written since are removed, changed ones
    /// rewritten.
    fn restore(&self) {
        for path in Files::paths(&self.directory) {
            if !self.contents.iter().any(|(known, _)| *known == path) {
                let _ = std::fs::remove_file(&path);
            }
        }
        for (path, bytes) in &self.contents {
            if std::fs::read(path).ok().as_ref() != Some(bytes) {
                let _ = std::fs::write(path, bytes);
            }
        }
    }

    fn paths(directory: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(directory)
            .map(|entries| {
                entries
                    .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                    .filter(|path| path.is_file())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Whether the eager run of `text` may pass the time limit: the programs marked as differing
/// by design include those whose trace stops at a limit where eager code runs to the end, and
/// a mutant that calls such a function again after its loop recurses through the whole loop a
/// thousand times eagerly. The compiled run still has the time limit.
fn eager_may_run_long(text: &str) -> bool {
    text.contains("eager-differs")
}

/// Whether a run of `text` is eager: asked to be, or a run of a program that compiles nothing
/// (a mutant may have lost its `@compile`).
fn runs_eagerly(eager: bool, text: &str) -> bool {
    eager || !text.contains("@compile")
}

/// Whether compiled and eager runs of `text` must agree: not when it asks whether it is
/// compiled or uses the helpers that answer differently in a trace (spec §5).
pub fn comparable(text: &str) -> bool {
    const DIFFERING: [&str; 6] = [
        "is_compiling",
        "guard_or_",
        "known_true",
        "size_oblivious",
        "eager-differs",
        "mark_dynamic",
    ];
    !DIFFERING.iter().any(|word| text.contains(word))
}

/// A run in the test process and what went wrong with it.
pub struct InProcess {
    pub run: Run,
    pub problems: Problems,
}

/// How a run that passed its time limit is reported.
const UNFINISHED: &str = "did not finish within";

fn run_in_process(
    options: Options,
    limit: Duration,
    body: impl FnOnce(&mut Interpreter) -> Status,
) -> InProcess {
    let mut timed_out = false;
    let run = common::run_with(options, |interpreter| {
        let flag = interpreter.interrupt_flag();
        let (done, waiting) = mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            let fired = waiting.recv_timeout(limit).is_err();
            if fired {
                flag.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            fired
        });
        let status = interpreter.reporting_panics(body);
        let _ = done.send(());
        timed_out = watchdog.join().unwrap_or(true);
        status
    });
    let mut problems = Vec::new();
    if timed_out {
        problems.push(format!("{UNFINISHED} {limit:?}"));
    }
    problems.extend(internal_errors(&run.diagnostics));
    InProcess { run, problems }
}

fn internal_errors(diagnostics: &[Reported]) -> Problems {
    diagnostics
        .iter()
        .filter(|d| d.code == "internal-error")
        .map(|d| format!("internal error: {}", d.rendered))
        .collect()
}

/// `tsl graph` of every compiled function of the file: traced, printed, fused, as DOT.
fn graph_every_function(interpreter: &mut Interpreter, path: &Path) -> Status {
    let Some((module, _)) = interpreter.load_definitions(path) else {
        return Status::Failed;
    };
    for function in module.compiled_functions() {
        let (traced, notes) = interpreter.trace_from_annotations(&function);
        for note in &notes {
            interpreter.report(note);
        }
        match traced {
            Ok(mut traced) => {
                let _ = tsl::graph::print::print_graph(&traced.graph, Some(interpreter.sources()));
                let _ = tsl::graph::dot::to_dot(&traced.graph);
                tsl::graph::passes::fuse(
                    &mut traced.graph,
                    &tsl::graph::passes::FusionPolicy::default(),
                );
                let _ = tsl::graph::print::print_graph(&traced.graph, Some(interpreter.sources()));
            }
            Err(diagnostic) => interpreter.report(&diagnostic),
        }
    }
    Status::Ok
}

/// The limits a child process runs under.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub time: Duration,
    /// Address space, in KiB (`ulimit -v`).
    pub memory_kib: u64,
}

/// What a child `tsl` process did.
pub struct Child {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
}

/// Runs `tsl ARGS` in `directory` with `input` on stdin, under `limits`.
pub fn child(directory: &Path, args: &[&str], input: &str, limits: Limits) -> Child {
    let script = format!("ulimit -v {} && exec \"$0\" \"$@\"", limits.memory_kib);
    let spawned = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_tsl"))
        .args(args)
        .current_dir(directory)
        .env("NO_COLOR", "1")
        .env("TSL_HISTORY", "")
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut process) = spawned else {
        return Child {
            status: None,
            stdout: String::new(),
            stderr: "could not start tsl".to_string(),
            timed_out: false,
        };
    };
    if let Some(mut stdin) = process.stdin.take() {
        let input = input.to_string();
        // A child that stops reading early must not block the harness.
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
    }
    // Both pipes are read while the child runs: a child that writes more than a pipe holds
    // would otherwise wait for the harness forever.
    let stdout = drain(process.stdout.take());
    let stderr = drain(process.stderr.take());
    let started = Instant::now();
    let mut timed_out = false;
    while matches!(process.try_wait(), Ok(None)) {
        if started.elapsed() > limits.time {
            timed_out = true;
            let _ = process.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = process.wait();
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    match status {
        Ok(status) => Child {
            status: status.code(),
            stdout,
            stderr,
            timed_out,
        },
        Err(error) => Child {
            status: None,
            stdout,
            stderr: error.to_string(),
            timed_out,
        },
    }
}

/// Reads `pipe` to its end on a thread of its own.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// What is wrong with how a child ended.
pub fn child_problems(child: &Child) -> Problems {
    let mut problems = Vec::new();
    if child.timed_out {
        problems.push("timed out".to_string());
    } else if !matches!(child.status, Some(0 | 1)) {
        problems.push(format!(
            "ended with {:?} (a signal, an abort or a usage error)",
            child.status
        ));
    }
    for sign in [
        "panicked at",
        "internal-error",
        "memory allocation of",
        "stack overflow",
    ] {
        if child.stderr.contains(sign) {
            problems.push(format!("stderr shows `{sign}`"));
        }
    }
    if !problems.is_empty() {
        let tail: String = child
            .stderr
            .chars()
            .rev()
            .take(1500)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        problems.push(format!("stderr ends:\n{tail}"));
    }
    problems
}

/// Runs the case at `path` through the binary every way: `run` and `run --eager` (which
/// must agree), `check`, `graph --fn` for each compiled function, and the piped REPL.
pub fn in_children(path: &Path, text: &str, limits: Limits) -> Problems {
    let directory = path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let file = path.display().to_string();
    let mut problems = Vec::new();
    let mut runs = Vec::new();
    for args in [
        vec!["--error-format", "json", "run", file.as_str()],
        vec!["--error-format", "json", "run", "--eager", file.as_str()],
        vec!["check", file.as_str()],
    ] {
        let child = child(&directory, &args, "", limits);
        let eager = args.contains(&"run") && runs_eagerly(args.contains(&"--eager"), text);
        let expected = eager && eager_may_run_long(text) && child.timed_out;
        if !expected {
            problems.extend(
                child_problems(&child)
                    .into_iter()
                    .map(|p| format!("{args:?}: {p}")),
            );
        }
        runs.push(child);
    }
    for function in compiled_function_names(text) {
        let args = ["graph", file.as_str(), "--fn", function.as_str()];
        let child = child(&directory, &args, "", limits);
        problems.extend(
            child_problems(&child)
                .into_iter()
                .map(|p| format!("{args:?}: {p}")),
        );
    }
    let repl = child(&directory, &["repl"], text, limits);
    problems.extend(
        child_problems(&repl)
            .into_iter()
            .map(|p| format!("repl: {p}")),
    );
    if problems.is_empty() && comparable(text) {
        let compiled = json_run(&runs[0]);
        let eager = json_run(&runs[1]);
        problems.extend(differences(&file, &eager, &compiled));
    }
    problems
}

/// The names of the functions marked `@compile` in `text`.
pub fn compiled_function_names(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut names = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        if !line.trim_start().starts_with("@compile") {
            continue;
        }
        let Some(next) = lines.get(index + 1) else {
            continue;
        };
        if let Some(rest) = next.trim_start().strip_prefix("fn ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    names
}

/// A child's output as a test run: stdout, and diagnostics read back from JSON lines.
fn json_run(child: &Child) -> Run {
    let diagnostics = child
        .stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .map(|json| reported(&json))
        .collect();
    Run {
        stdout: child.stdout.clone(),
        diagnostics,
        log: Vec::new(),
        failed: child.status != Some(0),
    }
}

fn reported(json: &serde_json::Value) -> Reported {
    let text = |name: &str| json[name].as_str().map(str::to_string);
    let severity = match json["severity"].as_str() {
        Some("warning") => Severity::Warning,
        Some("note") => Severity::Note,
        _ => Severity::Error,
    };
    let trace = json["trace"]
        .as_array()
        .map(|frames| {
            frames
                .iter()
                .filter_map(|frame| {
                    let line = usize::try_from(frame["line"].as_u64()?).ok()?;
                    Some((frame["file"].as_str()?.to_string(), line))
                })
                .collect()
        })
        .unwrap_or_default();
    Reported {
        severity,
        code: text("code").unwrap_or_default(),
        line: json["line"]
            .as_u64()
            .and_then(|line| usize::try_from(line).ok()),
        file: text("file"),
        message: text("message").unwrap_or_default(),
        help: text("help"),
        notes: json["notes"]
            .as_array()
            .map(|notes| {
                notes
                    .iter()
                    .filter_map(|note| note.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        rendered: json.to_string(),
        trace,
    }
}
