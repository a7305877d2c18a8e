//! Tensors in host memory: what devices upload from and download to, what prints, and what
//! `.npy` files hold. The representation is the CPU backend's tensor; this module is how the
//! rest of the program names it without reaching for the CPU's kernels.

pub use super::cpu::{Element, Elements, Tensor, format_tensor, from_elements, load, save};
