//! The elementwise engine: maps over one, two or three arrays with broadcasting, in
//! parallel above [`PARALLEL_THRESHOLD`] elements.
//!
//! Operands that are 0-d take a fast path (a map over the other operand), and operands of
//! one shape zip without broadcasting; ndarray's `Zip` then walks contiguous memory directly.
//!
//! The `_reusing` variants take their operands by value and write the result into an
//! operand's buffer when no one else holds it and it already has the result's shape and
//! element type. Filling a fresh buffer costs far more than the arithmetic (the pages must
//! be faulted in), so chains of operations on temporaries run several times faster.

use ndarray::{ArcArray, ArrayD, ArrayViewD, IxDyn, Zip};

mod rows;

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
    O: Copy + Default + Send + Sync,
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
    if let (Some(a), Some(b)) = (left.as_slice(), right.as_slice())
        && let Some(split) = rows::split(left.shape(), right.shape(), &shape)
    {
        return rows::zip_map(a, b, &split, &shape, &f);
    }
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

/// [`map`], in place when `array` is not shared.
pub(crate) fn map_reusing<T, F>(mut array: ArcArray<T, IxDyn>, f: F) -> ArcArray<T, IxDyn>
where
    T: Copy + Send + Sync,
    F: Fn(T) -> T + Send + Sync,
{
    if !array.is_unique() {
        return map(&array.view(), f).into_shared();
    }
    if array.len() >= PARALLEL_THRESHOLD {
        array.par_mapv_inplace(f);
    } else {
        array.mapv_inplace(f);
    }
    array
}

/// [`zip_map`] for operands of one element type, in place in an operand that is not
/// shared and already has the result's shape.
pub(crate) fn zip_map_reusing<T, F>(
    mut left: ArcArray<T, IxDyn>,
    mut right: ArcArray<T, IxDyn>,
    f: F,
) -> Result<ArcArray<T, IxDyn>>
where
    T: Copy + Default + Send + Sync,
    F: Fn(T, T) -> T + Send + Sync,
{
    let shape = broadcast_shapes(left.shape(), right.shape())?;
    if left.shape() == shape.as_slice() && left.is_unique() {
        update(&mut left, &right.view(), f)?;
        return Ok(left);
    }
    if right.shape() == shape.as_slice() && right.is_unique() {
        update(&mut right, &left.view(), |y, x| f(x, y))?;
        return Ok(right);
    }
    Ok(zip_map(&left.view(), &right.view(), f)?.into_shared())
}

/// `target[i] = f(target[i], other[i])` with `other` broadcast to the target's shape.
fn update<T, F>(target: &mut ArcArray<T, IxDyn>, other: &ArrayViewD<'_, T>, f: F) -> Result<()>
where
    T: Copy + Send + Sync,
    F: Fn(T, T) -> T + Send + Sync,
{
    let parallel = target.len() >= PARALLEL_THRESHOLD;
    if let Some(&y) = only_element(other) {
        if parallel {
            target.par_mapv_inplace(|x| f(x, y));
        } else {
            target.mapv_inplace(|x| f(x, y));
        }
        return Ok(());
    }
    if rows::update(target, other, &f) {
        return Ok(());
    }
    let shape = target.shape().to_vec();
    let zip = Zip::from(target.view_mut()).and(broadcast_view(other, &shape)?);
    if parallel {
        zip.par_for_each(|x, &y| *x = f(*x, y));
    } else {
        zip.for_each(|x, &y| *x = f(*x, y));
    }
    Ok(())
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
    fn reusing_variants_write_into_unshared_operands_only() {
        let shared = array(&[3], &[1, 2, 3]).into_shared();
        let keep = shared.clone();
        let sum = zip_map_reusing(shared, array(&[], &[10]).into_shared(), |a, b| a + b).unwrap();
        assert_eq!(
            (sum.view(), keep.view()),
            (
                array(&[3], &[11, 12, 13]).view(),
                array(&[3], &[1, 2, 3]).view()
            )
        );
        let alone = array(&[3], &[1, 2, 3]).into_shared();
        let address = alone.as_ptr();
        let sum = zip_map_reusing(
            array(&[2, 1], &[10, 20]).into_shared(),
            alone.clone(),
            |a, b| a - b,
        )
        .unwrap();
        assert_eq!(sum, array(&[2, 3], &[9, 8, 7, 19, 18, 17]).into_shared());
        let reused =
            zip_map_reusing(array(&[1], &[100]).into_shared(), alone, |a, b| a - b).unwrap();
        assert_eq!(
            (reused.as_ptr(), reused.view()),
            (address, array(&[3], &[99, 98, 97]).view())
        );
        let column = array(&[2, 1], &[1, 2]).into_shared();
        let grown =
            zip_map_reusing(column, array(&[2], &[5, 6]).into_shared(), |a, b| a * b).unwrap();
        assert_eq!(grown, array(&[2, 2], &[5, 6, 10, 12]).into_shared());
        let unique = array(&[2], &[1, -2]).into_shared();
        let address = unique.as_ptr();
        let negated = map_reusing(unique, |x| -x);
        assert_eq!(
            (negated.as_ptr(), negated),
            (address, array(&[2], &[-1, 2]).into_shared())
        );
        let shared = array(&[1], &[4]).into_shared();
        assert_eq!(
            map_reusing(shared.clone(), |x| x + 1),
            array(&[1], &[5]).into_shared()
        );
        assert_eq!(shared, array(&[1], &[4]).into_shared());
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
