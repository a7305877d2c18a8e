//! The graph text reads back: `parse(print(g))` is `g` for every graph traced from the suite
//! and the examples (before and after the passes), compared with spans and call traces
//! erased; and `print(parse(text))` is `text` for every graph snapshot (without the source
//! locations, which are spans). Broken texts give errors, never panics. Templates are
//! compared with adjacent text parts joined and empty ones dropped, which print the same.

mod common;

use std::fmt::Write as _;

use common::{on_big_stack, root, traces_of, tsl_files};
use tsl::graph::ir::{Arg, Graph, Node, NodeKind, Output, Part, Template};
use tsl::graph::parse::parse_graph;
use tsl::graph::print::print_graph;
use tsl::graph::shape::Dim;
use tsl::graph::{passes, verify};
use tsl::sym::{ExprId, SymbolId, SymbolKind};

/// A graph as text that two graphs share exactly when they are equal apart from spans, call
/// traces, and where their environments keep expressions: every expression is shown as it
/// prints and every symbol by name, and the symbols (without hints) and guards are listed.
/// A branch lists only the symbols its parent does not have.
fn normal(graph: &Graph, parent: Option<&Graph>) -> String {
    let mut text = format!("graph {}\n", graph.name);
    for node in &graph.nodes {
        let mut node = node.clone();
        node.span = tsl::source::Span::default();
        node.trace.clear();
        merge_text(&mut node.kind);
        let mut expressions = Vec::new();
        node_expressions(&node, &mut expressions);
        let branches = take_branches(&mut node);
        let _ = writeln!(
            text,
            "{}",
            rename(graph, &format!("{node:?}"), &expressions)
        );
        for branch in branches {
            text.push_str(&normal(&branch, Some(graph)));
        }
    }
    let mut expressions = Vec::new();
    let mut output = graph.output.clone();
    merge_output_text(&mut output);
    output_expressions(&output, &mut expressions);
    let returned = format!("{output:?} {:?}", graph.backed);
    let _ = writeln!(text, "{}", rename(graph, &returned, &expressions));
    text.push_str(&symbols(graph, parent));
    text
}

/// Adjacent text parts joined and empty ones dropped: the same template, and the same text.
fn merge_template(template: &mut Template) {
    let mut parts: Vec<Part> = Vec::new();
    for part in template.0.drain(..) {
        match (parts.last_mut(), part) {
            (_, Part::Text(text)) if text.is_empty() => {}
            (Some(Part::Text(previous)), Part::Text(text)) => previous.push_str(&text),
            (_, part) => parts.push(part),
        }
    }
    template.0 = parts;
}

fn merge_text(kind: &mut NodeKind) {
    match kind {
        NodeKind::Assert { message, .. } | NodeKind::DeviceAssert { message, .. } => {
            merge_template(message);
        }
        NodeKind::Print { line } => merge_template(line),
        NodeKind::Input { .. }
        | NodeKind::Constant { .. }
        | NodeKind::Op(_)
        | NodeKind::Item
        | NodeKind::Cond { .. } => {}
    }
}

fn merge_output_text(output: &mut Output) {
    match output {
        Output::Template(template) => merge_template(template),
        Output::List(items) => items.iter_mut().for_each(merge_output_text),
        _ => {}
    }
}

fn take_branches(node: &mut Node) -> Vec<Graph> {
    let NodeKind::Cond {
        then_branch,
        else_branch,
    } = &mut node.kind
    else {
        return Vec::new();
    };
    let empty = || Box::new(Graph::new("", tsl::sym::ShapeEnv::new()));
    vec![
        *std::mem::replace(then_branch, empty()),
        *std::mem::replace(else_branch, empty()),
    ]
}

fn symbols(graph: &Graph, parent: Option<&Graph>) -> String {
    let env = &graph.env;
    let known = |name: &str| {
        parent.is_some_and(|parent| {
            parent
                .env
                .symbols()
                .iter()
                .any(|s| s.name().to_string() == name)
        })
    };
    let mut text = String::new();
    for (index, symbol) in env.symbols().iter().enumerate() {
        let name = symbol.name().to_string();
        if known(&name) {
            continue;
        }
        let label = match &symbol.kind {
            SymbolKind::Backed { source, .. } => source.clone(),
            SymbolKind::Unbacked { origin } => origin.operation.clone(),
        };
        let replacement = env
            .replacement(SymbolId(index as u32))
            .map(|expr| env.display(expr));
        let _ = writeln!(
            text,
            "{name} {label} {:?} {} {replacement:?}",
            symbol.range, symbol.size_like
        );
    }
    if parent.is_none() {
        for guard in env.guards() {
            let _ = writeln!(text, "guard {}", env.display(guard.cond));
        }
    }
    text
}

/// `ExprId(n)` and `SymbolId(n)` in debug text, as they print.
fn rename(graph: &Graph, debug: &str, expressions: &[ExprId]) -> String {
    let mut text = debug.to_string();
    for expr in expressions {
        text = text.replace(
            &format!("{expr:?}"),
            &format!("«{}»", graph.env.display(*expr)),
        );
    }
    for (index, symbol) in graph.env.symbols().iter().enumerate() {
        let id = format!("{:?}", SymbolId(index as u32));
        text = text.replace(&id, &format!("«{}»", symbol.name()));
    }
    text
}

fn dim_expression(dim: &Dim, found: &mut Vec<ExprId>) {
    if let Dim::Sym(expr) = dim {
        found.push(*expr);
    }
}

fn template_expressions(template: &Template, found: &mut Vec<ExprId>) {
    for part in &template.0 {
        match part {
            Part::Int(dim) => dim_expression(dim, found),
            Part::Bool(expr) => found.push(*expr),
            Part::Text(_) | Part::Scalar(_) | Part::Tensor(_) => {}
        }
    }
}

fn node_expressions(node: &Node, found: &mut Vec<ExprId>) {
    for meta in &node.outputs {
        meta.shape.iter().for_each(|dim| dim_expression(dim, found));
    }
    for arg in &node.args {
        if let Arg::Int(dim) = arg {
            dim_expression(dim, found);
        }
    }
    match &node.kind {
        NodeKind::Op(op) => op.dims().iter().for_each(|dim| dim_expression(dim, found)),
        NodeKind::Assert { cond, message, .. } => {
            found.push(*cond);
            template_expressions(message, found);
        }
        NodeKind::DeviceAssert { message, .. } => template_expressions(message, found),
        NodeKind::Print { line } => template_expressions(line, found),
        NodeKind::Input { .. }
        | NodeKind::Constant { .. }
        | NodeKind::Item
        | NodeKind::Cond { .. } => {}
    }
}

fn output_expressions(output: &Output, found: &mut Vec<ExprId>) {
    match output {
        Output::SymBool(expr) => found.push(*expr),
        Output::Int(dim) => dim_expression(dim, found),
        Output::Template(template) => template_expressions(template, found),
        Output::List(items) => items
            .iter()
            .for_each(|item| output_expressions(item, found)),
        Output::None
        | Output::Bool(_)
        | Output::Float(_)
        | Output::Scalar(_)
        | Output::Str(_)
        | Output::Tensor(_) => {}
    }
}

/// Prints, parses and compares one graph; returns a description of the first difference.
fn round_trip(graph: &Graph) -> Result<(), String> {
    let text = print_graph(graph, None);
    let parsed = parse_graph(&text).map_err(|error| format!("{error}\n{text}"))?;
    let (expected, actual) = (normal(graph, None), normal(&parsed, None));
    if expected != actual {
        return Err(format!("{text}\nexpected\n{expected}\nparsed\n{actual}"));
    }
    let again = print_graph(&parsed, None);
    if again != text {
        return Err(format!("printed\n{text}\nreprinted\n{again}"));
    }
    if verify::verify(graph).is_ok() {
        verify::verify(&parsed).map_err(|problem| format!("{problem}\n{text}"))?;
    }
    Ok(())
}

#[test]
fn every_traced_graph_parses_back() {
    let count = on_big_stack(|| {
        let mut files = tsl_files(&root().join("tests/suite"));
        files.extend(tsl_files(&root().join("examples")));
        let mut count = 0;
        for path in files {
            for graph in traces_of(path.clone()) {
                let mut optimized = graph.clone();
                passes::optimize(&mut optimized);
                for graph in [graph, optimized] {
                    if let Err(problem) = round_trip(&graph) {
                        panic!("{}: {problem}", path.display());
                    }
                    count += 1;
                }
            }
        }
        count
    });
    assert!(count >= 40, "only {count} graphs were traced");
}

/// A snapshot's graph text, without insta's header, trailing notes and source locations.
fn snapshot_graph(snapshot: &str) -> String {
    let body = snapshot.splitn(3, "---\n").nth(2).unwrap_or_default();
    let mut text = String::new();
    for line in body.lines().filter(|line| !line.starts_with("note: ")) {
        let line = match line.split_once("  (at ") {
            Some((guard, _)) => guard.to_string(),
            None => without_origin_location(line),
        };
        text.push_str(&line);
        text.push('\n');
    }
    text
}

/// `u0 = item() at demo.tsl:3:13, range …` without ` at demo.tsl:3:13`.
fn without_origin_location(line: &str) -> String {
    let Some((head, rest)) = line.split_once(", range [") else {
        return line.to_string();
    };
    match head.rsplit_once(" at ") {
        Some((origin, location)) if location.contains(':') && !location.contains(' ') => {
            format!("{origin}, range [{rest}")
        }
        _ => line.to_string(),
    }
}

#[test]
fn every_graph_snapshot_prints_back_the_same() {
    let directory = root().join("tests/snapshots");
    let mut count = 0;
    for entry in std::fs::read_dir(&directory).expect("the snapshots directory") {
        let path = entry.expect("an entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let snapshot = path
            .extension()
            .is_some_and(|extension| extension == "snap");
        // `graphs__dot_*` snapshots are Graphviz output, not graph text.
        if !name.starts_with("graphs__") || name.starts_with("graphs__dot_") || !snapshot {
            continue;
        }
        let text = snapshot_graph(&std::fs::read_to_string(&path).expect("a snapshot"));
        let graph = parse_graph(&text).unwrap_or_else(|error| panic!("{name}: {error}\n{text}"));
        assert_eq!(print_graph(&graph, None), text, "{name}");
        count += 1;
    }
    assert!(count >= 20, "only {count} graph snapshots");
}

#[test]
fn errors_name_the_line_and_column() {
    let text = "graph f {\n  %0 = input x @0 : f32[s0]\n  %1 = frobnicate(%0) : f32[s0]\n  return %1\n}\nsymbols:\n  s0 = n from @0.size(0), range [2, inf]\n";
    let error = parse_graph(text).unwrap_err();
    assert_eq!((error.line, error.column), (3, 8), "{error}");
    assert!(
        error.message.contains("unknown operation `frobnicate`"),
        "{error}"
    );

    let error =
        parse_graph("graph f {\n  %0 = input x @0 : f32[s9]\n  return %0\n}\n").unwrap_err();
    assert_eq!(
        (error.line, error.message.as_str()),
        (2, "unknown symbol `s9`")
    );

    let error = parse_graph("graph f {\n  %0 = input x @0 : f32[3]\n  return %2\n}\n").unwrap_err();
    assert_eq!((error.line, error.column), (3, 10), "{error}");

    let text = "graph f {\n  return s0\n}\nsymbols:\n  s0 = n from @x.size(0), range [2, inf]\n";
    let error = parse_graph(text).unwrap_err();
    assert_eq!((error.line, error.column), (5, 16), "{error}");
}

/// Symbolic expressions print back as they were written when that is their canonical form.
#[test]
fn expressions_read_back_in_canonical_form() {
    let cases = [
        "s0 + 1",
        "-s0 + 2*u0",
        "u0 // 2",
        "2*(u0 // 2)",
        "max(s0, 0)",
        "min(s0, max(u0, 3))",
        "s0**2",
        "-u0",
        "u0 % 3 == 1",
        "s0 <= 4 and u0 > 2 or u0 == 0",
        "-9223372036854775808",
        "u0 <= s0",
    ];
    for expression in cases {
        let text = format!(
            "graph f {{\n  return [{expression}, 2.5, -inf, none, true, \"a\\tb\", template \"{{u0}}\\{{\"]\n}}\nsymbols:\n  s0 = n, range [2, inf]\n  u0 = item(), range [-inf, inf]\nguards: none\nasserts: 0\n"
        );
        let graph = parse_graph(&text).unwrap_or_else(|error| panic!("{expression}: {error}"));
        assert_eq!(print_graph(&graph, None), text);
    }
}

/// Every prefix of every graph snapshot, and a few snapshots with any one character
/// changed, parse or fail without panicking; what parses prints, and what verifies runs the
/// passes, without panicking.
#[test]
fn broken_texts_never_panic() {
    let directory = root().join("tests/snapshots");
    for entry in std::fs::read_dir(&directory).expect("the snapshots directory") {
        let path = entry.expect("an entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if !name.starts_with("graphs__") {
            continue;
        }
        let text = snapshot_graph(&std::fs::read_to_string(&path).expect("a snapshot"));
        let chars: Vec<char> = text.chars().collect();
        let mutated = MUTATED.iter().any(|snapshot| name.contains(snapshot));
        for end in 0..chars.len() {
            let prefix: String = chars[..end].iter().collect();
            try_text(&prefix);
            if !mutated {
                continue;
            }
            for replacement in ['%', '0', '9', '[', '{', ' ', '-', '\n'] {
                let mut changed = chars.clone();
                changed[end] = replacement;
                try_text(&changed.iter().collect::<String>());
            }
        }
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    for (open, close) in [("[", "]"), ("(", ")"), ("min(", ", 1)"), ("-", "")] {
        let deep = format!("{}s0{}", open.repeat(100_000), close.repeat(100_000));
        let text = format!(
            "graph f {{\n  %0 = input x @0 : f32[3]\n  %1 = reshape(%0, {deep}) : f32[3]\n  return {deep}\n}}\nsymbols:\n  s0 = n, range [2, inf]\n"
        );
        assert!(parse_graph(&text).is_err(), "{open}");
    }
}

/// The snapshots changed character by character: between them, every kind of line.
const MUTATED: [&str; 4] = ["checks", "branches", "runtime_print", "slices"];

fn try_text(text: &str) {
    if let Ok(graph) = parse_graph(text) {
        let _ = print_graph(&graph, None);
        if verify::verify(&graph).is_ok() {
            let mut optimized = graph.clone();
            passes::optimize(&mut optimized);
        }
    }
}
