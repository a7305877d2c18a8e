//! A loop as Cranelift IR: one function that computes elements `start..end` of every output.
//!
//! The function takes the operands' addresses, the outputs' addresses and the range. Values
//! the same for every element are computed once, before the loop. The loop then takes
//! [`LANES`] elements at a time in four vectors (independent chains the processor overlaps),
//! and one element at a time for the rest; each step's instructions come from `steps.rs`.
//! Floats are stored as they are; masks as one byte each, 0 or 1 (a `bool`).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, Block, Function, InstBuilder, MemFlags, Signature, Type, Value, types,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

use super::lower::{Loop, Step};
use super::steps::{Form, Host, VECTOR, compute};

/// Elements per iteration of the vector loop: four vectors of four `f32`.
const LANES: i64 = 16;

/// Vectors per iteration: four, whose masks narrow into one vector of sixteen bytes.
const UNROLL: i64 = 4;

/// The signature: operand addresses, output addresses, start, end.
pub(super) fn signature(mut signature: Signature, pointer: Type) -> Signature {
    signature.params.extend([AbiParam::new(pointer); 4]);
    signature
}

/// Writes the body of `function` computing `looped`; `Err` when the function does not have
/// the parameters of [`signature`].
pub(super) fn define(
    looped: &Loop,
    function: &mut Function,
    context: &mut FunctionBuilderContext,
    host: Host,
) -> Result<(), String> {
    let mut b = FunctionBuilder::new(function, context);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let &[operands, outputs, start, end] = b.block_params(entry) else {
        return Err("a native loop takes four parameters".into());
    };
    let frame = Frame::new(&mut b, host, looped, operands, outputs);
    let loops = Loops::new(&mut b, host.pointer);
    b.ins().jump(loops.vector_head, &[start.into()]);
    vector_loop(&mut b, &frame, &loops, end);
    scalar_loop(&mut b, &frame, &loops, end);
    b.switch_to_block(loops.exit);
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize();
    Ok(())
}

/// What both loops read: the loop, the operands' and outputs' addresses, and the uniform
/// steps' values.
struct Frame<'l> {
    host: Host,
    looped: &'l Loop,
    operands: Vec<Value>,
    outputs: Vec<Value>,
    once: Once,
}

impl<'l> Frame<'l> {
    /// Loads the addresses from their arrays and computes the uniform steps.
    fn new(
        b: &mut FunctionBuilder<'_>,
        host: Host,
        looped: &'l Loop,
        operands: Value,
        outputs: Value,
    ) -> Frame<'l> {
        let mut addresses = |array: Value, count: usize| -> Vec<Value> {
            (0..count)
                .map(|index| {
                    let at = offset(index, host.pointer);
                    b.ins().load(host.pointer, MemFlags::trusted(), array, at)
                })
                .collect()
        };
        let operands = addresses(operands, looped.whole.len());
        let outputs = addresses(outputs, looped.outputs.len());
        let once = Once::compute(b, host, looped, &looped.uniform(), &operands);
        Frame {
            host,
            looped,
            operands,
            outputs,
            once,
        }
    }
}

/// [`LANES`] elements an iteration, while a whole iteration fits before `end`.
fn vector_loop(b: &mut FunctionBuilder<'_>, frame: &Frame<'_>, loops: &Loops, end: Value) {
    b.switch_to_block(loops.vector_head);
    let index = b.block_params(loops.vector_head)[0];
    let next = b.ins().iadd_imm(index, LANES);
    let fits = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, next, end);
    let rest = [index.into()];
    b.ins()
        .brif(fits, loops.vector_body, &[], loops.scalar_head, &rest);
    b.switch_to_block(loops.vector_body);
    let bytes = b.ins().ishl_imm(index, 2);
    let parts: Vec<Vec<Value>> = (0..UNROLL)
        .map(|part| {
            let at = vector_offset(part);
            elements(b, frame, &frame.once.vector, Form::Vector, |b, operand| {
                let address = b.ins().iadd(frame.operands[operand], bytes);
                b.ins().load(VECTOR, loose(), address, at)
            })
        })
        .collect();
    store_vectors(b, frame, &parts, index);
    b.ins().jump(loops.vector_head, &[next.into()]);
}

/// The elements left before `end`, one at a time.
fn scalar_loop(b: &mut FunctionBuilder<'_>, frame: &Frame<'_>, loops: &Loops, end: Value) {
    b.switch_to_block(loops.scalar_head);
    let index = b.block_params(loops.scalar_head)[0];
    let before = b.ins().icmp(IntCC::UnsignedLessThan, index, end);
    b.ins()
        .brif(before, loops.scalar_body, &[], loops.exit, &[]);
    b.switch_to_block(loops.scalar_body);
    let bytes = b.ins().ishl_imm(index, 2);
    let values = elements(b, frame, &frame.once.scalar, Form::Scalar, |b, operand| {
        let address = b.ins().iadd(frame.operands[operand], bytes);
        b.ins().load(types::F32, loose(), address, 0)
    });
    for (&step, &output) in frame.looped.outputs.iter().zip(&frame.outputs) {
        // A float is four bytes; a mask, 0 or 1 already, is stored as one byte (a `bool`).
        let stride = if frame.looped.steps[step].is_mask() {
            0
        } else {
            2
        };
        let offset = b.ins().ishl_imm(index, stride);
        let address = b.ins().iadd(output, offset);
        b.ins().store(loose(), values[step], address, 0);
    }
    let next = b.ins().iadd_imm(index, 1);
    b.ins().jump(loops.scalar_head, &[next.into()]);
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
        host: Host,
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
                values[index] = Some(compute(b, host, form, *step, &arguments));
            }
        }
        once
    }
}

/// Every step's value for the elements at hand: uniform ones from `once`, operands read by
/// `load`, the rest computed.
fn elements(
    b: &mut FunctionBuilder<'_>,
    frame: &Frame<'_>,
    once: &[Option<Value>],
    form: Form,
    mut load: impl FnMut(&mut FunctionBuilder<'_>, usize) -> Value,
) -> Vec<Value> {
    let mut values: Vec<Value> = Vec::with_capacity(frame.looped.steps.len());
    for (index, step) in frame.looped.steps.iter().enumerate() {
        let value = match (once[index], *step) {
            (Some(value), _) => value,
            (None, Step::Input(operand)) => load(b, operand),
            (None, step) => {
                let arguments: Vec<Value> = step.operands().map(|at| values[at]).collect();
                compute(b, frame.host, form, step, &arguments)
            }
        };
        values.push(value);
    }
    values
}

/// The byte offset of a part of the vector loop's iteration in an `f32` array.
fn vector_offset(part: i64) -> i32 {
    i32::try_from(part * LANES / UNROLL * 4).unwrap_or_default()
}

/// Stores one iteration's outputs: each part's floats in place, and the parts' masks
/// narrowed from lanes of 32 bits to one byte each, 0 or 1 (a `bool`), in one store.
fn store_vectors(
    b: &mut FunctionBuilder<'_>,
    frame: &Frame<'_>,
    parts: &[Vec<Value>],
    index: Value,
) {
    for (&step, &output) in frame.looped.outputs.iter().zip(&frame.outputs) {
        if frame.looped.steps[step].is_mask() {
            let [first, second, third, fourth] = [0, 1, 2, 3].map(|part| parts[part][step]);
            let low = b.ins().snarrow(first, second);
            let high = b.ins().snarrow(third, fourth);
            let bytes = b.ins().snarrow(low, high);
            let one = b.ins().iconst(types::I8, 1);
            let ones = b.ins().splat(types::I8X16, one);
            let flags = b.ins().band(bytes, ones);
            let address = b.ins().iadd(output, index);
            b.ins().store(loose(), flags, address, 0);
            continue;
        }
        let bytes = b.ins().ishl_imm(index, 2);
        let address = b.ins().iadd(output, bytes);
        for (part, values) in (0..UNROLL).zip(parts) {
            b.ins()
                .store(loose(), values[step], address, vector_offset(part));
        }
    }
}
