//! The graph layer: tensor operations and their shape rules.
//!
//! `op` describes every tensor operation; `shape` holds the one rule per operation that both
//! eager execution and tracing use. Nothing here imports ndarray or a backend.

pub mod op;
pub mod shape;
