//! Common-subexpression elimination: a pure node (an operation without effects that binds
//! no symbol) identical to an earlier one, after earlier replacements, is replaced by it;
//! a node with several outputs (`split`, `sort`) is replaced whole.

use std::hash::{Hash, Hasher};

use super::rewrite::{replace_nodes, replace_uses};
use crate::graph::ir::{Arg, Graph, NodeId, NodeKind, ValueRef};
use crate::graph::op::Op;
use crate::sym::FxHashMap;

pub fn eliminate_common_subexpressions(graph: &mut Graph) {
    let mut seen: FxHashMap<Key, NodeId> = FxHashMap::default();
    let mut replacements: Vec<Option<ValueRef>> = vec![None; graph.nodes.len()];
    let mut whole: Vec<Option<NodeId>> = vec![None; graph.nodes.len()];
    for (index, node) in graph.nodes.iter().enumerate() {
        let NodeKind::Op(op) = &node.kind else {
            continue;
        };
        let pure = !node.kind.has_effects() && node.binds.is_empty() && !node.outputs.is_empty();
        if !pure {
            continue;
        }
        let args: Vec<Arg> = node
            .args
            .iter()
            .map(|arg| match arg {
                Arg::Tensor(value) => Arg::Tensor(resolve(&replacements, &whole, *value)),
                other => other.clone(),
            })
            .collect();
        let key = Key::new(op.clone(), args);
        let id = NodeId(index as u32);
        match seen.get(&key) {
            Some(earlier) if node.outputs.len() == 1 => {
                replacements[index] = Some(ValueRef::first(*earlier));
            }
            Some(earlier) => whole[index] = Some(*earlier),
            None => {
                seen.insert(key, id);
            }
        }
    }
    replace_uses(graph, &replacements);
    replace_nodes(graph, &whole);
}

/// What makes two pure nodes the same computation: the op with its attributes, and the
/// arguments after earlier replacements. Equality is structural, with floats compared by
/// their bits (`x * 0.0` and `x * -0.0` differ).
#[derive(Debug, PartialEq)]
pub struct Key {
    op: Op,
    args: Vec<Arg>,
}

impl Key {
    pub fn new(op: Op, args: Vec<Arg>) -> Key {
        Key { op, args }
    }
}

impl Eq for Key {}

/// Hashes the op's name, its attributes and the arguments; equal keys hash equally. The
/// attributes matter: `tolist()` of n elements records n ops that differ only in them, and
/// keys hashing alike made recording them quadratic (65,536 elements took over a minute).
impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.op.name().hash(state);
        hash_attributes(&self.op, state);
        self.args.hash(state);
    }
}

/// The op's static attributes, as its `PartialEq` compares them (a fused kernel hashes none:
/// it is compared whole).
fn hash_attributes<H: Hasher>(op: &Op, state: &mut H) {
    match op {
        Op::Full { shape, dtype } => (shape, dtype).hash(state),
        Op::Arange { start, end, step } => (start, end, step).hash(state),
        Op::Randn { shape } | Op::Reshape { shape } | Op::Expand { shape } => shape.hash(state),
        Op::Binary(op) => op.hash(state),
        Op::Unary(op) => op.hash(state),
        Op::Cast(dtype) => dtype.hash(state),
        Op::Clamp { min, max } => (min, max).hash(state),
        Op::Reduce { op, dims, keepdim } => (op, dims, keepdim).hash(state),
        Op::Cumsum { dim }
        | Op::Diff { dim }
        | Op::Unsqueeze { dim }
        | Op::Cat { dim }
        | Op::Stack { dim }
        | Op::IndexSelect { dim }
        | Op::Gather { dim } => dim.hash(state),
        Op::Sort { dim, descending } => (dim, descending).hash(state),
        Op::TopK { k, dim, largest } => (k, dim, largest).hash(state),
        Op::Permute { dims } | Op::Squeeze { dims } => dims.hash(state),
        Op::Split { sizes, dim } => (sizes, dim).hash(state),
        Op::Narrow { dim, start, length } => (dim, start, length).hash(state),
        Op::Index { items } => items.hash(state),
        Op::RepeatInterleave { dim } => dim.hash(state),
        Op::Where
        | Op::Nonzero
        | Op::MaskedSelect
        | Op::RepeatIndices
        | Op::Unique
        | Op::MatMul
        | Op::Fused(_) => {}
    }
}

fn resolve(
    replacements: &[Option<ValueRef>],
    whole: &[Option<NodeId>],
    value: ValueRef,
) -> ValueRef {
    if let Some(node) = whole.get(value.node.index()).copied().flatten() {
        return ValueRef { node, ..value };
    }
    match replacements.get(value.node.index()).copied().flatten() {
        Some(replacement) if value.output == 0 => replacement,
        _ => value,
    }
}

#[cfg(test)]
mod tests {
    use std::hash::{BuildHasher, RandomState};

    use super::Key;
    use crate::graph::op::{IndexSpec, Number, Op};
    use crate::graph::shape::Dim;

    /// Ops that differ only in their attributes (the elements `tolist()` reads one by one)
    /// are different keys that hash apart, so recording many of them stays linear.
    #[test]
    fn keys_differing_only_in_attributes_hash_apart() {
        let hasher = RandomState::new();
        let hash = |op: Op| hasher.hash_one(Key::new(op, Vec::new()));
        let element = |i: i64| Op::Index {
            items: vec![IndexSpec::Int(Dim::Known(i))],
        };
        let hashes: std::collections::HashSet<u64> = (0..1000).map(|i| hash(element(i))).collect();
        assert_eq!(hashes.len(), 1000);
        assert_eq!(hash(element(7)), hash(element(7)));
        let narrow = |start| Op::Narrow {
            dim: 0,
            start: Dim::Known(start),
            length: Dim::Known(1),
        };
        assert_ne!(hash(narrow(1)), hash(narrow(2)));
        let arange = |step: f64| Op::Arange {
            start: Number::Int(Dim::Known(0)),
            end: Number::Int(Dim::Known(4)),
            step: Number::Float(step),
        };
        assert_ne!(hash(arange(0.5)), hash(arange(-0.5)));
        assert_eq!(hash(arange(0.5)), hash(arange(0.5)));
    }
}
