//! The WGSL side of `graph::semantics`: storage types, literals, and helper functions that
//! compute each element function as the CPU does where WGSL leaves room (Python `//` and
//! `%` from an exact `fmod`, NaN propagation, saturating casts, `pow` of negative, zero and
//! infinite bases and of infinite exponents, as C's `pow` defines them), each written once.
//!
//! Lavapipe compares NaN as ordered for `!=` and drops NaN in `max`/`min`, so NaN is tested
//! by its bits and extrema are selects; integer remainders are derived from the quotient, so
//! no driver's signed `%` is trusted.

use crate::dtype::DType;

/// Invocations per workgroup of one-dimensional kernels.
pub fn workgroup_size() -> u32 {
    256
}

/// The element type a tensor of `dtype` is stored as (bools take a 32-bit word).
pub fn storage_type(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "f32",
        DType::I64 => "i64",
        DType::Bool => "u32",
    }
}

/// The WGSL type a value of `dtype` computes in.
pub fn value_type(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "f32",
        DType::I64 => "i64",
        DType::Bool => "bool",
    }
}

/// A stored element (`array[index]`) as a value.
pub fn load(dtype: DType, array: &str, index: &str) -> String {
    match dtype {
        DType::Bool => format!("({array}[{index}] != 0u)"),
        _ => format!("{array}[{index}]"),
    }
}

/// A value as the word stored for it.
pub fn store(dtype: DType, value: &str) -> String {
    match dtype {
        DType::Bool => format!("select(0u, 1u, {value})"),
        _ => value.to_string(),
    }
}

/// An exact `f32` literal (through its bits, so infinities, NaN and every rounding are kept),
/// combined with the always-zero parameter word `zero` so the shader compiler cannot fold
/// arithmetic on it (see `Param::Zero`).
pub fn f32_literal(value: f64, zero: &str) -> String {
    format!("bitcast<f32>({:#010x}u ^ {zero})", (value as f32).to_bits())
}

/// An `i64` literal (the most negative value cannot be written as a negated literal).
pub fn i64_literal(value: i64) -> String {
    if value == i64::MIN {
        "(-9223372036854775807li - 1li)".to_string()
    } else {
        format!("{value}li")
    }
}

/// A host scalar rebuilt from its two parameter words. The low word is widened through
/// `i32` and masked: `i64(low)` of a `u32` sign-extended on the Vulkan drivers tested (an
/// operand of 2^31 read as -2^31).
pub fn scalar_from_words(dtype: DType, low: &str, high: &str) -> String {
    match dtype {
        DType::F32 => format!("bitcast<f32>({low})"),
        DType::I64 => format!(
            "((i64(bitcast<i32>({high})) << 32u) | (i64(bitcast<i32>({low})) & 4294967295li))"
        ),
        DType::Bool => format!("({low} != 0u)"),
    }
}

/// The helper functions a module uses, emitted once each in a fixed order.
#[derive(Default)]
pub(crate) struct Helpers {
    used: Vec<&'static str>,
}

impl Helpers {
    pub fn need(&mut self, name: &'static str) {
        if self.used.contains(&name) {
            return;
        }
        for dependency in dependencies(name) {
            self.need(dependency);
        }
        self.used.push(name);
    }

    /// The source of every used helper, in the library's order.
    pub fn source(&self) -> String {
        LIBRARY
            .iter()
            .filter(|(name, _)| self.used.contains(name))
            .map(|(_, source)| *source)
            .collect()
    }
}

fn dependencies(name: &str) -> &'static [&'static str] {
    match name {
        "maximum_f32" | "minimum_f32" | "tanh_f32" | "f32_to_i64" | "pow_f32" | "log_f32"
        | "sqrt_f32" | "fmod_f32" => &["is_nan"],
        "floor_div_f32" => &["sign_of", "fmod_f32"],
        "remainder_f32" => &["fmod_f32"],
        _ => &[],
    }
}

/// Every helper, in emission order.
const LIBRARY: &[(&str, &str)] = &[
    (
        "is_nan",
        "fn is_nan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }\n",
    ),
    (
        "sign_of",
        "fn sign_of(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) & 0x80000000u); }\n",
    ),
    (
        "fail",
        "fn fail(slot: u32, position: u32) {\n\
         \x20   atomicMin(&status[0], slot);\n\
         \x20   atomicMin(&status[1u + slot], position);\n\
         }\n",
    ),
    (
        "maximum_f32",
        "fn maximum_f32(x: f32, y: f32) -> f32 {\n\
         \x20   if (is_nan(x) || (!is_nan(y) && x >= y)) { return x; }\n\
         \x20   return y;\n\
         }\n",
    ),
    (
        "minimum_f32",
        "fn minimum_f32(x: f32, y: f32) -> f32 {\n\
         \x20   if (is_nan(x) || (!is_nan(y) && x <= y)) { return x; }\n\
         \x20   return y;\n\
         }\n",
    ),
    (
        "relu_f32",
        "fn relu_f32(x: f32) -> f32 { if (x <= 0.0) { return 0.0; } return x; }\n",
    ),
    (
        "sigmoid_f32",
        "fn sigmoid_f32(x: f32) -> f32 { return 1.0 / (1.0 + exp(-x)); }\n",
    ),
    (
        "tanh_f32",
        "fn tanh_f32(x: f32) -> f32 {\n\
         \x20   if (is_nan(x)) { return x; }\n\
         \x20   let a = abs(x);\n\
         \x20   var t = a;\n\
         \x20   if (a < 0.05) {\n\
         \x20       let s = a * a;\n\
         \x20       t = a + a * s * (-0.33333334 + s * (0.13333334 - s * 0.053968254));\n\
         \x20   } else {\n\
         \x20       let e = exp(-2.0 * a);\n\
         \x20       t = (1.0 - e) / (1.0 + e);\n\
         \x20   }\n\
         \x20   return select(t, -t, (bitcast<u32>(x) & 0x80000000u) != 0u);\n\
         }\n",
    ),
    (
        "log_f32",
        "fn log_f32(x: f32) -> f32 {\n\
         \x20   if (x < 0.0) { return bitcast<f32>(0x7fc00000u); }\n\
         \x20   if (x == 0.0) { return bitcast<f32>(0xff800000u); }\n\
         \x20   return log(x);\n\
         }\n",
    ),
    (
        "sqrt_f32",
        "fn sqrt_f32(x: f32) -> f32 {\n\
         \x20   if (x < 0.0) { return bitcast<f32>(0x7fc00000u); }\n\
         \x20   return sqrt(x);\n\
         }\n",
    ),
    (
        "fmod_f32",
        "fn fmod_f32(a: f32, b: f32) -> f32 {\n\
         \x20   let y = abs(b);\n\
         \x20   var r = abs(a);\n\
         \x20   if (is_nan(a) || is_nan(b) || r == bitcast<f32>(0x7f800000u) || y == 0.0) {\n\
         \x20       return bitcast<f32>(0x7fc00000u);\n\
         \x20   }\n\
         \x20   if (r < y) { return a; }\n\
         \x20   let divisor = frexp(y);\n\
         \x20   // Each step subtracts y times a smaller power of two than the step before, so 280\n\
         \x20   // steps cover every exponent; the bound only matters where a device flushes\n\
         \x20   // subnormal values to zero.\n\
         \x20   for (var step = 0; step < 280 && r >= y; step++) {\n\
         \x20       let rest = frexp(r);\n\
         \x20       let below = select(0, 1, divisor.fract > rest.fract);\n\
         \x20       r = r - ldexp(y, rest.exp - divisor.exp - below);\n\
         \x20   }\n\
         \x20   return select(r, -r, a < 0.0);\n\
         }\n",
    ),
    (
        "floor_div_f32",
        "fn floor_div_f32(a: f32, b: f32) -> f32 {\n\
         \x20   if (b == 0.0) { return a / b; }\n\
         \x20   let modulo = fmod_f32(a, b);\n\
         \x20   var quotient = (a - modulo) / b;\n\
         \x20   if (!(modulo == 0.0) && ((b < 0.0) != (modulo < 0.0))) { quotient = quotient - 1.0; }\n\
         \x20   if (quotient == 0.0) { return sign_of(a / b); }\n\
         \x20   let whole = floor(quotient);\n\
         \x20   if (quotient - whole > 0.5) { return whole + 1.0; }\n\
         \x20   return whole;\n\
         }\n",
    ),
    (
        "remainder_f32",
        "fn remainder_f32(a: f32, b: f32) -> f32 {\n\
         \x20   let modulo = fmod_f32(a, b);\n\
         \x20   if (!(modulo == 0.0) && ((b < 0.0) != (modulo < 0.0))) { return modulo + b; }\n\
         \x20   return modulo;\n\
         }\n",
    ),
    (
        "pow_f32",
        "fn pow_f32(x: f32, y: f32) -> f32 {\n\
         \x20   if (y == 0.0 || x == 1.0) { return 1.0; }\n\
         \x20   if (is_nan(x) || is_nan(y)) { return bitcast<f32>(0x7fc00000u); }\n\
         \x20   let infinity = bitcast<f32>(0x7f800000u);\n\
         \x20   let a = abs(x);\n\
         \x20   if (abs(y) == infinity) {\n\
         \x20       if (a == 1.0) { return 1.0; }\n\
         \x20       return select(0.0, infinity, (a > 1.0) == (y > 0.0));\n\
         \x20   }\n\
         \x20   let whole = y == trunc(y);\n\
         \x20   if (x < 0.0 && !whole && a != infinity) { return bitcast<f32>(0x7fc00000u); }\n\
         \x20   var magnitude = 0.0;\n\
         \x20   if (a == 0.0) {\n\
         \x20       magnitude = select(0.0, infinity, y < 0.0);\n\
         \x20   } else if (a == infinity) {\n\
         \x20       magnitude = select(infinity, 0.0, y < 0.0);\n\
         \x20   } else if (y == 1.0) {\n\
         \x20       magnitude = a;\n\
         \x20   } else if (y == 2.0) {\n\
         \x20       magnitude = a * a;\n\
         \x20   } else if (y == 0.5) {\n\
         \x20       magnitude = sqrt(a);\n\
         \x20   } else {\n\
         \x20       magnitude = pow(a, y);\n\
         \x20   }\n\
         \x20   let odd = whole && abs(y) < 16777216.0 && (i32(y) & 1) != 0;\n\
         \x20   let negative = (bitcast<u32>(x) & 0x80000000u) != 0u;\n\
         \x20   return select(magnitude, -magnitude, negative && odd);\n\
         }\n",
    ),
    (
        "f32_to_i64",
        "fn f32_to_i64(x: f32) -> i64 {\n\
         \x20   if (is_nan(x)) { return 0li; }\n\
         \x20   if (x >= bitcast<f32>(0x5f000000u)) { return 9223372036854775807li; }\n\
         \x20   if (x <= bitcast<f32>(0xdf000000u)) { return -9223372036854775807li - 1li; }\n\
         \x20   return i64(x);\n\
         }\n",
    ),
    (
        "floor_div_i64",
        "fn floor_div_i64(a: i64, b: i64) -> i64 {\n\
         \x20   if (b == 0li) { return 0li; }\n\
         \x20   let q = a / b;\n\
         \x20   let r = a - q * b;\n\
         \x20   if (r != 0li && ((r < 0li) != (b < 0li))) { return q - 1li; }\n\
         \x20   return q;\n\
         }\n",
    ),
    (
        "remainder_i64",
        "fn remainder_i64(a: i64, b: i64) -> i64 {\n\
         \x20   if (b == 0li) { return 0li; }\n\
         \x20   let r = a - (a / b) * b;\n\
         \x20   if (r != 0li && ((r < 0li) != (b < 0li))) { return r + b; }\n\
         \x20   return r;\n\
         }\n",
    ),
    (
        "pow_i64",
        "fn pow_i64(base: i64, exponent: i64) -> i64 {\n\
         \x20   var result = 1li;\n\
         \x20   var b = base;\n\
         \x20   var k = exponent;\n\
         \x20   loop {\n\
         \x20       if (k <= 0li) { break; }\n\
         \x20       if ((k & 1li) == 1li) { result = result * b; }\n\
         \x20       b = b * b;\n\
         \x20       k = k >> 1u;\n\
         \x20   }\n\
         \x20   return result;\n\
         }\n",
    ),
];
