//! The names a program defines at its top level (functions, `use`s, top-level `let`s) and
//! the members of the modules it uses: what the resolver (`names`) checks uses against.

use std::collections::HashMap;
use std::rc::Rc;

use super::facts::{Binding, Definition, DefinitionKind, ModuleFacts};
use crate::source::Span;
use crate::syntax::ast::{FnDef, Item, Program, StmtKind, Target, UseDecl, UseTarget};

/// What a global name is.
#[derive(Clone, Debug)]
pub enum Global {
    Function(Signature),
    /// A used module: its members (`None` when they are not known: a module that cannot be
    /// read, or one a used module uses), and the name the `use` binds.
    Module {
        members: Option<Rc<Members>>,
        span: Span,
    },
    /// A top-level `let`, defined at this span.
    Variable(Span),
}

impl Global {
    pub(super) fn definition(&self) -> Definition {
        let (kind, span) = match self {
            Global::Function(signature) => (DefinitionKind::Function, signature.span),
            Global::Module { span, .. } => (DefinitionKind::Module, *span),
            Global::Variable(span) => (DefinitionKind::Global, *span),
        };
        Definition::Source { kind, span }
    }
}

/// The members of a used module.
pub type Members = HashMap<String, Global>;

/// A user function's parameters: names and whether each has a default.
#[derive(Clone, Debug)]
pub struct Signature {
    pub name: String,
    pub params: Vec<(String, bool)>,
    pub span: Span,
}

impl Signature {
    pub fn of(def: &FnDef) -> Signature {
        Signature {
            name: def.name.name.to_string(),
            params: def
                .params
                .iter()
                .map(|param| (param.name.name.to_string(), param.default.is_some()))
                .collect(),
            span: def.name.span,
        }
    }
}

/// The globals a program defines: functions, uses (through `modules`) and top-level lets.
pub fn globals(
    program: &Program,
    modules: &mut dyn FnMut(&UseDecl) -> Option<Rc<Members>>,
) -> Members {
    let mut globals = Members::new();
    for item in &program.items {
        match item {
            Item::Fn(def) => {
                globals.insert(
                    def.name.name.to_string(),
                    Global::Function(Signature::of(def)),
                );
            }
            Item::Use(decl) => {
                if let Some((name, span)) = use_binding(decl) {
                    let members = modules(decl);
                    globals.insert(name, Global::Module { members, span });
                }
            }
            Item::Stmt(stmt) => {
                if let StmtKind::Let(target, _) = &stmt.kind {
                    for (name, span) in target_names(target) {
                        globals.entry(name).or_insert(Global::Variable(span));
                    }
                }
            }
        }
    }
    globals
}

/// The name a `use` binds.
pub fn use_name(decl: &UseDecl) -> Option<String> {
    use_binding(decl).map(|(name, _)| name)
}

/// The name a `use` binds and where it is written (the alias, or the module's last part).
pub fn use_binding(decl: &UseDecl) -> Option<(String, Span)> {
    match (&decl.alias, &decl.target) {
        (Some(alias), _) => Some((alias.name.to_string(), alias.span)),
        (None, UseTarget::Std(path)) => path.last().map(|part| (part.name.to_string(), part.span)),
        (None, UseTarget::File(..)) => None,
    }
}

pub(super) fn target_names(target: &Target) -> Vec<(String, Span)> {
    match target {
        Target::Name(name) => vec![(name.name.to_string(), name.span)],
        Target::List { names, rest, .. } => names
            .iter()
            .chain(rest)
            .map(|name| (name.name.to_string(), name.span))
            .collect(),
    }
}

pub(super) fn module_facts(name: &str, span: Span, members: &Members) -> ModuleFacts {
    let mut bindings: Vec<Binding> = members
        .iter()
        .filter_map(|(member, global)| match global.definition() {
            Definition::Source { kind, span } => Some(Binding {
                name: member.clone(),
                kind,
                span,
                visible: 0..0,
            }),
            _ => None,
        })
        .collect();
    bindings.sort_by(|a, b| a.name.cmp(&b.name));
    ModuleFacts {
        name: name.to_string(),
        span,
        members: bindings,
    }
}
