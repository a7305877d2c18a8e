//! Walking a syntax tree: every statement and expression under a block, in source order, for
//! the passes that only look (error nodes in a function, names at a position, `let`s for
//! editor hints). The tree's nesting is bounded by the parser, so the walk's recursion is too.

use super::ast::{Block, Else, Expr, ExprKind, FnDef, IndexItem, Stmt, StmtKind, StrPart};

/// What a walk does at each node; each method returns whether to walk the node's children.
pub trait Visitor {
    fn stmt(&mut self, _stmt: &Stmt) -> bool {
        true
    }

    fn expr(&mut self, _expr: &Expr) -> bool {
        true
    }
}

/// Walks a function's parameter defaults, then its body.
pub fn function(visitor: &mut dyn Visitor, def: &FnDef) {
    for param in &def.params {
        if let Some(default) = &param.default {
            expr(visitor, default);
        }
    }
    block(visitor, &def.body);
}

pub fn block(visitor: &mut dyn Visitor, block: &Block) {
    for statement in &block.stmts {
        stmt(visitor, statement);
    }
}

pub fn stmt(visitor: &mut dyn Visitor, stmt: &Stmt) {
    if !visitor.stmt(stmt) {
        return;
    }
    match &stmt.kind {
        StmtKind::Let(_, value) | StmtKind::Assign(_, value) | StmtKind::Expr(value) => {
            expr(visitor, value);
        }
        StmtKind::If {
            condition,
            then,
            otherwise,
        } => {
            expr(visitor, condition);
            block(visitor, then);
            match otherwise {
                Some(Else::Block(otherwise)) => block(visitor, otherwise),
                Some(Else::If(nested)) => self::stmt(visitor, nested),
                None => {}
            }
        }
        StmtKind::For { iterable, body, .. } => {
            expr(visitor, iterable);
            block(visitor, body);
        }
        StmtKind::Return(value) => {
            if let Some(value) = value {
                expr(visitor, value);
            }
        }
        StmtKind::Check { condition, message } => {
            expr(visitor, condition);
            if let Some(message) = message {
                expr(visitor, message);
            }
        }
        StmtKind::CheckSize { value, max } => {
            expr(visitor, value);
            if let Some(max) = max {
                expr(visitor, max);
            }
        }
        StmtKind::Error => {}
    }
}

pub fn expr(visitor: &mut dyn Visitor, expr: &Expr) {
    if !visitor.expr(expr) {
        return;
    }
    match &expr.kind {
        ExprKind::Str(parts) => {
            for part in parts {
                if let StrPart::Interpolation(inner) = part {
                    self::expr(visitor, inner);
                }
            }
        }
        ExprKind::List(items) => items.iter().for_each(|item| self::expr(visitor, item)),
        ExprKind::Unary(_, operand) => self::expr(visitor, operand),
        ExprKind::Binary(_, a, b) => {
            self::expr(visitor, a);
            self::expr(visitor, b);
        }
        ExprKind::Call { callee, args } => {
            self::expr(visitor, callee);
            for arg in args {
                self::expr(visitor, &arg.value);
            }
        }
        ExprKind::Method { receiver, args, .. } => {
            self::expr(visitor, receiver);
            for arg in args {
                self::expr(visitor, &arg.value);
            }
        }
        ExprKind::Field { receiver, .. } => self::expr(visitor, receiver),
        ExprKind::Index { receiver, items } => {
            self::expr(visitor, receiver);
            for item in items {
                match item {
                    IndexItem::Expr(inner) => self::expr(visitor, inner),
                    IndexItem::Slice {
                        start, stop, step, ..
                    } => [start, stop, step]
                        .into_iter()
                        .flatten()
                        .for_each(|inner| self::expr(visitor, inner)),
                    IndexItem::Ellipsis(_) => {}
                }
            }
        }
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::None
        | ExprKind::Name(_)
        | ExprKind::Error => {}
    }
}

/// Whether a function has a statement or expression that did not parse.
pub fn has_errors(def: &FnDef) -> bool {
    struct Errors(bool);
    impl Visitor for Errors {
        fn stmt(&mut self, stmt: &Stmt) -> bool {
            self.0 |= matches!(stmt.kind, StmtKind::Error);
            !self.0
        }

        fn expr(&mut self, expr: &Expr) -> bool {
            self.0 |= matches!(expr.kind, ExprKind::Error);
            !self.0
        }
    }
    let mut errors = Errors(false);
    function(&mut errors, def);
    errors.0
}

#[cfg(test)]
mod tests {
    use super::has_errors;
    use crate::source::FileId;
    use crate::syntax::ast::Item;

    fn functions_with_errors(text: &str) -> Vec<String> {
        let parsed = crate::syntax::parse(FileId(0), text);
        parsed
            .program
            .items
            .iter()
            .filter_map(|item| match item {
                Item::Fn(def) if has_errors(def) => Some(def.name.name.to_string()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn finds_the_functions_with_unparsed_code() {
        let text = "fn good(x) {\n  return x\n}\nfn bad(x) {\n  let y = x +\n  return y\n}\n\
                    fn nested(x) {\n  if x > 0 {\n    print(3 4)\n  }\n}\n";
        assert_eq!(functions_with_errors(text), ["bad", "nested"]);
    }
}
