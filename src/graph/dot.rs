//! A graph in Graphviz's DOT language (`tsl graph --dot`): one box per node, labelled with
//! its printed form, an edge per tensor argument; asserts are red octagons, prints notes.

use std::fmt::Write as _;

use super::ir::{Graph, NodeKind, tensor_args};
use super::print::{dim, meta};

pub fn to_dot(graph: &Graph) -> String {
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
    }
    dot.push_str("}\n");
    dot
}

fn escape(text: &str) -> String {
    text.replace('"', "\\\"")
}
