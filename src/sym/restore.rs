//! Rebuilding an environment from its printed form (`graph::parse`): symbols keep their
//! printed numbers, and ranges, replacements and guards are set as printed rather than
//! learned from the checks that once taught them.

use crate::source::Span;

use super::env::{Guard, ShapeEnv};
use super::node::ExprId;
use super::range::Range;
use super::symbol::SymbolId;

impl ShapeEnv {
    /// Makes the next backed (`s`) or unbacked (`u`) symbol take `number`, so that a parsed
    /// symbol prints with the name it was read under. The caller keeps names unique.
    pub fn number_next_symbol(&mut self, backed: bool, number: u32) {
        self.counts[usize::from(!backed)] = number;
    }

    /// Sets a symbol's range (current and declared) to a printed one.
    pub fn restore_range(&mut self, symbol: SymbolId, range: Range) {
        if let Some(entry) = self.symbols.get_mut(symbol.index()) {
            entry.range = range;
            entry.declared = range;
            self.touch();
        }
    }

    /// Records a printed replacement `symbol = expr`. Refused (`false`) for a symbol already
    /// replaced, a boolean `expr`, or one that mentions the symbol after resolution.
    pub fn restore_replacement(&mut self, symbol: SymbolId, expr: ExprId) -> bool {
        let expr = self.resolve(expr);
        let valid = symbol.index() < self.symbols.len()
            && self.replacement(symbol).is_none()
            && !self.is_bool(expr)
            && !self.free_symbols(expr).contains(&symbol);
        if valid {
            self.set_replacement(symbol, expr);
        }
        valid
    }

    /// Records a printed guard without asking the hints; it is learned like any guard.
    pub fn restore_guard(&mut self, cond: ExprId, span: Span) {
        if self.guard_index.insert(cond) {
            self.guards.push(Guard { cond, span });
        }
        self.learn(cond);
    }
}
