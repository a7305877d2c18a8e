//! Quick fixes: a data-dependent diagnostic's help names the `check` (or `check_size`) that
//! would settle the question (`state it before this line: \`check u0 * 2 == u1 * 3\``); the
//! fix inserts it on its own line before the line of the question, indented like it. Only
//! complete statements are offered (not `check n == …`), and only when every name in them is
//! visible there, so the fix never introduces a new error.

use std::collections::HashMap;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Position, Range, TextEdit, WorkspaceEdit,
};

use super::snapshot::{Context, Fix, Snapshot};
use crate::diag::Diagnostic;

/// The statements a diagnostic's help suggests writing: `check …` and `check_size …` in
/// backticks.
pub fn suggestions(diagnostic: &Diagnostic) -> Vec<String> {
    let Some(help) = &diagnostic.help else {
        return Vec::new();
    };
    help.split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| quoted.starts_with("check ") || quoted.starts_with("check_size "))
        .filter(|quoted| !quoted.contains('…'))
        .map(str::to_string)
        .collect()
}

/// The fixes for one diagnostic whose question is in the document.
pub fn fixes(
    context: &Context<'_>,
    diagnostic: &Diagnostic,
    lsp: &lsp_types::Diagnostic,
) -> Vec<Fix> {
    let Some(span) = diagnostic.span.filter(|span| context.in_document(*span)) else {
        return Vec::new();
    };
    let line_start = context.text[..span.start as usize]
        .rfind('\n')
        .map_or(0, |newline| newline + 1);
    let indent: String = context.text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let at = context
        .index
        .position(line_start as u32, context.client.encoding);
    suggestions(diagnostic)
        .into_iter()
        .filter(|statement| names_visible(context, statement, span.start))
        .map(|statement| Fix {
            diagnostic: lsp.clone(),
            title: format!("Insert `{statement}`"),
            edit: TextEdit::new(Range::new(at, at), format!("{indent}{statement}\n")),
        })
        .collect()
}

/// Whether every name a statement uses is visible at `offset`.
fn names_visible(context: &Context<'_>, statement: &str, offset: u32) -> bool {
    let names = &context.analysis.names;
    let words = statement
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'));
    words.into_iter().all(|word| {
        crate::syntax::KEYWORDS.contains(&word)
            || crate::eval::builtin_function(word).is_some()
            || names.visible_at(offset).any(|binding| binding.name == word)
            || names.globals.iter().any(|global| global.name == word)
    })
}

/// The quick fixes of diagnostics that touch `range`.
pub fn code_actions(snapshot: &Snapshot, range: Range) -> Vec<CodeActionOrCommand> {
    let Ok(uri) = snapshot.uri.parse::<lsp_types::Uri>() else {
        return Vec::new();
    };
    snapshot
        .fixes
        .iter()
        .filter(|fix| overlaps(fix.diagnostic.range, range))
        .map(|fix| {
            // lsp-types keys a workspace edit's changes by `Uri`, which clippy deems mutable.
            #[allow(clippy::mutable_key_type)]
            let changes = HashMap::from([(uri.clone(), vec![fix.edit.clone()])]);
            CodeActionOrCommand::CodeAction(CodeAction {
                title: fix.title.clone(),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![fix.diagnostic.clone()]),
                edit: Some(WorkspaceEdit::new(changes)),
                is_preferred: Some(true),
                ..CodeAction::default()
            })
        })
        .collect()
}

fn overlaps(a: Range, b: Range) -> bool {
    let before = |x: Position, y: Position| (x.line, x.character) <= (y.line, y.character);
    before(a.start, b.end) && before(b.start, a.end)
}

#[cfg(test)]
mod tests {
    use super::suggestions;
    use crate::diag::{Code, Diagnostic};
    use crate::source::Span;

    #[test]
    fn complete_checks_in_the_help_are_suggestions() {
        let diagnostic = Diagnostic::error(Code::DataDependentGuard, Span::default(), "x")
            .with_help(
                "if it always holds, state it before this line: `check u0 * 2 == u1 * 3`; to \
                 branch on data, use cond(...); other checks that would decide it: \
                 `check_size n`, `check n == …`, `cond(a, b)`",
            );
        assert_eq!(
            suggestions(&diagnostic),
            ["check u0 * 2 == u1 * 3", "check_size n"]
        );
    }
}
