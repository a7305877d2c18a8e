//! Queries and checks (spec §6): decide from facts; else, on backed symbols only, decide from
//! the hints and record a guard; else report the unbacked symbols involved.

use crate::source::Span;

use super::bounds::decide_by_range;
use super::env::{Event, Guard, RuntimeAssert, ShapeEnv, SymError};
use super::eval::EvalError;
use super::node::{ExprId, Node, Relation};
use super::symbol::SymbolId;

/// How a boolean question is asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Decide from facts, else guard on hints, else data-dependent.
    Normal,
    /// As `Normal`, assuming every size-like unbacked symbol is at least 2 (and below its
    /// `check_size` maximum).
    SizeOblivious,
    /// Only what facts prove: never guards, never data-dependent.
    KnownTrue,
    /// As `Normal`, but false instead of a data-dependent error (a `Fallback` event is logged).
    GuardOrFalse,
    /// As `Normal`, but true instead of a data-dependent error.
    GuardOrTrue,
}

/// The answer to a boolean question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Proven from facts and ranges; nothing recorded.
    Decided(bool),
    /// Decided by the hints of backed symbols; a guard was recorded.
    Guarded(bool),
    /// Undecidable: it depends on these unbacked symbols.
    DataDependent {
        /// The unbacked symbols of the simplified question, sorted by id.
        unbacked: Vec<SymbolId>,
    },
    /// `Mode::KnownTrue` could not prove it; nothing recorded.
    Unknown,
    /// `GuardOrFalse`/`GuardOrTrue` fell back to this default; nothing recorded but an event.
    Defaulted(bool),
    /// Evaluating with the hints failed (the eager program would fail the same way).
    Error(EvalError),
}

impl Decision {
    /// The boolean value, when there is one.
    pub fn value(&self) -> Option<bool> {
        match self {
            Decision::Decided(value) | Decision::Guarded(value) | Decision::Defaulted(value) => {
                Some(*value)
            }
            _ => None,
        }
    }
}

/// The answer to an integer question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IntDecision {
    /// Proven from facts and ranges.
    Decided(i64),
    /// The hint value; the guard `expr == value` was recorded.
    Guarded(i64),
    /// It depends on these unbacked symbols.
    DataDependent {
        /// The unbacked symbols of the simplified expression, sorted by id.
        unbacked: Vec<SymbolId>,
    },
    /// Evaluating with the hints failed, or the expression is boolean.
    Error(EvalError),
}

/// What a `check` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckOutcome {
    /// Already proven: nothing to emit.
    AlreadyTrue,
    /// Proven false: the check fails now.
    False,
    /// Learned; a runtime assert was recorded and the tracer must emit it.
    Learned,
    /// On backed symbols only: decided by the hints and recorded as a guard; `false` means the
    /// check fails for this call.
    Guarded(bool),
    /// Evaluating with the hints failed.
    Error(EvalError),
}

impl ShapeEnv {
    /// Answers a boolean question (an integer operand means `!= 0`).
    pub fn evaluate_bool(&mut self, cond: ExprId, mode: Mode, span: Span) -> Decision {
        let cond = match self.truth(cond) {
            Ok(cond) => cond,
            Err(error) => return Decision::Error(eval_error(error)),
        };
        let oblivious = mode == Mode::SizeOblivious;
        let decided = match self.decide(cond, oblivious) {
            None if oblivious => self
                .oblivious_rewrite(cond)
                .and_then(|rewritten| self.decide(rewritten, true)),
            decided => decided,
        };
        if let Some(value) = decided {
            return Decision::Decided(value);
        }
        let unbacked = self.unbacked_symbols(cond);
        match mode {
            Mode::KnownTrue => Decision::Unknown,
            _ if unbacked.is_empty() => self.guard_on_hints(cond, span),
            Mode::GuardOrFalse | Mode::GuardOrTrue => {
                let value = mode == Mode::GuardOrTrue;
                self.events.push(Event::Fallback { cond, value, span });
                Decision::Defaulted(value)
            }
            Mode::Normal | Mode::SizeOblivious => Decision::DataDependent { unbacked },
        }
    }

    /// `guard_or_false(cond)`: the decision, else `false` without error.
    pub fn guard_or_false(&mut self, cond: ExprId, span: Span) -> bool {
        self.evaluate_bool(cond, Mode::GuardOrFalse, span)
            .value()
            .unwrap_or(false)
    }

    /// `guard_or_true(cond)`: the decision, else `true` without error.
    pub fn guard_or_true(&mut self, cond: ExprId, span: Span) -> bool {
        self.evaluate_bool(cond, Mode::GuardOrTrue, span)
            .value()
            .unwrap_or(true)
    }

    /// `known_true(cond)`: whether facts prove it without any guard.
    pub fn known_true(&mut self, cond: ExprId) -> bool {
        self.evaluate_bool(cond, Mode::KnownTrue, Span::default()) == Decision::Decided(true)
    }

    /// Answers an integer question (`range(n)`, list indexing).
    pub fn evaluate_int(&mut self, expr: ExprId, span: Span) -> IntDecision {
        if self.is_bool(expr) {
            return IntDecision::Error(EvalError::NotInteger);
        }
        let expr = self.resolve(expr);
        if let Some(value) = self.range(expr).constant() {
            return IntDecision::Decided(value);
        }
        let unbacked = self.unbacked_symbols(expr);
        if !unbacked.is_empty() {
            return IntDecision::DataDependent { unbacked };
        }
        let value = match self.eval_hint(expr) {
            Ok(value) => value,
            Err(error) => return IntDecision::Error(error),
        };
        let constant = self.int(value);
        if let Ok(cond) = self.eq(expr, constant) {
            self.record_guard(cond, span);
        }
        IntDecision::Guarded(value)
    }

    /// `check cond`: nothing if proven, an error if refuted; on backed symbols only a guard;
    /// otherwise the condition is learned and recorded as a runtime assert.
    pub fn check(&mut self, cond: ExprId, span: Span) -> CheckOutcome {
        let cond = match self.truth(cond) {
            Ok(cond) => cond,
            Err(error) => return CheckOutcome::Error(eval_error(error)),
        };
        match self.decide(cond, false) {
            Some(true) => return CheckOutcome::AlreadyTrue,
            Some(false) => return CheckOutcome::False,
            None => {}
        }
        if !self.arena.data(cond).unbacked {
            return match self.guard_on_hints(cond, span) {
                Decision::Guarded(value) => CheckOutcome::Guarded(value),
                Decision::Error(error) => CheckOutcome::Error(error),
                _ => CheckOutcome::AlreadyTrue,
            };
        }
        let symbols = self.free_symbols(cond);
        self.asserts.push(RuntimeAssert {
            cond,
            span,
            symbols,
        });
        self.events.push(Event::RuntimeAssert { cond, span });
        self.learn(cond);
        CheckOutcome::Learned
    }

    /// Learns `cond` as a fact without recording a guard or a runtime assert: for facts that
    /// hold by construction (an operation's output is never larger than its input) and for
    /// assumptions of a trace without hints. A refuted `cond` is left unlearned and reported
    /// as `false`.
    pub fn assume(&mut self, cond: ExprId) -> Result<bool, SymError> {
        let cond = self.truth(cond)?;
        match self.decide(cond, false) {
            Some(value) => Ok(value),
            None => {
                self.learn(cond);
                Ok(true)
            }
        }
    }

    /// `check_size size` (learns `size >= 0` and marks a symbol size-like) and, with a maximum,
    /// `size <= max` (size-oblivious queries then assume `size < max`).
    pub fn check_size(
        &mut self,
        size: ExprId,
        max: Option<ExprId>,
        span: Span,
    ) -> Result<CheckOutcome, SymError> {
        let size = self.int_operand(size)?;
        let zero = self.int(0);
        let nonnegative = self.ge(size, zero)?;
        let mut outcome = self.check(nonnegative, span);
        let symbol = self.as_symbol(size);
        if let Some(symbol) =
            symbol.filter(|_| severity(&outcome) <= severity(&CheckOutcome::Learned))
        {
            self.mark_size_like(symbol);
        }
        if let Some(max) = max {
            let max = self.int_operand(max)?;
            let bounded = self.le(size, max)?;
            outcome = worse(outcome, self.check(bounded, span));
            let below = self.lt(size, max)?;
            self.assume_when_oblivious(below);
            if let Some(symbol) = symbol {
                self.symbols[symbol.index()].size_max = Some(max);
            }
        }
        Ok(outcome)
    }

    /// Decides a resolved boolean from facts alone.
    pub(super) fn decide(&mut self, cond: ExprId, oblivious: bool) -> Option<bool> {
        if self.facts.is_refuted(cond) {
            return Some(false);
        }
        match *self.arena.node(cond) {
            Node::Bool(value) => Some(value),
            Node::Compare {
                relation,
                form,
                bound,
            } => self
                .decide_relation(relation, form, bound, oblivious)
                .or_else(|| self.decide_by_disjunctions(cond, oblivious)),
            Node::And(_) => self.decide_all(cond, oblivious, false),
            Node::Or(_) => self.decide_all(cond, oblivious, true),
            _ => None,
        }
    }

    /// `and` (`disjunction` false) or `or`: a decisive argument decides; all others decide
    /// the opposite; a known disjunction contained in an `or` makes it true.
    fn decide_all(&mut self, cond: ExprId, oblivious: bool, disjunction: bool) -> Option<bool> {
        if disjunction && self.facts.is_known_disjunction(cond) {
            return Some(true);
        }
        let args = match self.arena.node(cond) {
            Node::And(args) | Node::Or(args) => args.clone(),
            _ => return None,
        };
        let mut all_decided = true;
        for &arg in &args {
            match self.decide(arg, oblivious) {
                Some(value) if value == disjunction => return Some(disjunction),
                Some(_) => {}
                None => all_decided = false,
            }
        }
        if all_decided {
            return Some(!disjunction);
        }
        (disjunction && self.contains_known_disjunction(&args)).then_some(true)
    }

    fn contains_known_disjunction(&self, args: &[ExprId]) -> bool {
        args.iter().any(|&arg| {
            self.facts.disjunctions_with(arg).iter().take(4).any(|&known| {
                matches!(self.arena.node(known), Node::Or(inner) if inner.iter().all(|d| args.contains(d)))
            })
        })
    }

    /// A comparison is true when a known disjunction contains it and every other disjunct is
    /// false.
    fn decide_by_disjunctions(&mut self, cond: ExprId, oblivious: bool) -> Option<bool> {
        let known: Vec<ExprId> = self
            .facts
            .disjunctions_with(cond)
            .iter()
            .take(4)
            .copied()
            .collect();
        for disjunction in known {
            let Node::Or(args) = self.arena.node(disjunction).clone() else {
                continue;
            };
            let others_false = args.iter().filter(|&&arg| arg != cond).all(|&arg| {
                let Node::Compare {
                    relation,
                    form,
                    bound,
                } = *self.arena.node(arg)
                else {
                    return false;
                };
                self.decide_relation(relation, form, bound, oblivious) == Some(false)
            });
            if others_false {
                return Some(true);
            }
        }
        None
    }

    /// Decides `form <relation> bound` from ranges, then by linear reasoning.
    fn decide_relation(
        &mut self,
        relation: Relation,
        form: ExprId,
        bound: i64,
        oblivious: bool,
    ) -> Option<bool> {
        let range = self.range_in(form, oblivious);
        let excluded = self.facts.excluded(form);
        if let Some(value) = decide_by_range(relation, range, bound, excluded) {
            return Some(value);
        }
        if !self.has_linear_facts(form) {
            return None;
        }
        let bound = i128::from(bound);
        match relation {
            Relation::Le => self.decide_at_most(form, false, bound, oblivious),
            Relation::Ge => self.decide_at_most(form, true, -bound, oblivious),
            Relation::Eq => self.decide_equal(form, bound, oblivious),
            Relation::Ne => self
                .decide_equal(form, bound, oblivious)
                .map(|equal| !equal),
        }
    }

    /// Decides `±form <= bound` by linear reasoning: an upper bound proves it, a lower bound
    /// above it refutes it.
    fn decide_at_most(
        &mut self,
        form: ExprId,
        negate: bool,
        bound: i128,
        oblivious: bool,
    ) -> Option<bool> {
        if self.linear_upper_bound(form, negate, bound, oblivious) <= bound {
            return Some(true);
        }
        let above = -(bound + 1);
        (self.linear_upper_bound(form, !negate, above, oblivious) <= above).then_some(false)
    }

    /// Decides `form == bound` by linear reasoning on both bounds.
    fn decide_equal(&mut self, form: ExprId, bound: i128, oblivious: bool) -> Option<bool> {
        let high = self.linear_upper_bound(form, false, bound - 1, oblivious);
        let negated_low = self.linear_upper_bound(form, true, -(bound + 1), oblivious);
        if high < bound || negated_low < -bound {
            return Some(false);
        }
        (high == bound && negated_low == -bound).then_some(true)
    }

    /// Decides by the hints and records the guard (the condition or its negation).
    fn guard_on_hints(&mut self, cond: ExprId, span: Span) -> Decision {
        let value = match self.eval_hint(cond) {
            Ok(value) => value != 0,
            Err(error) => return Decision::Error(error),
        };
        let guard = if value { Ok(cond) } else { self.not(cond) };
        match guard {
            Ok(guard) => self.record_guard(guard, span),
            Err(error) => return Decision::Error(eval_error(error)),
        }
        Decision::Guarded(value)
    }

    /// Records a guard (once) and learns it.
    fn record_guard(&mut self, cond: ExprId, span: Span) {
        if self.guard_index.insert(cond) {
            self.guards.push(Guard { cond, span });
            self.events.push(Event::Guard { cond, span });
        }
        self.learn(cond);
    }
}

fn eval_error(error: SymError) -> EvalError {
    match error {
        SymError::DivisionByZero => EvalError::DivisionByZero,
        SymError::NotInteger => EvalError::NotInteger,
        SymError::Overflow | SymError::BadExponent => EvalError::Overflow,
    }
}

/// Order of check outcomes from best to worst, to combine the two halves of `check_size`.
fn severity(outcome: &CheckOutcome) -> u8 {
    match outcome {
        CheckOutcome::AlreadyTrue => 0,
        CheckOutcome::Guarded(true) => 1,
        CheckOutcome::Learned => 2,
        CheckOutcome::Guarded(false) => 3,
        CheckOutcome::False => 4,
        CheckOutcome::Error(_) => 5,
    }
}

fn worse(a: CheckOutcome, b: CheckOutcome) -> CheckOutcome {
    if severity(&b) > severity(&a) { b } else { a }
}
