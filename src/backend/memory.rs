//! Fallible allocation for tensor buffers: a result the machine cannot hold is a `value-error`
//! naming its size, never an abort.
//!
//! Before an operation runs, the buffers of its results (as the shape rule predicts them) are
//! allocated fallibly with `try_reserve`; if that fails the operation fails with
//! [`KernelError::OutOfMemory`], and if it succeeds the memory is handed back to the
//! allocator, which gives it to the kernel that allocates the same size right after. Each
//! device says which results need new buffers (`Device::reserve`); host lists built by the
//! interpreter (`range`, `tolist`) are reserved the same way. A kernel whose results are
//! sized by the data, or that needs scratch or a copy of an input in another layout, asks
//! for that memory itself ([`zeroed_vec`], [`scratch_vec`], [`reserve_values`]). Small
//! buffers are not reserved: they cannot fail in a way worth a diagnostic.

use super::error::{KernelError, Result};
use crate::dtype::DType;
use crate::graph::shape::Meta;

/// Results smaller than this (in bytes) are not reserved first.
pub const RESERVE_FROM: u64 = 1 << 20;

/// The bytes of `count` values of `T` (saturating).
fn values_bytes<T>(count: usize) -> u64 {
    (count as u64).saturating_mul(std::mem::size_of::<T>() as u64)
}

/// Fails when `count` values of `T` cannot be allocated now: for a kernel's copy of its
/// input in another layout, scratch beside the results reserved before it ran.
pub fn reserve_values<T>(count: usize) -> Result<()> {
    reserve(values_bytes::<T>(count))
}

/// An empty vector with room for `count` values, or `OutOfMemory` when the machine cannot
/// provide it now: for a kernel's scratch values, which the reservation of its results does
/// not cover (without it, a failed allocation aborts the process).
pub fn scratch_vec<T>(count: usize) -> Result<Vec<T>> {
    let mut values = Vec::new();
    values
        .try_reserve_exact(count)
        .map_err(|_| KernelError::OutOfMemory {
            bytes: values_bytes::<T>(count),
        })?;
    Ok(values)
}

/// `count` default values, or `OutOfMemory` when the machine cannot provide them now: for
/// results whose size is known only once a kernel has looked at the data (the reservation
/// before an operation counts them as empty). The memory is asked for first and then
/// allocated zeroed, so pages the kernel has not written yet cost nothing.
pub fn zeroed_vec<T: Default + Clone>(count: usize) -> Result<Vec<T>> {
    reserve_values::<T>(count)?;
    Ok(vec![T::default(); count])
}

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

/// Whether results of these sizes are too small to reserve, whichever of them need new
/// buffers: a device can answer without looking at the operands.
pub fn too_small_to_reserve(results: &[(DType, u64)]) -> bool {
    results_bytes(results) < RESERVE_FROM
}

/// The bytes of results of these dtypes and element counts (saturating).
pub fn results_bytes(results: &[(DType, u64)]) -> u64 {
    results
        .iter()
        .map(|&(dtype, numel)| tensor_bytes(dtype, numel))
        .fold(0u64, u64::saturating_add)
}

/// The bytes of a tensor of `dtype` with `numel` elements (saturating).
pub fn tensor_bytes(dtype: DType, numel: u64) -> u64 {
    numel.saturating_mul(dtype.size_of() as u64)
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

    #[test]
    fn sizes_read_well() {
        assert_eq!(super::super::error::describe_bytes(512), "512 bytes");
        assert_eq!(
            super::super::error::describe_bytes(3 << 20),
            "3145728 bytes (3.0 MiB)"
        );
        assert_eq!(tensor_bytes(DType::F32, 10), 40);
        assert_eq!(tensor_bytes(DType::I64, u64::MAX), u64::MAX);
    }
}
