//! Common-subexpression elimination: a pure node (an operation without effects that binds
//! no symbol) identical to an earlier one, after earlier replacements, is replaced by it;
//! a node with several outputs (`split`, `sort`) is replaced whole.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use super::rewrite::{replace_nodes, replace_uses};
use crate::graph::ir::{Arg, Graph, NodeId, NodeKind, ValueRef};
use crate::graph::op::Op;

pub fn eliminate_common_subexpressions(graph: &mut Graph) {
    let mut seen: HashMap<Key, NodeId> = HashMap::new();
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

/// Hashes the op's name and the arguments; equal keys hash equally.
impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.op.name().hash(state);
        self.args.hash(state);
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
