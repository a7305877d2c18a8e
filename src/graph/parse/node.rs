//! One node line: `%N = kind(…) : types -> binds`.

use super::cursor::Cursor;
use super::expr::{Builder, Names};
use super::lexer::Token;
use super::value::{self, Item};
use super::{Line, ParseError, op};
use crate::diag::Code;
use crate::graph::ir::{Arg, ArgumentPath, BindSource, Graph, Node, NodeKind};
use crate::graph::shape::{Dim, Meta};
use crate::source::Span;
use crate::sym::SymbolId;

/// The node on `line`, which must be the next node of `graph`. A `cond` comes back with
/// empty branches for the caller to fill.
pub fn node(line: &Line, graph: &mut Graph, names: &Names) -> Result<Node, ParseError> {
    let Some((head, body)) = line.text.split_once(" = ") else {
        return Err(line.error(line.column, "expected `%N = …`"));
    };
    let expected = format!("%{}", graph.nodes.len());
    if head != expected {
        return Err(line.error(line.column, &format!("expected node {expected} here")));
    }
    let column = line.column + head.chars().count() + 3;
    if let Some(rest) = body.strip_prefix("input ") {
        return input(line, rest, column + 6, graph, names);
    }
    let mut cursor = Cursor::new(body, line.number, column)?;
    let word = cursor.ident()?;
    let Graph { env, nodes, .. } = graph;
    let mut builder = Builder::new(env, names);
    let (kind, args, outputs) = match word.as_str() {
        "constant" => constant(&mut cursor, &mut builder)?,
        "item" => item(&mut cursor, nodes)?,
        "assert" => assert(&mut cursor, &mut builder, nodes)?,
        "device_assert" => device_assert(&mut cursor, &mut builder, nodes)?,
        "print" => {
            let (raw, at) = value::string(&mut cursor)?;
            let line = value::template(&raw, at, &cursor, &mut builder, nodes)?;
            (NodeKind::Print { line }, Vec::new(), Vec::new())
        }
        "cond" => cond(&mut cursor, &mut builder, nodes)?,
        name => operation(&mut cursor, name, column, &mut builder, nodes)?,
    };
    let binds = binds(&mut cursor, names, &outputs, matches!(kind, NodeKind::Item))?;
    cursor.finish()?;
    Ok(Node {
        kind,
        args,
        outputs,
        binds,
        span: Span::default(),
        trace: Vec::new(),
    })
}

type Parts = (NodeKind, Vec<Arg>, Vec<Meta>);

/// `input x @0 : f32[s0]`; the name runs up to ` @`.
fn input(
    line: &Line,
    rest: &str,
    column: usize,
    graph: &mut Graph,
    names: &Names,
) -> Result<Node, ParseError> {
    let Some((name, tail)) = rest.split_once(" @") else {
        return Err(line.error(column, "expected `input NAME @ARGUMENT : TYPE`"));
    };
    let mut cursor = Cursor::new(tail, line.number, column + name.chars().count() + 2)?;
    let path = path(&mut cursor)?;
    cursor.expect(":")?;
    let meta = value::meta(&mut cursor, &mut Builder::new(&mut graph.env, names))?;
    let outputs = vec![meta];
    let binds = binds(&mut cursor, names, &outputs, false)?;
    cursor.finish()?;
    Ok(Node {
        kind: NodeKind::Input {
            path,
            name: name.to_string(),
        },
        args: Vec::new(),
        outputs,
        binds,
        span: Span::default(),
        trace: Vec::new(),
    })
}

/// `0[1][2]` after an `@`.
pub fn path(cursor: &mut Cursor) -> Result<ArgumentPath, ParseError> {
    let mut path = vec![cursor.index()?];
    while cursor.eat("[") {
        path.push(cursor.index()?);
        cursor.expect("]")?;
    }
    Ok(path)
}

fn constant(cursor: &mut Cursor, builder: &mut Builder) -> Result<Parts, ParseError> {
    cursor.expect("#")?;
    let index = cursor.index()?;
    cursor.expect(":")?;
    let outputs = value::types(cursor, builder)?;
    Ok((NodeKind::Constant { index }, Vec::new(), outputs))
}

fn item(cursor: &mut Cursor, nodes: &[Node]) -> Result<Parts, ParseError> {
    cursor.expect("(")?;
    let tensor = value::tensor(cursor, nodes)?;
    cursor.expect(")")?;
    cursor.expect(":")?;
    let dtype = value::dtype(cursor)?;
    Ok((
        NodeKind::Item,
        vec![Arg::Tensor(tensor)],
        vec![Meta::scalar(dtype)],
    ))
}

fn assert(cursor: &mut Cursor, builder: &mut Builder, nodes: &[Node]) -> Result<Parts, ParseError> {
    let cond = builder.condition(cursor)?;
    cursor.expect(",")?;
    let code = assert_code(cursor, Code::CheckFailed)?;
    let (raw, at) = value::string(cursor)?;
    let message = value::template(&raw, at, cursor, builder, nodes)?;
    Ok((
        NodeKind::Assert {
            cond,
            message,
            code,
        },
        Vec::new(),
        Vec::new(),
    ))
}

/// The diagnostic code an assert fails with, written before its message (`shape-error
/// "…"`); the default (a check's `check-failed`, a device check's `device-check-failed`) is
/// not written.
fn assert_code(cursor: &mut Cursor, default: Code) -> Result<Code, ParseError> {
    if !matches!(cursor.peek(), Some(Token::Ident(_))) {
        return Ok(default);
    }
    let mut name = cursor.ident()?;
    while cursor.eat("-") {
        name.push('-');
        name.push_str(&cursor.ident()?);
    }
    Code::from_name(&name).ok_or_else(|| cursor.error(format!("unknown diagnostic code `{name}`")))
}

fn device_assert(
    cursor: &mut Cursor,
    builder: &mut Builder,
    nodes: &[Node],
) -> Result<Parts, ParseError> {
    let tensor = value::tensor(cursor, nodes)?;
    cursor.expect(",")?;
    let code = assert_code(cursor, Code::DeviceCheckFailed)?;
    let (raw, at) = value::string(cursor)?;
    let message = value::template(&raw, at, cursor, builder, nodes)?;
    let mut args = vec![Arg::Tensor(tensor)];
    let located = if cursor.eat(",") {
        cursor.expect_word("located")?;
        let op = match comparison(cursor) {
            Some(op) => {
                cursor.expect("(")?;
                args.extend(cursor.list(")", |cursor| value::arg(cursor, builder, nodes))?);
                Some(op)
            }
            None => {
                args.push(value::arg(cursor, builder, nodes)?);
                None
            }
        };
        cursor.expect_word("as")?;
        cursor.expect("[")?;
        let names = cursor.list("]", |cursor| {
            let (raw, at) = value::string(cursor)?;
            value::plain(&raw, at, cursor)
        })?;
        Some(crate::graph::ir::Located { op, names })
    } else {
        None
    };
    let kind = NodeKind::DeviceAssert {
        message,
        code,
        located,
    };
    Ok((kind, args, Vec::new()))
}

/// A comparison's name followed by `(`, consumed.
fn comparison(cursor: &mut Cursor) -> Option<crate::graph::op::BinaryOp> {
    use crate::graph::op::BinaryOp;
    let ops = [
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
    ];
    let op = ops.into_iter().find(|op| cursor.is_word(op.name()))?;
    cursor.eat_word(op.name());
    Some(op)
}

fn cond(cursor: &mut Cursor, builder: &mut Builder, nodes: &[Node]) -> Result<Parts, ParseError> {
    cursor.expect("(")?;
    let args = cursor.list(")", |cursor| value::arg(cursor, builder, nodes))?;
    cursor.expect(":")?;
    let outputs = value::types(cursor, builder)?;
    let empty = || Box::new(Graph::new(String::new(), crate::sym::ShapeEnv::new()));
    let kind = NodeKind::Cond {
        then_branch: empty(),
        else_branch: empty(),
    };
    Ok((kind, args, outputs))
}

fn operation(
    cursor: &mut Cursor,
    name: &str,
    column: usize,
    builder: &mut Builder,
    nodes: &[Node],
) -> Result<Parts, ParseError> {
    let Some(prototype) = op::prototype(name) else {
        return Err(value::error(
            cursor,
            column,
            &format!("unknown operation `{name}`"),
        ));
    };
    cursor.expect("(")?;
    let items: Vec<Item> = cursor.list(")", |cursor| value::item(cursor, builder, nodes))?;
    cursor.expect(":")?;
    let outputs = value::types(cursor, builder)?;
    let (op, args) = op::complete(prototype, items, &outputs, nodes)
        .map_err(|message| value::error(cursor, column, &message))?;
    Ok((NodeKind::Op(op), args, outputs))
}

/// ` -> u0 (dim 0)`, ` -> u1 (output 1, dim 0)`, or ` -> u0` for an item's element.
fn binds(
    cursor: &mut Cursor,
    names: &Names,
    outputs: &[Meta],
    item: bool,
) -> Result<Vec<(SymbolId, BindSource)>, ParseError> {
    let mut binds = Vec::new();
    while cursor.eat("->") {
        let column = cursor.column();
        let name = cursor.ident()?;
        let symbol = *names
            .get(&name)
            .ok_or_else(|| value::error(cursor, column, &format!("unknown symbol `{name}`")))?;
        let source = if cursor.eat("(") {
            bind_position(cursor, outputs)?
        } else if item {
            BindSource::Element
        } else {
            return Err(cursor.error("expected `(dim N)`: only an item binds its element"));
        };
        binds.push((symbol, source));
    }
    Ok(binds)
}

/// `output 1, dim 0)` or `dim 0)`, after the `(`.
fn bind_position(cursor: &mut Cursor, outputs: &[Meta]) -> Result<BindSource, ParseError> {
    let output = if cursor.eat_word("output") {
        let output = cursor.index()?;
        cursor.expect(",")?;
        output
    } else {
        0
    };
    cursor.expect_word("dim")?;
    let column = cursor.column();
    let dim = cursor.index()?;
    cursor.expect(")")?;
    let size = outputs.get(output).and_then(|meta| meta.shape.get(dim));
    match size {
        Some(Dim::Sym(_)) => Ok(BindSource::Dim { output, dim }),
        _ => Err(value::error(cursor, column, "no symbolic size there")),
    }
}
