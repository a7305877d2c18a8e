//! The command line: both ways to run a script, `--eager`, `--error-format json`, `explain`,
//! `--help`/`--version`, and the exit statuses of spec §9.

use std::path::PathBuf;
use std::process::{Command, Output};

fn tsl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tsl"))
        .args(args)
        .env("NO_COLOR", "1")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running tsl")
}

fn script(name: &str, text: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("tsl-cli-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("creating a temporary directory");
    let path = directory.join(name);
    std::fs::write(&path, text).expect("writing a script");
    path
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn runs_a_script_both_ways() {
    let path = script("ok.tsl", "print(arange(3) * 2)\n");
    let path = path.to_str().unwrap();
    for args in [
        vec![path],
        vec!["run", path],
        vec!["run", path, "--eager"],
        vec!["--eager", path],
        vec!["--eager", "run", path],
        vec!["--error-format", "json", "run", path],
        vec!["run", "--error-format", "json", path],
    ] {
        let output = tsl(&args);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
        assert_eq!(stdout(&output), "tensor([0, 2, 4], dtype=i64)\n");
    }
}

#[test]
fn errors_exit_with_status_one_after_earlier_output() {
    let path = script(
        "fails.tsl",
        "print(\"before\")\nprint(zeros(2) + zeros(3))\nprint(\"after\")\n",
    );
    let output = tsl(&[path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), "before\n");
    assert!(stderr(&output).starts_with("error[shape-error]: shapes [2] and [3] cannot broadcast"));
}

#[test]
fn json_diagnostics_are_one_object_per_line() {
    let path = script("json.tsl", "let x = 1 +\nlet y = * 2\n");
    let output = tsl(&["--error-format", "json", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = stderr(&output)
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is one JSON object"))
        .collect();
    assert_eq!(lines.len(), 2);
    for (object, line) in lines.iter().zip([1, 2]) {
        for field in [
            "severity",
            "code",
            "message",
            "file",
            "line",
            "column",
            "end_line",
            "end_column",
            "notes",
            "help",
        ] {
            assert!(object.get(field).is_some(), "missing {field} in {object}");
        }
        assert_eq!(object["code"], "syntax-error");
        assert_eq!(object["line"], line);
    }
    for args in [
        ["--error-format", "json", "check"],
        ["check", "--error-format", "json"],
    ] {
        let mut args = args.to_vec();
        args.push(path.to_str().unwrap());
        let checked = tsl(&args);
        assert_eq!(checked.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr(&checked).lines().count(), 2, "{args:?}");
        assert!(stderr(&checked).starts_with('{'), "{args:?}");
    }
    let missing = tsl(&["--error-format", "json", "missing.tsl"]);
    let object: serde_json::Value = serde_json::from_str(stderr(&missing).trim()).unwrap();
    assert_eq!(object["code"], "input-error");
    assert!(object["line"].is_null());
}

#[test]
fn usage_errors_exit_with_status_two() {
    assert_eq!(tsl(&["--no-such-flag"]).status.code(), Some(2));
    assert_eq!(tsl(&["run"]).status.code(), Some(2));
    assert_eq!(
        tsl(&["--error-format", "xml", "x.tsl"]).status.code(),
        Some(2)
    );
    assert_eq!(tsl(&["explain", "no-such-code"]).status.code(), Some(2));
}

#[test]
fn help_version_and_explain() {
    let help = tsl(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(stdout(&help).contains("--error-format"));
    let version = tsl(&["--version"]);
    assert_eq!(
        stdout(&version).trim(),
        format!("tsl {}", env!("CARGO_PKG_VERSION"))
    );
    let explain = tsl(&["explain", "data-dependent-guard"]);
    assert_eq!(explain.status.code(), Some(0));
    assert!(stdout(&explain).contains("check u0 * 2 == u1 * 3"));
}

/// `tsl` with extra environment variables.
fn tsl_with(args: &[&str], environment: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tsl"))
        .args(args)
        .envs(environment.iter().copied())
        .env("NO_COLOR", "1")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running tsl")
}

#[test]
fn a_missing_vulkan_driver_is_an_input_error_with_the_fix() {
    // A Vulkan loader told to use a driver file that does not exist finds no adapter, as a
    // machine without a driver does (and a machine without a loader behaves the same).
    let path = script("gpu.tsl", "print(1)\n");
    let missing = [
        ("VK_ICD_FILENAMES", "/nonexistent/icd.json"),
        ("VK_DRIVER_FILES", "/nonexistent/icd.json"),
    ];
    let output = tsl_with(
        &["run", path.to_str().unwrap(), "--device", "gpu"],
        &missing,
    );
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.contains("error[input-error]: no GPU adapter found"),
        "{message}"
    );
    assert!(message.contains("mesa-vulkan-drivers"), "{message}");
    assert_eq!(stdout(&output), "", "nothing runs without the device");
}

#[test]
fn the_device_comes_from_tsl_device_and_a_bad_name_is_refused() {
    let path = script("device.tsl", "print(1)\n");
    let path = path.to_str().unwrap();
    let output = tsl_with(&["run", path], &[("TSL_DEVICE", "tpu")]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("TSL_DEVICE=tpu names no device"));
    let output = tsl_with(&["run", path], &[("TSL_DEVICE", "cpu")]);
    assert_eq!(stdout(&output), "1\n");
    let missing = [
        ("VK_ICD_FILENAMES", "/nonexistent/icd.json"),
        ("VK_DRIVER_FILES", "/nonexistent/icd.json"),
        ("TSL_DEVICE", "gpu"),
    ];
    let output = tsl_with(&["run", path], &missing);
    assert!(
        stderr(&output).contains("no GPU adapter found"),
        "TSL_DEVICE=gpu is used"
    );
    let output = tsl_with(&["run", path, "--device", "cpu"], &missing);
    assert_eq!(stdout(&output), "1\n", "--device wins over TSL_DEVICE");
}

#[test]
fn an_adapter_name_that_matches_nothing_lists_the_adapters() {
    let path = script("adapter.tsl", "print(1)\n");
    let output = tsl_with(
        &["run", path.to_str().unwrap(), "--device", "gpu"],
        &[("TSL_GPU_ADAPTER", "no-such-gpu-anywhere")],
    );
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.contains("TSL_GPU_ADAPTER=no-such-gpu-anywhere matches no GPU adapter"),
        "{message}"
    );
}

const FUSIBLE: &str = "@compile\nfn f(x: f32[n]) {\n    return relu(x * 2.0 + 1.0).sum()\n}\nprint(f(tensor([1.0, -2.0])))\nprint(f(tensor([3.0, 4.0])))\n";

#[test]
fn profile_tables_compiled_functions_and_kernels() {
    let path = script("profiled.tsl", FUSIBLE);
    let output = tsl(&["run", path.to_str().unwrap(), "--profile"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "tensor(3.0)\ntensor(16.0)\n");
    let table = stderr(&output);
    assert!(
        table.starts_with("compiled function `f`: 2 calls,"),
        "{table}"
    );
    let kernel = table
        .lines()
        .find(|line| line.trim_start().starts_with("fused[mul, add, relu, sum]"))
        .unwrap_or_else(|| panic!("no fused kernel row:\n{table}"));
    let columns: Vec<&str> = kernel.split_whitespace().collect();
    assert_eq!(columns[4..6], ["interpreted", "2"], "two calls: {kernel}");
    assert!(kernel.ends_with("100.0%"), "{kernel}");
    let eager = tsl(&["run", path.to_str().unwrap(), "--profile", "--eager"]);
    assert_eq!(stderr(&eager), "profile: no compiled function ran\n");
}

/// A kernel over many elements is compiled to machine code, one over a few interpreted:
/// the profile has a row for each way it ran.
#[test]
fn profile_says_which_kernels_ran_as_machine_code() {
    let source = "@compile\nfn f(x: f32[n]) { return relu(x * 2.0 + 1.0) * x }\n\
                  let big = f(randn([40000]))\nlet small = f(randn([40]))\n";
    let path = script("machine_code.tsl", source);
    let output = tsl(&["run", path.to_str().unwrap(), "--profile"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = stderr(&output);
    let rows: Vec<Vec<&str>> = (table.lines())
        .filter(|line| line.trim_start().starts_with("fused[mul, add, relu, mul]"))
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2, "{table}");
    assert!(
        rows.iter().any(|row| row[4..7] == ["machine", "code", "1"]),
        "{table}"
    );
    assert!(
        rows.iter().any(|row| row[4..6] == ["interpreted", "1"]),
        "{table}"
    );
}

#[test]
fn graph_fused_shows_groups_with_their_members() {
    let path = script("fused.tsl", FUSIBLE);
    let path = path.to_str().unwrap();
    let plain = stdout(&tsl(&["graph", path, "--fn", "f"]));
    assert!(
        plain.contains("= relu(") && !plain.contains("fused"),
        "{plain}"
    );
    let fused = stdout(&tsl(&["graph", path, "--fn", "f", "--fused"]));
    assert!(
        fused.contains("%1 = fused[mul, add, relu, sum](%0) : f32[]"),
        "{fused}"
    );
    assert!(fused.contains("i5 = relu(i4) : f32"), "{fused}");
    assert!(fused.contains("out sum(i5)"), "{fused}");
}
