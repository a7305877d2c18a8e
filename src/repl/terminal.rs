//! The interactive terminal: rustyline with prompts, completion and history, and a Ctrl-C
//! handler that interrupts the running cell.
//!
//! While rustyline reads a line the terminal is in raw mode, so Ctrl-C arrives as a key and
//! cancels the input. While a cell runs the terminal is back in its normal mode, Ctrl-C
//! raises SIGINT, and the handler sets the interpreter's interrupt flag: evaluation stops at
//! the next statement or expression and the REPL prints `interrupted`.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use rustyline::Editor;
use rustyline::config::{ColorMode, CompletionType, Config};
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;

use super::helper::Helper;
use super::input::{Input, Line};
use super::say;
use crate::eval::Interpreter;

const PROMPT: &str = ">>> ";
const CONTINUATION: &str = "... ";

/// Entries kept in the history file.
const HISTORY_SIZE: usize = 10_000;

pub(super) struct Terminal {
    editor: Editor<Helper, FileHistory>,
    /// Where history is kept; `None` when it is off.
    history: Option<PathBuf>,
}

impl Terminal {
    /// Sets up the editor and the Ctrl-C handler; `None` if the terminal cannot be used.
    pub(super) fn open(interpreter: &Interpreter) -> Option<Terminal> {
        let color = std::env::var_os("NO_COLOR").is_none();
        let config = Config::builder()
            .completion_type(CompletionType::List)
            .auto_add_history(false)
            .max_history_size(HISTORY_SIZE)
            .ok()?
            .color_mode(if color {
                ColorMode::Enabled
            } else {
                ColorMode::Disabled
            })
            .build();
        let mut editor = Editor::with_config(config).ok()?;
        editor.set_helper(Some(Helper::new(color)));
        let history = history_path();
        if let Some(path) = &history {
            let _ = editor.load_history(path);
        }
        let interrupt = interpreter.interrupt_flag();
        // Only one handler can exist per process; without it Ctrl-C still ends a running cell,
        // by ending the process.
        let _ = ctrlc::set_handler(move || interrupt.store(true, Ordering::Relaxed));
        say(&format!(
            "TSL {} — `:help` lists the commands, Ctrl-D leaves.\n",
            env!("CARGO_PKG_VERSION")
        ));
        Some(Terminal { editor, history })
    }
}

impl Input for Terminal {
    fn read_line(&mut self, continuation: bool) -> Line {
        let prompt = if continuation { CONTINUATION } else { PROMPT };
        match self.editor.readline(prompt) {
            Ok(line) => Line::Text(line),
            Err(ReadlineError::Interrupted) => Line::Interrupted,
            Err(_) => Line::End,
        }
    }

    /// Adds an entry to the history and appends it to the file; a file that cannot be
    /// written is ignored.
    fn remember(&mut self, entry: &str) {
        if !matches!(self.editor.add_history_entry(entry), Ok(true)) {
            return;
        }
        if let Some(path) = &self.history {
            if let Some(directory) = path.parent() {
                let _ = std::fs::create_dir_all(directory);
            }
            let _ = self.editor.append_history(path);
        }
    }

    fn refresh(&mut self, interpreter: &Interpreter) {
        if let Some(helper) = self.editor.helper_mut() {
            helper.refresh(interpreter);
        }
    }
}

/// `$TSL_HISTORY` (empty turns history off), else `tsl/history` in the user's data directory
/// (`$XDG_DATA_HOME` or `~/.local/share` on Linux).
fn history_path() -> Option<PathBuf> {
    match std::env::var_os("TSL_HISTORY") {
        Some(path) if path.is_empty() => None,
        Some(path) => Some(PathBuf::from(path)),
        None => dirs::data_dir().map(|directory| directory.join("tsl").join("history")),
    }
}
