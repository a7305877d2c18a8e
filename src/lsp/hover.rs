//! Hover: what a name is (a function's signature and doc comment, a builtin's signature and
//! one-line doc, a local, a parameter, a module), the symbolic type a value had in the traces
//! of compiled functions (`f32[n, 3]`, with what each data-dependent size is), and what a
//! `check` became. Outside compiled code nothing runs, so there are no shapes there, only
//! what is known statically.
//!
//! Entries are built on the analysis thread for every place that has something to say; a
//! request takes the innermost entry around the cursor.

use std::collections::BTreeMap;
use std::ops::Range;

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

use super::lines::Encoding;
use super::snapshot::{Context, Snapshot};
use crate::check::facts::{Definition, DefinitionKind};
use crate::dtype::DType;
use crate::source::Span;

/// What one hover shows, before rendering.
#[derive(Default)]
struct Parts {
    /// Lines of code (signatures, `name: type`).
    code: Vec<String>,
    /// Lines of prose.
    text: Vec<String>,
}

/// Every hover entry of the document, by byte range.
pub fn entries(context: &Context<'_>) -> Vec<(Range<u32>, String)> {
    let mut parts: BTreeMap<(u32, u32), Parts> = BTreeMap::new();
    let names = &context.analysis.names;
    for reference in &names.references {
        let entry = entry(&mut parts, reference.span);
        describe(
            context,
            &reference.definition,
            context.snippet(reference.span),
            entry,
        );
    }
    for binding in names.bindings.iter().chain(&names.globals) {
        if context.in_document(binding.span) {
            let definition = Definition::Source {
                kind: binding.kind,
                span: binding.span,
            };
            describe(
                context,
                &definition,
                &binding.name,
                entry(&mut parts, binding.span),
            );
        }
    }
    for trace in &context.analysis.traces {
        for fact in trace
            .types
            .iter()
            .filter(|fact| context.in_document(fact.span))
        {
            let entry = entry(&mut parts, fact.span);
            typed(entry, context.snippet(fact.span), &fact.types);
            entry.text.extend(fact.symbols.iter().cloned());
        }
        for check in trace
            .checks
            .iter()
            .filter(|check| context.in_document(check.span))
        {
            let entry = entry(&mut parts, check.span);
            for became in &check.became {
                let line = format!("In `{}` this check became {became}.", trace.function);
                if !entry.text.contains(&line) {
                    entry.text.push(line);
                }
            }
        }
    }
    parts
        .into_iter()
        .filter(|(_, parts)| !parts.code.is_empty() || !parts.text.is_empty())
        .map(|((start, end), parts)| (start..end, render(&parts, context.client.markdown)))
        .collect()
}

fn entry(parts: &mut BTreeMap<(u32, u32), Parts>, span: Span) -> &mut Parts {
    parts.entry((span.start, span.end)).or_default()
}

/// Adds the recorded types of a value to its entry: `y: f32[n]` after a plain `y`, else as
/// its own line.
fn typed(entry: &mut Parts, snippet: &str, types: &[String]) {
    let shown = types.join("  |  ");
    match entry.code.first_mut() {
        Some(first) if !first.contains(':') && first.ends_with(snippet) => {
            first.push_str(": ");
            first.push_str(&shown);
        }
        Some(_) => entry.code.push(format!("{snippet}: {shown}")),
        None => {
            let shown_as = if snippet.len() <= 40 && !snippet.contains('\n') {
                format!("{snippet}: {shown}")
            } else {
                shown
            };
            entry.code.push(shown_as);
        }
    }
}

fn describe(context: &Context<'_>, definition: &Definition, name: &str, parts: &mut Parts) {
    if !parts.code.is_empty() {
        return;
    }
    match definition {
        Definition::Builtin(builtin) => {
            if let Some(dtype) = DType::from_name(builtin) {
                parts.code.push(builtin.clone());
                parts.text.push(dtype_doc(dtype).to_string());
            } else if let Some(def) = crate::eval::builtin_function(builtin) {
                parts.code.push(def.signature());
                parts.text.push(def.doc().to_string());
            }
        }
        Definition::Method(method) => {
            if let Some(def) = crate::eval::builtin_method(method) {
                let params: Vec<String> = def
                    .params()
                    .skip(1)
                    .map(|param| match (param.variadic, param.default) {
                        (true, _) => format!("*{}", param.name),
                        (false, Some(default)) => format!("{} = {default}", param.name),
                        (false, None) => param.name.to_string(),
                    })
                    .collect();
                parts
                    .code
                    .push(format!("x.{method}({})", params.join(", ")));
                parts.text.push(def.doc().to_string());
            }
        }
        Definition::Source { kind, span } => source(context, *kind, *span, name, parts),
    }
}

fn source(context: &Context<'_>, kind: DefinitionKind, span: Span, name: &str, parts: &mut Parts) {
    let file = context.analysis.sources.get(span.file);
    match kind {
        DefinitionKind::Function => {
            if let Some((signature, doc)) = function_header(&file.text, span) {
                parts.code.push(signature);
                parts.text.extend(doc);
            }
        }
        DefinitionKind::Module => {
            let line = line_of(&file.text, span.start).trim().to_string();
            parts.code.push(line);
            if let Some(module) = context
                .analysis
                .names
                .modules
                .iter()
                .find(|module| module.span == span)
            {
                let members: Vec<&str> = module.members.iter().map(|m| m.name.as_str()).collect();
                parts.text.push(format!("members: {}", members.join(", ")));
            }
        }
        DefinitionKind::Parameter => parts.code.push(format!("(parameter) {name}")),
        DefinitionKind::Dim => parts.code.push(format!(
            "(size) {name}: int, named in a parameter's annotation"
        )),
        DefinitionKind::Local => parts.code.push(format!("(local) {name}")),
        DefinitionKind::Global => parts.code.push(format!("(global) {name}")),
    }
}

/// A function's signature as written (decorators on their own lines, whitespace collapsed)
/// and its doc comment: the `#` lines right above it.
pub(super) fn function_header(text: &str, name: Span) -> Option<(String, Vec<String>)> {
    let start = name.start as usize;
    let keyword = text.get(..start)?.rfind("fn")?;
    let brace = start + text.get(start..)?.find('{')?;
    let signature: Vec<&str> = text[keyword..brace].split_whitespace().collect();
    let mut lines: Vec<&str> = text[..keyword].lines().collect();
    // The text before `fn` on its own line is indentation only.
    if !text[..keyword].ends_with('\n') {
        lines.pop();
    }
    let mut decorators = Vec::new();
    while let Some(line) = lines.last().map(|line| line.trim())
        && line.starts_with('@')
    {
        decorators.push(line.to_string());
        lines.pop();
    }
    let mut doc = Vec::new();
    while let Some(line) = lines.last().map(|line| line.trim())
        && let Some(comment) = line.strip_prefix('#')
    {
        doc.push(comment.strip_prefix(' ').unwrap_or(comment).to_string());
        lines.pop();
    }
    doc.reverse();
    decorators.reverse();
    decorators.push(signature.join(" "));
    Some((decorators.join("\n"), doc))
}

fn line_of(text: &str, offset: u32) -> &str {
    let offset = (offset as usize).min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |at| at + 1);
    let end = text[offset..]
        .find('\n')
        .map_or(text.len(), |at| offset + at);
    &text[start..end]
}

fn dtype_doc(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "dtype: 32-bit floating point",
        DType::I64 => "dtype: 64-bit signed integer",
        DType::Bool => "dtype: boolean",
    }
}

fn render(parts: &Parts, markdown: bool) -> String {
    let mut blocks = Vec::new();
    if !parts.code.is_empty() {
        let code = parts.code.join("\n");
        blocks.push(if markdown {
            format!("```tsl\n{code}\n```")
        } else {
            code
        });
    }
    if !parts.text.is_empty() {
        let separator = if markdown { "\n\n" } else { "\n" };
        blocks.push(parts.text.join(separator));
    }
    blocks.join("\n\n")
}

/// The hover at `position` of the snapshot's text.
pub fn at(
    snapshot: &Snapshot,
    position: Position,
    encoding: Encoding,
    markdown: bool,
) -> Option<Hover> {
    let offset = snapshot.index.offset(position, encoding);
    let text = Snapshot::innermost(&snapshot.hovers, offset)?;
    let kind = if markdown {
        MarkupKind::Markdown
    } else {
        MarkupKind::PlainText
    };
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind,
            value: text.clone(),
        }),
        range: None,
    })
}

#[cfg(test)]
mod tests {
    use super::function_header;
    use crate::source::{FileId, Span};

    #[test]
    fn a_function_header_has_its_decorators_and_doc_comment() {
        let text = "let x = 1\n\n# Rows of x whose\n# sum is positive.\n@compile\nfn keep(x: f32[n, m]) -> f32[?, m] {\n    return x\n}\n";
        let name = text.find("keep").expect("keep");
        let span = Span::new(FileId(0), name, name + 4);
        let (signature, doc) = function_header(text, span).expect("a header");
        assert_eq!(signature, "@compile\nfn keep(x: f32[n, m]) -> f32[?, m]");
        assert_eq!(doc, ["Rows of x whose", "sum is positive."]);
    }
}
