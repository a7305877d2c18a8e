//! Bottom-up range analysis of any expression, cached per node until a fact changes.
//!
//! A node's range combines its children's ranges (range.rs) and is then narrowed by what facts
//! say about its linear form. Stale nodes are recomputed children first, in creation order,
//! with no recursion. Size-oblivious ranges, which assume every size-like unbacked symbol is
//! at least 2 and below its maximum, live in a second cache.

use super::env::ShapeEnv;
use super::node::{ExprId, Node, Relation};
use super::range::Range;
use super::symbol::SymbolId;

impl ShapeEnv {
    /// The value range of an expression under the facts known now (a boolean gives `[0, 1]`,
    /// or a single point when the facts decide it).
    pub fn range(&mut self, expr: ExprId) -> Range {
        self.range_in(expr, false)
    }

    /// The range the rewrite rules read: the size-oblivious one while an expression is
    /// rebuilt for a size-oblivious question, the exact one otherwise.
    pub(super) fn rule_range(&mut self, expr: ExprId) -> Range {
        self.range_in(expr, self.oblivious_rules)
    }

    /// The range, size-obliviously when `oblivious` is set.
    pub(super) fn range_in(&mut self, expr: ExprId, oblivious: bool) -> Range {
        if let Some(range) = self.cached_range(expr, oblivious) {
            return range;
        }
        let mut stack = std::mem::take(&mut self.scratch.stack);
        let mut todo = std::mem::take(&mut self.scratch.todo);
        stack.push(expr);
        while let Some(node) = stack.pop() {
            if self.cached_range(node, oblivious).is_some() {
                continue;
            }
            self.store_range(node, oblivious, Range::ALL);
            todo.push(node);
            self.arena
                .node(node)
                .for_each_child(|child| stack.push(child));
        }
        todo.sort_unstable();
        for &node in &todo {
            let range = self.compute_range(node, oblivious);
            self.store_range(node, oblivious, range);
        }
        todo.clear();
        self.scratch.stack = stack;
        self.scratch.todo = todo;
        self.cached_range(expr, oblivious).unwrap_or(Range::ALL)
    }

    /// The range of a symbol, widened or narrowed by the size-oblivious assumption.
    pub(super) fn symbol_range(&self, symbol: SymbolId, oblivious: bool) -> Range {
        let entry = &self.symbols[symbol.index()];
        let range = entry.range;
        if !oblivious || !entry.size_like || entry.is_backed() {
            return range;
        }
        let assumed = Range::new(range.lo.max(2), range.hi);
        if assumed.is_empty() { range } else { assumed }
    }

    fn cached_range(&self, expr: ExprId, oblivious: bool) -> Option<Range> {
        let cache = if oblivious {
            &self.cache.oblivious
        } else {
            &self.cache.exact
        };
        let &(epoch, range) = cache.get(expr.index())?;
        (epoch == self.cache.epoch).then_some(range)
    }

    fn store_range(&mut self, expr: ExprId, oblivious: bool, range: Range) {
        let length = self.arena.len();
        let epoch = self.cache.epoch;
        let cache = if oblivious {
            &mut self.cache.oblivious
        } else {
            &mut self.cache.exact
        };
        if cache.len() <= expr.index() {
            cache.resize(length.max(expr.index() + 1), (0, Range::ALL));
        }
        cache[expr.index()] = (epoch, range);
    }

    /// One node's range from its children's (already fresh) ranges and the facts on its form.
    fn compute_range(&self, expr: ExprId, oblivious: bool) -> Range {
        let child = |id: ExprId| self.cached_range(id, oblivious).unwrap_or(Range::ALL);
        let structural = match self.arena.node(expr) {
            Node::Int(value) => Range::exactly(*value),
            Node::Bool(value) => Range::exactly(i64::from(*value)),
            Node::Symbol(symbol) => self.symbol_range(*symbol, oblivious),
            Node::Sum { terms, constant } => terms
                .iter()
                .fold(Range::exactly(*constant), |total, &(term, c)| {
                    total + child(term).scale(c)
                }),
            Node::Product(factors) => factors
                .iter()
                .fold(Range::exactly(1), |total, &(f, e)| total * child(f).pow(e)),
            Node::FloorDiv(a, b) => child(*a).floor_div(child(*b)),
            Node::Mod(a, b) => child(*a).modulo(child(*b)),
            Node::Min(args) => fold(args, child, Range::min),
            Node::Max(args) => fold(args, child, Range::max),
            Node::Compare {
                relation,
                form,
                bound,
            } => {
                let excluded = self.facts.excluded(*form);
                truth_range(decide_by_range(*relation, child(*form), *bound, excluded))
            }
            Node::And(args) => connective(args, child, false),
            Node::Or(args) => connective(args, child, true),
        };
        structural.intersect(self.learned_range(expr, oblivious))
    }

    /// What facts say about the value of `expr` through its linear form.
    pub(super) fn learned_range(&self, expr: ExprId, oblivious: bool) -> Range {
        let linear = self.arena.data(expr).linear;
        let Some(form) = linear.form else {
            return Range::ALL;
        };
        let Some(bounds) = self.facts.form_bounds(form, oblivious) else {
            return Range::ALL;
        };
        if form == expr {
            return bounds;
        }
        bounds.scale(linear.scale) + Range::exactly(linear.constant)
    }
}

/// Decides `value <relation> bound` for every value in `range` except the `excluded` ones
/// (sorted).
pub(super) fn decide_by_range(
    relation: Relation,
    range: Range,
    bound: i64,
    excluded: &[i64],
) -> Option<bool> {
    match relation {
        Relation::Eq => decide_equal(range, bound, excluded),
        Relation::Ne => decide_equal(range, bound, excluded).map(|equal| !equal),
        // A form may exceed `i64` (it is a difference), so infinite ends decide nothing.
        Relation::Le if range.finite_hi().is_some_and(|hi| hi <= bound) => Some(true),
        Relation::Le if range.lo > bound => Some(false),
        Relation::Ge if range.finite_lo().is_some_and(|lo| lo >= bound) => Some(true),
        Relation::Ge if range.hi < bound => Some(false),
        Relation::Le | Relation::Ge => None,
    }
}

fn decide_equal(range: Range, bound: i64, excluded: &[i64]) -> Option<bool> {
    if !range.contains(bound) || excluded.binary_search(&bound).is_ok() {
        Some(false)
    } else if range.constant() == Some(bound) {
        Some(true)
    } else {
        None
    }
}

fn truth_range(decision: Option<bool>) -> Range {
    decision.map_or(Range::BOOL, |value| Range::exactly(i64::from(value)))
}

fn fold(args: &[ExprId], child: impl Fn(ExprId) -> Range, op: fn(Range, Range) -> Range) -> Range {
    let mut ranges = args.iter().map(|&arg| child(arg));
    let first = ranges.next().unwrap_or(Range::ALL);
    ranges.fold(first, op)
}

/// `and` (`decisive` false) or `or` (`decisive` true) on 0/1 ranges.
fn connective(args: &[ExprId], child: impl Fn(ExprId) -> Range, decisive: bool) -> Range {
    let decisive_value = i64::from(decisive);
    let ranges: Vec<Range> = args.iter().map(|&arg| child(arg)).collect();
    if ranges.iter().any(|r| r.constant() == Some(decisive_value)) {
        Range::exactly(decisive_value)
    } else if ranges
        .iter()
        .all(|r| r.constant() == Some(1 - decisive_value))
    {
        Range::exactly(1 - decisive_value)
    } else {
        Range::BOOL
    }
}
