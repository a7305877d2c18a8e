//! Rules for sorting: `sort` keeps the shape; `topk` keeps every size but its dim's, which
//! becomes `k`. Both give the values (the input's dtype) and their `i64` positions.

use super::{Cmp, Dim, Meta, RuleResult, Sizes};
use crate::dtype::DType;

/// `sort` along any dim: values and indices of the input's shape.
pub fn sort(input: &Meta) -> Vec<Meta> {
    vec![input.clone(), Meta::new(DType::I64, input.shape.clone())]
}

/// `topk(k, dim)`: `k` must lie in `0..=size`; while tracing a `k` that may be too large
/// becomes a runtime assert (an eager run reports the same error).
pub fn topk(input: &Meta, k: Dim, dim: usize, sizes: &mut dyn Sizes) -> RuleResult<Vec<Meta>> {
    sizes.size_argument(k, "topk()'s k")?;
    let size = input.shape[dim];
    let message = format!(
        "topk() needs k <= {}, the size of dimension {dim}, got k = {}",
        sizes.show(size),
        sizes.show(k)
    );
    sizes.require(k, Cmp::Le, size, &|| message.clone())?;
    let mut shape = input.shape.clone();
    shape[dim] = k;
    Ok(vec![
        Meta::new(input.dtype, shape.clone()),
        Meta::new(DType::I64, shape),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::shape::Concrete;

    fn meta(dtype: DType, shape: &[i64]) -> Meta {
        Meta::new(dtype, shape.iter().map(|d| Dim::Known(*d)).collect())
    }

    #[test]
    fn sort_keeps_the_shape_and_topk_replaces_one_size() {
        let x = meta(DType::F32, &[4, 5]);
        assert_eq!(sort(&x), [x.clone(), meta(DType::I64, &[4, 5])]);
        let out = topk(&x, Dim::Known(2), 1, &mut Concrete).unwrap();
        assert_eq!(out, [meta(DType::F32, &[4, 2]), meta(DType::I64, &[4, 2])]);
        let all = topk(&x, Dim::Known(4), 0, &mut Concrete).unwrap();
        assert_eq!(all[0], x);
        assert!(topk(&x, Dim::Known(5), 0, &mut Concrete).is_err());
        assert!(topk(&x, Dim::Known(-1), 0, &mut Concrete).is_err());
        let empty = meta(DType::I64, &[0]);
        assert_eq!(topk(&empty, Dim::ZERO, 0, &mut Concrete).unwrap()[0], empty);
    }
}
