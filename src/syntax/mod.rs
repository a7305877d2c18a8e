//! The front end: lexer, grammar-driven parser and AST. Knows nothing about values or tensors.

pub mod ast;
pub mod hints;
pub mod lexer;
mod nesting;
pub mod parser;
pub mod visit;
pub mod words;

pub use lexer::KEYWORDS;
pub use parser::{Parsed, parse};
