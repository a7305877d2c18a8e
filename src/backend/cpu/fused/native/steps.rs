//! The instructions of each step, on one lane or on a vector of four.
//!
//! Every step is the instruction sequence of its element function in `graph::semantics`, so
//! each lane computes the interpreter's bits: IEEE arithmetic and square root, comparisons
//! ordered as Rust's, the NaN and signed-zero rules of `maximum`, `minimum` and `relu`
//! spelled out with comparisons and selects, `exp_f32` with its fused multiply-adds, and
//! `ln` and `tanh` called from the standard library lane by lane. A mask is 0 or 1 in one
//! lane and all zeros or all ones in a vector lane.

use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::immediates::Ieee32;
use cranelift_codegen::ir::{
    AbiParam, Endianness, InstBuilder, MemFlags, Signature, Type, Value, types,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::FunctionBuilder;

use super::lower::{Float1, Float2, Step, Test};
use crate::graph::semantics as element;

/// Four `f32` lanes: the width every x86-64 and AArch64 processor has.
pub(super) const VECTOR: Type = types::F32X4;
const VECTOR_MASK: Type = types::I32X4;

/// One lane, or four.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    Scalar,
    Vector,
}

/// What the code generator needs of the processor: its address type and the calling
/// convention of functions it calls.
#[derive(Clone, Copy)]
pub(super) struct Host {
    pub pointer: Type,
    pub call: CallConv,
}

/// The instructions of one step (not an operand read) on its operands' values.
pub(super) fn compute(
    b: &mut FunctionBuilder<'_>,
    host: Host,
    form: Form,
    step: Step,
    arguments: &[Value],
) -> Value {
    let argument = |index: usize| arguments[index];
    match step {
        Step::Input(_) => argument(0),
        Step::Float(bits) => float(b, form, bits),
        Step::Bool(value) => mask(b, form, value),
        Step::Float1(op, _) => float1(b, host, form, op, argument(0)),
        Step::Float2(op, ..) => float2(b, form, op, argument(0), argument(1)),
        Step::Compare(condition, ..) => b.ins().fcmp(condition, argument(0), argument(1)),
        Step::Test(test, _) => {
            let x = argument(0);
            match test {
                Test::IsNan => b.ins().fcmp(FloatCC::Unordered, x, x),
                Test::IsInf => {
                    let size = b.ins().fabs(x);
                    let infinity = float(b, form, f32::INFINITY.to_bits());
                    b.ins().fcmp(FloatCC::Equal, size, infinity)
                }
                Test::IsZero | Test::NonZero => {
                    let zero = float(b, form, 0);
                    let condition = if test == Test::IsZero {
                        FloatCC::Equal
                    } else {
                        FloatCC::NotEqual
                    };
                    b.ins().fcmp(condition, x, zero)
                }
            }
        }
        Step::And(..) => b.ins().band(argument(0), argument(1)),
        Step::Or(..) => b.ins().bor(argument(0), argument(1)),
        Step::Not(_) => match form {
            // A one-lane mask is 0 or 1; a vector lane all zeros or all ones.
            Form::Scalar => b.ins().bxor_imm(argument(0), 1),
            Form::Vector => b.ins().bnot(argument(0)),
        },
        Step::Select(..) => select(b, form, argument(0), argument(1), argument(2)),
        Step::ToFloat(_) => {
            let one = float(b, form, 1.0f32.to_bits());
            let zero = float(b, form, 0);
            select(b, form, argument(0), one, zero)
        }
    }
}

fn float1(b: &mut FunctionBuilder<'_>, host: Host, form: Form, op: Float1, x: Value) -> Value {
    match op {
        Float1::Neg => b.ins().fneg(x),
        Float1::Abs => b.ins().fabs(x),
        // `if x <= 0 { 0 } else { x }`: NaN stays NaN, -0.0 becomes 0.0.
        Float1::Relu => {
            let zero = float(b, form, 0);
            let nonpositive = b.ins().fcmp(FloatCC::LessThanOrEqual, x, zero);
            select(b, form, nonpositive, zero, x)
        }
        Float1::Sqrt => b.ins().sqrt(x),
        Float1::Exp => exp(b, form, x),
        // `1 / (1 + exp(-x))`.
        Float1::Sigmoid => {
            let negated = b.ins().fneg(x);
            let power = exp(b, form, negated);
            let one = float(b, form, 1.0f32.to_bits());
            let denominator = b.ins().fadd(one, power);
            b.ins().fdiv(one, denominator)
        }
        Float1::Log => call(b, host, form, log_lane, x),
        Float1::Tanh => call(b, host, form, tanh_lane, x),
    }
}

/// `exp_f32`: the argument clamped, split as `k·ln(2) + r`, the series of `e^r` by Horner's
/// rule in fused multiply-adds, scaled by `2^k` in two factors; NaN kept, overflow `inf`.
fn exp(b: &mut FunctionBuilder<'_>, form: Form, x: Value) -> Value {
    let lowest = float(b, form, element::EXP_LOWEST.to_bits());
    let below = b.ins().fcmp(FloatCC::LessThan, x, lowest);
    let raised = select(b, form, below, lowest, x);
    let highest = float(b, form, element::EXP_HIGHEST.to_bits());
    let above = b.ins().fcmp(FloatCC::GreaterThan, raised, highest);
    let clamped = select(b, form, above, highest, raised);
    let log2_e = float(b, form, std::f32::consts::LOG2_E.to_bits());
    let round = float(b, form, element::ROUND.to_bits());
    let shifted = b.ins().fma(clamped, log2_e, round);
    let whole = b.ins().fsub(shifted, round);
    let shifted_bits = bits(b, form, shifted);
    let round_bits = int(b, form, element::ROUND.to_bits().cast_signed());
    let k = b.ins().isub(shifted_bits, round_bits);
    let negated = b.ins().fneg(whole);
    let high = float(b, form, element::LN2_HIGH.to_bits());
    let r = b.ins().fma(negated, high, clamped);
    let low = float(b, form, element::LN2_LOW.to_bits());
    let r = b.ins().fma(negated, low, r);
    let mut series = float(b, form, element::EXP_SERIES[0].to_bits());
    for coefficient in &element::EXP_SERIES[1..] {
        let coefficient = float(b, form, coefficient.to_bits());
        series = b.ins().fma(series, r, coefficient);
    }
    let one = b.ins().iconst(types::I32, 1);
    let half = b.ins().sshr(k, one);
    let rest = b.ins().isub(k, half);
    let first = power_of_two(b, form, half);
    let second = power_of_two(b, form, rest);
    let value = b.ins().fmul(series, first);
    let value = b.ins().fmul(value, second);
    let overflow = float(b, form, element::EXP_OVERFLOW.to_bits());
    let overflows = b.ins().fcmp(FloatCC::GreaterThan, x, overflow);
    let infinity = float(b, form, f32::INFINITY.to_bits());
    let value = select(b, form, overflows, infinity, value);
    let nan = b.ins().fcmp(FloatCC::Unordered, x, x);
    select(b, form, nan, x, value)
}

/// `2^exponent` from exponent bits (`exponent` in the normal range).
fn power_of_two(b: &mut FunctionBuilder<'_>, form: Form, exponent: Value) -> Value {
    let bias = int(b, form, 127);
    let biased = b.ins().iadd(exponent, bias);
    let mantissa = b.ins().iconst(types::I32, 23);
    let shifted = b.ins().ishl(biased, mantissa);
    let little = MemFlags::new().with_endianness(Endianness::Little);
    b.ins().bitcast(float_type(form), little, shifted)
}

/// A float's bits as an integer of its width.
fn bits(b: &mut FunctionBuilder<'_>, form: Form, x: Value) -> Value {
    let little = MemFlags::new().with_endianness(Endianness::Little);
    let ty = match form {
        Form::Scalar => types::I32,
        Form::Vector => VECTOR_MASK,
    };
    b.ins().bitcast(ty, little, x)
}

fn float_type(form: Form) -> Type {
    match form {
        Form::Scalar => types::F32,
        Form::Vector => VECTOR,
    }
}

/// A 32-bit integer constant, in every lane of a vector.
fn int(b: &mut FunctionBuilder<'_>, form: Form, value: i32) -> Value {
    let lane = b.ins().iconst(types::I32, i64::from(value));
    match form {
        Form::Scalar => lane,
        Form::Vector => b.ins().splat(VECTOR_MASK, lane),
    }
}

extern "C" fn log_lane(x: f32) -> f32 {
    x.ln()
}

extern "C" fn tanh_lane(x: f32) -> f32 {
    x.tanh()
}

/// `function` of each lane, called through its address.
fn call(
    b: &mut FunctionBuilder<'_>,
    host: Host,
    form: Form,
    function: extern "C" fn(f32) -> f32,
    x: Value,
) -> Value {
    let mut signature = Signature::new(host.call);
    signature.params.push(AbiParam::new(types::F32));
    signature.returns.push(AbiParam::new(types::F32));
    let signature = b.import_signature(signature);
    let address = (function as *const ()).expose_provenance().cast_signed();
    let callee = b.ins().iconst(host.pointer, address as i64);
    let lane = |b: &mut FunctionBuilder<'_>, value: Value| {
        let call = b.ins().call_indirect(signature, callee, &[value]);
        b.inst_results(call)[0]
    };
    match form {
        Form::Scalar => lane(b, x),
        Form::Vector => {
            let mut result = x;
            for index in 0..4 {
                let value = b.ins().extractlane(x, index);
                let computed = lane(b, value);
                result = b.ins().insertlane(result, computed, index);
            }
            result
        }
    }
}

fn float2(b: &mut FunctionBuilder<'_>, form: Form, op: Float2, x: Value, y: Value) -> Value {
    match op {
        Float2::Add => b.ins().fadd(x, y),
        Float2::Sub => b.ins().fsub(x, y),
        Float2::Mul => b.ins().fmul(x, y),
        Float2::Div => b.ins().fdiv(x, y),
        // `x` when it is NaN or (ordered) at least `y`, else `y`: NaN wins, ties keep `x`.
        Float2::Maximum | Float2::Minimum => {
            let order = if op == Float2::Maximum {
                FloatCC::GreaterThanOrEqual
            } else {
                FloatCC::LessThanOrEqual
            };
            let nan = b.ins().fcmp(FloatCC::Unordered, x, x);
            let ordered = b.ins().fcmp(order, x, y);
            let keep = b.ins().bor(nan, ordered);
            select(b, form, keep, x, y)
        }
    }
}

fn float(b: &mut FunctionBuilder<'_>, form: Form, bits: u32) -> Value {
    let value = b.ins().f32const(Ieee32::with_bits(bits));
    match form {
        Form::Scalar => value,
        Form::Vector => b.ins().splat(VECTOR, value),
    }
}

/// A constant mask: 0 or 1 in one lane, all zeros or all ones in a vector lane.
fn mask(b: &mut FunctionBuilder<'_>, form: Form, value: bool) -> Value {
    match form {
        Form::Scalar => b.ins().iconst(types::I8, i64::from(value)),
        Form::Vector => {
            let lane = b.ins().iconst(types::I32, -i64::from(value));
            b.ins().splat(VECTOR_MASK, lane)
        }
    }
}

/// `then` where `mask` is set, else `otherwise`.
fn select(
    b: &mut FunctionBuilder<'_>,
    form: Form,
    mask: Value,
    then: Value,
    otherwise: Value,
) -> Value {
    match form {
        Form::Scalar => b.ins().select(mask, then, otherwise),
        Form::Vector => {
            let little = MemFlags::new().with_endianness(Endianness::Little);
            let mask = b.ins().bitcast(VECTOR, little, mask);
            b.ins().bitselect(mask, then, otherwise)
        }
    }
}
