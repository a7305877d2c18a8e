//! TSL, a tensor scripting language with symbolic shapes.

pub mod backend;
pub mod dtype;
pub mod source;
pub mod sym;
