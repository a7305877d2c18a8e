//! Shared helpers for the integration tests: running TSL source with captured output, and
//! reading the inline expectations of suite files.

#![allow(dead_code)]

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use tsl::diag::render;
use tsl::diag::{Diagnostic, Severity};
use tsl::eval::{Interpreter, Options, Output, Status};
use tsl::source::SourceMap;

/// One diagnostic as a test sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Reported {
    pub severity: Severity,
    pub code: String,
    pub line: Option<usize>,
    pub file: Option<String>,
    pub message: String,
    pub help: Option<String>,
    pub notes: Vec<String>,
    pub rendered: String,
    /// Call sites of the trace, innermost first, as (file, line).
    pub trace: Vec<(String, usize)>,
}

impl Reported {
    /// The line of `file` this diagnostic is reported at: its primary span if that is in
    /// `file`, else the innermost call in `file` that led to it (a library error seen from
    /// the user's code).
    pub fn line_in(&self, file: &str) -> Option<usize> {
        if self.file.as_deref() == Some(file) {
            return self.line;
        }
        self.trace
            .iter()
            .find(|(frame_file, _)| frame_file == file)
            .map(|(_, line)| *line)
    }
}

/// An output that keeps diagnostics as messages, for tests that only need to know what failed.
pub struct Collect(pub Rc<RefCell<Vec<String>>>);

impl Output for Collect {
    fn print(&mut self, _: &str) {}

    fn log(&mut self, _: &str) {}

    fn diagnostic(&mut self, sources: &SourceMap, diagnostic: &Diagnostic) {
        self.0
            .borrow_mut()
            .push(render::to_text(sources, diagnostic));
    }
}

/// What a run produced.
#[derive(Debug, Default)]
pub struct Run {
    pub stdout: String,
    pub diagnostics: Vec<Reported>,
    /// Lines of the log channels turned on in the options.
    pub log: Vec<String>,
    pub failed: bool,
}

#[derive(Default)]
struct Captured {
    stdout: String,
    diagnostics: Vec<Reported>,
    log: Vec<String>,
}

struct Capture(Rc<RefCell<Captured>>);

impl Output for Capture {
    fn print(&mut self, text: &str) {
        self.0.borrow_mut().stdout.push_str(text);
    }

    fn log(&mut self, line: &str) {
        self.0.borrow_mut().log.push(line.to_string());
    }

    fn diagnostic(&mut self, sources: &SourceMap, diagnostic: &Diagnostic) {
        let position = diagnostic.span.map(|span| {
            let file = sources.get(span.file);
            (file.name.clone(), file.line_column(span.start as usize).0)
        });
        self.0.borrow_mut().diagnostics.push(Reported {
            severity: diagnostic.severity,
            code: diagnostic.code.as_str().to_string(),
            line: position.as_ref().map(|(_, line)| *line),
            file: position.map(|(file, _)| file),
            message: diagnostic.message.clone(),
            help: diagnostic.help.clone(),
            notes: diagnostic.notes.clone(),
            rendered: render::to_text(sources, diagnostic),
            trace: diagnostic
                .trace
                .iter()
                .map(|frame| {
                    let file = sources.get(frame.call_site.file);
                    let line = file.line_column(frame.call_site.start as usize).0;
                    (file.name.clone(), line)
                })
                .collect(),
        });
    }
}

/// Runs a script file, capturing everything it prints and reports.
pub fn run_file(path: &Path, options: Options) -> Run {
    run_with(options, |interpreter| interpreter.run_file(path))
}

/// Runs `tsl check` on a file, capturing what it reports.
pub fn check_file(path: &Path) -> Run {
    run_with(Options::default(), |interpreter| {
        tsl::check::check_file(interpreter, path)
    })
}

/// Runs `tsl check` on source text named `name`, capturing what it reports.
pub fn check_source(name: &str, text: &str) -> Run {
    run_with(Options::default(), |interpreter| {
        tsl::check::check_source(interpreter, name, None, text.to_string()).status
    })
}

/// Runs source text as a script named `name`.
pub fn run_source(name: &str, text: &str, options: Options) -> Run {
    run_with(options, |interpreter| {
        interpreter.run_source(name, None, text.to_string())
    })
}

/// Runs source text as if it were the file `directory/name`, so the files it reads and
/// writes with relative paths live in `directory`.
pub fn run_source_in(directory: &Path, name: &str, text: &str, options: Options) -> Run {
    let path = directory.join(name);
    run_with(options, |interpreter| {
        interpreter.run_source(name, Some(&path), text.to_string())
    })
}

/// Runs `body` with a fresh interpreter whose output is captured.
pub fn run_with(options: Options, body: impl FnOnce(&mut Interpreter) -> Status) -> Run {
    let captured = Rc::new(RefCell::new(Captured::default()));
    let device = options.device;
    let (status, gpu) = {
        let mut interpreter = Interpreter::new(options, Box::new(Capture(captured.clone())));
        let status = match interpreter.use_device(device) {
            Ok(()) => body(&mut interpreter),
            Err(diagnostic) => panic!("the device cannot be used: {}", diagnostic.message),
        };
        (status, gpu_watch(&interpreter))
    };
    // A GPU that outlived its interpreter (a reference cycle through it) would hold its
    // device, and the memory of its tensors, for the rest of the process.
    assert!(
        !gpu.is_some_and(|watch| watch()),
        "dropping the interpreter left its GPU open"
    );
    let captured = captured.take();
    Run {
        stdout: captured.stdout,
        diagnostics: captured.diagnostics,
        log: captured.log,
        failed: status == Status::Failed,
    }
}

/// Whether tests can use a GPU. Without one they skip, saying why, unless
/// `TSL_REQUIRE_GPU=1` (set by CI, which installs a software Vulkan driver), when a missing
/// GPU fails the test.
#[cfg(not(feature = "gpu"))]
pub fn gpu_available() -> bool {
    eprintln!("skipping GPU test: built without the `gpu` feature");
    false
}

/// Whether the interpreter's GPU, if it opened one, is still open (asked once the
/// interpreter is dropped).
#[cfg(feature = "gpu")]
fn gpu_watch(interpreter: &Interpreter) -> Option<impl Fn() -> bool + use<>> {
    let watch = interpreter.gpu_watch()?;
    Some(move || watch.is_open())
}

#[cfg(not(feature = "gpu"))]
fn gpu_watch(_: &Interpreter) -> Option<fn() -> bool> {
    None
}

/// Whether tests can use a GPU (see the other definition).
#[cfg(feature = "gpu")]
pub fn gpu_available() -> bool {
    match tsl::backend::gpu::Gpu::open() {
        Ok(_) => true,
        Err(error) if std::env::var("TSL_REQUIRE_GPU").as_deref() == Ok("1") => {
            panic!(
                "TSL_REQUIRE_GPU=1 but {}: {}",
                error.message(),
                error.help()
            )
        }
        Err(error) => {
            eprintln!("skipping GPU test: {}", error.message());
            false
        }
    }
}

/// Runs `body` on a thread with the interpreter's large stack, as the CLI does.
pub fn on_big_stack<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(tsl::eval::limits::STACK_BYTES)
        .spawn(body)
        .expect("spawning a test thread")
        .join()
        .expect("the test thread does not panic")
}

/// An expected diagnostic: its code at a line, with an optional message fragment.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedDiagnostic {
    pub severity: Severity,
    pub code: String,
    pub line: usize,
    pub fragment: Option<String>,
    /// Written `# help: TEXT` after it: the diagnostic's help must contain `TEXT`.
    pub help: Option<String>,
    /// Written `# check:`: expected from `tsl check` only.
    pub static_only: bool,
}

/// The inline expectations of a suite file:
/// `# out: TEXT` is the next expected stdout line (in file order);
/// `# check: CODE` expects that error from `tsl check` only (runs do not raise it);
/// `# check-note: CODE` expects that note from `tsl check`;
/// `# error: CODE` (or `# warning: CODE`) expects that diagnostic on this line, and
/// `# error: CODE "text"` also expects `text` in its message; `# error@+1: …` (or `@-2`)
/// expects it that many lines away, for lines that cannot carry a comment; a `# help: TEXT`
/// line expects `TEXT` in the help of the diagnostic expected just before it.
/// A diagnostic raised inside a module counts at the innermost line of this file that called
/// into it.
#[derive(Debug, Default)]
pub struct Expectations {
    pub stdout: Vec<String>,
    pub diagnostics: Vec<ExpectedDiagnostic>,
}

pub fn expectations(text: &str) -> Expectations {
    let mut expected = Expectations::default();
    for (index, line) in text.lines().enumerate() {
        let Some(comment) = comment_of(line) else {
            continue;
        };
        if let Some(out) = comment.strip_prefix("out:") {
            expected
                .stdout
                .push(out.strip_prefix(' ').unwrap_or(out).to_string());
        } else if let Some(help) = comment.strip_prefix("help:") {
            if let Some(last) = expected.diagnostics.last_mut() {
                last.help = Some(help.trim().to_string());
            }
        } else if let Some(rest) = comment.strip_prefix("check:") {
            let mut expected_check = diagnostic(Severity::Error, rest, index + 1);
            expected_check.static_only = true;
            expected.diagnostics.push(expected_check);
        } else if let Some(rest) = comment.strip_prefix("check-note:") {
            let mut expected_note = diagnostic(Severity::Note, rest, index + 1);
            expected_note.static_only = true;
            expected.diagnostics.push(expected_note);
        } else if let Some((severity, line, rest)) = diagnostic_comment(comment, index + 1) {
            expected.diagnostics.push(diagnostic(severity, rest, line));
        }
    }
    expected
}

/// The text after the `#` that starts a comment (not one inside a string literal).
fn comment_of(line: &str) -> Option<&str> {
    let mut in_string = false;
    let mut escaped = false;
    for (at, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '#' if !in_string => return Some(line[at + 1..].trim_start()),
            _ => {}
        }
    }
    None
}

/// Splits `error: …`, `warning@+1: …` into severity, target line and the rest.
fn diagnostic_comment(comment: &str, line: usize) -> Option<(Severity, usize, &str)> {
    let (severity, rest) = if let Some(rest) = comment.strip_prefix("error") {
        (Severity::Error, rest)
    } else {
        (Severity::Warning, comment.strip_prefix("warning")?)
    };
    let (offset, rest) = rest.split_once(':')?;
    let line = match offset.strip_prefix('@') {
        Some(offset) => line.checked_add_signed(offset.parse::<isize>().ok()?)?,
        None if offset.is_empty() => line,
        None => return None,
    };
    Some((severity, line, rest))
}

fn diagnostic(severity: Severity, rest: &str, line: usize) -> ExpectedDiagnostic {
    let rest = rest.trim();
    let (code, fragment) = match rest.split_once(' ') {
        Some((code, fragment)) => (code, Some(fragment.trim().trim_matches('"').to_string())),
        None => (rest, None),
    };
    ExpectedDiagnostic {
        severity,
        code: code.to_string(),
        line,
        fragment,
        help: None,
        static_only: false,
    }
}

/// Compares a run with a file's expectations; each mismatch is one line of the result.
pub fn mismatches(file: &str, run: &Run, expected: &Expectations) -> Vec<String> {
    let mut problems = Vec::new();
    let actual: Vec<&str> = run.stdout.lines().collect();
    if actual != expected.stdout {
        problems.push(format!(
            "stdout differs\n  expected: {:?}\n  actual:   {:?}",
            expected.stdout, actual
        ));
    }
    let mut unmatched: Vec<&Reported> = run.diagnostics.iter().collect();
    for want in expected.diagnostics.iter().filter(|want| !want.static_only) {
        let found = unmatched.iter().position(|got| {
            got.severity == want.severity
                && got.code == want.code
                && got.line_in(file) == Some(want.line)
                && want
                    .fragment
                    .as_ref()
                    .is_none_or(|fragment| got.message.contains(fragment.as_str()))
                && want.help.as_ref().is_none_or(|help| {
                    got.help
                        .as_ref()
                        .is_some_and(|got| got.contains(help.as_str()))
                })
        });
        match found {
            Some(position) => {
                unmatched.remove(position);
            }
            None => problems.push(format!(
                "missing {:?}[{}] at line {}{}{}",
                want.severity,
                want.code,
                want.line,
                want.fragment
                    .as_ref()
                    .map(|f| format!(" containing {f:?}"))
                    .unwrap_or_default(),
                want.help
                    .as_ref()
                    .map(|h| format!(" with help containing {h:?}"))
                    .unwrap_or_default()
            )),
        }
    }
    for got in unmatched {
        problems.push(format!("unexpected diagnostic:\n{}", got.rendered));
    }
    problems
}

/// Every `.tsl` file under `directory`, sorted.
pub fn tsl_files(directory: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(directory) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&directory) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "tsl") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// How far apart two printed floats may be.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    pub relative: f64,
    pub absolute: f64,
}

impl Tolerance {
    /// What compiled and eager results must meet: 1e-5 relative, or 1e-6 absolute near zero.
    pub const RESULTS: Tolerance = Tolerance {
        relative: 1e-5,
        absolute: 1e-6,
    };
}

/// Whether two printed lines agree: the same text, integers equal, floats within
/// [`Tolerance::RESULTS`], zeros of the same sign, as compiled and eager results must.
pub fn lines_agree(a: &str, b: &str) -> bool {
    lines_agree_within(a, b, Tolerance::RESULTS)
}

/// [`lines_agree`] with floats within `tolerance`.
pub fn lines_agree_within(a: &str, b: &str, tolerance: Tolerance) -> bool {
    let (a, b) = (tokens(a), tokens(b));
    a.len() == b.len()
        && a.iter().zip(&b).all(|(x, y)| match (x, y) {
            (Token::Float(x), Token::Float(y)) => floats_agree(*x, *y, tolerance),
            _ => x == y,
        })
}

fn floats_agree(x: f64, y: f64, tolerance: Tolerance) -> bool {
    if x.is_nan() || y.is_nan() {
        return x.is_nan() && y.is_nan();
    }
    if x.is_infinite() || y.is_infinite() {
        // Host arithmetic on a float read from data runs in `f64` eagerly and in `f32` in a
        // graph (docs/language.md, "When a trace fails"): a result past `f32`'s range is an
        // infinity compiled. Only host arithmetic gives a finite value out of that range.
        let beyond_f32 = |value: f64| value.is_finite() && value.abs() > f64::from(f32::MAX);
        let overflowed = |finite: f64, infinite: f64| {
            beyond_f32(finite) && infinite.is_infinite() && finite.signum() == infinite.signum()
        };
        return x == y || overflowed(x, y) || overflowed(y, x);
    }
    if x == 0.0 && y == 0.0 {
        return x.is_sign_negative() == y.is_sign_negative();
    }
    let difference = (x - y).abs();
    difference <= tolerance.absolute || difference <= tolerance.relative * x.abs().max(y.abs())
}

/// Where two runs' printed lines first disagree (as [`lines_agree_within`] judges them with
/// `tolerance`): the line and the first value or text that differs.
fn first_disagreement(a: &str, b: &str, tolerance: Tolerance) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    for (line, (x, y)) in a.iter().zip(&b).enumerate() {
        let (x, y) = (tokens(x), tokens(y));
        let token = x.iter().zip(&y).position(|pair| match pair {
            (Token::Float(x), Token::Float(y)) => !floats_agree(*x, *y, tolerance),
            (x, y) => x != y,
        });
        match token {
            Some(at) => {
                return format!(
                    "at line {}, token {at}: {:?} against {:?}",
                    line + 1,
                    x[at],
                    y[at]
                );
            }
            None if x.len() != y.len() => {
                return format!(
                    "at line {}: {} tokens against {}",
                    line + 1,
                    x.len(),
                    y.len()
                );
            }
            None => {}
        }
    }
    format!("in length: {} lines against {}", a.len(), b.len())
}

/// A run's printed lines for a report, each cut to its first 400 characters.
fn shortened(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(|line| match line.char_indices().nth(400) {
            Some((at, _)) => format!("{}...", &line[..at]),
            None => line.to_string(),
        })
        .collect()
}

#[derive(Debug, PartialEq)]
enum Token<'t> {
    Text(&'t str),
    Int(&'t str),
    Float(f64),
}

/// Splits a line into text and numbers (a number with `.` or an exponent is a float, and so
/// is the word `inf`).
fn tokens(line: &str) -> Vec<Token<'_>> {
    let bytes = line.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut tokens = Vec::new();
    let mut at = 0;
    let mut text_start = 0;
    while at < bytes.len() {
        let after_word = at > 0 && word(bytes[at - 1]);
        let infinity = !after_word
            && bytes[at..].starts_with(b"inf")
            && bytes.get(at + 3).is_none_or(|&c| !word(c));
        if infinity {
            let negative = at > 0 && bytes[at - 1] == b'-';
            let start = if negative { at - 1 } else { at };
            if text_start < start {
                tokens.push(Token::Text(&line[text_start..start]));
            }
            let sign = if negative { -1.0 } else { 1.0 };
            tokens.push(Token::Float(sign * f64::INFINITY));
            at += 3;
            text_start = at;
            continue;
        }
        let starts_number = bytes[at].is_ascii_digit() && !after_word;
        if !starts_number {
            at += 1;
            continue;
        }
        let mut start = at;
        if start > 0 && bytes[start - 1] == b'-' {
            start -= 1;
        }
        let mut end = at;
        let mut float = false;
        while end < bytes.len() {
            let c = bytes[end];
            let exponent_sign =
                (c == b'-' || c == b'+') && matches!(bytes[end - 1], b'e' | b'E') && float;
            if c.is_ascii_digit() || exponent_sign {
                end += 1;
            } else if c == b'.' || c == b'e' || c == b'E' {
                float = true;
                end += 1;
            } else {
                break;
            }
        }
        if text_start < start {
            tokens.push(Token::Text(&line[text_start..start]));
        }
        let number = &line[start..end];
        match number.parse::<f64>() {
            Ok(value) if float => tokens.push(Token::Float(value)),
            _ => tokens.push(Token::Int(number)),
        }
        at = end;
        text_start = end;
    }
    if text_start < line.len() {
        tokens.push(Token::Text(&line[text_start..]));
    }
    tokens
}

/// How two runs that must be bitwise identical (fused and unfused compiled code) differ:
/// printed lines must be equal byte for byte (floats print their shortest round-trip form, so
/// any difference in bits shows), and so must every diagnostic's code, line and message.
pub fn exact_differences(file: &str, unfused: &Run, fused: &Run) -> Vec<String> {
    let mut problems = Vec::new();
    if unfused.stdout != fused.stdout {
        problems.push(format!(
            "stdout differs\n  unfused: {:?}\n  fused:   {:?}",
            unfused.stdout, fused.stdout
        ));
    }
    let summary = |run: &Run| -> Vec<(String, Option<usize>, String)> {
        run.diagnostics
            .iter()
            .map(|d| (d.code.clone(), d.line_in(file), d.message.clone()))
            .collect()
    };
    if summary(unfused) != summary(fused) {
        problems.push(format!(
            "diagnostics differ\n  unfused: {:?}\n  fused:   {:?}",
            summary(unfused),
            summary(fused)
        ));
    }
    problems
}

/// How an eager run and a compiled run of the same program differ (empty when they agree):
/// the same printed lines (floats within tolerance) and the same first error, by code, line
/// in `file` and message (values included: a shape rule's assumption that fails at run time
/// reports the eager error with the run's sizes, spec §6). An error that exists only in a
/// trace ([`compiled_only`]): the compiled run then only has to agree with the eager one up to
/// it.
pub fn differences(file: &str, eager: &Run, compiled: &Run) -> Vec<String> {
    differences_within(file, eager, compiled, Tolerance::RESULTS)
}

/// [`differences`] with printed floats within `tolerance`.
pub fn differences_within(
    file: &str,
    eager: &Run,
    compiled: &Run,
    tolerance: Tolerance,
) -> Vec<String> {
    let mut problems = Vec::new();
    let first_error = |run: &Run| {
        run.diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
            .cloned()
    };
    let trace_only = first_error(compiled).is_some_and(|error| compiled_only(&error));
    let a: Vec<&str> = eager.stdout.lines().collect();
    let b: Vec<&str> = compiled.stdout.lines().collect();
    let same_length = a.len() == b.len() || (trace_only && b.len() <= a.len());
    if !same_length
        || a.iter()
            .zip(&b)
            .any(|(x, y)| !lines_agree_within(x, y, tolerance))
    {
        let (a, b) = (shortened(&eager.stdout), shortened(&compiled.stdout));
        problems.push(format!(
            "stdout differs {}\n  eager:    {a:?}\n  compiled: {b:?}",
            first_disagreement(&eager.stdout, &compiled.stdout, tolerance)
        ));
    }
    if trace_only {
        return problems;
    }
    match (first_error(eager), first_error(compiled)) {
        (None, None) => {}
        (Some(e), Some(c)) => {
            let same_line = e.line_in(file) == c.line_in(file);
            let same_message = lines_agree_within(&e.message, &c.message, tolerance);
            if !(same_line && same_message && e.code == c.code) {
                problems.push(format!(
                    "errors differ\n  eager:    {} at line {:?}: {}\n  compiled: {} at line {:?}: {}",
                    e.code,
                    e.line_in(file),
                    e.message,
                    c.code,
                    c.line_in(file),
                    c.message
                ));
            }
        }
        (e, c) => problems.push(format!(
            "only one run failed\n  eager:    {:?}\n  compiled: {:?}",
            e.map(|d| d.rendered),
            c.map(|d| d.rendered)
        )),
    }
    problems
}

/// Whether an error exists only in compiled code: a data-dependent question the trace could
/// not answer, a shape rule's general path that eager code would not have taken (spec §6:
/// `check-failed` naming the assumption), or something a compiled function cannot do that
/// eager code can (returning a function, `load()`, `tolist()` of more values than a trace
/// makes symbols for).
fn compiled_only(error: &Reported) -> bool {
    error.code.starts_with("data-dependent")
        || (error.code == "check-failed" && error.message.starts_with("assumed by a shape rule"))
        || error
            .notes
            .iter()
            .any(|note| note.contains("traces both branches of cond()"))
        || error.message.contains("compiled function")
        || error.help.as_deref().is_some_and(|help| {
            help.contains("outside @compile") || help.contains("outside the compiled function")
        })
}

/// Every graph traced from a file, before the passes: the traces of its real calls, then
/// the traces `tsl check` makes from each compiled function's annotations.
pub fn traces_of(path: PathBuf) -> Vec<tsl::graph::ir::Graph> {
    let options = Options {
        keep_unoptimized: true,
        ..Options::default()
    };
    let sink = Rc::new(RefCell::new(Vec::new()));
    let mut interpreter = Interpreter::new(options.clone(), Box::new(Collect(sink.clone())));
    interpreter.run_file(&path);
    let mut graphs = interpreter.unoptimized_graphs().to_vec();
    let mut checker = Interpreter::new(options, Box::new(Collect(sink)));
    if let Some((module, _)) = checker.load_definitions(&path) {
        for function in module.compiled_functions() {
            let _ = checker.trace_from_annotations(&function);
        }
    }
    graphs.extend(checker.unoptimized_graphs().iter().cloned());
    graphs
}
