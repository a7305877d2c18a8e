//! Rules for creation and for operations that rearrange elements: reshape, permute, squeeze,
//! unsqueeze, expand, cat, stack and split.

use super::{Cmp, Dim, Meta, RuleError, RuleResult, Sizes, numel, show_shape};
use crate::dtype::DType;
use crate::graph::op::Number;

/// `randn(shape)`.
pub fn randn(shape: &[Dim], sizes: &mut dyn Sizes) -> RuleResult<Meta> {
    for d in shape {
        sizes.size_argument(*d, "a size")?;
    }
    Ok(Meta::new(DType::F32, shape.to_vec()))
}

pub fn arange(start: Number, end: Number, step: Number, sizes: &mut dyn Sizes) -> RuleResult<Meta> {
    let zero_step = || RuleError::value("arange() step must not be zero");
    if let (Number::Int(start), Number::Int(end), Number::Int(step)) = (start, end, step) {
        let step = sizes.concrete(step, "the step of arange()")?;
        if step == 0 {
            return Err(zero_step());
        }
        // ceil(span / step) = floor((span + step - sign(step)) / step)
        let span = sizes.sub(end, start)?;
        let numerator = sizes.add(span, Dim::Known(step - step.signum()))?;
        let length = sizes.floor_div(numerator, Dim::Known(step))?;
        if sizes.decide(length, Cmp::Ge, Dim::ZERO) == Some(false) {
            let (start, end) = (sizes.show(start), sizes.show(end));
            return Err(wrong_direction(start, end, step.to_string()));
        }
        // Sizes from data are checked by the kernel.
        let length = sizes.max(length, Dim::ZERO);
        return Ok(Meta::new(DType::I64, vec![length]));
    }
    let value = |number: Number, sizes: &mut dyn Sizes| -> RuleResult<f64> {
        Ok(match number {
            Number::Int(d) => sizes.concrete(d, "a bound of arange()")? as f64,
            Number::Float(x) => x,
        })
    };
    let (start, end, step) = (
        value(start, sizes)?,
        value(end, sizes)?,
        value(step, sizes)?,
    );
    if step == 0.0 {
        return Err(zero_step());
    }
    let length = ((end - start) / step).ceil();
    if !length.is_finite() {
        return Err(RuleError::value("arange() bounds must be finite"));
    }
    if length < 0.0 {
        let shown = |x: f64| crate::dtype::Scalar::Float(x).to_string();
        return Err(wrong_direction(shown(start), shown(end), shown(step)));
    }
    Ok(Meta::new(
        DType::F32,
        vec![Dim::Known(length.max(0.0).min(i64::MAX as f64) as i64)],
    ))
}

/// A range whose step moves away from its end, refused as the kernel refuses it.
fn wrong_direction(start: String, end: String, step: String) -> RuleError {
    RuleError::value(arange_direction_message(start, end, step))
}

/// What refusing an `arange()` whose step moves away from its end says, in the shape rule
/// and in the kernels.
pub fn arange_direction_message(
    start: impl std::fmt::Display,
    end: impl std::fmt::Display,
    step: impl std::fmt::Display,
) -> String {
    format!("arange from {start} to {end} cannot advance by step {step}")
}

/// `squeeze(dims)`: keeps in `dims` only the dims that really are 1; the output shape.
pub fn squeeze(input: &Meta, dims: &mut Vec<usize>, sizes: &mut dyn Sizes) -> Vec<Dim> {
    dims.retain(|d| squeezable(input.shape[*d], sizes));
    (0..input.ndim())
        .filter(|d| !dims.contains(d))
        .map(|d| input.shape[d])
        .collect()
}

/// `unsqueeze(dim)`: the output shape.
pub fn unsqueeze(input: &Meta, dim: usize) -> Vec<Dim> {
    let mut shape = input.shape.clone();
    shape.insert(dim, Dim::ONE);
    shape
}

/// Resolves `-1` and checks the element count.
pub fn reshape(input: &Meta, target: &[Dim], sizes: &mut dyn Sizes) -> RuleResult<Vec<Dim>> {
    let total = numel(sizes, &input.shape)?;
    let mut inferred = None;
    let mut product = Dim::ONE;
    for (position, d) in target.iter().enumerate() {
        if is_minus_one(*d, sizes) {
            if inferred.replace(position).is_some() {
                return Err(RuleError::shape("only one size may be -1 in reshape()"));
            }
            continue;
        }
        let shown = sizes.show(*d);
        sizes.assume_general(
            *d,
            Cmp::Ge,
            Dim::ZERO,
            &|| format!("reshape() sizes must be non-negative or -1, got {shown}"),
            &|| format!("the reshape() size {shown} is not negative (not -1)"),
        )?;
        product = sizes.mul(product, *d)?;
    }
    let describe = |sizes: &dyn Sizes| {
        format!(
            "cannot reshape {} into {}",
            input.show(sizes),
            show_shape(target, sizes)
        )
    };
    let mut shape = target.to_vec();
    if let Some(position) = inferred {
        let message = describe(sizes);
        sizes.require(product, Cmp::Ne, Dim::ZERO, &|| {
            format!("{message}: -1 is ambiguous when the other sizes multiply to 0")
        })?;
        let remainder = sizes.modulo(total, product)?;
        sizes.require(remainder, Cmp::Eq, Dim::ZERO, &|| {
            format!("{message}: the element count is not divisible")
        })?;
        shape[position] = sizes.floor_div(total, product)?;
    } else {
        let message = format!(
            "{}: {} elements vs {}",
            describe(sizes),
            sizes.show(total),
            sizes.show(product)
        );
        sizes.require(product, Cmp::Eq, total, &|| message.clone())?;
    }
    Ok(shape)
}

/// Whether a reshape/expand size means "infer" (`-1`). A symbolic size is asked about; if the
/// reasoner cannot tell, it is taken as a real size and required non-negative by the caller.
fn is_minus_one(d: Dim, sizes: &mut dyn Sizes) -> bool {
    d == Dim::Known(-1) || sizes.decide(d, Cmp::Eq, Dim::Known(-1)) == Some(true)
}

pub fn permute(input: &Meta, dims: &[usize], sizes: &dyn Sizes) -> RuleResult<Vec<Dim>> {
    let mut seen = vec![false; input.ndim()];
    let valid = dims.len() == input.ndim()
        && dims
            .iter()
            .all(|d| *d < seen.len() && !std::mem::replace(&mut seen[*d], true));
    if !valid {
        return Err(RuleError::shape(format!(
            "permute() needs an ordering of all {} dimensions of {}, got {dims:?}",
            input.ndim(),
            input.show(sizes)
        )));
    }
    Ok(dims.iter().map(|d| input.shape[*d]).collect())
}

/// `squeeze(d)` removes `d` only if its size is 1. When that depends on data, the dimension is
/// kept and required not to be 1.
fn squeezable(d: Dim, sizes: &mut dyn Sizes) -> bool {
    match sizes.decide(d, Cmp::Eq, Dim::ONE) {
        Some(answer) => answer,
        None => {
            // A failure here is reported when the runtime assert fires.
            let shown = sizes.show(d);
            let _ = sizes.assume_general(
                d,
                Cmp::Ne,
                Dim::ONE,
                &|| "squeeze() assumed this size is not 1".to_string(),
                &|| format!("the squeezed size {shown} is not 1"),
            );
            false
        }
    }
}

pub fn expand(input: &Meta, target: &[Dim], sizes: &mut dyn Sizes) -> RuleResult<Vec<Dim>> {
    if target.len() < input.ndim() {
        return Err(RuleError::shape(format!(
            "cannot expand {} to {} dimensions",
            input.show(sizes),
            target.len()
        )));
    }
    let offset = target.len() - input.ndim();
    let mut shape = Vec::with_capacity(target.len());
    for (position, wanted) in target.iter().enumerate() {
        let source = position.checked_sub(offset).map(|i| input.shape[i]);
        shape.push(expand_dim(input, target, source, *wanted, sizes)?);
    }
    Ok(shape)
}

fn expand_dim(
    input: &Meta,
    target: &[Dim],
    source: Option<Dim>,
    wanted: Dim,
    sizes: &mut dyn Sizes,
) -> RuleResult<Dim> {
    let message = format!(
        "cannot expand {} to {}",
        input.show(sizes),
        show_shape(target, sizes)
    );
    if is_minus_one(wanted, sizes) {
        return source.ok_or_else(|| {
            RuleError::shape(format!("{message}: -1 is not allowed for a new dimension"))
        });
    }
    let shown = sizes.show(wanted);
    sizes.assume_general(
        wanted,
        Cmp::Ge,
        Dim::ZERO,
        &|| format!("{message}: sizes must be non-negative"),
        &|| format!("the expand() size {shown} is not negative (not -1)"),
    )?;
    match source {
        None => Ok(wanted),
        Some(source) if source == wanted => Ok(wanted),
        Some(source) if sizes.decide(source, Cmp::Eq, Dim::ONE) == Some(true) => Ok(wanted),
        Some(source) => {
            let (from, to) = (sizes.show(source), sizes.show(wanted));
            sizes.assume_general(
                source,
                Cmp::Eq,
                wanted,
                &|| format!("{message}: only size-1 dimensions can expand"),
                &|| {
                    format!(
                        "the expanded size {from} equals {to} (compiled code does not expand a size from data as 1)"
                    )
                },
            )?;
            Ok(source)
        }
    }
}

pub fn cat(inputs: &[Meta], dim: usize, sizes: &mut dyn Sizes) -> RuleResult<Meta> {
    let first = &inputs[0];
    let mut shape = first.shape.clone();
    let mut dtype = first.dtype;
    for other in &inputs[1..] {
        if other.ndim() != first.ndim() {
            return Err(RuleError::shape(format!(
                "cat() needs tensors of the same rank, got {} and {}",
                first.show(sizes),
                other.show(sizes)
            )));
        }
        for d in (0..first.ndim()).filter(|d| *d != dim) {
            let message = format!(
                "cat() along dimension {dim} needs equal sizes elsewhere: {} vs {}",
                first.show(sizes),
                other.show(sizes)
            );
            sizes.require(first.shape[d], Cmp::Eq, other.shape[d], &|| message.clone())?;
        }
        shape[dim] = sizes.add(shape[dim], other.shape[dim])?;
        dtype = dtype.promote(other.dtype);
    }
    Ok(Meta::new(dtype, shape))
}

pub fn stack(inputs: &[Meta], dim: usize, sizes: &mut dyn Sizes) -> RuleResult<Meta> {
    let first = &inputs[0];
    let mut dtype = first.dtype;
    for other in &inputs[1..] {
        let message = format!(
            "stack() needs tensors of the same shape, got {} and {}",
            first.show(sizes),
            other.show(sizes)
        );
        if other.ndim() != first.ndim() {
            return Err(RuleError::shape(message));
        }
        for (a, b) in first.shape.iter().zip(&other.shape) {
            sizes.require(*a, Cmp::Eq, *b, &|| message.clone())?;
        }
        dtype = dtype.promote(other.dtype);
    }
    let mut shape = first.shape.clone();
    shape.insert(dim, Dim::from(inputs.len()));
    Ok(Meta::new(dtype, shape))
}

pub fn split(
    input: &Meta,
    parts: &[Dim],
    dim: usize,
    sizes: &mut dyn Sizes,
) -> RuleResult<Vec<Meta>> {
    let mut total = Dim::ZERO;
    for part in parts {
        sizes.size_argument(*part, "a split size")?;
        total = sizes.add(total, *part)?;
    }
    let message = format!(
        "split sizes {} sum to {} but dimension {dim} of {} has size {}",
        show_shape(parts, sizes),
        sizes.show(total),
        input.show(sizes),
        sizes.show(input.shape[dim])
    );
    sizes.require(total, Cmp::Eq, input.shape[dim], &|| message.clone())?;
    Ok(parts
        .iter()
        .map(|part| {
            let mut shape = input.shape.clone();
            shape[dim] = *part;
            Meta::new(input.dtype, shape)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::op::Op;
    use crate::graph::shape::{Concrete, infer};

    fn dims(values: &[i64]) -> Vec<Dim> {
        values.iter().map(|d| Dim::Known(*d)).collect()
    }

    fn run(mut op: Op, inputs: &[&[i64]]) -> Result<(Op, Vec<Vec<i64>>), String> {
        let metas: Vec<Meta> = inputs
            .iter()
            .map(|shape| Meta::new(DType::F32, dims(shape)))
            .collect();
        let outputs = infer(&mut op, &metas, &mut Concrete).map_err(|error| error.message)?;
        let shapes = outputs
            .iter()
            .map(|meta| meta.shape.iter().map(|d| d.known().unwrap()).collect())
            .collect();
        Ok((op, shapes))
    }

    #[test]
    fn reshape_resolves_minus_one() {
        let (op, shapes) = run(
            Op::Reshape {
                shape: dims(&[-1, 3]),
            },
            &[&[2, 6]],
        )
        .unwrap();
        assert_eq!(shapes, [[4, 3]]);
        assert_eq!(
            op,
            Op::Reshape {
                shape: dims(&[4, 3])
            }
        );
        assert_eq!(
            run(
                Op::Reshape {
                    shape: dims(&[4, 2])
                },
                &[&[2, 3]]
            )
            .unwrap_err(),
            "cannot reshape f32[2, 3] into [4, 2]: 6 elements vs 8"
        );
        assert!(
            run(
                Op::Reshape {
                    shape: dims(&[-1, -1])
                },
                &[&[4]]
            )
            .is_err()
        );
        assert!(
            run(
                Op::Reshape {
                    shape: dims(&[0, -1])
                },
                &[&[0]]
            )
            .is_err()
        );
        assert!(
            run(
                Op::Reshape {
                    shape: dims(&[-1, 5])
                },
                &[&[6]]
            )
            .is_err()
        );
    }

    #[test]
    fn squeeze_keeps_dims_that_are_not_one() {
        let (op, shapes) = run(
            Op::Squeeze {
                dims: vec![0, 1, 2],
            },
            &[&[1, 3, 1]],
        )
        .unwrap();
        assert_eq!(shapes, [[3]]);
        assert_eq!(op, Op::Squeeze { dims: vec![0, 2] });
    }

    #[test]
    fn expand_cat_stack_split() {
        let (_, shapes) = run(
            Op::Expand {
                shape: dims(&[2, -1, 4]),
            },
            &[&[3, 1]],
        )
        .unwrap();
        assert_eq!(shapes, [[2, 3, 4]]);
        assert!(
            run(
                Op::Expand {
                    shape: dims(&[2, 4])
                },
                &[&[3, 2]]
            )
            .is_err()
        );
        let (_, shapes) = run(Op::Cat { dim: 1 }, &[&[2, 3], &[2, 5]]).unwrap();
        assert_eq!(shapes, [[2, 8]]);
        assert!(run(Op::Cat { dim: 1 }, &[&[2, 3], &[3, 5]]).is_err());
        let (_, shapes) = run(Op::Stack { dim: 0 }, &[&[2], &[2], &[2]]).unwrap();
        assert_eq!(shapes, [[3, 2]]);
        let (_, shapes) = run(
            Op::Split {
                sizes: dims(&[1, 4]),
                dim: 0,
            },
            &[&[5, 2]],
        )
        .unwrap();
        assert_eq!(shapes, [[1, 2], [4, 2]]);
        assert_eq!(
            run(
                Op::Split {
                    sizes: dims(&[1, 3]),
                    dim: 0
                },
                &[&[5, 2]]
            )
            .unwrap_err(),
            "split sizes [1, 3] sum to 4 but dimension 0 of f32[5, 2] has size 5"
        );
    }

    #[test]
    fn arange_lengths() {
        let int = |v: i64| Number::Int(Dim::Known(v));
        let cases = [
            (int(0), int(5), int(1), 5),
            (int(0), int(5), int(2), 3),
            (int(5), int(0), int(-2), 3),
            (int(3), int(3), int(1), 0),
            (
                Number::Float(0.0),
                Number::Float(1.0),
                Number::Float(0.25),
                4,
            ),
        ];
        for (start, end, step, expected) in cases {
            let (_, shapes) = run(Op::Arange { start, end, step }, &[]).unwrap();
            assert_eq!(shapes, [[expected]], "{start:?} {end:?} {step:?}");
        }
        // A zero step, or one that moves away from the end, as the kernel refuses them.
        let refused = [
            (int(0), int(1), int(0)),
            (int(5), int(0), int(1)),
            (Number::Float(1.0), Number::Float(-3.0), Number::Float(0.5)),
        ];
        for (start, end, step) in refused {
            let result = run(Op::Arange { start, end, step }, &[]);
            assert!(result.is_err(), "{start:?} {end:?} {step:?}");
        }
    }
}
