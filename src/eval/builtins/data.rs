//! Data-dependent builtins: `item`, `tolist`, `nonzero`, `masked_select`,
//! `repeat_interleave` and `unique`.

use super::on_tensor;
use crate::diag::{Code, Diagnostic, Result};
use crate::dtype::{DType, Scalar};
use crate::eval::Interpreter;
use crate::eval::args::CallArgs;
use crate::eval::limits;
use crate::eval::tensor::Operand;
use crate::eval::value::{TensorValue, Value};
use crate::graph::op::Op;
use crate::source::Span;

/// The host value of a tensor element: `int` for i64, `float` for f32, `bool` for bool.
pub fn scalar_value(scalar: Scalar) -> Value {
    match scalar {
        Scalar::Bool(b) => Value::Bool(b),
        Scalar::Int(i) => Value::Int(i),
        Scalar::Float(x) => Value::Float(x),
    }
}

pub fn item(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("item", &["x"])?;
    let tensor = args.tensor(0)?;
    interpreter.tensor_item(&tensor, args.span)
}

/// `tolist()`: nested lists following the shape (a 0-d tensor gives its element).
pub fn tolist(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("tolist", &["x"])?;
    let tensor = args.tensor(0)?;
    tensor_list(interpreter, &tensor, args.span)
}

/// The elements of `tensor` as nested lists of host values (symbolic while tracing).
pub fn tensor_list(
    interpreter: &mut Interpreter,
    tensor: &TensorValue,
    span: crate::source::Span,
) -> Result<Value> {
    let Some(data) = interpreter.host_data(tensor, span)? else {
        return interpreter.trace_tolist(tensor, span);
    };
    check_list_values(data.shape(), limits::LIST_LENGTH, span)?;
    crate::eval::operators::reserve_values(data.numel().saturating_mul(2), span)?;
    let elements: Vec<Value> = data.elements().map(scalar_value).collect();
    Ok(nest(data.shape(), &elements))
}

/// Refuses a `tolist()` that would make more than `limit` values (lists and elements: a
/// tensor of shape `[a, b]` makes `a` lists and `a * b` elements).
pub fn check_list_values(shape: &[usize], limit: usize, span: Span) -> Result<()> {
    let mut values = 0u128;
    let mut count = 1u128;
    for &size in shape {
        count = count.saturating_mul(size as u128);
        values = values.saturating_add(count);
    }
    if values <= limit as u128 {
        return Ok(());
    }
    let help = if limit < limits::LIST_LENGTH {
        "in a compiled function every element becomes a symbol; compute with tensor operations instead, or call tolist() outside @compile"
    } else {
        "index or reduce the tensor first, or compute with tensor operations"
    };
    Err(Diagnostic::error(
        Code::ValueError,
        span,
        format!("tolist() of a tensor of shape {shape:?} would make {values} values (the limit is {limit})"),
    )
    .with_help(help)
    .into())
}

fn nest(shape: &[usize], elements: &[Value]) -> Value {
    match shape.split_first() {
        None => elements[0].clone(),
        Some((&rows, inner)) => {
            let stride = inner.iter().product::<usize>();
            Value::list(
                (0..rows)
                    .map(|row| nest(inner, &elements[row * stride..(row + 1) * stride]))
                    .collect(),
            )
        }
    }
}

pub fn nonzero(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    on_tensor(interpreter, args, "nonzero", Op::Nonzero)
}

pub fn unique(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    on_tensor(interpreter, args, "unique", Op::Unique)
}

pub fn masked_select(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("masked_select", &["x", "mask"])?;
    let operands = vec![
        Operand::Tensor(args.tensor(0)?),
        Operand::Tensor(args.tensor(1)?),
    ];
    interpreter.apply_one(Op::MaskedSelect, operands, args.span)
}

/// `repeat_interleave(counts)` gives indices repeated by counts; `x.repeat_interleave(counts,
/// dim = d)` repeats `x`'s elements (flattened when `dim` is absent).
pub fn repeat_interleave(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("repeat_interleave", &["x", "repeats", "dim"])?;
    let x = args.tensor(0)?;
    let Some(repeats) = args.get(1) else {
        return interpreter.apply_one(Op::RepeatIndices, vec![Operand::Tensor(x)], args.span);
    };
    let counts = match repeats {
        Value::Tensor(counts) => counts.clone(),
        Value::Int(count) => {
            TensorValue::new(crate::backend::host::Tensor::scalar(Scalar::Int(*count)))
        }
        // While tracing: a count read from data (`item()`), or arithmetic on one, becomes a
        // one-element tensor of the graph, which the kernel checks as it checks any count.
        Value::SymInt(count) => {
            super::core::sym_int_tensor(interpreter, *count, DType::I64, args.span(1))?
        }
        Value::RuntimeScalar(count) if count.dtype() == DType::I64 => count.clone(),
        other => return Err(args.wrong(1, "an int or an i64 tensor", other)),
    };
    let dim = match args.get(2) {
        Some(_) => Some(args.dim(interpreter, 2, x.ndim())?),
        None => None,
    };
    let op = Op::RepeatInterleave { dim };
    interpreter.apply_one(
        op,
        vec![Operand::Tensor(x), Operand::Tensor(counts)],
        args.span,
    )
}
