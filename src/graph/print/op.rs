//! The operands and attributes of an op node, positionally: `narrow(%1, 0, 0, u0)`,
//! `sum(%0, dims=[1], keepdim=true)`. Every op is one arm, so a new op must say how it prints.

use std::fmt::Write as _;

use super::{dim, dims, value};
use crate::graph::ir::{Arg, Graph};
use crate::graph::op::{IndexSpec, Number, Op};
use crate::sym::ShapeEnv;

/// `%1`, `%1.0`, `2.0`, `u0`, `true`.
pub fn arg(argument: &Arg, graph: &Graph) -> String {
    match argument {
        Arg::Tensor(tensor) => value(*tensor, graph),
        Arg::Int(d) => dim(*d, &graph.env),
        Arg::Float(x) => crate::dtype::format_f64(*x),
        Arg::Bool(b) => b.to_string(),
    }
}

fn list(arguments: &[Arg], graph: &Graph) -> Vec<String> {
    arguments.iter().map(|a| arg(a, graph)).collect()
}

fn number(value: Number, env: &ShapeEnv) -> String {
    match value {
        Number::Int(d) => dim(d, env),
        Number::Float(x) => crate::dtype::format_f64(x),
    }
}

/// The operands then the attributes of an op.
pub fn arguments(op: &Op, arguments: &[Arg], graph: &Graph) -> String {
    let env = &graph.env;
    let mut parts = list(arguments, graph);
    match op {
        Op::Full { shape, .. } => parts.insert(0, dims(shape, env)),
        Op::Arange { start, end, step } => {
            parts.extend([start, end, step].map(|value| number(*value, env)));
        }
        Op::Cast(dtype) => parts.push(dtype.to_string()),
        Op::Clamp { min, max } => return clamp(*min, *max, arguments, graph),
        Op::Reduce { dims, keepdim, .. } => {
            if let Some(reduced) = dims {
                parts.push(format!("dims={reduced:?}"));
            }
            if *keepdim {
                parts.push("keepdim=true".to_string());
            }
        }
        Op::Cumsum { dim: d } | Op::Diff { dim: d } | Op::Unsqueeze { dim: d } => {
            parts.push(d.to_string());
        }
        Op::Sort {
            dim: d,
            descending,
        } => {
            parts.push(d.to_string());
            if *descending {
                parts.push("descending=true".to_string());
            }
        }
        Op::TopK {
            k,
            dim: d,
            largest,
        } => {
            parts.extend([dim(*k, env), d.to_string()]);
            if !*largest {
                parts.push("largest=false".to_string());
            }
        }
        Op::Randn { shape } | Op::Reshape { shape } | Op::Expand { shape } => {
            parts.push(dims(shape, env));
        }
        Op::Permute { dims: order } | Op::Squeeze { dims: order } => {
            parts.push(format!("{order:?}"));
        }
        Op::Cat { dim: d } | Op::Stack { dim: d } => {
            parts = vec![format!("[{}]", parts.join(", ")), d.to_string()];
        }
        Op::Split { sizes, dim: d } => parts.extend([dims(sizes, env), d.to_string()]),
        Op::Narrow {
            dim: d,
            start,
            length,
        } => parts.extend([d.to_string(), dim(*start, env), dim(*length, env)]),
        Op::IndexSelect { dim: d } | Op::Gather { dim: d } => {
            parts.insert(parts.len().min(1), d.to_string());
        }
        Op::Index { items } => return index(items, arguments, graph),
        Op::RepeatInterleave { dim: Some(d) } => parts.push(format!("dim={d}")),
        Op::RepeatInterleave { dim: None }
        | Op::RepeatIndices
        | Op::Binary(_)
        | Op::Unary(_)
        | Op::Where
        | Op::Nonzero
        | Op::MaskedSelect
        | Op::Unique
        | Op::MatMul
        // A fused node's members and body are printed around and under its line.
        | Op::Fused(_) => {}
    }
    parts.join(", ")
}

/// `clamp(%0, min=-1.0)`: the bounds that are present, named.
fn clamp(min: bool, max: bool, arguments: &[Arg], graph: &Graph) -> String {
    let mut printed = list(arguments, graph).into_iter();
    let mut parts: Vec<String> = printed.next().into_iter().collect();
    for (present, name) in [(min, "min"), (max, "max")] {
        if present && let Some(bound) = printed.next() {
            parts.push(format!("{name}={bound}"));
        }
    }
    parts.extend(printed);
    parts.join(", ")
}

/// `index(%0, [1:, none, %1, ::2])`: masks and index tensors in place, from the operands.
fn index(items: &[IndexSpec], arguments: &[Arg], graph: &Graph) -> String {
    let env = &graph.env;
    let mut operands = list(arguments, graph).into_iter();
    let first = operands.next().unwrap_or_default();
    let printed: Vec<String> = items
        .iter()
        .map(|item| match item {
            IndexSpec::Int(position) => dim(*position, env),
            IndexSpec::Slice { start, stop, step } => {
                let bound = |b: &Option<_>| b.map(|d| dim(d, env)).unwrap_or_default();
                let mut slice = format!("{}:{}", bound(start), bound(stop));
                if *step != 1 {
                    let _ = write!(slice, ":{step}");
                }
                slice
            }
            IndexSpec::NewAxis => "none".to_string(),
            IndexSpec::Mask { .. } | IndexSpec::Indices { .. } => {
                operands.next().unwrap_or_default()
            }
        })
        .collect();
    format!("{first}, [{}]", printed.join(", "))
}
