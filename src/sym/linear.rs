//! Bounded linear reasoning: proves bounds on a linear form by chaining facts that eliminate
//! its terms, so that `a <= b` and `b <= n` decide `a <= n`.
//!
//! A search state reads `S*form <= R + C` (initially `S = 1`, `R = form`, `C = 0`). A fact
//! `G <= g` whose coefficient on a term `t` of `R` has the sign of `t`'s coefficient `r` gives
//! `|gₜ|*S*form <= (|gₜ|*R - |r|*G) + |gₜ|*C + |r|*g`, where `t` has cancelled: one
//! Fourier–Motzkin step, taken along a single path. Each state is bounded by interval
//! arithmetic over its terms' ranges. The search is depth-first over the facts that contain one
//! chosen term, with a fixed budget of states and of facts per term, so a query costs the same
//! however many facts the environment holds.

use super::env::ShapeEnv;
use super::node::{ExprId, Node};
use super::range::widen;

/// Most states one bound search visits.
const STATE_BUDGET: u32 = 24;
/// Most eliminations along one path.
const DEPTH_LIMIT: u32 = 4;
/// Most facts tried per eliminated term (the most recent ones).
const FACTS_PER_TERM: usize = 8;
/// Most index entries scanned to find them.
const SCAN_LIMIT: usize = 32;
/// Coefficients past this are abandoned rather than risk overflow.
const COEFFICIENT_LIMIT: i128 = 1 << 100;

/// An unbounded result.
pub(super) const UNBOUNDED: i128 = i128::MAX;

struct Search {
    budget: u32,
    best: i128,
    goal: i128,
    oblivious: bool,
}

/// One state: `scale*form <= stack[start..] + constant`.
#[derive(Clone, Copy)]
struct State {
    start: usize,
    scale: i128,
    constant: i128,
    depth: u32,
}

impl ShapeEnv {
    /// The best upper bound of `form` (of `-form` when `negate`) that the facts prove within the
    /// budget, stopping as soon as it is at most `goal`; [`UNBOUNDED`] when none.
    pub(super) fn linear_upper_bound(
        &mut self,
        form: ExprId,
        negate: bool,
        goal: i128,
        oblivious: bool,
    ) -> i128 {
        let mut stack = std::mem::take(&mut self.scratch.linear);
        stack.clear();
        let sign = if negate { -1 } else { 1 };
        match self.arena.node(form) {
            Node::Sum { terms, .. } => {
                stack.extend(terms.iter().map(|&(t, c)| (t, sign * i128::from(c))));
            }
            _ => stack.push((form, sign)),
        }
        let mut search = Search {
            budget: STATE_BUDGET,
            best: UNBOUNDED,
            goal,
            oblivious,
        };
        let root = State {
            start: 0,
            scale: 1,
            constant: 0,
            depth: 0,
        };
        self.explore(&mut stack, root, &mut search);
        self.scratch.linear = stack;
        search.best
    }

    /// Whether some term of the form appears in a fact with other terms.
    pub(super) fn has_linear_facts(&self, form: ExprId) -> bool {
        match self.arena.node(form) {
            Node::Sum { terms, .. } => terms
                .iter()
                .any(|&(t, _)| !self.facts.forms_with(t).is_empty()),
            _ => !self.facts.forms_with(form).is_empty(),
        }
    }

    fn explore(&mut self, stack: &mut Vec<(ExprId, i128)>, state: State, search: &mut Search) {
        if search.budget == 0 || search.best <= search.goal {
            return;
        }
        search.budget -= 1;
        let (upper, pick) =
            self.bound_state(&stack[state.start..], state.constant, search.oblivious);
        if let Some(upper) = upper {
            search.best = search.best.min(upper.div_euclid(state.scale));
        }
        if search.best <= search.goal || state.depth == DEPTH_LIMIT {
            return;
        }
        let Some((term, coefficient)) = pick else {
            return;
        };
        let (facts, count) = self.candidate_facts(term, coefficient, search.oblivious);
        for &(fact, bound) in &facts[..count] {
            let child_start = stack.len();
            if let Some(child) = self.eliminate(stack, state, term, coefficient, fact, bound) {
                self.explore(stack, child, search);
            }
            stack.truncate(child_start);
            if search.budget == 0 || search.best <= search.goal {
                return;
            }
        }
    }

    /// The interval upper bound of `terms + constant`, and the term to eliminate next: one
    /// with an unbounded contribution if possible, then the one in fewest facts.
    fn bound_state(
        &mut self,
        terms: &[(ExprId, i128)],
        constant: i128,
        oblivious: bool,
    ) -> (Option<i128>, Option<(ExprId, i128)>) {
        let mut upper = Some(constant);
        let mut pick: Option<(bool, usize, ExprId, i128)> = None;
        for &(term, coefficient) in terms {
            let range = self.range_in(term, oblivious);
            let end = if coefficient > 0 {
                range.finite_hi()
            } else {
                range.finite_lo()
            };
            let contribution = end.and_then(|end| coefficient.checked_mul(widen(end)));
            upper = upper.zip(contribution).and_then(|(u, c)| u.checked_add(c));
            let facts = self.facts.forms_with(term).len();
            let candidate = (contribution.is_some(), facts, term, coefficient);
            if facts > 0 && pick.is_none_or(|best| (candidate.0, candidate.1) < (best.0, best.1)) {
                pick = Some(candidate);
            }
        }
        (
            upper,
            pick.map(|(_, _, term, coefficient)| (term, coefficient)),
        )
    }

    /// Recent live facts containing `term` that bound it in the needed direction, each with
    /// the bound of `G = ±fact` oriented so that its coefficient on `term` has the sign of
    /// `coefficient`.
    fn candidate_facts(
        &self,
        term: ExprId,
        coefficient: i128,
        oblivious: bool,
    ) -> ([(ExprId, i128); FACTS_PER_TERM], usize) {
        let mut found = [(term, 0); FACTS_PER_TERM];
        let mut count = 0;
        for &fact in self.facts.forms_with(term).iter().rev().take(SCAN_LIMIT) {
            let Some(bounds) = self.facts.form_bounds(fact, oblivious) else {
                continue;
            };
            let Some(fact_coefficient) = self.coefficient_in(fact, term) else {
                continue;
            };
            let aligned = (fact_coefficient > 0) == (coefficient > 0);
            let bound = if aligned {
                bounds.finite_hi().map(i128::from)
            } else {
                bounds.finite_lo().map(|lo| -i128::from(lo))
            };
            if let Some(bound) = bound {
                found[count] = (fact, bound);
                count += 1;
                if count == FACTS_PER_TERM {
                    break;
                }
            }
        }
        (found, count)
    }

    fn coefficient_in(&self, form: ExprId, term: ExprId) -> Option<i64> {
        match self.arena.node(form) {
            Node::Sum { terms, .. } => terms.iter().find(|t| t.0 == term).map(|t| t.1),
            _ => None,
        }
    }

    /// Pushes the child state that cancels `term` with `fact`; `None` when coefficients grow
    /// too large.
    fn eliminate(
        &self,
        stack: &mut Vec<(ExprId, i128)>,
        state: State,
        term: ExprId,
        coefficient: i128,
        fact: ExprId,
        bound: i128,
    ) -> Option<State> {
        let Node::Sum { terms, .. } = self.arena.node(fact) else {
            return None;
        };
        let fact_coefficient = i128::from(self.coefficient_in(fact, term)?);
        let orientation = if (fact_coefficient > 0) == (coefficient > 0) {
            1
        } else {
            -1
        };
        let (alpha, beta) = (fact_coefficient.abs(), coefficient.abs());
        let child_start = stack.len();
        for index in state.start..child_start {
            let (t, c) = stack[index];
            stack.push((t, limited(c.checked_mul(alpha))?));
        }
        for &(t, c) in terms {
            let delta = limited(beta.checked_mul(orientation * i128::from(c)))?;
            match stack[child_start..].iter_mut().find(|entry| entry.0 == t) {
                Some(entry) => entry.1 -= delta,
                None => stack.push((t, -delta)),
            }
        }
        let mut kept = child_start;
        for index in child_start..stack.len() {
            if stack[index].1 != 0 {
                stack[kept] = stack[index];
                kept += 1;
            }
        }
        stack.truncate(kept);
        let scaled = limited(state.constant.checked_mul(alpha))?;
        let added = limited(beta.checked_mul(bound))?;
        Some(State {
            start: child_start,
            scale: limited(state.scale.checked_mul(alpha))?,
            constant: limited(scaled.checked_add(added))?,
            depth: state.depth + 1,
        })
    }
}

fn limited(value: Option<i128>) -> Option<i128> {
    value.filter(|v| v.abs() < COEFFICIENT_LIMIT)
}
