//! Bounded linear reasoning: proves bounds on a linear form by chaining facts that eliminate
//! its terms, so that `a <= b` and `b <= n` decide `a <= n`.
//!
//! A search state reads `S*form <= R + C` (initially `S = 1`, `R = form`, `C = 0`). A fact
//! `G <= g` whose coefficient on a term `t` of `R` has the sign of `t`'s coefficient `r` gives
//! `|gₜ|*S*form <= (|gₜ|*R - |r|*G) + |gₜ|*C + |r|*g`, where `t` has cancelled: one
//! Fourier–Motzkin step, taken along a single path. Each state is bounded by interval
//! arithmetic over its terms' ranges. The search is depth-first over the facts that contain one
//! chosen term, with a fixed budget of states and of facts per term, so a query costs the same
//! however many facts the environment holds. Results are remembered per form until a fact
//! changes, like ranges.
//!
//! Besides learned facts, every `min` and `max` term brings the facts that hold by
//! construction, `min(a, b) <= a`, `min(a, b) <= b`, `max(a, b) >= a` and `max(a, b) >= b`:
//! a positive `min` (a negative `max`) term may be replaced by any of its arguments, which
//! bounds it from above, so `min(u, n) <= n` holds and `a <= min(b, c)` gives `a <= b`.

use super::env::ShapeEnv;
use super::node::{ExprId, Node};

/// Most states one bound search visits.
const STATE_BUDGET: u32 = 16;
/// Most eliminations along one path.
const DEPTH_LIMIT: u32 = 4;
/// Most facts tried per eliminated term (the most recent usable ones).
const FACTS_PER_TERM: usize = 4;
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

/// A fact ready to eliminate a term.
#[derive(Clone, Copy)]
struct UsableFact {
    form: ExprId,
    coefficient: i128,
    bound: i128,
}

/// A remembered search result, valid while the epoch matches.
#[derive(Clone, Copy, Debug)]
pub(super) struct BoundMemo {
    epoch: u32,
    best: i128,
    /// The search ran out of states or facts rather than stopping at its goal, so `best` is
    /// all it can prove.
    complete: bool,
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
    /// budget, stopping as soon as it is at most `goal`; [`UNBOUNDED`] when none. Results are
    /// remembered until a fact changes.
    pub(super) fn linear_upper_bound(
        &mut self,
        form: ExprId,
        negate: bool,
        goal: i128,
        oblivious: bool,
    ) -> i128 {
        let key = (form, negate, oblivious);
        if let Some(memo) = self.cache.bounds.get(&key) {
            if memo.epoch == self.cache.epoch && (memo.best <= goal || memo.complete) {
                return memo.best;
            }
        }
        let mut search = Search {
            budget: STATE_BUDGET,
            best: UNBOUNDED,
            goal,
            oblivious,
        };
        self.search(form, negate, &mut search);
        let memo = BoundMemo {
            epoch: self.cache.epoch,
            best: search.best,
            complete: search.best > goal,
        };
        self.cache.bounds.insert(key, memo);
        search.best
    }

    fn search(&mut self, form: ExprId, negate: bool, search: &mut Search) {
        let mut stack = std::mem::take(&mut self.scratch.linear);
        stack.clear();
        let sign = if negate { -1 } else { 1 };
        match self.arena.node(form) {
            Node::Sum { terms, .. } => {
                stack.extend(terms.iter().map(|&(t, c)| (t, sign * i128::from(c))));
            }
            _ => stack.push((form, sign)),
        }
        let root = State {
            start: 0,
            scale: 1,
            constant: 0,
            depth: 0,
        };
        self.explore(&mut stack, root, search);
        self.scratch.linear = stack;
    }

    /// Whether some term of the form appears in a fact with other terms, or is a `min` or
    /// `max`.
    pub(super) fn has_linear_facts(&self, form: ExprId) -> bool {
        let usable = |term: ExprId| self.facts.mentions(term) || self.is_extremum(term);
        match self.arena.node(form) {
            Node::Sum { terms, .. } => terms.iter().any(|&(t, _)| usable(t)),
            _ => usable(form),
        }
    }

    fn is_extremum(&self, term: ExprId) -> bool {
        matches!(self.arena.node(term), Node::Min(_) | Node::Max(_))
    }

    /// The arguments that bound `term` (`-term` when not `positive`) from above by
    /// construction: those of a `min` (of a `max`); none for any other term.
    fn extremum_bounds(&self, term: ExprId, positive: bool) -> &[ExprId] {
        match (self.arena.node(term), positive) {
            (Node::Min(args), true) | (Node::Max(args), false) => args,
            _ => &[],
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
        let positive = coefficient > 0;
        for argument in self.extremum_bounds(term, positive).to_vec() {
            let child_start = stack.len();
            if let Some(child) = self.substitute(stack, state, (term, coefficient), argument) {
                self.explore(stack, child, search);
            }
            stack.truncate(child_start);
            if search.budget == 0 || search.best <= search.goal {
                return;
            }
        }
        let listed = self.facts.bounding(term, positive).len();
        let mut tried = 0;
        for position in (0..listed).rev().take(SCAN_LIMIT) {
            let (index, fact_coefficient) = self.facts.bounding(term, positive)[position];
            let fact = self.usable_fact(index, fact_coefficient, coefficient, search.oblivious);
            let Some(fact) = fact else {
                continue;
            };
            let child_start = stack.len();
            if let Some(child) = self.eliminate(stack, state, coefficient, fact) {
                self.explore(stack, child, search);
            }
            stack.truncate(child_start);
            tried += 1;
            if tried == FACTS_PER_TERM || search.budget == 0 || search.best <= search.goal {
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
        let mut hopeless = false;
        let mut substitutes = false;
        for &(term, coefficient) in terms {
            let range = self.range_in(term, oblivious);
            let end = if coefficient > 0 {
                range.finite_hi()
            } else {
                range.finite_lo()
            };
            let contribution = end.and_then(|end| coefficient.checked_mul(i128::from(end)));
            upper = upper.zip(contribution).and_then(|(u, c)| u.checked_add(c));
            let positive = coefficient > 0;
            let arguments = self.extremum_bounds(term, positive).len();
            let facts = self.facts.bounding(term, positive).len() + arguments;
            // An unbounded term that no fact mentions can never cancel, unless an argument
            // of a `min` or `max` brings it.
            hopeless |= contribution.is_none() && facts == 0;
            substitutes |= arguments > 0;
            let candidate = (contribution.is_some(), facts, term, coefficient);
            if facts > 0 && pick.is_none_or(|best| (candidate.0, candidate.1) < (best.0, best.1)) {
                pick = Some(candidate);
            }
        }
        let substitutes = substitutes || self.facts.has_extremum_terms();
        let pick = pick.filter(|_| !hopeless || substitutes);
        (
            upper,
            pick.map(|(_, _, term, coefficient)| (term, coefficient)),
        )
    }

    /// A live fact that bounds the chosen term in this mode: its form, its coefficient on the
    /// term, and the upper bound of `G = ±form` oriented so that `G`'s coefficient on the term
    /// has the sign of `coefficient`.
    fn usable_fact(
        &self,
        index: u32,
        fact_coefficient: i64,
        coefficient: i128,
        oblivious: bool,
    ) -> Option<UsableFact> {
        let entry = self.facts.entry(index);
        if !entry.live {
            return None;
        }
        let bounds = if oblivious {
            entry.bounds.intersect(entry.oblivious)
        } else {
            entry.bounds
        };
        let fact_coefficient = i128::from(fact_coefficient);
        let aligned = (fact_coefficient > 0) == (coefficient > 0);
        let bound = if aligned {
            i128::from(bounds.finite_hi()?)
        } else {
            -i128::from(bounds.finite_lo()?)
        };
        Some(UsableFact {
            form: entry.form,
            coefficient: fact_coefficient,
            bound,
        })
    }

    /// Pushes the child state that cancels the chosen term with `fact`; `None` when
    /// coefficients grow too large.
    fn eliminate(
        &self,
        stack: &mut Vec<(ExprId, i128)>,
        state: State,
        coefficient: i128,
        fact: UsableFact,
    ) -> Option<State> {
        let Node::Sum { terms, .. } = self.arena.node(fact.form) else {
            return None;
        };
        let orientation = if (fact.coefficient > 0) == (coefficient > 0) {
            1
        } else {
            -1
        };
        let (alpha, beta) = (fact.coefficient.abs(), coefficient.abs());
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
        drop_zero_terms(stack, child_start);
        let scaled = limited(state.constant.checked_mul(alpha))?;
        let added = limited(beta.checked_mul(fact.bound))?;
        Some(State {
            start: child_start,
            scale: limited(state.scale.checked_mul(alpha))?,
            constant: limited(scaled.checked_add(added))?,
            depth: state.depth + 1,
        })
    }
}

impl ShapeEnv {
    /// Pushes the child state where `coefficient*term`, a `min` or `max`, is replaced by
    /// `coefficient*argument`, which bounds it from above; `None` when coefficients grow too
    /// large.
    fn substitute(
        &self,
        stack: &mut Vec<(ExprId, i128)>,
        state: State,
        (term, coefficient): (ExprId, i128),
        argument: ExprId,
    ) -> Option<State> {
        let child_start = stack.len();
        for index in state.start..child_start {
            if stack[index].0 != term {
                stack.push(stack[index]);
            }
        }
        let poly = self.poly(argument);
        for &(t, c) in &poly.terms {
            let delta = limited(coefficient.checked_mul(i128::from(c)))?;
            match stack[child_start..].iter_mut().find(|entry| entry.0 == t) {
                Some(entry) => entry.1 += delta,
                None => stack.push((t, delta)),
            }
        }
        drop_zero_terms(stack, child_start);
        let added = limited(coefficient.checked_mul(i128::from(poly.constant)))?;
        Some(State {
            start: child_start,
            scale: state.scale,
            constant: limited(state.constant.checked_add(added))?,
            depth: state.depth + 1,
        })
    }
}

/// Removes the terms whose coefficient cancelled, from `start` on.
fn drop_zero_terms(stack: &mut Vec<(ExprId, i128)>, start: usize) {
    let mut kept = start;
    for index in start..stack.len() {
        if stack[index].1 != 0 {
            stack[kept] = stack[index];
            kept += 1;
        }
    }
    stack.truncate(kept);
}

fn limited(value: Option<i128>) -> Option<i128> {
    value.filter(|v| v.abs() < COEFFICIENT_LIMIT)
}
