//! Snapshots of rendered diagnostics (colour off), one per code the eager interpreter raises,
//! plus the JSON form and an error inside a std function seen from the user's code.

mod common;

use common::{on_big_stack, run_source};
use tsl::eval::Options;

/// Renders every diagnostic `source` produces, in order.
fn rendered(source: &'static str) -> String {
    on_big_stack(move || {
        let run = run_source("demo.tsl", source, Options::default());
        assert!(run.failed, "the program was expected to fail");
        run.diagnostics
            .iter()
            .map(|diagnostic| diagnostic.rendered.clone())
            .collect::<Vec<_>>()
            .join("\n")
    })
}

macro_rules! snapshot {
    ($name:ident, $source:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(rendered($source));
        }
    };
}

snapshot!(
    syntax_error,
    "let x = 1 +\nprint(x))\nlet y = 2 $ 3\nif x = 1 { print(x) }\n"
);
snapshot!(name_error, "let length = 3\nprint(lenght + 1)\n");
snapshot!(name_error_method, "let x = zeros(3)\nprint(x.summ())\n");
snapshot!(type_error, "let x = tensor([1, 2])\nprint(x.mean())\n");
snapshot!(
    type_error_arity,
    "fn f(a, b) { return a + b }\nprint(f(1, 2, 3))\n"
);
snapshot!(
    shape_error_matmul,
    "let a = zeros(2, 3)\nlet b = zeros(4, 5)\nprint(a @ b)\n"
);
snapshot!(
    shape_error_annotation,
    "fn f(x: f32[n, 3], y: f32[n]) { return x }\nf(zeros(2, 3), zeros(4))\n"
);
snapshot!(
    check_failed,
    "let n = 3\ncheck n > 5, \"need more than 5 rows, got {n}\"\n"
);
snapshot!(
    device_check_failed,
    "fn positive(a) {\n    check all(a > 0), \"should throw\"\n    return a * 2\n}\npositive(tensor([1.0, -2.0]))\n"
);
snapshot!(input_error, "let x = load(\"missing.npy\")\n");
snapshot!(value_error, "let x = tensor([1, 2])\nprint(x // 0)\n");
snapshot!(
    recursion_limit,
    "fn down(n) {\n    return down(n - 1)\n}\ndown(3)\n"
);
snapshot!(
    error_inside_std,
    "use std.jagged as jagged\nlet values = tensor([1.0, 2.0])\nprint(jagged.split_by_lengths(values, tensor([1, 2])))\n"
);
snapshot!(
    origin_of_a_mask,
    "@compile\nfn f(x: f32[n]) {\n    let y = x[x > 0.0]\n    if y.size(0) == 3 { return 1 }\n    return 0\n}\nf(tensor([1.0, -2.0, 3.0]))\n"
);
snapshot!(
    origin_inside_std,
    "use std.jagged as jagged\n@compile\nfn f(lengths: i64[n]) {\n    let ids = jagged.segment_ids(lengths)\n    if ids.size(0) == 3 { return 1 }\n    return 0\n}\nf(tensor([1, 2]))\n"
);

#[test]
fn json_object() {
    let mut sources = tsl::source::SourceMap::new();
    let file = sources.add(
        "demo.tsl",
        None,
        "let n = 3\ncheck n > 5, \"too few\"\n".into(),
    );
    let diagnostic = tsl::diag::Diagnostic::error(
        tsl::diag::Code::CheckFailed,
        tsl::source::Span::new(file, 10, 32),
        "too few",
    )
    .with_label("this check failed")
    .with_note("n = 3")
    .with_help("pass more rows");
    let json = tsl::diag::render::to_json(&sources, &diagnostic);
    insta::assert_snapshot!(serde_json::to_string_pretty(&json).expect("JSON serialises"));
}

snapshot!(
    data_dependent_guard,
    "@compile\nfn bad(x: i64[2]) -> bool {\n    let [u0, u1] = x.tolist()\n    if u0 * 2 == u1 * 3 { return true }\n    return false\n}\nbad(tensor([3, 2]))\n"
);
snapshot!(
    data_dependent_int,
    "@compile\nfn count(x: i64[1]) {\n    let n = x.item()\n    check n >= 0\n    let total = 0\n    for i in range(n) { total = total + i }\n    return total\n}\ncount(tensor([4]))\n"
);
snapshot!(
    data_dependent_in_library,
    "use std.shape as shapes\n@compile\nfn f(x: f32[n], k: i64[1]) {\n    return shapes.tensor_split(x, k.item())\n}\nf(ones(4), tensor([2]))\n"
);
snapshot!(
    tensor_data_guard,
    "@compile\nfn f(x: f32[n]) {\n    if x.sum() > 0 { return x }\n    return -x\n}\nf(ones(3))\n"
);
snapshot!(
    compiled_shape_error,
    "@compile(dynamic = true)\nfn add(x, y) { return x + y }\nadd(ones(7), ones(8))\n"
);
snapshot!(
    compiled_runtime_check,
    "@compile\nfn head(x: f32[n]) {\n    let kept = x[x > 0.0]\n    check kept.size(0) >= 2, \"need two positives, got {kept.size(0)}\"\n    return kept\n}\nhead(tensor([1.0, 2.0, -1.0]))\nhead(tensor([1.0, -2.0, -1.0]))\n"
);
snapshot!(
    compiled_shape_assumption,
    "@compile\nfn add_kept(x: f32[n], y: f32[m]) {\n    return x[x > 0.0] + y[y > 0.0]\n}\nadd_kept(tensor([1.0, 2.0]), tensor([1.0, 2.0, 3.0]))\n"
);
snapshot!(
    recompile_limit,
    "@compile(dynamic = false)\nfn total(x) { return x.sum() }\nfor n in range(1, 10) { total(ones(n)) }\ncheck false\n"
);
snapshot!(
    recompile_limit_float,
    "@compile\nfn scaled(x: f32[n], scale: float) { return x * scale }\nfor i in range(9) { scaled(ones(2), float(i)) }\ncheck false\n"
);
snapshot!(
    hint_python_constants,
    "let ready = True\nif ready == None { print(1) }\n"
);
snapshot!(hint_f_string, "let n = 3\nprint(f\"n = {n}\")\n");
snapshot!(
    hint_python_keywords,
    "def double(x):\n    return 2 * x\nif double(1) > 1:\n    print(\"big\")\n"
);
snapshot!(hint_invert_float, "let x = tensor([1.0, 0.0])\nprint(~x)\n");

/// ariadne ends lines at characters TSL reads as spaces (form feed, a lone `\r`) or as text
/// (U+2028 in a comment): the rendered location must still be the line the JSON output, the
/// language server and editors give.
#[test]
fn rendered_lines_are_tsl_lines() {
    for (source, line) in [
        ("let x = 1\n# a\x0cpage break\nlet y = x + \"a\"\n", 3),
        ("# a\u{2028}separator\nlet y = 1 + \"a\"\n", 2),
        ("let x = 1 \r let y = x + \"a\"\n", 1),
        ("let x = 1\r\nlet y = x + \"a\"\r\n", 2),
    ] {
        let run = on_big_stack(move || run_source("demo.tsl", source, Options::default()));
        let [diagnostic] = run.diagnostics.as_slice() else {
            panic!(
                "one diagnostic expected from {source:?}: {:?}",
                run.diagnostics
            );
        };
        assert_eq!(diagnostic.line, Some(line), "{source:?}");
        assert!(
            diagnostic.rendered.contains(&format!("demo.tsl:{line}:")),
            "{source:?} rendered as\n{}",
            diagnostic.rendered
        );
    }
}

/// A line too long to echo shows an excerpt of the line the span starts on, never of the line
/// before it.
#[test]
fn long_line_excerpts_come_from_the_span_line() {
    let source = format!("let x = [1]\nlet y = x{}\n", "[0]".repeat(1200));
    let text = on_big_stack(move || {
        let run = run_source("demo.tsl", &source, Options::default());
        run.diagnostics[0].rendered.clone()
    });
    assert!(text.contains("demo.tsl:2:9"), "{text}");
    assert!(text.contains("| …let y = x[0][0]"), "{text}");
    assert!(!text.contains("let x = [1]"), "{text}");
}
