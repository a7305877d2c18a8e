//! `tsl lsp`: the language server (spec §9), over stdio with `lsp-server`.
//!
//! Two threads. The protocol thread (`server`) owns the open documents and answers the
//! client; the analysis thread (`analysis`) owns an interpreter (which is `Rc`-based and needs
//! the interpreter's large stack) and turns a document's text into a [`snapshot::Snapshot`]:
//! plain data with the diagnostics exactly as `tsl check` reports them and everything the
//! requests need (hovers, definitions, names in scope, symbols, inlay hints, quick fixes).
//! Requests are answered from the snapshot of the document's current version.
//!
//! Code map: `lines` (byte offsets and LSP positions, UTF-8 or UTF-16), `uri` (`file:` URIs
//! and paths), `documents` (the open buffers), `convert` (diagnostics), `snapshot` (building
//! one from an analysis), `hover`, `definition`, `completion`, `symbols`, `inlay`, `actions`
//! (the features), `requests` (answering them), `server` (the main loop: debouncing,
//! cancellation, shutdown).
//!
//! Only this module knows LSP types, and nothing here writes to stdout except protocol frames.

mod actions;
mod analysis;
mod completion;
mod convert;
mod definition;
mod documents;
mod hover;
mod inlay;
mod lines;
mod requests;
mod server;
mod snapshot;
mod symbols;
mod uri;

use lsp_server::{Connection, ErrorCode, Message, Response};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, CompletionOptions,
    HoverProviderCapability, InitializeParams, InitializeResult, OneOf, PositionEncodingKind,
    SaveOptions, ServerCapabilities, ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions,
};

use crate::eval::Status;
use lines::Encoding;

/// Runs the language server on stdin and stdout until the client says `exit`: `Ok` after a
/// `shutdown` request, `Failed` otherwise (the exit code LSP asks for).
pub fn run() -> Status {
    let (connection, io_threads) = Connection::stdio();
    let status = serve(connection);
    // The reader stops after `exit`, the writer once every sender is gone.
    let _ = io_threads.join();
    status
}

/// Serves one client over `connection` (stdio, or an in-memory pair in tests).
pub fn serve(connection: Connection) -> Status {
    let Some(client) = initialize(&connection) else {
        return Status::Failed;
    };
    server::Server::new(connection, client).run()
}

/// What the client said about itself that changes how the server answers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Client {
    pub encoding: Encoding,
    /// Hovers may be Markdown.
    pub markdown: bool,
}

/// The handshake: waits for `initialize`, chooses the position encoding (UTF-8 when the
/// client offers it, else UTF-16) and answers with the server's capabilities. `None` when
/// the client leaves first.
fn initialize(connection: &Connection) -> Option<Client> {
    loop {
        let message = connection.receiver.recv().ok()?;
        let request = match message {
            Message::Request(request) if request.method == "initialize" => request,
            Message::Request(request) => {
                let refusal = Response::new_err(
                    request.id,
                    ErrorCode::ServerNotInitialized as i32,
                    "the server is not initialized yet".to_string(),
                );
                connection.sender.send(refusal.into()).ok()?;
                continue;
            }
            Message::Notification(notification) if notification.method == "exit" => return None,
            Message::Notification(_) | Message::Response(_) => continue,
        };
        let params: InitializeParams = match serde_json::from_value(request.params) {
            Ok(params) => params,
            Err(error) => {
                let refusal = Response::new_err(
                    request.id,
                    ErrorCode::InvalidParams as i32,
                    format!("invalid initialize parameters: {error}"),
                );
                connection.sender.send(refusal.into()).ok()?;
                continue;
            }
        };
        let client = negotiate(&params);
        let result = InitializeResult {
            capabilities: capabilities(client),
            server_info: Some(ServerInfo {
                name: "tsl".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
        };
        let answer = Response::new_ok(request.id, result);
        connection.sender.send(answer.into()).ok()?;
        return Some(client);
    }
}

fn negotiate(params: &InitializeParams) -> Client {
    let offered = params
        .capabilities
        .general
        .as_ref()
        .and_then(|general| general.position_encodings.as_deref())
        .unwrap_or_default();
    let encoding = if offered.contains(&PositionEncodingKind::UTF8) {
        Encoding::Utf8
    } else {
        Encoding::Utf16
    };
    let markdown = params
        .capabilities
        .text_document
        .as_ref()
        .and_then(|document| document.hover.as_ref())
        .and_then(|hover| hover.content_format.as_ref())
        .is_none_or(|formats| formats.contains(&lsp_types::MarkupKind::Markdown));
    Client { encoding, markdown }
}

fn capabilities(client: Client) -> ServerCapabilities {
    let encoding = match client.encoding {
        Encoding::Utf8 => PositionEncodingKind::UTF8,
        Encoding::Utf16 => PositionEncodingKind::UTF16,
    };
    ServerCapabilities {
        position_encoding: Some(encoding),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::FULL),
                will_save: None,
                will_save_wait_until: None,
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".to_string(), "@".to_string()]),
            ..CompletionOptions::default()
        }),
        document_symbol_provider: Some(OneOf::Left(true)),
        inlay_hint_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..CodeActionOptions::default()
        })),
        ..ServerCapabilities::default()
    }
}
