//! The kernels' view of the shared error type and allocation guard (`backend::error`).

pub use crate::backend::error::{
    KernelError, MAX_ELEMENTS, Result, check_dim, checked_numel, dim_error, format_shape,
    guard_count, negative_count, resized,
};
pub use crate::backend::memory::{scratch_vec, zeroed_vec};
