//! Document symbols: the file's functions (compiled ones marked), its top-level variables
//! and the modules it uses, from the syntax tree.

use lsp_types::{DocumentSymbol, SymbolKind};

use super::snapshot::Context;
use crate::source::Span;
use crate::syntax::ast::{Item, StmtKind, Target};

pub fn document(context: &Context<'_>) -> Vec<DocumentSymbol> {
    let mut symbols = Vec::new();
    for item in &context.analysis.program.items {
        match item {
            Item::Fn(def) => {
                let compiled = def
                    .decorators
                    .iter()
                    .any(|decorator| &*decorator.name.name == "compile");
                let params: Vec<&str> = def.params.iter().map(|p| &*p.name.name).collect();
                let detail = format!(
                    "{}fn({})",
                    if compiled { "@compile " } else { "" },
                    params.join(", ")
                );
                let whole = def.span.to(def.body.span);
                symbols.push(symbol(
                    context,
                    &def.name.name,
                    SymbolKind::FUNCTION,
                    detail,
                    whole,
                    def.name.span,
                ));
            }
            Item::Use(decl) => {
                if let Some((name, span)) = crate::check::names::use_binding(decl) {
                    let detail = context.snippet(decl.span).to_string();
                    symbols.push(symbol(
                        context,
                        &name,
                        SymbolKind::MODULE,
                        detail,
                        decl.span,
                        span,
                    ));
                }
            }
            Item::Stmt(stmt) => {
                if let StmtKind::Let(target, _) = &stmt.kind {
                    let names = match target {
                        Target::Name(name) => vec![name],
                        Target::List { names, rest, .. } => names.iter().chain(rest).collect(),
                    };
                    for name in names {
                        symbols.push(symbol(
                            context,
                            &name.name,
                            SymbolKind::VARIABLE,
                            String::new(),
                            stmt.span,
                            name.span,
                        ));
                    }
                }
            }
        }
    }
    symbols
}

#[allow(deprecated)] // `deprecated` is a field every DocumentSymbol must still set.
fn symbol(
    context: &Context<'_>,
    name: &str,
    kind: SymbolKind,
    detail: String,
    whole: Span,
    selection: Span,
) -> DocumentSymbol {
    DocumentSymbol {
        name: name.to_string(),
        detail: (!detail.is_empty()).then_some(detail),
        kind,
        tags: None,
        deprecated: None,
        range: context.range(whole),
        selection_range: context.range(selection),
        children: None,
    }
}
