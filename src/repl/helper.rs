//! rustyline's hooks: completion, hints, hint colour and validation, over [`super::complete`]
//! and the parser.
//!
//! rustyline cannot draw a prompt on continuation lines, so a typed line that leaves a cell
//! unfinished is accepted and the REPL asks for the next line with `... `. The validator only
//! matters for an entry that already spans lines (recalled from history, or pasted): it keeps
//! such an entry in the editor until it is whole.

use std::borrow::Cow;

use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Context, Result};

use super::complete::{self, Hint, Vocabulary};
use super::input::needs_more;
use crate::eval::Interpreter;

pub(super) struct Helper {
    vocabulary: Vocabulary,
    files: FilenameCompleter,
    /// Whether hints are dimmed (the terminal shows colour).
    color: bool,
}

impl Helper {
    pub(super) fn new(color: bool) -> Helper {
        Helper {
            vocabulary: Vocabulary::default(),
            files: FilenameCompleter::new(),
            color,
        }
    }

    pub(super) fn refresh(&mut self, interpreter: &Interpreter) {
        self.vocabulary = Vocabulary::of(interpreter);
    }
}

impl rustyline::Helper for Helper {}

impl Completer for Helper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _: &Context<'_>) -> Result<(usize, Vec<Pair>)> {
        if line.trim_start().starts_with(":load ") {
            return self.files.complete_path(line, pos);
        }
        let (start, names) = complete::complete(&self.vocabulary, line, pos);
        let pairs = names
            .into_iter()
            .map(|name| Pair {
                display: name.clone(),
                replacement: name,
            })
            .collect();
        Ok((start, pairs))
    }
}

impl rustyline::hint::Hint for Hint {
    fn display(&self) -> &str {
        &self.display
    }

    fn completion(&self) -> Option<&str> {
        self.completion.as_deref()
    }
}

impl Hinter for Helper {
    type Hint = Hint;

    fn hint(&self, line: &str, pos: usize, _: &Context<'_>) -> Option<Hint> {
        complete::hint(&self.vocabulary, line, pos)
    }
}

impl Highlighter for Helper {
    fn highlight_hint<'h>(&self, hint: &'h str) -> Cow<'h, str> {
        if self.color {
            Cow::Owned(format!("\x1b[2m{hint}\x1b[0m"))
        } else {
            Cow::Borrowed(hint)
        }
    }
}

impl Validator for Helper {
    fn validate(&self, context: &mut ValidationContext<'_>) -> Result<ValidationResult> {
        if keeps_editing(context.input()) {
            Ok(ValidationResult::Incomplete)
        } else {
            Ok(ValidationResult::Valid(None))
        }
    }
}

/// Whether Enter adds a line inside the entry instead of submitting it: only for an entry
/// that already spans lines and is unfinished.
fn keeps_editing(input: &str) -> bool {
    input.contains('\n') && needs_more(input)
}

#[cfg(test)]
mod tests {
    use rustyline::completion::{Candidate, Completer, Pair};
    use rustyline::history::DefaultHistory;

    use super::{Helper, keeps_editing};
    use crate::repl::complete::Vocabulary;

    fn replacements(pairs: &[Pair]) -> Vec<&str> {
        pairs.iter().map(Candidate::replacement).collect()
    }

    #[test]
    fn the_validator_keeps_unfinished_multi_line_entries() {
        assert!(keeps_editing("fn f(x) {\n    return x"));
        assert!(!keeps_editing("fn f(x) {\n    return x\n}"));
        assert!(
            !keeps_editing("fn f(x) {"),
            "a single line goes on with a prompt"
        );
        assert!(!keeps_editing("let x = )\nfn f() {"));
    }

    #[test]
    fn completion_goes_through_the_helper() {
        let mut helper = Helper::new(false);
        helper.vocabulary = Vocabulary {
            names: vec!["zeros".to_string()],
            modules: Vec::new(),
        };
        let history = DefaultHistory::new();
        let context = rustyline::Context::new(&history);
        let (start, pairs) = helper.complete("x = ze", 6, &context).expect("completes");
        assert_eq!((start, replacements(&pairs)), (4, vec!["zeros"]));
        let (_, pairs) = helper.complete("y.arg", 5, &context).expect("completes");
        assert_eq!(replacements(&pairs), ["argmax", "argmin", "argsort"]);
    }
}
