//! Value ranges `[lo, hi]` with infinite ends, and the interval arithmetic of every operation.
//!
//! A lower end equal to `i64::MIN` is read as −∞ and an upper end equal to `i64::MAX` as +∞
//! (an upper end of `i64::MIN` or a lower end of `i64::MAX` is that finite value). Arithmetic
//! is done in `i128` with a far larger infinity and clamped back, so a bound that leaves
//! `i64` becomes infinite: ranges only ever widen on overflow, which keeps them sound.

use std::fmt;
use std::ops::{Add, Mul, Neg};

/// −∞ as a range end.
pub const NEG_INF: i64 = i64::MIN;
/// +∞ as a range end.
pub const POS_INF: i64 = i64::MAX;

/// Infinity while computing in `i128`: far above any product of two `i64` values.
const INF: i128 = 1 << 126;

/// A closed integer interval, possibly unbounded on either side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Range {
    /// Lower end; [`NEG_INF`] when unbounded.
    pub lo: i64,
    /// Upper end; [`POS_INF`] when unbounded.
    pub hi: i64,
}

impl Range {
    /// Every integer.
    pub const ALL: Range = Range::new(NEG_INF, POS_INF);
    /// The range of a boolean read as 0 or 1.
    pub const BOOL: Range = Range::new(0, 1);
    /// `[0, ∞]`: what a size may be.
    pub const NONNEGATIVE: Range = Range::new(0, POS_INF);
    /// `[2, ∞]`: a dynamic size after 0/1 specialisation.
    pub const DYNAMIC_SIZE: Range = Range::new(2, POS_INF);

    /// `[lo, hi]`.
    pub const fn new(lo: i64, hi: i64) -> Range {
        Range { lo, hi }
    }

    /// `[value, value]`.
    pub const fn exactly(value: i64) -> Range {
        Range::new(value, value)
    }

    /// `[lo, ∞]`.
    pub const fn at_least(lo: i64) -> Range {
        Range::new(lo, POS_INF)
    }

    /// `[−∞, hi]`.
    pub const fn at_most(hi: i64) -> Range {
        Range::new(NEG_INF, hi)
    }

    /// Whether `value` lies in the range.
    pub fn contains(self, value: i64) -> bool {
        self.lo <= value && value <= self.hi
    }

    /// Whether no integer lies in the range (facts contradict each other).
    pub fn is_empty(self) -> bool {
        self.lo > self.hi
    }

    /// The only value of a one-point range.
    pub fn constant(self) -> Option<i64> {
        (self.lo == self.hi && self.lo != NEG_INF && self.hi != POS_INF).then_some(self.lo)
    }

    /// The finite lower end.
    pub fn finite_lo(self) -> Option<i64> {
        (self.lo != NEG_INF).then_some(self.lo)
    }

    /// The finite upper end.
    pub fn finite_hi(self) -> Option<i64> {
        (self.hi != POS_INF).then_some(self.hi)
    }

    /// The lower end in `i128`, −∞ mapped to −[`INF`].
    fn wide_lo(self) -> i128 {
        if self.lo == NEG_INF {
            -INF
        } else {
            i128::from(self.lo)
        }
    }

    /// The upper end in `i128`, +∞ mapped to [`INF`].
    fn wide_hi(self) -> i128 {
        if self.hi == POS_INF {
            INF
        } else {
            i128::from(self.hi)
        }
    }

    /// Values in both ranges.
    #[must_use]
    pub fn intersect(self, other: Range) -> Range {
        Range::new(self.lo.max(other.lo), self.hi.min(other.hi))
    }

    /// The smallest range holding both.
    #[must_use]
    pub fn hull(self, other: Range) -> Range {
        Range::new(self.lo.min(other.lo), self.hi.max(other.hi))
    }

    /// `c * a` for a constant `c`.
    #[must_use]
    pub fn scale(self, factor: i64) -> Range {
        self * Range::exactly(factor)
    }

    /// `a // b` (floor division); unbounded when `b` may be 0 or change sign.
    #[must_use]
    pub fn floor_div(self, divisor: Range) -> Range {
        if divisor.lo > 0 || divisor.hi < 0 {
            corners(self, divisor, floor_div_wide)
        } else {
            Range::ALL
        }
    }

    /// `a % b` (Python modulo: the result has the sign of `b`).
    #[must_use]
    pub fn modulo(self, divisor: Range) -> Range {
        if divisor.lo > 0 && self.lo >= 0 {
            let below = narrow(divisor.wide_hi() - 1);
            return Range::new(0, self.hi.min(below));
        }
        if divisor.hi < 0 && self.hi <= 0 {
            let above = narrow(divisor.wide_lo() + 1);
            return Range::new(self.lo.max(above), 0);
        }
        let lo = if divisor.lo < 0 {
            narrow(divisor.wide_lo() + 1)
        } else {
            0
        };
        let hi = if divisor.hi > 0 {
            narrow(divisor.wide_hi() - 1)
        } else {
            0
        };
        Range::new(lo, hi)
    }

    /// `min(a, b)`.
    #[must_use]
    pub fn min(self, other: Range) -> Range {
        Range::new(self.lo.min(other.lo), self.hi.min(other.hi))
    }

    /// `max(a, b)`.
    #[must_use]
    pub fn max(self, other: Range) -> Range {
        Range::new(self.lo.max(other.lo), self.hi.max(other.hi))
    }

    /// `a ** exponent`.
    #[must_use]
    pub fn pow(self, exponent: u32) -> Range {
        let power = |bound: i128| narrow(bound.saturating_pow(exponent));
        let (lo, hi) = (self.wide_lo(), self.wide_hi());
        if exponent == 0 {
            return Range::exactly(1);
        }
        if exponent % 2 == 1 || self.lo >= 0 {
            return Range::new(power(lo), power(hi));
        }
        if self.hi <= 0 {
            return Range::new(power(hi), power(lo));
        }
        Range::new(0, power(lo).max(power(hi)))
    }
}

/// `a + b` for `a` in one range and `b` in the other.
impl Add for Range {
    type Output = Range;

    fn add(self, other: Range) -> Range {
        Range::new(
            narrow(self.wide_lo().saturating_add(other.wide_lo())),
            narrow(self.wide_hi().saturating_add(other.wide_hi())),
        )
    }
}

/// `-a`.
impl Neg for Range {
    type Output = Range;

    fn neg(self) -> Range {
        Range::new(narrow(-self.wide_hi()), narrow(-self.wide_lo()))
    }
}

/// `a * b`.
impl Mul for Range {
    type Output = Range;

    fn mul(self, other: Range) -> Range {
        corners(self, other, i128::saturating_mul)
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.finite_lo() {
            Some(lo) => write!(f, "[{lo}, ")?,
            None => write!(f, "[-inf, ")?,
        }
        match self.finite_hi() {
            Some(hi) => write!(f, "{hi}]"),
            None => write!(f, "inf]"),
        }
    }
}

/// Back to a range end: anything outside `i64` becomes infinite.
pub(super) fn narrow(value: i128) -> i64 {
    if value >= i128::from(POS_INF) {
        POS_INF
    } else if value <= i128::from(NEG_INF) {
        NEG_INF
    } else {
        value as i64
    }
}

/// Python's floor division in `i128` (the divisor is never 0 here).
fn floor_div_wide(a: i128, b: i128) -> i128 {
    let quotient = a / b;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        quotient - 1
    } else {
        quotient
    }
}

/// The hull of `op` over the four corners: exact for operations monotonic in each argument.
fn corners(a: Range, b: Range, op: impl Fn(i128, i128) -> i128) -> Range {
    let values = [
        op(a.wide_lo(), b.wide_lo()),
        op(a.wide_lo(), b.wide_hi()),
        op(a.wide_hi(), b.wide_lo()),
        op(a.wide_hi(), b.wide_hi()),
    ];
    let lo = values.iter().copied().min().unwrap_or(-INF);
    let hi = values.iter().copied().max().unwrap_or(INF);
    Range::new(narrow(lo), narrow(hi))
}
