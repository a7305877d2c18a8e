//! Static name and arity checks for `tsl check`: every name used is defined where it is used
//! (locals in program order, module globals, builtins), members of used modules exist,
//! assignments target declared variables, and calls of user functions pass arguments their
//! parameters accept. Nothing runs.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::diag::{Code, Diagnostic};
use crate::source::Span;
use crate::syntax::ast::{
    Arg, Block, DimAnn, Else, Expr, ExprKind, FnDef, IndexItem, Item, Program, StmtKind, StrPart,
    Target, TypeKind,
};

/// What a global name is.
#[derive(Clone, Debug)]
pub enum Global {
    Function(Signature),
    Module(Rc<Members>),
    Variable,
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
    modules: &mut dyn FnMut(&crate::syntax::ast::UseDecl) -> Option<Rc<Members>>,
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
                if let (Some(name), Some(members)) = (use_name(decl), modules(decl)) {
                    globals.insert(name, Global::Module(members));
                }
            }
            Item::Stmt(stmt) => {
                if let StmtKind::Let(target, _) = &stmt.kind {
                    for name in target_names(target) {
                        globals.entry(name).or_insert(Global::Variable);
                    }
                }
            }
        }
    }
    globals
}

/// The name a `use` binds.
pub fn use_name(decl: &crate::syntax::ast::UseDecl) -> Option<String> {
    match (&decl.alias, &decl.target) {
        (Some(alias), _) => Some(alias.name.to_string()),
        (None, crate::syntax::ast::UseTarget::Std(path)) => {
            path.last().map(|part| part.name.to_string())
        }
        (None, crate::syntax::ast::UseTarget::File(..)) => None,
    }
}

fn target_names(target: &Target) -> Vec<String> {
    match target {
        Target::Name(name) => vec![name.name.to_string()],
        Target::List { names, rest, .. } => names
            .iter()
            .chain(rest)
            .map(|name| name.name.to_string())
            .collect(),
    }
}

/// Checks a program against its globals and the builtins.
pub fn check(
    program: &Program,
    globals: &Members,
    builtin: &dyn Fn(&str) -> bool,
) -> Vec<Diagnostic> {
    let mut resolver = Resolver {
        globals,
        builtin,
        scopes: vec![HashSet::new()],
        in_function: false,
        diagnostics: Vec::new(),
    };
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
    resolver.diagnostics
}

struct Resolver<'a> {
    globals: &'a Members,
    builtin: &'a dyn Fn(&str) -> bool,
    /// Locals in scope, innermost last; at top level the outermost holds globals defined so far.
    scopes: Vec<HashSet<String>>,
    in_function: bool,
    diagnostics: Vec<Diagnostic>,
}

impl Resolver<'_> {
    fn function(&mut self, def: &FnDef) {
        let mut locals = HashSet::new();
        for param in &def.params {
            if let Some(default) = &param.default {
                self.in_function = true;
                self.scopes = vec![HashSet::new()];
                self.expression(default);
            }
            locals.insert(param.name.name.to_string());
            if let Some(annotation) = &param.annotation
                && let TypeKind::Tensor {
                    dims: Some(dims), ..
                } = &annotation.kind
            {
                for dim in dims {
                    if let DimAnn::Named(name) = dim {
                        locals.insert(name.name.to_string());
                    }
                }
            }
        }
        self.in_function = true;
        self.scopes = vec![locals];
        self.statements(&def.body.stmts);
        self.in_function = false;
        self.scopes = vec![HashSet::new()];
    }

    fn block(&mut self, block: &Block) {
        self.scopes.push(HashSet::new());
        self.statements(&block.stmts);
        self.scopes.pop();
    }

    fn statements(&mut self, stmts: &[crate::syntax::ast::Stmt]) {
        for stmt in stmts {
            self.statement(stmt);
        }
    }

    fn statement(&mut self, stmt: &crate::syntax::ast::Stmt) {
        match &stmt.kind {
            StmtKind::Let(target, value) => {
                self.expression(value);
                self.bind(target);
            }
            StmtKind::Assign(name, value) => {
                self.expression(value);
                if !self.is_local(&name.name)
                    && (self.in_function || !self.globals.contains_key(&*name.name))
                {
                    let message = if self.in_function && self.globals.contains_key(&*name.name) {
                        format!(
                            "cannot assign to the global `{}` inside a function",
                            name.name
                        )
                    } else {
                        format!("`{}` is not defined", name.name)
                    };
                    self.diagnostics.push(
                        Diagnostic::error(Code::NameError, name.span, message)
                            .with_help(format!("declare it first: `let {} = …`", name.name)),
                    );
                }
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
                self.scopes.push(HashSet::new());
                self.bind(target);
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

    fn bind(&mut self, target: &Target) {
        let scope = self.scopes.last_mut().expect("a scope");
        scope.extend(target_names(target));
    }

    fn is_local(&self, name: &str) -> bool {
        self.scopes.iter().any(|scope| scope.contains(name))
    }

    /// Whether a name is visible: locals, then globals (at top level only those defined so
    /// far, plus functions and modules, which are bound before anything runs).
    fn visible(&self, name: &str) -> bool {
        if self.is_local(name) || (self.builtin)(name) {
            return true;
        }
        match self.globals.get(name) {
            Some(Global::Variable) => self.in_function,
            Some(_) => true,
            None => false,
        }
    }

    fn expression(&mut self, expr: &Expr) {
        match &expr.kind {
            ExprKind::Name(name) => {
                if !self.visible(&name.name) {
                    self.unknown(&name.name, name.span);
                }
            }
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
                if let Some(signature) = self.callee_signature(callee) {
                    self.arity(&signature, args, expr.span);
                }
            }
            ExprKind::Method {
                receiver,
                name,
                args,
            } => {
                self.expression(receiver);
                self.arguments(args);
                if let Some(member) = self.member(receiver, &name.name, name.span)
                    && let Global::Function(signature) = member
                {
                    self.arity(&signature, args, expr.span);
                }
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

    /// The signature of a direct call of a global user function (not shadowed by a local).
    fn callee_signature(&self, callee: &Expr) -> Option<Signature> {
        let ExprKind::Name(name) = &callee.kind else {
            return None;
        };
        if self.is_local(&name.name) {
            return None;
        }
        match self.globals.get(&*name.name) {
            Some(Global::Function(signature)) => Some(signature.clone()),
            _ => None,
        }
    }

    /// A member of a module reached through a global alias; unknown members are reported.
    fn member(&mut self, receiver: &Expr, name: &str, span: Span) -> Option<Global> {
        let ExprKind::Name(alias) = &receiver.kind else {
            return None;
        };
        if self.is_local(&alias.name) {
            return None;
        }
        let Some(Global::Module(members)) = self.globals.get(&*alias.name) else {
            return None;
        };
        match members.get(name) {
            Some(member) => Some(member.clone()),
            None => {
                let candidates: Vec<String> = members.keys().cloned().collect();
                let mut diagnostic = Diagnostic::error(
                    Code::NameError,
                    span,
                    format!("module `{}` has no member `{name}`", alias.name),
                );
                if let Some(close) = crate::eval::suggest(name, candidates) {
                    diagnostic = diagnostic.with_help(format!("did you mean `{close}`?"));
                }
                self.diagnostics.push(diagnostic);
                None
            }
        }
    }

    fn arity(&mut self, signature: &Signature, args: &[Arg], span: Span) {
        let positional = args.iter().filter(|arg| arg.name.is_none()).count();
        let params = &signature.params;
        let mut given: Vec<bool> = (0..params.len()).map(|index| index < positional).collect();
        let mut problem = None;
        if positional > params.len() {
            problem = Some(format!(
                "{}() takes {} argument{} but {positional} were given",
                signature.name,
                params.len(),
                if params.len() == 1 { "" } else { "s" }
            ));
        }
        for arg in args.iter().filter_map(|arg| arg.name.as_ref()) {
            match params.iter().position(|(name, _)| **name == *arg.name) {
                Some(index) if given[index] => {
                    problem.get_or_insert(format!(
                        "{}() got two values for `{}`",
                        signature.name, arg.name
                    ));
                }
                Some(index) => given[index] = true,
                None => {
                    problem.get_or_insert(format!(
                        "{}() has no parameter `{}`",
                        signature.name, arg.name
                    ));
                }
            }
        }
        if let Some(((missing, _), _)) = params
            .iter()
            .zip(&given)
            .find(|((_, has_default), given)| !**given && !*has_default)
        {
            problem.get_or_insert(format!(
                "{}() is missing the argument `{missing}`",
                signature.name
            ));
        }
        if let Some(message) = problem {
            let code = if message.contains("has no parameter") {
                Code::NameError
            } else {
                Code::TypeError
            };
            self.diagnostics.push(
                Diagnostic::error(code, span, message)
                    .with_label("in this call")
                    .with_secondary(signature.span, "defined here"),
            );
        }
    }

    fn unknown(&mut self, name: &str, span: Span) {
        let mut candidates: Vec<String> = self.globals.keys().cloned().collect();
        for scope in &self.scopes {
            candidates.extend(scope.iter().cloned());
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
