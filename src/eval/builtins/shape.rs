//! Shape builtins: sizes, reshapes, permutations, joins, splits and selections.

use crate::diag::{Code, Result};
use crate::eval::args::{Bound, CallArgs, normalize_dim};
use crate::eval::tensor::Operand;
use crate::eval::value::{TensorValue, Value};
use crate::eval::{Interpreter, error};
use crate::graph::op::{IndexSpec, Op};
use crate::graph::shape::Dim;

/// Sizes that must be concrete (dimension indices, a chunk count): symbolic ones are guarded
/// on, or are data-dependent errors.
fn concrete_ints(
    interpreter: &mut Interpreter,
    sizes: Vec<Dim>,
    span: crate::source::Span,
) -> Result<Vec<i64>> {
    sizes
        .into_iter()
        .map(|size| match size {
            Dim::Known(value) => Ok(value),
            Dim::Sym(expr) => interpreter.concrete_int(expr, span, "this argument"),
        })
        .collect()
}

/// Sizes as a list of ints (symbolic ints while tracing).
pub fn size_list(sizes: &[Dim]) -> Value {
    Value::list(sizes.iter().map(|size| Value::from_dim(*size)).collect())
}

/// `x.size()` (all sizes, as a list) or `x.size(d)`.
pub fn size(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("size", &["x", "dim"])?;
    let tensor = args.tensor(0)?;
    let sizes = tensor.dims();
    match args.get(1) {
        None => Ok(size_list(&sizes)),
        Some(_) => {
            let dim = args.dim(interpreter, 1, tensor.ndim())?;
            Ok(Value::from_dim(sizes[dim]))
        }
    }
}

/// The product of sizes (symbolic while tracing).
fn product(interpreter: &mut Interpreter, sizes: &[Dim], span: crate::source::Span) -> Result<Dim> {
    interpreter
        .with_any_sizes(span, |any| crate::graph::shape::numel(any, sizes))
        .map_err(|rule| crate::eval::tensor::rule_error(rule, span))
}

pub fn numel(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("numel", &["x"])?;
    let sizes = args.tensor(0)?.dims();
    Ok(Value::from_dim(product(interpreter, &sizes, args.span)?))
}

pub fn dim(_: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("dim", &["x"])?;
    Ok(Value::Int(args.tensor(0)?.ndim() as i64))
}

fn apply_to(
    interpreter: &mut Interpreter,
    args: &Bound,
    tensor: TensorValue,
    op: Op,
) -> Result<Value> {
    interpreter.apply_one(op, vec![Operand::Tensor(tensor)], args.span)
}

/// `reshape(*shape)` and `view(*shape)`; one size may be -1.
pub fn reshape(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("reshape", &["x", "*shape"])?;
    let tensor = args.tensor(0)?;
    let shape = args.sizes()?;
    apply_to(interpreter, &args, tensor, Op::Reshape { shape })
}

/// `flatten(start_dim = 0, end_dim = -1)`: merges a range of dimensions.
pub fn flatten(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("flatten", &["x", "start_dim", "end_dim"])?;
    let tensor = args.tensor(0)?;
    let sizes = tensor.dims();
    if sizes.is_empty() {
        return apply_to(
            interpreter,
            &args,
            tensor,
            Op::Reshape {
                shape: vec![Dim::ONE],
            },
        );
    }
    let start = args.dim_or(interpreter, 1, sizes.len(), 0)?;
    let end = args.dim_or(interpreter, 2, sizes.len(), -1)?;
    if start > end {
        return Err(error(
            Code::ShapeError,
            args.span,
            format!("flatten() needs start_dim <= end_dim, got {start} and {end}"),
        )
        .into());
    }
    let merged = product(interpreter, &sizes[start..=end], args.span)?;
    let shape = sizes[..start]
        .iter()
        .chain(std::iter::once(&merged))
        .chain(&sizes[end + 1..])
        .copied()
        .collect();
    apply_to(interpreter, &args, tensor, Op::Reshape { shape })
}

pub fn unsqueeze(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("unsqueeze", &["x", "dim"])?;
    let tensor = args.tensor(0)?;
    let dim = normalize_dim(args.int(interpreter, 1)?, tensor.ndim() + 1, args.span(1))?;
    apply_to(interpreter, &args, tensor, Op::Unsqueeze { dim })
}

/// `squeeze()` removes every size-1 dimension; `squeeze(d)` only `d`, and only if it is 1.
pub fn squeeze(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("squeeze", &["x", "dim"])?;
    let tensor = args.tensor(0)?;
    let dims = match args.get(1) {
        None => (0..tensor.ndim()).collect(),
        Some(Value::List(_)) => concrete_ints(interpreter, args.size_list(1)?, args.span(1))?
            .into_iter()
            .map(|dim| normalize_dim(dim, tensor.ndim(), args.span(1)))
            .collect::<Result<_>>()?,
        Some(_) => vec![args.dim(interpreter, 1, tensor.ndim())?],
    };
    apply_to(interpreter, &args, tensor, Op::Squeeze { dims })
}

pub fn transpose(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("transpose", &["x", "dim0", "dim1"])?;
    let tensor = args.tensor(0)?;
    let first = args.dim(interpreter, 1, tensor.ndim())?;
    let second = args.dim(interpreter, 2, tensor.ndim())?;
    let mut dims: Vec<usize> = (0..tensor.ndim()).collect();
    dims.swap(first, second);
    apply_to(interpreter, &args, tensor, Op::Permute { dims })
}

pub fn permute(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("permute", &["x", "*dims"])?;
    let tensor = args.tensor(0)?;
    let dims = concrete_ints(interpreter, args.sizes()?, args.span)?
        .into_iter()
        .map(|dim| normalize_dim(dim, tensor.ndim(), args.span))
        .collect::<Result<_>>()?;
    apply_to(interpreter, &args, tensor, Op::Permute { dims })
}

/// `expand(*sizes)`; -1 keeps a dimension's size.
pub fn expand(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("expand", &["x", "*sizes"])?;
    let tensor = args.tensor(0)?;
    let shape = args.sizes()?;
    apply_to(interpreter, &args, tensor, Op::Expand { shape })
}

/// The tensors of a `cat`/`stack` argument: a non-empty list of tensors.
fn tensor_list(args: &Bound) -> Result<Vec<TensorValue>> {
    let value = args.required(0)?;
    let Value::List(items) = value else {
        return Err(args.wrong(0, "a list of tensors", value));
    };
    if items.is_empty() {
        return Err(error(
            Code::ValueError,
            args.span(0),
            format!("{}() needs at least one tensor", args.function()),
        )
        .into());
    }
    items
        .iter()
        .map(|item| match item {
            Value::Tensor(tensor) => Ok(tensor.clone()),
            other => Err(args.wrong(0, "a list of tensors", other)),
        })
        .collect()
}

pub fn cat(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("cat", &["tensors", "dim"])?;
    let tensors = tensor_list(&args)?;
    if tensors[0].ndim() == 0 {
        return Err(error(
            Code::ShapeError,
            args.span(0),
            "cat() cannot join 0-d tensors",
        )
        .with_help("use stack() to make a 1-d tensor from 0-d ones")
        .into());
    }
    let dim = args.dim_or(interpreter, 1, tensors[0].ndim(), 0)?;
    let operands: Vec<Operand> = tensors.into_iter().map(Operand::Tensor).collect();
    interpreter.apply_one(Op::Cat { dim }, operands, args.span)
}

pub fn stack(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("stack", &["tensors", "dim"])?;
    let tensors = tensor_list(&args)?;
    let dim = args.dim_or(interpreter, 1, tensors[0].ndim() + 1, 0)?;
    let operands: Vec<Operand> = tensors.into_iter().map(Operand::Tensor).collect();
    interpreter.apply_one(Op::Stack { dim }, operands, args.span)
}

/// `split(x, size, dim)` in chunks of `size`, or `split(x, [sizes], dim)`: a list of tensors.
pub fn split(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("split", &["x", "sizes", "dim"])?;
    let tensor = args.tensor(0)?;
    let dim = args.dim_or(interpreter, 2, tensor.ndim(), 0)?;
    let sizes = match args.required(1)? {
        Value::List(_) => {
            let sizes = args.size_list(1)?;
            too_many_parts(interpreter, sizes.len(), args.span(1))?;
            sizes
        }
        _ => {
            let chunk = args.int(interpreter, 1)?;
            if chunk <= 0 {
                return Err(error(
                    Code::ValueError,
                    args.span(1),
                    "split() chunk size must be positive",
                )
                .into());
            }
            let why = format!("splitting dimension {dim} into chunks");
            let length = concrete_ints(interpreter, vec![tensor.dims()[dim]], args.span).map_err(
                |mut diagnostic| {
                    diagnostic.notes.push(format!("{why} needs its size"));
                    diagnostic
                },
            )?[0];
            // An empty dimension still gives one (empty) chunk, as in PyTorch.
            let count = ((length + chunk - 1) / chunk).max(1);
            too_many_parts(
                interpreter,
                usize::try_from(count).unwrap_or(usize::MAX),
                args.span(1),
            )?;
            (0..count)
                .map(|k| Dim::Known(chunk.min(length - k * chunk)))
                .collect()
        }
    };
    let parts = interpreter.apply(
        Op::Split { sizes, dim },
        vec![Operand::Tensor(tensor)],
        args.span,
    )?;
    Ok(Value::list(parts.into_iter().map(Value::Tensor).collect()))
}

/// How `tensor_split` cuts: into a number of sections, or before each index.
enum Cuts {
    Sections(i64),
    Indices(Vec<Dim>),
}

/// `tensor_split(x, indices_or_sections, dim = 0)`, as `torch.tensor_split`: an int `n` gives
/// `n` parts whose sizes differ by at most one, the first ones larger; a list of indices (or
/// a 1-d `i64` tensor of them) cuts before each, clamped and wrapped like Python slices, so
/// indices read from data give parts of data-dependent size.
pub fn tensor_split(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("tensor_split", &["x", "indices_or_sections", "dim"])?;
    let tensor = args.tensor(0)?;
    if tensor.ndim() == 0 {
        return Err(error(
            Code::ShapeError,
            args.span(0),
            "tensor_split() needs a tensor with dimensions",
        )
        .into());
    }
    let dim = args.dim_or(interpreter, 2, tensor.ndim(), 0)?;
    let parts = match cuts(interpreter, &args)? {
        Cuts::Sections(count) => {
            let why = format!("splitting dimension {dim} into sections");
            let length = concrete_ints(interpreter, vec![tensor.dims()[dim]], args.span).map_err(
                |mut diagnostic| {
                    diagnostic.notes.push(format!("{why} needs its size"));
                    diagnostic
                },
            )?[0];
            let sizes = (0..count)
                .map(|part| Dim::Known((length - part + count - 1).div_euclid(count)))
                .collect();
            interpreter.apply(
                Op::Split { sizes, dim },
                vec![Operand::Tensor(tensor)],
                args.span,
            )?
        }
        Cuts::Indices(indices) => {
            too_many_parts(interpreter, indices.len() + 1, args.span(1))?;
            let mut parts = Vec::with_capacity(indices.len() + 1);
            let mut start = None;
            for stop in indices.into_iter().map(Some).chain([None]) {
                let mut items = vec![
                    IndexSpec::Slice {
                        start: None,
                        stop: None,
                        step: 1
                    };
                    dim
                ];
                items.push(IndexSpec::Slice {
                    start,
                    stop,
                    step: 1,
                });
                let operands = vec![Operand::Tensor(tensor.clone())];
                parts.extend(interpreter.apply(Op::Index { items }, operands, args.span)?);
                start = stop;
            }
            parts
        }
    };
    Ok(Value::list(parts.into_iter().map(Value::Tensor).collect()))
}

/// The second argument of `tensor_split`: an int, a list of ints, or an `i64` tensor of
/// either form.
fn cuts(interpreter: &mut Interpreter, args: &Bound) -> Result<Cuts> {
    let wanted = "a number of sections or a list of indices";
    let given = match args.required(1)? {
        Value::Tensor(tensor)
            if tensor.dtype() == crate::dtype::DType::I64 && tensor.ndim() <= 1 =>
        {
            super::data::tensor_list(interpreter, tensor, args.span(1))?
        }
        Value::Tensor(tensor) => {
            return Err(error(
                Code::TypeError,
                args.span(1),
                format!(
                    "tensor_split() takes indices or sections as a 0-d or 1-d i64 tensor, got {}",
                    tensor.meta()
                ),
            )
            .into());
        }
        other => other.clone(),
    };
    match &given {
        Value::List(items) => items
            .iter()
            .map(|item| item.as_dim().ok_or_else(|| args.wrong(1, wanted, item)))
            .collect::<Result<_>>()
            .map(Cuts::Indices),
        value => {
            let why = "the number of sections of tensor_split()";
            let Some(count) = interpreter.concrete(value, args.span(1), why)? else {
                return Err(args.wrong(1, wanted, value));
            };
            if count <= 0 {
                return Err(error(
                    Code::ValueError,
                    args.span(1),
                    format!("tensor_split() needs a positive number of sections, got {count}"),
                )
                .into());
            }
            too_many_parts(
                interpreter,
                usize::try_from(count).unwrap_or(usize::MAX),
                args.span(1),
            )?;
            Ok(Cuts::Sections(count))
        }
    }
}

/// A split into more parts than a list of tensors may hold
/// ([`Interpreter::tensor_list_limit`]) is refused before any part is made, and the parts'
/// memory is reserved.
fn too_many_parts(
    interpreter: &Interpreter,
    count: usize,
    span: crate::source::Span,
) -> Result<()> {
    let limit = interpreter.tensor_list_limit();
    if count > limit {
        let diagnostic = error(
            Code::ValueError,
            span,
            format!("a split into {count} parts is more than the {limit} a list may hold"),
        );
        return Err(if interpreter.tracer.is_some() {
            diagnostic.with_help("in a compiled function every part is an output of the trace: compute with operations on whole tensors, or split outside @compile").into()
        } else {
            diagnostic.into()
        });
    }
    crate::eval::operators::reserve_tensors(count, span)
}

pub fn narrow(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("narrow", &["x", "dim", "start", "length"])?;
    let tensor = args.tensor(0)?;
    let dim = args.dim(interpreter, 1, tensor.ndim())?;
    let op = Op::Narrow {
        dim,
        start: args.size(2)?,
        length: args.size(3)?,
    };
    apply_to(interpreter, &args, tensor, op)
}

fn indexed(interpreter: &mut Interpreter, args: CallArgs, name: &'static str) -> Result<Value> {
    let args = args.bind(name, &["x", "dim", "index"])?;
    let tensor = args.tensor(0)?;
    if tensor.ndim() == 0 {
        return Err(error(
            Code::ShapeError,
            args.span(0),
            format!("{name}() needs a tensor with dimensions"),
        )
        .into());
    }
    let dim = args.dim(interpreter, 1, tensor.ndim())?;
    let index = args.tensor(2)?;
    let op = if name == "gather" {
        Op::Gather { dim }
    } else {
        Op::IndexSelect { dim }
    };
    interpreter.apply_one(
        op,
        vec![Operand::Tensor(tensor), Operand::Tensor(index)],
        args.span,
    )
}

pub fn index_select(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    indexed(interpreter, args, "index_select")
}

pub fn gather(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    indexed(interpreter, args, "gather")
}
