//! CPU tensors on ndarray and the kernels that compute every tensor operation.
//!
//! This is the one place where tensor values are computed: the eager interpreter and the
//! compiled-graph executor both call these functions, so their results cannot drift apart.
//! The module knows nothing about syntax, spans or graphs; it offers one function per
//! operation, each returning `Result<_, KernelError>`.
//!
//! Invariants kept by every function here:
//! - nothing panics, whatever the input (huge, empty or 0-d tensors, bad dims and indices);
//! - every allocation is sized with checked arithmetic and refused above [`MAX_ELEMENTS`];
//! - semantics follow PyTorch (broadcasting, promotion `bool < i64 < f32`, Python's `//`
//!   and `%`, wrapping integer arithmetic), with the deviations listed on each function;
//! - tensors are immutable and cheap to clone; basic indexing, reshapes of contiguous
//!   tensors, transposes and slices share data instead of copying it;
//! - elementwise work is vectorised and runs on rayon above 65,536 elements; callers that
//!   hand over temporaries use [`binary_owned`] and [`unary_owned`], which write into a
//!   buffer nobody else holds instead of allocating (several times faster on long chains,
//!   since faulting in fresh pages costs more than the arithmetic);
//! - kernels whose result size depends on the data (masks, nonzero) and those that take
//!   rows by index work on standard-layout slices in fixed chunks on rayon (`compact.rs`,
//!   `take.rs`), so their results never depend on the thread count.

mod binary;
mod broadcast;
mod compact;
mod creation;
mod device;
mod elementwise;
mod error;
mod fold;
mod format;
mod fresh;
mod fused;
mod gather;
mod index;
mod join;
mod matmul;
pub mod memory;
mod npy;
mod prefetch;
mod radix;
mod reduce;
mod run;
mod scan;
mod select;
mod shape;
mod sort;
mod take;
mod tensor;
mod unary;

#[cfg(test)]
mod fast_paths;
#[cfg(test)]
mod robustness;
#[cfg(test)]
mod testing;

pub use binary::{BinaryOp, binary, binary_owned};
pub use broadcast::broadcast_shapes;
pub use creation::{arange, from_elements, full, ones, randn, zeros};
pub use device::Cpu;
pub use error::{KernelError, MAX_ELEMENTS, format_shape};
pub use format::format_tensor;
pub use fused::Native;
pub use gather::{gather, index_select};
pub use index::{IndexItem, index};
pub use join::{cat, narrow, split, stack};
pub use matmul::matmul;
pub use npy::{load, save};
pub use reduce::{ReduceOp, reduce};
pub use run::run;
pub use scan::{cumsum, diff};
pub use select::{masked_select, nonzero, repeat_interleave, repeat_interleave_indices, unique};
pub use shape::{expand, flatten, permute, reshape, squeeze, transpose, unsqueeze};
pub use sort::{sort, topk};
pub use tensor::{Element, Elements, Tensor};
pub use unary::{UnaryOp, clamp, clamp_by, unary, unary_owned, where_};
