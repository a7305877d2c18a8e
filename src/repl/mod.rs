//! The REPL: `tsl` with no arguments, or `tsl repl`.
//!
//! Cells run in one persistent interpreter session. A cell is read line by line until the
//! parser says it is whole ([`input::needs_more`]); a bare expression at its end prints its
//! value; commands start with `:`. On a terminal, lines come from rustyline (prompts,
//! completion, hints, history) and Ctrl-C interrupts a running cell; otherwise lines come from
//! standard input with no prompt, so scripts can be piped in.
//!
//! Code map: `input` (where lines come from, when a cell is whole), `terminal` (rustyline and
//! Ctrl-C), `helper` (rustyline's completion, hint and validation hooks), `complete`
//! (completion candidates and hints), `commands` (`:help`, `:type`, …). Only this module
//! imports rustyline.

mod commands;
mod complete;
mod helper;
mod input;
mod terminal;

use std::io::{IsTerminal, Write};

use crate::diag::render::{self, Format};
use crate::diag::{Code, Diagnostic};
use crate::eval::{Evaluated, Interpreter, Options, Output, Status, Value};
use crate::source::SourceMap;

use input::{Input, Line, Piped};

/// Runs the REPL on standard input until it ends or `:quit`.
///
/// Exit status: an interactive session always succeeds; a piped one fails if any cell or
/// command reported an error.
pub fn run(options: Options, format: Format) -> Status {
    let device = options.device;
    let mut session = Session::new(Interpreter::new(options, Box::new(Console::new(format))));
    if let Err(diagnostic) = session.interpreter.use_device(device) {
        session.interpreter.report(&diagnostic);
        return Status::Failed;
    }
    if std::io::stdin().is_terminal()
        && let Some(mut terminal) = terminal::Terminal::open(&session.interpreter)
    {
        session.run(&mut terminal);
        return Status::Ok;
    }
    session.run(&mut Piped::new(std::io::stdin().lock()))
}

/// What to do after a cell or command.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flow {
    Next,
    Quit,
}

/// One unit of input: source to evaluate, a `:` command, or the end of the input (with an
/// unfinished cell, if any).
enum Cell {
    Code(String),
    Command(String),
    End(Option<String>),
}

/// The interpreter and the REPL's bookkeeping.
struct Session {
    interpreter: Interpreter,
    /// Cells evaluated so far; cell N is named `<repl:N>` in diagnostics.
    cells: usize,
    /// Whether any cell or command reported an error.
    failed: bool,
}

impl Session {
    fn new(interpreter: Interpreter) -> Session {
        Session {
            interpreter,
            cells: 0,
            failed: false,
        }
    }

    /// Reads and runs cells until the input ends or `:quit`.
    fn run(&mut self, input: &mut dyn Input) -> Status {
        loop {
            let flow = match self.read_cell(input) {
                Cell::Code(text) => self.evaluate(text),
                Cell::Command(line) => self.guarded_command(&line),
                Cell::End(unfinished) => {
                    if let Some(text) = unfinished {
                        self.evaluate(text);
                    }
                    Flow::Quit
                }
            };
            let _ = std::io::stdout().flush();
            if flow == Flow::Quit {
                break;
            }
        }
        if self.failed {
            Status::Failed
        } else {
            Status::Ok
        }
    }

    /// Reads lines until they make a whole cell. Blank lines between cells are skipped;
    /// Ctrl-C drops the lines read so far.
    fn read_cell(&mut self, input: &mut dyn Input) -> Cell {
        input.refresh(&self.interpreter);
        let mut text = String::new();
        loop {
            let line = match input.read_line(!text.is_empty()) {
                Line::Text(line) => line,
                Line::Interrupted => {
                    text.clear();
                    continue;
                }
                Line::End => return Cell::End((!text.is_empty()).then_some(text)),
            };
            if text.is_empty() && line.trim_start().starts_with(':') {
                input.remember(line.trim());
                return Cell::Command(line);
            }
            if text.is_empty() && line.trim().is_empty() {
                continue;
            }
            text.push_str(&line);
            text.push('\n');
            if !input::needs_more(&text) {
                input.remember(text.trim_end());
                return Cell::Code(text);
            }
        }
    }

    fn next_cell_name(&mut self) -> String {
        self.cells += 1;
        format!("<repl:{}>", self.cells)
    }

    fn evaluate(&mut self, text: String) -> Flow {
        let name = self.next_cell_name();
        let outcome = self.interpreter.evaluate_cell(&name, text);
        if let Some(value) = self.settle(outcome) {
            show(&value);
        }
        Flow::Next
    }

    /// Records a failure or an interruption; the value of a cell that ran, if any.
    fn settle(&mut self, outcome: Evaluated) -> Option<Value> {
        match outcome {
            Evaluated::Done(value) => value,
            Evaluated::Failed => {
                self.failed = true;
                None
            }
            Evaluated::Interrupted => {
                self.failed = true;
                let _ = std::io::stdout().flush();
                eprintln!("interrupted");
                None
            }
        }
    }

    /// Runs a command; a panic inside it (a bug in TSL) is reported as an internal error and
    /// the session goes on.
    fn guarded_command(&mut self, line: &str) -> Flow {
        match crate::diag::panic::catch(|| self.command(line)) {
            Ok(flow) => flow,
            Err(panic) => {
                self.failed = true;
                self.interpreter.report(&panic.diagnostic(None));
                Flow::Next
            }
        }
    }

    /// Reports a command's error as an `input-error`.
    fn command_error(&mut self, message: &str, help: Option<&str>) {
        self.failed = true;
        let mut diagnostic = Diagnostic::without_span(Code::InputError, message);
        if let Some(help) = help {
            diagnostic = diagnostic.with_help(help);
        }
        self.interpreter.report(&diagnostic);
    }
}

/// Prints a value as `print` would; `none` (what statements and `print` return) prints nothing.
fn show(value: &Value) {
    if !matches!(value, Value::None) {
        say(&format!("{value}\n"));
    }
}

/// Writes REPL output (values, command results) to stdout.
fn say(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Printed text to stdout, diagnostics and log lines to stderr, written at once so they interleave with
/// prompts in order. Colour only on a terminal and when `NO_COLOR` is unset, as for scripts.
struct Console {
    format: Format,
    color: bool,
}

impl Console {
    fn new(format: Format) -> Console {
        let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        Console { format, color }
    }
}

impl Output for Console {
    fn print(&mut self, text: &str) {
        say(text);
    }

    fn diagnostic(&mut self, sources: &SourceMap, diagnostic: &Diagnostic) {
        let _ = std::io::stdout().flush();
        let mut stderr = std::io::stderr().lock();
        let _ = render::write(&mut stderr, sources, diagnostic, self.format, self.color);
    }

    fn log(&mut self, line: &str) {
        let _ = std::io::stdout().flush();
        eprintln!("{line}");
    }
}
