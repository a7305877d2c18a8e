//! Backends that execute tensor operations.

pub mod cpu;
pub mod exec;
