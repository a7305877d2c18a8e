//! TSL diagnostics as LSP diagnostics, one function for all of them (as `diag::render` is
//! for the terminal): the code and `source: "tsl"`, the message with its label, notes and
//! help, the range in the document, and the other places as related information.
//!
//! A diagnostic located in another file (a used module, a std module) is shown at the
//! innermost call in this document that led to it, with the real place as related
//! information; one with no place at all (a file that cannot be read) at the start.

use std::fmt::Write as _;

use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, NumberOrString, Position, Range,
};

use super::snapshot::{Context, Fix};
use crate::diag::{Code, Diagnostic, FrameKind, Severity};
use crate::source::Span;

/// The document's diagnostics, in the order `tsl check` reports them, and the quick fixes
/// their help suggests.
pub fn diagnostics(context: &Context<'_>) -> (Vec<lsp_types::Diagnostic>, Vec<Fix>) {
    let mut converted = Vec::new();
    let mut fixes = Vec::new();
    for diagnostic in &context.analysis.diagnostics {
        let lsp = convert(context, diagnostic);
        fixes.extend(super::actions::fixes(context, diagnostic, &lsp));
        converted.push(lsp);
    }
    (converted, fixes)
}

/// The span in this document a diagnostic is shown at.
pub fn document_span(context: &Context<'_>, diagnostic: &Diagnostic) -> Option<Span> {
    let span = diagnostic.span?;
    if context.in_document(span) {
        return Some(span);
    }
    diagnostic
        .trace
        .iter()
        .map(|frame| frame.call_site)
        .find(|site| context.in_document(*site))
}

fn convert(context: &Context<'_>, diagnostic: &Diagnostic) -> lsp_types::Diagnostic {
    let range = document_span(context, diagnostic).map_or_else(
        || Range::new(Position::new(0, 0), Position::new(0, 0)),
        |span| context.range(span),
    );
    let related = related(context, diagnostic);
    lsp_types::Diagnostic {
        range,
        severity: Some(severity(diagnostic)),
        code: Some(NumberOrString::String(diagnostic.code.as_str().to_string())),
        code_description: None,
        source: Some("tsl".to_string()),
        message: message(diagnostic),
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: suggested(diagnostic),
    }
}

/// The statements the help suggests (`check u0 <= n`), kept for clients that build their own
/// fixes; the server's quick fixes insert them.
fn suggested(diagnostic: &Diagnostic) -> Option<serde_json::Value> {
    let suggestions = super::actions::suggestions(diagnostic);
    (!suggestions.is_empty()).then(|| serde_json::json!({ "suggestions": suggestions }))
}

/// Notes that a trace without input values specialised on a size are hints: every compiled
/// call decides them, so they are not problems, only worth seeing.
fn severity(diagnostic: &Diagnostic) -> DiagnosticSeverity {
    match (diagnostic.severity, diagnostic.code) {
        (Severity::Error, _) => DiagnosticSeverity::ERROR,
        (Severity::Warning, _) => DiagnosticSeverity::WARNING,
        (Severity::Note, Code::Specialization) => DiagnosticSeverity::HINT,
        (Severity::Note, _) => DiagnosticSeverity::INFORMATION,
    }
}

/// The message, its label when it says more than the code's default, then `note:` and
/// `help:` lines.
fn message(diagnostic: &Diagnostic) -> String {
    let mut text = diagnostic.message.clone();
    if let Some(label) = &diagnostic.label
        && label != diagnostic.code.default_label()
        && !text.contains(label.as_str())
    {
        let _ = write!(text, " ({label})");
    }
    for note in &diagnostic.notes {
        text.push_str("\nnote: ");
        text.push_str(note);
    }
    if let Some(help) = &diagnostic.help {
        text.push_str("\nhelp: ");
        text.push_str(help);
    }
    text
}

fn related(context: &Context<'_>, diagnostic: &Diagnostic) -> Vec<DiagnosticRelatedInformation> {
    let mut related = Vec::new();
    let mut add = |span: Span, message: String| {
        if let Some(location) = context.location(span) {
            related.push(DiagnosticRelatedInformation { location, message });
        }
    };
    if let Some(span) = diagnostic.span
        && !context.in_document(span)
    {
        let label = diagnostic
            .label
            .clone()
            .unwrap_or_else(|| diagnostic.code.default_label().to_string());
        add(span, label);
    }
    for label in &diagnostic.secondary {
        add(label.span, label.message.clone());
    }
    for frame in &diagnostic.trace {
        let message = match frame.kind {
            FrameKind::Call => format!("in this call of `{}`", frame.function),
            FrameKind::Use => format!("while using `{}`", frame.function),
        };
        add(frame.call_site, message);
    }
    related
}
