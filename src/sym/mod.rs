//! The symbolic integer engine: a native ShapeEnv that answers size questions while tracing
//! (spec §6). It knows nothing of tensors or graphs.
//!
//! Code map, in pipeline order:
//!
//! - `symbol.rs`: symbols, backed (hint, source) or unbacked (origin), with their ranges.
//! - `range.rs`: value ranges with infinite ends and their interval arithmetic.
//! - `node.rs`: hash-consed nodes with cached sort keys, free symbols and linear views.
//! - `env.rs`: [`ShapeEnv`] itself, errors, guards, runtime asserts and events.
//! - `arith.rs`: canonical sums and products (`+ - * **`).
//! - `rules.rs`: the rewrite table of `//`, `%`, `min`, `max`.
//! - `logic.rs`: canonical comparisons and `and`/`or`/`not`.
//! - `bounds.rs`: bottom-up range analysis, cached per node.
//! - `facts.rs`: what `check` teaches: bounds on linear forms, exclusions, disjunctions.
//! - `implied.rs`: what a learned comparison implies: congruences, bounds of a dividend.
//! - `replace.rs`: replacements (`u0 == s0 + 1`) and resolution.
//! - `restore.rs`: rebuilding an environment from its printed form.
//! - `linear.rs`: bounded linear reasoning over facts and the bounds of `min` and `max`.
//! - `reason.rs`: queries, modes, `check`, `check_size`, guard recording.
//! - `oblivious.rs`: questions rebuilt under the size-oblivious assumption.
//! - `eval.rs`: evaluation with concrete values.
//! - `guard.rs`: compiled guard sets; `program.rs`: the register programs they run.
//! - `print.rs`: printing in TSL syntax.
//! - `explain.rs`: explanations of undecidable questions.
//!
//! Invariants: every node is canonical when interned and its children are older than it;
//! facts only accumulate, so anything decided stays decided; a query's cost is bounded by the
//! size of its expression and fixed search budgets, never by the number of facts; nothing
//! printed depends on hash-map order or on the order expressions were built in.
//!
//! What a caller can rely on:
//!
//! - Every constructor taking expressions returns `Result<ExprId, SymError>`: constant folding
//!   is exact and checked, so `x // 0` is `DivisionByZero` and a constant or coefficient
//!   leaving `i64` is `Overflow`; nothing panics. An integer where a boolean is expected
//!   (`and`, `or`, `not`, `check`, `evaluate_bool`) means `!= 0`.
//! - Constructors apply the replacements known so far and fold what ranges decide, so
//!   `ge(s0, 2)` is `true` for a dynamic size. Canonical comparisons lose the difference
//!   between `<` and `<= … - 1`; printing picks whichever has the smaller constant.
//! - A recorded guard is also learned, so asking again is decided without a new guard;
//!   `evaluate_int` on backed symbols guards `e == value`, which for a bare symbol replaces it
//!   by its value. `check` on backed symbols only is a guard, not a runtime assert.
//! - Runtime asserts are recorded in their simplified form at the time of the `check`, before
//!   the check's own replacement applies, with the symbols they need.

mod arith;
mod bounds;
mod env;
mod eval;
mod explain;
mod facts;
mod guard;
mod implied;
mod linear;
mod logic;
mod node;
mod oblivious;
mod print;
mod program;
mod range;
mod reason;
mod replace;
mod restore;
mod rules;
mod symbol;

#[cfg(test)]
mod tests;

pub use env::{Event, Guard, RuntimeAssert, ShapeEnv, SymError};
pub use eval::EvalError;
pub use explain::{Explanation, SymbolReport};
pub use guard::GuardSet;
pub use logic::Cmp;
pub use node::{ExprId, FxHashMap, Relation};
pub use print::Show;
pub use range::{NEG_INF, POS_INF, Range};
pub use reason::{CheckOutcome, Decision, IntDecision, Mode};
pub use symbol::{Origin, Symbol, SymbolId, SymbolKind, SymbolName};
