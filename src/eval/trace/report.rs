//! Data-dependent diagnostics (spec §7): the expression in TSL syntax at the user's line, for
//! each symbol where it was created, its range and the facts known about it, and the checks
//! (in the user's own names where a variable holds the symbol) or the `cond` that would
//! decide the question.

use std::fmt::Write as _;

use super::symbolic::Ask;
use crate::diag::{Code, Diagnostic};
use crate::eval::Interpreter;
use crate::eval::value::Value;
use crate::graph::print::range;
use crate::source::Span;
use crate::sym::{ExprId, SymbolId};

impl Interpreter {
    pub(in crate::eval) fn data_dependent_guard(
        &mut self,
        cond: ExprId,
        span: Span,
        ask: Ask,
    ) -> Box<Diagnostic> {
        let shown = self.env().display(cond);
        let source = self.sources.snippet(span).trim().to_string();
        let mut diagnostic = Diagnostic::error(
            Code::DataDependentGuard,
            span,
            format!("could not guard on data-dependent expression {shown}"),
        )
        .with_label("this condition depends on data");
        self.explain_into(&mut diagnostic, cond);
        let help = match ask {
            Ask::SizeOblivious => self.size_oblivious_help(cond, &source),
            _ => format!(
                "if it always holds, state it before this line: `check {source}`; to branch on \
                 data, use cond(pred, then_fn, else_fn, args){}",
                self.extra_suggestions(cond)
            ),
        };
        diagnostic.with_help(help).into()
    }

    /// The assumption of size_oblivious() covers size-like symbols only: name the others.
    fn size_oblivious_help(&mut self, question: ExprId, source: &str) -> String {
        let explanation = self.env().explain(question);
        let unmarked: Vec<String> = explanation
            .symbols
            .iter()
            .filter(|report| !report.size_like)
            .map(|report| {
                let name = self.variable_of(report.symbol);
                format!(
                    "`check_size {}`",
                    name.unwrap_or_else(|| report.name.clone())
                )
            })
            .collect();
        if unmarked.is_empty() {
            return format!(
                "size_oblivious() assumes sizes are at least 2 and still cannot decide this; \
                 state what you know with `check {source}` before this line"
            );
        }
        format!(
            "size_oblivious() assumes only size-like symbols are at least 2; if they are sizes, \
             say so with {} before this line, or state what you know with `check {source}`",
            unmarked.join(", ")
        )
    }

    pub(in crate::eval) fn data_dependent_int(
        &mut self,
        expr: ExprId,
        span: Span,
        why: &str,
    ) -> Box<Diagnostic> {
        let shown = self.env().display(expr);
        let mut diagnostic = Diagnostic::error(
            Code::DataDependentInt,
            span,
            format!("could not get a concrete int for data-dependent expression {shown}"),
        )
        .with_label(format!("{why} needs a concrete value"));
        self.explain_into(&mut diagnostic, expr);
        let help = format!(
            "a loop count or list index cannot depend on tensor data in compiled code; compute \
             with tensor operations instead, or pin the value with `check {} == …`{}",
            self.name_of_expr(expr).unwrap_or(shown),
            self.extra_suggestions(expr)
        );
        diagnostic.with_help(help).into()
    }

    /// One note per symbol of the question: origin, range, size-likeness and known facts.
    fn explain_into(&mut self, diagnostic: &mut Diagnostic, question: ExprId) {
        let explanation = self.env().explain(question);
        for report in &explanation.symbols {
            let mut note = format!("{} ", report.name);
            if let Some(variable) = self.variable_of(report.symbol)
                && variable != report.name
            {
                let _ = write!(note, "(the value of `{variable}`) ");
            }
            match &report.origin {
                Some(origin) => {
                    let _ = write!(note, "was created by {}", self.origin_text(origin));
                    if let Some(call) = self.origin_call(report.symbol) {
                        let _ = write!(
                            note,
                            ", inside `{}` called at {}",
                            call.function,
                            self.sources.location(call.call_site)
                        );
                    }
                }
                None => note.push_str("is an input size"),
            }
            let _ = write!(note, ", range {}", range(report.range));
            if report.size_like {
                note.push_str(", size-like");
            }
            if report.facts.is_empty() {
                note.push_str("; nothing else is known about it");
            } else {
                let _ = write!(note, "; known: {}", report.facts.join(", "));
            }
            diagnostic.notes.push(note);
        }
    }

    /// What made a symbol, as the user wrote it: the builtin (`tolist()`), or for indexing
    /// and slicing the expression itself (`boolean mask indexing `x[x > 0]``), then where.
    fn origin_text(&self, origin: &crate::sym::Origin) -> String {
        let location = self.sources.location(origin.span);
        if origin.operation.ends_with(')') {
            return format!("{} at {location}", origin.operation);
        }
        let source = self.sources.snippet(origin.span);
        let first_line = source.lines().next().unwrap_or_default().trim();
        if first_line.is_empty() || first_line.len() > 60 || first_line.len() < source.trim().len()
        {
            return format!("{} at {location}", origin.operation);
        }
        format!("{} `{first_line}` at {location}", origin.operation)
    }

    fn origin_call(&self, symbol: SymbolId) -> Option<crate::diag::Frame> {
        self.tracer.as_ref()?.origin_calls.get(&symbol).cloned()
    }

    /// The engine's other suggestions (`check_size u0`, bounds), in the user's names; the
    /// question itself and its negation are left out (the help already says how to state it).
    fn extra_suggestions(&mut self, question: ExprId) -> String {
        let explanation = self.env().explain(question);
        let shown = self.env().display(question);
        let negated = self
            .env()
            .not(question)
            .map(|negation| self.env().display(negation))
            .unwrap_or_default();
        let mut extra = Vec::new();
        let useful = explanation.suggestions.iter().filter(|suggestion| {
            **suggestion != format!("check {shown}") && **suggestion != format!("check {negated}")
        });
        for suggestion in useful.take(3) {
            let mut text = suggestion.clone();
            for report in &explanation.symbols {
                if let Some(variable) = self.variable_of(report.symbol) {
                    text = replace_word(&text, &report.name, &variable);
                }
            }
            extra.push(format!("`{text}`"));
        }
        if extra.is_empty() {
            String::new()
        } else {
            format!("; other checks that would decide it: {}", extra.join(", "))
        }
    }

    /// The innermost variable whose value is exactly this symbol.
    fn variable_of(&mut self, symbol: SymbolId) -> Option<String> {
        let expr = self.env().symbol_expr(symbol);
        self.name_of_expr(expr)
    }

    /// The innermost variable holding exactly `expr` (the first name in order on a tie).
    fn name_of_expr(&self, expr: ExprId) -> Option<String> {
        let frame = self.frames.last()?;
        frame.scopes.iter().rev().find_map(|scope| {
            scope
                .iter()
                .filter(|(_, value)| matches!(value, Value::SymInt(held) if *held == expr))
                .map(|(name, _)| name.to_string())
                .min()
        })
    }
}

/// `text` with whole-word occurrences of `word` replaced.
pub(super) fn replace_word(text: &str, word: &str, replacement: &str) -> String {
    let mut result = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + word.len()..].chars().next();
        let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric() && c != '_');
        result.push_str(&rest[..at]);
        if boundary(before) && boundary(after) {
            result.push_str(replacement);
        } else {
            result.push_str(word);
        }
        rest = &rest[at + word.len()..];
    }
    result.push_str(rest);
    result
}
