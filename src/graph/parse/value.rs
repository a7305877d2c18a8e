//! Values inside a node line: tensor references, host operands, types, templates, returned
//! outputs, and the generic items of an op's argument list.

use super::ParseError;
use super::cursor::Cursor;
use super::expr::Builder;
use super::lexer::Token;
use crate::dtype::DType;
use crate::graph::ir::{Arg, Node, NodeId, Output, Part, Template, ValueRef};
use crate::graph::shape::{Dim, Meta};

/// One item of an op's argument list, before the op says what it means.
#[derive(Clone, Debug)]
pub enum Item {
    Arg(Arg),
    /// `[...]`: sizes, dims, tensors or index items.
    List(Vec<Item>),
    /// `name=value`.
    Keyword(String, Box<Item>),
    /// A bare word that is not a value: a dtype.
    Word(String),
    /// `start:stop:step` inside an index list.
    Slice {
        start: Option<Dim>,
        stop: Option<Dim>,
        step: i64,
    },
    /// `none` inside an index list.
    NewAxis,
}

/// `%3` or `%3.1`, checked against the nodes read so far.
pub fn tensor(cursor: &mut Cursor, nodes: &[Node]) -> Result<ValueRef, ParseError> {
    let Some(Token::Value(node, output)) = cursor.peek().cloned() else {
        return Err(cursor.error(format!("expected a value, found {}", cursor.describe())));
    };
    let Some(defined) = nodes.get(node as usize) else {
        return Err(cursor.error(format!("%{node} is not defined before this line")));
    };
    let output = output.unwrap_or(0);
    if output as usize >= defined.outputs.len() {
        let count = defined.outputs.len();
        return Err(cursor.error(format!("%{node} has {count} outputs, not {}", output + 1)));
    }
    cursor.next();
    Ok(ValueRef {
        node: NodeId(node),
        output,
    })
}

/// An operand: a tensor, a float, a bool, or an integer expression.
pub fn arg(cursor: &mut Cursor, builder: &mut Builder, nodes: &[Node]) -> Result<Arg, ParseError> {
    if let Some(x) = float(cursor) {
        return Ok(Arg::Float(x));
    }
    match cursor.peek() {
        Some(Token::Value(..)) => Ok(Arg::Tensor(tensor(cursor, nodes)?)),
        Some(Token::Ident(word)) if word == "true" || word == "false" => {
            let truth = word == "true";
            cursor.next();
            Ok(Arg::Bool(truth))
        }
        _ => Ok(Arg::Int(builder.operand(cursor)?)),
    }
}

/// `2.0`, `-1e-5`, `inf`, `-inf`, `nan`, if the next tokens are one.
pub fn float(cursor: &mut Cursor) -> Option<f64> {
    let negative = cursor.is("-");
    let offset = usize::from(negative);
    let magnitude = match cursor.peek_at(offset) {
        Some(Token::Float(x)) => *x,
        Some(Token::Ident(word)) if word == "inf" => f64::INFINITY,
        Some(Token::Ident(word)) if word == "nan" => f64::NAN,
        _ => return None,
    };
    for _ in 0..=offset {
        cursor.next();
    }
    Some(if negative { -magnitude } else { magnitude })
}

pub fn dtype(cursor: &mut Cursor) -> Result<DType, ParseError> {
    let column = cursor.column();
    let word = cursor.ident()?;
    dtype_named(&word).ok_or_else(|| ParseError {
        line: cursor.line(),
        column,
        message: format!("unknown dtype `{word}`"),
    })
}

pub fn dtype_named(word: &str) -> Option<DType> {
    [DType::Bool, DType::I64, DType::F32]
        .into_iter()
        .find(|dtype| dtype.name() == word)
}

/// `f32[s0, 3]`.
pub fn meta(cursor: &mut Cursor, builder: &mut Builder) -> Result<Meta, ParseError> {
    let dtype = dtype(cursor)?;
    cursor.expect("[")?;
    let shape = cursor.list("]", |cursor| builder.dim(cursor))?;
    Ok(Meta::new(dtype, shape))
}

/// One type, or `(a, b)` for several (`()` for none).
pub fn types(cursor: &mut Cursor, builder: &mut Builder) -> Result<Vec<Meta>, ParseError> {
    if cursor.eat("(") {
        cursor.list(")", |cursor| meta(cursor, builder))
    } else {
        Ok(vec![meta(cursor, builder)?])
    }
}

/// A string token's raw text and column.
pub fn string(cursor: &mut Cursor) -> Result<(String, usize), ParseError> {
    let column = cursor.column();
    match cursor.next() {
        Some(Token::Str(raw)) => Ok((raw, column)),
        _ => Err(ParseError {
            line: cursor.line(),
            column,
            message: "expected a string".to_string(),
        }),
    }
}

/// A template's parts from its raw text: escapes, and `{…}` holes.
pub fn template(
    raw: &str,
    column: usize,
    cursor: &Cursor,
    builder: &mut Builder,
    nodes: &[Node],
) -> Result<Template, ParseError> {
    let chars: Vec<char> = raw.chars().collect();
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut position = 0;
    while let Some(&c) = chars.get(position) {
        let at = column + 1 + position;
        match c {
            '\\' => {
                let (escaped, length) = unescape(&chars[position + 1..])
                    .ok_or_else(|| error(cursor, at, "unknown escape"))?;
                text.push(escaped);
                position += 1 + length;
            }
            '{' => {
                let length = chars[position..]
                    .iter()
                    .position(|c| *c == '}')
                    .ok_or_else(|| error(cursor, at, "unclosed `{` in a template"))?;
                if !text.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut text)));
                }
                let hole: String = chars[position + 1..position + length].iter().collect();
                parts.push(part(&hole, cursor.line(), at + 1, builder, nodes)?);
                position += length + 1;
            }
            c => {
                text.push(c);
                position += 1;
            }
        }
    }
    if !text.is_empty() {
        parts.push(Part::Text(text));
    }
    Ok(Template(parts))
}

/// A plain string (Rust escapes, no holes), as `Output::Str` prints.
pub fn plain(raw: &str, column: usize, cursor: &Cursor) -> Result<String, ParseError> {
    let chars: Vec<char> = raw.chars().collect();
    let mut text = String::new();
    let mut position = 0;
    while let Some(&c) = chars.get(position) {
        if c == '\\' {
            let (escaped, length) = unescape(&chars[position + 1..])
                .ok_or_else(|| error(cursor, column + 1 + position, "unknown escape"))?;
            text.push(escaped);
            position += 1 + length;
        } else {
            text.push(c);
            position += 1;
        }
    }
    Ok(text)
}

/// The character an escape stands for, and how many characters after the backslash it took.
fn unescape(chars: &[char]) -> Option<(char, usize)> {
    let simple = match chars.first()? {
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        '0' => '\0',
        'u' => return unicode(chars),
        c @ ('"' | '\\' | '\'' | '{' | '}') => *c,
        _ => return None,
    };
    Some((simple, 1))
}

/// `u{1f600}`.
fn unicode(chars: &[char]) -> Option<(char, usize)> {
    if chars.get(1) != Some(&'{') {
        return None;
    }
    let close = chars.iter().position(|c| *c == '}')?;
    let digits: String = chars[2..close].iter().collect();
    let code = u32::from_str_radix(&digits, 16).ok()?;
    Some((char::from_u32(code)?, close + 1))
}

/// A hole: `{%3}`, `{scalar(%3)}`, or an expression.
fn part(
    hole: &str,
    line: usize,
    column: usize,
    builder: &mut Builder,
    nodes: &[Node],
) -> Result<Part, ParseError> {
    let mut cursor = Cursor::new(hole, line, column)?;
    let part = if cursor.eat_word("scalar") {
        cursor.expect("(")?;
        let value = tensor(&mut cursor, nodes)?;
        cursor.expect(")")?;
        Part::Scalar(value)
    } else if matches!(cursor.peek(), Some(Token::Value(..))) {
        Part::Tensor(tensor(&mut cursor, nodes)?)
    } else {
        let expr = builder.expr(&mut cursor)?;
        if builder.env.is_bool(expr) {
            Part::Bool(expr)
        } else {
            Part::Int(builder.env.as_int(expr).map_or(Dim::Sym(expr), Dim::Known))
        }
    };
    cursor.finish()?;
    Ok(part)
}

/// What `return` gives back.
pub fn output(
    cursor: &mut Cursor,
    builder: &mut Builder,
    nodes: &[Node],
) -> Result<Output, ParseError> {
    if let Some(x) = float(cursor) {
        return Ok(Output::Float(x));
    }
    match cursor.peek().cloned() {
        Some(Token::Value(..)) => Ok(Output::Tensor(tensor(cursor, nodes)?)),
        Some(Token::Str(_)) => {
            let (raw, column) = string(cursor)?;
            Ok(Output::Str(plain(&raw, column, cursor)?))
        }
        Some(Token::Punct("[")) => {
            cursor.next();
            let items = builder.nested(cursor, |builder, cursor| {
                cursor.list("]", |cursor| output(cursor, builder, nodes))
            })?;
            Ok(Output::List(items))
        }
        Some(Token::Ident(word)) => word_output(cursor, &word, builder, nodes),
        _ => expression_output(cursor, builder),
    }
}

fn word_output(
    cursor: &mut Cursor,
    word: &str,
    builder: &mut Builder,
    nodes: &[Node],
) -> Result<Output, ParseError> {
    match word {
        "none" => {
            cursor.next();
            Ok(Output::None)
        }
        "true" | "false" if !continues_expression(cursor) => {
            cursor.next();
            Ok(Output::Bool(word == "true"))
        }
        "scalar" => {
            cursor.next();
            cursor.expect("(")?;
            let value = tensor(cursor, nodes)?;
            cursor.expect(")")?;
            Ok(Output::Scalar(value))
        }
        "template" => {
            cursor.next();
            let (raw, column) = string(cursor)?;
            Ok(Output::Template(template(
                &raw, column, cursor, builder, nodes,
            )?))
        }
        _ => expression_output(cursor, builder),
    }
}

/// Whether a `true` or `false` is the start of a longer expression.
fn continues_expression(cursor: &Cursor) -> bool {
    !matches!(cursor.peek_at(1), None | Some(Token::Punct("," | "]")))
}

fn expression_output(cursor: &mut Cursor, builder: &mut Builder) -> Result<Output, ParseError> {
    let expr = builder.expr(cursor)?;
    Ok(if builder.env.is_bool(expr) {
        Output::SymBool(expr)
    } else {
        Output::Int(builder.env.as_int(expr).map_or(Dim::Sym(expr), Dim::Known))
    })
}

/// One item of an op's argument list.
pub fn item(
    cursor: &mut Cursor,
    builder: &mut Builder,
    nodes: &[Node],
) -> Result<Item, ParseError> {
    if cursor.eat("[") {
        let items = builder.nested(cursor, |builder, cursor| {
            cursor.list("]", |cursor| item(cursor, builder, nodes))
        })?;
        return Ok(Item::List(items));
    }
    if let Some(Token::Ident(word)) = cursor.peek().cloned() {
        if matches!(cursor.peek_at(1), Some(Token::Punct("="))) {
            cursor.next();
            cursor.next();
            let value = builder.nested(cursor, |builder, cursor| item(cursor, builder, nodes))?;
            return Ok(Item::Keyword(word, Box::new(value)));
        }
        if word == "none" || dtype_named(&word).is_some() {
            cursor.next();
            return Ok(if word == "none" {
                Item::NewAxis
            } else {
                Item::Word(word)
            });
        }
    }
    if cursor.is(":") {
        return slice(cursor, builder, None);
    }
    let first = arg(cursor, builder, nodes)?;
    match first {
        Arg::Int(start) if cursor.is(":") => slice(cursor, builder, Some(start)),
        first => Ok(Item::Arg(first)),
    }
}

/// The rest of `start:stop:step` from the first `:`.
fn slice(
    cursor: &mut Cursor,
    builder: &mut Builder,
    start: Option<Dim>,
) -> Result<Item, ParseError> {
    cursor.expect(":")?;
    let ends = |cursor: &Cursor| cursor.is(":") || cursor.is(",") || cursor.is("]");
    let stop = if ends(cursor) {
        None
    } else {
        Some(builder.dim(cursor)?)
    };
    let step = if cursor.eat(":") {
        let column = cursor.column();
        let value = cursor.integer()?;
        i64::try_from(value)
            .ok()
            .filter(|step| *step > 0)
            .ok_or_else(|| error(cursor, column, "a slice step is a positive integer"))?
    } else {
        1
    };
    Ok(Item::Slice { start, stop, step })
}

pub fn error(cursor: &Cursor, column: usize, message: &str) -> ParseError {
    ParseError {
        line: cursor.line(),
        column,
        message: message.to_string(),
    }
}
