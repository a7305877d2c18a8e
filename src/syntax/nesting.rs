//! The nesting limit, enforced on the token stream before the grammar sees it.
//!
//! The grammar's error recovery pays for every token it skips with a walk over the parser's
//! whole stack, so a syntax error inside tens of thousands of open brackets used to take time
//! quadratic in the file's size. Nesting past [`MAX_NESTING`] is an error anyway: this pass
//! finds the first bracket, or run of prefix operators and `**`, that goes past the limit
//! (counted from the outside, so the report is on the line where the code goes too deep),
//! and replaces what lies inside it by a placeholder `0`. The parser's stack then stays
//! within a constant of the limit, and parsing with recovery is linear in the file's size.
//!
//! The count is conservative: every bracket and every operator it counts adds a level to
//! the syntax tree too, so code under the limit is never cut. The parser's own check of
//! tree heights (`ParseCtx::expr` and friends) still bounds what this count does not see,
//! such as long left-associative chains.

use super::ast::MAX_NESTING;
use super::lexer::{Spanned, Tok};
use crate::diag::{Code, Diagnostic};
use crate::source::{FileId, Span};

/// The token stream with over-deep parts replaced.
pub struct Limited<'a> {
    pub tokens: Vec<Spanned<'a>>,
    /// The error for the first place nesting went past the limit.
    pub report: Option<Diagnostic>,
    /// Byte ranges whose tokens were replaced: the parser's errors there are consequences.
    pub cuts: Vec<(usize, usize)>,
}

/// The diagnostic for code nested past the limit, at `span`.
pub fn too_deep(span: Span) -> Diagnostic {
    Diagnostic::error(
        Code::SyntaxError,
        span,
        format!("this code is nested more than {MAX_NESTING} levels deep"),
    )
    .with_label("nested too deeply")
    .with_help("split it up: compute inner parts in `let` statements or functions")
}

/// The diagnostic for a chain of more than [`MAX_NESTING`] binary operators (`a + b + c + …`),
/// at `span`: each operator is a level of the syntax tree.
pub fn too_long_chain(span: Span) -> Diagnostic {
    Diagnostic::error(
        Code::SyntaxError,
        span,
        format!("this expression chains more than {MAX_NESTING} operators"),
    )
    .with_label("too many operators in one expression")
    .with_help(
        "compute it in parts (`let first = a + b + …`, then `first + …`), or put the terms in \
         a tensor and use `sum()`",
    )
}

/// Replaces every part of `tokens` nested deeper than [`MAX_NESTING`] (see the module doc).
/// `text_end` is the byte offset where the text ends.
pub fn limit(tokens: Vec<Spanned<'_>>, file: FileId, text_end: usize) -> Limited<'_> {
    let mut walk = Walk {
        input: tokens,
        output: Vec::new(),
        levels: vec![0],
        total: 0,
        after_operand: false,
        report: None,
        cuts: Vec::new(),
        file,
        text_end,
    };
    walk.run();
    Limited {
        tokens: walk.output,
        report: walk.report,
        cuts: walk.cuts,
    }
}

struct Walk<'a> {
    input: Vec<Spanned<'a>>,
    output: Vec<Spanned<'a>>,
    /// Per open bracket (and the top level first), how many prefix operators and `**` are
    /// pending in it.
    levels: Vec<usize>,
    /// Open brackets plus all pending operators: the nesting at the current token.
    total: usize,
    /// Whether the previous token ended an operand (so a `-` now is binary).
    after_operand: bool,
    report: Option<Diagnostic>,
    cuts: Vec<(usize, usize)>,
    file: FileId,
    text_end: usize,
}

impl<'a> Walk<'a> {
    fn run(&mut self) {
        let mut index = 0;
        while index < self.input.len() {
            index = self.step(index);
        }
    }

    /// Handles the token at `index`; returns the index of the next token to look at.
    fn step(&mut self, index: usize) -> usize {
        let token = self.input[index];
        let kind = token.1;
        let next = match kind {
            Tok::LParen | Tok::LBracket | Tok::LBrace => {
                if self.total + 1 > MAX_NESTING as usize {
                    self.exceeded(token);
                    return self.cut_group(index);
                }
                self.total += 1;
                self.levels.push(0);
                self.output.push(token);
                index + 1
            }
            Tok::RParen | Tok::RBracket | Tok::RBrace => {
                if self.levels.len() > 1 {
                    let pending = self.levels.pop().unwrap_or_default();
                    self.total -= 1 + pending;
                }
                self.output.push(token);
                index + 1
            }
            Tok::Not | Tok::Tilde | Tok::StarStar => self.operator(index),
            Tok::Minus if !self.after_operand => self.operator(index),
            Tok::Ident(_)
            | Tok::Int(_)
            | Tok::Float(_)
            | Tok::Str(_)
            | Tok::True
            | Tok::False
            | Tok::None
            | Tok::Dot => {
                self.output.push(token);
                index + 1
            }
            _ => {
                self.settle_level();
                self.output.push(token);
                index + 1
            }
        };
        self.after_operand = matches!(
            kind,
            Tok::Ident(_)
                | Tok::Int(_)
                | Tok::Float(_)
                | Tok::Str(_)
                | Tok::True
                | Tok::False
                | Tok::None
                | Tok::RParen
                | Tok::RBracket
        );
        next
    }

    /// A prefix operator or `**`: one more pending level until the operand ends.
    fn operator(&mut self, index: usize) -> usize {
        let token = self.input[index];
        self.output.push(token);
        if let Some(pending) = self.levels.last_mut() {
            *pending += 1;
        }
        self.total += 1;
        if self.total > MAX_NESTING as usize {
            self.exceeded(token);
            return self.cut_operand(index + 1);
        }
        index + 1
    }

    /// The operators pending at this level are done (a binary operator, a comma, a keyword).
    fn settle_level(&mut self) {
        if let Some(pending) = self.levels.last_mut() {
            self.total -= *pending;
            *pending = 0;
        }
    }

    fn exceeded(&mut self, token: Spanned<'a>) {
        if self.report.is_none() {
            self.report = Some(too_deep(Span::new(self.file, token.0, token.2)));
        }
    }

    /// Keeps the bracket at `index` and its closer, with a placeholder for all between.
    fn cut_group(&mut self, index: usize) -> usize {
        let opener = self.input[index];
        let mut depth = 0usize;
        let mut closer = None;
        for (offset, token) in self.input[index..].iter().enumerate() {
            match token.1 {
                Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
                Tok::RParen | Tok::RBracket | Tok::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        closer = Some(index + offset);
                        break;
                    }
                }
                _ => {}
            }
        }
        let end = closer.map_or(self.text_end, |at| self.input[at].0);
        self.output.push(opener);
        self.output
            .push((opener.2, Tok::Int("0"), end.max(opener.2)));
        self.cuts.push((opener.2, end.max(opener.2)));
        match closer {
            Some(at) => {
                let (start, _, stop) = self.input[at];
                self.output.push((start, matching_closer(opener.1), stop));
                self.after_operand = true;
                at + 1
            }
            None => self.input.len(),
        }
    }

    /// Replaces the operand that starts at `index` (up to the end of its expression: a
    /// comma, separator, colon, `=`, block or the bracket that closes this level) by a
    /// placeholder.
    fn cut_operand(&mut self, index: usize) -> usize {
        let mut depth = 0usize;
        let mut stop = index;
        while let Some(token) = self.input.get(stop) {
            match token.1 {
                Tok::Comma
                | Tok::Sep
                | Tok::Colon
                | Tok::Assign
                | Tok::LBrace
                | Tok::RParen
                | Tok::RBracket
                | Tok::RBrace
                    if depth == 0 =>
                {
                    break;
                }
                Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
                Tok::RParen | Tok::RBracket | Tok::RBrace => depth -= 1,
                _ => {}
            }
            stop += 1;
        }
        let from = self.output.last().map_or(0, |token| token.2);
        let to = if stop > index {
            self.input[stop - 1].2
        } else {
            from
        };
        self.output.push((from, Tok::Int("0"), to));
        self.cuts.push((from, to));
        self.settle_level();
        self.after_operand = true;
        stop
    }
}

fn matching_closer(opener: Tok<'_>) -> Tok<'static> {
    match opener {
        Tok::LParen => Tok::RParen,
        Tok::LBracket => Tok::RBracket,
        _ => Tok::RBrace,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::lexer::tokenize;

    fn limited(text: &str) -> Limited<'_> {
        let mut errors = Vec::new();
        let tokens = tokenize(text, FileId(0), 0, &mut errors);
        limit(tokens, FileId(0), text.len())
    }

    #[test]
    fn code_under_the_limit_is_left_alone() {
        let depth = MAX_NESTING as usize;
        let text = format!("let x = {}1{}", "(".repeat(depth), ")".repeat(depth));
        let result = limited(&text);
        assert!(result.report.is_none());
        assert!(result.cuts.is_empty());
        let operators = format!("let y = {}1", "- ".repeat(depth));
        assert!(limited(&operators).report.is_none());
        let chain = format!("let z = 2{}", " ** 2".repeat(depth));
        assert!(limited(&chain).report.is_none());
    }

    #[test]
    fn the_report_is_at_the_bracket_that_goes_too_deep() {
        let depth = MAX_NESTING as usize + 5;
        let text = format!(
            "let x = {}1 +{}\nprint(1)",
            "(\n".repeat(depth),
            ")".repeat(depth)
        );
        let result = limited(&text);
        let span = result.report.expect("too deep").span.expect("a span");
        // The 1001st bracket, counted from the outside, opens on line 1001.
        let line = text[..span.start as usize].matches('\n').count() + 1;
        assert_eq!(line, MAX_NESTING as usize + 1);
        let kept: Vec<Tok<'_>> = result.tokens.iter().map(|token| token.1).collect();
        // `let x =`, 1001 brackets, the placeholder, 1001 closers, then the next statement.
        assert_eq!(kept.len(), 3 + 1001 + 1 + 1001 + 5);
        assert!(kept.ends_with(&[
            Tok::Sep,
            Tok::Ident("print"),
            Tok::LParen,
            Tok::Int("1"),
            Tok::RParen
        ]));
    }

    #[test]
    fn long_operator_runs_are_cut_at_the_limit() {
        let count = MAX_NESTING as usize + 3;
        for text in [
            format!("f({}1, 2)", "- ".repeat(count)),
            format!("f(2{}, 2)", " ** 2".repeat(count)),
            format!("f({}x, 2)", "not ".repeat(count)),
        ] {
            let result = limited(&text);
            assert!(result.report.is_some(), "{text}");
            let tail: Vec<Tok<'_>> = result
                .tokens
                .iter()
                .rev()
                .take(4)
                .map(|token| token.1)
                .collect();
            assert_eq!(
                tail,
                [Tok::RParen, Tok::Int("2"), Tok::Comma, Tok::Int("0")],
                "{text}"
            );
        }
    }

    #[test]
    fn an_unclosed_deep_bracket_is_cut_to_the_end() {
        let text = "[".repeat(100_000);
        let result = limited(&text);
        assert!(result.report.is_some());
        assert_eq!(result.tokens.len(), MAX_NESTING as usize + 2);
        assert_eq!(result.cuts, [(MAX_NESTING as usize + 1, text.len())]);
    }
}
