//! `var` and `std` as PyTorch defines them (Bessel's correction by default), lowered to
//! `mean`, `sub`, `mul`, `sum`, `div` and `sqrt`: they need no op of their own, so every
//! backend and the fusion pass handle them already (a row `var` is one fused kernel).

use super::math::reduction_dims;
use crate::diag::{Code, Result};
use crate::dtype::{DType, Scalar};
use crate::eval::args::{Bound, CallArgs};
use crate::eval::tensor::{Operand, rule_error};
use crate::eval::value::{TensorValue, Value};
use crate::eval::{Interpreter, error};
use crate::graph::op::{BinaryOp, Op, ReduceOp, UnaryOp};
use crate::graph::shape::{Dim, numel};

/// `var(x, dim = none, unbiased = none, keepdim = false, correction = none)`.
pub fn var(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("var", &["x", "dim", "unbiased", "keepdim", "correction"])?;
    variance(interpreter, &args).map(Value::Tensor)
}

/// `std(x, …)`: the square root of `var(x, …)`.
pub fn std(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("std", &["x", "dim", "unbiased", "keepdim", "correction"])?;
    let variance = variance(interpreter, &args)?;
    let op = Op::Unary(UnaryOp::Sqrt);
    interpreter.apply_one(op, vec![Operand::Tensor(variance)], args.span)
}

/// The sum of squared deviations from the mean over the reduced dims, divided by
/// `max(count - correction, 0)`: no elements, or too few for the correction, give `nan`
/// or `inf` as in PyTorch.
fn variance(interpreter: &mut Interpreter, args: &Bound) -> Result<TensorValue> {
    let name = args.function();
    let tensor = args.tensor(0)?;
    if tensor.dtype() != DType::F32 {
        return Err(error(
            Code::TypeError,
            args.span(0),
            format!("{name}() needs an f32 tensor, got {}", tensor.meta()),
        )
        .with_help(format!("convert first: x.float().{name}()"))
        .into());
    }
    // `x.var(false)`: PyTorch's overload taking only `unbiased`.
    let (dim_index, unbiased) = match args.get(1) {
        Some(Value::Bool(flag)) => (None, Some(*flag)),
        _ => (Some(1), None),
    };
    let dims = match dim_index {
        Some(index) => reduction_dims(interpreter, args, index, tensor.ndim(), ReduceOp::Sum)?,
        None => None,
    };
    let correction = correction(args, unbiased)?;
    let keepdim = args.bool_or(3, false)?;
    let sizes = tensor.dims();
    let reduced: Vec<Dim> = match &dims {
        Some(dims) => dims.iter().map(|d| sizes[*d]).collect(),
        None => sizes,
    };
    let divisor = interpreter
        .with_any_sizes(args.span, |any| {
            let count = numel(any, &reduced)?;
            let free = any.sub(count, Dim::Known(correction))?;
            Ok(any.max(free, Dim::ZERO))
        })
        .map_err(|rule| rule_error(rule, args.span))?;
    let span = args.span;
    let mut run = |op: Op, operands: Vec<Operand>| -> Result<TensorValue> {
        let mut outputs = interpreter.apply(op, operands, span)?;
        Ok(outputs.swap_remove(0))
    };
    let mean = run(
        Op::Reduce {
            op: ReduceOp::Mean,
            dims: dims.clone(),
            keepdim: true,
        },
        vec![Operand::Tensor(tensor.clone())],
    )?;
    let centered = run(
        Op::Binary(BinaryOp::Sub),
        vec![Operand::Tensor(tensor), Operand::Tensor(mean)],
    )?;
    let squares = run(
        Op::Binary(BinaryOp::Mul),
        vec![Operand::Tensor(centered.clone()), Operand::Tensor(centered)],
    )?;
    let total = run(
        Op::Reduce {
            op: ReduceOp::Sum,
            dims,
            keepdim,
        },
        vec![Operand::Tensor(squares)],
    )?;
    let divisor = match divisor {
        Dim::Known(value) => Operand::Scalar(Scalar::Int(value)),
        Dim::Sym(expr) => Operand::SymInt(expr),
    };
    run(
        Op::Binary(BinaryOp::Div),
        vec![Operand::Tensor(total), divisor],
    )
}

/// The correction: `correction = c` (an int), `unbiased = false` (0) or the default 1;
/// giving both is an error.
fn correction(args: &Bound, unbiased: Option<bool>) -> Result<i64> {
    let unbiased = match unbiased {
        Some(flag) => Some(flag),
        None => args.get(2).map(|_| args.bool_or(2, true)).transpose()?,
    };
    match (args.get(4), unbiased) {
        (None, None) => Ok(1),
        (None, Some(unbiased)) => Ok(i64::from(unbiased)),
        (Some(Value::Int(correction)), None) => Ok(*correction),
        (Some(other), None) => Err(args.wrong(4, "an int", other)),
        (Some(_), Some(_)) => Err(error(
            Code::TypeError,
            args.span(4),
            format!(
                "{}() takes `unbiased` or `correction`, not both",
                args.function()
            ),
        )
        .into()),
    }
}
