//! Snapshots of traced graphs: each program's function is traced from its annotations (input
//! sizes are symbols without hints, as `tsl graph` does) and printed with its symbols, guards
//! and asserts.

mod common;

use common::on_big_stack;
use tsl::eval::{Interpreter, Options};

/// The printed graph of `function` in `source`, with notes the trace left.
fn graph(source: &'static str, function: &'static str) -> String {
    render(source, function, |traced, interpreter| {
        tsl::graph::print::print_graph(traced, Some(interpreter.sources()))
    })
}

/// The graph of `function` in `source` as `tsl graph --dot` writes it.
fn dot(source: &'static str, function: &'static str) -> String {
    render(source, function, |traced, _| {
        tsl::graph::dot::to_dot(traced)
    })
}

fn render(
    source: &'static str,
    function: &'static str,
    show: fn(&tsl::graph::ir::Graph, &Interpreter) -> String,
) -> String {
    on_big_stack(move || {
        let captured = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut interpreter = Interpreter::new(
            Options::default(),
            Box::new(common::Collect(captured.clone())),
        );
        let (module, _) = interpreter
            .load_source_definitions("demo.tsl", None, source.to_string())
            .unwrap_or_else(|| panic!("the program loads: {:?}", captured.borrow()));
        let function = module.function(function).expect("the function exists");
        let (traced, notes) = interpreter.trace_from_annotations(&function);
        let traced = traced.unwrap_or_else(|diagnostic| panic!("the trace fails: {diagnostic:?}"));
        let mut text = show(&traced.graph, &interpreter);
        for note in notes {
            text.push_str("note: ");
            text.push_str(&note.message);
            text.push('\n');
        }
        text
    })
}

macro_rules! graph_snapshot {
    ($name:ident, $function:literal, $source:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(graph($source, $function));
        }
    };
}

graph_snapshot!(
    elementwise,
    "f",
    "@compile\nfn f(x: f32[n, 3], y: f32[3]) {\n    return where(x > 0, (x * 2.0 + y).relu().exp(), clamp(x, min = -1.0)) - 0.5\n}\n"
);
graph_snapshot!(
    reductions,
    "f",
    "@compile\nfn f(x: f32[n, m]) {\n    return [x.sum(), x.mean(1, keepdim = true), x.max(0), x.argmax(1), (x > 0).any()]\n}\n"
);
graph_snapshot!(
    matmul_and_linear,
    "f",
    "use std.nn as nn\n@compile\nfn f(x: f32[b, d], w: f32[k, d], bias: f32[k]) {\n    return nn.linear(x, w, bias) @ w\n}\n"
);
graph_snapshot!(
    reshape_and_views,
    "f",
    "@compile\nfn f(x: f32[n, 6]) {\n    let y = x.reshape(-1, 2, 3).permute(1, 0, 2)\n    return [y.flatten(1), x.T, x.unsqueeze(0).squeeze(0), x.view(n * 3, 2)]\n}\n"
);
graph_snapshot!(
    broadcast_and_expand,
    "f",
    "@compile\nfn f(x: f32[n, 1], y: f32[m]) {\n    return [x + y, x.expand(n, 4), y.expand(2, -1)]\n}\n"
);
graph_snapshot!(
    cat_and_stack,
    "f",
    "@compile\nfn f(a: f32[n, 2], b: f32[m, 2]) {\n    return [cat([a, b]), stack([a, a], 1), cat([a, a], dim = 1)]\n}\n"
);
graph_snapshot!(
    split_sizes,
    "f",
    "@compile\nfn f(x: f32[n], k: i64[2], y: f32[6, m]) {\n    let [a, b] = k.tolist()\n    return [x.split([a, b]), y.split(4)]\n}\n"
);
graph_snapshot!(
    narrow_with_item,
    "head",
    "@compile\nfn head(x: f32[n], y: f32[m]) -> f32[?] {\n    let u0 = x.sum().long().item()\n    check_size u0\n    check u0 <= y.size(0), \"want {u0} elements, y has {y.size(0)}\"\n    return y.narrow(0, 0, u0)\n}\n"
);
graph_snapshot!(
    nonzero_rows,
    "f",
    "@compile\nfn f(x: f32[n, m]) {\n    let hits = x.nonzero()\n    return x.index_select(0, hits[:, 0])\n}\n"
);
graph_snapshot!(
    boolean_masks,
    "f",
    "@compile\nfn f(x: f32[n], y: f32[n]) {\n    let a = x[x > 0]\n    let b = y[y > 0]\n    return a * b\n}\n"
);
graph_snapshot!(
    item_and_tolist,
    "f",
    "@compile\nfn f(x: i64[3], y: f32[n]) {\n    let [a, b, c] = x.tolist()\n    let again = x[0].item()\n    check a + b + c > 1\n    return y * (a + again)\n}\n"
);
graph_snapshot!(
    slices,
    "f",
    "@compile\nfn f(x: f32[n, m], k: i64[1]) {\n    let u = k.item()\n    return [x[1:], x[:, ::2], x[-1], x[:u], x[u]]\n}\n"
);
graph_snapshot!(
    gathers,
    "f",
    "@compile\nfn f(x: f32[n, m], idx: i64[n, 2], rows: i64[k]) {\n    return [x.gather(1, idx), x.index_select(0, rows), x[rows]]\n}\n"
);
graph_snapshot!(
    scans,
    "f",
    "@compile\nfn f(x: i64[n]) {\n    return [x.cumsum(0), x.diff(), arange(n)]\n}\n"
);
graph_snapshot!(
    data_dependent_selections,
    "f",
    "@compile\nfn f(x: f32[n], counts: i64[n]) {\n    return [x.masked_select(x > 0), x.repeat_interleave(counts), x.unique(), repeat_interleave(counts)]\n}\n"
);
graph_snapshot!(
    checks,
    "f",
    "@compile\nfn f(x: f32[n], k: i64[1]) {\n    let u = k.item()\n    check_size u, max = n\n    check u != 3, \"u must not be 3, got {u}\"\n    check all(x > 0), \"x must be positive\"\n    return x.narrow(0, 0, u)\n}\n"
);
graph_snapshot!(
    branches,
    "f",
    "fn keep(x) { return x * 2.0 }\nfn positives(x) { return x[x > 0] }\n@compile\nfn f(x: f32[n]) {\n    return cond(x.sum() > 0, keep, positives, [x])\n}\n"
);
graph_snapshot!(
    runtime_print,
    "f",
    "@compile\nfn f(x: f32[n]) {\n    let m = x.mean().item()\n    print(\"mean\", m, \"of\", x.size(0), \"values:\", x)\n    return m * 2.0\n}\n"
);
graph_snapshot!(
    tracing_helpers,
    "f",
    "@compile\nfn f(x: f32[n]) {\n    let hits = x.nonzero().size(0)\n    if size_oblivious(hits != 1) and not guard_or_false(hits == 0) {\n        return x.sum()\n    }\n    return x.mean()\n}\n"
);
graph_snapshot!(
    int_arguments,
    "f",
    "@compile\nfn f(x: f32[n], k: int) {\n    return x[:k] + arange(k).float()\n}\n"
);
graph_snapshot!(
    specialisation_note,
    "f",
    "@compile\nfn f(x: f32[n]) {\n    if x.size(0) > 2 { return x[:2] }\n    return x\n}\n"
);
graph_snapshot!(
    std_library_inlined,
    "f",
    "use std.nn as nn\n@compile\nfn f(logits: f32[b, c], targets: i64[b]) {\n    return nn.cross_entropy(logits, targets)\n}\n"
);
graph_snapshot!(
    jagged_segments,
    "f",
    "use std.jagged as jagged\n@compile\nfn f(values: f32[total, d], lengths: i64[b]) {\n    check lengths.sum().item() == values.size(0)\n    return jagged.segment_sum(values, lengths)\n}\n"
);
graph_snapshot!(
    passes_fold_share_and_drop,
    "f",
    "let table = arange(4).float()\n@compile\nfn f(x: f32[n]) {\n    let unused = x.exp()\n    let a = (x * 2.0).relu()\n    let b = (x * 2.0).relu()\n    let same = x.reshape(n).float()\n    return a + b + same + ones(3).sum()\n}\n"
);
graph_snapshot!(
    sorting,
    "f",
    "@compile\nfn f(x: f32[n, m], k: i64[1]) {\n    let [values, order] = x.sort(1, descending = true)\n    return [values, order, x.argsort(0), x.topk(k.item(), dim = 1, largest = false)]\n}\n"
);
graph_snapshot!(
    day_one_lowerings,
    "f",
    "@compile\nfn f(x: f32[n, m]) {\n    let bad = isnan(x) | isinf(x)\n    return [x.masked_fill(bad, 0.0), x.var(1), x.std(), zeros_like(x), full_like(x, 2, dtype = i64), x.clone(), ~bad, x.amax([0, 1])]\n}\n"
);

#[test]
fn dot_draws_data_dependent_sizes_from_their_binder() {
    // Dashed edges go from the `item` that binds u0 to the asserts and the narrow that need
    // its value, and from the mask indexing that binds u1 to the print that shows it.
    insta::assert_snapshot!(dot(
        "@compile\nfn head(x: f32[n], k: i64[1]) {\n    let u = k.item()\n    check_size u\n    check u <= x.size(0), \"want {u} of {x.size(0)}\"\n    let kept = x[x > 0.0]\n    print(\"kept\", kept.size(0))\n    return [x.narrow(0, 0, u), kept * 2.0]\n}\n",
        "head"
    ));
}
