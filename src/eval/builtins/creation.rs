//! Tensor creation, random numbers and `.npy` files.

use std::path::PathBuf;

use crate::backend::host;
use crate::diag::{Code, Result};
use crate::dtype::{DType, Scalar};
use crate::eval::args::{Bound, CallArgs, scalar_of};
use crate::eval::tensor::{Operand, kernel_error};
use crate::eval::value::{TensorValue, Value};
use crate::eval::{Interpreter, error};
use crate::graph::op::{Number, Op};
use crate::graph::shape::Dim;
use crate::source::Span;

/// The most dimensions a nested list given to `tensor()` may have.
const MAX_LIST_DEPTH: usize = 32;

/// `tensor(data, dtype = …)` from a number or nested lists of numbers.
pub fn tensor(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("tensor", &["data", "dtype"])?;
    let dtype = args.dtype(1)?;
    let data = args.required(0)?;
    let span = args.span(0);
    if data.is_symbolic() {
        return symbolic_tensor(interpreter, data, dtype, span);
    }
    check_element_count(data, span)?;
    let mut shape = Vec::new();
    let mut elements = Vec::new();
    let mut leaf_depth = None;
    collect(data, 0, &mut shape, &mut leaf_depth, &mut elements, span)?;
    let tensor =
        host::from_elements(&shape, &elements, dtype).map_err(|e| kernel_error(&e, span))?;
    Ok(Value::Tensor(TensorValue::new(tensor)))
}

/// Refuses nested lists whose shape, read along their first items, has more than
/// [`limits::LIST_LENGTH`] elements, or more lists than that: a list can hold another twice,
/// so a short program can name more elements than any list could hold, or (with empty lists
/// innermost) no element but more lists than any walk over them could visit.
///
/// [`limits::LIST_LENGTH`]: crate::eval::limits::LIST_LENGTH
fn check_element_count(data: &Value, span: Span) -> Result<()> {
    let limit = crate::eval::limits::LIST_LENGTH;
    // The values at the current level of the shape, and the lists above it.
    let mut count = 1usize;
    let mut lists = 0usize;
    let mut level = data;
    for _ in 0..MAX_LIST_DEPTH {
        // Deeper data is the shape error `collect` reports.
        let Value::List(items) = level else { break };
        lists = lists.saturating_add(count);
        count = count.saturating_mul(items.len());
        let Some(first) = items.first() else { break };
        level = first;
    }
    let message = if count > limit {
        format!("tensor() of lists with more than {limit} elements")
    } else if lists > limit {
        format!("tensor() of more than {limit} nested lists")
    } else {
        return Ok(());
    };
    Err(error(Code::ValueError, span, message)
        .with_help("make large tensors with zeros(), full(), arange() or randn(), or cat() and stack() of tensors")
        .into())
}

/// Walks nested lists, recording the shape and rejecting ragged or non-numeric data.
fn collect(
    value: &Value,
    depth: usize,
    shape: &mut Vec<usize>,
    leaf_depth: &mut Option<usize>,
    elements: &mut Vec<Scalar>,
    span: Span,
) -> Result<()> {
    let ragged = || {
        error(
            Code::ShapeError,
            span,
            "tensor() needs nested lists of equal lengths (the data is ragged)",
        )
        .into()
    };
    match value {
        Value::List(items) => {
            if depth >= MAX_LIST_DEPTH {
                return Err(error(
                    Code::ShapeError,
                    span,
                    format!("tensor() supports at most {MAX_LIST_DEPTH} dimensions"),
                )
                .into());
            }
            if leaf_depth.is_some_and(|leaf| leaf <= depth) {
                return Err(ragged());
            }
            if shape.len() == depth {
                shape.push(items.len());
            } else if shape[depth] != items.len() {
                return Err(ragged());
            }
            if items.is_empty() && leaf_depth.is_none() && shape.len() == depth + 1 {
                // An empty innermost list still fixes the depth of the elements.
                *leaf_depth = Some(depth + 1);
            }
            items
                .iter()
                .try_for_each(|item| collect(item, depth + 1, shape, leaf_depth, elements, span))
        }
        Value::Tensor(tensor) if tensor.ndim() == 0 => {
            let data = tensor.real().expect("tensor() runs on concrete values");
            let host = data.to_host().map_err(|e| kernel_error(&e, span))?;
            let scalar = host
                .to_scalar()
                .expect("a 0-d concrete tensor has one element");
            leaf(scalar, depth, shape, leaf_depth, elements).map_err(|()| ragged())
        }
        other => match scalar_of(other) {
            Some(scalar) => leaf(scalar, depth, shape, leaf_depth, elements).map_err(|()| ragged()),
            None => Err(error(
                Code::TypeError,
                span,
                format!("tensor() needs numbers or bools, found {}", other.kind()),
            )
            .with_help("to combine tensors use stack() or cat()")
            .into()),
        },
    }
}

fn leaf(
    scalar: Scalar,
    depth: usize,
    shape: &[usize],
    leaf_depth: &mut Option<usize>,
    elements: &mut Vec<Scalar>,
) -> std::result::Result<(), ()> {
    if *leaf_depth.get_or_insert(depth) != depth || shape.len() != depth {
        return Err(());
    }
    elements.push(scalar);
    Ok(())
}

/// `tensor(data)` where some elements are only known while tracing: every element becomes a
/// 0-d tensor and the lists are stacked (dtypes promote as `tensor()` infers them).
pub fn symbolic_tensor(
    interpreter: &mut Interpreter,
    data: &Value,
    dtype: Option<DType>,
    span: Span,
) -> Result<Value> {
    let built = stacked(interpreter, data, span)?;
    match (dtype, built) {
        (Some(dtype), Value::Tensor(tensor)) if tensor.dtype() != dtype => {
            interpreter.apply_one(Op::Cast(dtype), vec![Operand::Tensor(tensor)], span)
        }
        (_, built) => Ok(built),
    }
}

fn stacked(interpreter: &mut Interpreter, data: &Value, span: Span) -> Result<Value> {
    if let Value::List(items) = data {
        let parts = items
            .iter()
            .map(|item| match stacked(interpreter, item, span)? {
                Value::Tensor(tensor) => Ok(Operand::Tensor(tensor)),
                _ => unreachable!("stacked() makes tensors"),
            })
            .collect::<Result<Vec<_>>>()?;
        if parts.is_empty() {
            return Ok(Value::Tensor(TensorValue::new(host::Tensor::from(
                ndarray::ArrayD::<f32>::zeros(vec![0]),
            ))));
        }
        return interpreter.apply_one(Op::Stack { dim: 0 }, parts, span);
    }
    // Elements are numbers, bools or 0-d tensors, as in eager code; a tensor with
    // dimensions is refused with eager code's error.
    let element = match data {
        Value::Tensor(tensor) => tensor.ndim() == 0,
        _ => true,
    };
    let operand = super::core::decided_operand(interpreter, data, span)?
        .filter(|_| element)
        .ok_or_else(|| -> Box<crate::diag::Diagnostic> {
            error(
                Code::TypeError,
                span,
                format!("tensor() needs numbers or bools, found {}", data.kind()),
            )
            .with_help("to combine tensors use stack() or cat()")
            .into()
        })?;
    let dtype = operand.meta().dtype;
    interpreter.apply_one(
        Op::Full {
            shape: Vec::new(),
            dtype,
        },
        vec![operand],
        span,
    )
}

fn filled(
    interpreter: &mut Interpreter,
    args: CallArgs,
    name: &'static str,
    value: i64,
) -> Result<Value> {
    let args = args.bind(name, &["*sizes", "dtype"])?;
    let dtype = args.dtype(1)?.unwrap_or(DType::F32);
    let shape = args.sizes()?;
    let fill = Operand::Scalar(Scalar::Int(value));
    interpreter.apply_one(Op::Full { shape, dtype }, vec![fill], args.span)
}

pub fn zeros(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    filled(interpreter, args, "zeros", 0)
}

pub fn ones(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    filled(interpreter, args, "ones", 1)
}

/// `full(size, value, dtype = …)`: `size` is an int or a list of ints.
pub fn full(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("full", &["size", "value", "dtype"])?;
    let shape = match args.required(0)? {
        Value::List(_) => args.size_list(0)?,
        _ => vec![args.size(0)?],
    };
    let value = args.required(1)?;
    let fill = super::core::decided_operand(interpreter, value, args.span(1))?
        .ok_or_else(|| args.wrong(1, "a number or bool", value))?;
    let dtype = args.dtype(2)?.unwrap_or(fill.meta().dtype);
    interpreter.apply_one(Op::Full { shape, dtype }, vec![fill], args.span)
}

/// `arange(end)` or `arange(start, end, step = 1)`.
pub fn arange(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("arange", &["start", "end", "step", "dtype"])?;
    let number = |index: usize| -> Result<Number> {
        match args.required(index)? {
            Value::Int(value) => Ok(Number::Int(Dim::Known(*value))),
            Value::SymInt(expr) => Ok(Number::Int(Dim::Sym(*expr))),
            Value::Float(value) => Ok(Number::Float(*value)),
            other => Err(args.wrong(index, "a number", other)),
        }
    };
    let (start, end) = match args.get(1) {
        Some(_) => (number(0)?, number(1)?),
        None => (Number::Int(Dim::ZERO), number(0)?),
    };
    let step = match args.get(2) {
        Some(_) => number(2)?,
        None => Number::Int(Dim::ONE),
    };
    let range = interpreter.apply_one(Op::Arange { start, end, step }, vec![], args.span)?;
    match (args.dtype(3)?, range) {
        (Some(dtype), Value::Tensor(tensor)) if tensor.dtype() != dtype => {
            interpreter.apply_one(Op::Cast(dtype), vec![Operand::Tensor(tensor)], args.span)
        }
        (_, range) => Ok(range),
    }
}

pub fn randn(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("randn", &["*sizes"])?;
    let shape = args.sizes()?;
    interpreter.apply_one(Op::Randn { shape }, vec![], args.span)
}

/// Files are read and written, and the generator reseeded, eagerly; inside compiled code that
/// would happen once, at trace time, so it is refused there.
pub(in crate::eval) fn refuse_while_tracing(
    interpreter: &Interpreter,
    name: &str,
    span: Span,
) -> Result<()> {
    if interpreter.tracer.is_none() {
        return Ok(());
    }
    Err(error(
        Code::TypeError,
        span,
        format!("{name}() cannot run inside a compiled function"),
    )
    .with_help(format!("call {name}() outside the compiled function"))
    .into())
}

pub fn load(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    refuse_while_tracing(interpreter, "load", args.span)?;
    let args = args.bind("load", &["path"])?;
    let path = data_path(interpreter, &args, 0)?;
    let tensor = host::load(&path).map_err(|e| kernel_error(&e, args.span(0)))?;
    Ok(Value::Tensor(TensorValue::new(tensor)))
}

pub fn save(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    refuse_while_tracing(interpreter, "save", args.span)?;
    let args = args.bind("save", &["x", "path"])?;
    let tensor = args.tensor(0)?;
    let path = data_path(interpreter, &args, 1)?;
    if interpreter.analysing() {
        return Ok(Value::None);
    }
    let data = interpreter
        .host_data(&tensor, args.span(0))?
        .expect("eager tensors are concrete");
    host::save(&data, &path).map_err(|e| kernel_error(&e, args.span(1)))?;
    Ok(Value::None)
}

/// A data file path: relative paths are relative to the directory of the file making the
/// call (like `use`), or to the working directory for code without a file.
fn data_path(interpreter: &Interpreter, args: &Bound, index: usize) -> Result<PathBuf> {
    let path = PathBuf::from(args.string(index)?.as_str());
    if path.is_absolute() {
        return Ok(path);
    }
    let file = interpreter.sources.get(args.span.file);
    Ok(
        match file.path.as_deref().and_then(std::path::Path::parent) {
            Some(directory) => directory.join(path),
            None => path,
        },
    )
}
