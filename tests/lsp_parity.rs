//! The editor sees what `tsl check` says: every suite file and example, opened in the
//! language server, gets diagnostics with the same codes on the same lines as `tsl check`
//! reports (a diagnostic inside a used module counts at the line of this file that led to
//! it, by the same rule for both).

mod common;
mod lsp_support;

use common::{check_file, on_big_stack, root, tsl_files};
use lsp_support::{TestClient, uri_of};
use serde_json::Value;

#[test]
fn the_server_reports_what_tsl_check_reports() {
    let mut files: Vec<_> = tsl_files(&root().join("tests/suite"))
        .into_iter()
        .filter(|path| !path.components().any(|part| part.as_os_str() == "modules"))
        .collect();
    files.extend(tsl_files(&root().join("examples")));
    let expected: Vec<Vec<(String, usize)>> = {
        let files = files.clone();
        on_big_stack(move || {
            files
                .iter()
                .map(|path| {
                    let name = path.display().to_string();
                    let mut found: Vec<(String, usize)> = check_file(path)
                        .diagnostics
                        .iter()
                        .map(|d| (d.code.clone(), d.line_in(&name).unwrap_or(1)))
                        .collect();
                    found.sort();
                    found
                })
                .collect()
        })
    };
    let mut client = TestClient::plain();
    let mut failures = Vec::new();
    for (path, expected) in files.iter().zip(expected) {
        let text = std::fs::read_to_string(path).expect("suite files are UTF-8");
        let uri = uri_of(path);
        let published = client.open_and_check(&uri, &text);
        let mut found: Vec<(String, usize)> = published
            .iter()
            .map(|d| {
                let line = d["range"]["start"]["line"].as_u64().expect("a line") as usize;
                (d["code"].as_str().expect("a code").to_string(), line + 1)
            })
            .collect();
        found.sort();
        if found != expected {
            failures.push(format!(
                "{}:\n  tsl check: {expected:?}\n  server:    {found:?}",
                path.display()
            ));
        }
        client.notify(
            "textDocument/didClose",
            serde_json::json!({ "textDocument": { "uri": uri } }),
        );
        client.wait_for("textDocument/publishDiagnostics", |params: &Value| {
            params["uri"] == uri.as_str() && params["version"].is_null()
        });
    }
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n"));
    assert_eq!(client.finish(), tsl::eval::Status::Ok);
}
