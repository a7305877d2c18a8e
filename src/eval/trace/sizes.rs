//! The shape rules' `Sizes` while tracing: size arithmetic builds symbolic expressions,
//! questions go to the symbolic engine (deciding from facts, guarding on input sizes), and
//! what a rule assumes on its general path becomes a runtime assert.
//!
//! A rule writes sizes into its messages with `Sizes::show`. While tracing, a symbolic size
//! is written as a mark standing for its expression, so that one message serves twice: as a
//! trace-time error the marks become values where the input sizes decide them, else the
//! symbols' names ([`Tracer::unmark`]); as the message of a runtime assert they become
//! template parts, filled with the run's values ([`Tracer::message_template`]), so a
//! compiled failure reads exactly as the eager one does. Tensor types in messages mark their
//! symbolic sizes the same way (`Meta`'s `Display`), so every diagnostic that leaves a trace is
//! unmarked where the trace ends ([`Tracer::unmark_diagnostic`]).

use super::Tracer;
use crate::diag::{Code, Diagnostic, Frame};
use crate::graph::ir::{Part, Template};
use crate::graph::shape::{
    Cmp, Dim, MARK_CLOSE as CLOSE, MARK_OPEN as OPEN, RuleError, RuleResult, Sizes,
};
use crate::source::Span;
use crate::sym::{
    CheckOutcome, Decision, ExprId, IntDecision, Mode, Origin, POS_INF, Range, SymError,
};

pub struct TraceSizes<'a> {
    tracer: &'a mut Tracer,
    span: Span,
    trace: &'a [Frame],
}

impl<'a> TraceSizes<'a> {
    pub fn new(tracer: &'a mut Tracer, span: Span, trace: &'a [Frame]) -> TraceSizes<'a> {
        TraceSizes {
            tracer,
            span,
            trace,
        }
    }

    fn arithmetic(
        &mut self,
        a: Dim,
        b: Dim,
        concrete: fn(i64, i64) -> Option<i64>,
        symbolic: fn(&mut crate::sym::ShapeEnv, ExprId, ExprId) -> Result<ExprId, SymError>,
    ) -> RuleResult<Dim> {
        if let (Some(x), Some(y)) = (a.known(), b.known()) {
            return concrete(x, y)
                .map(Dim::Known)
                .ok_or_else(|| RuleError::value("size arithmetic overflows 64-bit integers"));
        }
        let (x, y) = (self.tracer.expr(a), self.tracer.expr(b));
        let result = symbolic(self.tracer.env(), x, y).map_err(sym_error)?;
        Ok(self.tracer.dim(result))
    }

    fn compare(&mut self, a: Dim, op: Cmp, b: Dim) -> RuleResult<ExprId> {
        let (x, y) = (self.tracer.expr(a), self.tracer.expr(b));
        self.tracer.env().compare(op, x, y).map_err(sym_error)
    }

    /// Whether `cond` mentions input sizes only, with no hints to decide it by.
    fn hintless_backed(&mut self, cond: ExprId) -> bool {
        self.tracer.hintless && self.tracer.graph.env.unbacked_symbols(cond).is_empty()
    }

    /// In a trace without hints, takes a backed-only condition as given and notes it.
    fn assume(&mut self, cond: ExprId, message: &str) -> RuleResult<()> {
        match self.tracer.env().assume(cond) {
            Ok(true) => {
                let shown = self.tracer.show(cond);
                let label = self.tracer.unmark(message);
                self.tracer.notes.push(
                    Diagnostic::note(
                        Code::Specialization,
                        self.span,
                        format!("this trace assumes {shown}"),
                    )
                    .with_label(label),
                );
                Ok(())
            }
            Ok(false) => Err(RuleError::shape(message)),
            Err(error) => Err(sym_error(error)),
        }
    }
}

pub fn sym_error(error: SymError) -> RuleError {
    match error {
        SymError::DivisionByZero => RuleError::value("size division by zero"),
        other => RuleError::value(format!("size arithmetic failed: {other}")),
    }
}

impl Sizes for TraceSizes<'_> {
    fn add(&mut self, a: Dim, b: Dim) -> RuleResult<Dim> {
        self.arithmetic(a, b, i64::checked_add, crate::sym::ShapeEnv::add)
    }

    fn sub(&mut self, a: Dim, b: Dim) -> RuleResult<Dim> {
        self.arithmetic(a, b, i64::checked_sub, crate::sym::ShapeEnv::sub)
    }

    fn mul(&mut self, a: Dim, b: Dim) -> RuleResult<Dim> {
        self.arithmetic(a, b, i64::checked_mul, crate::sym::ShapeEnv::mul)
    }

    fn floor_div(&mut self, a: Dim, b: Dim) -> RuleResult<Dim> {
        self.arithmetic(
            a,
            b,
            crate::eval::operators::floor_div,
            crate::sym::ShapeEnv::floor_div,
        )
    }

    fn modulo(&mut self, a: Dim, b: Dim) -> RuleResult<Dim> {
        self.arithmetic(
            a,
            b,
            |x, y| {
                x.checked_rem(y).map(|r| {
                    if r != 0 && (r < 0) != (y < 0) {
                        r + y
                    } else {
                        r
                    }
                })
            },
            crate::sym::ShapeEnv::modulo,
        )
    }

    fn max(&mut self, a: Dim, b: Dim) -> Dim {
        self.arithmetic(a, b, |x, y| Some(x.max(y)), crate::sym::ShapeEnv::max)
            .unwrap_or(a)
    }

    fn min(&mut self, a: Dim, b: Dim) -> Dim {
        self.arithmetic(a, b, |x, y| Some(x.min(y)), crate::sym::ShapeEnv::min)
            .unwrap_or(a)
    }

    fn decide(&mut self, a: Dim, op: Cmp, b: Dim) -> Option<bool> {
        if let (Some(x), Some(y)) = (a.known(), b.known()) {
            return Some(op.holds(x, y));
        }
        let cond = self.compare(a, op, b).ok()?;
        let mode = if self.tracer.hintless {
            Mode::KnownTrue
        } else {
            Mode::Normal
        };
        match self.tracer.env().evaluate_bool(cond, mode, self.span) {
            Decision::Decided(value) | Decision::Guarded(value) => Some(value),
            _ => None,
        }
    }

    fn require(&mut self, a: Dim, op: Cmp, b: Dim, message: &dyn Fn() -> String) -> RuleResult<()> {
        if let (Some(x), Some(y)) = (a.known(), b.known()) {
            return if op.holds(x, y) {
                Ok(())
            } else {
                Err(RuleError::shape(message()))
            };
        }
        let cond = self.compare(a, op, b)?;
        let known = self
            .tracer
            .env()
            .evaluate_bool(cond, Mode::KnownTrue, self.span);
        if let Decision::Decided(value) = known {
            return if value {
                Ok(())
            } else {
                Err(RuleError::shape(message()))
            };
        }
        if self.hintless_backed(cond) {
            return self.assume(cond, &message());
        }
        match self.tracer.env().check(cond, self.span) {
            CheckOutcome::AlreadyTrue | CheckOutcome::Guarded(true) => Ok(()),
            CheckOutcome::False | CheckOutcome::Guarded(false) => Err(RuleError::shape(message())),
            CheckOutcome::Learned => {
                // Where the assumption fails, eager code raises this shape error.
                let message = self.tracer.message_template(&message());
                self.tracer
                    .emit_asserts(Code::ShapeError, &message, self.span, self.trace);
                Ok(())
            }
            CheckOutcome::Error(error) => Err(RuleError::value(format!("{error}"))),
        }
    }

    fn assume_general(
        &mut self,
        a: Dim,
        op: Cmp,
        b: Dim,
        error: &dyn Fn() -> String,
        assumption: &dyn Fn() -> String,
    ) -> RuleResult<()> {
        if a.known().is_some() && b.known().is_some() {
            return self.require(a, op, b, error);
        }
        let cond = self.compare(a, op, b)?;
        if self.hintless_backed(cond) {
            return self.assume(cond, &error());
        }
        // From the sizes themselves: facts may already have decided the condition (a mask
        // of two elements never keeps three), which leaves no symbol in it.
        let from_data = [a, b].into_iter().any(|dim| match dim {
            Dim::Sym(expr) => !self.tracer.graph.env.unbacked_symbols(expr).is_empty(),
            Dim::Known(_) => false,
        });
        let known = self
            .tracer
            .env()
            .evaluate_bool(cond, Mode::KnownTrue, self.span);
        let outcome = match known {
            Decision::Decided(true) => return Ok(()),
            Decision::Decided(false) => CheckOutcome::False,
            _ => self.tracer.env().check(cond, self.span),
        };
        let message = || {
            let text = format!("assumed by a shape rule: {}", assumption());
            self.tracer.message_template(&text)
        };
        match outcome {
            CheckOutcome::AlreadyTrue | CheckOutcome::Guarded(true) => Ok(()),
            // Eager code takes the special case where the data allow it: the compiled code
            // stops here instead, naming what it assumed.
            CheckOutcome::False | CheckOutcome::Guarded(false) if from_data => {
                let message = message();
                let never = self.tracer.env().bool(false);
                self.tracer.push(
                    crate::graph::ir::NodeKind::Assert {
                        cond: never,
                        message,
                        code: Code::CheckFailed,
                    },
                    Vec::new(),
                    Vec::new(),
                    self.span,
                    self.trace.to_vec(),
                );
                Ok(())
            }
            CheckOutcome::False | CheckOutcome::Guarded(false) => Err(RuleError::shape(error())),
            CheckOutcome::Learned => {
                let message = message();
                self.tracer
                    .emit_asserts(Code::CheckFailed, &message, self.span, self.trace);
                Ok(())
            }
            CheckOutcome::Error(error) => Err(RuleError::value(format!("{error}"))),
        }
    }

    fn size_argument(&mut self, d: Dim, what: &str) -> RuleResult<()> {
        if let Some(value) = d.known() {
            if value < 0 {
                return Err(RuleError::shape(format!(
                    "{what} must not be negative, got {value}"
                )));
            }
            return Ok(());
        }
        let expr = self.tracer.expr(d);
        if let Some(symbol) = self.tracer.graph.env.as_symbol(expr)
            && !self.tracer.graph.env.symbol(symbol).is_backed()
        {
            self.tracer.env().mark_size_like(symbol);
        }
        let shown = self.show(d);
        let what = what.to_string();
        // Worded as eager code words it, so a compiled failure reads the same.
        self.require(d, Cmp::Ge, Dim::ZERO, &|| {
            format!("{what} must not be negative, got {shown}")
        })
    }

    fn concrete(&mut self, d: Dim, why: &str) -> RuleResult<i64> {
        let Dim::Sym(expr) = d else {
            return Ok(d.known().unwrap_or_default());
        };
        if self.hintless_backed(expr) {
            return Err(RuleError::data_dependent(
                d,
                format!("{why} depends on the input size {}", self.show(d)),
            ));
        }
        match self.tracer.env().evaluate_int(expr, self.span) {
            IntDecision::Decided(value) | IntDecision::Guarded(value) => Ok(value),
            IntDecision::DataDependent { .. } => Err(RuleError::data_dependent(
                d,
                format!("{why} depends on data: {}", self.show(d)),
            )),
            IntDecision::Error(error) => Err(RuleError::value(format!("{error}"))),
        }
    }

    fn fresh(&mut self, operation: &str, max: Option<Dim>) -> Dim {
        let origin = Origin {
            operation: operation.to_string(),
            span: self.span,
        };
        let expr = self
            .tracer
            .env()
            .unbacked_symbol(origin, Range::new(0, POS_INF));
        let symbol = self
            .tracer
            .graph
            .env
            .as_symbol(expr)
            .expect("a new symbol is a symbol");
        self.tracer.env().mark_size_like(symbol);
        self.tracer.note_fresh(symbol);
        self.tracer.note_origin_call(symbol, self.trace);
        if let Some(max) = max {
            let bound = self.tracer.expr(max);
            if let Ok(cond) = self.tracer.env().le(expr, bound) {
                // True by construction: the operation never makes more than `max` items.
                let _ = self.tracer.env().assume(cond);
            }
        }
        Dim::Sym(expr)
    }

    fn show(&self, d: Dim) -> String {
        match d {
            Dim::Known(value) => value.to_string(),
            Dim::Sym(expr) => crate::graph::shape::mark(expr),
        }
    }
}

/// A piece of a marked message.
enum Piece<'t> {
    Text(&'t str),
    Size(ExprId),
}

/// Splits a marked message into text and sizes.
fn pieces<'t>(env: &crate::sym::ShapeEnv, text: &'t str) -> Vec<Piece<'t>> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        let Some(length) = rest[start..].find(CLOSE) else {
            break;
        };
        let inner = &rest[start + OPEN.len_utf8()..start + length];
        match inner.parse().ok().and_then(|index| env.expr_at(index)) {
            Some(expr) => {
                found.push(Piece::Text(&rest[..start]));
                found.push(Piece::Size(expr));
            }
            None => found.push(Piece::Text(&rest[..start + length + CLOSE.len_utf8()])),
        }
        rest = &rest[start + length + CLOSE.len_utf8()..];
    }
    found.push(Piece::Text(rest));
    found
}

impl Tracer {
    /// A marked message as a trace-time error shows it: each size as its value when the
    /// input sizes' hints decide it (so the message reads as eager code's), else in the
    /// symbols' names.
    pub fn unmark(&self, text: &str) -> String {
        if !text.contains(OPEN) {
            return text.to_string();
        }
        let env = &self.graph.env;
        let mut shown = String::new();
        for piece in pieces(env, text) {
            match piece {
                Piece::Text(text) => shown.push_str(text),
                Piece::Size(expr) => {
                    let hinted = env.eval_int(expr, &|symbol| env.symbol(symbol).hint());
                    match hinted {
                        Ok(value) if !self.hintless => shown.push_str(&value.to_string()),
                        _ => shown.push_str(&self.show(expr)),
                    }
                }
            }
        }
        shown
    }

    /// A marked message as the message of a runtime assert: each size filled in with its
    /// value when the graph runs.
    pub fn message_template(&self, text: &str) -> Template {
        let parts = pieces(&self.graph.env, text)
            .into_iter()
            .filter_map(|piece| match piece {
                Piece::Text("") => None,
                Piece::Text(text) => Some(Part::Text(text.to_string())),
                Piece::Size(expr) => Some(Part::Int(self.dim(expr))),
            })
            .collect();
        Template(parts)
    }
}

impl Tracer {
    /// Shows the marked sizes of a diagnostic raised while tracing (see [`Tracer::unmark`]).
    pub fn unmark_diagnostic(&self, diagnostic: &mut Diagnostic) {
        diagnostic.message = self.unmark(&diagnostic.message);
        diagnostic.label = diagnostic.label.as_deref().map(|label| self.unmark(label));
        diagnostic.help = diagnostic.help.as_deref().map(|help| self.unmark(help));
        for note in &mut diagnostic.notes {
            *note = self.unmark(note);
        }
        for label in &mut diagnostic.secondary {
            label.message = self.unmark(&label.message);
        }
    }

    /// An error that stopped a trace with hints, whose message shows data-dependent sizes
    /// (`index u0 is out of range for dimension 0 of f32[2]`), is also recorded as an assert
    /// that always fails, with the message as a template: when the part of the function
    /// traced so far runs (`compile::run_partial`), the failure reads as eager code's, with
    /// the values of the run. Only errors eager code raises too (shape, type and value
    /// errors) are recorded.
    pub fn record_refuted(&mut self, error: &Diagnostic) {
        let recorded = matches!(
            error.code,
            Code::ShapeError | Code::TypeError | Code::ValueError
        );
        let Some(span) = error.span.filter(|_| recorded && !self.hintless) else {
            return;
        };
        let env = &self.graph.env;
        let data_dependent = pieces(env, &error.message).iter().any(
            |piece| matches!(piece, Piece::Size(expr) if !env.unbacked_symbols(*expr).is_empty()),
        );
        if !data_dependent {
            return;
        }
        let message = self.message_template(&error.message);
        let never = self.graph.env.bool(false);
        self.push(
            crate::graph::ir::NodeKind::Assert {
                cond: never,
                message,
                code: error.code,
            },
            Vec::new(),
            Vec::new(),
            span,
            error.trace.clone(),
        );
    }
}
impl Tracer {
    /// An expression as messages show it, with annotation names (`n`) for the symbols that
    /// have them.
    pub fn show(&self, expr: ExprId) -> String {
        let env = &self.graph.env;
        let mut text = env.display(expr);
        let mut named: Vec<(String, &String)> = self
            .names
            .iter()
            .map(|(symbol, name)| (env.display(env.symbol_expr(*symbol)), name))
            .collect();
        // Longer symbol names first, so `s10` is replaced before `s1`.
        named.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        for (symbol, name) in named {
            text = super::report::replace_word(&text, &symbol, name);
        }
        text
    }
}
