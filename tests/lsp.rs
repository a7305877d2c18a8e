//! `tsl lsp` in process, over an in-memory connection: the handshake, diagnostics at the
//! right ranges, positions after non-ASCII text, hover, definitions, completion, quick
//! fixes, inlay hints, debouncing, cancellation, shutdown and exit.

mod lsp_support;

use lsp_support::{TestClient, range_of, uri_of};
use serde_json::{Value, json};
use tsl::eval::Status;

/// (line, character) of the `nth` occurrence of `needle` in an ASCII `text`, plus `shift`.
fn find(text: &str, needle: &str, nth: usize, shift: u32) -> (u32, u32) {
    let (offset, _) = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("{needle:?} in the text"));
    let line = text[..offset].matches('\n').count() as u32;
    let line_start = text[..offset].rfind('\n').map_or(0, |at| at + 1);
    (line, (offset - line_start) as u32 + shift)
}

/// The one-line range of `length` characters at the first `needle`, as `range_of` gives it.
fn range_in(text: &str, needle: &str, length: u32) -> (u64, u64, u64, u64) {
    let (line, start) = find(text, needle, 0, 0);
    (
        u64::from(line),
        u64::from(start),
        u64::from(line),
        u64::from(start + length),
    )
}

fn hover_text(client: &mut TestClient, uri: &str, at: (u32, u32)) -> String {
    let hover = client.at("textDocument/hover", uri, at.0, at.1);
    hover["contents"]["value"]
        .as_str()
        .unwrap_or_else(|| panic!("a hover at {at:?}: {hover}"))
        .to_string()
}

#[test]
fn the_position_encoding_is_negotiated() {
    let client =
        TestClient::start(json!({ "general": { "positionEncodings": ["utf-16", "utf-8"] } }));
    assert_eq!(
        client.initialized["capabilities"]["positionEncoding"],
        "utf-8"
    );
    assert_eq!(client.initialized["serverInfo"]["name"], "tsl");
    assert_eq!(client.finish(), Status::Ok);
    let client = TestClient::plain();
    assert_eq!(
        client.initialized["capabilities"]["positionEncoding"],
        "utf-16"
    );
    let sync = &client.initialized["capabilities"]["textDocumentSync"];
    assert_eq!(sync["change"], 1, "full document sync");
    assert_eq!(client.finish(), Status::Ok);
}

#[test]
fn diagnostics_are_published_at_their_ranges() {
    let mut client = TestClient::plain();
    let text = "let total = 1 +\n\
                print(totl)\n\
                print(zeros(2).sum(0, false, 1))\n\
                print(zeros(2, 3) @ zeros(4, 5))\n\
                @compile\n\
                fn pick(x: i64[2]) -> bool {\n    let [a, b] = x.tolist()\n    if a * 2 == b * 3 { return true }\n    return false\n}\n";
    let uri = "file:///tmp/tsl-lsp-ranges/a.tsl";
    let diagnostics = client.open_and_check(uri, text);
    let codes: Vec<&str> = diagnostics
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        [
            "syntax-error",
            "name-error",
            "type-error",
            "data-dependent-guard"
        ]
    );
    assert!(diagnostics.iter().all(|d| d["source"] == "tsl"));
    // The syntax error is the end of the first line: its newline.
    assert_eq!(range_of(&diagnostics, "syntax-error"), (0, 15, 1, 0));
    assert_eq!(
        range_of(&diagnostics, "name-error"),
        range_in(text, "totl", 4)
    );
    // An extra argument is reported at the argument.
    assert_eq!(
        range_of(&diagnostics, "type-error"),
        range_in(text, "1))", 1)
    );
    let guard = range_of(&diagnostics, "data-dependent-guard");
    assert_eq!(guard, range_in(text, "a * 2 == b * 3", 14));
    let message = diagnostics[3]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "\nhelp: if it always holds, state it before this line: `check a * 2 == b * 3`"
        ),
        "{message}"
    );
    assert_eq!(diagnostics[3]["severity"], 1);
    assert_eq!(
        diagnostics[3]["data"]["suggestions"],
        json!(["check a * 2 == b * 3"])
    );
    // A shape error in a compiled function.
    let shapes = "@compile\nfn f(x: f32[n, 3], y: f32[4, m]) -> f32[n, m] {\n    return x @ y\n}\n";
    let uri = "file:///tmp/tsl-lsp-ranges/b.tsl";
    let diagnostics = client.open_and_check(uri, shapes);
    assert_eq!(range_of(&diagnostics, "shape-error"), (2, 11, 2, 16));
    assert_eq!(client.finish(), Status::Ok);
}

#[test]
fn columns_count_utf16_units_after_non_ascii_text() {
    let text = "let é = \"😀\"; print(missing)\n";
    let uri = "file:///tmp/tsl-lsp-utf/a.tsl";
    let mut client = TestClient::plain();
    let diagnostics = client.open_and_check(uri, text);
    // `let é = "😀"; print(` is 20 UTF-16 units (é is one, the emoji two).
    assert_eq!(range_of(&diagnostics, "name-error"), (0, 20, 0, 27));
    // Requests count the same way: UTF-16 column 16 is inside `print`.
    let hover = hover_text(&mut client, uri, (0, 16));
    assert!(hover.contains("print(*values)"), "{hover}");
    assert_eq!(client.finish(), Status::Ok);
    let mut client = TestClient::start(json!({ "general": { "positionEncodings": ["utf-8"] } }));
    let diagnostics = client.open_and_check(uri, text);
    // In bytes: é is two, the emoji four.
    assert_eq!(range_of(&diagnostics, "name-error"), (0, 23, 0, 30));
    assert_eq!(client.finish(), Status::Ok);
}

const COMPILED: &str = "use std.nn\n\
    # Keeps the rows whose sum is positive.\n\
    @compile\n\
    fn keep(x: f32[n, 3], k: i64[m]) -> f32[?] {\n    \
        let y = x * 2.0\n    \
        let rows = y.sum(dim = 1)\n    \
        let idx = k.nonzero()\n    \
        if n > 2 {\n        print(rows)\n    }\n    \
        check all(rows > -1.0)\n    \
        let u = k.sum().item()\n    \
        check u <= n\n    \
        return nn.relu(rows)\n\
    }\n\
    print(keep(ones(3, 3), tensor([1, 2])))\n";

#[test]
fn hover_shows_symbolic_types_and_what_checks_became() {
    let uri = "file:///tmp/tsl-lsp-hover/a.tsl";
    let mut client = TestClient::plain();
    let diagnostics = client.open_and_check(uri, COMPILED);
    assert!(
        diagnostics.iter().all(|d| d["severity"] != 1),
        "{diagnostics:#?}"
    );
    let y = hover_text(&mut client, uri, find(COMPILED, "let y", 0, 4));
    assert!(y.contains("(local) y: f32[n, 3]"), "{y}");
    let rows = hover_text(&mut client, uri, find(COMPILED, "rows", 1, 1));
    assert!(rows.contains("rows: f32[n]"), "{rows}");
    let idx = hover_text(&mut client, uri, find(COMPILED, "let idx", 0, 5));
    assert!(idx.contains("idx: i64[u0, 1]"), "{idx}");
    assert!(idx.contains("u0 = nonzero() at"), "{idx}");
    assert!(idx.contains("range [0, inf], size-like"), "{idx}");
    let runtime = hover_text(&mut client, uri, find(COMPILED, "check u", 0, 1));
    assert!(
        runtime.contains("became a runtime assert: `u1 <= n`"),
        "{runtime}"
    );
    let device = hover_text(&mut client, uri, find(COMPILED, "check all", 0, 1));
    assert!(device.contains("became a device assert"), "{device}");
    // Functions show their signature and doc comment; builtins theirs.
    let keep = hover_text(&mut client, uri, find(COMPILED, "keep(ones", 0, 1));
    assert!(
        keep.contains("@compile\nfn keep(x: f32[n, 3], k: i64[m]) -> f32[?]"),
        "{keep}"
    );
    assert!(
        keep.contains("Keeps the rows whose sum is positive."),
        "{keep}"
    );
    let ones = hover_text(&mut client, uri, find(COMPILED, "ones(", 0, 1));
    assert!(ones.contains("ones(*sizes, dtype = f32)"), "{ones}");
    let sum = hover_text(&mut client, uri, find(COMPILED, "sum(dim", 0, 1));
    assert!(sum.contains("x.sum(dim = none, keepdim = false)"), "{sum}");
    let relu = hover_text(&mut client, uri, find(COMPILED, "relu(rows", 0, 1));
    assert!(relu.contains("fn relu(x)"), "{relu}");
    assert_eq!(client.finish(), Status::Ok);
}

#[test]
fn inlay_hints_show_shapes_specialisations_and_checks() {
    let uri = "file:///tmp/tsl-lsp-hints/a.tsl";
    let mut client = TestClient::plain();
    client.open_and_check(uri, COMPILED);
    let hints = client.result(
        "textDocument/inlayHint",
        json!({
            "textDocument": { "uri": uri },
            "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 99, "character": 0 } },
        }),
    );
    let labels: Vec<(u64, String)> = hints
        .as_array()
        .expect("hints")
        .iter()
        .map(|hint| {
            (
                hint["position"]["line"].as_u64().unwrap(),
                hint["label"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let line = |needle: &str| u64::from(find(COMPILED, needle, 0, 0).0);
    assert!(
        labels.contains(&(line("let y"), ": f32[n, 3]".to_string())),
        "{labels:?}"
    );
    assert!(
        labels.contains(&(line("let rows"), ": f32[n]".to_string())),
        "{labels:?}"
    );
    assert!(
        labels.contains(&(line("if n > 2"), "specialises on n > 2".to_string())),
        "{labels:?}"
    );
    assert!(
        labels.contains(&(line("check all"), "device assert".to_string())),
        "{labels:?}"
    );
    assert!(
        labels.contains(&(line("check u"), "runtime assert u1 <= n".to_string())),
        "{labels:?}"
    );
    assert_eq!(client.finish(), Status::Ok);
}

#[test]
fn definitions_of_locals_globals_and_members_of_other_files() {
    let directory = std::env::temp_dir().join(format!("tsl-lsp-definition-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("a scratch directory");
    let lib = "# Doubles.\nfn twice(x) {\n    return x * 2\n}\n";
    std::fs::write(directory.join("lib.tsl"), lib).expect("lib.tsl");
    let main = "use \"lib.tsl\" as lib\nuse std.nn\nlet base = 3\nfn f(x) {\n    let y = lib.twice(x)\n    return nn.relu(y) + base\n}\nprint(f(tensor([1.0])))\n";
    let uri = uri_of(&directory.join("main.tsl"));
    let mut client = TestClient::plain();
    client.open_and_check(&uri, main);
    let local = client.at(
        "textDocument/definition",
        &uri,
        find(main, "(y)", 0, 1).0,
        find(main, "(y)", 0, 1).1,
    );
    assert_eq!(local["uri"], uri.as_str());
    assert_eq!(
        local["range"]["start"],
        json!({ "line": 4, "character": 8 })
    );
    let (line, character) = find(main, "base\n}", 0, 1);
    let global = client.at("textDocument/definition", &uri, line, character);
    assert_eq!(
        global["range"]["start"],
        json!({ "line": 2, "character": 4 })
    );
    let (line, character) = find(main, "twice", 0, 2);
    let member = client.at("textDocument/definition", &uri, line, character);
    assert_eq!(member["uri"], uri_of(&directory.join("lib.tsl")).as_str());
    assert_eq!(
        member["range"],
        json!({ "start": { "line": 1, "character": 3 }, "end": { "line": 1, "character": 8 } })
    );
    // A std member opens a copy of the module's source.
    let (line, character) = find(main, "relu", 0, 1);
    let std_member = client.at("textDocument/definition", &uri, line, character);
    let std_uri = std_member["uri"].as_str().expect("a std location");
    assert!(std_uri.ends_with("/nn.tsl"), "{std_uri}");
    let path = std::path::PathBuf::from(std_uri.strip_prefix("file://").unwrap());
    let copied = std::fs::read_to_string(path).expect("the copy of std.nn");
    let start = std_member["range"]["start"]["line"].as_u64().unwrap() as usize;
    assert!(copied.lines().nth(start).unwrap().contains("fn relu"));
    assert_eq!(client.finish(), Status::Ok);
}

fn labels(completion: &Value) -> Vec<String> {
    let items = completion.as_array().cloned().unwrap_or_default();
    items
        .iter()
        .map(|item| item["label"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn completion_knows_its_context() {
    let uri = "file:///tmp/tsl-lsp-completion/a.tsl";
    let text = "use std.nn\nfn f(total) {\n    let tally = total + 1\n    return tally\n}\n";
    let mut client = TestClient::plain();
    client.open_and_check(uri, text);
    let mut complete = |text: &str, line: u32, character: u32, version: i32| {
        client.change(uri, version, text);
        client.at("textDocument/completion", uri, line, character)
    };
    // Names in scope, then builtins and keywords.
    let edited = "use std.nn\nfn f(total) {\n    let tally = total + 1\n    return ta\n}\n";
    let in_scope = labels(&complete(edited, 3, 13, 2));
    assert!(
        in_scope.contains(&"tally".to_string()) && in_scope.contains(&"tanh".to_string()),
        "{in_scope:?}"
    );
    assert!(!in_scope.contains(&"total".to_string()));
    let edited = "use std.nn\nfn f(total) {\n    let tally = total + 1\n    return tally.su\n}\n";
    assert_eq!(labels(&complete(edited, 3, 19, 3)), ["sum"]);
    let edited = "use std.nn\nfn f(total) {\n    let tally = total + 1\n    return nn.\n}\n";
    let members = labels(&complete(edited, 3, 14, 4));
    assert!(
        members.contains(&"softmax".to_string()) && !members.contains(&"sum".to_string()),
        "{members:?}"
    );
    let edited = "use std.\n";
    assert_eq!(
        labels(&complete(edited, 0, 8, 5)),
        ["nn", "jagged", "shape"]
    );
    let edited = "@co\n";
    assert_eq!(labels(&complete(edited, 0, 3, 6)), ["compile"]);
    let edited = "fn g(x: f";
    assert_eq!(labels(&complete(edited, 0, 9, 7)), ["f32", "float"]);
    let edited = "let x = 1  # ta";
    assert!(labels(&complete(edited, 0, 15, 8)).is_empty());
    assert_eq!(client.finish(), Status::Ok);
}

#[test]
fn a_quick_fix_inserts_the_suggested_check() {
    let uri = "file:///tmp/tsl-lsp-fix/a.tsl";
    let text = "@compile\nfn pick(x: i64[2]) -> bool {\n    let [a, b] = x.tolist()\n    if a * 2 == b * 3 { return true }\n    return false\n}\n";
    let mut client = TestClient::plain();
    let diagnostics = client.open_and_check(uri, text);
    let guard = diagnostics
        .iter()
        .find(|d| d["code"] == "data-dependent-guard")
        .expect("a guard")
        .clone();
    let actions = client.result(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri }, "range": guard["range"], "context": { "diagnostics": [guard] } }),
    );
    let action = &actions[0];
    assert_eq!(action["title"], "Insert `check a * 2 == b * 3`");
    assert_eq!(action["kind"], "quickfix");
    let edit = &action["edit"]["changes"][uri][0];
    assert_eq!(edit["range"]["start"], json!({ "line": 3, "character": 0 }));
    assert_eq!(edit["newText"], "    check a * 2 == b * 3\n");
    // With the check inserted the diagnostic is gone.
    let fixed = text.replace("    if a", "    check a * 2 == b * 3\n    if a");
    client.change(uri, 2, &fixed);
    let after = client.diagnostics(uri, 2);
    assert!(
        after.iter().all(|d| d["code"] != "data-dependent-guard"),
        "{after:#?}"
    );
    assert_eq!(client.finish(), Status::Ok);
}

#[test]
fn document_symbols_list_functions_variables_and_uses() {
    let uri = "file:///tmp/tsl-lsp-symbols/a.tsl";
    let mut client = TestClient::plain();
    client.open_and_check(uri, COMPILED);
    let symbols = client.result(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": uri } }),
    );
    let names: Vec<(String, u64)> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["kind"].as_u64().unwrap(),
            )
        })
        .collect();
    // Module 2, Function 12.
    assert_eq!(names, [("nn".to_string(), 2), ("keep".to_string(), 12)]);
    assert_eq!(symbols[1]["detail"], "@compile fn(x, k)");
    assert_eq!(client.finish(), Status::Ok);
}

#[test]
fn only_the_last_of_rapid_edits_is_published() {
    let uri = "file:///tmp/tsl-lsp-rapid/a.tsl";
    let mut client = TestClient::plain();
    client.open_and_check(uri, "let x = 1\n");
    for version in 2..=20 {
        client.change(
            uri,
            version,
            &format!("let x = {version}\nprint(y{version})\n"),
        );
    }
    let last = client.diagnostics(uri, 20);
    assert_eq!(last.len(), 1);
    assert!(
        last[0]["message"]
            .as_str()
            .unwrap()
            .contains("`y20` is not defined")
    );
    let stale: Vec<&Value> = client
        .notifications
        .iter()
        .filter(|n| n.method == "textDocument/publishDiagnostics" && n.params["version"] != 20)
        .map(|n| &n.params)
        .collect();
    assert!(stale.is_empty(), "{stale:#?}");
    assert_eq!(client.finish(), Status::Ok);
}

#[test]
fn a_newer_version_interrupts_a_long_analysis() {
    let uri = "file:///tmp/tsl-lsp-interrupt/a.tsl";
    // Tracing this would take minutes: 100 million loop steps.
    let slow = "@compile\nfn slow(x: f32[n]) -> f32[n] {\n    for i in range(10000) {\n        for j in range(10000) {\n            let t = i + j\n        }\n    }\n    return x\n}\n";
    let mut client = TestClient::plain();
    client.open(uri, slow);
    client.change(uri, 2, "print(quick)\n");
    let diagnostics = client.diagnostics(uri, 2);
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(client.finish(), Status::Ok);
}

#[test]
fn a_cancelled_request_is_answered_as_cancelled() {
    let uri = "file:///tmp/tsl-lsp-cancel/a.tsl";
    let mut client = TestClient::plain();
    client.open_and_check(uri, "let x = 1\n");
    // The hover waits for the analysis of version 2, which waits for typing to pause.
    client.change(uri, 2, "let x = 2\n");
    let id = client.send_request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 0, "character": 4 } }),
    );
    let number: i32 = id.to_string().parse().expect("a numeric id");
    client.notify("$/cancelRequest", json!({ "id": number }));
    let response = client.response(&id);
    assert_eq!(
        response.response_result.expect_err("cancelled").code,
        -32800
    );
    assert_eq!(client.finish(), Status::Ok);
}

#[test]
fn requests_after_shutdown_are_refused_and_exit_reports_the_shutdown() {
    let uri = "file:///tmp/tsl-lsp-shutdown/a.tsl";
    let mut client = TestClient::plain();
    client.open_and_check(uri, "let x = 1\n");
    let shutdown = client.request("shutdown", Value::Null);
    assert!(shutdown.response_result.is_ok());
    let refused = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 0, "character": 4 } }),
    );
    assert_eq!(refused.response_result.expect_err("refused").code, -32600);
    assert_eq!(client.exit(), Status::Ok);
    // Without `shutdown`, `exit` is a failure (exit code 1).
    let client = TestClient::plain();
    assert_eq!(client.exit(), Status::Failed);
}

#[test]
fn closing_a_document_clears_its_diagnostics() {
    let uri = "file:///tmp/tsl-lsp-close/a.tsl";
    let mut client = TestClient::plain();
    assert_eq!(client.open_and_check(uri, "print(nothing)\n").len(), 1);
    client.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": uri } }),
    );
    let cleared = client.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == uri && p["version"].is_null()
    });
    assert_eq!(cleared["diagnostics"], json!([]));
    assert_eq!(client.finish(), Status::Ok);
}

#[test]
fn editing_a_used_file_checks_its_users_again() {
    let root = std::env::temp_dir().join(format!("tsl-lsp-users-{}", std::process::id()));
    let directory = root.join("tsl-lsp-users-main");
    let library = root.join("tsl-lsp-users-lib");
    std::fs::create_dir_all(&directory).expect("a scratch directory");
    std::fs::create_dir_all(&library).expect("a scratch directory");
    std::fs::write(library.join("lib.tsl"), "fn f(x) {\n    return x\n}\n").expect("lib");
    let main_uri = uri_of(&directory.join("main.tsl"));
    let lib_uri = uri_of(&library.join("lib.tsl"));
    let mut client = TestClient::plain();
    // The path goes through `..`, as `use` paths often do.
    let first = client.open_and_check(
        &main_uri,
        "use \"../tsl-lsp-users-lib/lib.tsl\" as lib\nprint(lib.g(1))\n",
    );
    assert_eq!(first.len(), 1, "{first:#?}");
    client.open_and_check(&lib_uri, "fn f(x) {\n    return x\n}\n");
    // Unsaved: main sees the buffer, not the file on disk.
    client.change(&lib_uri, 2, "fn g(x) {\n    return x\n}\n");
    let again = client.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == main_uri.as_str() && p["diagnostics"] == json!([])
    });
    assert_eq!(again["version"], 1);
    assert_eq!(client.finish(), Status::Ok);
}
