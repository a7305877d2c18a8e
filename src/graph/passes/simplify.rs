//! Removes operations that return their input unchanged, by replacing their uses.

use super::rewrite::replace_uses;
use crate::graph::ir::{Arg, Graph, Node, NodeKind, ValueRef};
use crate::graph::op::{IndexSpec, Op};
use crate::graph::shape::Dim;

pub fn simplify(graph: &mut Graph) {
    let replacements: Vec<Option<ValueRef>> = graph
        .nodes
        .iter()
        .map(|node| identity_input(graph, node))
        .collect();
    replace_uses(graph, &replacements);
}

/// The input a node returns unchanged, if it does.
fn identity_input(graph: &Graph, node: &Node) -> Option<ValueRef> {
    let NodeKind::Op(op) = &node.kind else {
        return None;
    };
    let Some(Arg::Tensor(input)) = node.args.first() else {
        return None;
    };
    if !node.binds.is_empty() || node.outputs.len() != 1 {
        return None;
    }
    let meta = graph.meta(*input);
    let unchanged = match op {
        Op::Cast(dtype) => *dtype == meta.dtype,
        Op::Reshape { shape } | Op::Expand { shape } => *shape == meta.shape,
        Op::Permute { dims } => dims.iter().enumerate().all(|(position, d)| position == *d),
        Op::Squeeze { dims } => dims.is_empty(),
        Op::Narrow { dim, start, length } => {
            *start == Dim::ZERO && meta.shape.get(*dim) == Some(length)
        }
        Op::Index { items } => items.iter().all(|item| {
            matches!(
                item,
                IndexSpec::Slice {
                    start: None,
                    stop: None,
                    step: 1
                }
            )
        }),
        Op::Full { .. }
        | Op::Arange { .. }
        | Op::Randn { .. }
        | Op::Binary(_)
        | Op::Unary(_)
        | Op::Where
        | Op::Clamp { .. }
        | Op::Reduce { .. }
        | Op::Cumsum { .. }
        | Op::Diff { .. }
        | Op::Sort { .. }
        | Op::TopK { .. }
        | Op::Unsqueeze { .. }
        | Op::Cat { .. }
        | Op::Stack { .. }
        | Op::Split { .. }
        | Op::IndexSelect { .. }
        | Op::Gather { .. }
        | Op::Nonzero
        | Op::MaskedSelect
        | Op::RepeatInterleave { .. }
        | Op::RepeatIndices
        | Op::Unique
        | Op::MatMul
        | Op::Fused(_) => false,
    };
    (unchanged && node.outputs[0] == *meta).then_some(*input)
}
