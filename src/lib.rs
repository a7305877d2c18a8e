//! TSL, a tensor scripting language with symbolic shapes.

/// Large tensors are allocated and freed constantly; mimalloc keeps freed memory for reuse
/// instead of returning every large block to the OS and faulting its pages in again.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod backend;
pub mod check;
pub mod diag;
pub mod dtype;
pub mod eval;
pub mod graph;
pub mod lsp;
pub mod repl;
pub mod source;
pub mod sym;
pub mod syntax;
