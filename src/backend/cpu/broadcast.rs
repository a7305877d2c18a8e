//! NumPy broadcasting of shapes.

use super::error::{KernelError, Result, format_shape};

/// The shape two shapes broadcast to: aligned from the right, each pair of sizes equal or
/// one of them 1.
pub fn broadcast_shapes(left: &[usize], right: &[usize]) -> Result<Vec<usize>> {
    let ndim = left.len().max(right.len());
    let size_at = |shape: &[usize], axis: usize| {
        let offset = ndim - shape.len();
        if axis < offset {
            1
        } else {
            shape[axis - offset]
        }
    };
    (0..ndim)
        .map(|axis| match (size_at(left, axis), size_at(right, axis)) {
            (a, b) if a == b || b == 1 => Ok(a),
            (1, b) => Ok(b),
            _ => Err(KernelError::Shape(format!(
                "shapes {} and {} cannot be broadcast together",
                format_shape(left),
                format_shape(right)
            ))),
        })
        .collect()
}

/// Checks that `shape` broadcasts to exactly `target` (as `expand` requires).
pub(crate) fn check_broadcast_to(shape: &[usize], target: &[usize]) -> Result<()> {
    let fits = shape.len() <= target.len()
        && shape
            .iter()
            .rev()
            .zip(target.iter().rev())
            .all(|(&size, &want)| size == want || size == 1);
    if fits {
        Ok(())
    } else {
        Err(KernelError::Shape(format!(
            "shape {} cannot be broadcast to {}",
            format_shape(shape),
            format_shape(target)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_broadcast_like_numpy() {
        type Case<'a> = (&'a [usize], &'a [usize], Option<&'a [usize]>);
        let cases: &[Case] = &[
            (&[2, 3], &[2, 3], Some(&[2, 3])),
            (&[], &[2, 3], Some(&[2, 3])),
            (&[2, 3], &[], Some(&[2, 3])),
            (&[3], &[2, 1], Some(&[2, 3])),
            (&[1, 4], &[5, 1], Some(&[5, 4])),
            (&[0], &[1], Some(&[0])),
            (&[1], &[0], Some(&[0])),
            (&[2, 0], &[3, 1, 1], Some(&[3, 2, 0])),
            (&[3], &[4], None),
            (&[2, 3], &[3, 2], None),
            (&[0], &[2], None),
        ];
        for (left, right, expected) in cases {
            let actual = broadcast_shapes(left, right).ok();
            assert_eq!(actual.as_deref(), *expected, "{left:?} with {right:?}");
        }
    }

    #[test]
    fn broadcast_errors_name_both_shapes() {
        let error = broadcast_shapes(&[2, 3], &[4]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "shapes [2, 3] and [4] cannot be broadcast together"
        );
    }

    #[test]
    fn broadcasting_to_a_target_is_one_sided() {
        assert!(check_broadcast_to(&[3], &[2, 3]).is_ok());
        assert!(check_broadcast_to(&[1, 3], &[0, 3]).is_ok());
        assert!(check_broadcast_to(&[], &[]).is_ok());
        assert!(check_broadcast_to(&[2, 3], &[3]).is_err());
        assert!(check_broadcast_to(&[2], &[1]).is_err());
    }
}
