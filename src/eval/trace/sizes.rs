//! The shape rules' `Sizes` while tracing: size arithmetic builds symbolic expressions,
//! questions go to the symbolic engine (deciding from facts, guarding on input sizes), and
//! what a rule assumes on its general path becomes a runtime assert.

use super::Tracer;
use crate::diag::{Code, Diagnostic, Frame};
use crate::graph::ir::{Part, Template};
use crate::graph::shape::{Cmp, Dim, RuleError, RuleResult, Sizes};
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

    /// The message of a runtime assert a rule's general path relies on, ending with the
    /// values its symbols have when the graph runs: `… (u0 = 2, u1 = 3)`.
    fn assumption(&mut self, cond: ExprId, message: &str) -> Template {
        let mut parts = vec![Part::Text(format!("assumed by a shape rule: {message}"))];
        let symbols = self.tracer.graph.env.free_symbols(cond);
        if symbols.is_empty() {
            return Template(parts);
        }
        parts.push(Part::Text(" (".to_string()));
        for (index, symbol) in symbols.iter().enumerate() {
            let expr = self.tracer.graph.env.symbol_expr(*symbol);
            let separator = if index == 0 { "" } else { ", " };
            let name = self.tracer.show(expr);
            parts.push(Part::Text(format!("{separator}{name} = ")));
            parts.push(Part::Int(Dim::Sym(expr)));
        }
        parts.push(Part::Text(")".to_string()));
        Template(parts)
    }

    /// In a trace without hints, takes a backed-only condition as given and notes it.
    fn assume(&mut self, cond: ExprId, message: &str) -> RuleResult<()> {
        match self.tracer.env().assume(cond) {
            Ok(true) => {
                let shown = self.tracer.show(cond);
                self.tracer.notes.push(
                    Diagnostic::note(
                        Code::Specialization,
                        self.span,
                        format!("this trace assumes {shown}"),
                    )
                    .with_label(message.to_string()),
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
                let message = self.assumption(cond, &message());
                self.tracer.emit_asserts(&message, self.span, self.trace);
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
        self.require(d, Cmp::Ge, Dim::ZERO, &|| {
            format!("{what} {shown} must not be negative")
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
            Dim::Sym(expr) => self.tracer.show(expr),
        }
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
