//! The `tsl` command line. This is the only place that exits the process.
//!
//! Exit status: 0 on success, 1 when any error diagnostic was reported, 2 for a usage error.

use std::io::{BufWriter, IsTerminal, Stdout, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use tsl::graph::passes::FusionPolicy;

use clap::{Args, Parser, Subcommand, ValueEnum};

use tsl::backend::DeviceKind;
use tsl::diag::render::{self, Format};
use tsl::diag::{Code, Diagnostic};
use tsl::eval::{Interpreter, LogChannels, Options, Output, Status, limits};
use tsl::source::SourceMap;

#[derive(Parser)]
#[command(
    name = "tsl",
    version,
    about = "TSL: a tensor scripting language with symbolic shapes"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// A script to run (the same as `tsl run FILE`).
    file: Option<PathBuf>,
    #[command(flatten)]
    run: RunOptions,
    /// How diagnostics are written to stderr.
    #[arg(long, value_enum, default_value_t = ErrorFormat::Human, global = true)]
    error_format: ErrorFormat,
}

#[derive(Subcommand)]
enum Command {
    /// Run a script.
    Run {
        file: PathBuf,
        #[command(flatten)]
        options: RunOptions,
    },
    /// Start the interactive session (what `tsl` with no arguments does).
    Repl {
        #[command(flatten)]
        options: RunOptions,
    },
    /// Static diagnostics without running: syntax, names, calls, and a symbolic trace of
    /// every @compile function from its annotations.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print the traced graph of a function (traced from its annotations), with its guards and
    /// asserts.
    Graph {
        file: PathBuf,
        /// The function to trace.
        #[arg(long = "fn", value_name = "NAME")]
        function: String,
        /// Print Graphviz DOT instead of text.
        #[arg(long)]
        dot: bool,
        /// Print the graph as it will run: elementwise groups fused, with their members.
        #[arg(long)]
        fused: bool,
    },
    /// Explain a diagnostic code, e.g. `tsl explain data-dependent-guard`.
    Explain { code: String },
    /// Run the language server on stdin and stdout (for editors): diagnostics as `tsl check`
    /// reports them, hover with symbolic shapes, go to definition, completion, inlay hints.
    Lsp,
}

#[derive(Args, Clone)]
struct RunOptions {
    /// Ignore @compile and run every function eagerly.
    #[arg(long)]
    eager: bool,
    /// After the run, print a table of the time spent in each compiled function and kernel.
    #[arg(long)]
    profile: bool,
    /// Where eager code and compiled functions run [default: $TSL_DEVICE, else cpu].
    #[arg(long, value_enum)]
    device: Option<Device>,
}

impl RunOptions {
    /// These options, with those written before the subcommand (`tsl --eager run FILE`).
    fn or(&self, before: &RunOptions) -> RunOptions {
        RunOptions {
            eager: self.eager || before.eager,
            profile: self.profile || before.profile,
            device: self.device.or(before.device),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Device {
    Cpu,
    Gpu,
}

#[derive(Clone, Copy, ValueEnum)]
enum ErrorFormat {
    Human,
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let format = match cli.error_format {
        ErrorFormat::Human => Format::Human,
        ErrorFormat::Json => Format::Json,
    };
    match cli.command {
        Some(Command::Run { file, options }) => run(&file, &options.or(&cli.run), format),
        Some(Command::Repl { options }) => repl(&options.or(&cli.run), format),
        Some(Command::Check { files }) => on_interpreter_thread(format, move |interpreter| {
            let mut status = Status::Ok;
            for file in &files {
                let checked = interpreter
                    .reporting_panics(|interpreter| tsl::check::check_file(interpreter, file));
                if checked == Status::Failed {
                    status = Status::Failed;
                }
            }
            status
        }),
        Some(Command::Graph {
            file,
            function,
            dot,
            fused,
        }) => on_interpreter_thread(format, move |interpreter| {
            interpreter.reporting_panics(|interpreter| {
                print_graph(interpreter, &file, &function, GraphForm { dot, fused })
            })
        }),
        Some(Command::Explain { code }) => explain(&code),
        Some(Command::Lsp) => match tsl::lsp::run() {
            Status::Ok => ExitCode::SUCCESS,
            Status::Failed => ExitCode::FAILURE,
        },
        None => match cli.file {
            Some(file) => run(&file, &cli.run, format),
            None => repl(&cli.run, format),
        },
    }
}

/// Runs a script.
fn run(file: &Path, options: &RunOptions, format: Format) -> ExitCode {
    let file = file.to_path_buf();
    let options = options.clone();
    on_big_stack(format, move || run_on_this_thread(&file, &options, format))
}

/// Runs the REPL.
fn repl(options: &RunOptions, format: Format) -> ExitCode {
    let options = options.clone();
    on_big_stack(format, move || {
        match interpreter_options(&options, format) {
            Some(options) => tsl::repl::run(options, format),
            None => Status::Failed,
        }
    })
}

/// Runs `body` with a fresh interpreter on a large-stack thread.
fn on_interpreter_thread(
    format: Format,
    body: impl FnOnce(&mut Interpreter) -> Status + Send + 'static,
) -> ExitCode {
    on_big_stack(format, move || {
        let mut output = Terminal::new(format);
        let log = log_channels(&mut output);
        let options = Options {
            log,
            ..Options::default()
        };
        let mut interpreter = Interpreter::new(options, Box::new(output));
        body(&mut interpreter)
    })
}

/// Runs `body` on a thread with the interpreter's large stack (a smaller one, with less
/// nesting allowed, when a memory limit leaves no room for it). A panic that escapes the
/// interpreter's own guard is still reported as an internal error, never silently.
fn on_big_stack(format: Format, body: impl FnOnce() -> Status + Send + 'static) -> ExitCode {
    type Body = Box<dyn FnOnce() -> Status + Send>;
    let pending: Arc<Mutex<Option<Body>>> = Arc::new(Mutex::new(Some(Box::new(body))));
    let mut status = None;
    for stack in [
        limits::STACK_BYTES,
        limits::STACK_BYTES / 8,
        limits::STACK_BYTES / 64,
    ] {
        let body = Arc::clone(&pending);
        let worker = std::thread::Builder::new()
            .name("tsl".to_string())
            .stack_size(stack)
            .spawn(move || {
                limits::set_thread_stack(stack);
                let body = body.lock().ok().and_then(|mut body| body.take());
                body.map(|body| {
                    tsl::diag::panic::catch(body).unwrap_or_else(|panic| {
                        let mut output = Terminal::new(format);
                        output.diagnostic(&SourceMap::new(), &panic.diagnostic(None));
                        Status::Failed
                    })
                })
            });
        if let Ok(worker) = worker {
            status = Some(worker.join().ok().flatten().unwrap_or(Status::Failed));
            break;
        }
    }
    let status = status.unwrap_or_else(|| {
        let diagnostic = Diagnostic::without_span(
            Code::InputError,
            "cannot start: no thread with a large enough stack can be created",
        )
        .with_help("the memory limit of this process is too low; raise it (ulimit -v)");
        Terminal::new(format).diagnostic(&SourceMap::new(), &diagnostic);
        Status::Failed
    });
    match status {
        Status::Ok => ExitCode::SUCCESS,
        Status::Failed => ExitCode::FAILURE,
    }
}

/// `tsl graph`: the graph of one function traced from its annotations.
/// How `tsl graph` shows a graph.
#[derive(Clone, Copy)]
struct GraphForm {
    dot: bool,
    fused: bool,
}

fn print_graph(interpreter: &mut Interpreter, file: &Path, name: &str, form: GraphForm) -> Status {
    let Some((module, _)) = interpreter.load_definitions(file) else {
        return Status::Failed;
    };
    let Some(function) = module.function(name) else {
        let known: Vec<String> = module.function_names();
        let diagnostic = Diagnostic::without_span(
            Code::NameError,
            format!("`{}` defines no function `{name}`", file.display()),
        )
        .with_help(if known.is_empty() {
            "the file defines no functions".to_string()
        } else {
            format!("its functions are {}", known.join(", "))
        });
        interpreter.report(&diagnostic);
        return Status::Failed;
    };
    let (traced, notes) = interpreter.trace_from_annotations(&function);
    for note in &notes {
        interpreter.report(note);
    }
    match traced {
        Ok(mut traced) => {
            if form.fused {
                tsl::graph::passes::fuse(&mut traced.graph, &FusionPolicy::default());
            }
            let text = if form.dot {
                tsl::graph::dot::to_dot(&traced.graph)
            } else {
                tsl::graph::print::print_graph(&traced.graph, Some(interpreter.sources()))
            };
            print!("{text}");
            Status::Ok
        }
        Err(diagnostic) => {
            let failed = diagnostic.is_error();
            interpreter.report(&diagnostic);
            if failed { Status::Failed } else { Status::Ok }
        }
    }
}

fn run_on_this_thread(file: &Path, options: &RunOptions, format: Format) -> Status {
    let Some(options) = interpreter_options(options, format) else {
        return Status::Failed;
    };
    let device = options.device;
    let mut interpreter = Interpreter::new(options, Box::new(Terminal::new(format)));
    if let Err(diagnostic) = interpreter.use_device(device) {
        interpreter.report(&diagnostic);
        return Status::Failed;
    }
    let status = interpreter.reporting_panics(|interpreter| interpreter.run_file(file));
    if let Some(profile) = interpreter.profile() {
        if profile.is_empty() {
            eprintln!("profile: no compiled function ran");
        } else {
            eprint!("{}", profile.render());
        }
    }
    status
}

/// The interpreter's options, or `None` after reporting why the command line's cannot be used.
fn interpreter_options(options: &RunOptions, format: Format) -> Option<Options> {
    let mut output = Terminal::new(format);
    let device = match options.device {
        Some(Device::Cpu) => DeviceKind::Cpu,
        Some(Device::Gpu) => DeviceKind::Gpu,
        None => match std::env::var("TSL_DEVICE") {
            Ok(name) if !name.trim().is_empty() => match DeviceKind::parse(&name) {
                Some(kind) => kind,
                None => {
                    let bad = Diagnostic::without_span(
                        Code::InputError,
                        format!("TSL_DEVICE={name} names no device"),
                    )
                    .with_help("set TSL_DEVICE to `cpu` or `gpu`, or unset it");
                    output.diagnostic(&SourceMap::new(), &bad);
                    return None;
                }
            },
            _ => DeviceKind::Cpu,
        },
    };
    Some(Options {
        eager: options.eager,
        profile: options.profile,
        log: log_channels(&mut output),
        device,
        ..Options::default()
    })
}

/// The log channels `TSL_LOG` turns on; unknown names are warned about and ignored.
fn log_channels(output: &mut Terminal) -> LogChannels {
    let Ok(list) = std::env::var("TSL_LOG") else {
        return LogChannels::default();
    };
    let (channels, unknown) = LogChannels::parse(&list);
    if !unknown.is_empty() {
        let mut warning = Diagnostic::without_span(
            Code::InputError,
            format!("TSL_LOG names unknown channels: {}", unknown.join(", ")),
        )
        .with_help(format!(
            "the channels are {}",
            LogChannels::NAMES.join(", ")
        ));
        warning.severity = tsl::diag::Severity::Warning;
        output.diagnostic(&SourceMap::new(), &warning);
    }
    channels
}

fn explain(code: &str) -> ExitCode {
    match Code::from_name(code) {
        Some(code) => {
            println!("{code}\n\n{}", code.explanation());
            ExitCode::SUCCESS
        }
        None => {
            let known: Vec<&str> = Code::ALL.iter().map(|code| code.as_str()).collect();
            eprintln!("unknown code `{code}`; the codes are: {}", known.join(", "));
            ExitCode::from(2)
        }
    }
}

/// Printed text to stdout, diagnostics to stderr (stdout flushed first, so they interleave in
/// program order on a terminal).
struct Terminal {
    stdout: BufWriter<Stdout>,
    format: Format,
    color: bool,
}

impl Terminal {
    fn new(format: Format) -> Terminal {
        let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        Terminal {
            stdout: BufWriter::new(std::io::stdout()),
            format,
            color,
        }
    }
}

impl Output for Terminal {
    fn print(&mut self, text: &str) {
        let _ = self.stdout.write_all(text.as_bytes());
    }

    fn diagnostic(&mut self, sources: &SourceMap, diagnostic: &Diagnostic) {
        let _ = self.stdout.flush();
        let mut stderr = std::io::stderr().lock();
        let _ = render::write(&mut stderr, sources, diagnostic, self.format, self.color);
    }

    fn log(&mut self, line: &str) {
        let _ = self.stdout.flush();
        eprintln!("{line}");
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.stdout.flush();
    }
}
