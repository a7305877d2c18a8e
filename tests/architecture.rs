//! Checks the dependency invariants stated in ARCHITECTURE.md by reading the sources.

use std::path::{Path, PathBuf};

fn rust_files(directory: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory)
            .expect("reading src/")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                files.push(path);
            }
        }
    }
    files
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every line of the files under `module` that mentions one of `forbidden`.
fn violations(module: &str, forbidden: &[&str]) -> Vec<String> {
    let root = src().join(module);
    let files = if root.is_dir() {
        rust_files(&root)
    } else {
        vec![root.with_extension("rs")]
    };
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("reading a source file");
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for pattern in forbidden {
                if code.contains(pattern) {
                    found.push(format!(
                        "{}:{}: {}",
                        file.display(),
                        number + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    found
}

#[test]
fn syntax_knows_no_values_or_tensors() {
    let forbidden = [
        "crate::eval",
        "crate::graph",
        "crate::backend",
        "crate::sym",
        "ndarray",
    ];
    assert_eq!(violations("syntax", &forbidden), Vec::<String>::new());
}

#[test]
fn sym_knows_no_tensors_graphs_or_syntax() {
    let forbidden = [
        "crate::eval",
        "crate::graph",
        "crate::backend",
        "crate::syntax",
        "crate::dtype",
        "ndarray",
    ];
    assert_eq!(violations("sym", &forbidden), Vec::<String>::new());
}

#[test]
fn graph_never_imports_a_backend_or_the_interpreter() {
    let forbidden = [
        "crate::backend",
        "crate::eval",
        "crate::syntax",
        "ndarray",
        "wgpu",
    ];
    assert_eq!(violations("graph", &forbidden), Vec::<String>::new());
}

#[test]
fn backend_never_imports_the_interpreter_or_syntax() {
    let forbidden = ["crate::eval", "crate::syntax"];
    assert_eq!(violations("backend", &forbidden), Vec::<String>::new());
}

#[test]
fn the_executor_and_the_interpreter_reach_kernels_only_through_the_device_trait() {
    // Eager code and compiled graphs run every operation through `backend::Dispatch` (an
    // executor `Device`); neither names a device's kernels, so each runs on every device.
    let forbidden = ["backend::cpu", "cpu::", "backend::gpu", "gpu::"];
    let mut found = violations("eval", &forbidden);
    found.extend(
        violations("backend/exec", &forbidden)
            .into_iter()
            .filter(|line| !line.contains("exec/tests.rs")),
    );
    assert_eq!(found, Vec::<String>::new());
}

#[test]
fn only_the_gpu_backend_imports_wgpu_and_naga() {
    let gpu = src().join("backend/gpu");
    let users = users_outside(&["wgpu::", "naga::"], |file| file.starts_with(&gpu));
    assert_eq!(users, Vec::<String>::new());
}

/// The source files outside `allowed` whose text contains any of `needles`.
fn users_outside(needles: &[&str], allowed: impl Fn(&Path) -> bool) -> Vec<String> {
    rust_files(&src())
        .into_iter()
        .filter(|file| !allowed(file))
        .filter(|file| {
            let text = std::fs::read_to_string(file).expect("reading a source file");
            needles.iter().any(|needle| text.contains(needle))
        })
        .map(|file| file.display().to_string())
        .collect()
}

#[test]
fn only_the_renderer_imports_ariadne() {
    let users = users_outside(&["ariadne::"], |file| file.ends_with("diag/render.rs"));
    assert_eq!(users, Vec::<String>::new());
}

#[test]
fn explicit_vector_instructions_are_only_in_the_transposes_and_compress() {
    // `pulp` gives safe AVX-512 shuffles and compresses where LLVM builds none from plain
    // code; everything else is plain Rust that the compiler vectorises.
    let allowed = [
        src().join("backend/cpu/matmul/gemm/transpose.rs"),
        src().join("backend/cpu/compact/compress.rs"),
    ];
    let users = users_outside(&["pulp::"], |file| allowed.iter().any(|path| path == file));
    assert_eq!(users, Vec::<String>::new());
}

#[test]
fn only_main_exits_the_process() {
    let exits = users_outside(&["process::exit"], |file| file.ends_with("main.rs"));
    assert_eq!(exits, Vec::<String>::new());
}

#[test]
fn only_the_repl_imports_rustyline() {
    let repl = src().join("repl");
    let users = users_outside(&["rustyline::"], |file| file.starts_with(&repl));
    assert_eq!(users, Vec::<String>::new());
}

#[test]
fn only_the_language_server_knows_lsp_types() {
    let lsp = src().join("lsp");
    let users = users_outside(&["lsp_types", "lsp_server"], |file| file.starts_with(&lsp));
    assert_eq!(users, Vec::<String>::new());
}

#[test]
fn the_language_server_writes_nothing_but_protocol_frames_to_stdout() {
    // stdout belongs to the protocol: a stray print would corrupt the session.
    let forbidden = ["println!", "print!(", "stdout()", "dbg!"];
    assert_eq!(violations("lsp", &forbidden), Vec::<String>::new());
}

#[test]
fn element_functions_live_in_the_semantics_table() {
    // Kernels take every element's value from `graph::semantics`, so eager, fused and
    // generated kernels cannot disagree; they never compute one themselves.
    let forbidden = [
        "f32::exp",
        ".exp()",
        "f32::ln",
        "f32::powf",
        "wrapping_rem",
        "wrapping_div",
        "copysign",
    ];
    let found: Vec<String> = violations("backend", &forbidden)
        .into_iter()
        .filter(|line| !line.contains("/tests.rs:") && !line.contains("1.0f32.tanh()"))
        .collect();
    assert_eq!(found, Vec::<String>::new());
}

#[test]
fn unsafe_code_is_confined_to_the_three_safe_wrappers() {
    let found: Vec<String> = violations("", &["unsafe"])
        .into_iter()
        .filter(|line| {
            !line.contains("backend/cpu/prefetch.rs:")
                && !line.contains("backend/cpu/fresh.rs:")
                && !line.contains("backend/cpu/fused/native/code.rs:")
        })
        .collect();
    assert_eq!(found, Vec::<String>::new());
}
