//! Explanations of undecidable questions: what is known about each unbacked symbol involved,
//! and a short list of checks that would decide the question (spec §7).

use crate::source::Span;

use super::env::ShapeEnv;
use super::node::{ExprId, Node, Relation};
use super::range::Range;
use super::symbol::{Origin, SymbolId};

/// Most facts listed per symbol.
const FACT_LIMIT: usize = 8;
/// Most suggestions listed.
const SUGGESTION_LIMIT: usize = 4;

/// Why a question could not be decided, for a `data-dependent-*` diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explanation {
    /// The question, simplified, in TSL syntax.
    pub condition: String,
    /// Each unbacked symbol of the question, in creation order.
    pub symbols: Vec<SymbolReport>,
    /// TSL statements that would decide it: `check 2*u0 == 3*u1`, `check_size u0`.
    pub suggestions: Vec<String>,
}

/// What the environment knows about one symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolReport {
    /// The symbol.
    pub symbol: SymbolId,
    /// Its printed name, `u0`.
    pub name: String,
    /// Where it was made (unbacked symbols).
    pub origin: Option<Origin>,
    /// Its current range.
    pub range: Range,
    /// Whether it is size-like.
    pub size_like: bool,
    /// Facts that mention it, in TSL syntax, oldest first.
    pub facts: Vec<String>,
}

impl ShapeEnv {
    /// Explains a question (boolean, or an integer whose value was needed).
    pub fn explain(&mut self, question: ExprId) -> Explanation {
        let question = self.resolve(question);
        let symbols = self.unbacked_symbols(question);
        let reports = symbols.iter().map(|&symbol| self.report(symbol)).collect();
        let suggestions = if self.is_bool(question) {
            self.suggestions(question, &symbols)
        } else {
            self.size_suggestions(&symbols, None)
        };
        Explanation {
            condition: self.display(question),
            symbols: reports,
            suggestions,
        }
    }

    fn report(&self, symbol: SymbolId) -> SymbolReport {
        let entry = self.symbol(symbol);
        let mut facts: Vec<String> = Vec::new();
        for fact in self.facts.symbol_facts(symbol) {
            for text in self.render_fact(fact) {
                if !facts.contains(&text) && facts.len() < FACT_LIMIT {
                    facts.push(text);
                }
            }
        }
        SymbolReport {
            symbol,
            name: entry.name().to_string(),
            origin: entry.origin().cloned(),
            range: entry.range,
            size_like: entry.size_like,
            facts,
        }
    }

    /// A learned fact as TSL conditions: a disjunction as is, a form as its bounds and
    /// exclusions (a bare symbol's bounds are its range, reported apart).
    fn render_fact(&self, fact: ExprId) -> Vec<String> {
        if self.is_bool(fact) {
            return vec![self.display(fact)];
        }
        let Some(known) = self.facts.form(fact) else {
            return Vec::new();
        };
        let mut parts = Vec::new();
        let bounds = known.bounds;
        if !matches!(self.arena.node(fact), Node::Symbol(_)) {
            match (bounds.finite_lo(), bounds.finite_hi()) {
                (Some(lo), Some(hi)) if lo == hi => parts.push((Relation::Eq, lo)),
                (lo, hi) => {
                    parts.extend(lo.map(|lo| (Relation::Ge, lo)));
                    parts.extend(hi.map(|hi| (Relation::Le, hi)));
                }
            }
        }
        parts.extend(known.excluded.iter().map(|&value| (Relation::Ne, value)));
        parts
            .into_iter()
            .map(|(relation, bound)| self.display_relation(relation, fact, bound))
            .collect()
    }

    /// The condition itself, its negation, and `check_size` for each symbol whose
    /// non-negativity would decide it.
    fn suggestions(&mut self, cond: ExprId, symbols: &[SymbolId]) -> Vec<String> {
        let mut suggestions = vec![format!("check {}", self.show(cond))];
        if let Ok(negation) = self.not(cond) {
            if self.as_bool(negation).is_none() {
                suggestions.push(format!("check {}", self.show(negation)));
            }
        }
        suggestions.extend(self.size_suggestions(symbols, Some(cond)));
        suggestions.truncate(SUGGESTION_LIMIT);
        suggestions
    }

    /// `check_size u` for each unbacked symbol not yet size-like; with a condition, only for
    /// those whose `check_size` would decide it.
    fn size_suggestions(&self, symbols: &[SymbolId], cond: Option<ExprId>) -> Vec<String> {
        let mut suggestions = Vec::new();
        for &symbol in symbols {
            let entry = self.symbol(symbol);
            if entry.size_like || entry.is_backed() {
                continue;
            }
            let decides = cond.is_none_or(|cond| {
                let mut trial = self.clone();
                let size = trial.symbol_expr(symbol);
                let checked = trial.check_size(size, None, Span::default());
                let cond = trial.resolve(cond);
                checked.is_ok() && trial.decide(cond, false).is_some()
            });
            if decides {
                suggestions.push(format!("check_size {}", entry.name()));
            }
        }
        suggestions
    }
}
