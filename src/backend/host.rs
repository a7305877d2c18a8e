//! Tensors in host memory: what devices upload from and download to, what prints, and what
//! `.npy` files hold. The representation is the CPU backend's tensor; this module is how the
//! rest of the program names it without reaching for the CPU's kernels.

pub use super::cpu::{Element, Elements, Tensor, format_tensor, from_elements, load, save};

use crate::dtype::{Scalar, format_f32};

/// Where a `check all(P)` failed: the first `false` element of `predicate` in row-major
/// order, shown through the subjects it was computed from (each broadcast to its shape),
/// as `a[1] = -2.0` (several joined by `, `). Subjects without a tensor (host numbers) are
/// not shown. `None` when every element holds.
pub fn first_failure(predicate: &Tensor, subjects: &[(&str, Option<&Tensor>)]) -> Option<String> {
    let position = predicate
        .elements()
        .position(|element| !element.as_bool())?;
    let shape = predicate.shape();
    let mut index = vec![0; shape.len()];
    let mut rest = position;
    for (slot, size) in index.iter_mut().zip(shape).rev() {
        *slot = rest % size.max(&1);
        rest /= size.max(&1);
    }
    let shown: Vec<String> = subjects
        .iter()
        .filter_map(|(name, tensor)| {
            let tensor = (*tensor)?;
            let lead = shape.len().checked_sub(tensor.ndim())?;
            let own: Vec<usize> = tensor
                .shape()
                .iter()
                .enumerate()
                .map(|(dim, &size)| if size == 1 { 0 } else { index[lead + dim] })
                .collect();
            let mut flat = 0;
            for (&at, &size) in own.iter().zip(tensor.shape()) {
                flat = flat * size + at;
            }
            let value = tensor.elements().nth(flat)?;
            let value = match value {
                Scalar::Float(x) => format_f32(x as f32),
                Scalar::Int(x) => x.to_string(),
                Scalar::Bool(x) => x.to_string(),
            };
            let at: Vec<String> = own.iter().map(ToString::to_string).collect();
            let simple = name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
            let name = if simple {
                (*name).to_string()
            } else {
                format!("({name})")
            };
            Some(if own.is_empty() {
                format!("{name} = {value}")
            } else {
                format!("{name}[{}] = {value}", at.join(", "))
            })
        })
        .collect();
    if shown.is_empty() {
        let at: Vec<String> = index.iter().map(ToString::to_string).collect();
        return Some(format!("element [{}]", at.join(", ")));
    }
    Some(shown.join(", "))
}
