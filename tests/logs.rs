//! The log channels of spec §9, in their documented formats.

mod common;

use common::{on_big_stack, run_source};
use tsl::eval::{LogChannels, Options};

fn logged(channels: &str, source: &'static str) -> Vec<String> {
    let (log, _) = LogChannels::parse(channels);
    on_big_stack(move || {
        let options = Options {
            log,
            ..Options::default()
        };
        run_source("f.tsl", source, options).log
    })
}

#[test]
fn dynamic_channel_shows_symbols_replacements_and_asserts() {
    let source = "@compile\nfn f(x: i64[2], y: f32[n]) {\n    let [a, b] = x.tolist()\n    check a == b\n    check_size a, max = 8\n    return y\n}\nf(tensor([1, 1]), ones(3))\n";
    let lines = logged("dynamic", source);
    assert_eq!(
        lines,
        [
            "create_unbacked u0 [-inf, inf] at f.tsl:3:18",
            "create_unbacked u1 [-inf, inf] at f.tsl:3:18",
            "runtime_assert u0 == u1 at f.tsl:4:5",
            "set_replacement u1 = u0",
            "runtime_assert u0 >= 0 at f.tsl:5:5",
            "runtime_assert u0 <= 8 at f.tsl:5:5",
        ]
    );
}

#[test]
fn guards_channel_shows_each_guard_with_its_location() {
    let source = "@compile(dynamic = true)\nfn f(x: f32[n]) {\n    if x.size(0) > 2 { return x[:2] }\n    return x\n}\nf(ones(5))\n";
    assert_eq!(logged("guards", source), ["guard s0 > 2 at f.tsl:3:8"]);
}

#[test]
fn graph_channel_prints_every_trace() {
    let source = "@compile\nfn f(x: f32[n]) {\n    return x * 2.0\n}\nf(ones(3))\n";
    let lines = logged("graph", source);
    assert_eq!(lines[0], "graph f {");
    assert!(
        lines.contains(&"  %1 = mul(%0, 2.0) : f32[3]".to_string()),
        "{lines:?}"
    );
}

#[test]
fn channels_are_off_by_default_and_unknown_names_are_reported() {
    let source = "@compile\nfn f(x: i64[1]) {\n    return x.item()\n}\nf(tensor([1]))\n";
    assert!(logged("", source).is_empty());
    let (channels, unknown) = LogChannels::parse("guards,bogus, graph");
    assert!(channels.guards && channels.graph && !channels.dynamic);
    assert_eq!(unknown, ["bogus"]);
}
