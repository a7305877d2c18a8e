//! Evaluation with concrete values: Python floor semantics, errors instead of panics.
//!
//! Small expressions are evaluated recursively; large or deep ones (shared sub-expressions
//! written out as a tree could be exponentially many) once per node, in creation order.

use super::env::ShapeEnv;
use super::node::{ExprId, FxHashMap, Node, Relation};
use super::symbol::SymbolId;

/// Largest tree size evaluated recursively.
const RECURSIVE_SIZE: u32 = 512;

/// Why an expression has no value for the given symbol values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// `x // 0` or `x % 0`.
    #[error("integer division or modulo by zero")]
    DivisionByZero,
    /// A result left the range of `i64`.
    #[error("integer overflow")]
    Overflow,
    /// No value was given for this symbol.
    #[error("no value for symbol {0:?}")]
    Unbound(SymbolId),
    /// An integer was asked of a boolean expression.
    #[error("expected an integer expression, found a boolean")]
    NotInteger,
    /// A boolean was asked of an integer expression.
    #[error("expected a boolean expression, found an integer")]
    NotBoolean,
}

type Value = Result<i64, EvalError>;

impl ShapeEnv {
    /// The value of an integer expression, given each symbol's value.
    pub fn eval_int(
        &self,
        expr: ExprId,
        values: &impl Fn(SymbolId) -> Option<i64>,
    ) -> Result<i64, EvalError> {
        if self.arena.data(expr).boolean {
            return Err(EvalError::NotInteger);
        }
        self.eval_value(expr, values)
    }

    /// The value of a boolean expression, given each symbol's value.
    pub fn eval_bool(
        &self,
        expr: ExprId,
        values: &impl Fn(SymbolId) -> Option<i64>,
    ) -> Result<bool, EvalError> {
        if !self.arena.data(expr).boolean {
            return Err(EvalError::NotBoolean);
        }
        Ok(self.eval_value(expr, values)? != 0)
    }

    /// Overflow or division by zero computing `expr` with every backed symbol at its hint
    /// (`None` when it computes, or needs an unbacked symbol's value).
    pub fn arithmetic_error_at_hints(&self, expr: ExprId) -> Option<EvalError> {
        match self.eval_hint(expr) {
            Err(error @ (EvalError::Overflow | EvalError::DivisionByZero)) => Some(error),
            _ => None,
        }
    }

    /// The value with every backed symbol at its hint (unbacked symbols are unbound).
    pub(super) fn eval_hint(&self, expr: ExprId) -> Value {
        self.eval_value(expr, &|symbol| self.symbols[symbol.index()].hint())
    }

    fn eval_value(&self, expr: ExprId, values: &impl Fn(SymbolId) -> Option<i64>) -> Value {
        if self.arena.data(expr).size <= RECURSIVE_SIZE {
            self.eval_recursive(expr, values)
        } else {
            self.eval_shared(expr, values)
        }
    }

    fn eval_recursive(&self, expr: ExprId, values: &impl Fn(SymbolId) -> Option<i64>) -> Value {
        self.apply(expr, values, &|child| self.eval_recursive(child, values))
    }

    /// Evaluates each node of the DAG once, children first (children have smaller ids).
    fn eval_shared(&self, expr: ExprId, values: &impl Fn(SymbolId) -> Option<i64>) -> Value {
        let mut order = vec![expr];
        let mut seen: FxHashMap<ExprId, Value> = FxHashMap::default();
        let mut index = 0;
        while let Some(&node) = order.get(index) {
            index += 1;
            self.arena.node(node).for_each_child(|child| {
                if seen.insert(child, Ok(0)).is_none() {
                    order.push(child);
                }
            });
        }
        order.sort_unstable();
        order.dedup();
        for node in order {
            let value = self.apply(node, values, &|child| seen[&child]);
            seen.insert(node, value);
        }
        seen[&expr]
    }

    /// The value of a comparison's form, in `i128`: a form is a difference of the two sides,
    /// which may leave `i64` when the comparison itself does not.
    fn form_value(&self, form: ExprId, child: &dyn Fn(ExprId) -> Value) -> Result<i128, EvalError> {
        let Node::Sum { terms, constant } = self.arena.node(form) else {
            return child(form).map(i128::from);
        };
        terms
            .iter()
            .try_fold(i128::from(*constant), |total, &(term, coefficient)| {
                let term = i128::from(child(term)?) * i128::from(coefficient);
                total.checked_add(term).ok_or(EvalError::Overflow)
            })
    }

    /// One node's value from its children's.
    fn apply(
        &self,
        expr: ExprId,
        values: &impl Fn(SymbolId) -> Option<i64>,
        child: &dyn Fn(ExprId) -> Value,
    ) -> Value {
        match self.arena.node(expr) {
            Node::Int(value) => Ok(*value),
            Node::Bool(value) => Ok(i64::from(*value)),
            Node::Symbol(symbol) => values(*symbol).ok_or(EvalError::Unbound(*symbol)),
            Node::Sum { terms, constant } => terms.iter().try_fold(*constant, |total, &(t, c)| {
                let term = child(t)?.checked_mul(c).ok_or(EvalError::Overflow)?;
                total.checked_add(term).ok_or(EvalError::Overflow)
            }),
            Node::Product(factors) => factors.iter().try_fold(1i64, |total, &(f, e)| {
                let factor = child(f)?.checked_pow(e).ok_or(EvalError::Overflow)?;
                total.checked_mul(factor).ok_or(EvalError::Overflow)
            }),
            Node::FloorDiv(a, b) => divide(child(*a)?, child(*b)?, floor_div_i64),
            Node::Mod(a, b) => divide(child(*a)?, child(*b)?, modulo_i64),
            Node::Min(args) => extremum(args, child, i64::min),
            Node::Max(args) => extremum(args, child, i64::max),
            Node::Compare {
                relation,
                form,
                bound,
            } => {
                let value = self.form_value(*form, child)?;
                Ok(i64::from(compare(*relation, value, *bound)))
            }
            Node::And(args) => connective(args, child, false),
            Node::Or(args) => connective(args, child, true),
        }
    }
}

/// `form <relation> bound` on values (a form is computed in `i128`).
#[inline]
pub(super) fn compare(relation: Relation, value: i128, bound: i64) -> bool {
    let bound = i128::from(bound);
    match relation {
        Relation::Eq => value == bound,
        Relation::Ne => value != bound,
        Relation::Le => value <= bound,
        Relation::Ge => value >= bound,
    }
}

/// Python's `a // b`; `None` on division by zero or overflow.
pub(super) fn floor_div_i64(a: i64, b: i64) -> Option<i64> {
    let quotient = a.checked_div(b)?;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        Some(quotient - 1)
    } else {
        Some(quotient)
    }
}

/// Python's `a % b` (sign of `b`); `None` on division by zero.
pub(super) fn modulo_i64(a: i64, b: i64) -> Option<i64> {
    if b == 0 {
        return None;
    }
    let remainder = a.checked_rem(b).unwrap_or(0);
    if remainder != 0 && ((remainder < 0) != (b < 0)) {
        Some(remainder + b)
    } else {
        Some(remainder)
    }
}

fn divide(a: i64, b: i64, op: fn(i64, i64) -> Option<i64>) -> Value {
    if b == 0 {
        return Err(EvalError::DivisionByZero);
    }
    op(a, b).ok_or(EvalError::Overflow)
}

fn extremum(args: &[ExprId], child: &dyn Fn(ExprId) -> Value, pick: fn(i64, i64) -> i64) -> Value {
    let mut values = args.iter().map(|&arg| child(arg));
    let first = values.next().unwrap_or(Ok(0))?;
    values.try_fold(first, |best, value| Ok(pick(best, value?)))
}

/// `and` (`decisive` false) or `or` (`decisive` true): a decisive argument wins even when
/// another argument fails, so the result does not depend on the argument order.
fn connective(args: &[ExprId], child: &dyn Fn(ExprId) -> Value, decisive: bool) -> Value {
    let mut failure = None;
    for &arg in args {
        match child(arg) {
            Ok(value) if (value != 0) == decisive => return Ok(i64::from(decisive)),
            Ok(_) => {}
            Err(error) => failure = failure.or(Some(error)),
        }
    }
    failure.map_or(Ok(i64::from(!decisive)), Err)
}
