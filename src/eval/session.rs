//! The interactive session: what the REPL asks of the interpreter.
//!
//! Cells run in one persistent module, so definitions and variables of earlier cells stay
//! visible. A cell's trailing bare expression is returned rather than discarded, so the REPL
//! can print it. Evaluation can be interrupted from another thread through a shared flag that
//! every nested evaluation checks.

use std::fmt::Write as _;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::args::{CallArgs, Positional};
use super::value::{Function, Module, Value};
use super::{CallFrame, Interpreter, LogChannels, builtins, module};
use crate::diag::{Code, Diagnostic, Result};
use crate::source::{FileId, Span};
use crate::syntax::ast::{Expr, Item, Program, Stmt, StmtKind};

/// What evaluating a cell produced.
pub enum Evaluated {
    /// The cell ran: the value of its trailing bare expression, if it ends with one.
    Done(Option<Value>),
    /// An error diagnostic was reported to the output.
    Failed,
    /// The interrupt flag stopped the cell; nothing was reported.
    Interrupted,
}

/// The error an interrupted evaluation stops with.
pub(super) fn interrupted(span: Span) -> Box<Diagnostic> {
    Diagnostic::error(Code::InputError, span, "interrupted").into()
}

impl Interpreter {
    /// Calls the session's function `name` on `arguments`, as the cell `name(arguments…)`
    /// would, without parsing anything (for programs that embed the interpreter, and for
    /// benchmarks of the per-call cost). Diagnostics are returned, not reported.
    pub fn call(&mut self, name: &str, arguments: Vec<Value>) -> Result<Value> {
        let session = self.session.clone().ok_or_else(|| {
            Box::new(Diagnostic::without_span(
                Code::NameError,
                format!("`{name}` is not defined: the session has no cells yet"),
            ))
        })?;
        let function = session.get(name).ok_or_else(|| {
            Box::new(Diagnostic::without_span(
                Code::NameError,
                format!("`{name}` is not defined"),
            ))
        })?;
        let span = Span::default();
        let mut args = CallArgs::new(span);
        args.positional = arguments
            .into_iter()
            .map(|value| Positional { value, span })
            .collect();
        self.frames.push(CallFrame {
            module: session,
            scopes: Vec::new(),
            in_function: false,
        });
        let result = self.call_value(&function, args, span);
        self.frames.pop();
        result
    }

    /// Runs `text` as the next cell of the session and returns the value of its trailing bare
    /// expression. Every diagnostic except an interruption goes to the output.
    pub fn evaluate_cell(&mut self, name: &str, text: String) -> Evaluated {
        let Some((_, mut program)) = self.begin_cell(name, None, text) else {
            return Evaluated::Failed;
        };
        let trailing = take_trailing_expression(&mut program);
        let module = self.session_module();
        let result = self
            .shielded(|this| this.run_in_module(&module, &program, trailing.as_ref()))
            .and_then(|result| result);
        self.settle(result)
    }

    /// Evaluates `text`, which must be one expression, in the session (for `:type`).
    pub fn evaluate_expression(&mut self, name: &str, text: String) -> Evaluated {
        let Some((file, mut program)) = self.begin_cell(name, None, text) else {
            return Evaluated::Failed;
        };
        let expression = take_trailing_expression(&mut program);
        let (Some(expression), true) = (expression, program.items.is_empty()) else {
            let end = self.sources.get(file).text.trim_end().len();
            self.report(&Diagnostic::error(
                Code::SyntaxError,
                Span::new(file, 0, end),
                "expected a single expression",
            ));
            return Evaluated::Failed;
        };
        let module = self.session_module();
        let result = self
            .shielded(|this| this.run_in_module(&module, &program, Some(&expression)))
            .and_then(|result| result);
        self.settle(result)
    }

    /// Runs a script in its own module, as `tsl FILE` would, then makes its globals (those
    /// defined before any error) visible in the session.
    pub fn load_file(&mut self, path: &Path) -> Evaluated {
        let text = match self.read_source(path) {
            Ok(text) => text,
            Err(diagnostic) => {
                self.report(&diagnostic);
                return Evaluated::Failed;
            }
        };
        let name = path.display().to_string();
        let Some((file, program)) = self.begin_cell(&name, Some(path), text) else {
            return Evaluated::Failed;
        };
        let loaded = self.adopt(Module::new(name, None, file));
        let result = self
            .shielded(|this| this.run_in_module(&loaded, &program, None))
            .and_then(|result| result);
        let session = self.session_module();
        for (name, value) in loaded.globals.borrow().iter() {
            session
                .globals
                .borrow_mut()
                .insert(name.clone(), value.clone());
        }
        self.settle(result)
    }

    /// Forgets every definition, variable and loaded module, and reseeds the random generator.
    pub fn reset_session(&mut self) {
        self.session = None;
        self.modules.clear();
        self.rng = ChaCha8Rng::seed_from_u64(0);
    }

    /// The flag that stops evaluation when set (by the REPL's Ctrl-C handler). Each cell
    /// clears it when it starts.
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.interrupt.clone()
    }

    /// Every name a cell can refer to: session globals, builtin functions and dtypes, sorted.
    pub fn completion_names(&self) -> Vec<String> {
        let mut names: Vec<String> = builtins::global_names().map(String::from).collect();
        if let Some(session) = &self.session {
            names.extend(session.globals.borrow().keys().map(ToString::to_string));
        }
        names.sort();
        names.dedup();
        names
    }

    /// The modules bound in the session, each with its sorted member names.
    pub fn session_modules(&self) -> Vec<(String, Vec<String>)> {
        let Some(session) = &self.session else {
            return Vec::new();
        };
        let mut modules: Vec<(String, Vec<String>)> = session
            .globals
            .borrow()
            .iter()
            .filter_map(|(name, value)| match value {
                Value::Module(module) => Some((name.to_string(), member_names(module))),
                _ => None,
            })
            .collect();
        modules.sort();
        modules
    }

    /// Tensor methods and fields, sorted.
    pub fn method_names() -> Vec<&'static str> {
        let mut names: Vec<&'static str> = builtins::method_names()
            .chain(["shape", "ndim", "dtype", "T"])
            .collect();
        names.sort_unstable();
        names
    }

    /// The standard library's modules, as `use std.NAME` names them.
    pub fn std_module_names() -> Vec<&'static str> {
        module::STD_MODULES.iter().map(|(name, _)| *name).collect()
    }

    /// `f32[2, 3]` for a tensor, else the kind of value (`int`, `list`, `function`…).
    pub fn describe_type(value: &Value) -> String {
        match value {
            Value::Tensor(tensor) => tensor.meta().to_string(),
            other => other.kind(),
        }
    }

    /// The last traced graph of the compiled function `function`, printed.
    pub fn describe_graph(&self, function: &str) -> std::result::Result<String, String> {
        let compiled = self.compiled_function(function)?;
        let cache = compiled.cache.borrow();
        let entry = cache
            .entries
            .last()
            .ok_or_else(|| not_compiled(&compiled))?;
        Ok(crate::graph::print::print_graph(
            entry.plan.graph(),
            Some(&self.sources),
        ))
    }

    /// The guards of every cached graph of the compiled function `function`, printed.
    pub fn describe_guards(&self, function: &str) -> std::result::Result<String, String> {
        let compiled = self.compiled_function(function)?;
        let cache = compiled.cache.borrow();
        if cache.entries.is_empty() {
            return Err(not_compiled(&compiled));
        }
        let mut text = String::new();
        for (index, entry) in cache.entries.iter().enumerate() {
            let _ = writeln!(text, "graph {} of {}:", index + 1, cache.entries.len());
            for condition in entry.conditions() {
                let _ = writeln!(text, "  {condition}");
            }
        }
        Ok(text)
    }

    /// Sets the log channels from a comma-separated list as `TSL_LOG` takes it (`all` for
    /// every channel); `off` turns them all off.
    pub fn set_log_channels(&mut self, channels: &str) -> std::result::Result<(), String> {
        if channels.trim() == "off" {
            self.options.log = LogChannels::default();
            return Ok(());
        }
        let (parsed, unknown) = LogChannels::parse(channels);
        if let Some(name) = unknown.first() {
            return Err(format!(
                "unknown log channel `{name}`; the channels are {}, or all, or off",
                LogChannels::NAMES.join(", ")
            ));
        }
        self.options.log = parsed;
        Ok(())
    }

    /// The log channels that are on, or `off`.
    pub fn describe_log_channels(&self) -> String {
        let channels = self.options.log;
        let on = [
            channels.dynamic,
            channels.guards,
            channels.recompiles,
            channels.graph,
        ];
        let names: Vec<&str> = LogChannels::NAMES
            .into_iter()
            .zip(on)
            .filter_map(|(name, on)| on.then_some(name))
            .collect();
        if names.is_empty() {
            "off".to_string()
        } else {
            names.join(", ")
        }
    }

    /// The module cells share, created on first use.
    pub(super) fn session_module(&mut self) -> Rc<Module> {
        if let Some(session) = &self.session {
            return session.clone();
        }
        let file = self.sources.add("<repl>", None, String::new());
        let session = self.adopt(Module::new("<session>".to_string(), None, file));
        self.session = Some(session.clone());
        session
    }

    /// Clears the interrupt flag and parses new source, reporting every syntax error; `None`
    /// if there was any.
    fn begin_cell(
        &mut self,
        name: &str,
        path: Option<&Path>,
        text: String,
    ) -> Option<(FileId, Program)> {
        self.interrupt.store(false, Ordering::Relaxed);
        let file = self.sources.add(name, path.map(Path::to_path_buf), text);
        let program = self.parse_reporting(file)?;
        Some((file, program))
    }

    /// Runs a cell's items in `module`, then its trailing expression.
    fn run_in_module(
        &mut self,
        module: &Rc<Module>,
        program: &Program,
        trailing: Option<&Expr>,
    ) -> Result<Option<Value>> {
        self.frames.push(CallFrame {
            module: module.clone(),
            scopes: Vec::new(),
            in_function: false,
        });
        let result = self
            .run_items(module, &program.items)
            .and_then(|()| trailing.map(|expr| self.eval(expr)).transpose());
        self.frames.pop();
        result
    }

    /// Turns a cell's result into what the REPL sees, reporting errors.
    fn settle(&mut self, result: Result<Option<Value>>) -> Evaluated {
        match result {
            Ok(value) => Evaluated::Done(value),
            Err(_) if self.interrupt.load(Ordering::Relaxed) => Evaluated::Interrupted,
            Err(diagnostic) => {
                self.report(&diagnostic);
                Evaluated::Failed
            }
        }
    }

    /// A `@compile` function of the session named `name` (`f`, or `module.f`).
    fn compiled_function(&self, name: &str) -> std::result::Result<Rc<Function>, String> {
        match self.session_value(name) {
            Some(Value::Function(function)) if function.compile.is_some() => Ok(function),
            Some(_) => Err(format!("`{name}` is not a @compile function")),
            None if builtins::lookup_global(name).is_some() => {
                Err(format!("`{name}` is a builtin, not a @compile function"))
            }
            None => Err(format!("unknown function `{name}`")),
        }
    }

    /// A session global, or a member of a module bound in the session (`nn.softmax`).
    fn session_value(&self, name: &str) -> Option<Value> {
        let session = self.session.as_ref()?;
        let mut parts = name.split('.');
        let mut value = session.get(parts.next()?)?;
        for part in parts {
            let Value::Module(module) = value else {
                return None;
            };
            value = module.get(part)?;
        }
        Some(value)
    }
}

fn not_compiled(function: &Function) -> String {
    format!("`{}` has not been compiled yet", function.qualified_name())
}

/// Removes a trailing expression statement from `program` and returns its expression.
fn take_trailing_expression(program: &mut Program) -> Option<Expr> {
    match program.items.pop()? {
        Item::Stmt(Stmt {
            kind: StmtKind::Expr(expr),
            ..
        }) => Some(expr),
        other => {
            program.items.push(other);
            None
        }
    }
}

fn member_names(module: &Module) -> Vec<String> {
    let mut names: Vec<String> = module
        .globals
        .borrow()
        .keys()
        .map(ToString::to_string)
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    use super::Evaluated;
    use crate::diag::Diagnostic;
    use crate::eval::{Interpreter, Options, Output};
    use crate::source::SourceMap;

    struct Silent;

    impl Output for Silent {
        fn print(&mut self, _: &str) {}
        fn diagnostic(&mut self, _: &SourceMap, _: &Diagnostic) {}
        fn log(&mut self, _: &str) {}
    }

    fn value_of(interpreter: &mut Interpreter, text: &str) -> Option<String> {
        match interpreter.evaluate_cell("<test>", text.to_string()) {
            Evaluated::Done(value) => value.map(|value| value.to_string()),
            Evaluated::Failed => Some("failed".to_string()),
            Evaluated::Interrupted => Some("interrupted".to_string()),
        }
    }

    #[test]
    fn dropping_the_interpreter_frees_the_modules_it_made() {
        // Functions point back at their module, so only the interpreter's drop frees them;
        // an editor makes an interpreter per change and would otherwise leak each one.
        let text = "@compile\nfn f(x: f32[n]) { return x * 2.0 }\n\
                    fn g(x) { return f(x) + 1.0 }\nlet y = g(ones(3))\n";
        let mut interpreter = Interpreter::new(Options::default(), Box::new(Silent));
        let status = interpreter.run_source("main.tsl", None, text.to_string());
        assert_eq!(status, crate::eval::Status::Ok);
        assert_eq!(
            value_of(&mut interpreter, "fn h() { return 1 }\nh()"),
            Some("1".into())
        );
        let made = interpreter.made.clone();
        // The main script's module and the cells' module, each held only by its functions.
        assert_eq!(
            made.iter().filter(|made| made.strong_count() > 0).count(),
            2
        );
        drop(interpreter);
        assert!(made.iter().all(|made| made.upgrade().is_none()));
    }

    #[test]
    fn cells_share_a_module_and_return_their_trailing_expression() {
        let mut interpreter = Interpreter::new(Options::default(), Box::new(Silent));
        assert_eq!(
            value_of(&mut interpreter, "let x = 2\nfn f(a) { return a + x }"),
            None
        );
        assert_eq!(
            value_of(&mut interpreter, "f(1)\nf(2)").as_deref(),
            Some("4")
        );
        assert_eq!(
            value_of(&mut interpreter, "nosuch").as_deref(),
            Some("failed")
        );
        interpreter.reset_session();
        assert_eq!(value_of(&mut interpreter, "x").as_deref(), Some("failed"));
    }

    #[test]
    fn the_interrupt_flag_stops_a_running_cell() {
        let mut interpreter = Interpreter::new(Options::default(), Box::new(Silent));
        let flag = interpreter.interrupt_flag();
        let interrupter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            flag.store(true, Ordering::Relaxed);
        });
        let text = "for i in range(3000000) { let y = i * 2 }";
        assert_eq!(
            value_of(&mut interpreter, text).as_deref(),
            Some("interrupted")
        );
        interrupter.join().expect("the interrupting thread");
        assert_eq!(value_of(&mut interpreter, "1 + 1").as_deref(), Some("2"));
    }

    /// Runs `cell` (whose last expression is a compiled call that would run for tens of
    /// seconds) with the interrupt flag set 300 ms in: it must come back interrupted, which
    /// only happens if the call itself stops (nothing is evaluated after it).
    fn interrupted_in_compiled_code(interpreter: &mut Interpreter, cell: &str) -> Option<String> {
        let flag = interpreter.interrupt_flag();
        let interrupter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            flag.store(true, Ordering::Relaxed);
        });
        let outcome = value_of(interpreter, cell);
        interrupter.join().expect("the interrupting thread");
        outcome
    }

    #[test]
    fn an_interrupt_stops_a_long_fused_kernel() {
        let mut interpreter = Interpreter::new(Options::default(), Box::new(Silent));
        // One fused kernel of 2,000 instructions over 32M elements: minutes in a debug
        // build, and about a second in a release build (far more than the 300 ms before the
        // interrupt), a fraction of a second per task of 65,536 elements.
        let setup = "@compile(dynamic = true)
fn long(x: f32[n]) {
    let y = x
    for i in range(1000) { y = y * 1.0001 + 0.5 }
    return y.sum()
}
long(ones(2))
let big = ones(32000000)";
        assert_eq!(value_of(&mut interpreter, setup), None);
        let started = std::time::Instant::now();
        let outcome = interrupted_in_compiled_code(&mut interpreter, "long(big)");
        assert_eq!(outcome.as_deref(), Some("interrupted"));
        // Stopped inside the kernel, not after it: a liveness bound far above a task's time.
        let waited = started.elapsed();
        assert!(waited < Duration::from_secs(20), "took {waited:?}");
        assert_eq!(
            value_of(&mut interpreter, "(long(ones(2)) > 0.0).item()").as_deref(),
            Some("true")
        );
    }

    #[test]
    fn an_interrupt_stops_a_compiled_call_between_operations() {
        let mut interpreter = Interpreter::new(Options::default(), Box::new(Silent));
        let setup = "@compile(dynamic = true)
fn chain(y: f32[n, n], w: f32[n, n]) {
    for i in range(300) { y = y @ w }
    return y.sum()
}
chain(ones(2, 2), ones(2, 2))
let y = ones(1024, 1024)
let w = ones(1024, 1024) * 0.001";
        assert_eq!(value_of(&mut interpreter, setup), None);
        let outcome = interrupted_in_compiled_code(&mut interpreter, "chain(y, w)");
        assert_eq!(outcome.as_deref(), Some("interrupted"));
        assert_eq!(value_of(&mut interpreter, "1 + 1").as_deref(), Some("2"));
    }

    #[test]
    fn log_channels_are_set_and_described() {
        let mut interpreter = Interpreter::new(Options::default(), Box::new(Silent));
        assert_eq!(interpreter.describe_log_channels(), "off");
        interpreter
            .set_log_channels("graph, guards")
            .expect("known channels");
        assert_eq!(interpreter.describe_log_channels(), "guards, graph");
        interpreter.set_log_channels("all").expect("all channels");
        assert_eq!(
            interpreter.describe_log_channels(),
            "dynamic, guards, recompiles, graph"
        );
        let error = interpreter
            .set_log_channels("dynamic,bogus")
            .expect_err("an unknown channel");
        assert!(error.starts_with("unknown log channel `bogus`"), "{error}");
        interpreter.set_log_channels("off").expect("off");
        assert_eq!(interpreter.describe_log_channels(), "off");
    }

    #[test]
    fn a_panic_mid_evaluation_leaves_the_session_usable() {
        let mut interpreter = Interpreter::new(Options::default(), Box::new(Silent));
        assert_eq!(value_of(&mut interpreter, "let x = 5"), None);
        let internal = interpreter
            .shielded(|this| {
                // Deep inside a call: a frame pushed, depths raised, a statement running.
                this.evaluate_cell("<test>", "let y = 1".to_string());
                let module = this.session_module();
                this.frames.push(super::CallFrame {
                    module,
                    scopes: vec![std::collections::HashMap::new()],
                    in_function: true,
                });
                this.eval_depth += 7;
                this.call_depth += 3;
                this.position = Some(crate::source::Span::new(crate::source::FileId(0), 4, 5));
                panic!("a bug");
            })
            .expect_err("the body panics");
        assert_eq!(internal.code, crate::diag::Code::InternalError);
        assert_eq!(internal.message, "internal error: a bug");
        assert_eq!(internal.span.map(|span| span.start), Some(4));
        assert!(interpreter.frames.is_empty());
        assert_eq!((interpreter.eval_depth, interpreter.call_depth), (0, 0));
        assert_eq!(value_of(&mut interpreter, "x + y").as_deref(), Some("6"));
    }
}
