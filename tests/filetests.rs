//! Graph filetests, in the cranelift style: each `tests/graph/*.graph` file holds a graph in
//! its printed text form, the passes to run on it, and what the printed result must show.
//!
//! ```text
//! ; Two identical adds become one.        <- `;` lines are comments to the graph reader
//! ; passes: cse dce                       <- run in order, by name (`graph::passes::PASSES`)
//! graph f {
//!   %0 = input x @0 : f32[s0]
//!   ...
//! }
//! symbols:
//!   s0 = n from @0.size(0), range [2, inf]
//! ; check: %1 = add(%0, 1.0) : f32[s0]    <- found in a line of the result,
//! ; check: return %2                      <- each after the line the previous check found
//! ; not: %3                               <- found nowhere in the result
//! ```
//!
//! The graph is verified before and after the passes. On a failure the harness prints the
//! file, the first check that failed and the whole printed result. Every input is also
//! written as the printer writes it (parsing and printing it gives its own lines back), so
//! the files read as real printed graphs.

mod common;

use std::path::{Path, PathBuf};

use common::root;
use tsl::graph::parse::parse_graph;
use tsl::graph::print::print_graph;
use tsl::graph::{passes, verify};

/// The directives of a filetest.
#[derive(Debug, Default, PartialEq)]
struct Directives {
    passes: Vec<String>,
    checks: Vec<String>,
    nots: Vec<String>,
}

fn directives(text: &str) -> Directives {
    let mut found = Directives::default();
    for line in text.lines().map(str::trim) {
        if let Some(names) = line.strip_prefix("; passes:") {
            found
                .passes
                .extend(names.split_whitespace().map(str::to_string));
        } else if let Some(check) = line.strip_prefix("; check:") {
            found.checks.push(check.trim().to_string());
        } else if let Some(absent) = line.strip_prefix("; not:") {
            found.nots.push(absent.trim().to_string());
        }
    }
    found
}

/// Whether `printed` shows every check in order and none of the `not`s.
fn matches(printed: &str, directives: &Directives) -> Result<(), String> {
    let lines: Vec<&str> = printed.lines().collect();
    let mut next = 0;
    for check in &directives.checks {
        match lines[next..]
            .iter()
            .position(|line| line.contains(check.as_str()))
        {
            Some(offset) => next += offset + 1,
            None => {
                return Err(format!(
                    "`; check: {check}` is not in the output after line {next}"
                ));
            }
        }
    }
    match directives
        .nots
        .iter()
        .find(|absent| printed.contains(absent.as_str()))
    {
        Some(absent) => Err(format!("`; not: {absent}` is in the output")),
        None => Ok(()),
    }
}

/// Runs one filetest; the error says what failed and shows the output.
fn run(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|error| error.to_string())?;
    let directives = directives(&text);
    let mut graph = parse_graph(&text).map_err(|error| format!("parse error at {error}"))?;
    verify::verify(&graph).map_err(|problem| format!("the input does not verify: {problem}"))?;
    for name in &directives.passes {
        let pass = passes::by_name(name).ok_or_else(|| format!("no pass is called `{name}`"))?;
        pass(&mut graph);
    }
    let printed = print_graph(&graph, None);
    let verified =
        verify::verify(&graph).map_err(|problem| format!("the output does not verify: {problem}"));
    verified
        .and_then(|()| matches(&printed, &directives))
        .map_err(|problem| format!("{problem}\nthe output was:\n{printed}"))
}

/// Every `tests/graph/*.graph`, in name order.
fn filetests() -> Vec<PathBuf> {
    let directory = root().join("tests/graph");
    let mut paths: Vec<_> = std::fs::read_dir(&directory)
        .expect("tests/graph")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "graph")
        })
        .collect();
    paths.sort();
    paths
}

#[test]
fn every_filetest_passes() {
    let paths = filetests();
    let failures: Vec<String> = paths
        .iter()
        .filter_map(|path| {
            run(path)
                .err()
                .map(|problem| format!("{}: {problem}", path.display()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(paths.len() >= 6, "only {} filetests", paths.len());
}

/// The graph lines of a filetest: neither blank nor comments.
fn graph_lines(text: &str) -> String {
    let mut lines = String::new();
    for line in text.lines() {
        if !line.trim().is_empty() && !line.trim_start().starts_with(';') {
            lines.push_str(line);
            lines.push('\n');
        }
    }
    lines
}

#[test]
fn every_filetest_input_prints_back_as_written() {
    for path in filetests() {
        let text = std::fs::read_to_string(&path).expect("a filetest");
        let graph =
            parse_graph(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        assert_eq!(
            print_graph(&graph, None),
            graph_lines(&text),
            "{}",
            path.display()
        );
    }
}

#[test]
fn checks_match_in_order_and_nots_anywhere() {
    let directives = directives("; check: b\n; check: c\n; not: z\n");
    assert_eq!(matches("a\nb\nc\n", &directives), Ok(()));
    assert!(matches("c\nb\n", &directives).is_err());
    assert!(matches("b\nc\nz\n", &directives).is_err());
}
