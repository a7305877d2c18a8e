//! Runs one canonical [`Op`] on concrete tensors: the bridge from the graph layer's operation
//! descriptions to this backend's kernels, used by eager execution and compiled graphs alike.

use rand_chacha::ChaCha8Rng;

use super::error::Result;
use super::{IndexItem, KernelError, Tensor};
use crate::dtype::Scalar;
use crate::graph::op::{IndexSpec, Number, Op};
use crate::graph::shape::Dim;

/// Computes `op` on `inputs` (scalars arrive as 0-d tensors). Every size in `op` must be
/// concrete. Inputs are taken by value so that elementwise kernels can write into a buffer
/// nobody else holds.
pub fn run(op: &Op, inputs: Vec<Tensor>, rng: &mut ChaCha8Rng) -> Result<Vec<Tensor>> {
    crate::diag::panic::inject("kernel");
    // Elementwise kernels get their operands by value, to write into a buffer nobody holds.
    if let Op::Binary(binary) = op {
        let Ok([left, right]) = <[Tensor; 2]>::try_from(inputs) else {
            return Err(arity(op));
        };
        return super::binary_owned(*binary, left, right).map(|tensor| vec![tensor]);
    }
    if let Op::Unary(unary) = op {
        let input = inputs.into_iter().next().ok_or_else(|| arity(op))?;
        return super::unary_owned(*unary, input).map(|tensor| vec![tensor]);
    }
    run_borrowed(op, &inputs, rng)
}

fn run_borrowed(op: &Op, inputs: &[Tensor], rng: &mut ChaCha8Rng) -> Result<Vec<Tensor>> {
    let one = |tensor: Result<Tensor>| tensor.map(|tensor| vec![tensor]);
    let input = || inputs.first().ok_or_else(|| arity(op));
    match op {
        Op::Full { shape, dtype } => {
            let value = input()?.to_scalar().ok_or_else(|| arity(op))?;
            one(super::full(&sizes(shape)?, value, Some(*dtype)))
        }
        Op::Arange { start, end, step } => one(super::arange(
            number(*start)?,
            number(*end)?,
            number(*step)?,
            None,
        )),
        Op::Randn { shape } => one(super::randn(&sizes(shape)?, rng)),
        Op::Binary(binary) => one(super::binary(*binary, input()?, second(op, inputs)?)),
        Op::Unary(unary) => one(super::unary(*unary, input()?)),
        Op::Cast(dtype) => Ok(vec![input()?.cast(*dtype)]),
        Op::Where => {
            let [condition, left, right] = inputs else {
                return Err(arity(op));
            };
            one(super::where_(condition, left, right))
        }
        Op::Clamp { min, max } => {
            let mut bounds = inputs[1..].iter();
            let min = if *min { bounds.next() } else { None };
            let max = if *max { bounds.next() } else { None };
            one(super::clamp_by(input()?, min, max))
        }
        Op::Reduce { op, dims, keepdim } => {
            one(super::reduce(*op, input()?, dims.as_deref(), *keepdim))
        }
        Op::Cumsum { dim } => one(super::cumsum(input()?, *dim)),
        Op::Diff { dim } => one(super::diff(input()?, *dim)),
        Op::Sort { dim, descending } => super::sort(input()?, *dim, *descending),
        Op::TopK { k, dim, largest } => super::topk(input()?, size(*k)?, *dim, *largest),
        Op::Reshape { shape } => one(super::reshape(input()?, &sizes(shape)?)),
        Op::Permute { dims } => one(super::permute(input()?, dims)),
        Op::Squeeze { dims } => squeeze(input()?, dims).map(|tensor| vec![tensor]),
        Op::Unsqueeze { dim } => one(super::unsqueeze(input()?, *dim)),
        Op::Expand { shape } => one(super::expand(input()?, &sizes(shape)?)),
        Op::Cat { dim } => one(super::cat(inputs, *dim)),
        Op::Stack { dim } => one(super::stack(inputs, *dim)),
        Op::Split { sizes: parts, dim } => super::split(input()?, &sizes(parts)?, *dim),
        Op::Narrow { dim, start, length } => {
            one(super::narrow(input()?, *dim, size(*start)?, size(*length)?))
        }
        Op::IndexSelect { dim } => one(super::index_select(input()?, *dim, second(op, inputs)?)),
        Op::Gather { dim } => one(super::gather(input()?, *dim, second(op, inputs)?)),
        Op::Index { items } => one(super::index(input()?, &index_items(items, &inputs[1..])?)),
        Op::Nonzero => one(super::nonzero(input()?)),
        Op::MaskedSelect => one(super::masked_select(input()?, second(op, inputs)?)),
        Op::RepeatInterleave { dim } => one(super::repeat_interleave(
            input()?,
            second(op, inputs)?,
            *dim,
        )),
        Op::RepeatIndices => one(super::repeat_interleave_indices(input()?)),
        Op::Unique => one(super::unique(input()?)),
        Op::MatMul => one(super::matmul(input()?, second(op, inputs)?)),
        Op::Fused(kernel) => super::fused::run(kernel, inputs, super::Native::default()),
    }
}

fn arity(op: &Op) -> KernelError {
    KernelError::Value(format!("{op} received the wrong operands"))
}

fn second<'a>(op: &Op, inputs: &'a [Tensor]) -> Result<&'a Tensor> {
    inputs.get(1).ok_or_else(|| arity(op))
}

/// A concrete size; symbolic sizes are resolved by the executor before an op runs.
fn concrete(dim: Dim) -> Result<i64> {
    dim.known()
        .ok_or_else(|| KernelError::Value("a size was not resolved before running".into()))
}

fn size(dim: Dim) -> Result<usize> {
    let value = concrete(dim)?;
    usize::try_from(value)
        .map_err(|_| KernelError::Shape(format!("sizes must not be negative, got {value}")))
}

fn sizes(shape: &[Dim]) -> Result<Vec<usize>> {
    shape.iter().map(|dim| size(*dim)).collect()
}

fn number(number: Number) -> Result<Scalar> {
    Ok(match number {
        Number::Int(dim) => Scalar::Int(concrete(dim)?),
        Number::Float(value) => Scalar::Float(value),
    })
}

/// Removes the listed size-1 dimensions, highest first so positions stay valid.
fn squeeze(input: &Tensor, dims: &[usize]) -> Result<Tensor> {
    let mut ordered = dims.to_vec();
    ordered.sort_unstable_by(|a, b| b.cmp(a));
    ordered.into_iter().try_fold(input.clone(), |tensor, dim| {
        super::squeeze(&tensor, Some(dim))
    })
}

/// The kernel's index items from a canonical index (tensor items taken from `operands`).
fn index_items(items: &[IndexSpec], operands: &[Tensor]) -> Result<Vec<IndexItem>> {
    let mut operands = operands.iter();
    let mut next = || {
        operands
            .next()
            .cloned()
            .ok_or_else(|| KernelError::Value("an index tensor is missing".into()))
    };
    items
        .iter()
        .map(|item| {
            Ok(match item {
                IndexSpec::Int(position) => IndexItem::Int(concrete(*position)?),
                IndexSpec::Slice { start, stop, step } => IndexItem::Slice {
                    start: start.map(concrete).transpose()?,
                    stop: stop.map(concrete).transpose()?,
                    step: *step,
                },
                IndexSpec::NewAxis => IndexItem::NewAxis,
                IndexSpec::Mask { .. } => IndexItem::Mask(next()?),
                IndexSpec::Indices { .. } => IndexItem::Indices(next()?),
            })
        })
        .collect()
}
