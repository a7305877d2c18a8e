//! TSL, a tensor scripting language with symbolic shapes.

pub mod backend;
pub mod diag;
pub mod dtype;
pub mod eval;
pub mod graph;
pub mod source;
pub mod sym;
pub mod syntax;
