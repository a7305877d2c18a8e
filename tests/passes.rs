//! No pass may drop a check: for every traced graph of every suite program and example (the
//! traces of real calls, and the traces `tsl check` makes from annotations), the asserts after
//! all passes are exactly the asserts before them, and fusion keeps every node with effects in
//! its order.

mod common;

use common::{Collect, on_big_stack, root, traces_of, tsl_files};
use tsl::eval::{Interpreter, Options};
use tsl::graph::ir::{Graph, Node, NodeKind, Part};
use tsl::graph::op::Op;
use tsl::graph::passes;

/// Every assert of a graph and its branches, described independently of node numbering.
fn asserts(graph: &Graph) -> Vec<String> {
    let mut found = Vec::new();
    for node in &graph.nodes {
        match &node.kind {
            NodeKind::Assert { cond, message, .. } => {
                found.push(format!(
                    "assert {} {}",
                    graph.env.display(*cond),
                    text(&message.0)
                ));
            }
            NodeKind::DeviceAssert {
                message,
                code,
                located,
            } => {
                let names = located.as_ref().map(|located| located.names.join(", "));
                found.push(format!(
                    "device_assert {code} {} {names:?}",
                    text(&message.0)
                ));
            }
            NodeKind::Cond {
                then_branch,
                else_branch,
            } => {
                found.extend(asserts(then_branch));
                found.extend(asserts(else_branch));
            }
            _ => {}
        }
    }
    found.sort();
    found
}

/// The nodes with effects (asserts, prints, random numbers, branches), in program order:
/// fusion may move pure operations later, never these.
fn effects_in_order(graph: &Graph) -> Vec<String> {
    graph
        .nodes
        .iter()
        .filter(|node| node.kind.has_effects() || matches!(node.kind, NodeKind::Item))
        .map(|node| match &node.kind {
            NodeKind::Assert { message, .. } => format!("assert {}", text(&message.0)),
            NodeKind::DeviceAssert { message, .. } => format!("device_assert {}", text(&message.0)),
            NodeKind::Print { line } => format!("print {}", text(&line.0)),
            other => format!("{other:?}").chars().take(40).collect(),
        })
        .collect()
}

fn text(parts: &[Part]) -> String {
    parts
        .iter()
        .map(|part| match part {
            Part::Text(text) => text.clone(),
            _ => "{}".to_string(),
        })
        .collect()
}

#[test]
fn no_pass_drops_an_assert() {
    let (graphs, with_asserts, with_fusion, keeping) = on_big_stack(|| {
        let mut files = tsl_files(&root().join("tests/suite"));
        files.extend(tsl_files(&root().join("examples")));
        let mut graphs = 0;
        let mut with_asserts = 0;
        let mut with_fusion = 0;
        let mut keeping = 0;
        for path in files {
            for graph in traces_of(path.clone()) {
                let before = asserts(&graph);
                let mut optimized = graph.clone();
                passes::optimize(&mut optimized);
                assert_eq!(
                    asserts(&optimized),
                    before,
                    "{}: graph {}",
                    path.display(),
                    graph.name
                );
                let effects = effects_in_order(&optimized);
                let mut fused = optimized.clone();
                passes::fuse(&mut fused, &passes::FusionPolicy::default());
                let context = format!("{}: fused graph {}", path.display(), graph.name);
                assert_eq!(asserts(&fused), before, "{context}");
                assert_eq!(effects_in_order(&fused), effects, "{context}");
                assert_eq!(tsl::graph::verify::verify(&fused), Ok(()), "{context}");
                with_fusion += usize::from(fused.nodes.len() < optimized.nodes.len());
                keeping += usize::from(fused.nodes.iter().any(keeps_elements));
                graphs += 1;
                with_asserts += usize::from(!before.is_empty());
            }
        }
        (graphs, with_asserts, with_fusion, keeping)
    });
    assert!(with_fusion >= 10, "only {with_fusion} graphs were fused");
    assert!(
        keeping >= 5,
        "only {keeping} graphs keep masked elements inside a fused kernel"
    );
    assert!(graphs >= 20, "only {graphs} graphs were traced");
    assert!(
        with_asserts >= 10,
        "only {with_asserts} graphs hold asserts"
    );
}

/// Whether a node is a fused kernel that compacts elements by a mask.
fn keeps_elements(node: &Node) -> bool {
    matches!(&node.kind, NodeKind::Op(Op::Fused(kernel)) if kernel.mask().is_some())
}

/// The optimised graph of a function traced from its annotations.
fn traced(source: &'static str) -> Graph {
    on_big_stack(move || {
        let sink = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut interpreter = Interpreter::new(Options::default(), Box::new(Collect(sink)));
        let (module, _) = interpreter
            .load_source_definitions("demo.tsl", None, source.to_string())
            .expect("the program loads");
        let function = module.function("f").expect("f exists");
        interpreter
            .trace_from_annotations(&function)
            .0
            .unwrap_or_else(|diagnostic| panic!("{diagnostic:?}"))
            .graph
    })
}

const NARROW: &str = "@compile\nfn f(x: f32[n], k: i64[1]) {\n    let u = k.item()\n    check_size u, max = n\n    return x.narrow(0, 0, u)\n}\n";

#[test]
fn the_verifier_accepts_traced_graphs_and_names_violations() {
    let graph = traced(NARROW);
    assert_eq!(tsl::graph::verify::verify(&graph), Ok(()));

    let mut swapped = graph.clone();
    swapped.nodes.swap(1, 2);
    let problem = tsl::graph::verify::verify(&swapped).unwrap_err();
    assert!(problem.contains("before"), "{problem}");

    let mut unbound = graph.clone();
    let item = unbound
        .nodes
        .iter()
        .position(|node| matches!(node.kind, NodeKind::Item))
        .expect("an item node");
    unbound.nodes[item].binds.clear();
    let problem = tsl::graph::verify::verify(&unbound).unwrap_err();
    assert!(
        problem.contains("needs u0 before anything binds it"),
        "{problem}"
    );
}

#[test]
fn dead_code_elimination_keeps_what_binds_a_needed_symbol() {
    // The item's value is only used by the check, so the item must stay to bind it.
    let graph = traced(
        "@compile\nfn f(x: f32[n], k: i64[1]) {\n    let unused = x.exp()\n    check k.item() < 5\n    return x\n}\n",
    );
    let kinds: Vec<String> = graph
        .nodes
        .iter()
        .map(|node| match &node.kind {
            NodeKind::Op(op) => op.name().to_string(),
            NodeKind::Input { .. } => "input".to_string(),
            NodeKind::Item => "item".to_string(),
            NodeKind::Assert { .. } => "assert".to_string(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(kinds, ["input", "input", "item", "assert"]);
}
