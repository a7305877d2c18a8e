//! Launching kernels: from tensors to a generated kernel, its bindings and its parameters.
//! One file per kernel family, as in `codegen/`.

mod compact;
mod elementwise;
mod gather;
mod layout;
mod matmul;
mod reduce;
mod scan;
mod sort;

pub(crate) use elementwise::identity;
pub(crate) use layout::Walk;
