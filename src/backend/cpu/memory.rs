//! Fallible allocation for tensor buffers: a result the machine cannot hold is a `value-error`
//! naming its size, never an abort.
//!
//! Kernels build their results with ndarray, whose allocations abort the process when memory
//! runs out. So before an operation runs, the buffers of its results (as the shape rule
//! predicts them) are allocated fallibly with `try_reserve`; if that fails the operation
//! fails with [`KernelError::OutOfMemory`], and if it succeeds the memory is handed back to
//! the allocator, which gives it to the kernel that allocates the same size right after.
//! Results that need no new buffer are not reserved: views of an operand (reshape, expand,
//! narrow, basic indexing…) and elementwise results that may be written into an operand of
//! their size. Small results are not reserved either: they cannot fail in a way worth a
//! diagnostic.

use super::error::{KernelError, Result};
use super::tensor::Tensor;
use crate::dtype::DType;
use crate::graph::op::{IndexSpec, Op};
use crate::graph::shape::Meta;

/// Results smaller than this (in bytes) are not reserved first.
pub const RESERVE_FROM: u64 = 1 << 20;

/// Fails when `bytes` cannot be allocated now.
pub fn reserve(bytes: u64) -> Result<()> {
    if bytes < RESERVE_FROM {
        return Ok(());
    }
    let Ok(size) = usize::try_from(bytes) else {
        return Err(KernelError::OutOfMemory { bytes });
    };
    let mut probe: Vec<u8> = Vec::new();
    probe
        .try_reserve_exact(size)
        .map_err(|_| KernelError::OutOfMemory { bytes })
}

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
    if !needs_buffers(op, operands, results) {
        return Ok(());
    }
    let bytes = results
        .iter()
        .map(|&(dtype, numel)| tensor_bytes(dtype, numel))
        .fold(0u64, u64::saturating_add);
    reserve(bytes)
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

/// The dtype and element count of each result, for concrete metas; a result whose size is
/// only known once it is computed (`nonzero()`) counts as empty.
pub fn result_sizes(metas: &[Meta]) -> Vec<(DType, u64)> {
    metas
        .iter()
        .map(|meta| {
            let numel = meta.shape.iter().try_fold(1u64, |count, dim| {
                let size = u64::try_from(dim.known()?).ok()?;
                Some(count.saturating_mul(size))
            });
            (meta.dtype, numel.unwrap_or(0))
        })
        .collect()
}

/// The bytes of a tensor of `dtype` with `numel` elements (saturating).
pub fn tensor_bytes(dtype: DType, numel: u64) -> u64 {
    numel.saturating_mul(dtype.size_of() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_possible_reservations_succeed() {
        assert_eq!(reserve(0), Ok(()));
        assert_eq!(reserve(RESERVE_FROM * 4), Ok(()));
    }

    #[test]
    fn an_impossible_reservation_is_an_error_naming_the_bytes() {
        let bytes = u64::MAX / 2;
        assert_eq!(reserve(bytes), Err(KernelError::OutOfMemory { bytes }));
        let message = KernelError::OutOfMemory {
            bytes: 8_000_000_000,
        }
        .to_string();
        assert!(message.contains("8000000000 bytes (7.5 GiB)"), "{message}");
    }

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

    #[test]
    fn sizes_read_well() {
        assert_eq!(crate::backend::error::describe_bytes(512), "512 bytes");
        assert_eq!(
            crate::backend::error::describe_bytes(3 << 20),
            "3145728 bytes (3.0 MiB)"
        );
        assert_eq!(tensor_bytes(DType::F32, 10), 40);
        assert_eq!(tensor_bytes(DType::I64, u64::MAX), u64::MAX);
    }
}
