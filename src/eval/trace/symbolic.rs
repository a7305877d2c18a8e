//! Symbolic ints and bools while tracing: arithmetic and comparisons build expressions of the
//! symbolic engine; a condition or an int that must be concrete is decided from facts,
//! guarded on input sizes, or reported as data-dependent (spec §6).

use crate::diag::{Code, Diagnostic, Result};
use crate::dtype::DType;
use crate::eval::operators::{division_by_zero, overflow};
use crate::eval::value::Value;
use crate::eval::{Interpreter, error};
use crate::graph::shape::Cmp;
use crate::source::Span;
use crate::sym::{Decision, EvalError, ExprId, IntDecision, Mode, ShapeEnv, SymError};
use crate::syntax::ast::BinaryOp;

/// How a symbolic condition is asked (the tracing helpers of spec §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    /// `if`, `and`/`or` needing a value, `check` arguments: guard or error.
    Normal,
    SizeOblivious,
    GuardOrFalse,
    GuardOrTrue,
    KnownTrue,
}

impl Interpreter {
    /// `a op b` on ints and bools when one side is symbolic; `None` when the operands are of
    /// other kinds.
    pub(in crate::eval) fn symbolic_binary(
        &mut self,
        op: BinaryOp,
        a: &Value,
        b: &Value,
        span: Span,
    ) -> Result<Option<Value>> {
        let both_bool = matches!(a, Value::Bool(_) | Value::SymBool(_))
            && matches!(b, Value::Bool(_) | Value::SymBool(_));
        if both_bool && matches!(op, BinaryOp::BitAnd | BinaryOp::BitOr) {
            let (x, y) = (self.bool_expr(a), self.bool_expr(b));
            let env = self.env();
            let result = if op == BinaryOp::BitAnd {
                env.and(x, y)
            } else {
                env.or(x, y)
            };
            return self.symbolic_result(result, span).map(Some);
        }
        if let Some(value) = self.int_against_float(op, a, b, span)? {
            return Ok(Some(value));
        }
        let (Some(x), Some(mut y)) = (self.int_expr(a), self.int_expr(b)) else {
            return Ok(None);
        };
        if matches!(op, BinaryOp::BitAnd | BinaryOp::BitOr) {
            // Bitwise ops are not size expressions: on input sizes they are decided or
            // guarded on, so the result is an int as in eager code; on data they are left to
            // the graph (a host value known when it runs).
            let env = self.env();
            if [x, y]
                .iter()
                .any(|&expr| !env.unbacked_symbols(expr).is_empty())
            {
                return Ok(None);
            }
            let a = self.concrete_int(x, span, "a bitwise operation on sizes")?;
            let b = self.concrete_int(y, span, "a bitwise operation on sizes")?;
            let value = if op == BinaryOp::BitAnd { a & b } else { a | b };
            return Ok(Some(Value::Int(value)));
        }
        if op == BinaryOp::Pow && self.env().as_int(y).is_none() {
            // Size expressions have constant exponents: one from input sizes is decided or
            // guarded on, as a loop bound is; one from data is a `data-dependent-int`.
            let exponent = self.concrete_int(y, span, "an exponent")?;
            y = self.env().int(exponent);
        }
        if op == BinaryOp::Pow
            && let Some(exponent) = self.env().as_int(y).filter(|exponent| *exponent < 0)
        {
            // An int to a negative power is a float, as in eager code: a host value computed
            // when the graph runs, from a base that must not be 0.
            self.trace_nonzero(x, "0 cannot be raised to a negative power", span)?;
            let base = crate::eval::builtins::sym_int_tensor(self, x, DType::F32, span)?;
            let value = self.runtime_binary(
                op,
                Value::RuntimeScalar(base),
                Value::Float(exponent as f64),
                span,
            )?;
            return Ok(Some(value));
        }
        let env = self.env();
        let result = match op {
            BinaryOp::Add => env.add(x, y),
            BinaryOp::Sub => env.sub(x, y),
            BinaryOp::Mul => env.mul(x, y),
            BinaryOp::FloorDiv => env.floor_div(x, y),
            BinaryOp::Rem => env.modulo(x, y),
            BinaryOp::Pow => env.pow(x, y),
            op => match comparison(op) {
                Some(cmp) => env.compare(cmp, x, y),
                None => return Ok(None),
            },
        };
        self.symbolic_result(result, span).map(Some)
    }

    /// A comparison of a symbolic int with a float, as eager code compares an int with a
    /// float: the comparison with an int bound (`n > 2.5` is `n > 2`, `n >= 2.5` is `n >= 3`),
    /// or its answer when no int can meet the float (`n == 2.5`, NaN, infinities, floats
    /// beyond `i64`). `None` for other operands.
    fn int_against_float(
        &mut self,
        op: BinaryOp,
        a: &Value,
        b: &Value,
        span: Span,
    ) -> Result<Option<Value>> {
        // Every i64 lies in [-2^63, 2^63).
        const LIMIT: f64 = 9_223_372_036_854_775_808.0;
        let (expr, float, cmp) = match (a, b, comparison(op)) {
            (Value::SymInt(expr), Value::Float(x), Some(cmp)) => (*expr, *x, cmp),
            (Value::Float(x), Value::SymInt(expr), Some(cmp)) => (*expr, *x, cmp.flipped()),
            _ => return Ok(None),
        };
        let (floor, ceil) = (float.floor(), float.ceil());
        let outright = if float.is_nan() {
            Some(cmp == Cmp::Ne)
        } else if floor >= LIMIT {
            Some(matches!(cmp, Cmp::Lt | Cmp::Le | Cmp::Ne))
        } else if ceil < -LIMIT {
            Some(matches!(cmp, Cmp::Gt | Cmp::Ge | Cmp::Ne))
        } else if floor != float && matches!(cmp, Cmp::Eq | Cmp::Ne) {
            Some(cmp == Cmp::Ne)
        } else {
            None
        };
        if let Some(answer) = outright {
            return Ok(Some(Value::Bool(answer)));
        }
        // In range and, for `==` and `!=`, integral: the bound is exact as an i64.
        let bound = match cmp {
            Cmp::Gt | Cmp::Le => floor,
            Cmp::Ge | Cmp::Lt => ceil,
            Cmp::Eq | Cmp::Ne => float,
        };
        #[allow(clippy::cast_possible_truncation)]
        let bound = self.env().int(bound as i64);
        let result = self.env().compare(cmp, expr, bound);
        self.symbolic_result(result, span).map(Some)
    }

    /// The value of arithmetic on sizes. Arithmetic that overflows or divides by zero at the
    /// call's own sizes (the hints of the input sizes) fails here, as eager code fails at
    /// this point: the expression would otherwise be computed only where the graph uses it,
    /// after errors of later operations that eager code never reaches (`x @ (n ** 64)` is
    /// an overflow, not a type error of `@`). Sizes from data have no hint, and a trace
    /// without hints only stand-ins: their arithmetic is checked when the graph runs.
    fn symbolic_result(
        &mut self,
        result: std::result::Result<ExprId, SymError>,
        span: Span,
    ) -> Result<Value> {
        let expr = result.map_err(|error| -> Box<Diagnostic> {
            match error {
                SymError::DivisionByZero => division_by_zero(span),
                SymError::Overflow => overflow(span),
                other => error_at(Code::ValueError, span, other.to_string()),
            }
        })?;
        // A trace without hints (`tsl check`) has stand-ins for the sizes, not a call's.
        let hintless = self.tracer.as_ref().is_some_and(|tracer| tracer.hintless);
        let failure = if hintless {
            None
        } else {
            self.env().arithmetic_error_at_hints(expr)
        };
        match failure {
            Some(EvalError::DivisionByZero) => Err(division_by_zero(span)),
            Some(_) => Err(overflow(span)),
            None => Ok(self.symbolic_value(expr)),
        }
    }

    /// The value an expression stands for: a constant, a symbolic bool or a symbolic int.
    pub(in crate::eval) fn symbolic_value(&mut self, expr: ExprId) -> Value {
        let env = self.env();
        if let Some(value) = env.as_bool(expr) {
            return Value::Bool(value);
        }
        if env.is_bool(expr) {
            return Value::SymBool(expr);
        }
        match env.as_int(expr) {
            Some(value) => Value::Int(value),
            None => Value::SymInt(expr),
        }
    }

    /// An int (bools count as 0 and 1) as an expression; `None` for other values.
    pub(in crate::eval) fn int_expr(&mut self, value: &Value) -> Option<ExprId> {
        let env = self.env();
        Some(match value {
            Value::Int(i) => env.int(*i),
            Value::Bool(b) => env.int(i64::from(*b)),
            Value::SymInt(expr) => *expr,
            _ => return None,
        })
    }

    fn bool_expr(&mut self, value: &Value) -> ExprId {
        match value {
            Value::SymBool(expr) => *expr,
            Value::Bool(b) => self.env().bool(*b),
            _ => unreachable!("bool_expr takes bools"),
        }
    }

    /// The environment of the trace in progress.
    pub(in crate::eval) fn env(&mut self) -> &mut ShapeEnv {
        &mut self
            .tracer
            .as_mut()
            .expect("symbolic values exist only while tracing")
            .graph
            .env
    }

    /// `not c` on a symbolic condition.
    pub(in crate::eval) fn symbolic_not(&mut self, cond: ExprId, span: Span) -> Result<Value> {
        let result = self.env().not(cond);
        self.symbolic_result(result, span)
    }

    /// The value of a symbolic condition where a concrete bool is needed (spec §6): decided
    /// from facts, else guarded on input sizes, else `data-dependent-guard`.
    pub(in crate::eval) fn decide(&mut self, cond: ExprId, span: Span, ask: Ask) -> Result<bool> {
        let hintless = self.tracer.as_ref().is_some_and(|tracer| tracer.hintless);
        let known = self.env().evaluate_bool(cond, Mode::KnownTrue, span);
        if let Decision::Decided(value) = known {
            return Ok(value);
        }
        if hintless && self.env().unbacked_symbols(cond).is_empty() {
            return Ok(self.specialise(cond, span, ask));
        }
        let mode = match ask {
            Ask::Normal => Mode::Normal,
            Ask::SizeOblivious => Mode::SizeOblivious,
            Ask::GuardOrFalse => Mode::GuardOrFalse,
            Ask::GuardOrTrue => Mode::GuardOrTrue,
            Ask::KnownTrue => return Ok(false),
        };
        let decision = self.env().evaluate_bool(cond, mode, span);
        self.flush_logs();
        match decision {
            Decision::Decided(value) | Decision::Guarded(value) | Decision::Defaulted(value) => {
                Ok(value)
            }
            Decision::DataDependent { .. } | Decision::Unknown => {
                Err(self.data_dependent_guard(cond, span, ask))
            }
            Decision::Error(error) => Err(error_at(Code::ValueError, span, error.to_string())),
        }
    }

    /// Without hints, a question on input sizes takes its `true` side (the default for the
    /// `guard_or_*` helpers), learns it and leaves a note for `tsl check`.
    fn specialise(&mut self, cond: ExprId, span: Span, ask: Ask) -> bool {
        let value = ask != Ask::GuardOrFalse;
        let tracer = self.tracer.as_mut().expect("specialise runs while tracing");
        let assumed = if value {
            Ok(cond)
        } else {
            tracer.graph.env.not(cond)
        };
        if let Ok(assumed) = assumed {
            let _ = tracer.graph.env.assume(assumed);
            let shown = tracer.show(assumed);
            tracer.notes.push(
                Diagnostic::note(
                    Code::Specialization,
                    span,
                    format!("this branch specialises on {shown}"),
                )
                .with_label("this condition depends on an input size")
                .with_help(
                    "a compiled call decides it from the real sizes and guards on the answer",
                ),
            );
        }
        value
    }

    /// The value of a symbolic int where a concrete int is needed (`range(n)`, list
    /// indexing): decided, else guarded, else `data-dependent-int`.
    pub(in crate::eval) fn concrete_int(
        &mut self,
        expr: ExprId,
        span: Span,
        why: &str,
    ) -> Result<i64> {
        let hintless = self.tracer.as_ref().is_some_and(|tracer| tracer.hintless);
        if hintless && self.env().unbacked_symbols(expr).is_empty() {
            let known = self.env().range(expr).constant();
            return known.ok_or_else(|| self.hintless_int(expr, span, why));
        }
        let decision = self.env().evaluate_int(expr, span);
        self.flush_logs();
        match decision {
            IntDecision::Decided(value) | IntDecision::Guarded(value) => Ok(value),
            IntDecision::DataDependent { .. } => Err(self.data_dependent_int(expr, span, why)),
            IntDecision::Error(error) => Err(error_at(Code::ValueError, span, error.to_string())),
        }
    }

    /// A trace without hints cannot pick a value for an input size: a note stops it.
    fn hintless_int(&mut self, expr: ExprId, span: Span, why: &str) -> Box<Diagnostic> {
        let shown = self.env().display(expr);
        Diagnostic::note(
            Code::Specialization,
            span,
            format!(
                "{why} specialises on the value of {shown}; the rest of the function is not checked"
            ),
        )
        .with_label("this needs a concrete value of an input size")
        .into()
    }

    /// An int argument that must be concrete: ints as they are, symbolic ints evaluated.
    pub(in crate::eval) fn concrete(
        &mut self,
        value: &Value,
        span: Span,
        why: &str,
    ) -> Result<Option<i64>> {
        match value {
            Value::Int(value) => Ok(Some(*value)),
            Value::SymInt(expr) => self.concrete_int(*expr, span, why).map(Some),
            _ => Ok(None),
        }
    }
}

pub(in crate::eval) fn error_at(
    code: Code,
    span: Span,
    message: impl Into<String>,
) -> Box<Diagnostic> {
    error(code, span, message).into()
}

/// The comparison `op` is, if it is one.
pub(in crate::eval) fn comparison(op: BinaryOp) -> Option<Cmp> {
    Some(match op {
        BinaryOp::Eq => Cmp::Eq,
        BinaryOp::Ne => Cmp::Ne,
        BinaryOp::Lt => Cmp::Lt,
        BinaryOp::Le => Cmp::Le,
        BinaryOp::Gt => Cmp::Gt,
        BinaryOp::Ge => Cmp::Ge,
        _ => return None,
    })
}
