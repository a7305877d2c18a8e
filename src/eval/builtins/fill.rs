//! Builtins that make a tensor like another (`zeros_like`, `ones_like`, `full_like`,
//! `randn_like`), `masked_fill` and `clone`. None needs an op of its own: they lower to
//! `full`, `randn` and `where`, and `clone` is the tensor itself (values are immutable).

use super::core::decided_operand;
use crate::diag::{Code, Result};
use crate::dtype::{DType, Scalar};
use crate::eval::args::{Bound, CallArgs};
use crate::eval::tensor::Operand;
use crate::eval::value::Value;
use crate::eval::{Interpreter, error};
use crate::graph::op::Op;

/// `clone(x)`: values are immutable, so the copy is the tensor itself (no kernel runs).
pub fn clone(_: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("clone", &["x"])?;
    Ok(Value::Tensor(args.tensor(0)?))
}

/// A `full` of `x`'s sizes (symbolic while tracing) and of `dtype`, or `x`'s dtype.
fn full_like(
    interpreter: &mut Interpreter,
    args: &Bound,
    fill: Operand,
    dtype_index: usize,
) -> Result<Value> {
    let tensor = args.tensor(0)?;
    let dtype = args.dtype(dtype_index)?.unwrap_or(tensor.dtype());
    let op = Op::Full {
        shape: tensor.dims(),
        dtype,
    };
    interpreter.apply_one(op, vec![fill], args.span)
}

pub fn zeros_like(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("zeros_like", &["x", "dtype"])?;
    full_like(interpreter, &args, Operand::Scalar(Scalar::Int(0)), 1)
}

pub fn ones_like(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("ones_like", &["x", "dtype"])?;
    full_like(interpreter, &args, Operand::Scalar(Scalar::Int(1)), 1)
}

/// `full_like(x, value, dtype = …)`: the value converted to `x`'s dtype unless `dtype` says
/// otherwise (`full_like(i64_tensor, 2.7)` holds 2), as in PyTorch.
pub fn full_like_builtin(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("full_like", &["x", "fill_value", "dtype"])?;
    let value = args.required(1)?;
    let fill = match value {
        Value::Tensor(_) => None,
        other => decided_operand(interpreter, other, args.span(1))?,
    };
    let fill = fill.ok_or_else(|| args.wrong(1, "a number or bool", value))?;
    full_like(interpreter, &args, fill, 2)
}

/// `randn_like(x)`: standard normal `f32` samples of `x`'s sizes.
pub fn randn_like(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("randn_like", &["x", "dtype"])?;
    let tensor = args.tensor(0)?;
    let dtype = args.dtype(1)?.unwrap_or(tensor.dtype());
    if dtype != DType::F32 {
        return Err(error(
            Code::TypeError,
            args.span,
            format!("randn_like() makes f32 samples, not {dtype}"),
        )
        .with_help("ask for f32: randn_like(x, dtype = f32)")
        .into());
    }
    let op = Op::Randn {
        shape: tensor.dims(),
    };
    interpreter.apply_one(op, vec![], args.span)
}

/// `masked_fill(x, mask, value)`: `value` where `mask` is true, `x` elsewhere, in `x`'s dtype
/// (the value is converted, as PyTorch does); `mask` is `bool` and broadcasts with `x`.
/// Lowered to `where(mask, value, x)`.
pub fn masked_fill(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("masked_fill", &["x", "mask", "value"])?;
    let tensor = args.tensor(0)?;
    let mask = args.tensor(1)?;
    if mask.dtype() != DType::Bool {
        return Err(error(
            Code::TypeError,
            args.span(1),
            format!("masked_fill() needs a bool mask, got {}", mask.meta()),
        )
        .with_help("compare to get a bool mask, e.g. x.masked_fill(m != 0, value)")
        .into());
    }
    let fill = fill_value(interpreter, &args, tensor.dtype())?;
    let operands = vec![Operand::Tensor(mask), fill, Operand::Tensor(tensor)];
    interpreter.apply_one(Op::Where, operands, args.span)
}

/// The value of `masked_fill` in the tensor's `dtype`: a host number converted on the host
/// (as a cast converts: floats truncate toward zero, anything non-zero is `true`), anything
/// else by a cast when it would otherwise promote the result.
fn fill_value(interpreter: &mut Interpreter, args: &Bound, dtype: DType) -> Result<Operand> {
    let value = args.required(2)?;
    if let Value::Tensor(tensor) = value
        && tensor.ndim() != 0
    {
        return Err(error(
            Code::ShapeError,
            args.span(2),
            format!(
                "masked_fill() takes a number or a 0-d tensor as the value, got {}",
                tensor.meta()
            ),
        )
        .into());
    }
    let fill = decided_operand(interpreter, value, args.span(2))?
        .ok_or_else(|| args.wrong(2, "a number or bool", value))?;
    if fill.meta().dtype <= dtype {
        return Ok(fill);
    }
    Ok(match fill {
        Operand::Scalar(scalar) => Operand::Scalar(match dtype {
            DType::Bool => Scalar::Bool(scalar.as_bool()),
            DType::I64 => Scalar::Int(scalar.as_i64()),
            DType::F32 => Scalar::Float(scalar.as_f64()),
        }),
        other => {
            let mut cast = interpreter.apply(Op::Cast(dtype), vec![other], args.span)?;
            Operand::Tensor(cast.swap_remove(0))
        }
    })
}
