//! Which unused operations could be over the element limit, for dead-code elimination.
//!
//! Eager code refuses a result of more than `MAX_ELEMENTS` elements with a `value-error`
//! where the operation runs, whether or not anything uses it. A compiled run must fail there
//! too, so an unused operation is removed only when its results are no larger than a tensor
//! that exists when it would run: one of its operands by what the operation does (a `cast`,
//! a `sort`), or any tensor made before it (an input, a constant, an earlier node) whose
//! sizes cover its sizes. Every earlier node's results are within the limit once the run
//! gets there: a node that runs succeeded, and one that was removed was no larger than such
//! a tensor. An operation nothing bounds stays and runs, as operations that can fail on their
//! data do (`zeros(n, 0).sum(1)` has no elements to read and `n` results). An unused `cond`
//! stays unless every operation of both branches is within the limit.

use std::collections::HashSet;

use crate::graph::ir::{Arg, Graph, Node, NodeKind};
use crate::graph::op::{IndexSpec, Op};
use crate::graph::shape::Dim;
use crate::sym::ShapeEnv;

/// The sizes of every tensor the graph makes, each with the first node making it, gathered
/// at the first question (most graphs have no unused operation to ask about).
#[derive(Default)]
pub(super) struct Made {
    shapes: Option<Vec<(usize, Vec<Dim>)>>,
}

impl Made {
    /// Whether every result of node `index` is provably within the element limit where
    /// it would run, so removing it cannot hide the limit's error.
    pub(super) fn within_limit(&mut self, graph: &mut Graph, index: usize) -> bool {
        if let NodeKind::Cond {
            then_branch,
            else_branch,
        } = &mut graph.nodes[index].kind
        {
            return all_within_limit(then_branch) && all_within_limit(else_branch);
        }
        let node = &graph.nodes[index];
        let NodeKind::Op(op) = &node.kind else {
            return true;
        };
        if bounded_by_operand(graph, node, op) {
            return true;
        }
        let shapes = self.shapes.get_or_insert_with(|| made_shapes(graph));
        let env = &mut graph.env;
        node.outputs.iter().all(|meta| {
            shapes
                .iter()
                .take_while(|(made, _)| *made < index)
                .any(|(_, cover)| fits_in(env, &meta.shape, cover))
        })
    }
}

/// Whether every operation of a graph is provably within the limit. For a `cond` branch
/// (whose inputs are the values the `cond` passes it), a branch that could make too large a
/// tensor keeps an unused `cond`, which then runs the branch its predicate picks; for a
/// trace that stopped with an error, one that could must run what it traced first.
pub fn all_within_limit(graph: &mut Graph) -> bool {
    let mut made = Made::default();
    (0..graph.nodes.len()).all(|index| made.within_limit(graph, index))
}

fn made_shapes(graph: &Graph) -> Vec<(usize, Vec<Dim>)> {
    let mut seen = HashSet::new();
    let mut shapes = Vec::new();
    for (index, node) in graph.nodes.iter().enumerate() {
        for meta in &node.outputs {
            if seen.insert(&meta.shape) {
                shapes.push((index, meta.shape.clone()));
            }
        }
    }
    shapes
}

/// Whether the operation's results never have more elements than its first operand.
fn bounded_by_operand(graph: &Graph, node: &Node, op: &Op) -> bool {
    let operand = |position: usize| match node.args.get(position) {
        Some(Arg::Tensor(value)) => Some(&graph.meta(*value).shape),
        _ => None,
    };
    match op {
        Op::Unary(_)
        | Op::Cast(_)
        | Op::Cumsum { .. }
        | Op::Diff { .. }
        | Op::Sort { .. }
        | Op::TopK { .. }
        | Op::Reshape { .. }
        | Op::Permute { .. }
        | Op::Squeeze { .. }
        | Op::Unsqueeze { .. }
        | Op::Split { .. }
        | Op::Narrow { .. }
        | Op::Unique => true,
        // Slices, positions and new axes of size 1 select; a mask keeps at most what it
        // covers. Index tensors can repeat rows.
        Op::Index { items } => !items
            .iter()
            .any(|item| matches!(item, IndexSpec::Indices { .. })),
        // One row of positions per kept element: within the operand only for one dim.
        Op::Nonzero => operand(0).is_some_and(|shape| shape.len() <= 1),
        // A mask broadcast against the tensor can select more than either holds.
        Op::MaskedSelect => operand(0).is_some() && operand(0) == operand(1),
        Op::Full { .. }
        | Op::Arange { .. }
        | Op::Randn { .. }
        | Op::Binary(_)
        | Op::Where
        | Op::Clamp { .. }
        | Op::Reduce { .. }
        | Op::Expand { .. }
        | Op::Cat { .. }
        | Op::Stack { .. }
        | Op::IndexSelect { .. }
        | Op::Gather { .. }
        | Op::RepeatInterleave { .. }
        | Op::RepeatIndices
        | Op::MatMul
        | Op::Fused(_) => false,
    }
}

/// Whether a tensor of `shape` provably has at most as many elements as one of `cover`:
/// each size of `shape` matches a different size of `cover` that is at least as large, and
/// the sizes of `cover` left over are at least 1.
fn fits_in(env: &mut ShapeEnv, shape: &[Dim], cover: &[Dim]) -> bool {
    if shape.contains(&Dim::ZERO) {
        return true;
    }
    let mut left: Vec<Option<Dim>> = cover.iter().copied().map(Some).collect();
    let mut known = Vec::new();
    for dim in shape {
        match *dim {
            Dim::Known(size) if size <= 1 => {}
            Dim::Known(size) => known.push(size),
            Dim::Sym(_) => match left.iter_mut().find(|slot| **slot == Some(*dim)) {
                Some(slot) => *slot = None,
                None => return false,
            },
        }
    }
    // Largest first, each into the smallest size left that holds it.
    known.sort_unstable_by(|a, b| b.cmp(a));
    for size in known {
        let mut best: Option<(i64, usize)> = None;
        for (position, slot) in left.iter().enumerate() {
            let Some(dim) = slot else { continue };
            let lower = least(env, *dim);
            if lower >= size && best.is_none_or(|(smallest, _)| lower < smallest) {
                best = Some((lower, position));
            }
        }
        match best {
            Some((_, position)) => left[position] = None,
            None => return false,
        }
    }
    left.into_iter().flatten().all(|dim| least(env, dim) >= 1)
}

/// The smallest value a size can have.
fn least(env: &mut ShapeEnv, dim: Dim) -> i64 {
    match dim {
        Dim::Known(size) => size,
        Dim::Sym(expr) => env.range(expr).lo,
    }
}
