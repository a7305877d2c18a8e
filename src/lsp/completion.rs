//! Completion. The context comes from the current text before the cursor, the way the REPL
//! completes: after `@` the decorator, after `use std.` the std modules, after `name.` a
//! used module's members or else tensor methods and fields, in an annotation the type names,
//! elsewhere the names in scope (locals visible at the cursor, globals), builtins and
//! keywords. The names come from the latest analysis, even one a few keystrokes old: the
//! names in scope change slowly while typing.

use lsp_types::{CompletionItem, CompletionItemKind, CompletionResponse, Position};

use super::documents::Document;
use super::lines::Encoding;
use super::snapshot::{Context, Named, Snapshot};
use crate::check::facts::{Binding, DefinitionKind};
use crate::eval::Interpreter;
use crate::syntax::words::{after_use_std, is_word_char};

/// Each used module's name with its members.
pub type Modules = Vec<(String, Vec<Named>)>;

/// The names of the document for completion: locals, globals, and used modules' members.
pub fn names(context: &Context<'_>) -> (Vec<Named>, Vec<Named>, Modules) {
    let facts = &context.analysis.names;
    let locals = facts
        .bindings
        .iter()
        .map(|binding| named(context, binding))
        .collect();
    let globals = facts
        .globals
        .iter()
        .map(|binding| named(context, binding))
        .collect();
    let modules = facts
        .modules
        .iter()
        .map(|module| {
            let members = module
                .members
                .iter()
                .map(|binding| named(context, binding))
                .collect();
            (module.name.clone(), members)
        })
        .collect();
    (locals, globals, modules)
}

fn named(context: &Context<'_>, binding: &Binding) -> Named {
    let kind = match binding.kind {
        DefinitionKind::Function => CompletionItemKind::FUNCTION,
        DefinitionKind::Module => CompletionItemKind::MODULE,
        _ => CompletionItemKind::VARIABLE,
    };
    let detail = match binding.kind {
        DefinitionKind::Function => {
            let text = &context.analysis.sources.get(binding.span.file).text;
            super::hover::function_header(text, binding.span)
                .and_then(|(signature, _)| signature.lines().last().map(str::to_string))
        }
        _ => context
            .analysis
            .traces
            .iter()
            .flat_map(|trace| &trace.types)
            .find(|fact| fact.span == binding.span)
            .map(|fact| fact.types.join(" | ")),
    };
    Named {
        name: binding.name.clone(),
        kind,
        detail,
        visible: binding.visible.clone(),
    }
}

/// What to offer at `position` of `document`.
pub fn at(
    snapshot: Option<&Snapshot>,
    document: &Document,
    position: Position,
    encoding: Encoding,
) -> CompletionResponse {
    let offset = document.index.offset(position, encoding) as usize;
    let line_start = document.text[..offset].rfind('\n').map_or(0, |at| at + 1);
    let before = &document.text[line_start..offset];
    let mut items = candidates(snapshot, before, offset as u32);
    let word_start = before.trim_end_matches(is_word_char).len();
    let word = &before[word_start..];
    items.retain(|item| item.label.starts_with(word));
    let mut seen = std::collections::HashSet::new();
    items.retain(|item| seen.insert(item.label.clone()));
    CompletionResponse::Array(items)
}

fn candidates(snapshot: Option<&Snapshot>, before: &str, offset: u32) -> Vec<CompletionItem> {
    if in_comment_or_string(before) {
        return Vec::new();
    }
    let head = before.trim_end_matches(is_word_char);
    if head.ends_with('@') {
        return vec![item("compile", CompletionItemKind::KEYWORD, None)];
    }
    if let Some(receiver) = head.strip_suffix('.') {
        return members(snapshot, receiver);
    }
    if in_annotation(head) {
        let types = ["f32", "i64", "bool", "int", "float", "str", "list"];
        return types
            .iter()
            .map(|name| item(name, CompletionItemKind::TYPE_PARAMETER, None))
            .collect();
    }
    let mut items = Vec::new();
    if let Some(snapshot) = snapshot {
        let locals = snapshot
            .locals
            .iter()
            .rev()
            .filter(|named| named.visible.contains(&offset));
        for named in locals.chain(&snapshot.globals) {
            items.push(item(&named.name, named.kind, named.detail.clone()));
        }
    }
    for def in crate::eval::builtin_defs()
        .iter()
        .filter(|def| def.is_function())
    {
        items.push(item(
            def.name(),
            CompletionItemKind::FUNCTION,
            Some(def.signature()),
        ));
    }
    for dtype in crate::dtype::DType::ALL {
        items.push(item(dtype.name(), CompletionItemKind::CONSTANT, None));
    }
    for keyword in crate::syntax::KEYWORDS {
        items.push(item(keyword, CompletionItemKind::KEYWORD, None));
    }
    items
}

/// What may follow `receiver.`.
fn members(snapshot: Option<&Snapshot>, receiver: &str) -> Vec<CompletionItem> {
    if after_use_std(receiver) {
        return Interpreter::std_module_names()
            .into_iter()
            .map(|name| item(name, CompletionItemKind::MODULE, None))
            .collect();
    }
    let name_start = receiver.trim_end_matches(is_word_char).len();
    let name = &receiver[name_start..];
    let chained = receiver[..name_start].ends_with('.');
    let module = snapshot
        .filter(|_| !chained && !name.is_empty())
        .and_then(|snapshot| snapshot.modules.iter().find(|(module, _)| module == name));
    if let Some((_, members)) = module {
        return members
            .iter()
            .map(|named| item(&named.name, named.kind, named.detail.clone()))
            .collect();
    }
    let mut items: Vec<CompletionItem> = Interpreter::method_names()
        .into_iter()
        .map(|method| match crate::eval::builtin_method(method) {
            Some(def) => item(method, CompletionItemKind::METHOD, Some(def.signature())),
            None => item(method, CompletionItemKind::FIELD, None),
        })
        .collect();
    items.sort_by(|a, b| a.label.cmp(&b.label));
    items
}

fn item(label: &str, kind: CompletionItemKind, detail: Option<String>) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail,
        ..CompletionItem::default()
    }
}

/// Whether the text before the cursor on its line ends inside a comment or a string.
fn in_comment_or_string(before: &str) -> bool {
    let mut in_string = false;
    let mut escaped = false;
    for c in before.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '#' if !in_string => return true,
            _ => {}
        }
    }
    in_string
}

/// Whether the cursor is where a parameter's or the return value's type is written: right
/// after `name:` inside a `fn` header's parentheses, or after `->`.
fn in_annotation(head: &str) -> bool {
    let trimmed = head.trim_end();
    let Some(header) = trimmed.trim_start().strip_prefix("fn ") else {
        return false;
    };
    let open = header.matches('(').count() > header.matches(')').count();
    (trimmed.ends_with(':') && open) || trimmed.ends_with("->")
}

#[cfg(test)]
mod tests {
    use super::{after_use_std, in_annotation, in_comment_or_string};

    #[test]
    fn contexts_from_the_text_before_the_cursor() {
        assert!(after_use_std("use std"));
        assert!(!after_use_std("reuse std"));
        assert!(in_annotation("fn f(x: "));
        assert!(in_annotation("fn f(x: f32[n], k:"));
        assert!(in_annotation("fn f(x) ->"));
        assert!(!in_annotation("let y = x:"));
        assert!(!in_annotation("fn f(x) { let y: "));
        assert!(in_comment_or_string("let x = 1  # the "));
        assert!(in_comment_or_string("print(\"a # b"));
        assert!(!in_comment_or_string("print(\"a # b\", "));
    }
}
