//! The abstract syntax tree, with a byte span on every node.
//!
//! Nesting is bounded by the parser ([`MAX_NESTING`]), so recursive walks and drops of a tree
//! cannot overflow the stack.

use std::rc::Rc;

use crate::dtype::DType;
use crate::source::Span;

/// The deepest nesting of expressions and blocks the parser accepts.
pub const MAX_NESTING: u32 = 1000;

/// A parsed file: `use` declarations, function definitions and statements, in order.
#[derive(Debug, Default)]
pub struct Program {
    pub items: Vec<Item>,
}

#[derive(Debug)]
pub enum Item {
    Use(UseDecl),
    Fn(Rc<FnDef>),
    Stmt(Stmt),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: Rc<str>,
    pub span: Span,
}

#[derive(Debug)]
pub struct UseDecl {
    pub target: UseTarget,
    pub alias: Option<Ident>,
    pub span: Span,
}

#[derive(Debug)]
pub enum UseTarget {
    /// `use std.nn`: the dotted path.
    Std(Vec<Ident>),
    /// `use "lib/ops.tsl" as ops`: the path as written and the span of the string.
    File(String, Span),
}

#[derive(Debug)]
pub struct FnDef {
    pub name: Ident,
    pub decorators: Vec<Decorator>,
    pub params: Vec<Param>,
    pub returns: Option<TypeAnn>,
    pub body: Block,
    pub span: Span,
}

#[derive(Debug)]
pub struct Decorator {
    pub name: Ident,
    pub args: Vec<Arg>,
    pub span: Span,
}

#[derive(Debug)]
pub struct Param {
    pub name: Ident,
    pub annotation: Option<TypeAnn>,
    pub default: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TypeAnn {
    pub kind: TypeKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    Int,
    Float,
    Bool,
    Str,
    List,
    /// `f32[n, 3]`; `dims` is `None` for a bare dtype annotation such as `f32`.
    Tensor {
        dtype: DType,
        dims: Option<Vec<DimAnn>>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum DimAnn {
    Fixed(i64, Span),
    Named(Ident),
    Any(Span),
}

#[derive(Debug)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
    /// Height of this subtree (blocks and expressions), used to bound nesting.
    pub depth: u32,
}

#[derive(Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
    /// Height of this subtree (blocks and expressions), used to bound nesting.
    pub depth: u32,
}

#[derive(Debug)]
pub enum StmtKind {
    Let(Target, Expr),
    Assign(Ident, Expr),
    If {
        condition: Expr,
        then: Block,
        otherwise: Option<Else>,
    },
    For {
        target: Target,
        iterable: Expr,
        body: Block,
    },
    Return(Option<Expr>),
    Check {
        condition: Expr,
        message: Option<Expr>,
    },
    CheckSize {
        value: Expr,
        max: Option<Expr>,
    },
    Expr(Expr),
    /// A statement that failed to parse (already reported).
    Error,
}

#[derive(Debug)]
pub enum Else {
    Block(Block),
    If(Box<Stmt>),
}

/// What a `let` or `for` binds: a name, or a list pattern `[a, b, ...rest]`.
#[derive(Debug, Clone)]
pub enum Target {
    Name(Ident),
    List {
        names: Vec<Ident>,
        rest: Option<Ident>,
        span: Span,
    },
}

#[derive(Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// Height of this subtree, used to bound nesting.
    pub depth: u32,
}

#[derive(Debug)]
pub enum ExprKind {
    Int(i64),
    Float(f64),
    Str(Vec<StrPart>),
    Bool(bool),
    None,
    Name(Ident),
    List(Vec<Expr>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    Call {
        callee: Box<Expr>,
        args: Vec<Arg>,
    },
    Method {
        receiver: Box<Expr>,
        name: Ident,
        args: Vec<Arg>,
    },
    Field {
        receiver: Box<Expr>,
        name: Ident,
    },
    Index {
        receiver: Box<Expr>,
        items: Vec<IndexItem>,
    },
    /// An expression that failed to parse (already reported).
    Error,
}

#[derive(Debug)]
pub enum StrPart {
    Text(String),
    Interpolation(Expr),
}

#[derive(Debug)]
pub struct Arg {
    pub name: Option<Ident>,
    pub value: Expr,
}

#[derive(Debug)]
pub enum IndexItem {
    Expr(Expr),
    Slice {
        start: Option<Expr>,
        stop: Option<Expr>,
        step: Option<Expr>,
        span: Span,
    },
    Ellipsis(Span),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Not,
    /// `~`: logical not of a bool tensor, bitwise not of an i64 tensor (PyTorch's `~`).
    Invert,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Rem,
    Pow,
    MatMul,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    BitAnd,
    BitOr,
    And,
    Or,
}

impl BinaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::FloorDiv => "//",
            BinaryOp::Rem => "%",
            BinaryOp::Pow => "**",
            BinaryOp::MatMul => "@",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        let depth = 1 + kind.child_depth();
        Expr { kind, span, depth }
    }

    pub fn error(span: Span) -> Expr {
        Expr {
            kind: ExprKind::Error,
            span,
            depth: 1,
        }
    }
}

impl ExprKind {
    /// The height of the tallest child, for [`Expr::depth`].
    fn child_depth(&self) -> u32 {
        let args = |args: &[Arg]| args.iter().map(|arg| arg.value.depth).max().unwrap_or(0);
        match self {
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::None
            | ExprKind::Name(_)
            | ExprKind::Error => 0,
            ExprKind::Str(parts) => parts
                .iter()
                .map(|part| match part {
                    StrPart::Text(_) => 0,
                    StrPart::Interpolation(expr) => expr.depth,
                })
                .max()
                .unwrap_or(0),
            ExprKind::List(items) => items.iter().map(|item| item.depth).max().unwrap_or(0),
            ExprKind::Unary(_, operand) => operand.depth,
            ExprKind::Binary(_, left, right) => left.depth.max(right.depth),
            ExprKind::Call { callee, args: list } => callee.depth.max(args(list)),
            ExprKind::Method {
                receiver,
                args: list,
                ..
            } => receiver.depth.max(args(list)),
            ExprKind::Field { receiver, .. } => receiver.depth,
            ExprKind::Index { receiver, items } => items
                .iter()
                .map(IndexItem::depth)
                .fold(receiver.depth, u32::max),
        }
    }
}

impl IndexItem {
    fn depth(&self) -> u32 {
        match self {
            IndexItem::Expr(expr) => expr.depth,
            IndexItem::Slice {
                start, stop, step, ..
            } => [start, stop, step]
                .into_iter()
                .flatten()
                .map(|expr| expr.depth)
                .max()
                .unwrap_or(0),
            IndexItem::Ellipsis(_) => 0,
        }
    }
}

impl Block {
    pub fn new(stmts: Vec<Stmt>, span: Span) -> Block {
        let depth = 1 + stmts.iter().map(|stmt| stmt.depth).max().unwrap_or(0);
        Block { stmts, span, depth }
    }
}

impl Stmt {
    pub fn new(kind: StmtKind, span: Span) -> Stmt {
        let depth = 1 + kind.child_depth();
        Stmt { kind, span, depth }
    }
}

impl StmtKind {
    /// The height of the tallest child block or expression.
    fn child_depth(&self) -> u32 {
        let expr = |expr: &Option<Expr>| expr.as_ref().map_or(0, |expr| expr.depth);
        match self {
            StmtKind::Let(_, value) | StmtKind::Assign(_, value) | StmtKind::Expr(value) => {
                value.depth
            }
            StmtKind::If {
                condition,
                then,
                otherwise,
            } => {
                let otherwise = match otherwise {
                    Some(Else::Block(block)) => block.depth,
                    Some(Else::If(stmt)) => stmt.depth,
                    None => 0,
                };
                condition.depth.max(then.depth).max(otherwise)
            }
            StmtKind::For { iterable, body, .. } => iterable.depth.max(body.depth),
            StmtKind::Return(value) => expr(value),
            StmtKind::Check { condition, message } => condition.depth.max(expr(message)),
            StmtKind::CheckSize { value, max } => value.depth.max(expr(max)),
            StmtKind::Error => 0,
        }
    }
}

impl Target {
    pub fn span(&self) -> Span {
        match self {
            Target::Name(ident) => ident.span,
            Target::List { span, .. } => *span,
        }
    }
}
