//! The protocol thread's main loop: it reads the client's messages, keeps the open documents,
//! schedules analyses, publishes diagnostics and answers requests.
//!
//! - `didOpen` and `didSave` analyse at once; `didChange` waits until the typing pauses
//!   ([`DEBOUNCE`]), and interrupts the analysis of an older version at once. Documents that
//!   use the changed file are analysed again too.
//! - A result is used only if it is for the document's current version; diagnostics are
//!   published with that version.
//! - Requests that need the current analysis wait for it (up to [`PATIENCE`], then they are
//!   answered from the newest one there is); `$/cancelRequest` answers a waiting request with
//!   `RequestCanceled`. Completion answers at once.
//! - After `shutdown` every request is refused; `exit` ends the loop: `Ok` after `shutdown`,
//!   `Failed` without it.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, select};
use lsp_server::{
    Connection, ErrorCode, Message, Notification, ReqQueue, Request, RequestId, Response,
};
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use lsp_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, LogMessageParams, MessageType, PublishDiagnosticsParams,
    notification, request,
};

use super::analysis::{self, Done, Job};
use super::documents::{Document, Documents};
use super::snapshot::Snapshot;
use super::{Client, requests};
use crate::eval::{LogChannels, Status};

/// How long typing must pause before a changed document is analysed.
pub const DEBOUNCE: Duration = Duration::from_millis(150);
/// How long a request waits for the analysis of the current version.
pub const PATIENCE: Duration = Duration::from_secs(1);

/// A request waiting for the analysis of its document's current version.
struct Parked {
    request: Request,
    uri: String,
    until: Instant,
}

pub struct Server {
    connection: Connection,
    client: Client,
    documents: Documents,
    snapshots: HashMap<String, Arc<Snapshot>>,
    /// When each changed document is due to be analysed.
    due: HashMap<String, Instant>,
    /// The interrupt flag of the analysis in progress or queued, by document.
    running: HashMap<String, Arc<AtomicBool>>,
    parked: Vec<Parked>,
    requests: ReqQueue<(), ()>,
    jobs: Sender<Job>,
    done: Receiver<Done>,
    shut_down: bool,
}

impl Server {
    pub fn new(connection: Connection, client: Client) -> Server {
        let (jobs, queued) = crossbeam_channel::unbounded();
        let (finished, done) = crossbeam_channel::unbounded();
        let started = analysis::spawn(client, log_channels(), queued, finished);
        let server = Server {
            connection,
            client,
            documents: Documents::default(),
            snapshots: HashMap::new(),
            due: HashMap::new(),
            running: HashMap::new(),
            parked: Vec::new(),
            requests: ReqQueue::default(),
            jobs,
            done,
            shut_down: false,
        };
        if let Err(error) = started {
            let message = format!("tsl lsp cannot start its analysis thread: {error}");
            server.log(MessageType::ERROR, message);
        }
        server
    }

    /// Serves until `exit` (or until the client is gone).
    pub fn run(mut self) -> Status {
        loop {
            let wait = self
                .next_deadline()
                .map(|at| at.saturating_duration_since(Instant::now()));
            let timeout = crossbeam_channel::after(wait.unwrap_or(Duration::from_secs(3600)));
            select! {
                recv(self.connection.receiver) -> message => match message {
                    Ok(message) => {
                        if let Some(status) = self.handle(message) {
                            return status;
                        }
                    }
                    Err(_) => return Status::Failed,
                },
                recv(self.done) -> done => {
                    if let Ok(done) = done {
                        self.finished(done);
                    }
                },
                recv(timeout) -> _ => {},
            }
            self.start_due();
            self.expire_parked();
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        let due = self.due.values().copied();
        let parked = self.parked.iter().map(|parked| parked.until);
        due.chain(parked).min()
    }

    fn handle(&mut self, message: Message) -> Option<Status> {
        match message {
            Message::Request(request) => self.request(request),
            Message::Notification(notification) => return self.notification(notification),
            Message::Response(_) => {}
        }
        None
    }

    fn send(&self, message: impl Into<Message>) {
        // The client is gone when this fails; the loop ends at the next read.
        let _ = self.connection.sender.send(message.into());
    }

    fn respond(&mut self, response: Response) {
        if self.requests.incoming.complete(&response.id).is_some() {
            self.send(response);
        }
    }

    fn log(&self, kind: MessageType, message: String) {
        let params = LogMessageParams { typ: kind, message };
        self.send(Notification::new(
            notification::LogMessage::METHOD.to_string(),
            params,
        ));
    }

    // ---------------------------------------------------------------- notifications

    fn notification(&mut self, notification: Notification) -> Option<Status> {
        match notification.method.as_str() {
            notification::Exit::METHOD => {
                return Some(if self.shut_down {
                    Status::Ok
                } else {
                    Status::Failed
                });
            }
            notification::DidOpenTextDocument::METHOD => {
                if let Ok(params) =
                    requests::parse::<DidOpenTextDocumentParams>(notification.params)
                {
                    let uri = params.text_document.uri.as_str().to_string();
                    let document = Document::new(
                        &uri,
                        params.text_document.text,
                        params.text_document.version,
                    );
                    self.documents.open(uri.clone(), document);
                    self.changed(&uri, Instant::now());
                }
            }
            notification::DidChangeTextDocument::METHOD => {
                if let Ok(params) =
                    requests::parse::<DidChangeTextDocumentParams>(notification.params)
                {
                    self.change(params);
                }
            }
            notification::DidSaveTextDocument::METHOD => {
                if let Ok(params) =
                    requests::parse::<DidSaveTextDocumentParams>(notification.params)
                {
                    let uri = params.text_document.uri.as_str().to_string();
                    if self.documents.get(&uri).is_some() {
                        self.changed(&uri, Instant::now());
                    }
                }
            }
            notification::DidCloseTextDocument::METHOD => {
                if let Ok(params) =
                    requests::parse::<DidCloseTextDocumentParams>(notification.params)
                {
                    self.close(params.text_document.uri.as_str());
                }
            }
            notification::Cancel::METHOD => {
                if let Ok(params) = requests::parse::<lsp_types::CancelParams>(notification.params)
                {
                    self.cancel(params.id);
                }
            }
            _ => {}
        }
        None
    }

    fn change(&mut self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri.as_str().to_string();
        let Some(document) = self.documents.get_mut(&uri) else {
            return;
        };
        // Full sync: the last change holds the whole text.
        let Some(change) = params.content_changes.into_iter().last() else {
            return;
        };
        document.replace(change.text, params.text_document.version);
        self.changed(&uri, Instant::now() + DEBOUNCE);
    }

    /// A document's text changed: its analysis (and that of the documents that use it) is
    /// due at `when`; an analysis of an older version is stopped.
    fn changed(&mut self, uri: &str, when: Instant) {
        if let Some(flag) = self.running.remove(uri) {
            flag.store(true, Ordering::Relaxed);
        }
        self.due.insert(uri.to_string(), when);
        let Some(path) = self.documents.get(uri).and_then(|d| d.path.clone()) else {
            return;
        };
        let dependents: Vec<String> = self
            .snapshots
            .iter()
            .filter(|(other, snapshot)| *other != uri && snapshot.dependencies.contains(&path))
            .map(|(other, _)| other.clone())
            .collect();
        for dependent in dependents {
            let later = when.max(Instant::now() + DEBOUNCE);
            self.due.entry(dependent).or_insert(later);
        }
    }

    fn close(&mut self, uri: &str) {
        self.documents.close(uri);
        self.snapshots.remove(uri);
        self.due.remove(uri);
        if let Some(flag) = self.running.remove(uri) {
            flag.store(true, Ordering::Relaxed);
        }
        let waiting: Vec<RequestId> = self
            .parked
            .iter()
            .filter(|parked| parked.uri == uri)
            .map(|parked| parked.request.id.clone())
            .collect();
        for id in waiting {
            self.parked.retain(|parked| parked.request.id != id);
            self.respond(Response::new_ok(id, serde_json::Value::Null));
        }
        self.publish(uri, Vec::new(), None);
    }

    fn cancel(&mut self, id: lsp_types::NumberOrString) {
        let id: RequestId = match id {
            lsp_types::NumberOrString::Number(number) => number.into(),
            lsp_types::NumberOrString::String(text) => text.into(),
        };
        self.parked.retain(|parked| parked.request.id != id);
        if let Some(response) = self.requests.incoming.cancel(id) {
            self.send(response);
        }
    }

    fn publish(&self, uri: &str, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let Ok(uri) = uri.parse() else {
            return;
        };
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        self.send(Notification::new(
            notification::PublishDiagnostics::METHOD.to_string(),
            params,
        ));
    }

    // ---------------------------------------------------------------- analyses

    /// Queues the analyses that are due.
    fn start_due(&mut self) {
        let now = Instant::now();
        let mut ready: Vec<String> = self
            .due
            .iter()
            .filter(|(_, when)| **when <= now)
            .map(|(uri, _)| uri.clone())
            .collect();
        ready.sort();
        for uri in ready {
            self.due.remove(&uri);
            self.start(&uri);
        }
    }

    fn start(&mut self, uri: &str) {
        let Some(document) = self.documents.get(uri) else {
            return;
        };
        let interrupt = Arc::new(AtomicBool::new(false));
        let job = Job {
            uri: uri.to_string(),
            version: document.version,
            name: document.name(uri),
            path: document.path.clone(),
            text: document.text.clone(),
            overlay: self.documents.overlay(),
            interrupt: interrupt.clone(),
        };
        if let Some(older) = self.running.insert(uri.to_string(), interrupt) {
            older.store(true, Ordering::Relaxed);
        }
        let _ = self.jobs.send(job);
    }

    fn finished(&mut self, done: Done) {
        match done {
            Done::Analyzed(snapshot) => {
                let current = self
                    .documents
                    .get(&snapshot.uri)
                    .is_some_and(|document| document.version == snapshot.version);
                if !current {
                    return;
                }
                let uri = snapshot.uri.clone();
                self.running.remove(&uri);
                for line in &snapshot.log {
                    self.log(MessageType::LOG, line.clone());
                }
                self.publish(&uri, snapshot.diagnostics.clone(), Some(snapshot.version));
                self.snapshots.insert(uri.clone(), Arc::from(snapshot));
                self.answer_parked(&uri);
            }
            Done::Stopped => {}
            Done::Panicked {
                uri,
                version,
                message,
            } => {
                self.log(MessageType::ERROR, message);
                let current = self
                    .documents
                    .get(&uri)
                    .is_some_and(|document| document.version == version);
                if current {
                    self.running.remove(&uri);
                    self.answer_parked(&uri);
                }
            }
        }
    }

    // ---------------------------------------------------------------- requests

    fn request(&mut self, request: Request) {
        self.requests.incoming.register(request.id.clone(), ());
        if self.shut_down {
            let refusal = Response::new_err(
                request.id,
                ErrorCode::InvalidRequest as i32,
                "the server is shutting down".to_string(),
            );
            self.respond(refusal);
            return;
        }
        let method = request.method.as_str();
        if method == request::Shutdown::METHOD {
            self.shut_down = true;
            self.respond(Response::new_ok(request.id, serde_json::Value::Null));
            return;
        }
        if method == request::Completion::METHOD {
            let response =
                requests::complete(&request, &self.documents, &self.snapshots, self.client);
            self.respond(response);
            return;
        }
        let Some(uri) = requests::document_of(&request) else {
            let refusal = Response::new_err(
                request.id,
                ErrorCode::MethodNotFound as i32,
                format!("`{}` is not supported", request.method),
            );
            self.respond(refusal);
            return;
        };
        if self.is_current(&uri) || !self.will_be_current(&uri) {
            let response = requests::answer(
                &request,
                self.snapshots.get(&uri).map(Arc::as_ref),
                self.client,
            );
            self.respond(response);
        } else {
            self.parked.push(Parked {
                request,
                uri,
                until: Instant::now() + PATIENCE,
            });
        }
    }

    /// Whether the document has an analysis of its current version.
    fn is_current(&self, uri: &str) -> bool {
        match (self.documents.get(uri), self.snapshots.get(uri)) {
            (Some(document), Some(snapshot)) => document.version == snapshot.version,
            _ => false,
        }
    }

    /// Whether an analysis of the document is due or under way.
    fn will_be_current(&self, uri: &str) -> bool {
        self.due.contains_key(uri) || self.running.contains_key(uri)
    }

    fn answer_parked(&mut self, uri: &str) {
        let (ready, waiting): (Vec<Parked>, Vec<Parked>) = std::mem::take(&mut self.parked)
            .into_iter()
            .partition(|parked| parked.uri == uri);
        self.parked = waiting;
        for parked in ready {
            let snapshot = self.snapshots.get(&parked.uri).map(Arc::as_ref);
            let response = requests::answer(&parked.request, snapshot, self.client);
            self.respond(response);
        }
    }

    fn expire_parked(&mut self) {
        let now = Instant::now();
        let (expired, waiting): (Vec<Parked>, Vec<Parked>) = std::mem::take(&mut self.parked)
            .into_iter()
            .partition(|parked| parked.until <= now);
        self.parked = waiting;
        for parked in expired {
            let snapshot = self.snapshots.get(&parked.uri).map(Arc::as_ref);
            let response = requests::answer(&parked.request, snapshot, self.client);
            self.respond(response);
        }
    }
}

/// The log channels `TSL_LOG` turns on: their lines go to the client's log.
fn log_channels() -> LogChannels {
    std::env::var("TSL_LOG").map_or_else(
        |_| LogChannels::default(),
        |list| LogChannels::parse(&list).0,
    )
}
