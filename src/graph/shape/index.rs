//! Rules for indexing, slicing and selection, including the data-dependent operations whose
//! output sizes are only known when they run.

use super::elementwise::broadcast;
use super::{Cmp, Dim, Meta, RuleError, RuleResult, Sizes, numel};
use crate::dtype::DType;
use crate::graph::op::IndexSpec;

/// `x[items]`; operands are `x`, then one tensor per mask or index item.
pub fn index(items: &[IndexSpec], inputs: &[Meta], sizes: &mut dyn Sizes) -> RuleResult<Meta> {
    let x = &inputs[0];
    let consumed: usize = items.iter().map(consumed_dims).sum();
    if consumed > x.ndim() {
        return Err(RuleError::shape(format!(
            "too many indices for {}: {consumed} dimensions indexed",
            x.show(sizes)
        )));
    }
    let mut operands = inputs[1..].iter();
    let mut dim = 0;
    let mut shape = Vec::new();
    for item in items {
        match item {
            IndexSpec::Int(position) => check_position(*position, x, dim, sizes)?,
            IndexSpec::Slice { start, stop, step } => {
                shape.push(slice_length(*start, *stop, *step, x.shape[dim], sizes)?);
            }
            IndexSpec::NewAxis => shape.push(Dim::ONE),
            IndexSpec::Mask { dims } => {
                let mask = operands.next().expect("one operand per mask");
                let covered = &x.shape[dim..dim + dims];
                check_mask(mask, covered, x, sizes)?;
                let max = numel(sizes, covered)?;
                shape.push(sizes.fresh("boolean mask indexing", Some(max)));
            }
            IndexSpec::Indices { .. } => {
                let indices = operands.next().expect("one operand per index tensor");
                require_dtype(indices, DType::I64, "an index tensor")?;
                shape.extend(&indices.shape);
            }
        }
        dim += consumed_dims(item);
    }
    shape.extend(&x.shape[dim..]);
    Ok(Meta::new(x.dtype, shape))
}

fn consumed_dims(item: &IndexSpec) -> usize {
    match item {
        IndexSpec::NewAxis => 0,
        IndexSpec::Mask { dims } => *dims,
        IndexSpec::Int(_) | IndexSpec::Slice { .. } | IndexSpec::Indices { .. } => 1,
    }
}

/// An integer index must satisfy `-n <= i < n`; negative values wrap when the op runs.
fn check_position(position: Dim, x: &Meta, dim: usize, sizes: &mut dyn Sizes) -> RuleResult<()> {
    let size = x.shape[dim];
    let message = format!(
        "index {} is out of range for dimension {dim} of {} (size {})",
        sizes.show(position),
        x.show(sizes),
        sizes.show(size)
    );
    let lowest = sizes.sub(Dim::ZERO, size)?;
    sizes.require(position, Cmp::Ge, lowest, &|| message.clone())?;
    sizes.require(position, Cmp::Lt, size, &|| message.clone())
}

fn check_mask(mask: &Meta, covered: &[Dim], x: &Meta, sizes: &mut dyn Sizes) -> RuleResult<()> {
    require_dtype(mask, DType::Bool, "a mask")?;
    let message = format!(
        "mask {} does not match the indexed dimensions of {}",
        mask.show(sizes),
        x.show(sizes)
    );
    if mask.ndim() != covered.len() {
        return Err(RuleError::shape(message));
    }
    for (a, b) in mask.shape.iter().zip(covered) {
        sizes.require(*a, Cmp::Eq, *b, &|| message.clone())?;
    }
    Ok(())
}

/// The length of `[start:stop:step]` over a dimension of size `n`, with Python's clamping.
/// When a bound's sign or position cannot be decided, the length is a fresh size computed at
/// run time rather than a guess.
fn slice_length(
    start: Option<Dim>,
    stop: Option<Dim>,
    step: i64,
    n: Dim,
    sizes: &mut dyn Sizes,
) -> RuleResult<Dim> {
    if let (Some(start), Some(stop), Some(n)) = (
        start.map_or(Some(0), Dim::known),
        stop.map_or(n.known(), Dim::known),
        n.known(),
    ) {
        return Ok(Dim::Known(python_slice_length(start, stop, step, n)));
    }
    let Some(start) = resolve_bound(start.unwrap_or(Dim::ZERO), n, sizes)? else {
        return Ok(sizes.fresh("slicing", Some(n)));
    };
    let Some(stop) = resolve_bound(stop.unwrap_or(n), n, sizes)? else {
        return Ok(sizes.fresh("slicing", Some(n)));
    };
    if sizes.decide(start, Cmp::Le, stop) != Some(true) {
        return Ok(sizes.fresh("slicing", Some(n)));
    }
    let span = sizes.sub(stop, start)?;
    let numerator = sizes.add(span, Dim::Known(step - 1))?;
    sizes.floor_div(numerator, Dim::Known(step))
}

/// A bound wrapped into `[0, n]` when the reasoner can tell where it lies; `None` otherwise.
fn resolve_bound(bound: Dim, n: Dim, sizes: &mut dyn Sizes) -> RuleResult<Option<Dim>> {
    let bound = match sizes.decide(bound, Cmp::Ge, Dim::ZERO) {
        Some(true) => bound,
        Some(false) => sizes.add(bound, n)?,
        None => return Ok(None),
    };
    let inside = sizes.decide(bound, Cmp::Ge, Dim::ZERO) == Some(true)
        && sizes.decide(bound, Cmp::Le, n) == Some(true);
    Ok(inside.then_some(bound))
}

/// Python's slice length for a positive step.
pub fn python_slice_length(start: i64, stop: i64, step: i64, n: i64) -> i64 {
    let clamp = |bound: i64| {
        if bound < 0 {
            bound.saturating_add(n).max(0)
        } else {
            bound.min(n)
        }
    };
    let (start, stop) = (clamp(start), clamp(stop));
    if stop > start {
        (stop - start + step - 1) / step
    } else {
        0
    }
}

fn require_dtype(meta: &Meta, dtype: DType, what: &str) -> RuleResult<()> {
    if meta.dtype == dtype {
        Ok(())
    } else {
        Err(RuleError::type_error(format!(
            "{what} must be a {dtype} tensor, got {}",
            meta.dtype
        )))
    }
}

/// narrow, index_select, gather and the data-dependent selections.
/// `index_select(dim, indices)`.
pub fn index_select(x: &Meta, indices: &Meta, dim: usize, sizes: &dyn Sizes) -> RuleResult<Meta> {
    require_dtype(indices, DType::I64, "the index of index_select()")?;
    if indices.ndim() > 1 {
        return Err(RuleError::shape(format!(
            "index_select() needs a 1-D index, got {}",
            indices.show(sizes)
        )));
    }
    let mut shape = x.shape.clone();
    shape[dim] = indices.shape.first().copied().unwrap_or(Dim::ONE);
    Ok(Meta::new(x.dtype, shape))
}

/// `nonzero(x)`: `[count, ndim]` with a fresh count.
pub fn nonzero(x: &Meta, sizes: &mut dyn Sizes) -> RuleResult<Meta> {
    let count = numel(sizes, &x.shape)?;
    let rows = sizes.fresh("nonzero()", Some(count));
    Ok(Meta::new(DType::I64, vec![rows, Dim::from(x.ndim())]))
}

/// `masked_select(x, mask)`: 1-D with a fresh count.
pub fn masked_select(x: &Meta, mask: &Meta, sizes: &mut dyn Sizes) -> RuleResult<Meta> {
    require_dtype(mask, DType::Bool, "the mask of masked_select()")?;
    let shape = broadcast(&x.shape, &mask.shape, sizes)?;
    let count = numel(sizes, &shape)?;
    Ok(Meta::new(
        x.dtype,
        vec![sizes.fresh("masked_select()", Some(count))],
    ))
}

/// `repeat_interleave(counts)`: the repeated indices, of a fresh length.
pub fn repeat_indices(counts: &Meta, sizes: &mut dyn Sizes) -> RuleResult<Meta> {
    require_counts(counts, sizes)?;
    Ok(Meta::new(
        DType::I64,
        vec![sizes.fresh("repeat_interleave()", None)],
    ))
}

/// `unique(x)`: 1-D with a fresh count.
pub fn unique(x: &Meta, sizes: &mut dyn Sizes) -> RuleResult<Meta> {
    let count = numel(sizes, &x.shape)?;
    Ok(Meta::new(
        x.dtype,
        vec![sizes.fresh("unique()", Some(count))],
    ))
}

/// `narrow(dim, start, length)`: the canonical (wrapped) start is written back.
pub fn narrow_rule(
    x: &Meta,
    dim: usize,
    start: &mut Dim,
    length: Dim,
    sizes: &mut dyn Sizes,
) -> RuleResult<Meta> {
    *start = narrow(x, dim, *start, length, sizes)?;
    let mut shape = x.shape.clone();
    shape[dim] = length;
    Ok(Meta::new(x.dtype, shape))
}

fn narrow(x: &Meta, dim: usize, start: Dim, length: Dim, sizes: &mut dyn Sizes) -> RuleResult<Dim> {
    let size = x.shape[dim];
    sizes.size_argument(length, "the length of narrow()")?;
    let start = match sizes.decide(start, Cmp::Ge, Dim::ZERO) {
        Some(true) => start,
        Some(false) => sizes.add(start, size)?,
        None => {
            let shown = sizes.show(start);
            sizes.assume_general(
                start,
                Cmp::Ge,
                Dim::ZERO,
                &|| format!("narrow() start {shown} must not be negative"),
                &|| format!("the narrow() start {shown} is not negative (eager code wraps it)"),
            )?;
            start
        }
    };
    let end = sizes.add(start, length)?;
    let message = format!(
        "narrow() of {} on dimension {dim}: start {} + length {} exceeds the size {}",
        x.show(sizes),
        sizes.show(start),
        sizes.show(length),
        sizes.show(size)
    );
    sizes.require(start, Cmp::Ge, Dim::ZERO, &|| message.clone())?;
    sizes.require(end, Cmp::Le, size, &|| message.clone())?;
    Ok(start)
}

pub fn gather(x: &Meta, indices: &Meta, dim: usize, sizes: &mut dyn Sizes) -> RuleResult<Meta> {
    require_dtype(indices, DType::I64, "the index of gather()")?;
    let message = format!(
        "gather() on dimension {dim} needs an index no larger than the input elsewhere: {} vs {}",
        indices.show(sizes),
        x.show(sizes)
    );
    if indices.ndim() != x.ndim() {
        return Err(RuleError::shape(message));
    }
    for d in (0..x.ndim()).filter(|d| *d != dim) {
        sizes.require(indices.shape[d], Cmp::Le, x.shape[d], &|| message.clone())?;
    }
    Ok(Meta::new(x.dtype, indices.shape.clone()))
}

fn require_counts(counts: &Meta, sizes: &dyn Sizes) -> RuleResult<()> {
    require_dtype(counts, DType::I64, "the counts of repeat_interleave()")?;
    if counts.ndim() > 1 {
        return Err(RuleError::shape(format!(
            "repeat_interleave() needs 1-D counts, got {}",
            counts.show(sizes)
        )));
    }
    Ok(())
}

pub fn repeat_interleave(
    x: &Meta,
    counts: &Meta,
    dim: Option<usize>,
    sizes: &mut dyn Sizes,
) -> RuleResult<Meta> {
    require_counts(counts, sizes)?;
    let target = match dim {
        Some(dim) => x.shape[dim],
        None => numel(sizes, &x.shape)?,
    };
    // One count repeats every element; a number of counts from data is taken to be one
    // per element, and an assert names that assumption.
    if let Some(&length) = counts.shape.first() {
        let single = sizes.decide(length, Cmp::Eq, Dim::ONE);
        let message = format!(
            "repeat_interleave() needs one count per element: {} counts for {} elements",
            sizes.show(length),
            sizes.show(target)
        );
        let assumption = format!(
            "one count per element, {} counts for {} elements (compiled code does not repeat \
             every element by a single count when the number of counts comes from data)",
            sizes.show(length),
            sizes.show(target)
        );
        match single {
            Some(true) => {}
            Some(false) => sizes.require(length, Cmp::Eq, target, &|| message.clone())?,
            None => sizes.assume_general(length, Cmp::Eq, target, &|| message.clone(), &|| {
                assumption.clone()
            })?,
        }
    }
    let repeated = sizes.fresh("repeat_interleave()", None);
    Ok(match dim {
        Some(dim) => {
            let mut shape = x.shape.clone();
            shape[dim] = repeated;
            Meta::new(x.dtype, shape)
        }
        None => Meta::new(x.dtype, vec![repeated]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::shape::Concrete;

    #[test]
    fn python_slice_lengths() {
        // (start, stop, step, n, expected)
        let cases = [
            (0, 5, 1, 5, 5),
            (1, 5, 2, 5, 2),
            (-2, 5, 1, 5, 2),
            (0, -1, 1, 5, 4),
            (3, 1, 1, 5, 0),
            (-10, 10, 1, 5, 5),
            (7, 9, 1, 5, 0),
            (0, 0, 1, 0, 0),
            (i64::MIN, i64::MAX, 3, 7, 3),
        ];
        for (start, stop, step, n, expected) in cases {
            assert_eq!(
                python_slice_length(start, stop, step, n),
                expected,
                "[{start}:{stop}:{step}] of {n}"
            );
        }
    }

    fn meta(dtype: DType, shape: &[i64]) -> Meta {
        Meta::new(dtype, shape.iter().map(|d| Dim::Known(*d)).collect())
    }

    #[test]
    fn index_items_consume_dimensions() {
        let x = meta(DType::F32, &[4, 5, 6]);
        let items = [
            IndexSpec::Int(Dim::Known(-1)),
            IndexSpec::NewAxis,
            IndexSpec::Slice {
                start: Some(Dim::Known(1)),
                stop: None,
                step: 2,
            },
        ];
        let out = index(&items, std::slice::from_ref(&x), &mut Concrete).unwrap();
        assert_eq!(out.shape, [Dim::ONE, Dim::Known(2), Dim::Known(6)]);
        let error = index(
            &[IndexSpec::Int(Dim::Known(4))],
            std::slice::from_ref(&x),
            &mut Concrete,
        );
        assert_eq!(
            error.unwrap_err().message,
            "index 4 is out of range for dimension 0 of f32[4, 5, 6] (size 4)"
        );
        let too_many = vec![IndexSpec::Int(Dim::ZERO); 4];
        assert!(index(&too_many, &[x], &mut Concrete).is_err());
    }

    #[test]
    fn narrow_wraps_negative_starts_and_checks_the_end() {
        let x = meta(DType::F32, &[10]);
        let mut start = Dim::Known(-3);
        narrow_rule(&x, 0, &mut start, Dim::Known(2), &mut Concrete).unwrap();
        assert_eq!(start, Dim::Known(7));
        let mut start = Dim::Known(8);
        assert!(narrow_rule(&x, 0, &mut start, Dim::Known(3), &mut Concrete).is_err());
    }
}
