//! The `symbols:` section: declarations are read first (so the body can name them), created
//! with every value possible, and given their printed ranges, size-like marks and
//! replacements only after every expression of the graph is built. Built earlier, `u0 >= 0`
//! with `u0` in `[0, inf]` would fold to `true`, which the printed graph did not do.

use super::cursor::Cursor;
use super::expr::{Builder, Names};
use super::{Line, ParseError, node};
use crate::graph::ir::{Graph, InputSource};
use crate::source::Span;
use crate::sym::{ExprId, NEG_INF, Origin, POS_INF, Range, ShapeEnv, SymbolId};

/// One line of a `symbols:` section.
pub struct Declaration<'a> {
    line: Line<'a>,
    name: &'a str,
    backed: bool,
    number: u32,
    /// The source name of a backed symbol, or the origin of an unbacked one.
    label: &'a str,
    sources: Vec<InputSource>,
    range: Range,
    size_like: bool,
    /// The replacement's text and column.
    replacement: Option<(&'a str, usize)>,
}

/// `u0 = item() at demo.tsl:3:13, range [0, inf], size-like, replaced by s0`.
pub fn read(line: Line<'_>) -> Result<Declaration<'_>, ParseError> {
    let bad = |column: usize, message: &str| line.error(column, message);
    let (name, rest) = line
        .text
        .split_once(" = ")
        .ok_or_else(|| bad(line.column, "expected `NAME = …, range [LO, HI]`"))?;
    let (backed, number) =
        symbol_name(name).ok_or_else(|| bad(line.column, "expected s0 or u0"))?;
    let offset = |part: &str| line.column_of(part);
    let (description, after) = rest
        .split_once(", range [")
        .ok_or_else(|| bad(offset(rest), "expected `, range [LO, HI]`"))?;
    let (range, flags) = after
        .split_once(']')
        .ok_or_else(|| bad(offset(after), "expected `]`"))?;
    let range = read_range(range).ok_or_else(|| bad(offset(after), "expected `LO, HI`"))?;
    let (label, sources) = if backed {
        match description.split_once(" from @") {
            Some((label, places)) => (label, read_sources(places, line, offset(places))?),
            None => (description, Vec::new()),
        }
    } else {
        (strip_location(description), Vec::new())
    };
    let mut declaration = Declaration {
        line,
        name,
        backed,
        number,
        label,
        sources,
        range,
        size_like: false,
        replacement: None,
    };
    read_flags(&mut declaration, flags, offset(flags))?;
    Ok(declaration)
}

fn symbol_name(name: &str) -> Option<(bool, u32)> {
    let backed = match name.chars().next()? {
        's' => true,
        'u' => false,
        _ => return None,
    };
    let digits = &name[1..];
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let number: u32 = digits.parse().ok()?;
    // Term order packs the number into 31 bits.
    (number < 1 << 31).then_some((backed, number))
}

fn read_range(text: &str) -> Option<Range> {
    let (lo, hi) = text.split_once(", ")?;
    let end = |text: &str| match text {
        "-inf" => Some(NEG_INF),
        "inf" => Some(POS_INF),
        text => text.parse().ok(),
    };
    Some(Range::new(end(lo)?, end(hi)?))
}

/// `item() at demo.tsl:3:13` without its location, which the printer adds from spans.
fn strip_location(origin: &str) -> &str {
    match origin.rsplit_once(" at ") {
        Some((operation, location)) if location.contains(':') && !location.contains(' ') => {
            operation
        }
        _ => origin,
    }
}

/// `0.size(1), @1` after the first `@`.
fn read_sources(text: &str, line: Line, column: usize) -> Result<Vec<InputSource>, ParseError> {
    let mut cursor = Cursor::new(text, line.number, column)?;
    let mut sources = Vec::new();
    loop {
        let path = node::path(&mut cursor)?;
        if cursor.eat(".") {
            cursor.expect_word("size")?;
            cursor.expect("(")?;
            let dim = cursor.index()?;
            cursor.expect(")")?;
            sources.push(InputSource::TensorDim { path, dim });
        } else {
            sources.push(InputSource::Int { path });
        }
        if cursor.at_end() {
            return Ok(sources);
        }
        cursor.expect(",")?;
        cursor.expect("@")?;
    }
}

fn read_flags<'a>(
    declaration: &mut Declaration<'a>,
    mut flags: &'a str,
    mut column: usize,
) -> Result<(), ParseError> {
    while !flags.is_empty() {
        let Some(flag) = flags.strip_prefix(", ") else {
            return Err(declaration.line.error(column, "expected `, `"));
        };
        if let Some(replacement) = flag.strip_prefix("replaced by ") {
            declaration.replacement = Some((replacement, column + 14));
            return Ok(());
        }
        let Some(rest) = flag.strip_prefix("size-like") else {
            return Err(declaration
                .line
                .error(column + 2, "expected `size-like` or `replaced by`"));
        };
        declaration.size_like = true;
        column += flags.len() - rest.len();
        flags = rest;
    }
    Ok(())
}

/// Creates the declared symbols in `env` under their printed names.
pub fn declare(
    declarations: &[Declaration],
    env: &mut ShapeEnv,
    names: &mut Names,
) -> Result<(), ParseError> {
    for declaration in declarations {
        if names.contains_key(declaration.name) {
            let message = format!("{} is declared twice", declaration.name);
            return Err(declaration.line.error(declaration.line.column, &message));
        }
        env.number_next_symbol(declaration.backed, declaration.number);
        let expr = if declaration.backed {
            env.backed_symbol(0, declaration.label, Range::ALL)
        } else {
            let origin = Origin {
                operation: declaration.label.to_string(),
                span: Span::default(),
            };
            env.unbacked_symbol(origin, Range::ALL)
        };
        let symbol = env.as_symbol(expr).unwrap_or(SymbolId(0));
        names.insert(declaration.name.to_string(), symbol);
    }
    env.take_events();
    Ok(())
}

/// Gives the declared symbols their printed facts, records `guards`, and returns where the
/// backed symbols are read, in argument order.
pub fn restore(
    declarations: &[Declaration],
    graph: &mut Graph,
    names: &Names,
    guards: &[ExprId],
) -> Result<(), ParseError> {
    let mut replacements = Vec::new();
    for declaration in declarations {
        if let Some((text, column)) = declaration.replacement {
            let mut cursor = Cursor::new(text, declaration.line.number, column)?;
            let expr = Builder::new(&mut graph.env, names).expr(&mut cursor)?;
            cursor.finish()?;
            replacements.push((declaration, names[declaration.name], expr));
        }
    }
    let env = &mut graph.env;
    set_ranges(declarations, env, names);
    for (declaration, symbol, expr) in replacements {
        if !env.restore_replacement(symbol, expr) {
            let line = declaration.line;
            return Err(line.error(line.column, "this replacement cannot be restored"));
        }
    }
    for guard in guards {
        env.restore_guard(*guard, Span::default());
    }
    set_ranges(declarations, env, names);
    env.take_events();
    let mut backed: Vec<(SymbolId, InputSource)> = declarations
        .iter()
        .flat_map(|declaration| {
            let symbol = names[declaration.name];
            declaration
                .sources
                .iter()
                .map(move |source| (symbol, source.clone()))
        })
        .collect();
    backed.sort_by(|(_, a), (_, b)| argument_order(a).cmp(&argument_order(b)));
    graph.backed = backed;
    Ok(())
}

fn set_ranges(declarations: &[Declaration], env: &mut ShapeEnv, names: &Names) {
    for declaration in declarations {
        let symbol = names[declaration.name];
        env.restore_range(symbol, declaration.range);
        if declaration.size_like {
            env.mark_size_like(symbol);
        }
    }
}

/// Tracing reads arguments in order, and the sizes of a tensor in order.
fn argument_order(source: &InputSource) -> (&[usize], usize) {
    match source {
        InputSource::TensorDim { path, dim } => (path, *dim),
        InputSource::Int { path } => (path, 0),
    }
}
