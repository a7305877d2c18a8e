//! The elementwise engine: maps over one, two or three arrays with broadcasting, in
//! parallel above [`PARALLEL_THRESHOLD`] elements.
//!
//! Operands that are 0-d take a fast path (a map over the other operand), and operands of
//! one shape zip without broadcasting; ndarray's `Zip` then walks contiguous memory directly.

use ndarray::{ArrayD, ArrayViewD, IxDyn, Zip};

use super::broadcast::broadcast_shapes;
use super::error::{KernelError, Result, checked_numel, format_shape};

/// Below this many elements a kernel runs on the calling thread.
pub(crate) const PARALLEL_THRESHOLD: usize = 1 << 16;

/// `f` applied to every element, keeping the shape.
pub(crate) fn map<A, O, F>(input: &ArrayViewD<'_, A>, f: F) -> ArrayD<O>
where
    A: Copy + Send + Sync,
    O: Send,
    F: Fn(A) -> O + Send + Sync,
{
    let zip = Zip::from(input.view());
    if input.len() >= PARALLEL_THRESHOLD {
        zip.par_map_collect(|&x| f(x))
    } else {
        zip.map_collect(|&x| f(x))
    }
}

/// `f` applied to pairs of elements of two operands broadcast together.
pub(crate) fn zip_map<A, B, O, F>(
    left: &ArrayViewD<'_, A>,
    right: &ArrayViewD<'_, B>,
    f: F,
) -> Result<ArrayD<O>>
where
    A: Copy + Send + Sync,
    B: Copy + Send + Sync,
    O: Send,
    F: Fn(A, B) -> O + Send + Sync,
{
    if let Some(&x) = only_element(left) {
        return Ok(map(right, |y| f(x, y)));
    }
    if let Some(&y) = only_element(right) {
        return Ok(map(left, |x| f(x, y)));
    }
    let shape = broadcast_shapes(left.shape(), right.shape())?;
    let numel = checked_numel(&shape)?;
    let left = broadcast_view(left, &shape)?;
    let right = broadcast_view(right, &shape)?;
    let zip = Zip::from(left).and(right);
    Ok(if numel >= PARALLEL_THRESHOLD {
        zip.par_map_collect(|&x, &y| f(x, y))
    } else {
        zip.map_collect(|&x, &y| f(x, y))
    })
}

/// `f` applied to triples of elements of three operands broadcast together.
pub(crate) fn zip3_map<A, B, C, O, F>(
    first: &ArrayViewD<'_, A>,
    second: &ArrayViewD<'_, B>,
    third: &ArrayViewD<'_, C>,
    f: F,
) -> Result<ArrayD<O>>
where
    A: Copy + Send + Sync,
    B: Copy + Send + Sync,
    C: Copy + Send + Sync,
    O: Send,
    F: Fn(A, B, C) -> O + Send + Sync,
{
    let shape = broadcast_shapes(first.shape(), second.shape())?;
    let shape = broadcast_shapes(&shape, third.shape())?;
    let numel = checked_numel(&shape)?;
    let zip = Zip::from(broadcast_view(first, &shape)?)
        .and(broadcast_view(second, &shape)?)
        .and(broadcast_view(third, &shape)?);
    Ok(if numel >= PARALLEL_THRESHOLD {
        zip.par_map_collect(|&x, &y, &z| f(x, y, z))
    } else {
        zip.map_collect(|&x, &y, &z| f(x, y, z))
    })
}

/// A read-only view of `array` broadcast to `shape` (no copy).
pub(crate) fn broadcast_view<'a, A>(
    array: &'a ArrayViewD<'_, A>,
    shape: &[usize],
) -> Result<ArrayViewD<'a, A>> {
    array.broadcast(IxDyn(shape)).ok_or_else(|| {
        KernelError::Shape(format!(
            "shape {} cannot be broadcast to {}",
            format_shape(array.shape()),
            format_shape(shape)
        ))
    })
}

/// The element of a 0-d array.
fn only_element<'a, A>(array: &'a ArrayViewD<'_, A>) -> Option<&'a A> {
    if array.ndim() == 0 {
        array.first()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::ArrayD;

    fn array(shape: &[usize], values: &[i64]) -> ArrayD<i64> {
        ArrayD::from_shape_vec(IxDyn(shape), values.to_vec()).unwrap()
    }

    #[test]
    fn pairs_broadcast_and_zero_dim_operands_take_the_fast_path() {
        let column = array(&[2, 1], &[10, 20]);
        let row = array(&[3], &[1, 2, 3]);
        let sum = zip_map(&column.view(), &row.view(), |a, b| a + b).unwrap();
        assert_eq!(sum, array(&[2, 3], &[11, 12, 13, 21, 22, 23]));
        let scalar = array(&[], &[5]);
        let scaled = zip_map(&row.view(), &scalar.view(), |a, b| a * b).unwrap();
        assert_eq!(scaled, array(&[3], &[5, 10, 15]));
        let both = zip_map(&scalar.view(), &scalar.view(), |a, b| a - b).unwrap();
        assert_eq!(both, array(&[], &[0]));
        assert!(zip_map(&row.view(), &array(&[2], &[1, 2]).view(), |a, b| a + b).is_err());
    }

    #[test]
    fn large_operands_run_in_parallel_with_the_same_result() {
        let n = PARALLEL_THRESHOLD * 2 + 3;
        let values: Vec<i64> = (0..n as i64).collect();
        let big = array(&[n], &values);
        let doubled = zip_map(&big.view(), &big.view(), |a, b| a + b).unwrap();
        assert!(doubled.iter().enumerate().all(|(i, &x)| x == 2 * i as i64));
        let negated = map(&big.t(), |x| -x);
        assert_eq!(negated[[n - 1]], -(n as i64 - 1));
    }

    #[test]
    fn triples_broadcast_three_ways() {
        let a = array(&[2, 1, 1], &[1, 2]);
        let b = array(&[3, 1], &[10, 20, 30]);
        let c = array(&[], &[100]);
        let out = zip3_map(&a.view(), &b.view(), &c.view(), |x, y, z| x + y + z).unwrap();
        assert_eq!(out.shape(), &[2, 3, 1]);
        assert_eq!(out[[1, 2, 0]], 132);
        let too_big = ArrayD::<i64>::zeros(IxDyn(&[1 << 16, 1]));
        let wide = ArrayD::<i64>::zeros(IxDyn(&[1 << 16]));
        let huge = zip3_map(&too_big.view(), &wide.view(), &c.view(), |x, y, z| {
            x + y + z
        });
        assert!(matches!(huge, Err(KernelError::TooLarge { .. })));
    }
}
