//! Rules for reductions and scans.

use super::{Cmp, Dim, Meta, RuleError, RuleResult, Sizes, numel};
use crate::dtype::DType;
use crate::graph::op::ReduceOp;

/// The dtype a reduction produces.
pub fn reduce_dtype(op: ReduceOp, input: DType) -> RuleResult<DType> {
    Ok(match op {
        ReduceOp::Sum | ReduceOp::Prod if input != DType::F32 => DType::I64,
        ReduceOp::Mean if input != DType::F32 => {
            return Err(
                RuleError::type_error(format!("mean() needs an f32 tensor, got {input}"))
                    .with_help("convert first: x.float().mean()"),
            );
        }
        ReduceOp::Argmax | ReduceOp::Argmin => DType::I64,
        ReduceOp::All | ReduceOp::Any => DType::Bool,
        ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Mean | ReduceOp::Max | ReduceOp::Min => input,
    })
}

/// `dims: None` reduces every dimension. Dims are in range and distinct (checked by the caller).
pub fn reduce(
    op: ReduceOp,
    dims: Option<&[usize]>,
    keepdim: bool,
    input: &Meta,
    sizes: &mut dyn Sizes,
) -> RuleResult<Meta> {
    let dtype = reduce_dtype(op, input.dtype)?;
    let reduced = |d: usize| dims.is_none_or(|dims| dims.contains(&d));
    if op.needs_elements() {
        let extent: Vec<Dim> = (0..input.ndim())
            .filter(|d| reduced(*d))
            .map(|d| input.shape[d])
            .collect();
        let count = numel(sizes, &extent)?;
        let name = op.name();
        sizes.require(count, Cmp::Ge, Dim::ONE, &|| {
            format!("cannot take {name}() over an empty extent")
        })?;
    }
    let shape = match (dims, keepdim) {
        (None, false) => Vec::new(),
        _ => (0..input.ndim())
            .filter_map(|d| match (reduced(d), keepdim) {
                (false, _) => Some(input.shape[d]),
                (true, true) => Some(Dim::ONE),
                (true, false) => None,
            })
            .collect(),
    };
    Ok(Meta::new(dtype, shape))
}

/// `cumsum` keeps the shape; integers and bools accumulate in `i64`.
pub fn cumsum(input: &Meta) -> Meta {
    let dtype = if input.dtype == DType::F32 {
        DType::F32
    } else {
        DType::I64
    };
    Meta::new(dtype, input.shape.clone())
}

/// `diff` with n = 1: the dimension shrinks by one (an empty one stays empty).
pub fn diff(dim: usize, input: &Meta, sizes: &mut dyn Sizes) -> RuleResult<Meta> {
    let mut shape = input.shape.clone();
    let shorter = sizes.sub(shape[dim], Dim::ONE)?;
    shape[dim] = sizes.max(shorter, Dim::ZERO);
    Ok(Meta::new(input.dtype, shape))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::shape::Concrete;

    fn meta(dtype: DType, shape: &[i64]) -> Meta {
        Meta::new(dtype, shape.iter().map(|d| Dim::Known(*d)).collect())
    }

    type Case<'a> = (Option<&'a [usize]>, bool, &'a [i64]);

    #[test]
    fn reductions_drop_or_keep_dims() {
        let x = meta(DType::F32, &[2, 3, 4]);
        let cases: &[Case] = &[
            (None, false, &[]),
            (None, true, &[1, 1, 1]),
            (Some(&[1]), false, &[2, 4]),
            (Some(&[0, 2]), true, &[1, 3, 1]),
        ];
        for (dims, keepdim, expected) in cases {
            let out = reduce(ReduceOp::Sum, *dims, *keepdim, &x, &mut Concrete).unwrap();
            let shape: Vec<i64> = out.shape.iter().map(|d| d.known().unwrap()).collect();
            assert_eq!(shape, *expected, "{dims:?} keepdim={keepdim}");
        }
    }

    #[test]
    fn reduction_dtypes_and_empty_extents() {
        assert_eq!(reduce_dtype(ReduceOp::Sum, DType::Bool), Ok(DType::I64));
        assert_eq!(reduce_dtype(ReduceOp::Max, DType::Bool), Ok(DType::Bool));
        assert_eq!(reduce_dtype(ReduceOp::Argmin, DType::F32), Ok(DType::I64));
        assert!(reduce_dtype(ReduceOp::Mean, DType::I64).is_err());
        let empty = meta(DType::F32, &[0, 3]);
        assert!(reduce(ReduceOp::Max, None, false, &empty, &mut Concrete).is_err());
        assert!(reduce(ReduceOp::Max, Some(&[1]), false, &empty, &mut Concrete).is_ok());
        assert!(reduce(ReduceOp::Sum, None, false, &empty, &mut Concrete).is_ok());
    }

    #[test]
    fn diff_shrinks_by_one_but_not_below_zero() {
        let out = diff(0, &meta(DType::I64, &[5, 2]), &mut Concrete).unwrap();
        assert_eq!(out.shape, [Dim::Known(4), Dim::Known(2)]);
        let out = diff(0, &meta(DType::I64, &[0]), &mut Concrete).unwrap();
        assert_eq!(out.shape, [Dim::ZERO]);
    }
}
