//! `tsl check`: diagnostics without running anything (spec §9). A file is parsed (every
//! syntax error), its names and calls are checked statically (`names`), and every `@compile`
//! function is traced from its annotations alone, with input sizes as symbols that have no
//! hint: data-dependent questions and impossible shapes are errors, questions that would
//! only need a guard on an input size are notes.

pub mod names;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::diag::{Diagnostic, Severity};
use crate::eval::{Interpreter, STD_MODULES, Status, global_names};
use crate::source::FileId;
use crate::syntax::ast::{UseDecl, UseTarget};
use names::Members;

/// Checks one file, reporting everything through the interpreter's output.
pub fn check_file(interpreter: &mut Interpreter, path: &Path) -> Status {
    let Some((module, program)) = interpreter.load_definitions(path) else {
        return Status::Failed;
    };
    let mut failed = false;
    let base = path.parent().map(Path::to_path_buf);
    let mut modules = |decl: &UseDecl| module_members(decl, base.as_deref());
    let globals = names::globals(&program, &mut modules);
    let builtins: HashSet<&str> = global_names().collect();
    let mut found = names::check(&program, &globals, &|name| builtins.contains(name));
    for function in module.compiled_functions() {
        if let Some(mut unannotated) = Interpreter::unannotated_parameter(&function) {
            // Valid code: the function is traced when it is called, just not here.
            unannotated.severity = Severity::Note;
            unannotated.message = format!(
                "`{}` is not checked: {}",
                function.name(),
                unannotated.message
            );
            found.push(unannotated);
            continue;
        }
        let (traced, notes) = interpreter.trace_from_annotations(&function);
        found.extend(notes);
        if let Err(diagnostic) = traced {
            found.push(*diagnostic);
        }
    }
    for diagnostic in in_source_order(found, module.file) {
        failed |= diagnostic.is_error();
        interpreter.report(&diagnostic);
    }
    if failed { Status::Failed } else { Status::Ok }
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

/// The members of a used module, read from its source without running it.
fn module_members(decl: &UseDecl, base: Option<&Path>) -> Option<Rc<Members>> {
    let text = match &decl.target {
        UseTarget::Std(path) => {
            let name = path.get(1)?;
            let (_, source) = STD_MODULES
                .iter()
                .find(|(known, _)| **known == *name.name)?;
            (*source).to_string()
        }
        UseTarget::File(relative, _) => {
            let path = match base {
                Some(base) => base.join(relative),
                None => PathBuf::from(relative),
            };
            std::fs::read_to_string(path).ok()?
        }
    };
    let parsed = crate::syntax::parse(crate::source::FileId(0), &text);
    let mut no_modules = |_: &UseDecl| None;
    let mut members = names::globals(&parsed.program, &mut no_modules);
    // A module's own uses are members too, but their contents are not checked.
    for item in &parsed.program.items {
        if let crate::syntax::ast::Item::Use(inner) = item
            && let Some(name) = names::use_name(inner)
        {
            members.insert(name, names::Global::Variable);
        }
    }
    Some(Rc::new(members))
}
