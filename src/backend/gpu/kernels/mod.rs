//! Launching kernels: from tensors to a generated kernel, its bindings and its parameters.
//! One file per kernel family, as in `codegen/`.

mod elementwise;
mod layout;

pub(crate) use elementwise::identity;
pub(crate) use layout::Walk;
