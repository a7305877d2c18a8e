//! Answering requests: the document requests from the newest analysis of the document,
//! completion at once from whatever analysis there is.

use std::collections::HashMap;
use std::sync::Arc;

use lsp_server::{ErrorCode, Request, Response};
use lsp_types::request::Request as _;
use lsp_types::{
    CodeActionParams, CompletionParams, DocumentSymbolParams, DocumentSymbolResponse,
    GotoDefinitionParams, HoverParams, InlayHintParams, request,
};

use super::Client;
use super::documents::Documents;
use super::snapshot::Snapshot;

/// Answers a document request from the newest analysis of the document.
pub fn answer(request: &Request, snapshot: Option<&Snapshot>, client: Client) -> Response {
    let id = request.id.clone();
    let (encoding, markdown) = (client.encoding, client.markdown);
    let params = request.params.clone();
    let result = match request.method.as_str() {
        request::HoverRequest::METHOD => parse::<HoverParams>(params).map(|params| {
            let position = params.text_document_position_params.position;
            let hover = snapshot.and_then(|s| super::hover::at(s, position, encoding, markdown));
            serde_json::to_value(hover)
        }),
        request::GotoDefinition::METHOD => parse::<GotoDefinitionParams>(params).map(|params| {
            let position = params.text_document_position_params.position;
            serde_json::to_value(
                snapshot.and_then(|s| super::definition::at(s, position, encoding)),
            )
        }),
        request::DocumentSymbolRequest::METHOD => parse::<DocumentSymbolParams>(params).map(|_| {
            let symbols = snapshot.map_or_else(Vec::new, |s| s.symbols.clone());
            serde_json::to_value(DocumentSymbolResponse::Nested(symbols))
        }),
        request::InlayHintRequest::METHOD => parse::<InlayHintParams>(params).map(|params| {
            let hints = snapshot.map_or_else(Vec::new, |s| super::inlay::within(s, params.range));
            serde_json::to_value(hints)
        }),
        request::CodeActionRequest::METHOD => parse::<CodeActionParams>(params).map(|params| {
            let actions =
                snapshot.map_or_else(Vec::new, |s| super::actions::code_actions(s, params.range));
            serde_json::to_value(actions)
        }),
        _ => {
            return Response::new_err(
                id,
                ErrorCode::MethodNotFound as i32,
                format!("`{}` is not supported", request.method),
            );
        }
    };
    match result {
        Ok(Ok(value)) => Response::new_ok(id, value),
        Ok(Err(error)) => Response::new_err(id, ErrorCode::InternalError as i32, error.to_string()),
        Err(error) => Response::new_err(id, ErrorCode::InvalidParams as i32, error),
    }
}

/// Answers a completion request at once, from the newest analysis there is.
pub fn complete(
    request: &Request,
    documents: &Documents,
    snapshots: &HashMap<String, Arc<Snapshot>>,
    client: Client,
) -> Response {
    let id = request.id.clone();
    let params = match parse::<CompletionParams>(request.params.clone()) {
        Ok(params) => params,
        Err(error) => return Response::new_err(id, ErrorCode::InvalidParams as i32, error),
    };
    let at = params.text_document_position;
    let uri = at.text_document.uri.as_str();
    let Some(document) = documents.get(uri) else {
        return Response::new_ok(id, serde_json::Value::Null);
    };
    let snapshot = snapshots.get(uri).map(Arc::as_ref);
    let items = super::completion::at(snapshot, document, at.position, client.encoding);
    Response::new_ok(id, items)
}

/// The document a request is about, for the requests this server answers from an analysis.
pub fn document_of(request: &Request) -> Option<String> {
    let supported = [
        request::HoverRequest::METHOD,
        request::GotoDefinition::METHOD,
        request::DocumentSymbolRequest::METHOD,
        request::InlayHintRequest::METHOD,
        request::CodeActionRequest::METHOD,
    ];
    if !supported.contains(&request.method.as_str()) {
        return None;
    }
    let document = request.params.get("textDocument")?;
    Some(document.get("uri")?.as_str()?.to_string())
}

pub fn parse<T: serde::de::DeserializeOwned>(params: serde_json::Value) -> Result<T, String> {
    serde_json::from_value(params).map_err(|error| format!("invalid parameters: {error}"))
}
