//! Canonical comparisons and connectives.
//!
//! `a < b` becomes `b - a >= 1`: the difference is written as a normalized linear form (gcd of
//! the coefficients divided out, first coefficient positive) compared with a constant, so
//! `2*u0 < 2*u1` and `u0 + 1 <= u1` are the same node. Comparisons fold when the form's range
//! decides them. `not` is pushed into comparisons (`not (x <= 3)` is `x >= 4`); `and` and `or`
//! flatten, sort, deduplicate and merge the bounds they put on one form.

use super::arith::normalizing_scale;
use super::bounds::decide_by_range;
use super::env::{ShapeEnv, SymError};
use super::node::{ExprId, Node, Relation};

/// The six comparisons of the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    /// Whether `a <op> b` holds for concrete integers.
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }

    /// The comparison with its sides swapped: `a <op> b` is `b <op.flipped()> a`.
    #[must_use]
    pub fn flipped(self) -> Cmp {
        match self {
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
            same => same,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
        }
    }
}

impl ShapeEnv {
    /// `a == b` (on two booleans: both true or both false).
    pub fn eq(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        self.compare(Cmp::Eq, a, b)
    }

    /// `a != b`.
    pub fn ne(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        self.compare(Cmp::Ne, a, b)
    }

    /// `a < b`.
    pub fn lt(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        self.compare(Cmp::Lt, a, b)
    }

    /// `a <= b`.
    pub fn le(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        self.compare(Cmp::Le, a, b)
    }

    /// `a > b`.
    pub fn gt(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        self.compare(Cmp::Gt, a, b)
    }

    /// `a >= b`.
    pub fn ge(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        self.compare(Cmp::Ge, a, b)
    }

    /// `not a`; an integer operand means `a != 0`.
    pub fn not(&mut self, a: ExprId) -> Result<ExprId, SymError> {
        let a = self.truth(a)?;
        match self.arena.node(a).clone() {
            Node::Bool(value) => Ok(self.bool(!value)),
            Node::Compare {
                relation,
                form,
                bound,
            } => self.negated_compare(relation, form, bound),
            Node::And(args) => self.fold_connective(&args, ShapeEnv::not, ShapeEnv::or),
            Node::Or(args) => self.fold_connective(&args, ShapeEnv::not, ShapeEnv::and),
            _ => Err(SymError::NotInteger),
        }
    }

    /// `a and b`; an integer operand means `!= 0`.
    pub fn and(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        let args = self.flatten_connective(a, b, false)?;
        Ok(match self.simplify_conjuncts(args) {
            None => self.bool(false),
            Some(args) => self.make_connective(args, false),
        })
    }

    /// `a or b`; an integer operand means `!= 0`. Simplified as `not (not a and not b)`.
    pub fn or(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        let args = self.flatten_connective(a, b, true)?;
        let negated = args
            .into_iter()
            .map(|arg| self.not(arg))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(conjuncts) = self.simplify_conjuncts(negated) else {
            return Ok(self.bool(true));
        };
        let disjuncts = conjuncts
            .into_iter()
            .map(|arg| self.not(arg))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(self.make_connective(disjuncts, true))
    }

    /// A boolean operand resolved; an integer operand read as `!= 0`.
    pub(super) fn truth(&mut self, expr: ExprId) -> Result<ExprId, SymError> {
        if self.arena.data(expr).boolean {
            return Ok(self.resolve(expr));
        }
        let zero = self.int(0);
        self.ne(expr, zero)
    }

    /// `form <relation> bound`, folded when the form's range decides it.
    pub(super) fn make_compare(&mut self, relation: Relation, form: ExprId, bound: i64) -> ExprId {
        let range = self.range(form);
        let excluded = self.facts.excluded(form);
        if let Some(value) = decide_by_range(relation, range, bound, excluded) {
            return self.bool(value);
        }
        let node = Node::Compare {
            relation,
            form,
            bound,
        };
        self.arena.intern(node, None)
    }

    fn negated_compare(
        &mut self,
        relation: Relation,
        form: ExprId,
        bound: i64,
    ) -> Result<ExprId, SymError> {
        let bound = i128::from(bound);
        let (relation, bound) = match relation {
            Relation::Eq => (Relation::Ne, bound),
            Relation::Ne => (Relation::Eq, bound),
            Relation::Le => (Relation::Ge, bound + 1),
            Relation::Ge => (Relation::Le, bound - 1),
        };
        match i64::try_from(bound) {
            Ok(bound) => Ok(self.make_compare(relation, form, bound)),
            Err(_) => self.compare_beyond(relation, form, bound),
        }
    }

    /// `a <op> b`, in canonical form.
    pub fn compare(&mut self, op: Cmp, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        let (a_bool, b_bool) = (self.arena.data(a).boolean, self.arena.data(b).boolean);
        if a_bool || b_bool {
            return self.compare_booleans(op, a, b, a_bool && b_bool);
        }
        let (a, b) = (self.resolve(a), self.resolve(b));
        let (left, right) = (self.poly(a), self.poly(b));
        let mut terms: Vec<(ExprId, i128)> = left
            .terms
            .iter()
            .map(|&(t, c)| (t, i128::from(c)))
            .chain(right.terms.iter().map(|&(t, c)| (t, -i128::from(c))))
            .collect();
        terms.sort_by(|x, y| self.arena.order(x.0, y.0));
        terms.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                earlier.1 += later.1;
            }
            same
        });
        terms.retain(|&(_, c)| c != 0);
        let constant = i128::from(left.constant) - i128::from(right.constant);
        let (relation, target) = match op {
            Cmp::Eq => (Relation::Eq, 0),
            Cmp::Ne => (Relation::Ne, 0),
            Cmp::Lt => (Relation::Le, -1),
            Cmp::Le => (Relation::Le, 0),
            Cmp::Gt => (Relation::Ge, 1),
            Cmp::Ge => (Relation::Ge, 0),
        };
        self.canonical_compare(relation, terms, target - constant)
    }

    fn compare_booleans(
        &mut self,
        op: Cmp,
        a: ExprId,
        b: ExprId,
        both: bool,
    ) -> Result<ExprId, SymError> {
        if !both || !matches!(op, Cmp::Eq | Cmp::Ne) {
            return Err(SymError::NotInteger);
        }
        let both_true = self.and(a, b)?;
        let (not_a, not_b) = (self.not(a)?, self.not(b)?);
        let both_false = self.and(not_a, not_b)?;
        let equal = self.or(both_true, both_false)?;
        if op == Cmp::Eq {
            Ok(equal)
        } else {
            self.not(equal)
        }
    }

    /// `Σ terms <relation> bound` with sorted, combined, non-zero terms.
    fn canonical_compare(
        &mut self,
        mut relation: Relation,
        mut terms: Vec<(ExprId, i128)>,
        mut bound: i128,
    ) -> Result<ExprId, SymError> {
        if terms.is_empty() {
            return Ok(self.bool(holds(relation, bound)));
        }
        if terms[0].1 < 0 {
            for term in &mut terms {
                term.1 = -term.1;
            }
            bound = -bound;
            relation = mirror(relation);
        }
        let divisor = terms
            .iter()
            .fold(0u128, |acc, t| gcd(acc, t.1.unsigned_abs())) as i128;
        let bound = match relation {
            Relation::Le => bound.div_euclid(divisor),
            Relation::Ge => -(-bound).div_euclid(divisor),
            _ if bound % divisor != 0 => return Ok(self.bool(relation == Relation::Ne)),
            _ => bound / divisor,
        };
        let mut narrow = Vec::with_capacity(terms.len());
        for (term, coefficient) in terms {
            let coefficient =
                i64::try_from(coefficient / divisor).map_err(|_| SymError::Overflow)?;
            narrow.push((term, coefficient));
        }
        debug_assert_eq!(normalizing_scale(&narrow), 1);
        let form = self.make_sum(narrow, 0)?;
        let Ok(bound) = i64::try_from(bound) else {
            return self.compare_beyond(relation, form, bound);
        };
        Ok(self.make_compare(relation, form, bound))
    }

    /// `form <relation> bound` for a bound outside `i64`: decided when the bound lies beyond
    /// the values a single atom can take ([`atom_values`]) or the form's range has a finite
    /// end on that side; an overflow otherwise, since a sum of several terms may itself leave
    /// `i64`.
    fn compare_beyond(
        &mut self,
        relation: Relation,
        form: ExprId,
        bound: i128,
    ) -> Result<ExprId, SymError> {
        let range = self.range(form);
        let beyond_atom = atom_values(self.arena.node(form))
            .is_some_and(|(floor, ceiling)| bound < floor || ceiling < bound);
        let bounded = beyond_atom
            || if bound > 0 {
                range.finite_hi().is_some()
            } else {
                range.finite_lo().is_some()
            };
        if !bounded {
            return Err(SymError::Overflow);
        }
        Ok(self.bool(holds(relation, bound.signum())))
    }

    fn flatten_connective(
        &mut self,
        a: ExprId,
        b: ExprId,
        disjunction: bool,
    ) -> Result<Vec<ExprId>, SymError> {
        let mut args = Vec::new();
        for operand in [a, b] {
            let operand = self.truth(operand)?;
            match (self.arena.node(operand), disjunction) {
                (Node::And(inner), false) | (Node::Or(inner), true) => {
                    args.extend_from_slice(inner);
                }
                _ => args.push(operand),
            }
        }
        Ok(args)
    }

    fn make_connective(&mut self, mut args: Vec<ExprId>, disjunction: bool) -> ExprId {
        match args.as_slice() {
            [] => return self.bool(!disjunction),
            [single] => return *single,
            _ => {}
        }
        args.sort_by(|x, y| self.arena.order(*x, *y));
        args.dedup();
        let node = if disjunction {
            Node::Or(args.into())
        } else {
            Node::And(args.into())
        };
        self.arena.intern(node, None)
    }

    fn fold_connective(
        &mut self,
        args: &[ExprId],
        map: fn(&mut Self, ExprId) -> Result<ExprId, SymError>,
        join: fn(&mut Self, ExprId, ExprId) -> Result<ExprId, SymError>,
    ) -> Result<ExprId, SymError> {
        let mut total = map(self, args[0])?;
        for &arg in &args[1..] {
            let arg = map(self, arg)?;
            total = join(self, total, arg)?;
        }
        Ok(total)
    }

    /// Simplifies a conjunction: drops `true`, merges bounds on each form into one interval
    /// with exclusions. `None` when the conjunction is false.
    fn simplify_conjuncts(&mut self, args: Vec<ExprId>) -> Option<Vec<ExprId>> {
        let mut groups: Vec<FormGroup> = Vec::new();
        let mut others = Vec::new();
        for arg in args {
            match *self.arena.node(arg) {
                Node::Bool(true) => {}
                Node::Bool(false) => return None,
                Node::Compare {
                    relation,
                    form,
                    bound,
                } => {
                    let index = groups
                        .iter()
                        .position(|g| g.form == form)
                        .unwrap_or_else(|| {
                            groups.push(FormGroup::new(form));
                            groups.len() - 1
                        });
                    groups[index].add(arg, relation, bound);
                }
                _ => others.push(arg),
            }
        }
        for group in groups {
            if !group.emit(self, &mut others) {
                return None;
            }
        }
        Some(others)
    }
}

/// The bounds one conjunction puts on one form.
struct FormGroup {
    form: ExprId,
    /// Bounds in `i128`, so that `i64::MIN` and `i64::MAX` stay ordinary values; the
    /// `i128` extremes mean unbounded.
    lo: i128,
    hi: i128,
    excluded: Vec<i128>,
    /// The comparisons merged, kept in case the merged bounds leave `i64`.
    originals: Vec<ExprId>,
}

impl FormGroup {
    fn new(form: ExprId) -> FormGroup {
        FormGroup {
            form,
            lo: i128::MIN,
            hi: i128::MAX,
            excluded: Vec::new(),
            originals: Vec::new(),
        }
    }

    fn add(&mut self, cond: ExprId, relation: Relation, bound: i64) {
        self.originals.push(cond);
        let bound = i128::from(bound);
        match relation {
            Relation::Eq => {
                self.lo = self.lo.max(bound);
                self.hi = self.hi.min(bound);
            }
            Relation::Ne => self.excluded.push(bound),
            Relation::Le => self.hi = self.hi.min(bound),
            Relation::Ge => self.lo = self.lo.max(bound),
        }
    }

    /// Pushes the merged comparisons; false when they contradict each other.
    fn emit(mut self, env: &mut ShapeEnv, out: &mut Vec<ExprId>) -> bool {
        // A comparison that no value of a single atom can fail is left out; a sum of several
        // terms may leave `i64`.
        let (floor, ceiling) =
            atom_values(env.arena.node(self.form)).unwrap_or((i128::MIN, i128::MAX));
        self.lo = self.lo.max(floor);
        self.hi = self.hi.min(ceiling);
        while self.lo <= self.hi && self.excluded.contains(&self.lo) {
            self.lo += 1;
        }
        while self.lo <= self.hi && self.excluded.contains(&self.hi) {
            self.hi -= 1;
        }
        if self.lo > self.hi {
            return false;
        }
        let mut parts = Vec::new();
        if self.lo == self.hi {
            parts.push((Relation::Eq, self.lo));
        } else {
            if self.lo != floor {
                parts.push((Relation::Ge, self.lo));
            }
            if self.hi != ceiling {
                parts.push((Relation::Le, self.hi));
            }
            self.excluded.sort_unstable();
            self.excluded.dedup();
            for &value in &self.excluded {
                if self.lo < value && value < self.hi {
                    parts.push((Relation::Ne, value));
                }
            }
        }
        // Moved off excluded values, a bound may leave `i64` (a form of several terms can):
        // then the comparisons stay as they were.
        let Ok(parts) = parts
            .into_iter()
            .map(|(relation, bound)| i64::try_from(bound).map(|bound| (relation, bound)))
            .collect::<Result<Vec<_>, _>>()
        else {
            out.extend(self.originals);
            return true;
        };
        for (relation, bound) in parts {
            let cond = env.make_compare(relation, self.form, bound);
            match env.as_bool(cond) {
                Some(true) => {}
                Some(false) => return false,
                None => out.push(cond),
            }
        }
        true
    }
}

/// The values a single atom can take: an `i64`, except that a product may be 2^63. A
/// product's sign and constant factor live in the sum around it, so `(-x) ** 21`, whose value
/// may be `i64::MIN`, is `-1 * x ** 21` with `x ** 21` equal to 2^63. `None` for a sum, which
/// may leave `i64` further.
fn atom_values(node: &Node) -> Option<(i128, i128)> {
    let (floor, ceiling) = (i128::from(i64::MIN), i128::from(i64::MAX));
    match node {
        Node::Sum { .. } => None,
        Node::Product(_) => Some((floor, ceiling + 1)),
        _ => Some((floor, ceiling)),
    }
}

fn holds(relation: Relation, bound: i128) -> bool {
    match relation {
        Relation::Eq => bound == 0,
        Relation::Ne => bound != 0,
        Relation::Le => 0 <= bound,
        Relation::Ge => 0 >= bound,
    }
}

/// The relation after multiplying both sides by −1.
fn mirror(relation: Relation) -> Relation {
    match relation {
        Relation::Le => Relation::Ge,
        Relation::Ge => Relation::Le,
        other => other,
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
