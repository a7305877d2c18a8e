//! Reporting syntax errors in deeply nested input takes time linear in the file's size.
//!
//! Each family is measured at 1x, 4x and 16x its base size (about 12 KB, so 16x is about
//! 200 KB), from the text to every diagnostic rendered: `syntax::parse`, then the human
//! renderer. Throughput is in bytes, so a linear cost shows as the same bytes per second at
//! every size.
//!
//! - `deep`: a syntax error inside brackets nested far past the nesting limit
//!   (`let x = ((((…1 +…))))`), the case that once took 13.6 s at 200 KB;
//! - `wide`: a syntax error 990 brackets deep (just under the limit) followed by the rest of
//!   a long statement, which the parser's recovery skips token by token;
//! - `many`: many statements, each with an error 300 brackets deep.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tsl::diag::render;
use tsl::source::SourceMap;

const BASE: usize = 12_000;

/// Builds an input of about the given size.
type Build = fn(usize) -> String;

fn deep(size: usize) -> String {
    let depth = (size - 12) / 2;
    format!("let x = {}1 +{}\n", "(".repeat(depth), ")".repeat(depth))
}

fn wide(size: usize) -> String {
    let depth = 990;
    let items = (size - 2 * depth - 14) / 3;
    format!(
        "let x = {}1 +, {}{}\n",
        "[".repeat(depth),
        "1, ".repeat(items),
        "]".repeat(depth)
    )
}

fn many(size: usize) -> String {
    let statement = format!("let x = {}1 +, 2, 3{}\n", "[".repeat(300), "]".repeat(300));
    statement.repeat(size / statement.len())
}

/// Parses `text` and renders every diagnostic; returns how many there were.
fn report(text: &str) -> usize {
    let mut sources = SourceMap::new();
    let file = sources.add("bench.tsl", None, text.to_string());
    let parsed = tsl::syntax::parse(file, &sources.get(file).text);
    let rendered: usize = parsed
        .diagnostics
        .iter()
        .map(|diagnostic| render::to_text(&sources, diagnostic).len())
        .sum();
    assert!(rendered > 0, "the input has syntax errors");
    parsed.diagnostics.len()
}

fn syntax_errors(c: &mut Criterion) {
    let families: [(&str, Build); 3] = [("deep", deep), ("wide", wide), ("many", many)];
    for (name, build) in families {
        let mut group = c.benchmark_group(format!("syntax_errors/{name}"));
        group.sample_size(10);
        for scale in [1, 4, 16] {
            let text = build(BASE * scale);
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(
                BenchmarkId::from_parameter(format!("{scale}x")),
                &text,
                |b, text| {
                    b.iter(|| report(text));
                },
            );
        }
        group.finish();
    }
}

criterion_group!(benches, syntax_errors);
criterion_main!(benches);
