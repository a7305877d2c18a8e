//! Dead-code elimination. A node is live when it has effects, when it can fail on the data
//! it computes on (an unused `index_select` with an index out of range, or `a // b` with a
//! zero divisor, still fails as it does eagerly), when its results could be over the element
//! limit (see [`limit`](super::limit)), when something live uses one of its outputs, or when
//! it binds a symbol something live needs; input nodes are kept so the printed graph lists
//! every parameter. One backward sweep suffices, because values and
//! symbols are always defined before they are used.

use std::collections::HashMap;

use super::limit::Made;
use super::rewrite::retain;
use crate::graph::ir::{Arg, Graph, Node, NodeKind, Output, Part};
use crate::graph::shape::Dim;
use crate::sym::{ExprId, ShapeEnv, SymbolId};

pub fn eliminate_dead_code(graph: &mut Graph) {
    let count = graph.nodes.len();
    let binders: HashMap<SymbolId, usize> = graph
        .nodes
        .iter()
        .enumerate()
        .flat_map(|(index, node)| node.binds.iter().map(move |(symbol, _)| (*symbol, index)))
        .collect();
    let mut live = vec![false; count];
    let mut roots = Vec::new();
    output_needs(&graph.output, &mut roots, &mut |value| live[value] = true);
    mark_symbols(&graph.env, &roots, &binders, &mut live);
    let mut made = Made::default();
    for index in (0..count).rev() {
        let node = &graph.nodes[index];
        if node.kind.has_effects()
            || node.can_fail_on_data()
            || matches!(node.kind, NodeKind::Input { .. })
            || (!live[index] && !made.within_limit(graph, index))
        {
            live[index] = true;
        }
        let node = &graph.nodes[index];
        if !live[index] {
            continue;
        }
        let mut expressions = Vec::new();
        node_needs(node, &mut expressions, &mut |value| live[value] = true);
        mark_symbols(&graph.env, &expressions, &binders, &mut live);
        if let NodeKind::Cond {
            then_branch,
            else_branch,
        } = &node.kind
        {
            for branch in [then_branch, else_branch] {
                for symbol in branch_symbols(branch) {
                    if let Some(binder) = binders.get(&symbol) {
                        live[*binder] = true;
                    }
                }
            }
        }
    }
    retain(graph, &live);
}

/// The symbols a branch needs, found with the branch's own environment (a copy of the
/// enclosing one, so the enclosing symbols keep their ids).
fn branch_symbols(branch: &Graph) -> Vec<SymbolId> {
    let mut expressions = Vec::new();
    for inner in &branch.nodes {
        node_needs(inner, &mut expressions, &mut |_| {});
    }
    output_needs(&branch.output, &mut expressions, &mut |_| {});
    expressions
        .iter()
        .flat_map(|expr| branch.env.free_symbols(*expr))
        .collect()
}

fn mark_symbols(
    env: &ShapeEnv,
    expressions: &[ExprId],
    binders: &HashMap<SymbolId, usize>,
    live: &mut [bool],
) {
    for expr in expressions {
        for symbol in env.free_symbols(*expr) {
            if let Some(binder) = binders.get(&symbol) {
                live[*binder] = true;
            }
        }
    }
}

/// The values (`value(node index)`) and expressions a node needs.
fn node_needs(node: &Node, expressions: &mut Vec<ExprId>, value: &mut dyn FnMut(usize)) {
    for arg in &node.args {
        match arg {
            Arg::Tensor(used) => value(used.node.index()),
            Arg::Int(Dim::Sym(expr)) => expressions.push(*expr),
            _ => {}
        }
    }
    let mut dim = |d: &Dim| {
        if let Dim::Sym(expr) = d {
            expressions.push(*expr);
        }
    };
    for meta in &node.outputs {
        meta.shape.iter().for_each(&mut dim);
    }
    match &node.kind {
        NodeKind::Op(op) => op.dims().iter().for_each(&mut dim),
        NodeKind::Assert { cond, message, .. } => {
            expressions.push(*cond);
            parts_need(&message.0, expressions, value);
        }
        NodeKind::DeviceAssert { message, .. } => parts_need(&message.0, expressions, value),
        NodeKind::Print { line } => parts_need(&line.0, expressions, value),
        NodeKind::Input { .. }
        | NodeKind::Constant { .. }
        | NodeKind::Item
        | NodeKind::Cond { .. } => {}
    }
}

fn parts_need(parts: &[Part], expressions: &mut Vec<ExprId>, value: &mut dyn FnMut(usize)) {
    for part in parts {
        match part {
            Part::Scalar(used) | Part::Tensor(used) => value(used.node.index()),
            Part::Int(Dim::Sym(expr)) | Part::Bool(expr) => expressions.push(*expr),
            _ => {}
        }
    }
}

fn output_needs(output: &Output, expressions: &mut Vec<ExprId>, value: &mut dyn FnMut(usize)) {
    match output {
        Output::Tensor(used) | Output::Scalar(used) => value(used.node.index()),
        Output::Int(Dim::Sym(expr)) | Output::SymBool(expr) => expressions.push(*expr),
        Output::Template(template) => parts_need(&template.0, expressions, value),
        Output::List(items) => {
            for item in items {
                output_needs(item, expressions, value);
            }
        }
        _ => {}
    }
}
