//! Element types, host scalars, PyTorch's type promotion, and the float format of spec §8.
//!
//! Shared by the shape/type rules, the CPU kernels and the interpreter, so that every stage
//! agrees on which dtype an operation produces.

use std::fmt;

/// A tensor element type. The derive order is the promotion order: `Bool < I64 < F32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I64,
    F32,
}

impl DType {
    pub const ALL: [DType; 3] = [DType::Bool, DType::I64, DType::F32];

    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I64 => "i64",
            DType::F32 => "f32",
        }
    }

    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|dtype| dtype.name() == name)
    }

    /// PyTorch's promotion for two tensors: the higher category wins. With one dtype per
    /// category this is also the rule for a tensor and a host scalar (see [`Scalar::dtype`]).
    #[must_use]
    pub fn promote(self, other: DType) -> DType {
        self.max(other)
    }

    pub fn is_float(self) -> bool {
        self == DType::F32
    }

    /// Bytes per element, for allocation limits.
    pub fn size_of(self) -> usize {
        match self {
            DType::Bool => 1,
            DType::F32 => 4,
            DType::I64 => 8,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A host scalar as it meets a tensor: a TSL `bool`, `int` or `float`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
}

impl Scalar {
    /// The dtype a scalar takes when it becomes a tensor. Because each category has exactly
    /// one dtype, treating a scalar operand as a 0-d tensor of this dtype reproduces PyTorch's
    /// rule that a scalar promotes a tensor only to a higher category.
    pub fn dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::I64,
            Scalar::Float(_) => DType::F32,
        }
    }

    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => f64::from(u8::from(b)),
            Scalar::Int(i) => i as f64,
            Scalar::Float(x) => x,
        }
    }

    /// Integer value, truncating floats toward zero as a cast does.
    pub fn as_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => i64::from(b),
            Scalar::Int(i) => i,
            Scalar::Float(x) => x as i64,
        }
    }

    pub fn as_bool(self) -> bool {
        match self {
            Scalar::Bool(b) => b,
            Scalar::Int(i) => i != 0,
            Scalar::Float(x) => x != 0.0,
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) => f.write_str(&format_f64(x)),
        }
    }
}

/// Formats a float as spec §8 asks: always with a `.` or an exponent, in the shortest form
/// that reads back to the same value. Like Python's `repr`, the exponent form is used below
/// 1e-4 and from 1e16 on, but written without padding or `+` (`1e-7`, `1e16`).
pub fn format_f64(value: f64) -> String {
    if !value.is_finite() {
        return non_finite(value.is_nan(), value.is_sign_negative());
    }
    layout_shortest(&format!("{value:e}"))
}

/// [`format_f64`] for an `f32` tensor element: shortest digits that read back as the same `f32`.
pub fn format_f32(value: f32) -> String {
    if !value.is_finite() {
        return non_finite(value.is_nan(), value.is_sign_negative());
    }
    layout_shortest(&format!("{value:e}"))
}

fn non_finite(nan: bool, negative: bool) -> String {
    match (nan, negative) {
        (true, _) => "nan".to_string(),
        (false, true) => "-inf".to_string(),
        (false, false) => "inf".to_string(),
    }
}

/// Lays out Rust's shortest scientific form `-d.ddde±x` positionally or in exponent form.
fn layout_shortest(scientific: &str) -> String {
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` always writes an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` writes a decimal exponent");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    if !(-4..16).contains(&exponent) {
        return format!("{sign}{mantissa}e{exponent}");
    }
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let (integer, fraction) = if exponent >= 0 {
        let point = exponent as usize + 1;
        if digits.len() > point {
            (digits[..point].to_string(), digits[point..].to_string())
        } else {
            (format!("{digits:0<point$}"), String::new())
        }
    } else {
        let zeros = "0".repeat((-exponent - 1) as usize);
        ("0".to_string(), format!("{zeros}{digits}"))
    };
    let fraction = if fraction.is_empty() { "0" } else { &fraction };
    format!("{sign}{integer}.{fraction}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_shortest_with_a_point_or_exponent() {
        let cases: &[(f64, &str)] = &[
            (1.0, "1.0"),
            (2.5, "2.5"),
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (100.0, "100.0"),
            (123_456.75, "123456.75"),
            (1e-7, "1e-7"),
            (1.5e-5, "1.5e-5"),
            (0.0001, "0.0001"),
            (1e16, "1e16"),
            (1e15, "1000000000000000.0"),
            (-2.5e20, "-2.5e20"),
            (f64::NAN, "nan"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for (value, expected) in cases {
            assert_eq!(format_f64(*value), *expected, "formatting {value:?}");
        }
    }

    #[test]
    fn f32_elements_use_f32_shortest_digits() {
        assert_eq!(format_f32(0.1), "0.1");
        assert_eq!(format_f64(f64::from(0.1f32)), "0.10000000149011612");
        assert_eq!(format_f32(16_777_216.0), "16777216.0");
        assert_eq!(format_f32(f32::INFINITY), "inf");
    }

    #[test]
    fn promotion_takes_the_higher_category() {
        assert_eq!(DType::Bool.promote(DType::I64), DType::I64);
        assert_eq!(DType::I64.promote(DType::F32), DType::F32);
        assert_eq!(DType::F32.promote(Scalar::Int(2).dtype()), DType::F32);
        assert_eq!(DType::I64.promote(Scalar::Float(0.5).dtype()), DType::F32);
        assert_eq!(DType::from_name("i64"), Some(DType::I64));
        assert_eq!(DType::from_name("f64"), None);
    }
}
