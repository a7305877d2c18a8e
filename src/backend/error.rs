//! The error every device's kernels return, the allocation guard, and how shapes are
//! written in messages. Devices share them, so an operation fails with the same diagnostic
//! wherever it runs.

use crate::graph::fused::{Domain, FusedKernel};
use crate::graph::op::BinaryOp;
use crate::graph::semantics::Fault;
use crate::graph::shape::Dim;
use thiserror::Error;

use crate::diag::{Code, Diagnostic};
use crate::source::Span;

/// The most elements any kernel allocates for one tensor. Larger requests fail with
/// [`KernelError::TooLarge`] instead of aborting the process on allocation failure.
pub const MAX_ELEMENTS: usize = 1 << 31;

/// Why a kernel refused its inputs. Messages are lowercase and speak TSL: dtypes are
/// `f32`, `i64`, `bool` and shapes print as `[2, 3]`.
///
/// [`KernelError::diagnostic`] maps the variants to diagnostic codes: `TooLarge`,
/// `OutOfMemory`, `DivisionByZero` and `Value` to value errors, `IndexOutOfRange`, `Shape` and `Empty` to
/// `shape-error`, `Type` to `type-error`, and `Input` and `Interrupted` to `input-error`.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum KernelError {
    /// An allocation over [`MAX_ELEMENTS`]; `numel` saturates at `u128::MAX`.
    #[error("a tensor of {numel} elements is too large (the limit is {MAX_ELEMENTS} elements)")]
    TooLarge { numel: u128 },
    /// A result the machine cannot allocate now (within the element limit).
    #[error(
        "out of memory: the result needs {}, more than can be allocated now",
        describe_bytes(*bytes)
    )]
    OutOfMemory { bytes: u64 },
    /// The session's interrupt flag was set (Ctrl-C) while the operation ran.
    #[error("interrupted")]
    Interrupted,
    /// Integer `//` or `%` by zero.
    #[error("integer division by zero")]
    DivisionByZero,
    /// An index outside `-size..size` (or `0..size` where negative indices are not allowed).
    #[error("index {index} is out of range for dim {dim} of size {size}")]
    IndexOutOfRange { index: i64, size: usize, dim: usize },
    /// Sizes or dims that cannot work together.
    #[error("{0}")]
    Shape(String),
    /// A dtype or argument kind the operation does not accept.
    #[error("{0}")]
    Type(String),
    /// An argument value the operation does not accept (a zero step, a negative count).
    #[error("{0}")]
    Value(String),
    /// A reduction without an identity (`max`, `argmin`, …) over an empty extent.
    #[error("{0}")]
    Empty(String),
    /// A missing, unreadable or unsupported `.npy` file.
    #[error("{0}")]
    Input(String),
    /// A tensor larger than a device can hold or bind (the message names the limit).
    #[error("{0}")]
    DeviceLimit(String),
    /// A failure of the device itself or of TSL's use of it (a rejected kernel, a lost
    /// device): never the user's fault.
    #[error("{0}")]
    Internal(String),
    /// An element error inside a fused kernel, raised by one of the operations it replaced
    /// (`member` indexes the kernel's members), which the error is reported at.
    #[error("{error}")]
    InMember {
        member: usize,
        error: Box<KernelError>,
    },
}

pub type Result<T, E = KernelError> = std::result::Result<T, E>;

impl From<Fault> for KernelError {
    fn from(fault: Fault) -> KernelError {
        match fault {
            Fault::DivisionByZero => KernelError::DivisionByZero,
            Fault::NegativePower => KernelError::Type(
                "integers to negative integer powers are not allowed; use .float() first".into(),
            ),
        }
    }
}

impl KernelError {
    /// The error of integer `op` at an element it could not compute.
    pub fn fault_of(op: BinaryOp) -> KernelError {
        Fault::of(op).map_or_else(
            || KernelError::Internal(format!("`{}` reported a fault it cannot raise", op.name())),
            KernelError::from,
        )
    }

    /// The error as a diagnostic at the operation that raised it (eagerly or in a graph).
    pub fn diagnostic(&self, span: Span) -> Diagnostic {
        if let KernelError::InMember { error, .. } = self {
            return error.diagnostic(span);
        }
        if let KernelError::Internal(message) = self {
            return Diagnostic::internal(span, message).with_help(
                "this is a bug in TSL or in the GPU driver, not in your program: please report it \
                 with the program that triggered it (--device cpu avoids the GPU meanwhile)",
            );
        }
        let code = match self {
            KernelError::TooLarge { .. }
            | KernelError::OutOfMemory { .. }
            | KernelError::DivisionByZero
            | KernelError::Value(_)
            | KernelError::DeviceLimit(_) => Code::ValueError,
            KernelError::IndexOutOfRange { .. } | KernelError::Shape(_) | KernelError::Empty(_) => {
                Code::ShapeError
            }
            KernelError::Type(_) => Code::TypeError,
            KernelError::Input(_) | KernelError::Interrupted => Code::InputError,
            KernelError::InMember { .. } | KernelError::Internal(_) => Code::InternalError,
        };
        let diagnostic = Diagnostic::error(code, span, self.to_string());
        match self {
            KernelError::DivisionByZero => diagnostic.with_help(
                "integer `//` and `%` need a non-zero divisor; use `/` for float division",
            ),
            KernelError::TooLarge { .. } => {
                diagnostic.with_help("check the sizes; tensors are limited to 2^31 elements")
            }
            KernelError::DeviceLimit(_) => diagnostic
                .with_help("split the work into smaller tensors, or run with `--device cpu`"),
            KernelError::OutOfMemory { .. } => diagnostic.with_help(
                "the machine cannot provide this much memory: use smaller tensors, or let \
                 large intermediate values go out of scope sooner",
            ),
            _ => diagnostic,
        }
    }
}

/// `bytes` for people: `8000000000 bytes (7.5 GiB)`.
pub fn describe_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = "";
    for next in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = next;
    }
    if unit.is_empty() {
        format!("{bytes} bytes")
    } else {
        format!("{bytes} bytes ({value:.1} {unit})")
    }
}

/// Writes a shape as TSL prints it: `[2, 3]`, `[]` for a 0-d tensor.
pub fn format_shape(shape: &[usize]) -> String {
    let sizes: Vec<String> = shape.iter().map(ToString::to_string).collect();
    format!("[{}]", sizes.join(", "))
}

/// The element count of `shape`, refused when over [`MAX_ELEMENTS`] or when it overflows.
/// Empty shapes are refused too when their non-zero sizes multiply past `isize::MAX`,
/// which ndarray cannot represent (it would panic).
pub fn checked_numel(shape: &[usize]) -> Result<usize> {
    checked_count(shape.iter().copied())
}

/// [`checked_numel`] of the sizes `sizes` yields.
fn checked_count(sizes: impl Iterator<Item = usize> + Clone) -> Result<usize> {
    let addressed = product(sizes.clone().filter(|&size| size != 0));
    match (product(sizes), addressed) {
        (Some(numel), Some(addressed)) if addressed <= isize::MAX as u128 => guard_count(numel),
        (_, addressed) => Err(KernelError::TooLarge {
            numel: addressed.unwrap_or(u128::MAX),
        }),
    }
}

/// The product of `sizes`, or `None` on overflow.
fn product(mut sizes: impl Iterator<Item = usize>) -> Option<u128> {
    sizes.try_fold(1u128, |count, size| count.checked_mul(size as u128))
}

/// Refuses a fused kernel whose sizes are concrete at the first operation it replaced (in
/// program order) whose own result would be over [`MAX_ELEMENTS`], as that operation alone
/// is refused: one computing a value per element when the iteration shape has too many
/// elements, or a value per row when there are too many rows (rows with no elements). The
/// kernel makes few of those results, but eager code makes each of them.
pub fn check_fused_results(kernel: &FusedKernel) -> Result<()> {
    let known = |dim: &Dim| match *dim {
        Dim::Known(size) => usize::try_from(size).ok(),
        Dim::Sym(_) => None,
    };
    if !kernel.shape.iter().all(|dim| known(dim).is_some()) {
        return Ok(());
    }
    let sizes = kernel.shape.iter().filter_map(known);
    let elements = checked_count(sizes.clone()).err();
    let outer = kernel.shape.len().saturating_sub(1);
    let rows = kernel
        .rows
        .then(|| checked_count(sizes.take(outer)).err())
        .flatten();
    let Some(too_large) = elements.clone().or_else(|| rows.clone()) else {
        return Ok(());
    };
    let first = kernel
        .body
        .iter()
        .filter_map(|instr| match instr.domain {
            Domain::Element => elements.as_ref().map(|error| (instr.member, error)),
            Domain::Row => rows.as_ref().map(|error| (instr.member, error)),
            Domain::Uniform | Domain::Kept => None,
        })
        .min_by_key(|(member, _)| *member);
    Err(match first {
        Some((member, error)) => KernelError::InMember {
            member,
            error: Box::new(error.clone()),
        },
        None => too_large,
    })
}

/// `shape` with its size along `dim` set to `size`, a count found in the data (the slices a
/// `repeat_interleave` makes), refused as [`checked_numel`] refuses a shape: a tensor
/// without elements may have a size past the element limit, but not one past `isize::MAX`.
pub fn resized(shape: &[usize], dim: usize, size: u128) -> Result<Vec<usize>> {
    let too_large = || KernelError::TooLarge { numel: size };
    let mut resized = shape.to_vec();
    *resized
        .get_mut(dim)
        .ok_or_else(|| dim_error(dim, shape.len()))? =
        usize::try_from(size).map_err(|_| too_large())?;
    checked_numel(&resized)?;
    Ok(resized)
}

/// Refuses an element count over [`MAX_ELEMENTS`].
pub fn guard_count(numel: u128) -> Result<usize> {
    if numel > MAX_ELEMENTS as u128 {
        return Err(KernelError::TooLarge { numel });
    }
    Ok(numel as usize)
}

/// A negative count of repeats for `repeat_interleave`.
pub fn negative_count(count: i64) -> KernelError {
    KernelError::Value(format!(
        "repeat_interleave counts must not be negative, got {count}"
    ))
}

/// A dim outside `0..ndim`.
pub fn dim_error(dim: usize, ndim: usize) -> KernelError {
    KernelError::Shape(format!(
        "dim {dim} is out of range for a tensor with {ndim} dims"
    ))
}

/// Python's slice `start:stop:step` of `size` positions, clamped as Python clamps it: its
/// first position and the end (exclusive, never before the first). Steps must be positive.
pub fn python_slice_bounds(
    start: Option<i64>,
    stop: Option<i64>,
    step: i64,
    size: usize,
) -> Result<(usize, usize)> {
    if step <= 0 {
        return Err(KernelError::Value(format!(
            "slice step must be positive, got {step}"
        )));
    }
    let clamp = |bound: Option<i64>, default: usize| match bound {
        None => default,
        Some(bound) if bound < 0 => (i128::from(bound) + size as i128).max(0) as usize,
        Some(bound) => (bound as u64).min(size as u64) as usize,
    };
    let first = clamp(start, 0);
    Ok((first, clamp(stop, size).max(first)))
}

/// Checks `dim < ndim`.
pub fn check_dim(dim: usize, ndim: usize) -> Result<()> {
    if dim < ndim {
        Ok(())
    } else {
        Err(dim_error(dim, ndim))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_print_like_lists() {
        assert_eq!(format_shape(&[]), "[]");
        assert_eq!(format_shape(&[2, 3]), "[2, 3]");
    }

    #[test]
    fn a_resized_shape_may_be_empty_past_the_element_limit() {
        assert_eq!(resized(&[2, 3], 0, 5), Ok(vec![5, 3]));
        assert_eq!(resized(&[2, 0], 0, 1 << 40), Ok(vec![1 << 40, 0]));
        assert!(matches!(
            resized(&[2, 3], 0, 1 << 40),
            Err(KernelError::TooLarge { .. })
        ));
        assert_eq!(
            resized(&[2, 0], 0, 1 << 64),
            Err(KernelError::TooLarge { numel: 1 << 64 })
        );
        assert!(matches!(
            resized(&[2, 0], 0, usize::MAX as u128),
            Err(KernelError::TooLarge { .. })
        ));
        assert!(matches!(resized(&[2], 1, 3), Err(KernelError::Shape(_))));
    }

    #[test]
    fn the_guard_refuses_huge_and_overflowing_counts() {
        assert_eq!(checked_numel(&[2, 3]), Ok(6));
        assert_eq!(checked_numel(&[]), Ok(1));
        assert_eq!(checked_numel(&[0, 1 << 40]), Ok(0));
        let unaddressable = checked_numel(&[0, usize::MAX]);
        assert_eq!(
            unaddressable,
            Err(KernelError::TooLarge {
                numel: usize::MAX as u128
            })
        );
        assert_eq!(
            checked_numel(&[1_000_000, 1_000_000, 1_000_000]),
            Err(KernelError::TooLarge {
                numel: 1_000_000_000_000_000_000
            })
        );
        let overflow = checked_numel(&[usize::MAX, usize::MAX, usize::MAX]);
        assert_eq!(overflow, Err(KernelError::TooLarge { numel: u128::MAX }));
        assert!(checked_numel(&[MAX_ELEMENTS]).is_ok());
        assert!(checked_numel(&[MAX_ELEMENTS + 1]).is_err());
    }
}
