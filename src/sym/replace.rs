//! Replacements: `u = e` rewrites `u` everywhere, with resolution cached per node.
//!
//! Replacement targets are kept fully resolved (a new replacement rewrites the targets that
//! mention its symbol), so resolving a node never chases chains: each stale node is rebuilt
//! once from its resolved children, in creation order, without recursion.

use super::env::{Event, ShapeEnv, SymError};
use super::node::{ExprId, Node, Relation};
use super::symbol::SymbolId;

impl ShapeEnv {
    /// `expr` with every replacement known so far applied, re-simplified.
    pub fn resolve(&mut self, expr: ExprId) -> ExprId {
        if !self.facts.has_replacements() {
            return expr;
        }
        if let Some(done) = self.cached_resolution(expr) {
            return done;
        }
        if !self.mentions_replaced(expr) {
            self.store_resolution(expr, expr);
            return expr;
        }
        self.resolve_stale(expr);
        self.cached_resolution(expr).unwrap_or(expr)
    }

    /// Records `symbol = expr` (`expr` already resolved) and moves every fact about `symbol`
    /// onto `expr`.
    pub(super) fn set_replacement(&mut self, symbol: SymbolId, expr: ExprId) {
        self.facts.set_replacement(symbol, expr);
        self.touch_replacements();
        for user in self.facts.take_replacement_users(symbol) {
            if let Some(target) = self.facts.replacement(user) {
                let resolved = self.resolve(target);
                self.facts.retarget(user, resolved);
                self.register_users(user, resolved);
            }
        }
        self.register_users(symbol, expr);
        self.events.push(Event::SetReplacement { symbol, expr });
        self.transfer_symbol_facts(symbol, expr);
        for fact in self.facts.take_symbol_facts(symbol) {
            self.relearn(fact);
        }
    }

    fn register_users(&mut self, symbol: SymbolId, target: ExprId) {
        let free = self.arena.data(target).free.clone();
        for used in &free {
            self.facts.add_replacement_user(*used, symbol);
        }
    }

    /// The range, exclusions and size-likeness of `symbol` now hold for `expr`.
    fn transfer_symbol_facts(&mut self, symbol: SymbolId, expr: ExprId) {
        let range = self.symbols[symbol.index()].range;
        let mut conditions = Vec::new();
        if let Some(lo) = range.finite_lo() {
            conditions.push(self.bound_condition(expr, Relation::Ge, lo));
        }
        if let Some(hi) = range.finite_hi() {
            conditions.push(self.bound_condition(expr, Relation::Le, hi));
        }
        for condition in conditions.into_iter().flatten() {
            self.learn(condition);
        }
        let size_like = self.symbols[symbol.index()].size_like;
        if let Some(target) = self.as_symbol(expr) {
            let target = &mut self.symbols[target.index()];
            target.size_like |= size_like && !target.is_backed();
        }
        let narrowed = range.intersect(self.range(expr));
        self.symbols[symbol.index()].range = narrowed;
    }

    /// Learns again, in resolved form, a fact that mentioned a replaced symbol.
    fn relearn(&mut self, fact: ExprId) {
        if self.arena.data(fact).boolean {
            if self.facts.forget_disjunction(fact) {
                self.learn(fact);
            }
            return;
        }
        let Some(old) = self.facts.retire_form(fact) else {
            return;
        };
        let resolved = self.resolve(fact);
        let mut conditions = Vec::new();
        if let Some(lo) = old.bounds.finite_lo() {
            conditions.push(self.bound_condition(resolved, Relation::Ge, lo));
        }
        if let Some(hi) = old.bounds.finite_hi() {
            conditions.push(self.bound_condition(resolved, Relation::Le, hi));
        }
        for &value in &old.excluded {
            conditions.push(self.bound_condition(resolved, Relation::Ne, value));
        }
        for condition in conditions.into_iter().flatten() {
            self.learn(condition);
        }
        if let Some(hi) = old.oblivious.finite_hi() {
            if let Ok(condition) = self.bound_condition(resolved, Relation::Le, hi) {
                self.assume_when_oblivious(condition);
            }
        }
    }

    /// `expr <relation> value` as a canonical condition.
    pub(super) fn bound_condition(
        &mut self,
        expr: ExprId,
        relation: Relation,
        value: i64,
    ) -> Result<ExprId, SymError> {
        let value = self.int(value);
        match relation {
            Relation::Eq => self.eq(expr, value),
            Relation::Ne => self.ne(expr, value),
            Relation::Le => self.le(expr, value),
            Relation::Ge => self.ge(expr, value),
        }
    }

    fn mentions_replaced(&self, expr: ExprId) -> bool {
        let free = &self.arena.data(expr).free;
        free.iter().any(|&symbol| self.facts.is_replaced(symbol))
    }

    fn cached_resolution(&self, expr: ExprId) -> Option<ExprId> {
        let &(epoch, resolved) = self.cache.resolved.get(expr.index())?;
        (epoch == self.cache.replacement_epoch).then_some(resolved)
    }

    fn store_resolution(&mut self, expr: ExprId, resolved: ExprId) {
        let index = expr.index();
        if self.cache.resolved.len() <= index {
            self.cache
                .resolved
                .resize(self.arena.len().max(index + 1), (0, expr));
        }
        self.cache.resolved[index] = (self.cache.replacement_epoch, resolved);
    }

    /// Rebuilds every stale node under `expr`, children first.
    fn resolve_stale(&mut self, expr: ExprId) {
        let mut stack = std::mem::take(&mut self.scratch.stack);
        let mut todo = Vec::new();
        stack.push(expr);
        while let Some(node) = stack.pop() {
            if self.cached_resolution(node).is_some() {
                continue;
            }
            self.store_resolution(node, node);
            if self.mentions_replaced(node) {
                todo.push(node);
                self.arena
                    .node(node)
                    .for_each_child(|child| stack.push(child));
            }
        }
        self.scratch.stack = stack;
        todo.sort_unstable();
        let child = |env: &Self, id: ExprId| env.cached_resolution(id).unwrap_or(id);
        for node in todo {
            let rebuilt = self.rebuild(node, child).unwrap_or(node);
            self.store_resolution(node, rebuilt);
        }
    }

    /// A node rebuilt through the constructors from its children's replacements, `child`.
    pub(super) fn rebuild(
        &mut self,
        expr: ExprId,
        child: impl Fn(&Self, ExprId) -> ExprId + Copy,
    ) -> Result<ExprId, SymError> {
        match self.arena.node(expr).clone() {
            Node::Int(_) | Node::Bool(_) => Ok(expr),
            Node::Symbol(symbol) => Ok(self.facts.replacement(symbol).unwrap_or(expr)),
            Node::Sum { terms, constant } => {
                let mut total = self.int(constant);
                for &(term, coefficient) in &terms {
                    let term = self.scale(child(self, term), coefficient)?;
                    total = self.add(total, term)?;
                }
                Ok(total)
            }
            Node::Product(factors) => {
                let mut total = self.int(1);
                for &(factor, exponent) in &factors {
                    let factor = self.power(child(self, factor), exponent)?;
                    total = self.mul(total, factor)?;
                }
                Ok(total)
            }
            Node::FloorDiv(a, b) => self.floor_div(child(self, a), child(self, b)),
            Node::Mod(a, b) => self.modulo(child(self, a), child(self, b)),
            Node::Min(args) => self.fold_args(&args, child, ShapeEnv::min),
            Node::Max(args) => self.fold_args(&args, child, ShapeEnv::max),
            Node::Compare {
                relation,
                form,
                bound,
            } => self.bound_condition(child(self, form), relation, bound),
            Node::And(args) => self.fold_args(&args, child, ShapeEnv::and),
            Node::Or(args) => self.fold_args(&args, child, ShapeEnv::or),
        }
    }

    fn fold_args(
        &mut self,
        args: &[ExprId],
        child: impl Fn(&Self, ExprId) -> ExprId,
        op: fn(&mut Self, ExprId, ExprId) -> Result<ExprId, SymError>,
    ) -> Result<ExprId, SymError> {
        let mut total = child(self, args[0]);
        for &arg in &args[1..] {
            let arg = child(self, arg);
            total = op(self, total, arg)?;
        }
        Ok(total)
    }
}
