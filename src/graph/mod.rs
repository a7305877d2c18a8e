//! The graph layer: tensor operations, their shape rules, and the graph IR of traced functions.
//!
//! `op` describes every tensor operation; `shape` holds the one rule per operation that both
//! eager execution and tracing use; `ir` is the traced graph, `print` its text form and
//! `parse` that text read back, `verify` its invariants and `passes` the optimisations;
//! `fused` is the fused kernel that `passes::fuse` makes and `semantics` the per-element table
//! of every elementwise operation. Nothing here imports ndarray or a backend.

pub mod dot;
pub mod fused;
pub mod ir;
pub mod op;
pub mod parse;
pub mod passes;
pub mod print;
pub mod semantics;
pub mod shape;
pub mod verify;
