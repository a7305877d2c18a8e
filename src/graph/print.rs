//! The stable text form of a graph (`tsl graph`, `TSL_LOG=graph`, snapshots):
//!
//! ```text
//! graph head {
//!   %0 = input x : f32[s0]
//!   %3 = item(%2) : i64 -> u0
//!   %4 = assert u0 >= 0, "check_size failed: n = {u0} is negative"
//!   %5 = narrow(%1, 0, 0, u0) : f32[u0]
//!   return %5
//! }
//! ```
//!
//! followed by the symbols, the guards and a count of asserts. Everything printed is in
//! program or creation order, so the text is deterministic.

use std::fmt::Write as _;

use super::ir::{Arg, Graph, Node, NodeKind, Output, Part, Template, ValueRef};
use super::op::{IndexSpec, Number, Op};
use super::shape::{Dim, Meta};
use crate::source::SourceMap;
use crate::sym::{NEG_INF, POS_INF, Range, ShapeEnv, SymbolKind};

/// The graph, its symbols, guards and asserts. Locations are shown when `sources` is given.
pub fn print_graph(graph: &Graph, sources: Option<&SourceMap>) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "graph {} {{", graph.name);
    write_body(&mut text, graph, 1);
    text.push_str("}\n");
    write_symbols(&mut text, graph, sources);
    write_guards(&mut text, graph, sources);
    let _ = writeln!(text, "asserts: {}", graph.assert_count());
    text
}

fn write_body(text: &mut String, graph: &Graph, depth: usize) {
    let indent = "  ".repeat(depth);
    for id in graph.ids() {
        let node = graph.node(id);
        let _ = write!(text, "{indent}");
        write_node(text, graph, id.0, node);
        text.push('\n');
        if let NodeKind::Op(Op::Fused(kernel)) = &node.kind {
            for line in kernel.body_lines(&|size| dim(size, &graph.env)) {
                let _ = writeln!(text, "{indent}    {line}");
            }
        }
        if let NodeKind::Cond {
            then_branch,
            else_branch,
        } = &node.kind
        {
            for (word, branch) in [("then", then_branch), ("else", else_branch)] {
                let _ = writeln!(text, "{indent}  {word} {{");
                write_body(text, branch, depth + 2);
                let _ = writeln!(text, "{indent}  }}");
            }
        }
    }
    let _ = writeln!(text, "{indent}return {}", output(&graph.output, graph));
}

fn write_node(text: &mut String, graph: &Graph, index: u32, node: &Node) {
    let env = &graph.env;
    let outputs = || types(&node.outputs, env);
    match &node.kind {
        NodeKind::Input { name, .. } => {
            let _ = write!(text, "%{index} = input {name} : {}", outputs());
        }
        NodeKind::Constant { index: constant } => {
            let _ = write!(text, "%{index} = constant #{constant} : {}", outputs());
        }
        NodeKind::Op(Op::Fused(kernel)) => {
            let _ = write!(
                text,
                "%{index} = fused[{}]({}) : {}",
                kernel.member_names().join(", "),
                args(&node.args, graph),
                outputs()
            );
        }
        NodeKind::Op(op) => {
            let _ = write!(
                text,
                "%{index} = {}({}) : {}",
                op.name(),
                op_arguments(op, &node.args, graph),
                outputs()
            );
        }
        NodeKind::Item => {
            let _ = write!(
                text,
                "%{index} = item({}) : {}",
                args(&node.args, graph),
                node.outputs[0].dtype
            );
            for (symbol, _) in &node.binds {
                let _ = write!(text, " -> {}", env.display(env.symbol_expr(*symbol)));
            }
        }
        NodeKind::Assert { cond, message } => {
            let _ = write!(
                text,
                "%{index} = assert {}, {}",
                env.display(*cond),
                template(message, graph)
            );
        }
        NodeKind::DeviceAssert { message, .. } => {
            let _ = write!(
                text,
                "%{index} = device_assert {}, {}",
                args(&node.args, graph),
                template(message, graph)
            );
        }
        NodeKind::Print { line } => {
            let _ = write!(text, "%{index} = print {}", template(line, graph));
        }
        NodeKind::Cond { .. } => {
            let _ = write!(
                text,
                "%{index} = cond({}) : {}",
                args(&node.args, graph),
                outputs()
            );
        }
    }
}

fn value(value: ValueRef, graph: &Graph) -> String {
    if graph.node(value.node).outputs.len() == 1 {
        value.node.to_string()
    } else {
        format!("{}.{}", value.node, value.output)
    }
}

/// `%1`, `2.0`, `u0`.
fn arg(argument: &Arg, graph: &Graph) -> String {
    match argument {
        Arg::Tensor(tensor) => value(*tensor, graph),
        Arg::Int(d) => dim(*d, &graph.env),
        Arg::Float(x) => crate::dtype::format_f64(*x),
        Arg::Bool(b) => b.to_string(),
    }
}

fn args(arguments: &[Arg], graph: &Graph) -> String {
    let printed: Vec<String> = arguments.iter().map(|a| arg(a, graph)).collect();
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

fn number(value: Number, env: &ShapeEnv) -> String {
    match value {
        Number::Int(d) => dim(d, env),
        Number::Float(x) => crate::dtype::format_f64(x),
    }
}

/// The operands then the attributes of an op, positionally.
fn op_arguments(op: &Op, arguments: &[Arg], graph: &Graph) -> String {
    let env = &graph.env;
    let operands = args(arguments, graph);
    let join = |attributes: String| {
        if operands.is_empty() {
            attributes
        } else if attributes.is_empty() {
            operands.clone()
        } else {
            format!("{operands}, {attributes}")
        }
    };
    match op {
        Op::Full { shape, .. } => format!("{}, {operands}", dims(shape, env)),
        Op::Arange { start, end, step } => format!(
            "{}, {}, {}",
            number(*start, env),
            number(*end, env),
            number(*step, env)
        ),
        Op::Randn { shape } => dims(shape, env),
        Op::Cast(dtype) => join(dtype.to_string()),
        Op::Clamp { min, max } => {
            let mut parts = vec![arg(&arguments[0], graph)];
            let mut bounds = arguments[1..].iter();
            for (present, name) in [(*min, "min"), (*max, "max")] {
                if present && let Some(bound) = bounds.next() {
                    parts.push(format!("{name}={}", arg(bound, graph)));
                }
            }
            parts.join(", ")
        }
        Op::Reduce {
            dims: reduced,
            keepdim,
            ..
        } => {
            let mut attributes = Vec::new();
            if let Some(reduced) = reduced {
                attributes.push(format!("dims={reduced:?}"));
            }
            if *keepdim {
                attributes.push("keepdim=true".to_string());
            }
            join(attributes.join(", "))
        }
        Op::Cumsum { dim: d } | Op::Diff { dim: d } | Op::Unsqueeze { dim: d } => {
            join(d.to_string())
        }
        Op::Reshape { shape } | Op::Expand { shape } => join(dims(shape, env)),
        Op::Permute { dims: order } | Op::Squeeze { dims: order } => join(format!("{order:?}")),
        Op::Cat { dim: d } | Op::Stack { dim: d } => format!("[{operands}], {d}"),
        Op::Split { sizes, dim: d } => join(format!("{}, {d}", dims(sizes, env))),
        Op::Narrow {
            dim: d,
            start,
            length,
        } => join(format!("{d}, {}, {}", dim(*start, env), dim(*length, env))),
        Op::IndexSelect { dim: d } | Op::Gather { dim: d } => {
            format!(
                "{}, {d}, {}",
                arg(&arguments[0], graph),
                arg(&arguments[1], graph)
            )
        }
        Op::Index { items } => {
            let mut tensors = arguments[1..].iter();
            let printed: Vec<String> = items
                .iter()
                .map(|item| index_item(item, &mut tensors, graph))
                .collect();
            format!("{}, [{}]", arg(&arguments[0], graph), printed.join(", "))
        }
        Op::RepeatInterleave { dim: Some(d) } => join(format!("dim={d}")),
        _ => operands,
    }
}

fn index_item<'a>(
    item: &IndexSpec,
    tensors: &mut impl Iterator<Item = &'a Arg>,
    graph: &Graph,
) -> String {
    let env = &graph.env;
    match item {
        IndexSpec::Int(position) => dim(*position, env),
        IndexSpec::Slice { start, stop, step } => {
            let bound = |b: &Option<Dim>| b.map(|d| dim(d, env)).unwrap_or_default();
            let mut slice = format!("{}:{}", bound(start), bound(stop));
            if *step != 1 {
                let _ = write!(slice, ":{step}");
            }
            slice
        }
        IndexSpec::NewAxis => "none".to_string(),
        IndexSpec::Mask { .. } | IndexSpec::Indices { .. } => tensors
            .next()
            .map(|tensor| arg(tensor, graph))
            .unwrap_or_default(),
    }
}

/// A template as a TSL string literal: `"want {u0} elements"`.
fn template(template: &Template, graph: &Graph) -> String {
    let mut text = String::from("\"");
    for part in &template.0 {
        match part {
            Part::Text(literal) => {
                for c in literal.chars() {
                    match c {
                        '"' => text.push_str("\\\""),
                        '\\' => text.push_str("\\\\"),
                        '\n' => text.push_str("\\n"),
                        '\t' => text.push_str("\\t"),
                        '{' => text.push_str("\\{"),
                        '}' => text.push_str("\\}"),
                        c => text.push(c),
                    }
                }
            }
            Part::Int(d) => {
                let _ = write!(text, "{{{}}}", dim(*d, &graph.env));
            }
            Part::Bool(cond) => {
                let _ = write!(text, "{{{}}}", graph.env.display(*cond));
            }
            Part::Scalar(tensor) | Part::Tensor(tensor) => {
                let _ = write!(text, "{{{}}}", value(*tensor, graph));
            }
        }
    }
    text.push('"');
    text
}

fn output(returned: &Output, graph: &Graph) -> String {
    match returned {
        Output::None => "none".to_string(),
        Output::Bool(b) => b.to_string(),
        Output::SymBool(cond) => graph.env.display(*cond),
        Output::Int(d) => dim(*d, &graph.env),
        Output::Float(x) => crate::dtype::format_f64(*x),
        Output::Scalar(tensor) | Output::Tensor(tensor) => value(*tensor, graph),
        Output::Str(text) => format!("{text:?}"),
        Output::Template(parts) => template(parts, graph),
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

fn write_symbols(text: &mut String, graph: &Graph, sources: Option<&SourceMap>) {
    let env = &graph.env;
    if env.symbols().is_empty() {
        return;
    }
    text.push_str("symbols:\n");
    for (index, symbol) in env.symbols().iter().enumerate() {
        let id = crate::sym::SymbolId(index as u32);
        let name = env.display(env.symbol_expr(id));
        let described = match &symbol.kind {
            SymbolKind::Backed { source, .. } => source.clone(),
            SymbolKind::Unbacked { origin } => match sources {
                Some(sources) => {
                    format!("{} at {}", origin.operation, sources.location(origin.span))
                }
                None => origin.operation.clone(),
            },
        };
        let _ = write!(
            text,
            "  {name} = {described}, range {}",
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
