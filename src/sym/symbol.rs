//! Symbols: the integer unknowns of a trace, backed (with a hint) or unbacked (data-dependent).

use std::fmt;

use crate::source::Span;

use super::node::ExprId;
use super::range::Range;

/// Identifies one symbol of a [`ShapeEnv`](super::ShapeEnv); ids follow creation order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SymbolId(pub u32);

impl SymbolId {
    /// Position of the symbol in [`ShapeEnv::symbols`](super::ShapeEnv::symbols).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where an unbacked symbol was made: the operation and its source location.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Origin {
    /// The operation, such as `item()` or `nonzero()`.
    pub operation: String,
    /// Where that operation was called.
    pub span: Span,
}

/// What kind of unknown a symbol is, and what it knows about its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    /// An input size or int argument.
    Backed {
        /// Its value in the call being traced.
        hint: i64,
        /// Where it was read, such as `x.size(0)`.
        source: String,
    },
    /// A data-dependent value with no hint.
    Unbacked {
        /// The operation that made it.
        origin: Origin,
    },
}

/// One symbol and everything the environment knows about it directly.
#[derive(Clone, Debug)]
pub struct Symbol {
    /// Backed or unbacked.
    pub kind: SymbolKind,
    /// Number within its kind: the symbol prints as `s{number}` or `u{number}`.
    pub number: u32,
    /// Current value range, refined by facts.
    pub range: Range,
    /// Range given at creation; for a backed symbol the guard set checks it.
    pub declared: Range,
    /// Marked by `check_size` or by a factory: size-oblivious reasoning assumes it is at least 2.
    pub size_like: bool,
    /// The bound given by `check_size u, max = N`, if any.
    pub size_max: Option<ExprId>,
}

impl Symbol {
    /// Whether the symbol has a hint.
    pub fn is_backed(&self) -> bool {
        matches!(self.kind, SymbolKind::Backed { .. })
    }

    /// The hint of a backed symbol.
    pub fn hint(&self) -> Option<i64> {
        match self.kind {
            SymbolKind::Backed { hint, .. } => Some(hint),
            SymbolKind::Unbacked { .. } => None,
        }
    }

    /// The origin of an unbacked symbol.
    pub fn origin(&self) -> Option<&Origin> {
        match &self.kind {
            SymbolKind::Unbacked { origin } => Some(origin),
            SymbolKind::Backed { .. } => None,
        }
    }

    /// The printed name, `s0` or `u3`.
    pub fn name(&self) -> SymbolName {
        SymbolName {
            backed: self.is_backed(),
            number: self.number,
        }
    }

    /// Order used everywhere terms are sorted: backed before unbacked, then by number.
    pub(super) fn rank(&self) -> u32 {
        let unbacked = u32::from(!self.is_backed());
        (unbacked << 31) | (self.number & 0x7fff_ffff)
    }
}

/// A symbol's printed name, formatted without allocating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SymbolName {
    backed: bool,
    number: u32,
}

impl fmt::Display for SymbolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = if self.backed { 's' } else { 'u' };
        write!(f, "{prefix}{}", self.number)
    }
}
