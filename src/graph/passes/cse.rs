//! Common-subexpression elimination: a pure node (an operation without effects that binds
//! no symbol) identical to an earlier one, after earlier replacements, is replaced by it.

use std::collections::HashMap;

use super::rewrite::replace_uses;
use crate::graph::ir::{Arg, Graph, NodeId, NodeKind, ValueRef};

pub fn eliminate_common_subexpressions(graph: &mut Graph) {
    let mut seen: HashMap<String, NodeId> = HashMap::new();
    let mut replacements: Vec<Option<ValueRef>> = vec![None; graph.nodes.len()];
    for (index, node) in graph.nodes.iter().enumerate() {
        let pure = matches!(node.kind, NodeKind::Op(_))
            && !node.kind.has_effects()
            && node.binds.is_empty()
            && node.outputs.len() == 1;
        if !pure {
            continue;
        }
        let args: Vec<Arg> = node
            .args
            .iter()
            .map(|arg| match arg {
                Arg::Tensor(value) => Arg::Tensor(resolve(&replacements, *value)),
                other => other.clone(),
            })
            .collect();
        let key = format!("{:?} {args:?}", node.kind);
        let id = NodeId(index as u32);
        match seen.get(&key) {
            Some(earlier) => replacements[index] = Some(ValueRef::first(*earlier)),
            None => {
                seen.insert(key, id);
            }
        }
    }
    replace_uses(graph, &replacements);
}

fn resolve(replacements: &[Option<ValueRef>], value: ValueRef) -> ValueRef {
    match replacements.get(value.node.index()).copied().flatten() {
        Some(replacement) if value.output == 0 => replacement,
        _ => value,
    }
}
