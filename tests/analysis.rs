//! The analysis front door (`tsl::check::analyze`, which `tsl check` and the language server
//! share): used files contribute definitions without running, `print`/`save` do nothing,
//! unsaved text overrides files on disk, an interrupted analysis stops, and the facts it
//! returns say what names refer to.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use common::on_big_stack;
use tsl::check::facts::{Definition, DefinitionKind};
use tsl::check::{Analysis, Input, analyze};
use tsl::eval::{Options, Status};
use tsl::source::Overlay;

fn scratch(name: &str) -> PathBuf {
    let directory =
        std::env::temp_dir().join(format!("tsl-analysis-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).expect("creating a scratch directory");
    directory
}

/// Analyzes `text` as the file at `path` on a thread with the interpreter's stack, and hands
/// the analysis to `body` there (an analysis holds the parsed program, which stays on the
/// thread that made it).
fn analyze_at<T: Send + 'static>(
    path: &Path,
    text: &str,
    overlay: Overlay,
    body: impl FnOnce(&Analysis) -> T + Send + 'static,
) -> T {
    let input = Input {
        name: path.display().to_string(),
        path: Some(path.to_path_buf()),
        text: text.to_string(),
    };
    on_big_stack(move || {
        let stop = Arc::new(AtomicBool::new(false));
        body(&analyze(input, overlay, Options::default(), stop))
    })
}

fn messages(analysis: &Analysis) -> Vec<String> {
    analysis
        .diagnostics
        .iter()
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect()
}

#[test]
fn used_files_are_defined_without_running() {
    let directory = scratch("effects");
    // Running this module prints and writes a file; analysing a script that uses it must
    // do neither.
    let module = "print(\"the module ran\")\n\
                  save(ones(2), \"noisy_module_output.npy\")\n\
                  let scale = 2.0\n\
                  fn double(x) {\n    return x * scale\n}\n";
    std::fs::write(directory.join("noisy.tsl"), module).expect("writing the module");
    let main = "use \"noisy.tsl\" as noisy\n\
                @compile\n\
                fn f(x: f32[n]) -> f32[n] {\n    return noisy.double(x)\n}\n\
                print(\"main ran\")\n\
                save(ones(1), \"main_output.npy\")\n";
    let (found, status) = analyze_at(&directory.join("main.tsl"), main, Overlay::new(), |a| {
        (messages(a), a.status)
    });
    // The module's `let` did not run either: its value is unknown to the trace.
    assert_eq!(
        found,
        [
            "specialization: the trace needs the global `scale`, which only has a value when \
          the script runs; the rest of this function is not checked"
        ]
    );
    assert_eq!(status, Status::Ok);
    assert!(!directory.join("noisy_module_output.npy").exists());
    assert!(!directory.join("main_output.npy").exists());
    // `tsl check` prints nothing to stdout either.
    let run = common::check_file(&directory.join("main.tsl"));
    assert_eq!(run.stdout, "");
    assert!(!directory.join("noisy_module_output.npy").exists());
}

#[test]
fn unsaved_text_of_a_used_file_overrides_the_disk() {
    let directory = scratch("overlay");
    std::fs::write(directory.join("lib.tsl"), "fn f(x) {\n    return x\n}\n").expect("lib");
    let main = "use \"lib.tsl\" as lib\nprint(lib.g(1))\n";
    let path = directory.join("main.tsl");
    let on_disk = analyze_at(&path, main, Overlay::new(), messages);
    assert_eq!(on_disk, ["name-error: module `lib` has no member `g`"]);
    let mut overlay = Overlay::new();
    overlay.insert(
        directory.join("lib.tsl"),
        "fn g(y) {\n    return y\n}\n".to_string(),
    );
    let edited = analyze_at(&path, main, overlay, messages);
    assert_eq!(edited, Vec::<String>::new());
}

#[test]
fn a_used_file_with_a_syntax_error_is_reported_at_the_use() {
    let directory = scratch("broken-module");
    std::fs::write(
        directory.join("lib.tsl"),
        "fn f(x) {\n    return x +\n}\nfn g(y) {\n    return y\n}\n",
    )
    .expect("lib");
    let main = "use \"lib.tsl\" as lib\nprint(lib.g(1))\n";
    let (codes, use_site) = analyze_at(&directory.join("main.tsl"), main, Overlay::new(), |a| {
        let codes: Vec<&str> = a.diagnostics.iter().map(|d| d.code.as_str()).collect();
        let use_site = a.diagnostics[0].trace.first().map(|frame| {
            let in_main = frame.call_site.file == a.file;
            (in_main, frame.call_site.start)
        });
        (codes, use_site)
    });
    assert_eq!(codes, ["syntax-error"]);
    assert_eq!(use_site, Some((true, 0)));
}

#[test]
fn an_interrupted_analysis_stops() {
    let text = "@compile\nfn f(x: f32[n]) -> f32[n] {\n    return x + 1.0\n}\n";
    let interrupted = on_big_stack(move || {
        let input = Input {
            name: "a.tsl".to_string(),
            path: None,
            text: text.to_string(),
        };
        let stop = Arc::new(AtomicBool::new(true));
        analyze(input, Overlay::new(), Options::default(), stop).interrupted
    });
    assert!(interrupted);
}

#[test]
fn names_refer_to_their_definitions() {
    let directory = scratch("names");
    std::fs::write(
        directory.join("lib.tsl"),
        "fn twice(x) {\n    return x * 2\n}\n",
    )
    .expect("lib");
    let main = "use \"lib.tsl\" as lib\n\
                let base = 3\n\
                fn f(x: f32[n], k) {\n    let y = lib.twice(x)\n    return y.sum() + k + n + base\n}\n\
                print(f(zeros(2), base))\n";
    let lib = directory.join("lib.tsl");
    analyze_at(
        &directory.join("main.tsl"),
        main,
        Overlay::new(),
        move |analysis| {
            assert_eq!(messages(analysis), Vec::<String>::new());
            let at = |needle: &str, nth: usize| -> u32 {
                let (offset, _) = main.match_indices(needle).nth(nth).expect("the needle");
                offset as u32
            };
            let definition = |offset: u32| {
                analysis
                    .names
                    .reference_at(offset)
                    .map(|reference| reference.definition.clone())
            };
            let source = |kind, offset: u32, length: u32| {
                Some(Definition::Source {
                    kind,
                    span: tsl::source::Span {
                        file: analysis.file,
                        start: offset,
                        end: offset + length,
                    },
                })
            };
            // `y` in `y.sum()` is the local of the `let` above it.
            assert_eq!(
                definition(at("y.sum", 0)),
                source(DefinitionKind::Local, at("y =", 0), 1)
            );
            // `n` is the dimension named in the annotation.
            assert_eq!(
                definition(at("+ n", 0) + 2),
                source(DefinitionKind::Dim, at("n]", 0), 1)
            );
            assert_eq!(
                definition(at("base", 1)),
                source(DefinitionKind::Global, at("base", 0), 4)
            );
            assert_eq!(
                definition(at("f(zeros", 0)),
                source(DefinitionKind::Function, at("f(x", 0), 1)
            );
            assert_eq!(
                definition(at("zeros", 0)),
                Some(Definition::Builtin("zeros".to_string()))
            );
            assert_eq!(
                definition(at("sum", 0)),
                Some(Definition::Method("sum".to_string()))
            );
            // `lib.twice` is defined in the used file.
            let Some(Definition::Source { kind, span }) = definition(at("twice", 0)) else {
                panic!("twice resolves to a definition");
            };
            assert_eq!(kind, DefinitionKind::Function);
            let file = analysis.sources.get(span.file);
            assert_eq!(file.path.as_deref(), Some(lib.as_path()));
            assert_eq!(file.snippet(span), "twice");
            // Inside `f`, after `let y`: the parameters, the dim, `y`, and the top-level `base`.
            let mut visible: Vec<&str> = analysis
                .names
                .visible_at(at("return y", 0))
                .map(|binding| binding.name.as_str())
                .collect();
            visible.sort_unstable();
            assert_eq!(visible, ["base", "k", "n", "x", "y"]);
        },
    );
}

#[test]
fn traces_record_types_and_what_checks_became() {
    let text = "@compile\n\
                fn f(x: f32[n, 3], k: i64[m]) -> f32[?] {\n\
                \x20   let y = x.sum(dim = 1)\n\
                \x20   let idx = k.nonzero()\n\
                \x20   check n > 2\n\
                \x20   check all(y > 0.0)\n\
                \x20   let u = k.sum().item()\n\
                \x20   check u <= n\n\
                \x20   return y\n\
                }\n";
    let input = Input {
        name: "types.tsl".to_string(),
        path: None,
        text: text.to_string(),
    };
    let (types, checks) = on_big_stack(move || {
        let options = Options {
            record_types: true,
            ..Options::default()
        };
        let analysis = analyze(
            input,
            Overlay::new(),
            options,
            Arc::new(AtomicBool::new(false)),
        );
        let [facts] = analysis.traces.as_slice() else {
            panic!("one trace");
        };
        let snippet = |span| analysis.sources.snippet(span).to_string();
        let types: Vec<(String, Vec<String>, Vec<String>)> = facts
            .types
            .iter()
            .map(|fact| (snippet(fact.span), fact.types.clone(), fact.symbols.clone()))
            .collect();
        let checks: Vec<(String, Vec<String>)> = facts
            .checks
            .iter()
            .map(|fact| (snippet(fact.span), fact.became.clone()))
            .collect();
        (types, checks)
    });
    let type_of = |code: &str| {
        types
            .iter()
            .find(|(snippet, _, _)| snippet == code)
            .map_or_else(
                || panic!("no type for {code}: {types:?}"),
                |(_, types, symbols)| (types.join(" | "), symbols.join("; ")),
            )
    };
    assert_eq!(type_of("x").0, "f32[n, 3]");
    assert_eq!(type_of("y").0, "f32[n]");
    assert_eq!(type_of("x.sum(dim = 1)").0, "f32[n]");
    let (idx, symbols) = type_of("idx");
    assert_eq!(idx, "i64[u0, 1]");
    assert_eq!(
        symbols,
        "u0 = nonzero() at types.tsl:4:15, range [0, inf], size-like"
    );
    assert!(type_of("u").0.starts_with("int = u1"), "{:?}", type_of("u"));
    let became = |code: &str| {
        checks
            .iter()
            .find(|(snippet, _)| snippet == code)
            .map_or_else(
                || panic!("no check {code}: {checks:?}"),
                |(_, became)| became.join(" | "),
            )
    };
    assert!(became("check n > 2").starts_with("a guard on input sizes: `n > 2`"));
    assert!(became("check all(y > 0.0)").starts_with("a device assert"));
    assert!(
        became("check u <= n").starts_with("a runtime assert: `u1 <= n`"),
        "{}",
        became("check u <= n")
    );
}

#[test]
fn a_problem_found_twice_is_reported_once() {
    // The static checks and the trace of `f` both find `foo`.
    let text = "@compile\nfn f(x: f32[n]) -> f32[n] {\n    return x + foo\n}\n";
    let found = on_big_stack(move || {
        let input = Input {
            name: "twice.tsl".to_string(),
            path: None,
            text: text.to_string(),
        };
        let stop = Arc::new(AtomicBool::new(false));
        messages(&analyze(input, Overlay::new(), Options::default(), stop))
    });
    assert_eq!(found, ["name-error: `foo` is not defined"]);
}
