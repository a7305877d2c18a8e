//! Static name and arity checks for `tsl check`: every name used is defined where it is used
//! (locals in program order, module globals, builtins), members of used modules exist,
//! assignments target declared variables, and calls of user functions and builtins pass
//! arguments their parameters accept. Nothing runs. Along the way the resolver records what
//! every name refers to and where each local is visible ([`NameFacts`]).

use std::collections::HashMap;
use std::rc::Rc;

pub use super::globals::{Global, Members, Signature, globals, use_binding, use_name};

use super::arity;
use super::facts::{Binding, Definition, DefinitionKind, NameFacts, Reference};
use super::globals::{module_facts, target_names};
use crate::diag::{Code, Diagnostic};
use crate::source::Span;
use crate::syntax::ast::{
    Arg, Block, DimAnn, Else, Expr, ExprKind, FnDef, IndexItem, Item, Program, Stmt, StmtKind,
    StrPart, Target, TypeKind,
};

/// Checks a program against its globals and the builtins; `end` is the length of its file.
///
/// `syntax_errors` are the spans of the program's syntax errors: names in a statement that
/// did not parse whole are not reported.
pub fn check(
    program: &Program,
    globals: &Members,
    end: u32,
    syntax_errors: &[Span],
) -> (Vec<Diagnostic>, NameFacts) {
    let mut resolver = Resolver {
        globals,
        syntax_errors,
        scopes: vec![Scope::new(end)],
        in_function: false,
        diagnostics: Vec::new(),
        facts: NameFacts::default(),
    };
    for (name, global) in globals {
        if let Definition::Source { kind, span } = global.definition() {
            resolver.facts.globals.push(Binding {
                name: name.clone(),
                kind,
                span,
                visible: 0..end,
            });
        }
        if let Global::Module {
            members: Some(members),
            span,
        } = global
        {
            resolver
                .facts
                .modules
                .push(module_facts(name, *span, members));
        }
    }
    resolver
        .facts
        .modules
        .sort_by_key(|module| module.span.start);
    resolver
        .facts
        .globals
        .sort_by_key(|binding| binding.span.start);
    for item in &program.items {
        if let Item::Stmt(stmt) = item {
            resolver.statement(stmt);
        }
    }
    for item in &program.items {
        if let Item::Fn(def) = item {
            resolver.function(def);
        }
    }
    resolver.facts.references.sort_by_key(|r| r.span.start);
    resolver.facts.bindings.sort_by_key(|b| b.span.start);
    (resolver.diagnostics, resolver.facts)
}

/// Names bound in one block, each with its definition, and where the block ends.
struct Scope {
    names: HashMap<String, (DefinitionKind, Span)>,
    end: u32,
}

impl Scope {
    fn new(end: u32) -> Scope {
        Scope {
            names: HashMap::new(),
            end,
        }
    }
}

struct Resolver<'a> {
    globals: &'a Members,
    syntax_errors: &'a [Span],
    /// Locals in scope, innermost last; at top level the outermost holds globals defined so far.
    scopes: Vec<Scope>,
    in_function: bool,
    diagnostics: Vec<Diagnostic>,
    facts: NameFacts,
}

impl Resolver<'_> {
    fn function(&mut self, def: &FnDef) {
        let body_end = def.body.span.end;
        for param in &def.params {
            if let Some(default) = &param.default {
                self.in_function = true;
                self.scopes = vec![Scope::new(body_end)];
                self.expression(default);
            }
        }
        self.in_function = true;
        self.scopes = vec![Scope::new(body_end)];
        let from = def.body.span.start;
        for param in &def.params {
            self.bind_name(
                &param.name.name,
                param.name.span,
                DefinitionKind::Parameter,
                from,
            );
            if let Some(annotation) = &param.annotation
                && let TypeKind::Tensor {
                    dims: Some(dims), ..
                } = &annotation.kind
            {
                for dim in dims {
                    if let DimAnn::Named(name) = dim {
                        self.dim_name(&name.name, name.span, from);
                    }
                }
            }
        }
        self.statements(&def.body.stmts);
        self.in_function = false;
        self.scopes = vec![Scope::new(u32::MAX)];
    }

    /// A size named in an annotation: the first mention defines it, later ones refer to it.
    fn dim_name(&mut self, name: &str, span: Span, from: u32) {
        if let Some((kind, defined)) = self.local(name) {
            self.refer(
                span,
                Definition::Source {
                    kind,
                    span: defined,
                },
            );
        } else {
            self.bind_name(name, span, DefinitionKind::Dim, from);
        }
    }

    fn block(&mut self, block: &Block) {
        self.scopes.push(Scope::new(block.span.end));
        self.statements(&block.stmts);
        self.scopes.pop();
    }

    fn statements(&mut self, stmts: &[Stmt]) {
        for stmt in stmts {
            self.statement(stmt);
        }
    }

    fn statement(&mut self, stmt: &Stmt) {
        // Names in a simple statement that did not parse whole are what recovery left of it:
        // its syntax error is the diagnostic, not the names it cut loose (`print('q)`).
        let simple = !matches!(stmt.kind, StmtKind::If { .. } | StmtKind::For { .. });
        let broken = self
            .syntax_errors
            .iter()
            .any(|error| stmt.span.start <= error.start && error.start < stmt.span.end);
        if simple && broken {
            let reported = self.diagnostics.len();
            self.statement_kind(stmt);
            self.diagnostics.truncate(reported);
        } else {
            self.statement_kind(stmt);
        }
    }

    fn statement_kind(&mut self, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Let(target, value) => {
                self.expression(value);
                let kind = if self.in_function || self.scopes.len() > 1 {
                    DefinitionKind::Local
                } else {
                    DefinitionKind::Global
                };
                self.bind(target, kind, stmt.span.end);
            }
            StmtKind::Assign(name, value) => {
                self.expression(value);
                self.assignment(&name.name, name.span);
            }
            StmtKind::If {
                condition,
                then,
                otherwise,
            } => {
                self.expression(condition);
                self.block(then);
                match otherwise {
                    Some(Else::Block(block)) => self.block(block),
                    Some(Else::If(nested)) => self.statement(nested),
                    None => {}
                }
            }
            StmtKind::For {
                target,
                iterable,
                body,
            } => {
                self.expression(iterable);
                self.scopes.push(Scope::new(body.span.end));
                self.bind(target, DefinitionKind::Local, body.span.start);
                self.statements(&body.stmts);
                self.scopes.pop();
            }
            StmtKind::Return(value) => {
                if let Some(value) = value {
                    self.expression(value);
                }
            }
            StmtKind::Check { condition, message } => {
                self.expression(condition);
                if let Some(message) = message {
                    self.expression(message);
                }
            }
            StmtKind::CheckSize { value, max } => {
                self.expression(value);
                if let Some(max) = max {
                    self.expression(max);
                }
            }
            StmtKind::Expr(value) => self.expression(value),
            StmtKind::Error => {}
        }
    }

    fn assignment(&mut self, name: &str, span: Span) {
        if let Some((kind, defined)) = self.local(name) {
            self.refer(
                span,
                Definition::Source {
                    kind,
                    span: defined,
                },
            );
            return;
        }
        match self.globals.get(name) {
            Some(global) if !self.in_function => self.refer(span, global.definition()),
            global => {
                let message = if self.in_function && global.is_some() {
                    format!("cannot assign to the global `{name}` inside a function")
                } else {
                    format!("`{name}` is not defined")
                };
                self.diagnostics.push(
                    Diagnostic::error(Code::NameError, span, message)
                        .with_help(format!("declare it first: `let {name} = …`")),
                );
            }
        }
    }

    fn bind(&mut self, target: &Target, kind: DefinitionKind, from: u32) {
        for (name, span) in target_names(target) {
            self.bind_name(&name, span, kind, from);
        }
    }

    fn bind_name(&mut self, name: &str, span: Span, kind: DefinitionKind, from: u32) {
        let scope = self.scopes.last_mut().expect("a scope");
        scope.names.insert(name.to_string(), (kind, span));
        let end = scope.end;
        self.facts.bindings.push(Binding {
            name: name.to_string(),
            kind,
            span,
            visible: from..end,
        });
    }

    fn local(&self, name: &str) -> Option<(DefinitionKind, Span)> {
        self.scopes
            .iter()
            .rev()
            .find_map(|scope| scope.names.get(name).copied())
    }

    fn refer(&mut self, span: Span, definition: Definition) {
        self.facts.references.push(Reference { span, definition });
    }

    /// What a name refers to where it is used: locals, then globals (at top level only those
    /// defined so far, plus functions and modules, which are bound before anything runs),
    /// then builtins.
    fn resolve(&self, name: &str) -> Option<Definition> {
        if let Some((kind, span)) = self.local(name) {
            return Some(Definition::Source { kind, span });
        }
        match self.globals.get(name) {
            Some(Global::Variable(_)) if !self.in_function => {}
            Some(global) => return Some(global.definition()),
            None => {}
        }
        let builtin = crate::eval::builtin_function(name).is_some()
            || crate::dtype::DType::from_name(name).is_some();
        builtin.then(|| Definition::Builtin(name.to_string()))
    }

    fn expression(&mut self, expr: &Expr) {
        match &expr.kind {
            ExprKind::Name(name) => match self.resolve(&name.name) {
                Some(definition) => self.refer(name.span, definition),
                None => self.unknown(&name.name, name.span),
            },
            ExprKind::Str(parts) => {
                for part in parts {
                    if let StrPart::Interpolation(inner) = part {
                        self.expression(inner);
                    }
                }
            }
            ExprKind::List(items) => items.iter().for_each(|item| self.expression(item)),
            ExprKind::Unary(_, operand) => self.expression(operand),
            ExprKind::Binary(_, a, b) => {
                self.expression(a);
                self.expression(b);
            }
            ExprKind::Call { callee, args } => {
                self.expression(callee);
                self.arguments(args);
                self.call(callee, args, expr.span);
            }
            ExprKind::Method {
                receiver,
                name,
                args,
            } => {
                self.expression(receiver);
                self.arguments(args);
                self.method(receiver, &name.name, name.span, args, expr.span);
            }
            ExprKind::Field { receiver, name } => {
                self.expression(receiver);
                self.member(receiver, &name.name, name.span);
            }
            ExprKind::Index { receiver, items } => {
                self.expression(receiver);
                for item in items {
                    match item {
                        IndexItem::Expr(inner) => self.expression(inner),
                        IndexItem::Slice {
                            start, stop, step, ..
                        } => [start, stop, step]
                            .into_iter()
                            .flatten()
                            .for_each(|inner| self.expression(inner)),
                        IndexItem::Ellipsis(_) => {}
                    }
                }
            }
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::None
            | ExprKind::Error => {}
        }
    }

    fn arguments(&mut self, args: &[Arg]) {
        for arg in args {
            self.expression(&arg.value);
        }
    }

    /// The arity of a direct call of a global user function or a builtin (not shadowed).
    fn call(&mut self, callee: &Expr, args: &[Arg], span: Span) {
        let ExprKind::Name(name) = &callee.kind else {
            return;
        };
        let problems = match self.resolve(&name.name) {
            Some(Definition::Source {
                kind: DefinitionKind::Function,
                ..
            }) => match self.globals.get(&*name.name) {
                Some(Global::Function(signature)) => arity::user(signature, args, span),
                _ => Vec::new(),
            },
            Some(Definition::Builtin(builtin)) => match crate::eval::builtin_function(&builtin) {
                Some(def) => arity::builtin(def, args, None, span),
                None => Vec::new(),
            },
            _ => Vec::new(),
        };
        self.diagnostics.extend(problems);
    }

    /// `receiver.name(args)`: a module member's call, or a tensor method's.
    fn method(&mut self, receiver: &Expr, name: &str, name_span: Span, args: &[Arg], span: Span) {
        let module = match &receiver.kind {
            ExprKind::Name(alias) => matches!(
                self.resolve(&alias.name),
                Some(Definition::Source {
                    kind: DefinitionKind::Module,
                    ..
                })
            ),
            _ => false,
        };
        if module {
            if let Some(Global::Function(signature)) = self.member(receiver, name, name_span) {
                let problems = arity::user(&signature, args, span);
                self.diagnostics.extend(problems);
            }
            return;
        }
        if let Some(def) = crate::eval::builtin_method(name) {
            self.refer(name_span, Definition::Method(name.to_string()));
            let problems = arity::builtin(def, args, Some(receiver.span), span);
            self.diagnostics.extend(problems);
        }
    }

    /// The members of the module a receiver names (a global `use` not shadowed by a local).
    fn module_of<'e>(&self, receiver: &'e Expr) -> Option<(&'e str, Rc<Members>)> {
        let ExprKind::Name(alias) = &receiver.kind else {
            return None;
        };
        if self.local(&alias.name).is_some() {
            return None;
        }
        match self.globals.get(&*alias.name) {
            Some(Global::Module {
                members: Some(members),
                ..
            }) => Some((&alias.name, members.clone())),
            _ => None,
        }
    }

    /// A member of a module reached through a global alias; unknown members are reported.
    fn member(&mut self, receiver: &Expr, name: &str, span: Span) -> Option<Global> {
        let (alias, members) = self.module_of(receiver)?;
        match members.get(name) {
            Some(member) => {
                let member = member.clone();
                self.refer(span, member.definition());
                Some(member)
            }
            None => {
                let candidates: Vec<String> = members.keys().cloned().collect();
                let mut diagnostic = Diagnostic::error(
                    Code::NameError,
                    span,
                    format!("module `{alias}` has no member `{name}`"),
                );
                if let Some(close) = crate::eval::suggest(name, candidates) {
                    diagnostic = diagnostic.with_help(format!("did you mean `{close}`?"));
                }
                self.diagnostics.push(diagnostic);
                None
            }
        }
    }

    fn unknown(&mut self, name: &str, span: Span) {
        let mut candidates: Vec<String> = self.globals.keys().cloned().collect();
        for scope in &self.scopes {
            candidates.extend(scope.names.keys().cloned());
        }
        let mut diagnostic =
            Diagnostic::error(Code::NameError, span, format!("`{name}` is not defined"));
        if let Some(help) = crate::syntax::hints::name(name) {
            diagnostic = diagnostic.with_help(help);
        } else if let Some(close) = crate::eval::suggest(name, candidates) {
            diagnostic = diagnostic.with_help(format!("did you mean `{close}`?"));
        }
        self.diagnostics.push(diagnostic);
    }
}
