//! Where the REPL's lines come from, and when the lines read so far make a whole cell.

use std::io::BufRead;

use crate::eval::Interpreter;
use crate::source::FileId;

/// One read from the input.
pub(super) enum Line {
    /// A line, without its line ending (several lines when a multi-line entry was edited).
    Text(String),
    /// Ctrl-C while reading: drop the unfinished cell.
    Interrupted,
    /// End of input (Ctrl-D on a terminal).
    End,
}

/// A source of lines: the terminal, or piped standard input.
pub(super) trait Input {
    /// Reads one line; `continuation` is true inside an unfinished cell.
    fn read_line(&mut self, continuation: bool) -> Line;

    /// Called with each whole cell or command that was read (for history).
    fn remember(&mut self, _entry: &str) {}

    /// Called before each cell is read, so completion can see the session's names.
    fn refresh(&mut self, _interpreter: &Interpreter) {}
}

/// Lines from a non-terminal: no prompt, no editing, no history.
pub(super) struct Piped<R> {
    reader: R,
}

impl<R: BufRead> Piped<R> {
    pub(super) fn new(reader: R) -> Piped<R> {
        Piped { reader }
    }
}

impl<R: BufRead> Input for Piped<R> {
    fn read_line(&mut self, _continuation: bool) -> Line {
        let mut bytes = Vec::new();
        match self.reader.read_until(b'\n', &mut bytes) {
            Ok(0) | Err(_) => Line::End,
            Ok(_) => {
                let text = String::from_utf8_lossy(&bytes);
                Line::Text(text.trim_end_matches(['\n', '\r']).to_string())
            }
        }
    }
}

/// A line typed after an unfinished cell, to see whether the cell could go on: the parser
/// then either stops at this line (the cell may continue) or before it (it cannot).
const PROBE: &str = "probe";

/// Whether `text` is an unfinished cell: the parser ran out of input inside a block, brackets
/// or a decorated definition, and nothing before the end is wrong, so another line may finish
/// it. A definite error ends the cell at once so that it shows: a line ending in `1 +` (a
/// newline ends the statement), or an unterminated string (strings cannot span lines).
pub(super) fn needs_more(text: &str) -> bool {
    let text = text.trim_end();
    if !crate::syntax::parse(FileId(0), text).incomplete {
        return false;
    }
    let probed = format!("{text}\n{PROBE}");
    let probe_start = text.len() + 1;
    crate::syntax::parse(FileId(0), &probed)
        .diagnostics
        .iter()
        .all(|diagnostic| {
            diagnostic
                .span
                .is_none_or(|span| span.start as usize >= probe_start)
        })
}

#[cfg(test)]
mod tests {
    use super::{Input, Line, Piped, needs_more};

    #[test]
    fn open_blocks_and_brackets_need_more() {
        for text in [
            "fn f(x) {\n",
            "fn f(x) {\n    let y = x\n",
            "let x = [1,\n",
            "print(1,\n  2,\n",
            "if x > 0 {\n} else {\n",
            "@compile\n",
            "@compile(dynamic =\n",
            "fn f() {  # a comment\n",
        ] {
            assert!(needs_more(text), "{text:?}");
        }
    }

    #[test]
    fn whole_or_broken_cells_do_not() {
        for text in [
            "let x = 1\n",
            "fn f(x) {\n    return x\n}\n",
            "print(1,\n  2)\n",
            "# only a comment\n",
            "let x = )\n",
            "fn f() {\n    let x = )\n",
            "print(\"unterminated\n",
            "let x = 1 +\n",
            "fn f() {\n    let y = 1 *\n",
            "@compile fn\n",
        ] {
            assert!(!needs_more(text), "{text:?}");
        }
    }

    #[test]
    fn piped_lines_lose_their_endings() {
        let mut piped = Piped::new("a\r\nb\n\nc".as_bytes());
        let mut lines = Vec::new();
        while let Line::Text(line) = piped.read_line(false) {
            lines.push(line);
        }
        assert_eq!(lines, ["a", "b", "", "c"]);
    }
}
