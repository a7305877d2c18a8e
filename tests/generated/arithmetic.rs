//! The generator's steps for the per-element semantics: float `/ // % **` and the unary
//! functions that make infinities and NaN, casts between the dtypes (saturating, NaN to
//! zero), and `i64` arithmetic that floors, takes the divisor's sign, wraps, and fails on a
//! zero divisor.

use rand::RngExt;
use rand::seq::IndexedRandom;

use super::{DType, Generator, Var};

/// Integer constants: small ones of both signs, zero rarely (a division by it fails), large
/// ones whose products wrap, and ones whose low 32-bit word is 2^31 or more under a high
/// word that is not all ones (a device rebuilding a scalar from two words must not
/// sign-extend the low one).
const INTEGERS: [&str; 12] = [
    "2",
    "3",
    "-2",
    "-3",
    "7",
    "1",
    "-1",
    "4611686018427387904",
    "-9223372036854775807",
    "2147483648",
    "9007199254740991",
    "-6442450944",
];

impl Generator {
    /// One step of per-element arithmetic; false when the chosen kind had nothing to work on.
    pub(super) fn arithmetic(&mut self) -> bool {
        match self.rng.random_range(0..4) {
            0 => self.float_binary(),
            1 => self.float_unary(),
            2 => self.cast(),
            _ => self.integer_binary(),
        }
    }

    /// `x / y`, `x // y`, `x % y` and `x ** y` of `f32` values, where the divisor may be zero
    /// and the base negative. `//` and `%` take inputs only: they jump at whole quotients, so
    /// a value a unit in the last place off on another device would jump elsewhere.
    fn float_binary(&mut self) -> bool {
        let op = ["/", "//", "%", "**"]
            .choose(&mut self.rng)
            .copied()
            .unwrap_or("/");
        let jumps = matches!(op, "//" | "%");
        let Some(x) = self.pick(|var| var.dtype == DType::F32 && (!jumps || is_float_input(var)))
        else {
            return false;
        };
        let same = |var: &Var| {
            var.dtype == DType::F32 && var.shape == x.shape && (!jumps || is_float_input(var))
        };
        let y = self.pick(same).expect("x itself fits");
        let right = if op == "**" && self.rng.random_bool(0.6) {
            ["2", "0.5", "-1.0", "3.0", "0"]
                .choose(&mut self.rng)
                .copied()
                .unwrap_or("2")
                .to_string()
        } else if self.rng.random_bool(0.4) {
            self.constant()
        } else {
            y.name
        };
        self.bind(format!("{} {op} {right}", x.name), DType::F32, x.shape);
        true
    }

    /// `exp`, `log`, `sqrt` and `sigmoid`: `log` and `sqrt` of negative values are NaN, of
    /// zero `-inf` and zero, and `exp` of large values infinite (of large negative ones it
    /// would be subnormal, which a GPU may flush to zero). `exp` of 60 times a value takes
    /// an input: it multiplies the value's relative error by 60 times the value, so a
    /// computed value a unit in the last place away on a GPU (`tanh`, `sigmoid`) would come
    /// out further apart than any tolerance for one operation.
    fn float_unary(&mut self) -> bool {
        let form = [
            "exp({})",
            "{}.log()",
            "sqrt({})",
            "{}.sigmoid()",
            "({}.abs() * 60.0).exp()",
        ]
        .choose(&mut self.rng)
        .copied()
        .unwrap_or("exp({})");
        let x = if form.contains("60.0") {
            self.pick(is_float_input)
        } else {
            self.pick(|var| var.dtype == DType::F32)
        };
        let Some(x) = x else {
            return false;
        };
        self.bind(form.replace("{}", &x.name), DType::F32, x.shape);
        true
    }

    /// Casts: `f32` to `i64` (of values scaled past the range of `i64`, or infinite or NaN)
    /// and to `bool`, `i64` and `bool` to `f32`, and `i64` to `bool`. Floats are cast only
    /// from the inputs, whose values are exact on every device: a GPU's `exp` or division a
    /// unit in the last place away from the CPU's would move a cast across an integer.
    fn cast(&mut self) -> bool {
        let (expr, dtype, shape) = match self.rng.random_range(0..5) {
            kind @ 0..=2 => {
                let Some(x) = self.pick(is_float_input) else {
                    return false;
                };
                let expr = match kind {
                    0 => {
                        let scale = ["1.0", "3.0e18", "-1.0e19", "1.0e30"]
                            .choose(&mut self.rng)
                            .copied()
                            .unwrap_or("1.0");
                        format!("({} * {scale}).long()", x.name)
                    }
                    1 => format!("({} / 0.0).long()", x.name),
                    _ => format!("{}.bool()", x.name),
                };
                let dtype = if kind == 2 { DType::Bool } else { DType::I64 };
                (expr, dtype, x.shape)
            }
            kind => {
                let Some(x) = self.pick(|var| var.dtype != DType::F32 && !var.shape.is_empty())
                else {
                    return false;
                };
                let (expr, dtype) = match (x.dtype, kind) {
                    (DType::I64, 3) => (format!("{}.bool()", x.name), DType::Bool),
                    (DType::Bool, 3) => (format!("{}.long()", x.name), DType::I64),
                    _ => (format!("{}.float()", x.name), DType::F32),
                };
                (expr, dtype, x.shape)
            }
        };
        self.bind(expr, dtype, shape);
        true
    }

    /// `+ - * // % **` of `i64` values and constants: `//` floors, `%` takes the divisor's
    /// sign, products and powers wrap, and a zero divisor or a negative exponent (a constant,
    /// rarely, or a value from data) fails.
    fn integer_binary(&mut self) -> bool {
        let Some(x) = self.pick(|var| var.dtype == DType::I64) else {
            // No integers yet: make one from an input, scaled so that it is not all zeros.
            let Some(x) = self.pick(is_float_input) else {
                return false;
            };
            self.bind(format!("(({}) * 5.0).long()", x.name), DType::I64, x.shape);
            return true;
        };
        let op = ["//", "%", "*", "+", "-", "//", "%", "**"]
            .choose(&mut self.rng)
            .copied()
            .unwrap_or("//");
        let same = |var: &Var| var.dtype == DType::I64 && var.shape == x.shape;
        let y = self.pick(same).expect("x itself fits");
        let right = if op == "**" {
            let exponent = ["2", "3", "0", "63", "2", "3"]
                .choose(&mut self.rng)
                .copied()
                .unwrap_or("2");
            if self.rng.random_bool(0.05) {
                // An exponent from data: negative wherever `y` is.
                y.name
            } else if self.rng.random_bool(0.04) {
                "-1".to_string()
            } else {
                exponent.to_string()
            }
        } else if self.rng.random_bool(0.2) {
            // A divisor from data: zero wherever `y` is zero.
            y.name
        } else if self.rng.random_bool(0.04) {
            "0".to_string()
        } else {
            INTEGERS
                .choose(&mut self.rng)
                .copied()
                .unwrap_or("2")
                .to_string()
        };
        self.bind(format!("{} {op} {right}", x.name), DType::I64, x.shape);
        true
    }
}

/// The `f32` inputs, whose values (halves) are exact on every device.
pub(crate) fn is_float_input(var: &Var) -> bool {
    var.dtype == DType::F32 && ["a", "b", "c"].contains(&var.name.as_str())
}
