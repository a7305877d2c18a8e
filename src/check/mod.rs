//! `tsl check`: diagnostics without running anything (spec §9), for the command line and the
//! language server alike.
//!
//! [`check_source`] is the front door: it takes a file's text (saved or not), parses it (every
//! syntax error, and the program recovered around them), binds its definitions in the
//! interpreter's analysis mode (used modules are defined, never run; `print` and `save` do
//! nothing), checks names and calls statically (`names`, `arity`), and traces every
//! `@compile` function that parsed from its annotations alone, with input sizes as symbols
//! that have no hint: data-dependent questions and impossible shapes are errors, questions
//! that would only need a guard on an input size are notes. [`analyze`] does the same on its
//! own interpreter and returns everything as data.

mod arity;
pub mod facts;
mod globals;
pub mod names;

use std::cell::RefCell;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::diag::{Code, Diagnostic, Severity};
use crate::eval::trace::TraceFacts;
use crate::eval::{Interpreter, Options, Output, STD_MODULES, Status};
use crate::source::{FileId, Overlay, SourceMap, Span};
use crate::syntax::ast::{Item, Program, UseDecl, UseTarget};
use facts::NameFacts;
use names::Members;

/// What checking one file learnt besides its diagnostics.
pub struct Checked {
    pub status: Status,
    /// The checked file in the interpreter's sources.
    pub file: FileId,
    /// The program as parsed (with error nodes where the text did not parse).
    pub program: Program,
    pub names: NameFacts,
    /// What the traces of compiled functions recorded (`Options::record_types`).
    pub traces: Vec<TraceFacts>,
}

/// Checks one file from disk (or its overlaid text), reporting through the interpreter's
/// output.
pub fn check_file(interpreter: &mut Interpreter, path: &Path) -> Status {
    match interpreter.read_source(path) {
        Ok(text) => {
            let name = path.display().to_string();
            check_source(interpreter, &name, Some(path), text).status
        }
        Err(diagnostic) => {
            interpreter.report(&diagnostic);
            Status::Failed
        }
    }
}

/// Checks `text` as the file `name` (at `path`, which locates the files it uses), reporting
/// every diagnostic through the interpreter's output. The interpreter is switched to analysis
/// mode for good: nothing the program would do outside itself happens.
pub fn check_source(
    interpreter: &mut Interpreter,
    name: &str,
    path: Option<&Path>,
    text: String,
) -> Checked {
    interpreter.enter_analysis();
    let errors_before = interpreter.errors_reported();
    let end = u32::try_from(text.len()).unwrap_or(u32::MAX);
    let file = interpreter.add_source(name, path.map(Path::to_path_buf), text);
    let parsed = crate::syntax::parse(file, &interpreter.sources().get(file).text);
    let program = parsed.program;
    let module = interpreter.define_main(file, &program);
    let base = path.and_then(Path::parent).map(Path::to_path_buf);
    let globals = {
        let mut modules = |decl: &UseDecl| module_members(interpreter, decl, base.as_deref());
        names::globals(&program, &mut modules)
    };
    let syntax_errors: Vec<Span> = parsed.diagnostics.iter().filter_map(|d| d.span).collect();
    let (problems, names) = names::check(&program, &globals, end, &syntax_errors);
    let mut seen = HashSet::new();
    let mut found = parsed.diagnostics;
    for diagnostic in problems {
        seen.insert(key(&diagnostic));
        found.push(diagnostic);
    }
    for function in module.compiled_functions() {
        if !crate::syntax::visit::has_errors(&function.def) {
            trace(interpreter, &function, &mut seen, &mut found);
        }
    }
    for diagnostic in in_source_order(found, file) {
        interpreter.report(&diagnostic);
    }
    let status = if interpreter.errors_reported() > errors_before {
        Status::Failed
    } else {
        Status::Ok
    };
    Checked {
        status,
        file,
        program,
        names,
        traces: interpreter.take_trace_facts(),
    }
}

/// Traces one compiled function from its annotations and reports what the trace found,
/// except what the static checks already reported (`seen`) and what only an unparsed helper
/// it called could say (its syntax errors are already reported).
fn trace(
    interpreter: &mut Interpreter,
    function: &Rc<crate::eval::Function>,
    seen: &mut HashSet<Key>,
    found: &mut Vec<Diagnostic>,
) {
    if let Some(mut unannotated) = Interpreter::unannotated_parameter(function) {
        // Valid code: the function is traced when it is called, just not here.
        unannotated.severity = Severity::Note;
        unannotated.message = format!(
            "`{}` is not checked: {}",
            function.name(),
            unannotated.message
        );
        found.push(unannotated);
        return;
    }
    let (traced, notes) = interpreter.trace_from_annotations(function);
    let error = traced.err().map(|diagnostic| *diagnostic);
    for diagnostic in notes.iter().chain(&error) {
        let fresh = seen.insert(key(diagnostic));
        if fresh && diagnostic.code != Code::SyntaxError {
            found.push(diagnostic.clone());
        }
    }
}

/// What makes two diagnostics the same problem: the static checks and a trace may both find
/// an undefined name, and a loop may ask a trace the same question again.
type Key = (Code, Option<Span>, String);

fn key(diagnostic: &Diagnostic) -> Key {
    (diagnostic.code, diagnostic.span, diagnostic.message.clone())
}

/// Each problem once (the static name check and a trace may both find an unknown name), in
/// the order of the lines of `file` they are reported at: their own span there, or the call
/// in `file` that led into another module. Problems elsewhere keep their order, after.
fn in_source_order(found: Vec<Diagnostic>, file: FileId) -> Vec<Diagnostic> {
    let mut unique: Vec<Diagnostic> = Vec::with_capacity(found.len());
    for diagnostic in found {
        let repeated = unique.iter().any(|seen| {
            seen.code == diagnostic.code
                && seen.span == diagnostic.span
                && seen.message == diagnostic.message
        });
        if !repeated {
            unique.push(diagnostic);
        }
    }
    let position = |diagnostic: &Diagnostic| {
        diagnostic
            .span
            .into_iter()
            .chain(diagnostic.trace.iter().map(|frame| frame.call_site))
            .find(|span| span.file == file)
            .map_or(u32::MAX, |span| span.start)
    };
    unique.sort_by_key(position);
    unique
}

/// The members of a used module, read from its source (through the overlay) without running
/// it. The module's text joins the interpreter's sources, so its members' spans can be shown.
/// `None` when the module cannot be found or read (the `use` itself reports that).
fn module_members(
    interpreter: &mut Interpreter,
    decl: &UseDecl,
    base: Option<&Path>,
) -> Option<Rc<Members>> {
    let (name, path, text) = match &decl.target {
        UseTarget::Std(path) => {
            let name = path.get(1)?;
            let (_, source) = STD_MODULES
                .iter()
                .find(|(known, _)| **known == *name.name)?;
            (
                format!("<std>/{}.tsl", name.name),
                None,
                (*source).to_string(),
            )
        }
        UseTarget::File(relative, _) => {
            let path = match base {
                Some(base) => base.join(relative),
                None => PathBuf::from(relative),
            };
            let text = interpreter.read_source(&path).ok()?;
            let name = crate::source::normalize(&path).display().to_string();
            (name, Some(path), text)
        }
    };
    let file = interpreter.add_source(&name, path, text);
    let parsed = crate::syntax::parse(file, &interpreter.sources().get(file).text);
    let mut opaque = |_: &UseDecl| None;
    let mut members = names::globals(&parsed.program, &mut opaque);
    // A module's own uses are members too, but their contents are not checked.
    for item in &parsed.program.items {
        if let Item::Use(inner) = item
            && let Some((name, span)) = names::use_binding(inner)
        {
            members.insert(
                name,
                names::Global::Module {
                    members: None,
                    span,
                },
            );
        }
    }
    Some(Rc::new(members))
}

/// One file to analyze: its name as diagnostics show it, where it lives (to resolve the files
/// it uses), and its text.
pub struct Input {
    pub name: String,
    pub path: Option<PathBuf>,
    pub text: String,
}

/// Everything checking one file found, as data.
pub struct Analysis {
    /// Every file the analysis read: the checked one, the modules it uses, std modules.
    pub sources: SourceMap,
    pub file: FileId,
    pub program: Program,
    /// In the order they were found.
    pub diagnostics: Vec<Diagnostic>,
    pub names: NameFacts,
    /// Types and check outcomes recorded by the traces (with `Options::record_types`).
    pub traces: Vec<TraceFacts>,
    pub status: Status,
    /// Lines the `TSL_LOG` channels in the options wrote.
    pub log: Vec<String>,
    /// The interrupt flag stopped the analysis: what it found is incomplete.
    pub interrupted: bool,
}

/// Checks `input` on a fresh interpreter, reading the files it uses through `overlay`, and
/// returns what was found. Setting `interrupt` from another thread stops the analysis at its
/// next evaluation step.
pub fn analyze(
    input: Input,
    overlay: Overlay,
    options: Options,
    interrupt: Arc<AtomicBool>,
) -> Analysis {
    let collected = Rc::new(RefCell::new(Collected::default()));
    let mut interpreter = Interpreter::new(options, Box::new(Collect(collected.clone())));
    interpreter.set_overlay(overlay);
    interpreter.set_interrupt_flag(interrupt.clone());
    let checked = check_source(
        &mut interpreter,
        &input.name,
        input.path.as_deref(),
        input.text,
    );
    let sources = interpreter.take_sources();
    drop(interpreter);
    let collected = collected.take();
    Analysis {
        sources,
        file: checked.file,
        program: checked.program,
        diagnostics: collected.diagnostics,
        names: checked.names,
        traces: checked.traces,
        status: checked.status,
        log: collected.log,
        interrupted: interrupt.load(std::sync::atomic::Ordering::Relaxed),
    }
}

#[derive(Default)]
struct Collected {
    diagnostics: Vec<Diagnostic>,
    log: Vec<String>,
}

/// An output that keeps diagnostics and log lines and drops printed text.
struct Collect(Rc<RefCell<Collected>>);

impl Output for Collect {
    fn print(&mut self, _: &str) {}

    fn diagnostic(&mut self, _: &SourceMap, diagnostic: &Diagnostic) {
        self.0.borrow_mut().diagnostics.push(diagnostic.clone());
    }

    fn log(&mut self, line: &str) {
        self.0.borrow_mut().log.push(line.to_string());
    }
}
