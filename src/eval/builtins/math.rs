//! Elementwise functions, casts, reductions, scans and matmul.

use super::core::decided_operand;
use super::on_tensor;
use crate::diag::{Code, Result};
use crate::dtype::DType;
use crate::eval::args::{Bound, CallArgs, normalize_dim};
use crate::eval::tensor::Operand;
use crate::eval::value::Value;
use crate::eval::{Interpreter, error};
use crate::graph::op::{BinaryOp, Op, ReduceOp, UnaryOp};

fn unary(
    interpreter: &mut Interpreter,
    args: CallArgs,
    name: &'static str,
    op: UnaryOp,
) -> Result<Value> {
    on_tensor(interpreter, args, name, Op::Unary(op))
}

pub fn exp(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    unary(interpreter, args, "exp", UnaryOp::Exp)
}

pub fn log(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    unary(interpreter, args, "log", UnaryOp::Log)
}

pub fn sqrt(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    unary(interpreter, args, "sqrt", UnaryOp::Sqrt)
}

pub fn relu(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    unary(interpreter, args, "relu", UnaryOp::Relu)
}

pub fn sigmoid(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    unary(interpreter, args, "sigmoid", UnaryOp::Sigmoid)
}

pub fn tanh(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    unary(interpreter, args, "tanh", UnaryOp::Tanh)
}

pub fn neg(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    unary(interpreter, args, "neg", UnaryOp::Neg)
}

pub fn isnan(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    unary(interpreter, args, "isnan", UnaryOp::IsNan)
}

pub fn isinf(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    unary(interpreter, args, "isinf", UnaryOp::IsInf)
}

/// The operand at `index`: a tensor or a number.
fn operand(interpreter: &mut Interpreter, args: &Bound, index: usize) -> Result<Operand> {
    let value = args.required(index)?;
    decided_operand(interpreter, value, args.span(index))?
        .ok_or_else(|| args.wrong(index, "a tensor or a number", value))
}

/// A binary elementwise operation on arguments 0 and 1.
pub fn elementwise_pair(
    interpreter: &mut Interpreter,
    args: &Bound,
    op: BinaryOp,
) -> Result<Value> {
    let operands = vec![
        operand(interpreter, args, 0)?,
        operand(interpreter, args, 1)?,
    ];
    interpreter.apply_one(Op::Binary(op), operands, args.span)
}

pub fn maximum(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("maximum", &["a", "b"])?;
    elementwise_pair(interpreter, &args, BinaryOp::Maximum)
}

pub fn minimum(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("minimum", &["a", "b"])?;
    elementwise_pair(interpreter, &args, BinaryOp::Minimum)
}

pub fn where_(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("where", &["condition", "x", "y"])?;
    let condition = Operand::Tensor(args.tensor(0)?);
    let operands = vec![
        condition,
        operand(interpreter, &args, 1)?,
        operand(interpreter, &args, 2)?,
    ];
    interpreter.apply_one(Op::Where, operands, args.span)
}

pub fn clamp(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("clamp", &["x", "min", "max"])?;
    let mut operands = vec![Operand::Tensor(args.tensor(0)?)];
    for index in [1, 2] {
        if args.get(index).is_some() {
            operands.push(operand(interpreter, &args, index)?);
        }
    }
    if operands.len() == 1 {
        return Err(error(
            Code::TypeError,
            args.span,
            "clamp() needs `min`, `max` or both",
        )
        .into());
    }
    let op = Op::Clamp {
        min: args.get(1).is_some(),
        max: args.get(2).is_some(),
    };
    interpreter.apply_one(op, operands, args.span)
}

fn cast(
    interpreter: &mut Interpreter,
    args: CallArgs,
    name: &'static str,
    dtype: DType,
) -> Result<Value> {
    on_tensor(interpreter, args, name, Op::Cast(dtype))
}

pub fn long(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    cast(interpreter, args, "long", DType::I64)
}

pub fn bool(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    cast(interpreter, args, "bool", DType::Bool)
}

pub fn to(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("to", &["x", "dtype"])?;
    let tensor = args.tensor(0)?;
    let Some(dtype) = args.dtype(1)? else {
        return Err(error(
            Code::TypeError,
            args.span,
            "to() needs a dtype: f32, i64 or bool",
        )
        .into());
    };
    interpreter.apply_one(Op::Cast(dtype), vec![Operand::Tensor(tensor)], args.span)
}

/// A reduction of argument 0 over the argument at `dim_index` (an int, a list of ints, or
/// absent for every dimension), with `keepdim` the argument after it.
pub fn reduction(
    interpreter: &mut Interpreter,
    args: &Bound,
    op: ReduceOp,
    dim_index: usize,
) -> Result<Value> {
    let keepdim = args.bool_or(dim_index + 1, false)?;
    reduce_over(interpreter, args, op, dim_index, keepdim)
}

/// Reduces argument 0 over the dims given by argument `dim_index`.
pub fn reduce_over(
    interpreter: &mut Interpreter,
    args: &Bound,
    op: ReduceOp,
    dim_index: usize,
    keepdim: bool,
) -> Result<Value> {
    let tensor = args.tensor(0)?;
    let dims = reduction_dims(interpreter, args, dim_index, tensor.ndim(), op)?;
    let op = Op::Reduce { op, dims, keepdim };
    interpreter.apply_one(op, vec![Operand::Tensor(tensor)], args.span)
}

/// The dims a reduction runs over: `None` for every dim (no argument, or an empty list, as
/// in PyTorch), else distinct dims in range. Every reduction but `argmax` and `argmin` takes
/// a list, whose indices would be ambiguous.
pub fn reduction_dims(
    interpreter: &mut Interpreter,
    args: &Bound,
    index: usize,
    ndim: usize,
    op: ReduceOp,
) -> Result<Option<Vec<usize>>> {
    let span = args.span(index);
    let many = !matches!(op, ReduceOp::Argmax | ReduceOp::Argmin);
    // A dim computed from sizes while tracing is decided (or guarded on) as an int.
    let mut int = |value: &Value| interpreter.concrete(value, span, "a dim");
    let dims = match args.get(index) {
        None => return Ok(None),
        Some(value @ (Value::Int(_) | Value::SymInt(_))) => {
            let dim = int(value)?.unwrap_or_default();
            vec![normalize_dim(dim, ndim, span)?]
        }
        Some(Value::List(items)) if items.is_empty() && many => return Ok(None),
        Some(Value::List(_)) if !many => {
            let name = args.function();
            return Err(error(
                Code::TypeError,
                span,
                format!("{name}() takes one dim, not a list"),
            )
            .with_help(format!(
                "flatten the dims first, e.g. x.flatten(0, 1).{name}(0)"
            ))
            .into());
        }
        Some(Value::List(items)) => {
            let mut dims = Vec::new();
            for item in items.iter() {
                let Some(dim) = int(item)? else {
                    return Err(args.wrong(index, "an int or a list of ints", item));
                };
                let dim = normalize_dim(dim, ndim, span)?;
                if dims.contains(&dim) {
                    return Err(error(
                        Code::ShapeError,
                        span,
                        format!("dimension {dim} appears twice"),
                    )
                    .into());
                }
                dims.push(dim);
            }
            dims
        }
        Some(other) if many => return Err(args.wrong(index, "an int or a list of ints", other)),
        Some(other) => return Err(args.wrong(index, "an int", other)),
    };
    Ok(Some(dims))
}

fn reduce(
    interpreter: &mut Interpreter,
    args: CallArgs,
    name: &'static str,
    op: ReduceOp,
) -> Result<Value> {
    let args = args.bind(name, &["x", "dim", "keepdim"])?;
    reduction(interpreter, &args, op, 1)
}

pub fn sum(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    reduce(interpreter, args, "sum", ReduceOp::Sum)
}

pub fn mean(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    reduce(interpreter, args, "mean", ReduceOp::Mean)
}

pub fn prod(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    reduce(interpreter, args, "prod", ReduceOp::Prod)
}

pub fn all(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    reduce(interpreter, args, "all", ReduceOp::All)
}

pub fn any(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    reduce(interpreter, args, "any", ReduceOp::Any)
}

pub fn argmax(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    reduce(interpreter, args, "argmax", ReduceOp::Argmax)
}

pub fn argmin(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    reduce(interpreter, args, "argmin", ReduceOp::Argmin)
}

/// `amax(x, dim = …, keepdim = …)`: PyTorch's name for the largest values over any dims.
pub fn amax(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    reduce(interpreter, args, "amax", ReduceOp::Max)
}

pub fn amin(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    reduce(interpreter, args, "amin", ReduceOp::Min)
}

pub fn cumsum(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("cumsum", &["x", "dim"])?;
    let tensor = args.tensor(0)?;
    let dim = args.dim(interpreter, 1, tensor.ndim())?;
    interpreter.apply_one(Op::Cumsum { dim }, vec![Operand::Tensor(tensor)], args.span)
}

pub fn diff(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("diff", &["x", "dim"])?;
    let tensor = args.tensor(0)?;
    let dim = args.dim_or(interpreter, 1, tensor.ndim(), -1)?;
    interpreter.apply_one(Op::Diff { dim }, vec![Operand::Tensor(tensor)], args.span)
}

pub fn matmul(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("matmul", &["a", "b"])?;
    let operands = vec![
        Operand::Tensor(args.tensor(0)?),
        Operand::Tensor(args.tensor(1)?),
    ];
    interpreter.apply_one(Op::MatMul, operands, args.span)
}
