//! Comparisons of a float read from data with a number, exact in compiled code as in eager
//! code.

use std::cmp::Ordering;

use crate::dtype::DType;
use crate::eval::trace::comparison;
use crate::eval::value::Value;
use crate::graph::shape::Cmp;
use crate::syntax::ast::BinaryOp;

/// A float read from data (an `f32` host value) compared with a number: eager code compares
/// the two exactly (the float widened to `f64`), while the graph compares in `f32`, where
/// the number would be rounded (`1e30` becomes the float just above it, so a total of
/// `1e30` read from data would not be `> 1e30` there). The number is replaced by the `f32`
/// that gives every `f32` the exact answer: for `t > c` the largest `f32` not above `c`, for
/// `t < c` the smallest not below it, and for `t == c` with `c` no `f32` a NaN (never
/// equal). Other operands are left as they are.
pub(super) fn exact_float_comparison(op: BinaryOp, a: Value, b: Value) -> (Value, Value) {
    let float = |value: &Value| matches!(value, Value::RuntimeScalar(t) if t.dtype() == DType::F32);
    let number = |value: &Value| match value {
        Value::Float(x) => Some(ExactNumber::Float(*x)),
        Value::Int(i) => Some(ExactNumber::Int(*i)),
        _ => None,
    };
    let Some(cmp) = comparison(op) else {
        return (a, b);
    };
    // `c op t` asks what `t op' c` asks, with the comparison flipped.
    let (cmp, constant, on_left) = match (&a, &b) {
        (t, c) if float(t) => match number(c) {
            Some(c) => (cmp, c, false),
            None => return (a, b),
        },
        (c, t) if float(t) => match number(c) {
            Some(c) => (cmp.flipped(), c, true),
            None => return (a, b),
        },
        _ => return (a, b),
    };
    let replacement = match cmp {
        Cmp::Gt | Cmp::Le => constant.below(),
        Cmp::Lt | Cmp::Ge => constant.above(),
        Cmp::Eq | Cmp::Ne => constant.exact().unwrap_or(f32::NAN),
    };
    let replacement = Value::Float(f64::from(replacement));
    if on_left {
        (replacement, b)
    } else {
        (a, replacement)
    }
}

/// A number compared exactly with `f32` values.
#[derive(Clone, Copy, Debug)]
enum ExactNumber {
    Float(f64),
    Int(i64),
}

impl ExactNumber {
    /// How the nearest `f32` compares with the number (`None` for a NaN).
    fn nearest(self) -> (f32, Option<Ordering>) {
        match self {
            ExactNumber::Float(x) => {
                let nearest = x as f32;
                (nearest, f64::from(nearest).partial_cmp(&x))
            }
            ExactNumber::Int(i) => {
                // The nearest `f32` of an `i64` is a finite integer that fits an `i128`.
                let nearest = i as f32;
                (nearest, Some((nearest as i128).cmp(&i128::from(i))))
            }
        }
    }

    /// The largest `f32` not above the number (a NaN for a NaN).
    fn below(self) -> f32 {
        match self.nearest() {
            (nearest, Some(Ordering::Greater)) => nearest.next_down(),
            (nearest, _) => nearest,
        }
    }

    /// The smallest `f32` not below the number (a NaN for a NaN).
    fn above(self) -> f32 {
        match self.nearest() {
            (nearest, Some(Ordering::Less)) => nearest.next_up(),
            (nearest, _) => nearest,
        }
    }

    /// The number as an `f32`, when it is one.
    fn exact(self) -> Option<f32> {
        match self.nearest() {
            (nearest, Some(Ordering::Equal)) => Some(nearest),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use proptest::prelude::*;

    use super::ExactNumber;

    /// How `t` compares with the number, exactly (`None` when either is a NaN).
    fn exact_order(t: f32, number: ExactNumber) -> Option<Ordering> {
        match number {
            ExactNumber::Float(c) => f64::from(t).partial_cmp(&c),
            ExactNumber::Int(_) if t.is_nan() => None,
            ExactNumber::Int(_) if t.is_infinite() => Some(if t > 0.0 {
                Ordering::Greater
            } else {
                Ordering::Less
            }),
            // A finite `f32` beyond the range of `i128` saturates, still beyond every `i64`.
            ExactNumber::Int(i) => Some((f64::from(t) as i128).cmp(&i128::from(i))),
        }
    }

    /// Every `f32` compares with the replacement as it compares with the number exactly.
    fn agrees(t: f32, number: ExactNumber) -> bool {
        let order = exact_order(t, number);
        let (greater, less, equal) = (
            order == Some(Ordering::Greater),
            order == Some(Ordering::Less),
            order == Some(Ordering::Equal),
        );
        (t > number.below()) == greater
            && (t <= number.below()) == (less || equal)
            && (t < number.above()) == less
            && (t >= number.above()) == (greater || equal)
            && (t == number.exact().unwrap_or(f32::NAN)) == equal
    }

    #[test]
    fn edges_compare_exactly() {
        let numbers = [
            ExactNumber::Float(1e30),
            ExactNumber::Float(0.1),
            ExactNumber::Float(1e39),
            ExactNumber::Float(-1e39),
            ExactNumber::Float(f64::INFINITY),
            ExactNumber::Float(f64::NAN),
            ExactNumber::Float(1e-50),
            ExactNumber::Int(16_777_217),
            ExactNumber::Int(i64::MAX),
            ExactNumber::Int(i64::MIN),
        ];
        let values = [
            0.0,
            1e30,
            0.1,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            16_777_216.0,
            16_777_218.0,
            9.223_372e18,
            f32::from_bits(1),
        ];
        for number in numbers {
            for t in values {
                assert!(agrees(t, number), "{t} against {number:?}");
            }
        }
    }

    proptest! {
        #[test]
        fn floats_compare_exactly(bits in any::<u32>(), c in any::<f64>(), near in any::<bool>()) {
            let t = f32::from_bits(bits);
            // Half the numbers lie next to `t`, where rounding decides.
            let c = if near { f64::from(t) + c.signum() * f64::from(t).abs() * 1e-9 } else { c };
            prop_assert!(agrees(t, ExactNumber::Float(c)), "{t} against {c}");
        }

        #[test]
        fn ints_compare_exactly(bits in any::<u32>(), i in any::<i64>()) {
            let t = f32::from_bits(bits);
            prop_assert!(agrees(t, ExactNumber::Int(i)), "{t} against {i}");
        }
    }
}
