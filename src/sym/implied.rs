//! What a learned comparison implies about other forms, learned with it:
//!
//! - an equality teaches a congruence for each term of coefficient ±1: `u == 3*v` (that is
//!   `u - 3*v == 0`) teaches `u % 3 == 0`, and then `(u // 3) * 3` is `u` (rules.rs);
//! - a bound on a quotient `a // k` (constant `k >= 2`) bounds the dividend: `a // k >= c`
//!   is `a >= k*c` and `a // k <= c` is `a <= k*c + k - 1`, so `a // 4 == 2` teaches
//!   `8 <= a <= 11`.
//!
//! Each implied fact holds whenever the comparison does, and is about a form of its own, so
//! learning it never comes back here with the same form.

use super::arith::gcd;
use super::env::ShapeEnv;
use super::node::{ExprId, Node, Relation};

impl ShapeEnv {
    /// Learns what `form <relation> bound` implies beyond its own form.
    pub(super) fn learn_implied(&mut self, relation: Relation, form: ExprId, bound: i64) {
        if relation == Relation::Eq {
            self.learn_congruences(form, bound);
        }
        self.learn_dividend_bounds(relation, form, bound);
    }

    /// `Σ cᵢ*tᵢ == value` with `c₀ = ±1` and `g` the gcd of the other coefficients:
    /// `t₀ % g == (c₀*value) % g`.
    fn learn_congruences(&mut self, form: ExprId, value: i64) {
        let poly = self.poly(form);
        if poly.terms.len() < 2 {
            return;
        }
        for (index, &(term, coefficient)) in poly.terms.iter().enumerate() {
            if coefficient.unsigned_abs() != 1 {
                continue;
            }
            let others = poly.terms.iter().enumerate().filter(|&(i, _)| i != index);
            let modulus = others.fold(0, |acc, (_, &(_, c))| gcd(acc, c.unsigned_abs()));
            let Some(modulus) = i64::try_from(modulus).ok().filter(|&g| g >= 2) else {
                continue;
            };
            let Some(target) = value.checked_mul(coefficient) else {
                continue;
            };
            self.learn_remainder(term, modulus, target.rem_euclid(modulus));
        }
    }

    /// Learns `term % modulus == remainder`.
    fn learn_remainder(&mut self, term: ExprId, modulus: i64, remainder: i64) {
        let modulus = self.int(modulus);
        let Ok(left) = self.modulo(term, modulus) else {
            return;
        };
        if let Ok(cond) = self.bound_condition(left, Relation::Eq, remainder) {
            self.learn(cond);
        }
    }

    /// Bounds on `a // k` as bounds on `a`.
    fn learn_dividend_bounds(&mut self, relation: Relation, form: ExprId, bound: i64) {
        let Node::FloorDiv(dividend, divisor) = *self.arena.node(form) else {
            return;
        };
        let Some(k) = self.as_int(divisor).filter(|&k| k >= 2) else {
            return;
        };
        let lowest = bound.checked_mul(k);
        let highest = lowest.and_then(|lowest| lowest.checked_add(k - 1));
        let mut implied = Vec::with_capacity(2);
        if let (Relation::Eq | Relation::Ge, Some(lowest)) = (relation, lowest) {
            implied.push(self.bound_condition(dividend, Relation::Ge, lowest));
        }
        if let (Relation::Eq | Relation::Le, Some(highest)) = (relation, highest) {
            implied.push(self.bound_condition(dividend, Relation::Le, highest));
        }
        for cond in implied.into_iter().flatten() {
            self.learn(cond);
        }
    }
}
