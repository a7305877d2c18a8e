//! Analysis mode (`Options::analysis`): what `tsl check` and the language server need from
//! the interpreter to look at a program without running it. Files are read through an
//! overlay of unsaved text; a program's definitions (functions, `use`s, the names its
//! top-level `let`s declare) are bound one by one, each failure reported without hiding the
//! others; a used module is defined the same way, its statements never run.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::value::Module;
use super::{CallFrame, Interpreter, module};
use crate::diag::{Diagnostic, Result};
use crate::source::{FileId, Overlay};
use crate::syntax::Parsed;
use crate::syntax::ast::{Item, Program, StmtKind, UseDecl};

impl Interpreter {
    /// Sets the unsaved text read instead of files on disk.
    pub fn set_overlay(&mut self, overlay: Overlay) {
        self.overlay = overlay;
    }

    /// The text of a script: its overlaid text, else the file's, as UTF-8.
    pub fn read_source(&self, path: &Path) -> Result<String> {
        match self.overlay.get(path) {
            Some(text) => Ok(text.to_string()),
            None => module::read_source(path),
        }
    }

    /// Adds a file to the session's sources.
    pub fn add_source(&mut self, name: &str, path: Option<PathBuf>, text: String) -> FileId {
        self.sources.add(name, path, text)
    }

    /// Hands over every source file loaded so far, leaving the session without any; for a
    /// finished analysis whose spans outlive the interpreter.
    pub fn take_sources(&mut self) -> crate::source::SourceMap {
        std::mem::take(&mut self.sources)
    }

    /// Binds the definitions of the main program `file` without running its statements,
    /// reporting each one that fails (a bad decorator, an unknown module) and going on.
    pub fn define_main(&mut self, file: FileId, program: &Program) -> Rc<Module> {
        let module = self.adopt(Module::new("<main>".to_string(), None, file));
        self.define_each(&module, &program.items);
        module
    }

    /// Defines a used module in analysis: its syntax errors are reported (the recovered
    /// program is still defined), then its definitions are bound; its statements never run.
    pub(super) fn define_used_module(
        &mut self,
        key: &str,
        alias: &str,
        decl: &UseDecl,
        file: FileId,
        parsed: &Parsed,
    ) -> Rc<Module> {
        self.defining.push((key.to_string(), decl.span));
        for diagnostic in &parsed.diagnostics {
            self.report_defining(diagnostic.clone());
        }
        let mut module = Module::new(key.to_string(), Some(alias.to_string()), file);
        module.used_at = Some(decl.span);
        let module = self.adopt(module);
        self.loading.push(key.to_string());
        self.define_each(&module, &parsed.program.items);
        self.loading.pop();
        self.defining.pop();
        self.modules.insert(key.to_string(), module.clone());
        module
    }

    fn define_each(&mut self, module: &Rc<Module>, items: &[Item]) {
        self.frames.push(CallFrame {
            module: module.clone(),
            scopes: Vec::new(),
            in_function: false,
        });
        for item in items {
            let defined = match item {
                Item::Use(decl) => self.run_use(module, decl),
                Item::Fn(def) => self.define_function(module, def),
                Item::Stmt(stmt) => {
                    if let StmtKind::Let(target, _) = &stmt.kind {
                        module.declare(target);
                    }
                    Ok(())
                }
            };
            if let Err(diagnostic) = defined {
                self.report_defining(*diagnostic);
            }
        }
        self.frames.pop();
    }

    /// Reports a problem found while defining a module, with the `use`s that led to it.
    fn report_defining(&mut self, mut diagnostic: Diagnostic) {
        for (key, span) in self.defining.iter().rev() {
            let already = diagnostic
                .trace
                .iter()
                .any(|frame| frame.function == *key && frame.call_site == *span);
            if !already {
                diagnostic.push_use(key.clone(), *span);
            }
        }
        self.report(&diagnostic);
    }

    /// Switches to analysis mode for the rest of the session (`tsl check`).
    pub fn enter_analysis(&mut self) {
        self.options.analysis = true;
    }

    /// How many error diagnostics the session has reported.
    pub fn errors_reported(&self) -> usize {
        self.errors_reported
    }

    /// Makes `flag` the interrupt flag: setting it stops the evaluation in progress.
    pub fn set_interrupt_flag(&mut self, flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        self.interrupt = flag;
    }

    /// Whether analysis mode is on: effects outside the program are skipped.
    pub(super) fn analysing(&self) -> bool {
        self.options.analysis
    }
}
