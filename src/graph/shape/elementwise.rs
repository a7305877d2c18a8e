//! Rules for elementwise operations and matmul: broadcasting and PyTorch's dtype promotion.

use super::{Cmp, Dim, Meta, RuleError, RuleResult, Sizes, show_shape};
use crate::dtype::DType;
use crate::graph::op::{BinaryOp, UnaryOp};

/// NumPy broadcasting of two shapes (aligned at the right).
///
/// Where a size might be 1 but the reasoner cannot tell, the general path is taken: the sizes
/// are required equal, which becomes a runtime assert instead of a branch on data.
pub fn broadcast(a: &[Dim], b: &[Dim], sizes: &mut dyn Sizes) -> RuleResult<Vec<Dim>> {
    let rank = a.len().max(b.len());
    let mut shape = Vec::with_capacity(rank);
    for position in 0..rank {
        let x = (position + a.len()).checked_sub(rank).map(|i| a[i]);
        let y = (position + b.len()).checked_sub(rank).map(|i| b[i]);
        shape.push(match (x, y) {
            (Some(x), Some(y)) => broadcast_pair(x, y, a, b, sizes)?,
            (Some(d), None) | (None, Some(d)) => d,
            (None, None) => unreachable!("position is within the longer shape"),
        });
    }
    Ok(shape)
}

fn broadcast_pair(x: Dim, y: Dim, a: &[Dim], b: &[Dim], sizes: &mut dyn Sizes) -> RuleResult<Dim> {
    if x == y {
        return Ok(x);
    }
    if sizes.decide(x, Cmp::Eq, Dim::ONE) == Some(true) {
        return Ok(y);
    }
    if sizes.decide(y, Cmp::Eq, Dim::ONE) == Some(true) {
        return Ok(x);
    }
    let message = format!(
        "shapes {} and {} cannot broadcast: {} vs {}",
        show_shape(a, sizes),
        show_shape(b, sizes),
        sizes.show(x),
        sizes.show(y)
    );
    let assumption = format!(
        "sizes {} and {} are equal (compiled code does not broadcast a size from data as 1)",
        sizes.show(x),
        sizes.show(y)
    );
    sizes.assume_general(x, Cmp::Eq, y, &|| message.clone(), &|| assumption.clone())?;
    Ok(x)
}

/// The dtype a binary operation produces, or why its operands do not fit it.
pub fn binary_dtype(op: BinaryOp, a: DType, b: DType) -> RuleResult<DType> {
    let promoted = a.promote(b);
    Ok(match op {
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
            DType::Bool
        }
        BinaryOp::Div => DType::F32,
        BinaryOp::And | BinaryOp::Or => {
            if promoted == DType::F32 {
                let symbol = if op == BinaryOp::And { "&" } else { "|" };
                return Err(RuleError::type_error(format!(
                    "`{symbol}` needs bool or i64 operands, got {a} and {b}"
                ))
                .with_help("compare first to get a bool tensor, e.g. (x > 0) & (y > 0)"));
            }
            promoted
        }
        BinaryOp::Maximum | BinaryOp::Minimum => promoted,
        // Arithmetic on two bools counts in integers.
        BinaryOp::Add
        | BinaryOp::Sub
        | BinaryOp::Mul
        | BinaryOp::FloorDiv
        | BinaryOp::Rem
        | BinaryOp::Pow => {
            if promoted == DType::Bool {
                DType::I64
            } else {
                promoted
            }
        }
    })
}

pub fn binary(op: BinaryOp, a: &Meta, b: &Meta, sizes: &mut dyn Sizes) -> RuleResult<Meta> {
    let dtype = binary_dtype(op, a.dtype, b.dtype)?;
    Ok(Meta::new(dtype, broadcast(&a.shape, &b.shape, sizes)?))
}

/// The dtype a unary operation produces.
pub fn unary_dtype(op: UnaryOp, input: DType) -> RuleResult<DType> {
    Ok(match op {
        UnaryOp::Not | UnaryOp::IsNan | UnaryOp::IsInf => DType::Bool,
        UnaryOp::Neg if input == DType::Bool => {
            return Err(RuleError::type_error("cannot negate a bool tensor")
                .with_help("use `not x` for logical negation"));
        }
        UnaryOp::Exp | UnaryOp::Log | UnaryOp::Sqrt | UnaryOp::Sigmoid | UnaryOp::Tanh => {
            DType::F32
        }
        UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Relu => input,
    })
}

pub fn unary(op: UnaryOp, x: &Meta) -> RuleResult<Meta> {
    Ok(Meta::new(unary_dtype(op, x.dtype)?, x.shape.clone()))
}

/// `where(cond, a, b)`.
pub fn where_(inputs: &[Meta], sizes: &mut dyn Sizes) -> RuleResult<Meta> {
    let [condition, a, b] = inputs else {
        return Err(RuleError::value("where() takes a condition and two values"));
    };
    if condition.dtype != DType::Bool {
        return Err(RuleError::type_error(format!(
            "where() needs a bool condition, got {}",
            condition.dtype
        ))
        .with_help("compare to get a bool tensor, e.g. where(x > 0, x, 0.0)"));
    }
    let shape = broadcast(&condition.shape, &a.shape, sizes)?;
    let shape = broadcast(&shape, &b.shape, sizes)?;
    Ok(Meta::new(a.dtype.promote(b.dtype), shape))
}

/// `clamp(x, min, max)`: operands are the tensor, then the bounds present.
pub fn clamp(inputs: &[Meta], sizes: &mut dyn Sizes) -> RuleResult<Meta> {
    let x = &inputs[0];
    if x.dtype == DType::Bool {
        return Err(RuleError::type_error(
            "clamp() needs a numeric tensor, got bool",
        ));
    }
    let dtype = inputs[1..]
        .iter()
        .fold(x.dtype, |dtype, bound| dtype.promote(bound.dtype));
    // Tensor bounds broadcast with `x`, as PyTorch's do.
    let mut shape = x.shape.clone();
    for bound in &inputs[1..] {
        shape = broadcast(&shape, &bound.shape, sizes)?;
    }
    Ok(Meta::new(dtype, shape))
}

/// `a @ b` with PyTorch's rules for 1-D operands and broadcast batch dimensions.
pub fn matmul(a: &Meta, b: &Meta, sizes: &mut dyn Sizes) -> RuleResult<Meta> {
    let dtype = a.dtype.promote(b.dtype);
    if dtype == DType::Bool {
        return Err(
            RuleError::type_error("matmul needs numeric tensors, got bool")
                .with_help("convert with .long() or .float()"),
        );
    }
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(RuleError::shape(format!(
            "matmul needs tensors with at least one dimension, got {} @ {}",
            a.show(sizes),
            b.show(sizes)
        ))
        .with_help("use * to multiply by a scalar"));
    }
    let left = if a.ndim() == 1 {
        vec![Dim::ONE, a.shape[0]]
    } else {
        a.shape.clone()
    };
    let right = if b.ndim() == 1 {
        vec![b.shape[0], Dim::ONE]
    } else {
        b.shape.clone()
    };
    let (n, k) = (left[left.len() - 2], left[left.len() - 1]);
    let (k2, m) = (right[right.len() - 2], right[right.len() - 1]);
    let message = format!(
        "matmul inner sizes differ: {} @ {}",
        a.show(sizes),
        b.show(sizes)
    );
    sizes.require(k, Cmp::Eq, k2, &|| message.clone())?;
    let mut shape = broadcast(&left[..left.len() - 2], &right[..right.len() - 2], sizes)?;
    if a.ndim() > 1 {
        shape.push(n);
    }
    if b.ndim() > 1 {
        shape.push(m);
    }
    Ok(Meta::new(dtype, shape))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::shape::Concrete;

    fn meta(dtype: DType, shape: &[i64]) -> Meta {
        Meta::new(dtype, shape.iter().map(|d| Dim::Known(*d)).collect())
    }

    fn shape_of(result: RuleResult<Meta>) -> Vec<i64> {
        let meta = result.expect("the rule accepts these operands");
        meta.shape.iter().map(|d| d.known().unwrap()).collect()
    }

    #[test]
    fn broadcasting_follows_numpy() {
        let cases: &[(&[i64], &[i64], &[i64])] = &[
            (&[2, 3], &[3], &[2, 3]),
            (&[2, 1], &[1, 4], &[2, 4]),
            (&[], &[5], &[5]),
            (&[0, 3], &[1], &[0, 3]),
            (&[4, 1, 2], &[3, 1], &[4, 3, 2]),
        ];
        for (a, b, expected) in cases {
            let result = binary(
                BinaryOp::Add,
                &meta(DType::F32, a),
                &meta(DType::F32, b),
                &mut Concrete,
            );
            assert_eq!(shape_of(result), *expected, "{a:?} + {b:?}");
        }
        let error = binary(
            BinaryOp::Add,
            &meta(DType::F32, &[2, 3]),
            &meta(DType::F32, &[4]),
            &mut Concrete,
        )
        .unwrap_err();
        assert_eq!(
            error.message,
            "shapes [2, 3] and [4] cannot broadcast: 3 vs 4"
        );
    }

    #[test]
    fn promotion_per_operation() {
        use DType::{Bool, F32, I64};
        let cases = [
            (BinaryOp::Add, I64, F32, F32),
            (BinaryOp::Add, Bool, Bool, I64),
            (BinaryOp::Div, I64, I64, F32),
            (BinaryOp::Lt, F32, I64, Bool),
            (BinaryOp::And, Bool, Bool, Bool),
            (BinaryOp::Or, I64, Bool, I64),
            (BinaryOp::Maximum, Bool, Bool, Bool),
            (BinaryOp::FloorDiv, I64, I64, I64),
        ];
        for (op, a, b, expected) in cases {
            assert_eq!(binary_dtype(op, a, b), Ok(expected), "{op:?}({a}, {b})");
        }
        assert!(binary_dtype(BinaryOp::And, F32, Bool).is_err());
    }

    #[test]
    fn matmul_shapes() {
        let cases: &[(&[i64], &[i64], &[i64])] = &[
            (&[2, 3], &[3, 4], &[2, 4]),
            (&[3], &[3], &[]),
            (&[3], &[3, 4], &[4]),
            (&[2, 3], &[3], &[2]),
            (&[5, 2, 3], &[3, 4], &[5, 2, 4]),
            (&[1, 2, 3], &[6, 3, 4], &[6, 2, 4]),
        ];
        for (a, b, expected) in cases {
            let result = matmul(&meta(DType::F32, a), &meta(DType::F32, b), &mut Concrete);
            assert_eq!(shape_of(result), *expected, "{a:?} @ {b:?}");
        }
        let error = matmul(
            &meta(DType::F32, &[2, 3]),
            &meta(DType::F32, &[4, 5]),
            &mut Concrete,
        )
        .unwrap_err();
        assert_eq!(
            error.message,
            "matmul inner sizes differ: f32[2, 3] @ f32[4, 5]"
        );
    }
}
