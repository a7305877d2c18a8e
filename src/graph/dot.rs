//! A graph in Graphviz's DOT language (`tsl graph --dot`): one box per node, labelled with
//! its printed form, an edge per tensor argument; asserts are red octagons, prints notes.
//! A dashed edge labelled with a data-dependent size goes from the node that binds it to each
//! node that needs its value to run (a size of an op, an assert's condition, a message).

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use super::ir::{Arg, Graph, Node, NodeId, NodeKind, Part, tensor_args};
use super::print::{dim, meta};
use super::shape::Dim;
use crate::sym::{ExprId, SymbolId};

pub fn to_dot(graph: &Graph) -> String {
    let binders: HashMap<SymbolId, NodeId> = graph
        .ids()
        .flat_map(|id| {
            graph
                .node(id)
                .binds
                .iter()
                .map(move |(symbol, _)| (*symbol, id))
        })
        .collect();
    let mut dot = String::new();
    let _ = writeln!(dot, "digraph \"{}\" {{", escape(&graph.name));
    dot.push_str("  node [shape=box, fontname=\"monospace\"];\n");
    for id in graph.ids() {
        let node = graph.node(id);
        let types: Vec<String> = node.outputs.iter().map(|m| meta(m, &graph.env)).collect();
        let (label, shape) = match &node.kind {
            NodeKind::Input { name, .. } => (format!("input {name}"), "invhouse"),
            NodeKind::Constant { index } => (format!("constant #{index}"), "box"),
            NodeKind::Op(op) => (op.name().to_string(), "box"),
            NodeKind::Item => ("item".to_string(), "box"),
            NodeKind::Assert { cond, .. } => {
                (format!("assert {}", graph.env.display(*cond)), "octagon")
            }
            NodeKind::DeviceAssert { .. } => ("device_assert".to_string(), "octagon"),
            NodeKind::Print { .. } => ("print".to_string(), "note"),
            NodeKind::Cond { .. } => ("cond".to_string(), "diamond"),
        };
        let color = if node.kind.is_assert() {
            ", color=red"
        } else {
            ""
        };
        let binds: Vec<String> = node
            .binds
            .iter()
            .map(|(symbol, _)| {
                dim(
                    super::shape::Dim::Sym(graph.env.symbol_expr(*symbol)),
                    &graph.env,
                )
            })
            .collect();
        let mut text = format!("{id} = {label}");
        if !types.is_empty() {
            let _ = write!(text, "\\n{}", types.join(", "));
        }
        if !binds.is_empty() {
            let _ = write!(text, "\\nbinds {}", binds.join(", "));
        }
        let _ = writeln!(
            dot,
            "  n{} [label=\"{}\", shape={shape}{color}];",
            id.0,
            escape(&text)
        );
        for arg in tensor_args(&node.args) {
            let _ = writeln!(dot, "  n{} -> n{};", arg.node.0, id.0);
        }
        for (binder, symbol) in size_edges(graph, node, &binders) {
            if binder != id {
                let name = dim(Dim::Sym(graph.env.symbol_expr(symbol)), &graph.env);
                let _ = writeln!(
                    dot,
                    "  n{} -> n{} [style=dashed, label=\"{}\"];",
                    binder.0,
                    id.0,
                    escape(&name)
                );
            }
        }
    }
    dot.push_str("}\n");
    dot
}

/// The binding node and symbol of each data-dependent size `node` needs to run, in order.
fn size_edges(
    graph: &Graph,
    node: &Node,
    binders: &HashMap<SymbolId, NodeId>,
) -> BTreeSet<(NodeId, SymbolId)> {
    let mut expressions = Vec::new();
    sizes_used(node, &mut expressions);
    let mut edges = BTreeSet::new();
    for expr in expressions {
        for symbol in graph.env.free_symbols(expr) {
            if let Some(binder) = binders.get(&symbol) {
                edges.insert((*binder, symbol));
            }
        }
    }
    if let NodeKind::Cond {
        then_branch,
        else_branch,
    } = &node.kind
    {
        for branch in [then_branch, else_branch] {
            let mut inner = Vec::new();
            for branch_node in &branch.nodes {
                sizes_used(branch_node, &mut inner);
            }
            for expr in inner {
                for symbol in branch.env.free_symbols(expr) {
                    if let Some(binder) = binders.get(&symbol) {
                        edges.insert((*binder, symbol));
                    }
                }
            }
        }
    }
    edges
}

/// The size expressions whose values `node` needs when it runs (not the sizes of its
/// outputs, which follow from its operands).
fn sizes_used(node: &Node, expressions: &mut Vec<ExprId>) {
    for arg in &node.args {
        if let Arg::Int(Dim::Sym(expr)) = arg {
            expressions.push(*expr);
        }
    }
    let parts = match &node.kind {
        NodeKind::Op(op) => {
            expressions.extend(op.dims().into_iter().filter_map(|d| match d {
                Dim::Sym(expr) => Some(expr),
                Dim::Known(_) => None,
            }));
            return;
        }
        NodeKind::Assert { cond, message, .. } => {
            expressions.push(*cond);
            &message.0
        }
        NodeKind::DeviceAssert { message, .. } => &message.0,
        NodeKind::Print { line } => &line.0,
        NodeKind::Input { .. }
        | NodeKind::Constant { .. }
        | NodeKind::Item
        | NodeKind::Cond { .. } => return,
    };
    for part in parts {
        match part {
            Part::Int(Dim::Sym(expr)) | Part::Bool(expr) => expressions.push(*expr),
            Part::Text(_) | Part::Int(Dim::Known(_)) | Part::Scalar(_) | Part::Tensor(_) => {}
        }
    }
}

fn escape(text: &str) -> String {
    text.replace('"', "\\\"")
}
