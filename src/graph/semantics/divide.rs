//! Integer `//` and `%` of many values by one divisor (`i // 7`, `k % n`), the common case of
//! both in index arithmetic: the table's `//` and `%` over a run of values, for kernels that
//! divide many values at once.
//!
//! A hardware division of 64-bit integers takes one element at a time and tens of cycles. A
//! run of values that all lie within 2^50 of zero, divided by a divisor within 2^53 (so both
//! are exact in `f64`), is instead divided in `f64`, in vector lanes. The rounded quotient
//! lies between the true quotient's floor and one more, and so does that quotient rounded to
//! the nearest integer, which adding 1.5 x 2^52 does, leaving the integer in the low bits of
//! the sum (no conversion from `f64`, which does not vectorise here: Rust's saturating `as`
//! became a compare and a scalar conversion per element). The remainder computed from that
//! quotient in integers has the divisor's sign (or is zero) exactly when the quotient is the
//! floor; otherwise one step back gives Python's results. Runs with a larger value take the
//! per-element functions [`floor_div_i64`] and [`remainder_i64`]; every result is the one
//! they give (the tests check both paths against them).

use super::{BinaryOp, floor_div_i64, remainder_i64};

/// Values below `2^SMALL` in magnitude take the `f64` path: their quotients, below 2^50,
/// stay clear of 2^51, where the rounding by [`ROUNDER`] stops giving the integer in the
/// low bits.
const SMALL: u32 = 50;

/// Divisors below `2^EXACT` in magnitude are exact in `f64`.
const EXACT: u32 = 53;

/// 1.5 x 2^52: a double in `[2^52, 2^53)` has a spacing of one, so adding this to a value
/// below 2^51 in magnitude rounds it to the nearest integer, which the low bits then hold.
const ROUNDER: f64 = 6_755_399_441_055_744.0;

/// Values tested together for the `f64` path: small enough that one large value sends few
/// others to the slow path, large enough that the test is a small part of the run.
const RUN: usize = 256;

/// Python's `//` (`REMAINDER` false) or `%` (true) of each of `values` by `divisor`, into `out`
/// (whose length should be that of `values`; the shorter decides). `None`, and `out` untouched,
/// when `divisor` is zero: the caller reports the division by zero.
pub fn divide_into<const REMAINDER: bool>(
    values: &[i64],
    divisor: i64,
    out: &mut [i64],
) -> Option<()> {
    if divisor == 0 {
        return None;
    }
    let exact_divisor = divisor.unsigned_abs() >> EXACT == 0;
    for (values, out) in values.chunks(RUN).zip(out.chunks_mut(RUN)) {
        let widest = values.iter().fold(0, |bits, &x| bits | x.unsigned_abs());
        if exact_divisor && widest >> SMALL == 0 {
            in_floats::<REMAINDER>(values, divisor, out);
        } else {
            one_by_one::<REMAINDER>(values, divisor, out);
        }
    }
    Some(())
}

/// [`divide_into`] for `op`, `%` or `//`; `None` for another operation or a zero divisor.
pub fn divide_by_one(op: BinaryOp, values: &[i64], divisor: i64, out: &mut [i64]) -> Option<()> {
    match op {
        BinaryOp::Rem => divide_into::<true>(values, divisor, out),
        BinaryOp::FloorDiv => divide_into::<false>(values, divisor, out),
        _ => None,
    }
}

/// [`divide_into`] for values below `2^SMALL` and a divisor below `2^EXACT` in magnitude.
fn in_floats<const REMAINDER: bool>(values: &[i64], divisor: i64, out: &mut [i64]) {
    let by = divisor as f64;
    let zero = ROUNDER.to_bits() as i64;
    for (out, &x) in out.iter_mut().zip(values) {
        let quotient = ((x as f64 / by + ROUNDER).to_bits() as i64).wrapping_sub(zero);
        // |quotient| is at most |x / divisor| + 1, so the product stays within 2^54.
        let remainder = x.wrapping_sub(quotient.wrapping_mul(divisor));
        // The quotient is the floor or one more; one more leaves a remainder of the other
        // sign than the divisor's.
        let over = remainder != 0 && (remainder < 0) != (divisor < 0);
        *out = match (REMAINDER, over) {
            (true, true) => remainder.wrapping_add(divisor),
            (true, false) => remainder,
            (false, true) => quotient.wrapping_sub(1),
            (false, false) => quotient,
        };
    }
}

/// [`divide_into`] by the per-element functions (the divisor is not zero).
fn one_by_one<const REMAINDER: bool>(values: &[i64], divisor: i64, out: &mut [i64]) {
    for (out, &x) in out.iter_mut().zip(values) {
        let result = if REMAINDER {
            remainder_i64(x, divisor)
        } else {
            floor_div_i64(x, divisor)
        };
        *out = result.unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Both operations by `divisor` against the per-element functions.
    fn agrees(values: &[i64], divisor: i64) {
        let mut quotients = vec![0; values.len()];
        let mut remainders = vec![0; values.len()];
        assert_eq!(
            divide_into::<false>(values, divisor, &mut quotients),
            Some(())
        );
        assert_eq!(
            divide_into::<true>(values, divisor, &mut remainders),
            Some(())
        );
        for ((&x, &quotient), &remainder) in values.iter().zip(&quotients).zip(&remainders) {
            assert_eq!(
                Some(quotient),
                floor_div_i64(x, divisor),
                "{x} // {divisor}"
            );
            assert_eq!(
                Some(remainder),
                remainder_i64(x, divisor),
                "{x} % {divisor}"
            );
        }
    }

    const LIMIT: i64 = 1 << SMALL;
    const DIVISORS: i64 = 1 << EXACT;

    #[test]
    fn edges_of_the_float_path_agree_with_the_elements() {
        let near: Vec<i64> = (-40i64..=40)
            .flat_map(|i| {
                [
                    i,
                    LIMIT - 1 - i.abs(),
                    -(LIMIT - 1 - i.abs()),
                    i * 1_000_003,
                ]
            })
            .collect();
        let divisors = [
            1,
            -1,
            2,
            -2,
            3,
            7,
            -7,
            10,
            1 << 20,
            LIMIT - 1,
            -(LIMIT - 1),
            LIMIT - 3,
            LIMIT,
            -LIMIT,
            DIVISORS - 1,
            -(DIVISORS - 1),
            DIVISORS,
            i64::MAX,
            i64::MIN,
        ];
        for divisor in divisors {
            agrees(&near, divisor);
        }
        // A run with one value past the float path, and the runs beside it.
        let mut mixed = near.clone();
        mixed.extend([i64::MIN, i64::MAX, LIMIT, -LIMIT, i64::MIN + 1]);
        mixed.extend(near.iter().rev());
        for divisor in divisors {
            agrees(&mixed, divisor);
        }
    }

    #[test]
    fn a_zero_divisor_leaves_the_output_alone() {
        let mut out = [5, 5];
        assert_eq!(divide_into::<true>(&[1, 2], 0, &mut out), None);
        assert_eq!(divide_into::<false>(&[1, 2], 0, &mut out), None);
        assert_eq!(out, [5, 5]);
    }

    proptest! {
        #[test]
        fn quotients_and_remainders_are_python_s(
            values in prop::collection::vec(
                prop_oneof![any::<i64>(), -LIMIT..LIMIT, -1000i64..1000],
                0..600,
            ),
            divisor in prop_oneof![any::<i64>(), -DIVISORS..DIVISORS, -100i64..100],
        ) {
            prop_assume!(divisor != 0);
            agrees(&values, divisor);
        }
    }
}
