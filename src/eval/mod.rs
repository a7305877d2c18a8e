//! The interpreter: runs TSL eagerly on CPU.
//!
//! Code map:
//! - `value`: runtime values and their printed form;
//! - `stmt`, `expr`, `operators`, `index`: statements, expressions, operators and indexing;
//! - `call`: user function calls, argument binding, annotations, call traces;
//! - `module`: `use` of std modules and files;
//! - `args`, `builtins/`: builtin functions and methods;
//! - `tensor`: applying a tensor operation (shape rule, then kernel).
//!
//! Every error is a [`Diagnostic`]; nothing a user types can panic the interpreter. Nesting and
//! recursion are bounded (see [`limits`]) and the CLI runs the interpreter on a thread with a
//! large stack, so deep programs end in `recursion-limit`, never a stack overflow.

mod analysis;
mod args;
mod builtins;
mod call;
mod compile;
mod expr;
mod index;
mod module;
mod operators;
mod session;
mod stmt;
mod tensor;
pub mod trace;
mod value;

use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub use builtins::{
    Def as BuiltinDef, Param as BuiltinParam, defs as builtin_defs,
    function_def as builtin_function, global_names, method_def as builtin_method,
};
pub use expr::suggest;
pub use module::STD_MODULES;
pub use session::Evaluated;
pub use value::{CompileOptions, Function, Module, TensorValue, Value};

use crate::diag::{Code, Diagnostic, Result};
use crate::source::{FileId, SourceMap, Span};
use crate::syntax::ast::{Item, Program};

/// Bounds that turn runaway programs into diagnostics.
pub mod limits {
    /// Nested function calls (user functions, std functions and builtins calling back).
    pub const CALL_DEPTH: usize = 1000;
    /// Nested evaluations of expressions and statements across all calls.
    pub const EVAL_DEPTH: usize = 20_000;
    /// Stack size for the interpreter thread: enough for `EVAL_DEPTH` in debug builds.
    pub const STACK_BYTES: usize = 1 << 30;

    std::thread_local! {
        static THREAD_STACK: std::cell::Cell<usize> = const { std::cell::Cell::new(STACK_BYTES) };
    }

    /// Records that this thread's stack is `bytes` (when a thread with [`STACK_BYTES`] could
    /// not be started, under a tight memory limit): interpreters made on it nest less deeply.
    pub fn set_thread_stack(bytes: usize) {
        THREAD_STACK.with(|stack| stack.set(bytes));
    }

    /// The nesting an interpreter on this thread allows: [`EVAL_DEPTH`], scaled down for a
    /// smaller stack.
    pub fn eval_depth() -> usize {
        let stack = THREAD_STACK.with(std::cell::Cell::get).min(STACK_BYTES);
        EVAL_DEPTH / (STACK_BYTES / stack.max(1 << 20))
    }
    /// Longest list `range()` or list repetition may build, and the most values `tolist()`
    /// may make.
    pub const LIST_LENGTH: usize = 1 << 26;
    /// The most values `tolist()` makes while tracing, where each element is a symbol.
    pub const TRACED_LIST_LENGTH: usize = 1 << 16;
    /// The most nodes and size expressions one trace may hold together: loops and recursion
    /// are unrolled when traced, and a runaway one would otherwise fill memory.
    pub const TRACE_SIZE: usize = 1 << 18;
    /// The most loop turns and calls one trace may run: each turn of an unrolled loop runs
    /// its host code again, so a long loop that adds nothing to the trace would otherwise
    /// keep `tsl check` and the editor, which trace every compiled function, busy.
    pub const TRACE_TURNS: u64 = 1 << 24;
    /// The most bytes of strings and lists one trace may build (items of a list count as
    /// the bytes of a value each): a loop building a long string each turn stays within
    /// [`TRACE_TURNS`] and [`LIST_LENGTH`] and would still run for minutes.
    pub const TRACE_BUILT_BYTES: u64 = 1 << 30;
    /// The deepest size expression a trace may build (each operation on one takes time
    /// in proportion to its depth; a loop such as `t = t // n` nests one level per turn).
    pub const EXPRESSION_DEPTH: usize = 1000;
}

/// How the interpreter runs.
#[derive(Clone, Debug, Default)]
#[allow(clippy::struct_excessive_bools)] // independent switches, each a command-line flag or test knob
pub struct Options {
    /// Ignore `@compile`: run every function eagerly.
    pub eager: bool,
    /// Which log channels print (`TSL_LOG`).
    pub log: LogChannels,
    /// Keep a copy of every traced graph as it was before the passes ran (for tests that
    /// compare graphs before and after optimisation).
    pub keep_unoptimized: bool,
    /// Time every kernel of compiled runs (`tsl run --profile`).
    pub profile: bool,
    /// Run compiled graphs without fusing their elementwise operations (each op is its own
    /// kernel), to compare with fused runs.
    pub unfused: bool,
    /// Which fused kernels of compiled graphs run on the CPU as machine code compiled for
    /// them (by default those over many elements); tests compile every one they can.
    pub native: crate::backend::Native,
    /// Where eager code and compiled graphs compute (`--device`); opened by
    /// [`Interpreter::use_device`].
    pub device: crate::backend::DeviceKind,
    /// Analysis (`tsl check`, the language server): nothing the program would do outside
    /// itself happens. Used modules bind their definitions without running their statements,
    /// `print` and `save` do nothing, and a definition that fails is reported without hiding
    /// the rest.
    pub analysis: bool,
    /// Traces from annotations record the type of every value and what each `check` became,
    /// for editors (`Interpreter::take_trace_facts`).
    pub record_types: bool,
    /// Loop turns and calls one trace may run; `None` is [`limits::TRACE_TURNS`]. Tests
    /// lower it to reach the limit in a moment.
    pub trace_turns: Option<u64>,
}

/// The log channels of spec §9, each printed to the log output when on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(clippy::struct_excessive_bools)] // four independent switches, named as the spec names them
pub struct LogChannels {
    /// `create_unbacked`, `set_replacement`, `runtime_assert` (and `guard_or_*` fallbacks).
    pub dynamic: bool,
    /// Every guard a trace records.
    pub guards: bool,
    /// Why a compiled function was traced again.
    pub recompiles: bool,
    /// Every traced graph.
    pub graph: bool,
}

impl LogChannels {
    pub const NAMES: [&'static str; 4] = ["dynamic", "guards", "recompiles", "graph"];

    /// Parses a comma-separated list such as `dynamic,guards`; the unknown names are returned.
    pub fn parse(list: &str) -> (LogChannels, Vec<String>) {
        let mut channels = LogChannels::default();
        let mut unknown = Vec::new();
        for name in list
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
        {
            match name {
                "dynamic" => channels.dynamic = true,
                "guards" => channels.guards = true,
                "recompiles" => channels.recompiles = true,
                "graph" => channels.graph = true,
                "all" => {
                    channels = LogChannels {
                        dynamic: true,
                        guards: true,
                        recompiles: true,
                        graph: true,
                    };
                }
                other => unknown.push(other.to_string()),
            }
        }
        (channels, unknown)
    }
}

/// Where printed text, diagnostics and log lines go: the terminal for the CLI, buffers for
/// tests.
pub trait Output {
    fn print(&mut self, text: &str);
    fn diagnostic(&mut self, sources: &SourceMap, diagnostic: &Diagnostic);
    /// One line of a log channel (`TSL_LOG`).
    fn log(&mut self, line: &str);
}

/// Local variables of one function call (or of top-level blocks), innermost scope last.
struct CallFrame {
    module: Rc<Module>,
    scopes: Vec<HashMap<Rc<str>, Value>>,
    in_function: bool,
}

/// One interpreter session: loaded files and modules, the random generator, and the stack.
pub struct Interpreter {
    sources: SourceMap,
    options: Options,
    out: Box<dyn Output>,
    modules: HashMap<String, Rc<Module>>,
    loading: Vec<String>,
    frames: Vec<CallFrame>,
    rng: ChaCha8Rng,
    eval_depth: usize,
    call_depth: usize,
    /// The module that cells (`run_cell`) share, created by the first cell.
    session: Option<Rc<Module>>,
    /// Set from another thread (Ctrl-C in the REPL) to stop the running evaluation.
    interrupt: Arc<AtomicBool>,
    /// The trace in progress, while a `@compile` function is traced.
    tracer: Option<Box<trace::Tracer>>,
    /// The calls in progress, innermost last, for the call traces of graph nodes (their
    /// names are written only when a node is recorded).
    call_sites: Vec<(Rc<Function>, Span)>,
    /// Traced graphs before optimisation, when `Options::keep_unoptimized` is set.
    unoptimized: Vec<crate::graph::ir::Graph>,
    /// Kernel and function times of compiled runs, when `Options::profile` is set.
    profile: Option<crate::backend::exec::Profile>,
    /// Unsaved text read instead of files on disk (an editor's open buffers).
    overlay: crate::source::Overlay,
    /// In analysis, the `use`s whose modules are being defined, outermost first: the frames
    /// of what a used module reports.
    defining: Vec<(String, Span)>,
    /// How many error diagnostics went to the output.
    errors_reported: usize,
    /// What traces from annotations recorded, when `Options::record_types` is set.
    trace_facts: Vec<trace::TraceFacts>,
    /// The device eager code and compiled graphs run on.
    devices: crate::backend::Devices,
    /// The expression or statement evaluated last: where an internal error is reported.
    position: Option<Span>,
    /// How deeply evaluations may nest on this thread's stack.
    max_eval_depth: usize,
    /// Every module this interpreter made, emptied when it is dropped (see `Drop`).
    made: Vec<std::rc::Weak<Module>>,
}

/// What running some source produced.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Status {
    Ok,
    /// At least one error diagnostic was emitted.
    Failed,
}

impl Interpreter {
    pub fn new(options: Options, out: Box<dyn Output>) -> Interpreter {
        Interpreter {
            sources: SourceMap::new(),
            out,
            modules: HashMap::new(),
            loading: Vec::new(),
            frames: Vec::new(),
            rng: ChaCha8Rng::seed_from_u64(0),
            eval_depth: 0,
            call_depth: 0,
            session: None,
            interrupt: Arc::new(AtomicBool::new(false)),
            tracer: None,
            call_sites: Vec::new(),
            unoptimized: Vec::new(),
            profile: options.profile.then(Default::default),
            overlay: crate::source::Overlay::new(),
            defining: Vec::new(),
            errors_reported: 0,
            trace_facts: Vec::new(),
            devices: crate::backend::Devices::default(),
            position: None,
            max_eval_depth: limits::eval_depth(),
            made: Vec::new(),
            options,
        }
    }

    /// `module`, shared, and remembered so that dropping the interpreter frees it.
    fn adopt(&mut self, module: Module) -> Rc<Module> {
        let module = Rc::new(module);
        self.made.retain(|made| made.strong_count() > 0);
        self.made.push(Rc::downgrade(&module));
        module
    }

    /// Computes on `kind` from now on (opening the GPU the first time). Values computed
    /// before stay where they are and move when an operation on the new device needs them.
    pub fn use_device(&mut self, kind: crate::backend::DeviceKind) -> Result<()> {
        self.devices.choose(kind).map_err(|unavailable| {
            Box::new(
                Diagnostic::without_span(Code::InputError, unavailable.message)
                    .with_help(unavailable.help),
            )
        })?;
        self.options.device = kind;
        Ok(())
    }

    /// What the GPU did in this session (`None` before it is opened).
    #[cfg(feature = "gpu")]
    pub fn gpu_stats(&self) -> Option<crate::backend::GpuStats> {
        self.devices.gpu_stats()
    }

    /// A watch on the session's GPU (`None` before it is opened), to check that dropping
    /// the interpreter closes it.
    #[cfg(feature = "gpu")]
    pub fn gpu_watch(&self) -> Option<crate::backend::GpuWatch> {
        self.devices.gpu_watch()
    }

    /// The device the session computes on, described (`cpu`, `gpu (llvmpipe ...)`).
    pub fn device(&self) -> String {
        self.devices.target.describe()
    }

    /// Runs `body` (one command, script or REPL cell); a panic inside it, which is a bug in
    /// TSL, comes back as an `internal-error` diagnostic at the code that was being evaluated,
    /// and the interpreter is left ready for the next command.
    pub fn shielded<T>(&mut self, body: impl FnOnce(&mut Self) -> T) -> Result<T> {
        let frames = self.frames.len();
        let call_sites = self.call_sites.len();
        let loading = self.loading.len();
        let (eval_depth, call_depth) = (self.eval_depth, self.call_depth);
        let tracing = self.tracer.is_some();
        self.position = None;
        let caught = crate::diag::panic::catch(|| body(self));
        caught.map_err(|panic| {
            self.frames.truncate(frames);
            self.call_sites.truncate(call_sites);
            self.loading.truncate(loading);
            (self.eval_depth, self.call_depth) = (eval_depth, call_depth);
            if !tracing {
                self.tracer = None;
            }
            Box::new(panic.diagnostic(self.position))
        })
    }

    /// [`Interpreter::shielded`] for a command that reports its own diagnostics: an internal
    /// error is reported too, and fails the command.
    pub fn reporting_panics(&mut self, body: impl FnOnce(&mut Self) -> Status) -> Status {
        self.shielded(body).unwrap_or_else(|internal| {
            self.report(&internal);
            Status::Failed
        })
    }

    /// The profile of the compiled runs so far (`None` unless `Options::profile` is set).
    pub fn profile(&self) -> Option<&crate::backend::exec::Profile> {
        self.profile.as_ref()
    }

    pub fn sources(&self) -> &SourceMap {
        &self.sources
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The graphs traced so far as they were before the passes ran (empty unless
    /// `Options::keep_unoptimized` is set).
    pub fn unoptimized_graphs(&self) -> &[crate::graph::ir::Graph] {
        &self.unoptimized
    }

    /// Reads, parses and runs a script; every diagnostic goes to the output.
    pub fn run_file(&mut self, path: &Path) -> Status {
        match self.read_source(path) {
            Ok(text) => {
                let name = path.display().to_string();
                self.run_source(&name, Some(path), text)
            }
            Err(diagnostic) => {
                self.report(&diagnostic);
                Status::Failed
            }
        }
    }

    /// Parses and runs `text` as the main script.
    pub fn run_source(&mut self, name: &str, path: Option<&Path>, text: String) -> Status {
        let file = self.sources.add(name, path.map(Path::to_path_buf), text);
        let Some(program) = self.parse_reporting(file) else {
            return Status::Failed;
        };
        let module = self.adopt(Module::new("<main>".to_string(), None, file));
        match self.run_module(&module, &program) {
            Ok(()) => Status::Ok,
            Err(diagnostic) => {
                self.report(&diagnostic);
                Status::Failed
            }
        }
    }

    /// Runs `text` in the session's persistent module: definitions and variables of earlier
    /// cells stay visible (the REPL and benchmarks use this).
    pub fn run_cell(&mut self, name: &str, text: String) -> Status {
        let file = self.sources.add(name, None, text);
        let Some(program) = self.parse_reporting(file) else {
            return Status::Failed;
        };
        let module = self.session_module();
        match self.run_module(&module, &program) {
            Ok(()) => Status::Ok,
            Err(diagnostic) => {
                self.report(&diagnostic);
                Status::Failed
            }
        }
    }

    /// Parses a script and binds its functions and `use`s without running its statements
    /// (`tsl check`, `tsl graph`). Syntax errors are reported; `None` if there was any.
    pub fn load_definitions(&mut self, path: &Path) -> Option<(Rc<Module>, Program)> {
        let text = match self.read_source(path) {
            Ok(text) => text,
            Err(diagnostic) => {
                self.report(&diagnostic);
                return None;
            }
        };
        let name = path.display().to_string();
        self.load_source_definitions(&name, Some(path), text)
    }

    /// [`Interpreter::load_definitions`] for source text.
    pub fn load_source_definitions(
        &mut self,
        name: &str,
        path: Option<&Path>,
        text: String,
    ) -> Option<(Rc<Module>, Program)> {
        let file = self.sources.add(name, path.map(Path::to_path_buf), text);
        let program = self.parse_reporting(file)?;
        let module = self.adopt(Module::new("<main>".to_string(), None, file));
        self.frames.push(CallFrame {
            module: module.clone(),
            scopes: Vec::new(),
            in_function: false,
        });
        let result = self.bind_definitions(&module, &program.items);
        self.frames.pop();
        match result {
            Ok(()) => Some((module, program)),
            Err(diagnostic) => {
                self.report(&diagnostic);
                None
            }
        }
    }

    /// Parses a file, reporting every syntax error; `None` if there was any.
    fn parse_reporting(&mut self, file: FileId) -> Option<Program> {
        let parsed = crate::syntax::parse(file, &self.sources.get(file).text);
        for diagnostic in &parsed.diagnostics {
            self.report(diagnostic);
        }
        parsed.diagnostics.is_empty().then_some(parsed.program)
    }

    pub fn report(&mut self, diagnostic: &Diagnostic) {
        if diagnostic.is_error() {
            self.errors_reported += 1;
        }
        self.out.diagnostic(&self.sources, diagnostic);
    }

    fn print(&mut self, text: &str) {
        self.out.print(text);
    }

    /// Runs a parsed module: definitions and `use`s first (so functions may call each other in
    /// any order), then statements top to bottom.
    fn run_module(&mut self, module: &Rc<Module>, program: &Program) -> Result<()> {
        self.frames.push(CallFrame {
            module: module.clone(),
            scopes: Vec::new(),
            in_function: false,
        });
        let result = self.run_items(module, &program.items);
        self.frames.pop();
        result
    }

    fn run_items(&mut self, module: &Rc<Module>, items: &[Item]) -> Result<()> {
        self.bind_definitions(module, items)?;
        for item in items {
            if let Item::Stmt(stmt) = item
                && let stmt::Flow::Return(_, span) = self.exec_stmt(stmt)?
            {
                return Err(
                    error(Code::SyntaxError, span, "`return` outside of a function").into(),
                );
            }
        }
        Ok(())
    }

    /// Binds a module's `use`s and functions, and records the globals its statements declare.
    fn bind_definitions(&mut self, module: &Rc<Module>, items: &[Item]) -> Result<()> {
        for item in items {
            match item {
                Item::Use(decl) => self.run_use(module, decl)?,
                Item::Fn(def) => self.define_function(module, def)?,
                Item::Stmt(stmt) => {
                    if let crate::syntax::ast::StmtKind::Let(target, _) = &stmt.kind {
                        module.declare(target);
                    }
                }
            }
        }
        Ok(())
    }

    fn frame(&mut self) -> &mut CallFrame {
        self.frames
            .last_mut()
            .expect("the interpreter always runs inside a frame")
    }

    fn current_module(&self) -> Rc<Module> {
        self.frames
            .last()
            .expect("the interpreter always runs inside a frame")
            .module
            .clone()
    }

    /// Looks a name up: local scopes, then the module's globals, then builtins.
    fn lookup(&self, name: &str) -> Option<Value> {
        let frame = self.frames.last()?;
        for scope in frame.scopes.iter().rev() {
            if let Some(value) = scope.get(name) {
                return Some(value.clone());
            }
        }
        frame
            .module
            .get(name)
            .or_else(|| builtins::lookup_global(name))
    }

    /// While tracing, remembers that the traced code read `name` from its module (or, when
    /// the module has no such global, as a builtin): the cached graph depends on its value.
    fn record_global_read(&mut self, name: &str) {
        let Some(frame) = self.frames.last() else {
            return;
        };
        if frame.scopes.iter().any(|scope| scope.contains_key(name))
            || frame.module.name.starts_with("std.")
        {
            return;
        }
        let module = frame.module.clone();
        let Some(tracer) = self.tracer.as_mut() else {
            return;
        };
        let known = tracer
            .globals
            .iter()
            .any(|read| Rc::ptr_eq(&read.module, &module) && &*read.name == name);
        if !known {
            let value = module.get(name);
            tracer.globals.push(compile::cache::GlobalRead {
                module,
                name: Rc::from(name),
                value,
            });
        }
    }

    /// Binds a new variable in the innermost scope (a module global at top level).
    fn define(&mut self, name: Rc<str>, value: Value) {
        let frame = self.frame();
        match frame.scopes.last_mut() {
            Some(scope) => {
                scope.insert(name, value);
            }
            None => {
                frame.module.globals.borrow_mut().insert(name, value);
            }
        }
    }

    /// Rebinds an existing variable; false if there is none this code may assign.
    fn assign(&mut self, name: &str, value: Value) -> bool {
        let frame = self.frame();
        for scope in frame.scopes.iter_mut().rev() {
            if let Some(slot) = scope.get_mut(name) {
                *slot = value;
                return true;
            }
        }
        if frame.in_function {
            return false;
        }
        let mut globals = frame.module.globals.borrow_mut();
        match globals.get_mut(name) {
            Some(slot) => {
                *slot = value;
                true
            }
            None => false,
        }
    }

    fn push_scope(&mut self) {
        self.frame().scopes.push(HashMap::new());
    }

    fn pop_scope(&mut self) {
        self.frame().scopes.pop();
    }

    /// Runs `body` one evaluation level deeper, failing past [`limits::eval_depth`] or once
    /// the interrupt flag is set.
    fn nested<T>(&mut self, span: Span, body: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.interrupt.load(Ordering::Relaxed) {
            return Err(session::interrupted(span));
        }
        if self.eval_depth >= self.max_eval_depth {
            return Err(
                error(Code::RecursionLimit, span, "evaluation nested too deeply")
                    .with_help("simplify deeply nested calls or reduce recursion")
                    .into(),
            );
        }
        self.eval_depth += 1;
        self.position = Some(span);
        let result = body(self);
        self.eval_depth -= 1;
        result
    }
}

/// A boxed error diagnostic, the interpreter's error type.
fn error(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
    Diagnostic::error(code, span, message)
}

/// A module's functions hold the module (`Function::module`) and the module holds them in its
/// globals: a cycle that reference counting never frees. Dropping the interpreter empties the
/// globals of every module it made, which frees both. (An editor analyses each change with a
/// new interpreter; without this the language server grew by kilobytes per edit.)
impl Drop for Interpreter {
    fn drop(&mut self) {
        for module in self.made.drain(..).filter_map(|made| made.upgrade()) {
            if let Ok(mut globals) = module.globals.try_borrow_mut() {
                globals.clear();
            }
        }
    }
}
