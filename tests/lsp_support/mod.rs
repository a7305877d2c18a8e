//! A test client for `tsl lsp`: the server runs in this process over an in-memory
//! connection; the client sends requests and notifications, keeps every notification it
//! receives, and waits (with a timeout, so a hung server fails the test) for responses and
//! published diagnostics.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use serde_json::{Value, json};
use tsl::eval::Status;

/// How long any one answer may take before the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(60);

pub struct TestClient {
    connection: Connection,
    server: Option<JoinHandle<Status>>,
    next_id: i32,
    /// Notifications received and not consumed yet, oldest first.
    pub notifications: VecDeque<Notification>,
    /// What the server answered to `initialize`.
    pub initialized: Value,
}

impl TestClient {
    /// Starts a server and initializes it with these client capabilities.
    pub fn start(capabilities: Value) -> TestClient {
        let (server_side, client_side) = Connection::memory();
        let server = std::thread::spawn(move || tsl::lsp::serve(server_side));
        let mut client = TestClient {
            connection: client_side,
            server: Some(server),
            next_id: 0,
            notifications: VecDeque::new(),
            initialized: Value::Null,
        };
        let answer = client.request("initialize", json!({ "capabilities": capabilities }));
        client.initialized = answer.response_result.expect("initialize succeeds");
        client.notify("initialized", json!({}));
        client
    }

    /// A server for a client that offers nothing special (UTF-16 positions).
    pub fn plain() -> TestClient {
        TestClient::start(json!({}))
    }

    pub fn notify(&self, method: &str, params: Value) {
        let notification = Notification::new(method.to_string(), params);
        self.connection
            .sender
            .send(notification.into())
            .expect("the server is listening");
    }

    /// Sends a request without waiting for the answer.
    pub fn send_request(&mut self, method: &str, params: Value) -> RequestId {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        let request = Request::new(id.clone(), method.to_string(), params);
        self.connection
            .sender
            .send(request.into())
            .expect("the server is listening");
        id
    }

    /// Sends a request and waits for its response.
    pub fn request(&mut self, method: &str, params: Value) -> Response {
        let id = self.send_request(method, params);
        self.response(&id)
    }

    /// Waits for the response to `id`, keeping notifications that arrive meanwhile.
    pub fn response(&mut self, id: &RequestId) -> Response {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            match self.receive(deadline) {
                Message::Response(response) if response.id == *id => return response,
                Message::Response(other) => panic!("an unexpected response: {other:?}"),
                Message::Notification(notification) => self.notifications.push_back(notification),
                Message::Request(request) => panic!("an unexpected request: {request:?}"),
            }
        }
    }

    /// The result of a request that must succeed.
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        match response.response_result {
            Ok(result) => result,
            Err(error) => panic!("{method} failed: {error:?}"),
        }
    }

    fn receive(&self, deadline: Instant) -> Message {
        let left = deadline.saturating_duration_since(Instant::now());
        self.connection
            .receiver
            .recv_timeout(left)
            .expect("the server answers in time")
    }

    /// Waits for a notification `method` that `wanted` accepts; earlier ones stay queued.
    pub fn wait_for(&mut self, method: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(index) = self
            .notifications
            .iter()
            .position(|n| n.method == method && wanted(&n.params))
        {
            let found = self.notifications.remove(index).expect("present");
            return found.params;
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            match self.receive(deadline) {
                Message::Notification(n) if n.method == method && wanted(&n.params) => {
                    return n.params;
                }
                Message::Notification(n) => self.notifications.push_back(n),
                other => panic!("an unexpected message: {other:?}"),
            }
        }
    }

    /// The diagnostics published for `uri` at `version`.
    pub fn diagnostics(&mut self, uri: &str, version: i32) -> Vec<Value> {
        let params = self.wait_for("textDocument/publishDiagnostics", |params| {
            params["uri"] == uri && params["version"] == version
        });
        params["diagnostics"]
            .as_array()
            .expect("a list of diagnostics")
            .clone()
    }

    pub fn open(&self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "tsl", "version": 1, "text": text } }),
        );
    }

    pub fn change(&self, uri: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": uri, "version": version },
                "contentChanges": [{ "text": text }],
            }),
        );
    }

    /// Opens a document and returns its first diagnostics.
    pub fn open_and_check(&mut self, uri: &str, text: &str) -> Vec<Value> {
        self.open(uri, text);
        self.diagnostics(uri, 1)
    }

    /// A request at a position of a document.
    pub fn at(&mut self, method: &str, uri: &str, line: u32, character: u32) -> Value {
        self.result(
            method,
            json!({
                "textDocument": { "uri": uri },
                "position": { "line": line, "character": character },
            }),
        )
    }

    /// `shutdown` then `exit`: what the server returned.
    pub fn finish(mut self) -> Status {
        let answer = self.request("shutdown", Value::Null);
        assert!(answer.response_result.is_ok(), "{answer:?}");
        self.exit()
    }

    /// `exit` (with or without `shutdown` before): what the server returned.
    pub fn exit(mut self) -> Status {
        self.notify("exit", Value::Null);
        self.server
            .take()
            .expect("the server runs")
            .join()
            .expect("the server does not panic")
    }
}

/// A `file:` URI for a path that need not exist.
pub fn uri_of(path: &std::path::Path) -> String {
    format!("file://{}", path.display()).replace(' ', "%20")
}

/// The first diagnostic with `code`, as (start line, start character, end line, end
/// character).
pub fn range_of(diagnostics: &[Value], code: &str) -> (u64, u64, u64, u64) {
    let diagnostic = diagnostics
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {diagnostics:#?}"));
    let range = &diagnostic["range"];
    let number = |value: &Value| value.as_u64().expect("a number");
    (
        number(&range["start"]["line"]),
        number(&range["start"]["character"]),
        number(&range["end"]["line"]),
        number(&range["end"]["character"]),
    )
}
