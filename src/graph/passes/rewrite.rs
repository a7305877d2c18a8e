//! Rewriting value references across a graph: replacing uses, and renumbering after removal.

use crate::graph::ir::{Arg, Graph, NodeId, NodeKind, Output, Part, ValueRef};

/// Visits every value reference a graph holds (arguments, printed and message parts, the
/// output), letting `f` rewrite it.
pub fn for_each_use(graph: &mut Graph, f: &mut impl FnMut(&mut ValueRef)) {
    for node in &mut graph.nodes {
        for arg in &mut node.args {
            if let Arg::Tensor(value) = arg {
                f(value);
            }
        }
        let parts = match &mut node.kind {
            NodeKind::Assert { message, .. } | NodeKind::DeviceAssert { message, .. } => {
                &mut message.0
            }
            NodeKind::Print { line } => &mut line.0,
            NodeKind::Input { .. }
            | NodeKind::Constant { .. }
            | NodeKind::Op(_)
            | NodeKind::Item
            | NodeKind::Cond { .. } => continue,
        };
        for_each_part(parts, f);
    }
    for_each_output(&mut graph.output, f);
}

fn for_each_part(parts: &mut [Part], f: &mut impl FnMut(&mut ValueRef)) {
    for part in parts {
        if let Part::Scalar(value) | Part::Tensor(value) = part {
            f(value);
        }
    }
}

fn for_each_output(output: &mut Output, f: &mut impl FnMut(&mut ValueRef)) {
    match output {
        Output::Tensor(value) | Output::Scalar(value) => f(value),
        Output::Template(template) => for_each_part(&mut template.0, f),
        Output::List(items) => items.iter_mut().for_each(|item| for_each_output(item, f)),
        _ => {}
    }
}

/// Replaces every use of a value by another, following chains (`replacements[i]` is the
/// value replacing output 0 of node `i`, if any).
pub fn replace_uses(graph: &mut Graph, replacements: &[Option<ValueRef>]) {
    let resolve = |mut value: ValueRef| {
        while value.output == 0 {
            match replacements.get(value.node.index()).copied().flatten() {
                Some(next) if next != value => value = next,
                _ => break,
            }
        }
        value
    };
    for_each_use(graph, &mut |value| *value = resolve(*value));
}

/// Replaces every use of an output of node `i` by the same output of node
/// `replacements[i]`, if any (for nodes with several outputs, which are replaced whole).
pub fn replace_nodes(graph: &mut Graph, replacements: &[Option<NodeId>]) {
    for_each_use(graph, &mut |value| {
        if let Some(node) = replacements.get(value.node.index()).copied().flatten() {
            value.node = node;
        }
    });
}

/// Keeps the nodes marked live and renumbers references to them.
pub fn retain(graph: &mut Graph, live: &[bool]) {
    let mut numbering = vec![None; graph.nodes.len()];
    let mut next = 0u32;
    for (index, keep) in live.iter().enumerate() {
        if *keep {
            numbering[index] = Some(NodeId(next));
            next += 1;
        }
    }
    let mut index = 0;
    graph.nodes.retain(|_| {
        let keep = live[index];
        index += 1;
        keep
    });
    // Only the kept nodes' references are renumbered: a removed node may have used another
    // removed node.
    for_each_use(graph, &mut |value| {
        value.node = numbering[value.node.index()].expect("a kept node only uses kept nodes");
    });
}
