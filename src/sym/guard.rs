//! Compiled guard sets: the conditions a cached graph relies on, checked against concrete
//! input sizes in nanoseconds and without allocation.
//!
//! A guard set holds, in order, the declared range of every backed symbol (`s0 >= 2` after 0/1
//! specialisation) and then every recorded guard. A guard that compares one symbol with a
//! constant is one comparison; a linear comparison of symbols is a flat loop over
//! `(symbol, coefficient)` pairs; any other guard is a register program (program.rs). All
//! follow the evaluation order and errors of [`ShapeEnv::eval_bool`], so a guard set accepts
//! exactly the sizes for which every guard evaluates to true. The success path checks merged
//! per-symbol bounds first; only a failure walks the conditions in order to name the first
//! one that fails.

use super::env::ShapeEnv;
use super::eval::{compare, floor_div_i64, modulo_i64};
use super::node::{ExprId, Node, Relation};
use super::program::{Op, compile, execute};
use super::range::{NEG_INF, POS_INF};
use super::symbol::SymbolId;

/// One compiled condition.
#[derive(Clone, Copy, Debug)]
enum Check {
    /// `values[symbol] <relation> bound`.
    Symbol {
        symbol: u32,
        relation: Relation,
        bound: i64,
    },
    /// `Σ coefficient*atom <relation> bound`, terms in `terms[start..end]`.
    Linear {
        start: u32,
        end: u32,
        relation: Relation,
        bound: i64,
    },
    /// A register program in `program[start..end]`; the last register is the result.
    Program { start: u32, end: u32 },
    /// A condition that can never be checked (it mentions an unbacked symbol).
    Never,
}

/// A term of a linear guard: a symbol, or one operation on symbols and a constant.
#[derive(Clone, Copy, Debug)]
enum Atom {
    Symbol(u32),
    /// `s * t`
    Product(u32, u32),
    /// `s ** k`
    Power(u32, u32),
    /// `s // 2**k`, an arithmetic shift (it floors, as Python does).
    Shift(u32, u32),
    /// `s % 2**k`, a mask (non-negative, as Python's is for a positive divisor).
    Mask(u32, i64),
    /// `s // c`
    Divide(u32, i64),
    /// `s % c`
    Modulo(u32, i64),
}

impl Atom {
    /// The atom of a term, when it is one.
    fn of(env: &ShapeEnv, term: ExprId) -> Option<Atom> {
        let number = |id: ExprId| env.as_symbol(id).map(|s| env.symbol(s).number);
        Some(match env.arena.node(term) {
            Node::Symbol(symbol) => Atom::Symbol(env.symbol(*symbol).number),
            Node::Product(factors) => match **factors {
                [(a, 1), (b, 1)] => Atom::Product(number(a)?, number(b)?),
                [(a, exponent)] => Atom::Power(number(a)?, exponent),
                _ => return None,
            },
            Node::FloorDiv(a, b) => match env.as_int(*b)? {
                d if d > 0 && d.count_ones() == 1 => Atom::Shift(number(*a)?, d.trailing_zeros()),
                d => Atom::Divide(number(*a)?, d),
            },
            Node::Mod(a, b) => match env.as_int(*b)? {
                d if d > 0 && d.count_ones() == 1 => Atom::Mask(number(*a)?, d - 1),
                d => Atom::Modulo(number(*a)?, d),
            },
            _ => return None,
        })
    }

    /// The value, with the overflow and division rules of evaluation.
    #[inline]
    fn value(self, values: &[i64]) -> Option<i64> {
        let get = |symbol: u32| values.get(symbol as usize).copied();
        match self {
            Atom::Symbol(s) => get(s),
            Atom::Product(a, b) => get(a)?.checked_mul(get(b)?),
            Atom::Power(a, exponent) => get(a)?.checked_pow(exponent),
            Atom::Shift(a, bits) => Some(get(a)? >> bits),
            Atom::Mask(a, mask) => Some(get(a)? & mask),
            Atom::Divide(a, divisor) => floor_div_i64(get(a)?, divisor),
            Atom::Modulo(a, divisor) => modulo_i64(get(a)?, divisor),
        }
    }
}

/// The guards of one trace, compiled.
#[derive(Clone, Debug, Default)]
pub struct GuardSet {
    checks: Vec<Check>,
    terms: Vec<(Atom, i64)>,
    program: Vec<Op>,
    labels: Vec<String>,
    /// The same conditions regrouped for the common case where all of them hold: one
    /// `[lo, hi]` per symbol, excluded values, then the other checks.
    bounds: Vec<(u32, i64, i64)>,
    excluded: Vec<(u32, i64)>,
    others: Vec<Check>,
}

impl GuardSet {
    /// Compiles the declared ranges of the backed symbols and the guards of `env`.
    pub fn new(env: &ShapeEnv) -> GuardSet {
        let mut set = GuardSet::default();
        for (index, symbol) in env.symbols().iter().enumerate() {
            if !symbol.is_backed() {
                continue;
            }
            let expr = env.symbol_expr(SymbolId(index as u32));
            let bounds = [
                (Relation::Ge, symbol.declared.finite_lo()),
                (Relation::Le, symbol.declared.finite_hi()),
            ];
            for (relation, bound) in bounds {
                if let Some(bound) = bound {
                    set.push_linear(env, expr, relation, bound);
                    set.labels.push(env.display_relation(relation, expr, bound));
                }
            }
        }
        for guard in env.guards() {
            set.push_condition(env, guard.cond);
            set.labels.push(env.display(guard.cond));
        }
        set.regroup();
        set
    }

    /// Merges the one-symbol checks into bounds per symbol for the success path.
    fn regroup(&mut self) {
        for &check in &self.checks {
            let Check::Symbol {
                symbol,
                relation,
                bound,
            } = check
            else {
                self.others.push(check);
                continue;
            };
            if relation == Relation::Ne {
                self.excluded.push((symbol, bound));
                continue;
            }
            let position = self.bounds.iter().position(|b| b.0 == symbol);
            let position = position.unwrap_or_else(|| {
                self.bounds.push((symbol, NEG_INF, POS_INF));
                self.bounds.len() - 1
            });
            let (_, lo, hi) = &mut self.bounds[position];
            if relation != Relation::Le {
                *lo = (*lo).max(bound);
            }
            if relation != Relation::Ge {
                *hi = (*hi).min(bound);
            }
        }
    }

    /// Whether every condition holds, in the regrouped order.
    fn all_hold(&self, values: &[i64]) -> bool {
        let within = |&(symbol, lo, hi): &(u32, i64, i64)| {
            values
                .get(symbol as usize)
                .is_some_and(|&value| lo <= value && value <= hi)
        };
        let allowed = |&(symbol, excluded): &(u32, i64)| {
            values
                .get(symbol as usize)
                .is_some_and(|&value| value != excluded)
        };
        self.bounds.iter().all(within)
            && self.excluded.iter().all(allowed)
            && self.others.iter().all(|&check| self.holds(check, values))
    }

    /// Checks concrete sizes (`values[n]` is the value of `s{n}`): `Err` names the first
    /// condition that fails, or that cannot be evaluated (overflow, division by zero, a
    /// missing value).
    pub fn evaluate(&self, values: &[i64]) -> Result<(), usize> {
        if self.all_hold(values) {
            return Ok(());
        }
        for (index, check) in self.checks.iter().enumerate() {
            if !self.holds(*check, values) {
                return Err(index);
            }
        }
        Ok(())
    }

    /// Number of conditions.
    pub fn len(&self) -> usize {
        self.checks.len()
    }

    /// Whether there is no condition.
    pub fn is_empty(&self) -> bool {
        self.checks.is_empty()
    }

    /// A condition in TSL syntax, for `recompile f: s0 > 2 failed (s0 = 1)`.
    pub fn describe(&self, index: usize) -> Option<&str> {
        self.labels.get(index).map(String::as_str)
    }

    #[inline]
    fn holds(&self, check: Check, values: &[i64]) -> bool {
        match check {
            Check::Linear {
                start,
                end,
                relation,
                bound,
            } => {
                let terms = &self.terms[start as usize..end as usize];
                linear_value(terms, values).is_some_and(|value| compare(relation, value, bound))
            }
            Check::Symbol {
                symbol,
                relation,
                bound,
            } => values
                .get(symbol as usize)
                .is_some_and(|&value| compare(relation, value, bound)),
            Check::Program { start, end } => {
                execute(&self.program[start as usize..end as usize], values)
            }
            Check::Never => false,
        }
    }

    fn push_condition(&mut self, env: &ShapeEnv, cond: ExprId) {
        if env.arena.data(cond).unbacked {
            self.checks.push(Check::Never);
            return;
        }
        if let Node::Compare {
            relation,
            form,
            bound,
        } = *env.arena.node(cond)
        {
            if self.push_linear(env, form, relation, bound) {
                return;
            }
        }
        let start = self.program.len() as u32;
        compile(env, cond, &mut self.program);
        let end = self.program.len() as u32;
        self.checks.push(Check::Program { start, end });
    }

    /// Compiles `form <relation> bound` when the form is a symbol or a linear combination of
    /// atoms; false otherwise.
    fn push_linear(
        &mut self,
        env: &ShapeEnv,
        form: ExprId,
        relation: Relation,
        bound: i64,
    ) -> bool {
        if let Some(symbol) = env.as_symbol(form) {
            let symbol = env.symbol(symbol).number;
            self.checks.push(Check::Symbol {
                symbol,
                relation,
                bound,
            });
            return true;
        }
        let terms = match env.arena.node(form) {
            Node::Sum { terms, constant: 0 } => terms
                .iter()
                .map(|&(term, coefficient)| Some((Atom::of(env, term)?, coefficient)))
                .collect::<Option<Vec<_>>>(),
            _ => Atom::of(env, form).map(|atom| vec![(atom, 1)]),
        };
        let Some(terms) = terms else {
            return false;
        };
        let start = self.terms.len() as u32;
        self.terms.extend(terms);
        let end = self.terms.len() as u32;
        self.checks.push(Check::Linear {
            start,
            end,
            relation,
            bound,
        });
        true
    }
}

/// `Σ coefficient*atom` in the order and with the overflow checks of evaluation.
#[inline]
fn linear_value(terms: &[(Atom, i64)], values: &[i64]) -> Option<i64> {
    let mut total: i64 = 0;
    for &(atom, coefficient) in terms {
        total = total.checked_add(atom.value(values)?.checked_mul(coefficient)?)?;
    }
    Some(total)
}
