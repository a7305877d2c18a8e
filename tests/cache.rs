//! The compile cache, observed through `TSL_LOG=recompiles`: which calls reuse a cached graph
//! (no line), which trace again (one line naming the guard that failed, with its values), and
//! what automatic dynamic, 0/1 specialisation, duck sizing and the recompile limit do.

mod common;

use common::{Run, run_source};
use tsl::eval::{LogChannels, Options};

fn run(text: &str) -> Run {
    let options = Options {
        log: LogChannels {
            recompiles: true,
            ..LogChannels::default()
        },
        ..Options::default()
    };
    let run = run_source("cache.tsl", text, options);
    let errors: Vec<_> = run
        .diagnostics
        .iter()
        .filter(|d| d.severity == tsl::diag::Severity::Error)
        .map(|d| d.rendered.clone())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    run
}

/// The recompile lines of a program.
fn recompiles(text: &str) -> Vec<String> {
    run(text).log
}

#[test]
fn calls_with_the_same_sizes_reuse_the_first_graph() {
    let log = recompiles(
        "@compile\nfn f(x) { return x * 2.0 }\n\
         for i in range(5) { f(ones(3, 2)) }\n",
    );
    assert_eq!(log, Vec::<String>::new());
}

#[test]
fn a_changed_size_retraces_once_and_becomes_symbolic() {
    let log = recompiles(
        "@compile\nfn f(x) { return x.sum(0) }\n\
         f(ones(3, 2))\nf(ones(4, 2))\nf(ones(5, 2))\nf(ones(9, 2))\nf(ones(3, 2))\n",
    );
    assert_eq!(log, ["recompile f: x.size(0) == 3 failed (x.size(0) = 4)"]);
}

#[test]
fn a_dim_that_never_changes_stays_static() {
    let log = recompiles(
        "@compile\nfn f(x) { return x.sum(0) }\n\
         f(ones(3, 2))\nf(ones(4, 2))\nf(ones(4, 3))\nf(ones(7, 5))\n",
    );
    assert_eq!(
        log,
        [
            "recompile f: x.size(0) == 3 failed (x.size(0) = 4)",
            "recompile f: x.size(1) == 2 failed (x.size(1) = 3)",
        ]
    );
}

#[test]
fn sizes_zero_and_one_are_specialised() {
    let log = recompiles(
        "@compile(dynamic = true)\nfn f(x) { return x.sum() }\n\
         f(ones(3))\nf(ones(8))\nf(ones(1))\nf(ones(1))\nf(ones(0))\nf(ones(0))\nf(ones(2))\n",
    );
    assert_eq!(
        log,
        [
            "recompile f: s0 > 1 failed (s0 = 1)",
            "recompile f: x.size(0) == 1 failed (x.size(0) = 0)",
        ]
    );
}

#[test]
fn a_guard_from_a_branch_decides_reuse() {
    let log = recompiles(
        "@compile(dynamic = true)\nfn f(x) {\n    if x.size(0) > 2 { return x.sum() }\n    return x.max()\n}\n\
         f(ones(5))\nf(ones(6))\nf(ones(2))\nf(ones(2))\nf(ones(7))\n",
    );
    assert_eq!(log, ["recompile f: s0 > 2 failed (s0 = 2)"]);
}

#[test]
fn int_arguments_are_specialised_until_they_change() {
    let log = recompiles(
        "@compile\nfn f(x, n: int) { return x * n }\n\
         f(ones(2), 2)\nf(ones(2), 2)\nf(ones(2), 3)\nf(ones(2), 4)\nf(ones(2), 0)\n",
    );
    assert_eq!(log, ["recompile f: n == 2 failed (n = 3)"]);
}

#[test]
fn sizes_that_were_equal_share_a_symbol_until_they_differ() {
    let log = recompiles(
        "@compile(dynamic = true)\nfn f(x, y) { return x.sum() + y.sum() }\n\
         f(ones(3), ones(3))\nf(ones(4), ones(4))\nf(ones(4), ones(5))\nf(ones(6), ones(2))\n",
    );
    assert_eq!(
        log,
        ["recompile f: x.size(0) == y.size(0) failed (x.size(0) = 4, y.size(0) = 5)"]
    );
}

#[test]
fn dtype_rank_list_and_value_changes_retrace() {
    let log = recompiles(
        "@compile\nfn f(x, xs, scale, flag) { return x.sum() * scale }\n\
         f(ones(2), [1, 2], 2.0, true)\n\
         f(ones(2).long(), [1, 2], 2.0, true)\n\
         f(ones(2, 1).long(), [1, 2], 2.0, true)\n\
         f(ones(2, 1).long(), [1, 2, 3], 2.0, true)\n\
         f(ones(2, 1).long(), [1, 2, 3], 3.0, true)\n\
         f(ones(2, 1).long(), [1, 2, 3], 3.0, false)\n",
    );
    assert_eq!(
        log,
        [
            "recompile f: x.dtype == f32 failed (x.dtype = i64)",
            "recompile f: x.ndim == 1 failed (x.ndim = 2)",
            "recompile f: len(xs) == 2 failed (len(xs) = 3)",
            "recompile f: scale is 2.0 as traced, got 3.0",
            "recompile f: flag is true as traced, got false",
        ]
    );
}

#[test]
fn a_changed_global_retraces() {
    let log = recompiles(
        "let w = ones(2)\n@compile\nfn f(x) { return x * w }\n\
         f(ones(2))\nf(ones(2))\nw = ones(2) * 3.0\nf(ones(2))\nf(ones(2))\n",
    );
    assert_eq!(log, ["recompile f: the global w changed"]);
}

#[test]
fn mark_dynamic_makes_the_first_trace_symbolic() {
    let log = recompiles(
        "@compile\nfn f(x) { return x.sum() }\n\
         let a = ones(4)\nmark_dynamic(a, 0)\nf(a)\nf(ones(6))\nf(ones(100))\n",
    );
    assert_eq!(log, Vec::<String>::new());
}

#[test]
fn data_dependent_sizes_never_retrace() {
    let log = recompiles(
        "@compile\nfn f(x: f32[n]) {\n    let kept = x[x > 0.0]\n    return kept.size(0)\n}\n\
         print(f(tensor([1.0, -1.0, 2.0])))\nprint(f(tensor([-1.0, -1.0, -2.0])))\n\
         print(f(tensor([3.0, 1.0, 2.0])))\n",
    );
    assert_eq!(log, Vec::<String>::new());
}

#[test]
fn past_the_limit_new_inputs_run_eagerly_with_one_warning() {
    let text = "@compile(dynamic = false)\nfn f(x) { return x.sum() }\n\
                for n in range(1, 15) { print(f(ones(n))) }\nprint(f(ones(3)))\n";
    let run = run(text);
    assert_eq!(run.log.len(), 7, "{:?}", run.log);
    assert_eq!(
        run.log[6],
        "recompile f: x.size(0) == 7 failed (x.size(0) = 8)"
    );
    let warnings: Vec<_> = run
        .diagnostics
        .iter()
        .filter(|d| d.code == "recompile-limit")
        .collect();
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].message.contains("`f` was compiled 8 times"),
        "{}",
        warnings[0].message
    );
    let printed: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(printed.len(), 15);
    assert_eq!(printed[13], "tensor(14.0)");
    assert_eq!(printed[14], "tensor(3.0)");
}

#[test]
fn a_redefined_function_starts_a_new_cache() {
    let log = recompiles(
        "@compile\nfn f(x) { return x + 1.0 }\nf(ones(2))\nf(ones(3))\n\
         @compile\nfn g(x) { return x + 2.0 }\ng(ones(2))\ng(ones(2))\n",
    );
    assert_eq!(log, ["recompile f: x.size(0) == 2 failed (x.size(0) = 3)"]);
}
