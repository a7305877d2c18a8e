//! The rewrite rules of the atoms `//`, `%`, `min` and `max`, and of the terms of a sum: one
//! table per operation, one line per rule, tried in order on canonical operands; the first
//! rule that applies wins.
//!
//! Normalizations done elsewhere, for reference: sums combine like terms and fold constants
//! (`x + 0 -> x`, `2*x - x -> x`), products merge powers (`x*x -> x**2`, `x*1 -> x`, `x*0 -> 0`),
//! `x**0 -> 1`, `x**1 -> x` (arith.rs); comparisons become `form <relation> bound` with the
//! gcd divided out and fold by ranges, `not` is pushed into comparisons, `and`/`or` flatten,
//! sort and merge bounds on the same form (logic.rs). Rules that read ranges use the facts known
//! when the expression is built: they only ever make it simpler, never wrong, because facts are
//! never retracted.

use super::arith::gcd;
use super::env::{ShapeEnv, SymError};
use super::eval::{floor_div_i64, modulo_i64};
use super::node::{ExprId, Node};

/// A rule on a binary atom: `Some(result)` when it applies.
type Rule = (
    &'static str,
    fn(&mut ShapeEnv, ExprId, ExprId) -> Option<Result<ExprId, SymError>>,
);

/// A rule on the arguments of `min` or `max`, rewriting them in place.
type ListRule = (&'static str, fn(&mut ShapeEnv, &mut Vec<ExprId>, Extremum));

/// `a // b` (floor division), `b` never the constant 0.
pub(super) const FLOOR_DIV_RULES: &[Rule] = &[
    ("c1 // c2 -> c", |env, a, b| fold(env, a, b, floor_div_i64)), // Python floor semantics
    ("x // 1 -> x", |env, a, b| {
        (env.as_int(b) == Some(1)).then_some(Ok(a))
    }),
    ("x // -c -> (-x) // c", |env, a, b| {
        negative_divisor(env, a, b, ShapeEnv::floor_div)
    }),
    ("(g*x) // (g*c) -> x // c", |env, a, b| {
        common_factor(env, a, b, false)
    }),
    ("(c*y + r) // c -> y + r // c", split_multiples),
    ("x // c -> q when q*c <= x < (q+1)*c", |env, a, b| {
        quotient_by_range(env, a, b, false)
    }),
    ("(x // a) // b -> x // (a*b)", nested_floor_div),
    ("(k*y) // y -> k when y != 0", |env, a, b| {
        multiple_of(env, a, b, false)
    }),
];

/// `a % b` (Python modulo, sign of `b`), `b` never the constant 0.
pub(super) const MODULO_RULES: &[Rule] = &[
    ("c1 % c2 -> c", |env, a, b| fold(env, a, b, modulo_i64)), // Python modulo semantics
    ("x % 1 -> 0 and x % -1 -> 0", |env, _, b| {
        matches!(env.as_int(b), Some(1 | -1)).then(|| Ok(env.int(0)))
    }),
    ("x % -c -> -((-x) % c)", |env, a, b| {
        negative_divisor(env, a, b, negated_modulo)
    }),
    ("(g*x) % (g*c) -> g*(x % c)", |env, a, b| {
        common_factor(env, a, b, true)
    }),
    (
        "(c*y + r) % c -> r' % c with coefficients reduced mod c",
        drop_multiples,
    ),
    ("x % c -> x - q*c when q*c <= x < (q+1)*c", |env, a, b| {
        quotient_by_range(env, a, b, true)
    }),
    ("(x % a) % b -> x % b when b divides a", nested_modulo),
    ("(k*y) % y -> 0 when y != 0", |env, a, b| {
        multiple_of(env, a, b, true)
    }),
];

/// `min(…)` and `max(…)` over a flattened argument list.
pub(super) const EXTREMUM_RULES: &[ListRule] = &[
    ("min(min(x, y), z) -> min(x, y, z)", flatten),
    ("min(c1, c2) -> c", fold_constants),
    ("min(x, x) -> x", |env, args, _| {
        args.sort_by(|a, b| env.arena.order(*a, *b));
        args.dedup();
    }),
    (
        "min(x, y) -> x when x <= y is known (max(x, c) -> x when x >= c)",
        drop_dominated,
    ),
];

/// A rule on one term `coefficient*term` of a sum: `Some(expression)` that replaces it.
type TermRule = (
    &'static str,
    fn(&mut ShapeEnv, ExprId, i64) -> Option<Result<ExprId, SymError>>,
);

/// Terms of a sum, tried on every term when the sum is built.
pub(super) const TERM_RULES: &[TermRule] = &[
    (
        "c*(x // k) -> (c/k)*(x - r) when x % k == r is known",
        exact_quotient,
    ), // k*(x // k) == x - x % k
];

/// Which of `min` and `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Extremum {
    Min,
    Max,
}

impl ShapeEnv {
    /// `a // b` with Python floor semantics; a constant zero divisor is an error.
    pub fn floor_div(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        self.atom(a, b, FLOOR_DIV_RULES, Node::FloorDiv)
    }

    /// `a % b` with Python semantics (the result has the sign of `b`); a constant zero divisor
    /// is an error.
    pub fn modulo(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        self.atom(a, b, MODULO_RULES, Node::Mod)
    }

    /// `min(a, b)`.
    pub fn min(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        self.extremum(a, b, Extremum::Min)
    }

    /// `max(a, b)`.
    pub fn max(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        self.extremum(a, b, Extremum::Max)
    }

    fn atom(
        &mut self,
        a: ExprId,
        b: ExprId,
        rules: &[Rule],
        make: fn(ExprId, ExprId) -> Node,
    ) -> Result<ExprId, SymError> {
        let (a, b) = (self.int_operand(a)?, self.int_operand(b)?);
        if self.as_int(b) == Some(0) {
            return Err(SymError::DivisionByZero);
        }
        for (_, rule) in rules {
            if let Some(result) = rule(self, a, b) {
                return result;
            }
        }
        Ok(self.arena.intern(make(a, b), None))
    }

    fn extremum(&mut self, a: ExprId, b: ExprId, kind: Extremum) -> Result<ExprId, SymError> {
        let mut args = vec![self.int_operand(a)?, self.int_operand(b)?];
        for (_, rule) in EXTREMUM_RULES {
            rule(self, &mut args, kind);
        }
        if let [single] = args.as_slice() {
            return Ok(*single);
        }
        args.sort_by(|a, b| self.arena.order(*a, *b));
        let node = match kind {
            Extremum::Min => Node::Min(args.into()),
            Extremum::Max => Node::Max(args.into()),
        };
        Ok(self.arena.intern(node, None))
    }

    /// The sum of `terms` and `constant` with a term rewritten by [`TERM_RULES`]; `None`
    /// when no rule applies.
    pub(super) fn rewrite_terms(
        &mut self,
        terms: &[(ExprId, i64)],
        constant: i64,
    ) -> Option<Result<ExprId, SymError>> {
        for (index, &(term, coefficient)) in terms.iter().enumerate() {
            for (_, rule) in TERM_RULES {
                let Some(replacement) = rule(self, term, coefficient) else {
                    continue;
                };
                let mut rest = terms.to_vec();
                rest.remove(index);
                return Some(replacement.and_then(|replacement| {
                    let rest = self.make_sum(rest, constant)?;
                    self.add(rest, replacement)
                }));
            }
        }
        None
    }

    /// The divisor as a constant of at least `at_least`.
    fn divisor_at_least(&self, b: ExprId, at_least: i64) -> Option<i64> {
        self.as_int(b).filter(|&d| d >= at_least)
    }
}

fn fold(
    env: &mut ShapeEnv,
    a: ExprId,
    b: ExprId,
    op: fn(i64, i64) -> Option<i64>,
) -> Option<Result<ExprId, SymError>> {
    let (x, y) = (env.as_int(a)?, env.as_int(b)?);
    Some(
        op(x, y)
            .map(|value| env.int(value))
            .ok_or(SymError::Overflow),
    )
}

fn negated_modulo(env: &mut ShapeEnv, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
    let remainder = env.modulo(a, b)?;
    env.neg(remainder)
}

/// Rewrites `x op -c` as `op'(-x, c)`; left alone when negating overflows.
fn negative_divisor(
    env: &mut ShapeEnv,
    a: ExprId,
    b: ExprId,
    op: fn(&mut ShapeEnv, ExprId, ExprId) -> Result<ExprId, SymError>,
) -> Option<Result<ExprId, SymError>> {
    let divisor = env.as_int(b).filter(|&d| d < 0)?.checked_neg()?;
    let negated = env.neg(a).ok()?;
    let divisor = env.int(divisor);
    Some(op(env, negated, divisor))
}

/// Divides out the gcd of every coefficient, the constant and the divisor.
fn common_factor(
    env: &mut ShapeEnv,
    a: ExprId,
    b: ExprId,
    modulo: bool,
) -> Option<Result<ExprId, SymError>> {
    let divisor = env.divisor_at_least(b, 2)?;
    let poly = env.poly(a);
    let common = poly.terms.iter().fold(
        gcd(poly.constant.unsigned_abs(), divisor.unsigned_abs()),
        |acc, t| gcd(acc, t.1.unsigned_abs()),
    );
    let common = i64::try_from(common).ok().filter(|&g| g > 1)?;
    let terms = poly.terms.iter().map(|&(t, c)| (t, c / common)).collect();
    let reduced = env.make_sum(terms, poly.constant / common).ok()?;
    let divisor = env.int(divisor / common);
    if modulo {
        let remainder = env.modulo(reduced, divisor).ok()?;
        return Some(env.scale(remainder, common));
    }
    Some(env.floor_div(reduced, divisor))
}

/// `(c*y + r) // c -> y + r // c`: moves every multiple of the divisor out of the division.
fn split_multiples(env: &mut ShapeEnv, a: ExprId, b: ExprId) -> Option<Result<ExprId, SymError>> {
    let divisor = env.divisor_at_least(b, 2)?;
    let poly = env.poly(a);
    let (multiples, rest): (Vec<_>, Vec<_>) =
        poly.terms.iter().partition(|&&(_, c)| c % divisor == 0);
    let quotient = floor_div_i64(poly.constant, divisor)?;
    if multiples.is_empty() && quotient == 0 {
        return None;
    }
    let outside = multiples.iter().map(|&(t, c)| (t, c / divisor)).collect();
    let outside = env.make_sum(outside, quotient).ok()?;
    let inside = env.make_sum(rest, poly.constant.rem_euclid(divisor)).ok()?;
    let inside = env.floor_div(inside, b).ok()?;
    Some(env.add(outside, inside))
}

/// `(c*y + r) % c`: coefficients and constant reduced modulo `c`, zero terms dropped.
fn drop_multiples(env: &mut ShapeEnv, a: ExprId, b: ExprId) -> Option<Result<ExprId, SymError>> {
    let divisor = env.divisor_at_least(b, 2)?;
    let poly = env.poly(a);
    // The representative of smallest magnitude, so that no coefficient grows.
    let reduce = |c: i64| match c.rem_euclid(divisor) {
        r if r > divisor / 2 => r - divisor,
        r => r,
    };
    let constant = poly.constant.rem_euclid(divisor);
    let unchanged = constant == poly.constant && poly.terms.iter().all(|&(_, c)| reduce(c) == c);
    if unchanged {
        return None;
    }
    let terms = poly.terms.iter().map(|&(t, c)| (t, reduce(c))).collect();
    let reduced = env.make_sum(terms, constant).ok()?;
    Some(env.modulo(reduced, b))
}

/// When the range of `x` fits between two multiples of `c`, the quotient is a constant.
fn quotient_by_range(
    env: &mut ShapeEnv,
    a: ExprId,
    b: ExprId,
    modulo: bool,
) -> Option<Result<ExprId, SymError>> {
    let divisor = env.divisor_at_least(b, 1)?;
    let range = env.rule_range(a);
    let (lo, hi) = (range.finite_lo()?, range.finite_hi()?);
    let quotient = floor_div_i64(lo, divisor)?;
    if floor_div_i64(hi, divisor)? != quotient {
        return None;
    }
    if !modulo {
        return Some(Ok(env.int(quotient)));
    }
    let offset = env.int(quotient.checked_mul(divisor)?);
    Some(env.sub(a, offset))
}

fn nested_floor_div(env: &mut ShapeEnv, a: ExprId, b: ExprId) -> Option<Result<ExprId, SymError>> {
    let outer = env.divisor_at_least(b, 2)?;
    let Node::FloorDiv(x, inner) = *env.arena.node(a) else {
        return None;
    };
    let inner = env.divisor_at_least(inner, 2)?;
    let divisor = env.int(inner.checked_mul(outer)?);
    Some(env.floor_div(x, divisor))
}

fn nested_modulo(env: &mut ShapeEnv, a: ExprId, b: ExprId) -> Option<Result<ExprId, SymError>> {
    let outer = env.divisor_at_least(b, 2)?;
    let Node::Mod(x, inner) = *env.arena.node(a) else {
        return None;
    };
    let inner = env.divisor_at_least(inner, 2)?;
    (inner % outer == 0).then(|| env.modulo(x, b))
}

/// `(k*y) // y -> k` and `(k*y) % y -> 0` for a symbolic `y` whose range excludes 0.
fn multiple_of(
    env: &mut ShapeEnv,
    a: ExprId,
    b: ExprId,
    modulo: bool,
) -> Option<Result<ExprId, SymError>> {
    let (x, y) = (env.arena.data(a).linear, env.arena.data(b).linear);
    let same_form = x.form.is_some() && x.form == y.form && x.constant == 0 && y.constant == 0;
    if !same_form || x.scale.checked_rem(y.scale) != Some(0) || env.rule_range(b).contains(0) {
        return None;
    }
    let value = if modulo {
        0
    } else {
        x.scale.checked_div(y.scale)?
    };
    Some(Ok(env.int(value)))
}

/// `c*(x // k)` for `k` dividing `c`, when the remainder `x % k` is a known constant `r`:
/// `(c/k)*(x - r)`.
fn exact_quotient(
    env: &mut ShapeEnv,
    term: ExprId,
    coefficient: i64,
) -> Option<Result<ExprId, SymError>> {
    let Node::FloorDiv(dividend, divisor) = *env.arena.node(term) else {
        return None;
    };
    let k = env.divisor_at_least(divisor, 2)?;
    if coefficient % k != 0 {
        return None;
    }
    let remainder = env.modulo(dividend, divisor).ok()?;
    let remainder = env.rule_range(remainder).constant()?;
    let remainder = env.int(remainder);
    let exact = env.sub(dividend, remainder).ok()?;
    Some(env.scale(exact, coefficient / k))
}

/// Splices nested `min` into `min` (and `max` into `max`).
fn flatten(env: &mut ShapeEnv, args: &mut Vec<ExprId>, kind: Extremum) {
    let mut flat = Vec::with_capacity(args.len());
    for &arg in args.iter() {
        match (env.arena.node(arg), kind) {
            (Node::Min(inner), Extremum::Min) | (Node::Max(inner), Extremum::Max) => {
                flat.extend_from_slice(inner);
            }
            _ => flat.push(arg),
        }
    }
    *args = flat;
}

fn fold_constants(env: &mut ShapeEnv, args: &mut Vec<ExprId>, kind: Extremum) {
    let constants: Vec<i64> = args.iter().filter_map(|&a| env.as_int(a)).collect();
    if constants.len() < 2 {
        return;
    }
    let best = match kind {
        Extremum::Min => constants.iter().min(),
        Extremum::Max => constants.iter().max(),
    };
    let Some(&best) = best else { return };
    args.retain(|&a| env.as_int(a).is_none());
    let best = env.int(best);
    args.push(best);
}

/// Drops every argument that another argument is known to beat.
fn drop_dominated(env: &mut ShapeEnv, args: &mut Vec<ExprId>, kind: Extremum) {
    let mut index = 0;
    while index < args.len() && args.len() > 1 {
        let candidate = args[index];
        let beaten = args.iter().enumerate().any(|(other, &winner)| {
            other != index
                && match kind {
                    Extremum::Min => known_le(env, winner, candidate),
                    Extremum::Max => known_le(env, candidate, winner),
                }
        });
        if beaten {
            args.remove(index);
        } else {
            index += 1;
        }
    }
}

/// Whether `a <= b` follows from a constant difference, from ranges or from facts.
fn known_le(env: &mut ShapeEnv, a: ExprId, b: ExprId) -> bool {
    let (x, y) = (env.arena.data(a).linear, env.arena.data(b).linear);
    if x.form.is_some() && x.form == y.form && x.scale == y.scale {
        return x.constant <= y.constant;
    }
    if env.rule_range(a).hi <= env.rule_range(b).lo {
        return true;
    }
    let Ok(cond) = env.le(a, b) else {
        return false;
    };
    let oblivious = env.oblivious_rules;
    env.decide(cond, oblivious) == Some(true)
}
