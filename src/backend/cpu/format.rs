//! Tensors printed as spec §8 shows them, on one line.

use ndarray::{ArrayViewD, Axis};

use super::error::format_shape;
use super::tensor::{Element, Tensor, with_array};
use crate::dtype::DType;

/// Tensors with more elements than this are summarised, as PyTorch does.
const SUMMARY_THRESHOLD: usize = 1000;

/// Entries shown at each end of a summarised dim.
const EDGE_ITEMS: usize = 3;

/// `tensor([[1.0, 2.0], [3.0, 4.0]])`, with `, dtype=i64` or `, dtype=bool` for those
/// dtypes; `tensor(2.5)` when 0-d; `tensor([])` when 1-D and empty, `tensor([], size=[0, 3])`
/// for other empty shapes. Over 1000 elements, every dim longer than 6 shows its first 3
/// and last 3 entries around `...`.
pub fn format_tensor(tensor: &Tensor) -> String {
    let suffix = match tensor.dtype() {
        DType::F32 => String::new(),
        dtype => format!(", dtype={dtype}"),
    };
    if tensor.numel() == 0 {
        return match tensor.ndim() {
            1 => format!("tensor([]{suffix})"),
            _ => format!("tensor([], size={}{suffix})", format_shape(tensor.shape())),
        };
    }
    let summarise = tensor.numel() > SUMMARY_THRESHOLD;
    let mut body = String::new();
    with_array!(tensor, array => write_nested(&array.view(), summarise, &mut body));
    format!("tensor({body}{suffix})")
}

fn write_nested<T: Element>(view: &ArrayViewD<'_, T>, summarise: bool, out: &mut String) {
    if view.ndim() == 0 {
        if let Some(&element) = view.first() {
            out.push_str(&element.format());
        }
        return;
    }
    out.push('[');
    for (position, entry) in shown_entries(view.len_of(Axis(0)), summarise)
        .into_iter()
        .enumerate()
    {
        if position > 0 {
            out.push_str(", ");
        }
        match entry {
            Some(index) => write_nested(&view.index_axis(Axis(0), index), summarise, out),
            None => out.push_str("..."),
        }
    }
    out.push(']');
}

/// The indices to print along a dim of `size`; `None` stands for the elided middle.
fn shown_entries(size: usize, summarise: bool) -> Vec<Option<usize>> {
    if !summarise || size <= 2 * EDGE_ITEMS {
        return (0..size).map(Some).collect();
    }
    (0..EDGE_ITEMS)
        .map(Some)
        .chain([None])
        .chain((size - EDGE_ITEMS..size).map(Some))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::testing::{boolean, bools, float, floats, int, ints};

    #[test]
    fn tensors_print_as_the_spec_shows() {
        let cases: Vec<(Tensor, &str)> = vec![
            (
                floats(&[2, 2], &[1.0, 2.0, 3.0, 4.0]),
                "tensor([[1.0, 2.0], [3.0, 4.0]])",
            ),
            (ints(&[2], &[1, 2]), "tensor([1, 2], dtype=i64)"),
            (bools(&[1], &[true]), "tensor([true], dtype=bool)"),
            (float(2.5), "tensor(2.5)"),
            (int(3), "tensor(3, dtype=i64)"),
            (boolean(false), "tensor(false, dtype=bool)"),
            (floats(&[0], &[]), "tensor([])"),
            (ints(&[0], &[]), "tensor([], dtype=i64)"),
            (floats(&[0, 3], &[]), "tensor([], size=[0, 3])"),
            (bools(&[2, 0], &[]), "tensor([], size=[2, 0], dtype=bool)"),
            (
                floats(&[3], &[0.1, 1e-7, -0.0]),
                "tensor([0.1, 1e-7, -0.0])",
            ),
            (
                floats(&[3], &[f32::NAN, f32::INFINITY, f32::NEG_INFINITY]),
                "tensor([nan, inf, -inf])",
            ),
            (floats(&[1, 1, 1], &[5.0]), "tensor([[[5.0]]])"),
            (
                ints(&[2, 1], &[-1, i64::MIN]),
                "tensor([[-1], [-9223372036854775808]], dtype=i64)",
            ),
        ];
        for (tensor, expected) in cases {
            assert_eq!(format_tensor(&tensor), expected);
        }
    }

    #[test]
    fn large_tensors_are_summarised() {
        let values: Vec<f32> = (0..10_000).map(|i| i as f32).collect();
        assert_eq!(
            format_tensor(&floats(&[10_000], &values)),
            "tensor([0.0, 1.0, 2.0, ..., 9997.0, 9998.0, 9999.0])"
        );
        let grid: Vec<i64> = (0..2002).collect();
        assert_eq!(
            format_tensor(&ints(&[2, 1001], &grid)),
            "tensor([[0, 1, 2, ..., 998, 999, 1000], [1001, 1002, 1003, ..., 1999, 2000, 2001]], dtype=i64)"
        );
        let cube: Vec<i64> = (0..10 * 10 * 11).collect();
        let printed = format_tensor(&ints(&[10, 10, 11], &cube));
        assert!(
            printed.starts_with(
                "tensor([[[0, 1, 2, ..., 8, 9, 10], [11, 12, 13, ..., 19, 20, 21], [22,"
            )
        );
        assert_eq!(printed.matches("...").count(), 1 + 6 * (1 + 6));
        let small: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        assert!(!format_tensor(&floats(&[1000], &small)).contains("..."));
    }
}
