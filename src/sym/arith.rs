//! Canonical sums and products: `+`, `-`, `*` and `**` with a constant exponent.
//!
//! An integer expression is kept as `Σ coefficient*monomial + constant`, where a monomial is a
//! product of atoms (symbols, `//`, `%`, `min`, `max`) with exponents. Products of sums are
//! expanded while the result stays small ([`EXPANSION_LIMIT`] terms); past that the sum is kept
//! whole as a factor, so `(s0 + s1 + s2 + s3)**8` stays compact. All arithmetic is checked:
//! a constant or coefficient that leaves `i64` is [`SymError::Overflow`].

use super::env::{ShapeEnv, SymError};
use super::node::{ExprId, Node};

/// Most terms a product of sums may expand to.
const EXPANSION_LIMIT: usize = 16;

/// An integer expression read as `Σ coefficient*monomial + constant`.
#[derive(Clone, Debug, Default)]
pub(super) struct Poly {
    pub terms: Vec<(ExprId, i64)>,
    pub constant: i64,
}

impl Poly {
    /// Number of terms, counting a non-zero constant as one.
    fn width(&self) -> usize {
        self.terms.len() + usize::from(self.constant != 0)
    }
}

impl ShapeEnv {
    /// `a + b`.
    pub fn add(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        self.combine(a, b, 1)
    }

    /// `a - b`.
    pub fn sub(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        self.combine(a, b, -1)
    }

    /// `-a`.
    pub fn neg(&mut self, a: ExprId) -> Result<ExprId, SymError> {
        let a = self.int_operand(a)?;
        self.scale(a, -1)
    }

    /// `a * b`.
    pub fn mul(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        let (a, b) = (self.int_operand(a)?, self.int_operand(b)?);
        if let Some(factor) = self.as_int(a) {
            return self.scale(b, factor);
        }
        if let Some(factor) = self.as_int(b) {
            return self.scale(a, factor);
        }
        let (left, right) = (self.poly(a), self.poly(b));
        if left.width() * right.width() > EXPANSION_LIMIT {
            let factors = [self.factors(a), self.factors(b)].concat();
            return self.make_monomial(factors);
        }
        self.expand(&left, &right)
    }

    /// `base ** exponent` for a constant exponent in `0..=u32::MAX` (`0 ** 0` is 1).
    pub fn pow(&mut self, base: ExprId, exponent: ExprId) -> Result<ExprId, SymError> {
        let exponent = self.resolve(exponent);
        let exponent = self
            .as_int(exponent)
            .filter(|value| *value >= 0)
            .ok_or(SymError::BadExponent)?;
        let base = self.int_operand(base)?;
        let Ok(exponent) = u32::try_from(exponent) else {
            // Beyond `u32`, only 0, 1 and -1 have a power in `i64` (a symbolic base is taken
            // to be none of them, as a size at least 2 is not).
            return match self.as_int(base) {
                Some(value @ (0 | 1)) => Ok(self.int(value)),
                Some(-1) => Ok(self.int(if exponent % 2 == 0 { 1 } else { -1 })),
                _ => Err(SymError::Overflow),
            };
        };
        self.power(base, exponent)
    }

    pub(super) fn power(&mut self, base: ExprId, exponent: u32) -> Result<ExprId, SymError> {
        match (exponent, self.as_int(base)) {
            (0, _) => return Ok(self.int(1)),
            (1, _) => return Ok(base),
            (_, Some(value)) => {
                let value = value.checked_pow(exponent).ok_or(SymError::Overflow)?;
                return Ok(self.int(value));
            }
            _ => {}
        }
        let poly = self.poly(base);
        if let ([(monomial, coefficient)], 0) = (poly.terms.as_slice(), poly.constant) {
            let coefficient = coefficient
                .checked_pow(exponent)
                .ok_or(SymError::Overflow)?;
            let factors = self.factors(*monomial);
            let powered = raise(factors, exponent)?;
            let monomial = self.make_monomial(powered)?;
            return self.make_sum(vec![(monomial, coefficient)], 0);
        }
        if expansion_fits(poly.width(), exponent) {
            let mut result = base;
            for _ in 1..exponent {
                result = self.mul(result, base)?;
            }
            return Ok(result);
        }
        self.make_monomial(vec![(base, exponent)])
    }

    /// `c * e` for a constant `c`.
    pub(super) fn scale(&mut self, expr: ExprId, factor: i64) -> Result<ExprId, SymError> {
        match factor {
            0 => return Ok(self.int(0)),
            1 => return Ok(expr),
            _ => {}
        }
        let mut poly = self.poly(expr);
        for (_, coefficient) in &mut poly.terms {
            *coefficient = coefficient.checked_mul(factor).ok_or(SymError::Overflow)?;
        }
        let constant = poly
            .constant
            .checked_mul(factor)
            .ok_or(SymError::Overflow)?;
        self.make_sum(poly.terms, constant)
    }

    /// The expression as a polynomial over its monomials.
    pub(super) fn poly(&self, expr: ExprId) -> Poly {
        match self.arena.node(expr) {
            Node::Int(value) => Poly {
                terms: Vec::new(),
                constant: *value,
            },
            Node::Sum { terms, constant } => Poly {
                terms: terms.to_vec(),
                constant: *constant,
            },
            _ => Poly {
                terms: vec![(expr, 1)],
                constant: 0,
            },
        }
    }

    /// Builds the canonical sum: terms sorted, like terms combined, zero terms dropped, and the
    /// normalized linear form (gcd 1, positive first coefficient) recorded for fact lookup.
    pub(super) fn make_sum(
        &mut self,
        mut terms: Vec<(ExprId, i64)>,
        constant: i64,
    ) -> Result<ExprId, SymError> {
        terms.sort_by(|a, b| self.arena.order(a.0, b.0));
        let mut merged: Vec<(ExprId, i64)> = Vec::with_capacity(terms.len());
        for (term, coefficient) in terms {
            match merged.last_mut() {
                Some((last, total)) if *last == term => {
                    *total = total.checked_add(coefficient).ok_or(SymError::Overflow)?;
                }
                _ => merged.push((term, coefficient)),
            }
        }
        merged.retain(|&(_, coefficient)| coefficient != 0);
        if let Some(rewritten) = self.rewrite_terms(&merged, constant) {
            return rewritten;
        }
        match (merged.as_slice(), constant) {
            ([], _) => return Ok(self.int(constant)),
            ([(term, 1)], 0) => return Ok(*term),
            _ => {}
        }
        let scale = normalizing_scale(&merged);
        if scale == 1 && constant == 0 {
            return Ok(self.intern_sum(merged, 0, None));
        }
        let form_terms: Vec<(ExprId, i64)> = merged
            .iter()
            .map(|&(term, coefficient)| {
                (term, (i128::from(coefficient) / i128::from(scale)) as i64)
            })
            .collect();
        let form = match form_terms.as_slice() {
            [(term, 1)] => *term,
            _ => self.intern_sum(form_terms, 0, None),
        };
        Ok(self.intern_sum(merged, constant, Some((form, scale))))
    }

    fn intern_sum(
        &mut self,
        terms: Vec<(ExprId, i64)>,
        constant: i64,
        form: Option<(ExprId, i64)>,
    ) -> ExprId {
        let node = Node::Sum {
            terms: terms.into(),
            constant,
        };
        self.arena.intern(node, form)
    }

    /// `a + sign*b`.
    fn combine(&mut self, a: ExprId, b: ExprId, sign: i64) -> Result<ExprId, SymError> {
        let (a, b) = (self.int_operand(a)?, self.int_operand(b)?);
        let mut sum = self.poly(a);
        let other = self.poly(b);
        for (term, coefficient) in other.terms {
            let coefficient = coefficient.checked_mul(sign).ok_or(SymError::Overflow)?;
            sum.terms.push((term, coefficient));
        }
        let constant = other.constant.checked_mul(sign).ok_or(SymError::Overflow)?;
        let constant = sum
            .constant
            .checked_add(constant)
            .ok_or(SymError::Overflow)?;
        self.make_sum(sum.terms, constant)
    }

    fn expand(&mut self, left: &Poly, right: &Poly) -> Result<ExprId, SymError> {
        let mut terms = Vec::with_capacity(left.width() * right.width());
        for &(a, x) in &left.terms {
            for &(b, y) in &right.terms {
                let monomial = self.mul_monomials(a, b)?;
                terms.push((monomial, x.checked_mul(y).ok_or(SymError::Overflow)?));
            }
        }
        let cross = |terms: &mut Vec<_>, poly: &Poly, constant: i64| {
            for &(term, coefficient) in &poly.terms {
                let coefficient = coefficient
                    .checked_mul(constant)
                    .ok_or(SymError::Overflow)?;
                terms.push((term, coefficient));
            }
            Ok::<(), SymError>(())
        };
        cross(&mut terms, left, right.constant)?;
        cross(&mut terms, right, left.constant)?;
        let constant = left
            .constant
            .checked_mul(right.constant)
            .ok_or(SymError::Overflow)?;
        self.make_sum(terms, constant)
    }

    fn mul_monomials(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
        let factors = [self.factors(a), self.factors(b)].concat();
        self.make_monomial(factors)
    }

    /// The factors of a monomial; any other expression is one factor.
    fn factors(&self, expr: ExprId) -> Vec<(ExprId, u32)> {
        match self.arena.node(expr) {
            Node::Product(factors) => factors.to_vec(),
            _ => vec![(expr, 1)],
        }
    }

    /// Builds the canonical product: factors sorted, exponents of equal factors added.
    fn make_monomial(&mut self, mut factors: Vec<(ExprId, u32)>) -> Result<ExprId, SymError> {
        factors.sort_by(|a, b| self.arena.order(a.0, b.0));
        let mut merged: Vec<(ExprId, u32)> = Vec::with_capacity(factors.len());
        for (factor, exponent) in factors {
            match merged.last_mut() {
                Some((last, total)) if *last == factor => {
                    *total = total.checked_add(exponent).ok_or(SymError::Overflow)?;
                }
                _ => merged.push((factor, exponent)),
            }
        }
        if let [(factor, 1)] = merged.as_slice() {
            return Ok(*factor);
        }
        Ok(self.arena.intern(Node::Product(merged.into()), None))
    }

    /// Resolves an operand and checks that it is an integer.
    pub(super) fn int_operand(&mut self, expr: ExprId) -> Result<ExprId, SymError> {
        if self.arena.data(expr).boolean {
            return Err(SymError::NotInteger);
        }
        Ok(self.resolve(expr))
    }
}

/// `factor**exponent` for every factor.
fn raise(factors: Vec<(ExprId, u32)>, exponent: u32) -> Result<Vec<(ExprId, u32)>, SymError> {
    factors
        .into_iter()
        .map(|(factor, power)| {
            Ok((
                factor,
                power.checked_mul(exponent).ok_or(SymError::Overflow)?,
            ))
        })
        .collect()
}

/// Whether `width**exponent` terms stay within [`EXPANSION_LIMIT`].
fn expansion_fits(width: usize, exponent: u32) -> bool {
    width
        .checked_pow(exponent)
        .is_some_and(|terms| terms <= EXPANSION_LIMIT)
}

/// The signed gcd that turns the terms into a normalized form: gcd of the coefficients, with
/// the sign of the first one. Always fits `i64` (only `i64::MIN` alone reaches 2^63).
pub(super) fn normalizing_scale(terms: &[(ExprId, i64)]) -> i64 {
    let gcd = terms.iter().fold(0u64, |acc, &(_, coefficient)| {
        gcd(acc, coefficient.unsigned_abs())
    });
    let negative = terms
        .first()
        .is_some_and(|&(_, coefficient)| coefficient < 0);
    let signed = if negative {
        -i128::from(gcd)
    } else {
        i128::from(gcd)
    };
    signed as i64
}

/// Greatest common divisor.
pub(super) fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
