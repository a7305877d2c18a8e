//! Reading the graph text that `graph::print` writes back into a [`Graph`], for filetests
//! and tools: `parse_graph(&print_graph(&graph, None))` is the graph again.
//!
//! The reader goes line by line. The symbol declarations are read first (after the closing
//! `}` for the graph, after `return` for a branch) so that the body can use them; the body
//! then builds every expression with the environment's own constructors, and only then do
//! the symbols get their printed ranges, size-like marks and replacements, and the guards
//! are recorded (see `symbols`). Lines starting with `;` are comments, so a filetest can be
//! read as it is.
//!
//! What the text does not hold comes back empty or default: spans and call traces (a
//! location printed after `at` is skipped), the hints of backed symbols, the facts a trace
//! learned beyond ranges and replacements, the guards and ranges of a branch's copy of its
//! parent's symbols, and the dtype of a `full` (taken from its output). Tests compare graphs
//! with spans and traces erased. Any input gives a graph or a [`ParseError`] with its line
//! and column; nothing panics. A parsed graph is not verified: call `graph::verify`.

mod cursor;
mod expr;
mod lexer;
mod node;
mod op;
mod symbols;
mod value;

use cursor::Cursor;
use expr::{Builder, Names};

use super::ir::{Graph, Node, NodeKind};
use crate::sym::{ExprId, ShapeEnv};

/// Why a text is not a graph, and where (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// One non-blank, non-comment line, without its indentation.
#[derive(Clone, Copy, Debug)]
pub struct Line<'a> {
    pub number: usize,
    /// The column of `text`'s first character.
    pub column: usize,
    pub text: &'a str,
}

impl Line<'_> {
    /// The column where `part`, a piece of this line's text, starts.
    fn column_of(&self, part: &str) -> usize {
        let start = (part.as_ptr() as usize).saturating_sub(self.text.as_ptr() as usize);
        let before = self.text.get(..start).unwrap_or_default();
        self.column + before.chars().count()
    }

    fn error(&self, column: usize, message: &str) -> ParseError {
        ParseError {
            line: self.number,
            column,
            message: message.to_string(),
        }
    }
}

fn lines(text: &str) -> Vec<Line<'_>> {
    text.split('\n')
        .enumerate()
        .filter_map(|(index, raw)| {
            let text = raw.trim();
            let indent = raw.chars().take_while(|c| c.is_whitespace()).count();
            (!text.is_empty() && !text.starts_with(';')).then_some(Line {
                number: index + 1,
                column: indent + 1,
                text,
            })
        })
        .collect()
}

/// The graph that `text` prints.
pub fn parse_graph(text: &str) -> Result<Graph, ParseError> {
    let lines = lines(text);
    let Some(header) = lines.first() else {
        return Err(ParseError {
            line: 1,
            column: 1,
            message: "expected `graph NAME {`".to_string(),
        });
    };
    let name = header
        .text
        .strip_prefix("graph ")
        .and_then(|rest| rest.strip_suffix(" {"))
        .filter(|name| !name.is_empty() && !name.contains(' '))
        .ok_or_else(|| header.error(header.column, "expected `graph NAME {`"))?;
    let close = block_end(&lines, 0)?;
    let sections = Sections::read(&lines[close + 1..])?;
    let mut graph = Graph::new(name, ShapeEnv::new());
    let mut names = Names::new();
    let declarations = read_declarations(&sections.symbols)?;
    symbols::declare(&declarations, &mut graph.env, &mut names)?;
    read_body(&lines[1..close], lines[close], &mut graph, &names)?;
    let guards = read_guards(&sections.guards, &mut graph.env, &names)?;
    symbols::restore(&declarations, &mut graph, &names, &guards)?;
    graph.constants = constant_count(&graph);
    if let Some((line, count)) = sections.asserts
        && count != graph.assert_count()
    {
        let message = format!("the graph holds {} asserts", graph.assert_count());
        return Err(line.error(line.column, &message));
    }
    Ok(graph)
}

/// The line closing the block that `lines[open]` opens.
fn block_end(lines: &[Line], open: usize) -> Result<usize, ParseError> {
    let mut depth = 0usize;
    for (index, line) in lines.iter().enumerate().skip(open) {
        if line.text.ends_with('{') {
            depth += 1;
        } else if line.text == "}" {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return Ok(index);
            }
        }
    }
    let line = lines[open];
    Err(line.error(line.column, "this `{` is never closed"))
}

fn read_declarations<'a>(lines: &[Line<'a>]) -> Result<Vec<symbols::Declaration<'a>>, ParseError> {
    lines.iter().map(|line| symbols::read(*line)).collect()
}

/// Nodes, then `return`; `end` is the line after them, for errors.
fn read_body(
    lines: &[Line],
    end: Line,
    graph: &mut Graph,
    names: &Names,
) -> Result<(), ParseError> {
    let mut index = 0;
    while let Some(line) = lines.get(index) {
        if let Some(returned) = line.text.strip_prefix("return ") {
            let column = line.column + 7;
            let mut cursor = Cursor::new(returned, line.number, column)?;
            let Graph { env, nodes, .. } = graph;
            graph.output = value::output(&mut cursor, &mut Builder::new(env, names), nodes)?;
            cursor.finish()?;
            return match lines.get(index + 1) {
                None => Ok(()),
                Some(extra) => Err(extra.error(extra.column, "nothing may follow `return`")),
            };
        }
        if !line.text.starts_with('%') {
            return Err(line.error(line.column, "expected a node or `return`"));
        }
        let mut node = node::node(line, graph, names)?;
        index = read_nested(&mut node, lines, index + 1, graph, names, *line)?;
        graph.nodes.push(node);
    }
    Err(end.error(end.column, "expected `return` before this line"))
}

/// What a node holds underneath its line (the branches of a `cond`), from `lines[next]`;
/// returns the index after it. An op with a body would read it here, one arm more.
fn read_nested(
    node: &mut Node,
    lines: &[Line],
    mut next: usize,
    graph: &Graph,
    names: &Names,
    line: Line,
) -> Result<usize, ParseError> {
    match &mut node.kind {
        NodeKind::Cond {
            then_branch,
            else_branch,
        } => {
            for (word, branch) in [("then", then_branch), ("else", else_branch)] {
                let (read, after) = read_branch(word, lines, next, graph, names, line)?;
                **branch = read;
                next = after;
            }
        }
        NodeKind::Input { .. }
        | NodeKind::Constant { .. }
        | NodeKind::Op(_)
        | NodeKind::Item
        | NodeKind::Assert { .. }
        | NodeKind::DeviceAssert { .. }
        | NodeKind::Print { .. } => {}
    }
    Ok(next)
}

/// The branch `word { … }` starting at `lines[open]`, and the index after it.
fn read_branch(
    word: &str,
    lines: &[Line],
    open: usize,
    parent: &Graph,
    names: &Names,
    node: Line,
) -> Result<(Graph, usize), ParseError> {
    let header = format!("{word} {{");
    if lines.get(open).is_none_or(|line| line.text != header) {
        let line = lines.get(open).copied().unwrap_or(node);
        return Err(line.error(line.column, &format!("expected `{header}`")));
    }
    let close = block_end(lines, open)?;
    let inner = &lines[open + 1..close];
    let split = inner
        .iter()
        .position(|line| line.text == "symbols:")
        .unwrap_or(inner.len());
    let mut names = names.clone();
    let mut graph = Graph::new(word, parent.env.clone());
    let declarations = read_declarations(inner.get(split + 1..).unwrap_or_default())?;
    symbols::declare(&declarations, &mut graph.env, &mut names)?;
    read_body(
        &inner[..split],
        inner.get(split).copied().unwrap_or(lines[close]),
        &mut graph,
        &names,
    )?;
    symbols::restore(&declarations, &mut graph, &names, &[])?;
    Ok((graph, close + 1))
}

fn read_guards(
    lines: &[Line],
    env: &mut ShapeEnv,
    names: &Names,
) -> Result<Vec<ExprId>, ParseError> {
    let mut guards = Vec::new();
    for line in lines {
        // The printer adds `  (at file:line:column)` when it has the sources.
        let text = line
            .text
            .split_once("  (at ")
            .map_or(line.text, |(cond, _)| cond);
        let mut cursor = Cursor::new(text, line.number, line.column)?;
        guards.push(Builder::new(env, names).condition(&mut cursor)?);
        cursor.finish()?;
    }
    Ok(guards)
}

/// How many constants the graph and its branches refer to (they share one list).
fn constant_count(graph: &Graph) -> usize {
    graph
        .nodes
        .iter()
        .map(|node| match &node.kind {
            NodeKind::Constant { index } => index + 1,
            NodeKind::Cond {
                then_branch,
                else_branch,
            } => constant_count(then_branch).max(constant_count(else_branch)),
            NodeKind::Input { .. }
            | NodeKind::Op(_)
            | NodeKind::Item
            | NodeKind::Assert { .. }
            | NodeKind::DeviceAssert { .. }
            | NodeKind::Print { .. } => 0,
        })
        .max()
        .unwrap_or(0)
}

/// The sections after the graph's closing `}`.
#[derive(Default)]
struct Sections<'a> {
    symbols: Vec<Line<'a>>,
    guards: Vec<Line<'a>>,
    asserts: Option<(Line<'a>, usize)>,
}

impl<'a> Sections<'a> {
    fn read(lines: &[Line<'a>]) -> Result<Sections<'a>, ParseError> {
        let mut sections = Sections::default();
        let mut current: Option<&mut Vec<Line<'a>>> = None;
        for line in lines {
            if line.column > 1 {
                match current.as_deref_mut() {
                    Some(section) => section.push(*line),
                    None => return Err(line.error(line.column, "unexpected indented line")),
                }
                continue;
            }
            current = None;
            match line.text {
                "symbols:" => current = Some(&mut sections.symbols),
                "guards:" => current = Some(&mut sections.guards),
                "guards: none" => {}
                text => {
                    let count = text
                        .strip_prefix("asserts: ")
                        .and_then(|count| count.parse().ok())
                        .ok_or_else(|| {
                            line.error(
                                line.column,
                                "expected `symbols:`, `guards:` or `asserts: N`",
                            )
                        })?;
                    sections.asserts = Some((*line, count));
                }
            }
        }
        Ok(sections)
    }
}
