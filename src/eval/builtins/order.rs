//! Sorting builtins: `sort`, `argsort` and `topk`, as in PyTorch. `sort` and `topk` return
//! the list `[values, indices]` (PyTorch's named tuple, unpacked with `let [v, i] = …`).

use crate::diag::{Code, Result};
use crate::eval::args::{Bound, CallArgs, normalize_dim};
use crate::eval::tensor::Operand;
use crate::eval::value::{TensorValue, Value};
use crate::eval::{Interpreter, error};
use crate::graph::op::Op;

/// `sort(x, dim = -1, descending = false, stable = false)`: the values and their positions,
/// both as tensors of `x`'s shape. Sorting is always stable.
pub fn sort(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("sort", &["x", "dim", "descending", "stable"])?;
    let outputs = sorted(interpreter, &args)?;
    Ok(Value::list(
        outputs.into_iter().map(Value::Tensor).collect(),
    ))
}

/// `argsort(x, dim = -1, descending = false, stable = false)`: the positions `sort` gives.
pub fn argsort(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("argsort", &["x", "dim", "descending", "stable"])?;
    let mut outputs = sorted(interpreter, &args)?;
    Ok(Value::Tensor(outputs.swap_remove(1)))
}

/// The outputs of `sort` for arguments `x, dim, descending, stable`. A 0-d tensor sorts as
/// one element (dim 0 or -1), as in PyTorch.
fn sorted(interpreter: &mut Interpreter, args: &Bound) -> Result<Vec<TensorValue>> {
    let tensor = args.tensor(0)?;
    let scalar = tensor.ndim() == 0;
    let dim = args.int_or(interpreter, 1, -1)?;
    let dim = normalize_dim(dim, tensor.ndim().max(1), args.span(1))?;
    let descending = args.bool_or(2, false)?;
    // Sorting is always stable; `stable` is accepted for PyTorch's signature.
    args.bool_or(3, false)?;
    let input = if scalar {
        unsqueezed(interpreter, tensor, args)?
    } else {
        tensor
    };
    let op = Op::Sort { dim, descending };
    let outputs = interpreter.apply(op, vec![Operand::Tensor(input)], args.span)?;
    if !scalar {
        return Ok(outputs);
    }
    let mut squeezed = Vec::with_capacity(outputs.len());
    for output in outputs {
        let op = Op::Squeeze { dims: vec![0] };
        squeezed.extend(interpreter.apply(op, vec![Operand::Tensor(output)], args.span)?);
    }
    Ok(squeezed)
}

fn unsqueezed(
    interpreter: &mut Interpreter,
    tensor: TensorValue,
    args: &Bound,
) -> Result<TensorValue> {
    let op = Op::Unsqueeze { dim: 0 };
    let mut outputs = interpreter.apply(op, vec![Operand::Tensor(tensor)], args.span)?;
    Ok(outputs.swap_remove(0))
}

/// `topk(x, k, dim = -1, largest = true, sorted = true)`: the `k` largest (or smallest)
/// elements along `dim` in order, with their positions. `k` may be a size read from data;
/// ties go to the lower position, and `NaN` counts as the largest value.
pub fn topk(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("topk", &["x", "k", "dim", "largest", "sorted"])?;
    let tensor = args.tensor(0)?;
    if tensor.ndim() == 0 {
        return Err(error(
            Code::ShapeError,
            args.span(0),
            "topk() needs a tensor with dimensions",
        )
        .with_help("make it 1-d first: x.reshape(1).topk(k)")
        .into());
    }
    let k = args.size(1)?;
    let dim = args.int_or(interpreter, 2, -1)?;
    let dim = normalize_dim(dim, tensor.ndim(), args.span(2))?;
    let largest = args.bool_or(3, true)?;
    // Results always come sorted; `sorted = false` allows any order, so it is accepted.
    args.bool_or(4, true)?;
    let op = Op::TopK { k, dim, largest };
    let outputs = interpreter.apply(op, vec![Operand::Tensor(tensor)], args.span)?;
    Ok(Value::list(
        outputs.into_iter().map(Value::Tensor).collect(),
    ))
}
