//! Memory the machine cannot provide is a diagnostic, never an abort: the `tsl` binary runs
//! under a 3 GiB address-space limit (`ulimit -v`), and tensors that fit the 2^31-element
//! limit but not the memory fail with a `value-error` naming their size in bytes, eagerly,
//! compiled and in the REPL (which goes on). `tsl check` computes no large constant at all.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The address-space limit, in KiB: room for the interpreter's 1 GiB stack and more.
const LIMIT_KIB: u64 = 3 << 20;

fn limited(args: &[&str], script: &str, input: &str) -> Output {
    let directory = std::env::temp_dir().join(format!("tsl-memory-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("creating a temporary directory");
    let name = format!("s{:x}.tsl", fxhash(script) ^ fxhash(&args.join(" ")));
    let path = directory.join(name);
    std::fs::write(&path, script).expect("writing a script");
    let command = format!("ulimit -v {LIMIT_KIB} && exec \"$0\" \"$@\"");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .arg(env!("CARGO_BIN_EXE_tsl"))
        .args(
            args.iter()
                .map(|arg| arg.replace("SCRIPT", &path.display().to_string())),
        )
        .env("NO_COLOR", "1")
        .env("TSL_HISTORY", "")
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running tsl under a memory limit");
    let mut stdin = child.stdin.take().expect("a pipe");
    stdin
        .write_all(input.as_bytes())
        .expect("writing the input");
    drop(stdin);
    child.wait_with_output().expect("waiting for tsl")
}

/// A stable name per script, so tests running side by side never share a file.
fn fxhash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3)
    })
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The run ended with the out-of-memory diagnostic for `bytes`, at `line`.
fn assert_out_of_memory(output: &Output, bytes: &str, line: usize) {
    let stderr = stderr(output);
    assert_eq!(output.status.code(), Some(1), "no clean exit:\n{stderr}");
    assert!(
        stderr.contains(&format!(
            "error[value-error]: out of memory: the result needs {bytes} bytes"
        )),
        "{stderr}"
    );
    assert!(stderr.contains(&format!(".tsl:{line}:")), "{stderr}");
}

#[test]
fn an_eager_tensor_too_large_for_memory_is_a_value_error() {
    let script = "print(\"before\")\nlet a = zeros(1000000000)\nprint(\"after\")\n";
    let output = limited(&["SCRIPT"], script, "");
    assert_out_of_memory(&output, "4000000000", 2);
    assert_eq!(stdout(&output), "before\n");
}

#[test]
fn a_compiled_result_too_large_for_memory_is_a_value_error() {
    let script = "@compile\nfn f(x: f32[n]) {\n    return x.expand(100000, n) * 2.0\n}\nprint(f(ones(20000)).sum())\n";
    let output = limited(&["SCRIPT"], script, "");
    assert_out_of_memory(&output, "8000000000", 3);
}

#[test]
fn the_repl_goes_on_after_running_out_of_memory() {
    let input = "let a = zeros(1000000000)\nprint(1 + 1)\n";
    let output = limited(&["repl"], "", input);
    let stderr = stderr(&output);
    assert!(
        stderr.contains("out of memory: the result needs 4000000000 bytes"),
        "{stderr}"
    );
    assert_eq!(stdout(&output), "2\n");
}

#[test]
fn tsl_check_and_graph_compute_no_large_constant() {
    let script = "@compile\nfn f(x: f32[n]) {\n    let z = zeros(2000000000)\n    return x.sum() + z.sum()\n}\n";
    let checked = limited(&["check", "SCRIPT"], script, "");
    assert_eq!(checked.status.code(), Some(0), "{}", stderr(&checked));
    let graph = limited(&["graph", "SCRIPT", "--fn", "f"], script, "");
    assert_eq!(graph.status.code(), Some(0), "{}", stderr(&graph));
    assert!(
        stdout(&graph).contains("full([2000000000], 0)"),
        "{}",
        stdout(&graph)
    );
}

/// A list of many tensors costs a few hundred bytes per tensor even when each is a view of no
/// elements: a split into ten million parts, or a list of ten million rows, is refused for
/// its memory (512 bytes reserved per tensor) before any part is made.
#[test]
fn lists_of_many_tensors_are_reserved_first() {
    let split = "print(\"before\")\nlet parts = zeros(10000000, 0).split(1)\nprint(len(parts))\n";
    let output = limited(&["SCRIPT"], split, "");
    assert_out_of_memory(&output, "5120000000", 2);
    assert_eq!(stdout(&output), "before\n");
    let sections = "let parts = zeros(10000000, 0).tensor_split(10000000)\n";
    assert_out_of_memory(&limited(&["SCRIPT"], sections, ""), "5120000000", 1);
    let rows = "let [first, ...rest] = zeros(10000000, 0)\nprint(len(rest))\n";
    assert_out_of_memory(&limited(&["SCRIPT"], rows, ""), "5120000000", 1);
}

/// Strings are built in memory asked for first, and their values (a copy) reserved before
/// they are made; a string the machine could not hold aborted the process. Which of the two
/// runs out first varies, so the byte count is not checked.
#[test]
fn strings_too_large_for_memory_are_a_value_error() {
    let held = |make: &str| {
        format!(
            "let s = \"ab\" * 15000000\nlet kept = []\nfor i in range(100) {{\n    kept = kept + [{make}]\n}}\n"
        )
    };
    for make in ["s * 2", "s + s", "\"{s}{s}\""] {
        let output = limited(&["SCRIPT"], &held(make), "");
        let stderr = stderr(&output);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{make}: no clean exit:\n{stderr}"
        );
        let message = "error[value-error]: out of memory: the result needs 600000";
        assert!(stderr.contains(message), "{make}:\n{stderr}");
        assert!(stderr.contains(".tsl:4:"), "{make}:\n{stderr}");
    }
}

/// Results whose size is known only from the data (`nonzero`, `repeat_interleave`, and a
/// compiled compaction fused with the work after it) ask for their memory once their kernel has
/// counted it, eagerly and compiled; they used to abort the process.
#[test]
fn results_sized_by_data_are_reserved_when_counted() {
    let nonzero = "let m = full([500000000], true)\nprint(nonzero(m).shape)\n";
    assert_out_of_memory(&limited(&["SCRIPT"], nonzero, ""), "4000000000", 2);
    let repeated = "let counts = full([1000], 500000)\nprint(repeat_interleave(counts).shape)\n";
    assert_out_of_memory(&limited(&["SCRIPT"], repeated, ""), "4000000000", 2);
    let compiled = "@compile\nfn f(m: bool[n]) {\n    return nonzero(m) * 2\n}\nprint(f(full([500000000], true)).shape)\n";
    assert_out_of_memory(&limited(&["SCRIPT"], compiled, ""), "4000000000", 3);
}

/// Sorting keeps a line of packed keys per thread beside its reserved results; `topk` of one
/// long line asks for them first (it aborted: its results are small, its scratch is not).
#[test]
fn sort_scratch_is_reserved() {
    let script = "let x = full([200000000], 1.0)\nprint(x.topk(3)[1])\n";
    assert_out_of_memory(&limited(&["SCRIPT"], script, ""), "1600000000", 2);
}

/// Loading a file holds its bytes and the decoded tensor at once: the tensor is asked for
/// before decoding (a 1 GB file that could be read aborted while it was decoded).
#[test]
fn a_loaded_tensor_is_reserved_beside_the_file() {
    let directory = std::env::temp_dir().join(format!("tsl-memory-load-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("creating a temporary directory");
    let file = directory.join("large.npy");
    let name = file.display().to_string();
    let saved = limited(
        &["SCRIPT"],
        &format!("save(zeros(250000000), \"{name}\")\n"),
        "",
    );
    assert_eq!(saved.status.code(), Some(0), "{}", stderr(&saved));
    let loaded = limited(&["SCRIPT"], &format!("let x = load(\"{name}\")\n"), "");
    let _ = std::fs::remove_dir_all(&directory);
    assert_out_of_memory(&loaded, "1000000000", 1);
}

/// A kernel that needs its input in row-major order copies a transposed one first, beside
/// its reserved result: the copy is asked for too (a reduction over a transposed matrix
/// aborted, eagerly and in a fused kernel). A matrix product reads any strides and copies nothing.
#[test]
fn layout_copies_are_reserved() {
    let reduced = "let x = full([40000, 6250], 1.0)\nprint(x.T.max(1).shape)\n";
    assert_out_of_memory(&limited(&["SCRIPT"], reduced, ""), "1000000000", 2);
    let fused = "@compile\nfn f(x: f32[n, m]) {\n    return (x.T * 2.0).max(1)\n}\nprint(f(full([40000, 6250], 1.0)).shape)\n";
    assert_out_of_memory(&limited(&["SCRIPT"], fused, ""), "1000000000", 3);
    let product = "let x = full([40000, 6250], 1.0)\nprint((x.T @ ones(40000)).shape)\n";
    let output = limited(&["SCRIPT"], product, "");
    assert_eq!(stdout(&output), "[6250]\n", "{}", stderr(&output));
}
