//! Which CPU results need new buffers, reserved first (`backend::memory`): the kernels build
//! their results with ndarray, whose allocations abort the process when memory runs out.
//! Results that need no new buffer are not reserved: views of an operand (permute, narrow,
//! basic indexing…), reshapes of contiguous operands, expands that keep the size, and
//! elementwise results written into an operand nobody else holds.

use super::error::{MAX_ELEMENTS, Result};
use super::tensor::Tensor;
use crate::backend::memory::{reserve, results_bytes};
use crate::dtype::DType;
use crate::graph::op::{IndexSpec, Op};

/// Whether an operation's results need new buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Results {
    /// Always fresh buffers.
    Fresh,
    /// Views of an operand: never reserved.
    Views,
    /// Elementwise: written into an operand nobody else holds that has the result's size
    /// and dtype, else a fresh buffer.
    Elementwise,
    /// A view of a contiguous operand, else a copy.
    Reshape,
    /// The operand itself when the size does not change, else a copy.
    Expand,
}

fn results_of(op: &Op) -> Results {
    match op {
        Op::Permute { .. }
        | Op::Squeeze { .. }
        | Op::Unsqueeze { .. }
        | Op::Split { .. }
        | Op::Narrow { .. } => Results::Views,
        Op::Index { items }
            if items.iter().all(|item| {
                !matches!(item, IndexSpec::Mask { .. } | IndexSpec::Indices { .. })
            }) =>
        {
            Results::Views
        }
        Op::Reshape { .. } => Results::Reshape,
        Op::Expand { .. } => Results::Expand,
        Op::Binary(_) | Op::Unary(_) | Op::Cast(_) | Op::Where | Op::Clamp { .. } => {
            Results::Elementwise
        }
        Op::Full { .. }
        | Op::Arange { .. }
        | Op::Randn { .. }
        | Op::Reduce { .. }
        | Op::Cumsum { .. }
        | Op::Diff { .. }
        | Op::Sort { .. }
        | Op::TopK { .. }
        | Op::Cat { .. }
        | Op::Stack { .. }
        | Op::IndexSelect { .. }
        | Op::Gather { .. }
        | Op::Nonzero
        | Op::MaskedSelect
        | Op::RepeatInterleave { .. }
        | Op::RepeatIndices
        | Op::Index { .. }
        | Op::Unique
        | Op::MatMul
        | Op::Fused(_) => Results::Fresh,
    }
}

/// Reserves the results of `op` (each a dtype and an element count) before it runs on
/// `operands`; see the module doc for what is not reserved.
pub fn reserve_for(op: &Op, operands: &[&Tensor], results: &[(DType, u64)]) -> Result<()> {
    // Past the element limit the kernel refuses the result as too large, before allocating.
    let too_large = results
        .iter()
        .any(|&(_, numel)| numel > MAX_ELEMENTS as u64);
    if too_large || !needs_buffers(op, operands, results) {
        return Ok(());
    }
    reserve(results_bytes(results))
}

/// Whether `op` on `operands` allocates new buffers for `results`.
fn needs_buffers(op: &Op, operands: &[&Tensor], results: &[(DType, u64)]) -> bool {
    let first = operands.first();
    match results_of(op) {
        Results::Views => false,
        Results::Fresh => true,
        Results::Reshape => first.is_some_and(|operand| !operand.is_standard_layout()),
        Results::Expand => first.is_none_or(|operand| {
            results
                .iter()
                .any(|&(_, numel)| numel != operand.numel() as u64)
        }),
        Results::Elementwise => !results.iter().all(|&(dtype, numel)| {
            operands.iter().any(|operand| {
                operand.dtype() == dtype && operand.numel() as u64 == numel && operand.is_unique()
            })
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(count: usize) -> Tensor {
        Tensor::from_vec(&[count], vec![1.0f32; count]).expect("a small tensor")
    }

    #[test]
    fn fresh_buffers_are_reserved_and_reused_or_shared_ones_are_not() {
        use crate::backend::cpu::{BinaryOp, UnaryOp};
        let four = [(DType::F32, 4)];
        let add = Op::Binary(BinaryOp::Add);
        // A temporary nobody else holds receives the result.
        assert!(!needs_buffers(&add, &[&floats(4), &floats(1)], &four));
        // A shared operand must not be overwritten: the result needs its own buffer.
        let shared = floats(4);
        let holder = shared.clone();
        assert!(needs_buffers(&add, &[&shared, &floats(1)], &four));
        drop(holder);
        // Broadcasting to a larger result, or changing the dtype, needs a new buffer.
        assert!(needs_buffers(&add, &[&floats(1), &floats(1)], &four));
        assert!(needs_buffers(
            &Op::Cast(DType::I64),
            &[&floats(4)],
            &[(DType::I64, 4)]
        ));
        assert!(!needs_buffers(
            &Op::Unary(UnaryOp::Neg),
            &[&floats(4)],
            &four
        ));
        // Views and same-size expands share; a real expand, matmul, cat allocate.
        assert!(!needs_buffers(
            &Op::Permute { dims: vec![0] },
            &[&floats(4)],
            &four
        ));
        let to_four = Op::Expand {
            shape: vec![crate::graph::shape::Dim::Known(4)],
        };
        assert!(!needs_buffers(&to_four, &[&floats(4)], &four));
        assert!(needs_buffers(&to_four, &[&floats(1)], &four));
        assert!(needs_buffers(
            &Op::MatMul,
            &[&floats(4), &floats(4)],
            &[(DType::F32, 1)]
        ));
        assert!(needs_buffers(
            &Op::Cat { dim: 0 },
            &[&floats(2), &floats(2)],
            &four
        ));
    }
}
