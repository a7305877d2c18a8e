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
    /// The symbols each condition mentions, for messages.
    symbols: Vec<Vec<SymbolId>>,
    /// The same conditions regrouped for the common case where all of them hold, one
    /// homogeneous loop per kind.
    fast: FastPath,
}

/// The conditions of a guard set by kind: one `[lo, hi]` per symbol, excluded values of
/// symbols, windows and excluded values of linear forms, programs.
#[derive(Clone, Debug, Default)]
struct FastPath {
    bounds: Vec<(u32, i64, i64)>,
    excluded: Vec<(u32, i64)>,
    windows: Vec<(u32, u32, i128, i128)>,
    holes: Vec<(u32, u32, i64)>,
    programs: Vec<(u32, u32)>,
    never: bool,
}

/// `[lo, hi]` of the `i64` values that satisfy `<relation> bound` (not for `!=`).
fn window(relation: Relation, bound: i64) -> (i64, i64) {
    match relation {
        Relation::Le => (NEG_INF, bound),
        Relation::Ge => (bound, POS_INF),
        Relation::Eq | Relation::Ne => (bound, bound),
    }
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
                    set.symbols.push(vec![SymbolId(index as u32)]);
                }
            }
        }
        for guard in env.guards() {
            set.push_condition(env, guard.cond);
            set.labels.push(env.display(guard.cond));
            set.symbols.push(env.free_symbols(guard.cond));
        }
        set.regroup();
        set
    }

    /// Regroups the conditions by kind for the success path, merging one-symbol bounds.
    fn regroup(&mut self) {
        let fast = &mut self.fast;
        for &check in &self.checks {
            match check {
                Check::Symbol {
                    symbol,
                    relation: Relation::Ne,
                    bound,
                } => fast.excluded.push((symbol, bound)),
                Check::Symbol {
                    symbol,
                    relation,
                    bound,
                } => {
                    let (lo, hi) = window(relation, bound);
                    match fast.bounds.iter_mut().find(|b| b.0 == symbol) {
                        Some(merged) => *merged = (symbol, merged.1.max(lo), merged.2.min(hi)),
                        None => fast.bounds.push((symbol, lo, hi)),
                    }
                }
                Check::Linear {
                    start,
                    end,
                    relation: Relation::Ne,
                    bound,
                } => fast.holes.push((start, end, bound)),
                Check::Linear {
                    start,
                    end,
                    relation,
                    bound,
                } => {
                    let bound = i128::from(bound);
                    let (lo, hi) = match relation {
                        Relation::Le => (i128::MIN, bound),
                        Relation::Ge => (bound, i128::MAX),
                        Relation::Eq | Relation::Ne => (bound, bound),
                    };
                    fast.windows.push((start, end, lo, hi));
                }
                Check::Program { start, end } => fast.programs.push((start, end)),
                Check::Never => fast.never = true,
            }
        }
    }

    /// Whether every condition holds, kind by kind.
    fn all_hold(&self, values: &[i64]) -> bool {
        let fast = &self.fast;
        let value = |symbol: u32| values.get(symbol as usize).copied();
        let linear =
            |start: u32, end: u32| linear_value(&self.terms[start as usize..end as usize], values);
        !fast.never
            && fast
                .bounds
                .iter()
                .all(|&(symbol, lo, hi)| value(symbol).is_some_and(|v| lo <= v && v <= hi))
            && fast
                .excluded
                .iter()
                .all(|&(symbol, excluded)| value(symbol).is_some_and(|v| v != excluded))
            && fast
                .windows
                .iter()
                .all(|&(start, end, lo, hi)| linear(start, end).is_some_and(|v| lo <= v && v <= hi))
            && fast.holes.iter().all(|&(start, end, hole)| {
                linear(start, end).is_some_and(|v| v != i128::from(hole))
            })
            && fast
                .programs
                .iter()
                .all(|&(start, end)| execute(&self.program[start as usize..end as usize], values))
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

    /// The symbols a condition mentions, in creation order.
    pub fn symbols(&self, index: usize) -> &[SymbolId] {
        self.symbols.get(index).map_or(&[], Vec::as_slice)
    }

    /// Every condition in TSL syntax, in order.
    pub fn labels(&self) -> &[String] {
        &self.labels
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
                .is_some_and(|&value| compare(relation, i128::from(value), bound)),
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

/// `Σ coefficient*atom` in `i128`, as evaluation computes a comparison's form.
#[inline]
fn linear_value(terms: &[(Atom, i64)], values: &[i64]) -> Option<i128> {
    let mut total: i128 = 0;
    for &(atom, coefficient) in terms {
        total = total.checked_add(i128::from(atom.value(values)?) * i128::from(coefficient))?;
    }
    Some(total)
}
