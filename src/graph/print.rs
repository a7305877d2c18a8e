//! The stable text form of a graph (`tsl graph`, `TSL_LOG=graph`, snapshots, filetests):
//!
//! ```text
//! graph head {
//!   %0 = input x @0 : f32[s0]
//!   %1 = input k @1 : i64[1]
//!   %2 = item(%1) : i64 -> u0
//!   %3 = assert u0 >= 0, "check_size failed: n = {u0} is negative"
//!   %4 = narrow(%0, 0, 0, u0) : f32[u0]
//!   return %4
//! }
//! symbols:
//!   s0 = n from @0.size(0), range [2, inf]
//!   u0 = item(), range [0, inf], size-like
//! guards: none
//! asserts: 1
//! ```
//!
//! A node line is `%N = kind(operands, attributes) : types`, then ` -> u0 (dim 0)` for each
//! unbacked symbol the node binds (`-> u0` alone for the element of an `item`). Inputs say
//! which argument they are (`@0`, `@0[1]` for an item of a list argument); a backed symbol
//! lists where it is read (`@0.size(1)`, or `@1` for an int argument). Templates print
//! `{expr}`, `{%3}` for a tensor and `{scalar(%3)}` for a host scalar; a returned template is
//! `template "…"`, a returned host scalar `scalar(%3)`. The branches of a `cond` follow it,
//! indented, each with the symbols it made. Everything printed is in program or creation
//! order, so the text is deterministic, and `graph::parse` reads it back.

mod op;

use crate::diag::Code;
use std::fmt::Write as _;

use super::ir::{
    ArgumentPath, BindSource, Graph, InputSource, Node, NodeKind, Output, Part, Template, ValueRef,
};
use super::op::Op;
use super::shape::{Dim, Meta};
use crate::source::SourceMap;
use crate::sym::{NEG_INF, POS_INF, Range, ShapeEnv, SymbolId, SymbolKind};

/// The graph, its symbols, guards and asserts. Locations are shown when `sources` is given.
pub fn print_graph(graph: &Graph, sources: Option<&SourceMap>) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "graph {} {{", graph.name);
    write_body(&mut text, graph, 1, sources);
    text.push_str("}\n");
    let all: Vec<SymbolId> = (0..graph.env.symbols().len() as u32)
        .map(SymbolId)
        .collect();
    if !all.is_empty() {
        text.push_str("symbols:\n");
        write_symbols(&mut text, graph, &all, "  ", sources);
    }
    write_guards(&mut text, graph, sources);
    let _ = writeln!(text, "asserts: {}", graph.assert_count());
    text
}

fn write_body(text: &mut String, graph: &Graph, depth: usize, sources: Option<&SourceMap>) {
    let indent = "  ".repeat(depth);
    for id in graph.ids() {
        let node = graph.node(id);
        let _ = write!(text, "{indent}");
        write_node(text, graph, id.0, node);
        text.push('\n');
        write_nested(text, graph, node, depth + 1, sources);
    }
    let _ = writeln!(text, "{indent}return {}", output(&graph.output, graph));
}

/// What a node holds underneath its line, indented: the branches of a `cond`, the body of a
/// fused kernel.
fn write_nested(
    text: &mut String,
    parent: &Graph,
    node: &Node,
    depth: usize,
    sources: Option<&SourceMap>,
) {
    match &node.kind {
        NodeKind::Cond {
            then_branch,
            else_branch,
        } => {
            for (word, branch) in [("then", then_branch), ("else", else_branch)] {
                write_branch(text, parent, word, branch, depth, sources);
            }
        }
        NodeKind::Op(Op::Fused(kernel)) => {
            let indent = "  ".repeat(depth + 1);
            for line in kernel.body_lines(&|size| dim(size, &parent.env)) {
                let _ = writeln!(text, "{indent}{line}");
            }
        }
        NodeKind::Input { .. }
        | NodeKind::Constant { .. }
        | NodeKind::Op(_)
        | NodeKind::Item
        | NodeKind::Assert { .. }
        | NodeKind::DeviceAssert { .. }
        | NodeKind::Print { .. } => {}
    }
}

/// `then {`, the branch's body and the symbols it made, `}`.
fn write_branch(
    text: &mut String,
    parent: &Graph,
    word: &str,
    branch: &Graph,
    depth: usize,
    sources: Option<&SourceMap>,
) {
    let indent = "  ".repeat(depth);
    let _ = writeln!(text, "{indent}{word} {{");
    write_body(text, branch, depth + 1, sources);
    let made = symbols_made_by(branch, parent);
    if !made.is_empty() {
        let _ = writeln!(text, "{indent}  symbols:");
        write_symbols(text, branch, &made, &format!("{indent}    "), sources);
    }
    let _ = writeln!(text, "{indent}}}");
}

/// The symbols of a branch that its parent does not have (a branch's environment starts as
/// a copy of its parent's).
fn symbols_made_by(branch: &Graph, parent: &Graph) -> Vec<SymbolId> {
    let names = |graph: &Graph| -> Vec<String> {
        graph
            .env
            .symbols()
            .iter()
            .map(|symbol| symbol.name().to_string())
            .collect()
    };
    let known = names(parent);
    names(branch)
        .iter()
        .enumerate()
        .filter(|(_, name)| !known.contains(name))
        .map(|(index, _)| SymbolId(index as u32))
        .collect()
}

fn write_node(text: &mut String, graph: &Graph, index: u32, node: &Node) {
    let env = &graph.env;
    let outputs = || types(&node.outputs, env);
    let _ = write!(text, "%{index} = ");
    match &node.kind {
        NodeKind::Input { name, path } => {
            let _ = write!(text, "input {name} {} : {}", argument(path), outputs());
        }
        NodeKind::Constant { index: constant } => {
            let _ = write!(text, "constant #{constant} : {}", outputs());
        }
        NodeKind::Op(Op::Fused(kernel)) => {
            let _ = write!(
                text,
                "fused[{}]({}) : {}",
                kernel.member_names().join(", "),
                args(&node.args, graph),
                outputs()
            );
        }
        NodeKind::Op(operation) => {
            let _ = write!(
                text,
                "{}({}) : {}",
                operation.name(),
                op::arguments(operation, &node.args, graph),
                outputs()
            );
        }
        NodeKind::Item => {
            let dtype = node.outputs.first().map(|meta| meta.dtype.to_string());
            let _ = write!(
                text,
                "item({}) : {}",
                args(&node.args, graph),
                dtype.unwrap_or_default()
            );
        }
        NodeKind::Assert {
            cond,
            message,
            code,
        } => {
            // A check's code is the default and is not written.
            let code = if *code == Code::CheckFailed {
                String::new()
            } else {
                format!("{code} ")
            };
            let _ = write!(
                text,
                "assert {}, {code}{}",
                env.display(*cond),
                template(message, graph)
            );
        }
        NodeKind::DeviceAssert {
            message,
            code,
            located,
        } => {
            // A device check's code is the default and is not written.
            let code = if *code == Code::DeviceCheckFailed {
                String::new()
            } else {
                format!("{code} ")
            };
            let (condition, subjects) = node.args.split_at(node.args.len().min(1));
            let _ = write!(
                text,
                "device_assert {}, {code}{}",
                args(condition, graph),
                template(message, graph)
            );
            if let Some(located) = located {
                let names: Vec<String> = located
                    .names
                    .iter()
                    .map(|name| {
                        let mut quoted = String::from("\"");
                        escape_into(&mut quoted, name);
                        quoted.push('"');
                        quoted
                    })
                    .collect();
                let predicate = match located.op {
                    Some(op) => format!("{}({})", op.name(), args(subjects, graph)),
                    None => args(subjects, graph),
                };
                let _ = write!(text, ", located {predicate} as [{}]", names.join(", "));
            }
        }
        NodeKind::Print { line } => {
            let _ = write!(text, "print {}", template(line, graph));
        }
        NodeKind::Cond { .. } => {
            let _ = write!(text, "cond({}) : {}", args(&node.args, graph), outputs());
        }
    }
    write_binds(text, node, env);
}

/// ` -> u0 (dim 0)` for each symbol the node binds; ` -> u0` for an element.
fn write_binds(text: &mut String, node: &Node, env: &ShapeEnv) {
    for (symbol, source) in &node.binds {
        let _ = write!(text, " -> {}", env.symbol(*symbol).name());
        match source {
            BindSource::Element => {}
            BindSource::Dim { output, dim } if node.outputs.len() == 1 && *output == 0 => {
                let _ = write!(text, " (dim {dim})");
            }
            BindSource::Dim { output, dim } => {
                let _ = write!(text, " (output {output}, dim {dim})");
            }
            BindSource::Value { output } => {
                let _ = write!(text, " (value of output {output})");
            }
        }
    }
}

/// `@0`, or `@0[1]` for item 1 of a list argument 0.
pub fn argument(path: &ArgumentPath) -> String {
    let mut text = String::from("@");
    for (position, index) in path.iter().enumerate() {
        if position == 0 {
            let _ = write!(text, "{index}");
        } else {
            let _ = write!(text, "[{index}]");
        }
    }
    text
}

fn value(value: ValueRef, graph: &Graph) -> String {
    let outputs = graph
        .nodes
        .get(value.node.index())
        .map_or(1, |node| node.outputs.len());
    if outputs == 1 && value.output == 0 {
        value.node.to_string()
    } else {
        format!("{}.{}", value.node, value.output)
    }
}

fn args(arguments: &[super::ir::Arg], graph: &Graph) -> String {
    let printed: Vec<String> = arguments.iter().map(|a| op::arg(a, graph)).collect();
    printed.join(", ")
}

pub fn dim(d: Dim, env: &ShapeEnv) -> String {
    match d {
        Dim::Known(value) => value.to_string(),
        Dim::Sym(expr) => env.display(expr),
    }
}

fn dims(shape: &[Dim], env: &ShapeEnv) -> String {
    let printed: Vec<String> = shape.iter().map(|d| dim(*d, env)).collect();
    format!("[{}]", printed.join(", "))
}

/// `f32[s0, 3]`.
pub fn meta(meta: &Meta, env: &ShapeEnv) -> String {
    format!("{}{}", meta.dtype, dims(&meta.shape, env))
}

fn types(outputs: &[Meta], env: &ShapeEnv) -> String {
    let printed: Vec<String> = outputs.iter().map(|m| meta(m, env)).collect();
    match printed.as_slice() {
        [one] => one.clone(),
        many => format!("({})", many.join(", ")),
    }
}

/// A template as a TSL string literal: `"want {u0} elements"`.
fn template(template: &Template, graph: &Graph) -> String {
    let mut text = String::from("\"");
    for part in &template.0 {
        match part {
            Part::Text(literal) => escape_into(&mut text, literal),
            Part::Int(d) => {
                let _ = write!(text, "{{{}}}", dim(*d, &graph.env));
            }
            Part::Bool(cond) => {
                let _ = write!(text, "{{{}}}", graph.env.display(*cond));
            }
            Part::Scalar(tensor) => {
                let _ = write!(text, "{{scalar({})}}", value(*tensor, graph));
            }
            Part::Tensor(tensor) => {
                let _ = write!(text, "{{{}}}", value(*tensor, graph));
            }
        }
    }
    text.push('"');
    text
}

fn escape_into(text: &mut String, literal: &str) {
    for c in literal.chars() {
        match c {
            '"' => text.push_str("\\\""),
            '\\' => text.push_str("\\\\"),
            '\n' => text.push_str("\\n"),
            '\r' => text.push_str("\\r"),
            '\t' => text.push_str("\\t"),
            '{' => text.push_str("\\{"),
            '}' => text.push_str("\\}"),
            c => text.push(c),
        }
    }
}

fn output(returned: &Output, graph: &Graph) -> String {
    match returned {
        Output::None => "none".to_string(),
        Output::Bool(b) => b.to_string(),
        Output::SymBool(cond) => graph.env.display(*cond),
        Output::Int(d) => dim(*d, &graph.env),
        Output::Float(x) => crate::dtype::format_f64(*x),
        Output::Scalar(tensor) => format!("scalar({})", value(*tensor, graph)),
        Output::Tensor(tensor) => value(*tensor, graph),
        Output::Str(text) => format!("{text:?}"),
        Output::Template(parts) => format!("template {}", template(parts, graph)),
        Output::List(items) => {
            let printed: Vec<String> = items.iter().map(|item| output(item, graph)).collect();
            format!("[{}]", printed.join(", "))
        }
    }
}

pub fn range(range: Range) -> String {
    let end = |value: i64| match value {
        NEG_INF => "-inf".to_string(),
        POS_INF => "inf".to_string(),
        value => value.to_string(),
    };
    format!("[{}, {}]", end(range.lo), end(range.hi))
}

fn write_symbols(
    text: &mut String,
    graph: &Graph,
    symbols: &[SymbolId],
    indent: &str,
    sources: Option<&SourceMap>,
) {
    let env = &graph.env;
    for &id in symbols {
        let symbol = env.symbol(id);
        let described = match &symbol.kind {
            SymbolKind::Backed { source, .. } => format!("{source}{}", read_from(graph, id)),
            SymbolKind::Unbacked { origin } => match sources {
                Some(sources) => {
                    format!("{} at {}", origin.operation, sources.location(origin.span))
                }
                None => origin.operation.clone(),
            },
        };
        let _ = write!(
            text,
            "{indent}{} = {described}, range {}",
            symbol.name(),
            self::range(symbol.range)
        );
        if symbol.size_like && !symbol.is_backed() {
            text.push_str(", size-like");
        }
        if let Some(replacement) = env.replacement(id) {
            let _ = write!(text, ", replaced by {}", env.display(replacement));
        }
        text.push('\n');
    }
}

/// ` from @0.size(0), @2.size(0)`: where a backed symbol is read, in the graph's order.
fn read_from(graph: &Graph, symbol: SymbolId) -> String {
    let places: Vec<String> = graph
        .backed
        .iter()
        .filter(|(backed, _)| *backed == symbol)
        .map(|(_, source)| match source {
            InputSource::TensorDim { path, dim } => format!("{}.size({dim})", argument(path)),
            InputSource::Int { path } => argument(path),
        })
        .collect();
    if places.is_empty() {
        String::new()
    } else {
        format!(" from {}", places.join(", "))
    }
}

fn write_guards(text: &mut String, graph: &Graph, sources: Option<&SourceMap>) {
    let env = &graph.env;
    if env.guards().is_empty() {
        text.push_str("guards: none\n");
        return;
    }
    text.push_str("guards:\n");
    for guard in env.guards() {
        let _ = write!(text, "  {}", env.display(guard.cond));
        if let Some(sources) = sources {
            let _ = write!(text, "  (at {})", sources.location(guard.span));
        }
        text.push('\n');
    }
}
