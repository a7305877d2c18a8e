//! Inlay hints: what a trace of the compiled functions knows, shown in the code. After each
//! `let` the value's symbolic type (`: f32[n, 3]`); at the end of a line where a trace
//! specialises or assumes something about input sizes, what (`specialises on n > 2`), so the
//! risk of recompiling shows before anything runs; after each `check`, what it became.

use lsp_types::{InlayHint, InlayHintKind, InlayHintLabel, InlayHintTooltip, Position, Range};

use super::snapshot::{Context, Snapshot};
use crate::diag::Code;
use crate::source::Span;
use crate::syntax::ast::{Item, Stmt, StmtKind, Target};
use crate::syntax::visit::{self, Visitor};

pub fn hints(context: &Context<'_>) -> Vec<InlayHint> {
    let mut hints = Vec::new();
    let lets = let_names(context);
    for trace in &context.analysis.traces {
        for fact in &trace.types {
            if lets.contains(&fact.span) {
                let position = context.range(fact.span).end;
                let label = format!(": {}", fact.types.join(" | "));
                let tooltip = (!fact.symbols.is_empty()).then(|| fact.symbols.join("\n"));
                hints.push(hint(position, label, InlayHintKind::TYPE, tooltip, false));
            }
        }
        for check in trace.checks.iter().filter(|c| context.in_document(c.span)) {
            let labels: Vec<String> = check.became.iter().map(|text| short(text)).collect();
            let position = line_end(context, check.span);
            let tooltip = Some(check.became.join("\n"));
            hints.push(hint(
                position,
                labels.join(", "),
                InlayHintKind::PARAMETER,
                tooltip,
                true,
            ));
        }
    }
    for diagnostic in &context.analysis.diagnostics {
        if diagnostic.code != Code::Specialization {
            continue;
        }
        let Some(span) = super::convert::document_span(context, diagnostic) else {
            continue;
        };
        let label = specialisation(&diagnostic.message);
        let position = line_end(context, span);
        hints.push(hint(
            position,
            label,
            InlayHintKind::PARAMETER,
            diagnostic.help.clone(),
            true,
        ));
    }
    hints.sort_by_key(|hint| (hint.position.line, hint.position.character));
    hints.dedup_by(|a, b| a.position == b.position && label(a) == label(b));
    hints
}

fn label(hint: &InlayHint) -> &str {
    match &hint.label {
        InlayHintLabel::String(text) => text,
        InlayHintLabel::LabelParts(_) => "",
    }
}

/// `this branch specialises on n > 2` → `specialises on n > 2`; the part before any `;`.
fn specialisation(message: &str) -> String {
    let message = message.split(';').next().unwrap_or(message);
    let message = message
        .strip_prefix("this branch ")
        .or_else(|| message.strip_prefix("this trace "))
        .unwrap_or(message);
    message.trim().to_string()
}

/// `a runtime assert: \`u0 <= n\` is checked …` → `runtime assert u0 <= n`.
fn short(became: &str) -> String {
    let (kind, rest) = became.split_once(':').unwrap_or((became, ""));
    let kind = kind.strip_prefix("a ").unwrap_or(kind);
    match rest.split('`').nth(1) {
        Some(condition) => format!("{kind} {condition}"),
        None => kind.to_string(),
    }
}

fn line_end(context: &Context<'_>, span: Span) -> Position {
    let start = span.start as usize;
    let end = context.text[start..]
        .find('\n')
        .map_or(context.text.len(), |at| start + at);
    context.index.position(end as u32, context.client.encoding)
}

fn hint(
    position: Position,
    label: String,
    kind: InlayHintKind,
    tooltip: Option<String>,
    padding_left: bool,
) -> InlayHint {
    InlayHint {
        position,
        label: InlayHintLabel::String(label),
        kind: Some(kind),
        text_edits: None,
        tooltip: tooltip.map(InlayHintTooltip::String),
        padding_left: Some(padding_left),
        padding_right: None,
        data: None,
    }
}

/// The names `let` statements bind anywhere in the document's functions.
fn let_names(context: &Context<'_>) -> Vec<Span> {
    struct Lets(Vec<Span>);
    impl Visitor for Lets {
        fn stmt(&mut self, stmt: &Stmt) -> bool {
            if let StmtKind::Let(target, _) = &stmt.kind {
                match target {
                    Target::Name(name) => self.0.push(name.span),
                    Target::List { names, rest, .. } => {
                        self.0
                            .extend(names.iter().chain(rest).map(|name| name.span));
                    }
                }
            }
            true
        }
    }
    let mut lets = Lets(Vec::new());
    for item in &context.analysis.program.items {
        if let Item::Fn(def) = item {
            visit::function(&mut lets, def);
        }
    }
    lets.0
}

/// The hints of the snapshot inside `range`.
pub fn within(snapshot: &Snapshot, range: Range) -> Vec<InlayHint> {
    let inside = |position: Position| {
        (range.start.line, range.start.character) <= (position.line, position.character)
            && (position.line, position.character) <= (range.end.line, range.end.character)
    };
    snapshot
        .hints
        .iter()
        .filter(|hint| inside(hint.position))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{short, specialisation};

    #[test]
    fn labels_are_short() {
        assert_eq!(
            specialisation("this branch specialises on n > 2"),
            "specialises on n > 2"
        );
        assert_eq!(
            specialisation(
                "range() specialises on the value of s0; the rest of the function is not checked"
            ),
            "range() specialises on the value of s0"
        );
        assert_eq!(
            specialisation("this trace assumes n == m"),
            "assumes n == m"
        );
        assert_eq!(
            short("a runtime assert: `u0 <= n` is checked when the compiled function runs"),
            "runtime assert u0 <= n"
        );
        assert_eq!(
            short("a device assert: the compiled kernels check the data when they run"),
            "device assert"
        );
    }
}
