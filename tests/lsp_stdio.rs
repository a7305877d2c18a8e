//! The real `tsl lsp` binary over stdio: the handshake works outside the test harness,
//! stdout carries nothing but protocol frames (even when the analyzed code prints), and the
//! exit code is 0 after `shutdown` then `exit`, 1 otherwise.

use std::io::{BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{Value, json};

struct Server {
    child: Child,
    stdin: ChildStdin,
    messages: mpsc::Receiver<Result<Message, String>>,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tsl"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting tsl lsp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, messages) = mpsc::channel();
        std::thread::spawn(move || read_frames(stdout, &sender));
        Server {
            child,
            stdin,
            messages,
        }
    }

    fn send(&mut self, message: impl Into<Message>) {
        message
            .into()
            .write(&mut self.stdin)
            .expect("writing a frame");
        self.stdin.flush().expect("flushing");
    }

    fn request(&mut self, id: i32, method: &str, params: Value) -> Value {
        self.send(Request::new(
            RequestId::from(id),
            method.to_string(),
            params,
        ));
        loop {
            match self.next() {
                Message::Response(response) if response.id == RequestId::from(id) => {
                    return response.response_result.unwrap_or(Value::Null);
                }
                _ => {}
            }
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(Notification::new(method.to_string(), params));
    }

    fn next(&self) -> Message {
        let received = self
            .messages
            .recv_timeout(Duration::from_secs(60))
            .expect("the server answers in time");
        received.unwrap_or_else(|problem| panic!("stdout is not protocol frames: {problem}"))
    }

    fn wait(mut self) -> i32 {
        drop(self.stdin);
        let status = self.child.wait().expect("the server exits");
        // Everything it wrote after the last message read must still be frames.
        while let Ok(message) = self.messages.recv_timeout(Duration::from_secs(10)) {
            if let Err(problem) = message {
                panic!("stdout is not protocol frames: {problem}");
            }
        }
        status.code().expect("an exit code")
    }
}

/// Reads frames until the end of stdout; anything else is reported as a problem.
fn read_frames(stdout: ChildStdout, sender: &mpsc::Sender<Result<Message, String>>) {
    let mut reader = BufReader::new(stdout);
    loop {
        match Message::read(&mut reader) {
            Ok(Some(message)) => {
                if sender.send(Ok(message)).is_err() {
                    return;
                }
            }
            Ok(None) => return,
            Err(error) => {
                let _ = sender.send(Err(error.to_string()));
                return;
            }
        }
    }
}

fn initialize(server: &mut Server) -> Value {
    let answer = server.request(1, "initialize", json!({ "capabilities": {} }));
    server.notify("initialized", json!({}));
    answer
}

#[test]
fn a_session_over_stdio_ends_with_exit_code_0() {
    let mut server = Server::start();
    let answer = initialize(&mut server);
    assert_eq!(answer["capabilities"]["positionEncoding"], "utf-16");
    // Printing code: the top level never runs in analysis, and a compiled function's print is
    // recorded in its graph, not executed.
    let text = "print(\"top level\")\n@compile\nfn f(x: f32[n]) -> f32[n] {\n    print(\"traced\", x)\n    return x + missing\n}\n";
    let uri = "file:///tmp/tsl-lsp-stdio/a.tsl";
    server.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "tsl", "version": 1, "text": text } }),
    );
    let published = loop {
        if let Message::Notification(notification) = server.next()
            && notification.method == "textDocument/publishDiagnostics"
        {
            break notification.params;
        }
    };
    assert_eq!(published["diagnostics"][0]["code"], "name-error");
    let hover = server.request(
        2,
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 3, "character": 5 } }),
    );
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("print(*values)")
    );
    let shutdown = server.request(3, "shutdown", Value::Null);
    assert_eq!(shutdown, Value::Null);
    server.notify("exit", Value::Null);
    assert_eq!(server.wait(), 0);
}

#[test]
fn exit_without_shutdown_ends_with_exit_code_1() {
    let mut server = Server::start();
    initialize(&mut server);
    server.notify("exit", Value::Null);
    assert_eq!(server.wait(), 1);
}

#[test]
fn a_client_that_disappears_ends_the_server() {
    let mut server = Server::start();
    initialize(&mut server);
    // Closing stdin without `exit`: the server must not hang.
    assert_eq!(server.wait(), 1);
}
