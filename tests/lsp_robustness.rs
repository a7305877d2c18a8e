//! Whatever half-typed text arrives, the server neither crashes nor hangs: every prefix of
//! every suite and example file is sent as successive edits; the prefixes that end a line are
//! analysed, and each is asked for hover, completion, definitions, symbols, inlay hints and
//! quick fixes at its end. No analysis may panic (a panic would be logged as an error).

mod common;
mod lsp_support;

use common::{root, tsl_files};
use lsp_support::{TestClient, uri_of};
use serde_json::json;

#[test]
fn every_prefix_of_every_file_is_served() {
    let mut files = tsl_files(&root().join("tests/suite"));
    files.extend(tsl_files(&root().join("examples")));
    let mut client = TestClient::plain();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("suite files are UTF-8");
        let uri = uri_of(path);
        client.open(&uri, "");
        let mut version = 1;
        // Every prefix, as fast as the client can send them: only the last is analysed.
        for (end, _) in text.char_indices().skip(1) {
            version += 1;
            client.change(&uri, version, &text[..end]);
        }
        version += 1;
        client.change(&uri, version, &text);
        // Saving analyses at once instead of after the pause in typing.
        client.notify(
            "textDocument/didSave",
            json!({ "textDocument": { "uri": uri } }),
        );
        client.diagnostics(&uri, version);
        // The prefixes that end a line, each analysed and asked about.
        for (end, _) in text.match_indices('\n') {
            version += 1;
            let prefix = &text[..end];
            client.change(&uri, version, prefix);
            client.notify(
                "textDocument/didSave",
                json!({ "textDocument": { "uri": uri } }),
            );
            client.diagnostics(&uri, version);
            ask_everything(&mut client, &uri, prefix);
        }
        client.notify(
            "textDocument/didClose",
            json!({ "textDocument": { "uri": uri } }),
        );
    }
    let errors: Vec<String> = client
        .notifications
        .iter()
        .filter(|n| n.method == "window/logMessage" && n.params["type"] == 1)
        .map(|n| n.params["message"].to_string())
        .collect();
    assert!(errors.is_empty(), "\n{}\n", errors.join("\n"));
    assert_eq!(client.finish(), tsl::eval::Status::Ok);
}

/// Every request the server answers, at the end of `text`.
fn ask_everything(client: &mut TestClient, uri: &str, text: &str) {
    let line = text.matches('\n').count() as u32;
    let last = text.rsplit('\n').next().unwrap_or("");
    let character = last.encode_utf16().count() as u32;
    for method in [
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/completion",
    ] {
        client.at(method, uri, line, character);
        client.at(method, uri, line, character / 2);
    }
    let document = json!({ "uri": uri });
    let everything = json!({ "start": { "line": 0, "character": 0 }, "end": { "line": line + 1, "character": 0 } });
    client.result(
        "textDocument/documentSymbol",
        json!({ "textDocument": document }),
    );
    client.result(
        "textDocument/inlayHint",
        json!({ "textDocument": document, "range": everything }),
    );
    client.result(
        "textDocument/codeAction",
        json!({ "textDocument": document, "range": everything, "context": { "diagnostics": [] } }),
    );
}
