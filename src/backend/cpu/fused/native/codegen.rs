//! A loop as Cranelift IR: one function that computes elements `start..end` of every output.
//!
//! The function takes the operands' addresses, the outputs' addresses and the range. Values
//! the same for every element are computed once, before the loop. The loop then takes
//! [`LANES`] elements at a time in four vectors (independent chains the processor overlaps),
//! and one element at a time for the rest. Every step is the instruction sequence of its
//! element function in `graph::semantics`, so each lane computes the interpreter's bits:
//! IEEE arithmetic and square root, comparisons ordered as Rust's, and the NaN rules of
//! `maximum`, `minimum` and `relu` spelled out with comparisons and selects.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::Ieee32;
use cranelift_codegen::ir::{
    AbiParam, Block, Endianness, Function, InstBuilder, MemFlags, Signature, Type, Value, types,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

use super::lower::{Compare, Float1, Float2, Loop, Step, Test};

/// Elements per iteration of the vector loop: four vectors of four `f32`.
pub(super) const LANES: i64 = 16;

/// Four `f32` lanes: the width every x86-64 and AArch64 processor has.
const VECTOR: Type = types::F32X4;
const VECTOR_MASK: Type = types::I32X4;
const UNROLL: i64 = 4;

/// The signature: operand addresses, output addresses, start, end.
pub(super) fn signature(mut signature: Signature, pointer: Type) -> Signature {
    signature.params.extend([AbiParam::new(pointer); 4]);
    signature
}

/// One lane, or four.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Scalar,
    Vector,
}

/// Writes the body of `function` computing `looped`; `Err` when the function does not have
/// the parameters of [`signature`].
pub(super) fn define(
    looped: &Loop,
    function: &mut Function,
    context: &mut FunctionBuilderContext,
    pointer: Type,
) -> Result<(), String> {
    let mut b = FunctionBuilder::new(function, context);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let &[operands, outputs, start, end] = b.block_params(entry) else {
        return Err("a native loop takes four parameters".into());
    };
    let flags = MemFlags::trusted();
    let operands: Vec<Value> = (0..looped.whole.len())
        .map(|index| {
            b.ins()
                .load(pointer, flags, operands, offset(index, pointer))
        })
        .collect();
    let outputs: Vec<Value> = (0..looped.outputs.len())
        .map(|index| {
            b.ins()
                .load(pointer, flags, outputs, offset(index, pointer))
        })
        .collect();
    let uniform = looped.uniform();
    let once = Once::compute(&mut b, looped, &uniform, &operands);
    let loops = Loops::new(&mut b, pointer);
    b.ins().jump(loops.vector_head, &[start.into()]);

    // The vector loop, while a whole iteration fits before `end`.
    b.switch_to_block(loops.vector_head);
    let index = b.block_params(loops.vector_head)[0];
    let next = b.ins().iadd_imm(index, LANES);
    let fits = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, next, end);
    b.ins().brif(
        fits,
        loops.vector_body,
        &[],
        loops.scalar_head,
        &[index.into()],
    );
    b.switch_to_block(loops.vector_body);
    let bytes = b.ins().ishl_imm(index, 2);
    for part in 0..UNROLL {
        let at = i32::try_from(part * LANES / UNROLL * 4).unwrap_or_default();
        let values = elements(&mut b, looped, &once.vector, Form::Vector, |b, operand| {
            let address = b.ins().iadd(operands[operand], bytes);
            b.ins().load(VECTOR, loose(), address, at)
        });
        store(&mut b, looped, &values, &outputs, bytes, at);
    }
    b.ins().jump(loops.vector_head, &[next.into()]);

    // The elements left, one at a time.
    b.switch_to_block(loops.scalar_head);
    let index = b.block_params(loops.scalar_head)[0];
    let before = b.ins().icmp(IntCC::UnsignedLessThan, index, end);
    b.ins()
        .brif(before, loops.scalar_body, &[], loops.exit, &[]);
    b.switch_to_block(loops.scalar_body);
    let bytes = b.ins().ishl_imm(index, 2);
    let values = elements(&mut b, looped, &once.scalar, Form::Scalar, |b, operand| {
        let address = b.ins().iadd(operands[operand], bytes);
        b.ins().load(types::F32, loose(), address, 0)
    });
    store(&mut b, looped, &values, &outputs, bytes, 0);
    let next = b.ins().iadd_imm(index, 1);
    b.ins().jump(loops.scalar_head, &[next.into()]);

    b.switch_to_block(loops.exit);
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize();
    Ok(())
}

/// Byte offset of the `index`-th address in an array of addresses.
fn offset(index: usize, pointer: Type) -> i32 {
    i32::try_from(index * pointer.bytes() as usize).unwrap_or(i32::MAX)
}

/// Element accesses: in bounds by construction, not necessarily aligned (an operand may be
/// a view starting anywhere in its tensor).
fn loose() -> MemFlags {
    MemFlags::new().with_notrap()
}

/// The blocks of the two loops.
struct Loops {
    vector_head: Block,
    vector_body: Block,
    scalar_head: Block,
    scalar_body: Block,
    exit: Block,
}

impl Loops {
    fn new(b: &mut FunctionBuilder<'_>, pointer: Type) -> Loops {
        let loops = Loops {
            vector_head: b.create_block(),
            vector_body: b.create_block(),
            scalar_head: b.create_block(),
            scalar_body: b.create_block(),
            exit: b.create_block(),
        };
        b.append_block_param(loops.vector_head, pointer);
        b.append_block_param(loops.scalar_head, pointer);
        loops
    }
}

/// The uniform steps' values, as one lane and as a vector (`None` for the other steps).
struct Once {
    scalar: Vec<Option<Value>>,
    vector: Vec<Option<Value>>,
}

impl Once {
    fn compute(
        b: &mut FunctionBuilder<'_>,
        looped: &Loop,
        uniform: &[bool],
        operands: &[Value],
    ) -> Once {
        let mut once = Once {
            scalar: vec![None; looped.steps.len()],
            vector: vec![None; looped.steps.len()],
        };
        for (index, step) in looped.steps.iter().enumerate() {
            if !uniform[index] {
                continue;
            }
            if let Step::Input(operand) = *step {
                let value = b.ins().load(types::F32, loose(), operands[operand], 0);
                once.scalar[index] = Some(value);
                once.vector[index] = Some(b.ins().splat(VECTOR, value));
                continue;
            }
            for (form, values) in [
                (Form::Scalar, &mut once.scalar),
                (Form::Vector, &mut once.vector),
            ] {
                let arguments: Vec<Value> = step.operands().filter_map(|at| values[at]).collect();
                values[index] = Some(compute(b, form, *step, &arguments));
            }
        }
        once
    }
}

/// Every step's value for the elements at hand: uniform ones from `once`, operands read by
/// `load`, the rest computed.
fn elements(
    b: &mut FunctionBuilder<'_>,
    looped: &Loop,
    once: &[Option<Value>],
    form: Form,
    mut load: impl FnMut(&mut FunctionBuilder<'_>, usize) -> Value,
) -> Vec<Value> {
    let mut values: Vec<Value> = Vec::with_capacity(looped.steps.len());
    for (index, step) in looped.steps.iter().enumerate() {
        let value = match (once[index], *step) {
            (Some(value), _) => value,
            (None, Step::Input(operand)) => load(b, operand),
            (None, step) => {
                let arguments: Vec<Value> = step.operands().map(|at| values[at]).collect();
                compute(b, form, step, &arguments)
            }
        };
        values.push(value);
    }
    values
}

/// Stores the output steps' values at `bytes + at` past each output's address.
fn store(
    b: &mut FunctionBuilder<'_>,
    looped: &Loop,
    values: &[Value],
    outputs: &[Value],
    bytes: Value,
    at: i32,
) {
    for (&step, &output) in looped.outputs.iter().zip(outputs) {
        let address = b.ins().iadd(output, bytes);
        b.ins().store(loose(), values[step], address, at);
    }
}

/// The instructions of one step (not an operand read) on its operands' values.
fn compute(b: &mut FunctionBuilder<'_>, form: Form, step: Step, arguments: &[Value]) -> Value {
    let argument = |index: usize| arguments[index];
    match step {
        Step::Input(_) => argument(0),
        Step::Float(bits) => float(b, form, bits),
        Step::Bool(value) => mask(b, form, value),
        Step::Float1(op, _) => float1(b, form, op, argument(0)),
        Step::Float2(op, ..) => float2(b, form, op, argument(0), argument(1)),
        Step::Compare(op, ..) => {
            let condition = match op {
                Compare::Eq => FloatCC::Equal,
                Compare::Ne => FloatCC::NotEqual,
                Compare::Lt => FloatCC::LessThan,
                Compare::Le => FloatCC::LessThanOrEqual,
                Compare::Gt => FloatCC::GreaterThan,
                Compare::Ge => FloatCC::GreaterThanOrEqual,
            };
            b.ins().fcmp(condition, argument(0), argument(1))
        }
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

fn float1(b: &mut FunctionBuilder<'_>, form: Form, op: Float1, x: Value) -> Value {
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
