//! The environment: arena, symbols, facts, guards and events, and the symbol-level API.

use crate::source::Span;

use super::facts::Facts;
use super::linear::BoundMemo;
use super::node::{Arena, ExprId, FxHashMap, FxHashSet, Node};
use super::range::Range;
use super::symbol::{Origin, Symbol, SymbolId, SymbolKind};

/// Why an expression could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SymError {
    /// A constant or a coefficient left the range of `i64`.
    #[error("integer overflow in a size expression")]
    Overflow,
    /// `x // 0` or `x % 0` with a constant zero.
    #[error("integer division or modulo by zero")]
    DivisionByZero,
    /// `x ** e` where `e` is not a constant in `0..=u32::MAX`.
    #[error("the exponent must be a non-negative integer constant")]
    BadExponent,
    /// Arithmetic or ordering on a boolean expression.
    #[error("expected an integer expression, found a boolean")]
    NotInteger,
}

/// A guard: a condition on backed symbols that the trace relied on, true for the hints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    /// The condition, over backed symbols only.
    pub cond: ExprId,
    /// The source location that asked the question.
    pub span: Span,
}

/// A condition the compiled graph must check at run time, once all its symbols are known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeAssert {
    /// The condition, simplified with the replacements known when it was checked.
    pub cond: ExprId,
    /// The `check` that taught it.
    pub span: Span,
    /// The symbols the condition needs, sorted by id.
    pub symbols: Vec<SymbolId>,
}

/// Something the tracer may log (spec §9), drained with [`ShapeEnv::take_events`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// `create_unbacked u0 [-inf, inf] at …`
    CreateUnbacked {
        /// The new symbol.
        symbol: SymbolId,
        /// Its range at creation.
        range: Range,
        /// Where the operation that made it was called.
        span: Span,
    },
    /// `set_replacement u1 = u0`
    SetReplacement {
        /// The replaced symbol.
        symbol: SymbolId,
        /// What replaces it from now on.
        expr: ExprId,
    },
    /// `runtime_assert u0 >= 0 at …`
    RuntimeAssert {
        /// The asserted condition.
        cond: ExprId,
        /// The `check` that taught it.
        span: Span,
    },
    /// `guard s0 > 2 at …`
    Guard {
        /// The guarded condition, true for the hints.
        cond: ExprId,
        /// The question that recorded it.
        span: Span,
    },
    /// `guard_or_false`/`guard_or_true` could not decide and returned its default.
    Fallback {
        /// The undecided condition.
        cond: ExprId,
        /// The default returned.
        value: bool,
        /// The question.
        span: Span,
    },
}

/// Per-node caches, each entry valid while its epoch matches the environment's.
#[derive(Clone, Debug, Default)]
pub(super) struct Caches {
    /// Bumped whenever a range, a fact or a replacement changes.
    pub epoch: u32,
    /// Bumped whenever a replacement is added.
    pub replacement_epoch: u32,
    pub exact: Vec<(u32, Range)>,
    pub oblivious: Vec<(u32, Range)>,
    pub resolved: Vec<(u32, ExprId)>,
    /// Linear search results per (form, negated, size-oblivious).
    pub bounds: FxHashMap<(ExprId, bool, bool), BoundMemo>,
}

/// Reusable buffers, so that queries do not allocate.
#[derive(Clone, Debug, Default)]
pub(super) struct Scratch {
    pub stack: Vec<ExprId>,
    pub todo: Vec<ExprId>,
    pub linear: Vec<(ExprId, i128)>,
}

/// The symbolic shape environment of one trace: expressions, symbols, facts and guards.
#[derive(Clone, Debug)]
pub struct ShapeEnv {
    pub(super) arena: Arena,
    pub(super) symbols: Vec<Symbol>,
    pub(super) symbol_exprs: Vec<ExprId>,
    pub(super) counts: [u32; 2],
    pub(super) facts: Facts,
    pub(super) cache: Caches,
    pub(super) guards: Vec<Guard>,
    pub(super) guard_index: FxHashSet<ExprId>,
    pub(super) asserts: Vec<RuntimeAssert>,
    pub(super) events: Vec<Event>,
    pub(super) scratch: Scratch,
    /// Set while an expression is rebuilt for a size-oblivious question: the rewrite rules
    /// then read size-oblivious ranges (see oblivious.rs).
    pub(super) oblivious_rules: bool,
}

impl Default for ShapeEnv {
    fn default() -> Self {
        ShapeEnv::new()
    }
}

impl ShapeEnv {
    /// An empty environment.
    pub fn new() -> ShapeEnv {
        ShapeEnv {
            arena: Arena::default(),
            symbols: Vec::new(),
            symbol_exprs: Vec::new(),
            counts: [0, 0],
            facts: Facts::default(),
            cache: Caches {
                epoch: 1,
                replacement_epoch: 1,
                ..Caches::default()
            },
            guards: Vec::new(),
            guard_index: FxHashSet::default(),
            asserts: Vec::new(),
            events: Vec::new(),
            scratch: Scratch::default(),
            oblivious_rules: false,
        }
    }

    /// Continues symbol numbering after the symbols `other` created, so that symbols made in
    /// a copy of this environment (a branch traced on its own) and symbols made here later
    /// never print with the same name.
    pub fn skip_numbers_used_by(&mut self, other: &ShapeEnv) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts) {
            *mine = (*mine).max(theirs);
        }
    }

    /// The integer constant `value`.
    pub fn int(&mut self, value: i64) -> ExprId {
        self.arena.intern(Node::Int(value), None)
    }

    /// The boolean constant `value`.
    pub fn bool(&mut self, value: bool) -> ExprId {
        self.arena.intern(Node::Bool(value), None)
    }

    /// A new backed symbol `s{n}` with its hint, where it was read (`x.size(0)`), and its range
    /// (`[2, ∞]` for a dynamic size, `[lo, hi]` for an int argument).
    pub fn backed_symbol(&mut self, hint: i64, source: impl Into<String>, range: Range) -> ExprId {
        let kind = SymbolKind::Backed {
            hint,
            source: source.into(),
        };
        self.new_symbol(kind, range)
    }

    /// A new unbacked symbol `u{n}` made by `origin`; logs a `CreateUnbacked` event.
    pub fn unbacked_symbol(&mut self, origin: Origin, range: Range) -> ExprId {
        let span = origin.span;
        let expr = self.new_symbol(SymbolKind::Unbacked { origin }, range);
        let symbol = SymbolId(self.symbols.len() as u32 - 1);
        self.events.push(Event::CreateUnbacked {
            symbol,
            range,
            span,
        });
        expr
    }

    fn new_symbol(&mut self, kind: SymbolKind, range: Range) -> ExprId {
        let slot = usize::from(!matches!(kind, SymbolKind::Backed { .. }));
        let number = self.counts[slot];
        self.counts[slot] += 1;
        let symbol = Symbol {
            kind,
            number,
            range,
            declared: range,
            size_like: false,
            size_max: None,
        };
        let id = SymbolId(self.symbols.len() as u32);
        let expr = self
            .arena
            .intern_symbol(id, symbol.rank(), !symbol.is_backed());
        self.symbols.push(symbol);
        self.symbol_exprs.push(expr);
        self.facts.add_symbol();
        expr
    }

    /// Marks a symbol size-like: size-oblivious reasoning then assumes it is at least 2. It
    /// does not learn `u >= 0`; [`ShapeEnv::check_size`] does both.
    pub fn mark_size_like(&mut self, symbol: SymbolId) {
        if let Some(entry) = self.symbols.get_mut(symbol.index()) {
            entry.size_like = true;
            self.touch();
        }
    }

    /// One symbol.
    pub fn symbol(&self, symbol: SymbolId) -> &Symbol {
        &self.symbols[symbol.index()]
    }

    /// Every symbol, in creation order.
    pub fn symbols(&self) -> &[Symbol] {
        &self.symbols
    }

    /// The expression made of one symbol.
    pub fn symbol_expr(&self, symbol: SymbolId) -> ExprId {
        self.symbol_exprs[symbol.index()]
    }

    /// The symbol an expression consists of, if it is a bare symbol.
    pub fn as_symbol(&self, expr: ExprId) -> Option<SymbolId> {
        match self.arena.node(expr) {
            Node::Symbol(symbol) => Some(*symbol),
            _ => None,
        }
    }

    /// The value of an integer constant.
    pub fn as_int(&self, expr: ExprId) -> Option<i64> {
        match self.arena.node(expr) {
            Node::Int(value) => Some(*value),
            _ => None,
        }
    }

    /// The value of a boolean constant.
    pub fn as_bool(&self, expr: ExprId) -> Option<bool> {
        match self.arena.node(expr) {
            Node::Bool(value) => Some(*value),
            _ => None,
        }
    }

    /// Whether the expression is boolean (a comparison, `and`, `or` or a constant).
    pub fn is_bool(&self, expr: ExprId) -> bool {
        self.arena.data(expr).boolean
    }

    /// The symbols in an expression, sorted by id (creation order).
    pub fn free_symbols(&self, expr: ExprId) -> Vec<SymbolId> {
        self.arena.data(expr).free.to_vec()
    }

    /// The unbacked symbols in an expression, sorted by id.
    pub fn unbacked_symbols(&self, expr: ExprId) -> Vec<SymbolId> {
        let data = self.arena.data(expr);
        if !data.unbacked {
            return Vec::new();
        }
        let backed = |symbol: &&SymbolId| self.symbols[symbol.index()].is_backed();
        data.free.iter().filter(|s| !backed(s)).copied().collect()
    }

    /// The replacement of a symbol taught by an equality, if any.
    pub fn replacement(&self, symbol: SymbolId) -> Option<ExprId> {
        self.facts.replacement(symbol)
    }

    /// The guards recorded so far, deduplicated, in order.
    pub fn guards(&self) -> &[Guard] {
        &self.guards
    }

    /// The runtime asserts recorded so far, in order.
    pub fn runtime_asserts(&self) -> &[RuntimeAssert] {
        &self.asserts
    }

    /// Removes and returns the events logged since the last call.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// The expression at `index` of the arena (see [`ExprId::index`]), if there is one.
    pub fn expr_at(&self, index: usize) -> Option<ExprId> {
        (index < self.arena.len()).then_some(ExprId(index as u32))
    }

    /// Number of interned expressions (for statistics and tests).
    pub fn expression_count(&self) -> usize {
        self.arena.len()
    }

    /// The depth of the most deeply nested expression interned so far.
    pub fn deepest_expression(&self) -> usize {
        self.arena.deepest()
    }

    /// Invalidates cached ranges after a fact changed.
    pub(super) fn touch(&mut self) {
        self.cache.epoch = self.cache.epoch.wrapping_add(1).max(1);
    }

    /// Invalidates cached resolutions after a replacement was added.
    pub(super) fn touch_replacements(&mut self) {
        self.touch();
        self.cache.replacement_epoch = self.cache.replacement_epoch.wrapping_add(1).max(1);
    }
}
