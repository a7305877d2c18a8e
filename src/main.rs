//! The `tsl` command line. This is the only place that exits the process.
//!
//! Exit status: 0 on success, 1 when any error diagnostic was reported, 2 for a usage error.

use std::io::{BufWriter, IsTerminal, Stdout, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use tsl::diag::render::{self, Format};
use tsl::diag::{Code, Diagnostic};
use tsl::eval::{Interpreter, Options, Output, Status, limits};
use tsl::source::SourceMap;

#[derive(Parser)]
#[command(
    name = "tsl",
    version,
    about = "TSL: a tensor scripting language with symbolic shapes",
    args_conflicts_with_subcommands = true
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
    /// Explain a diagnostic code, e.g. `tsl explain data-dependent-guard`.
    Explain { code: String },
}

#[derive(Args, Clone)]
struct RunOptions {
    /// Ignore @compile and run every function eagerly.
    #[arg(long)]
    eager: bool,
    /// Where compiled functions run.
    #[arg(long, value_enum, default_value_t = Device::Cpu)]
    device: Device,
}

#[derive(Clone, Copy, ValueEnum)]
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
        Some(Command::Run { file, options }) => run(&file, &options, format),
        Some(Command::Repl { options }) => repl(&options, format),
        Some(Command::Explain { code }) => explain(&code),
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
    on_interpreter_thread(move || run_on_this_thread(&file, &options, format))
}

/// Runs the REPL.
fn repl(options: &RunOptions, format: Format) -> ExitCode {
    let options = options.clone();
    on_interpreter_thread(move || match interpreter_options(&options, format) {
        Some(options) => tsl::repl::run(options, format),
        None => Status::Failed,
    })
}

/// Runs `work` on a thread with a stack large enough for the interpreter's depth limits.
fn on_interpreter_thread(work: impl FnOnce() -> Status + Send + 'static) -> ExitCode {
    let worker = std::thread::Builder::new()
        .name("tsl".to_string())
        .stack_size(limits::STACK_BYTES)
        .spawn(work);
    let status = match worker.map(std::thread::JoinHandle::join) {
        Ok(Ok(status)) => status,
        _ => Status::Failed,
    };
    match status {
        Status::Ok => ExitCode::SUCCESS,
        Status::Failed => ExitCode::FAILURE,
    }
}

fn run_on_this_thread(file: &Path, options: &RunOptions, format: Format) -> Status {
    let Some(options) = interpreter_options(options, format) else {
        return Status::Failed;
    };
    let mut interpreter = Interpreter::new(options, Box::new(Terminal::new(format)));
    interpreter.run_file(file)
}

/// The interpreter's options, or `None` after reporting why the command line's cannot be used.
fn interpreter_options(options: &RunOptions, format: Format) -> Option<Options> {
    if let Device::Gpu = options.device {
        let unavailable = Diagnostic::without_span(
            Code::InputError,
            "`--device gpu` is not available in this build",
        )
        .with_help("run with `--device cpu` (the default)");
        Terminal::new(format).diagnostic(&SourceMap::new(), &unavailable);
        return None;
    }
    Some(Options {
        eager: options.eager,
        ..Options::default()
    })
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
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.stdout.flush();
    }
}
