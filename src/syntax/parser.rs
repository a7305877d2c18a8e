//! The parser: drives the lalrpop grammar in `grammar/tsl.lalrpop` and never fails.
//!
//! [`parse`] always returns a program (with error nodes where text could not be parsed) and
//! every syntax diagnostic found; the grammar recovers at statement boundaries, so a file with
//! three broken statements reports three errors.

use std::cell::{Cell, RefCell};

use lalrpop_util::{ErrorRecovery, ParseError};

use super::ast::{
    Arg, BinaryOp, Block, DimAnn, Expr, ExprKind, Ident, MAX_NESTING, Param, Program, Stmt,
    StmtKind, StrPart, Target, TypeAnn, TypeKind, UnaryOp,
};
use super::hints;
use super::lexer::{Tok, tokenize};
use super::nesting::{self, Limited};
use crate::diag::{Code, Diagnostic};
use crate::dtype::DType;
use crate::source::{FileId, Span};

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_parens, unused_imports)]
    grammar,
    "/tsl.rs"
);

/// The outcome of parsing one file.
#[derive(Debug)]
pub struct Parsed {
    pub program: Program,
    pub diagnostics: Vec<Diagnostic>,
    /// The text ended inside an unfinished construct (an open block, bracket or string); the
    /// REPL reads another line instead of reporting.
    pub incomplete: bool,
}

/// Parses a whole file.
pub fn parse(file: FileId, text: &str) -> Parsed {
    let ctx = ParseCtx::new(file, text);
    let mut diagnostics = Vec::new();
    let tokens = tokenize(text, file, 0, &mut diagnostics);
    let unterminated_string = diagnostics
        .iter()
        .any(|diagnostic| diagnostic.message == "unterminated string");
    let limited = nesting::limit(tokens, file, text.len());
    ctx.cut_nesting(&limited);
    let result = grammar::ProgramParser::new().parse(&ctx, limited.tokens);
    let program = match result {
        Ok(program) => program,
        Err(error) => {
            ctx.report(&error, text.len());
            Program::default()
        }
    };
    let line_starts: Vec<usize> = text.match_indices('\n').map(|(at, _)| at).collect();
    let line_of = |diagnostic: &Diagnostic| {
        diagnostic
            .span
            .map(|span| line_starts.partition_point(|&newline| newline < span.start as usize))
    };
    let lexical_lines: std::collections::HashSet<usize> =
        diagnostics.iter().filter_map(line_of).collect();
    // A parse error on a line that already has a lexical error is a consequence of it.
    diagnostics.extend(ctx.errors.into_inner().into_iter().filter(|diagnostic| {
        line_of(diagnostic).is_none_or(|line| !lexical_lines.contains(&line))
    }));
    diagnostics.sort_by_key(|diagnostic| diagnostic.span.map(|span| span.start));
    limit_count(&mut diagnostics);
    let incomplete = ctx.reached_end.get() || unterminated_string;
    Parsed {
        program,
        diagnostics,
        incomplete,
    }
}

/// The most syntax errors one file reports; past it a note says how many were left out.
const MAX_REPORTED: usize = 100;

fn limit_count(diagnostics: &mut Vec<Diagnostic>) {
    if diagnostics.len() <= MAX_REPORTED {
        return;
    }
    let hidden = diagnostics.len() - MAX_REPORTED;
    diagnostics.truncate(MAX_REPORTED);
    if let Some(last) = diagnostics.last_mut() {
        last.notes.push(format!(
            "{hidden} more syntax errors in this file are not shown"
        ));
    }
}

/// State shared by the grammar's actions: the file, collected diagnostics and nesting limits.
pub struct ParseCtx<'input> {
    file: FileId,
    text: &'input str,
    errors: RefCell<Vec<Diagnostic>>,
    nesting_reported: Cell<bool>,
    reached_end: Cell<bool>,
    /// Byte ranges whose over-deep tokens were replaced: errors there are consequences.
    cuts: RefCell<Vec<(usize, usize)>>,
}

impl<'input> ParseCtx<'input> {
    fn new(file: FileId, text: &'input str) -> ParseCtx<'input> {
        ParseCtx {
            file,
            text,
            errors: RefCell::new(Vec::new()),
            nesting_reported: Cell::new(false),
            reached_end: Cell::new(false),
            cuts: RefCell::new(Vec::new()),
        }
    }

    /// Takes note of what [`nesting::limit`] cut from the tokens about to be parsed: its
    /// report is the nesting error, and errors inside the cut text are not reported.
    fn cut_nesting(&self, limited: &Limited<'_>) {
        if let Some(report) = &limited.report
            && !self.nesting_reported.replace(true)
        {
            self.errors.borrow_mut().push(report.clone());
        }
        self.cuts.borrow_mut().extend(&limited.cuts);
    }

    pub fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.file, start, end)
    }

    fn error(&self, diagnostic: Diagnostic) {
        let start = diagnostic.span.map(|span| span.start as usize);
        let in_cut = start.is_some_and(|at| {
            self.cuts
                .borrow()
                .iter()
                .any(|&(from, to)| from <= at && at < to)
        });
        if !in_cut {
            self.errors.borrow_mut().push(diagnostic);
        }
    }

    /// Builds an expression node, replacing it by an error node past [`MAX_NESTING`].
    pub fn expr(&self, kind: ExprKind, start: usize, end: usize) -> Expr {
        let expr = Expr::new(kind, self.span(start, end));
        if expr.depth > MAX_NESTING {
            let chain = match &expr.kind {
                ExprKind::Binary(_, left, _) => matches!(left.kind, ExprKind::Binary(..)),
                _ => false,
            };
            if chain {
                self.report_once(nesting::too_long_chain(expr.span));
            } else {
                self.too_deep(expr.span);
            }
            return Expr::error(expr.span);
        }
        expr
    }

    pub fn binary(&self, op: BinaryOp, a: Expr, b: Expr, start: usize, end: usize) -> Expr {
        self.expr(ExprKind::Binary(op, Box::new(a), Box::new(b)), start, end)
    }

    pub fn unary(&self, op: UnaryOp, operand: Expr, start: usize, end: usize) -> Expr {
        self.expr(ExprKind::Unary(op, Box::new(operand)), start, end)
    }

    /// A call; `receiver.name(args)` becomes a method call rather than a call of a field.
    pub fn call(&self, callee: Expr, args: Vec<Arg>, start: usize, end: usize) -> Expr {
        let kind = match callee.kind {
            ExprKind::Field { receiver, name } => ExprKind::Method {
                receiver,
                name,
                args,
            },
            kind => ExprKind::Call {
                callee: Box::new(Expr {
                    kind,
                    span: callee.span,
                    depth: callee.depth,
                }),
                args,
            },
        };
        self.expr(kind, start, end)
    }

    /// `(e)` is `e` itself, with a span that includes the parentheses. Parentheses count
    /// toward the nesting limit, as in Python's parser.
    pub fn parenthesized(&self, mut inner: Expr, start: usize, end: usize) -> Expr {
        inner.span = self.span(start, end);
        inner.depth += 1;
        if inner.depth > MAX_NESTING {
            self.too_deep(inner.span);
            return Expr::error(inner.span);
        }
        inner
    }

    pub fn stmt(&self, kind: StmtKind, start: usize, end: usize) -> Stmt {
        let stmt = Stmt::new(kind, self.span(start, end));
        if stmt.depth > MAX_NESTING {
            self.too_deep(stmt.span);
            return Stmt::new(StmtKind::Error, stmt.span);
        }
        stmt
    }

    pub fn block(&self, stmts: Vec<Stmt>, start: usize, end: usize) -> Block {
        let block = Block::new(stmts, self.span(start, end));
        if block.depth > MAX_NESTING {
            self.too_deep(block.span);
            return Block::new(Vec::new(), block.span);
        }
        block
    }

    fn too_deep(&self, span: Span) {
        self.report_once(nesting::too_deep(span));
    }

    /// Reports the first place the tree grows past [`MAX_NESTING`]; the rest follow from it.
    fn report_once(&self, diagnostic: Diagnostic) {
        if !self.nesting_reported.replace(true) {
            self.error(diagnostic);
        }
    }

    pub fn check_size(
        &self,
        value: Expr,
        max: Option<(Ident, Expr)>,
        start: usize,
        end: usize,
    ) -> Stmt {
        let max = max.map(|(name, bound)| {
            if &*name.name != "max" {
                self.error(
                    Diagnostic::error(
                        Code::SyntaxError,
                        name.span,
                        format!("`check_size` takes `max = …`, not `{} = …`", name.name),
                    )
                    .with_help("write `check_size u, max = 100`"),
                );
            }
            bound
        });
        self.stmt(StmtKind::CheckSize { value, max }, start, end)
    }

    pub fn int_literal(&self, text: &str, start: usize, end: usize) -> i64 {
        let digits: String = text.chars().filter(|c| *c != '_').collect();
        digits.parse().unwrap_or_else(|_| {
            self.error(
                Diagnostic::error(
                    Code::SyntaxError,
                    self.span(start, end),
                    "integer literal is too large",
                )
                .with_label(format!("does not fit in 64 bits (max {})", i64::MAX)),
            );
            0
        })
    }

    pub fn float_literal(&self, text: &str) -> f64 {
        let digits: String = text.chars().filter(|c| *c != '_').collect();
        digits
            .parse()
            .expect("the lexer only accepts valid float literals")
    }

    pub fn scalar_type(&self, name: Ident, start: usize, end: usize) -> TypeAnn {
        let kind = match &*name.name {
            "int" => TypeKind::Int,
            "float" => TypeKind::Float,
            "bool" => TypeKind::Bool,
            "str" => TypeKind::Str,
            "list" => TypeKind::List,
            other => match DType::from_name(other) {
                Some(dtype) => TypeKind::Tensor { dtype, dims: None },
                None => {
                    self.unknown_type(&name);
                    TypeKind::List
                }
            },
        };
        TypeAnn {
            kind,
            span: self.span(start, end),
        }
    }

    pub fn tensor_type(&self, name: Ident, dims: Vec<DimAnn>, start: usize, end: usize) -> TypeAnn {
        let dtype = DType::from_name(&name.name).unwrap_or_else(|| {
            self.unknown_type(&name);
            DType::F32
        });
        TypeAnn {
            kind: TypeKind::Tensor {
                dtype,
                dims: Some(dims),
            },
            span: self.span(start, end),
        }
    }

    /// Reports a parameter named twice in one function, as Python does: the call would bind
    /// one argument and drop the other.
    pub fn duplicate_params(&self, params: &[Param]) {
        let mut seen: std::collections::HashMap<&str, &Ident> = std::collections::HashMap::new();
        for param in params {
            if let Some(first) = seen.get(&*param.name.name) {
                self.error(
                    Diagnostic::error(
                        Code::SyntaxError,
                        param.name.span,
                        format!("duplicate parameter `{}`", param.name.name),
                    )
                    .with_secondary(first.span, "first named here")
                    .with_help("give each parameter its own name"),
                );
            } else {
                seen.insert(&param.name.name, &param.name);
            }
        }
    }

    fn unknown_type(&self, name: &Ident) {
        self.error(
            Diagnostic::error(
                Code::SyntaxError,
                name.span,
                format!("unknown type `{}`", name.name),
            )
            .with_help("types are int, float, bool, str, list, or a tensor type such as f32[n, 3]"),
        );
    }

    /// A string literal without interpolation (a `use` path).
    pub fn plain_string(&self, raw: &str, start: usize) -> String {
        match self.string(raw, start) {
            ExprKind::Str(parts) => parts
                .into_iter()
                .map(|part| match part {
                    StrPart::Text(text) => text,
                    StrPart::Interpolation(expr) => {
                        self.error(Diagnostic::error(
                            Code::SyntaxError,
                            expr.span,
                            "a module path cannot interpolate values",
                        ));
                        String::new()
                    }
                })
                .collect(),
            _ => String::new(),
        }
    }

    /// Decodes a string literal (quotes included in `raw`, starting at byte `start`): escapes
    /// and `{expr}` interpolations.
    pub fn string(&self, raw: &str, start: usize) -> ExprKind {
        let body = &raw[1..raw.len() - 1];
        let base = start + 1;
        let mut parts = Vec::new();
        let mut text = String::new();
        let mut chars = body.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        text.push(self.escape(escaped, base + at));
                    }
                }
                '{' => {
                    let Some(close) = matching_brace(body, at) else {
                        self.error(
                            Diagnostic::error(
                                Code::SyntaxError,
                                self.span(base + at, base + at + 1),
                                "unclosed `{` in string",
                            )
                            .with_help("write a literal brace as `\\{`"),
                        );
                        continue;
                    };
                    if !text.is_empty() {
                        parts.push(StrPart::Text(std::mem::take(&mut text)));
                    }
                    parts.push(StrPart::Interpolation(
                        self.interpolation(&body[at + 1..close], base + at + 1),
                    ));
                    while chars.peek().is_some_and(|(next, _)| *next <= close) {
                        chars.next();
                    }
                }
                '}' => self.error(
                    Diagnostic::error(
                        Code::SyntaxError,
                        self.span(base + at, base + at + 1),
                        "unmatched `}` in string",
                    )
                    .with_help("write a literal brace as `\\}`"),
                ),
                c => text.push(c),
            }
        }
        if !text.is_empty() || parts.is_empty() {
            parts.push(StrPart::Text(text));
        }
        ExprKind::Str(parts)
    }

    fn escape(&self, escaped: char, at: usize) -> char {
        match escaped {
            'n' => '\n',
            't' => '\t',
            '\\' | '"' | '{' | '}' => escaped,
            other => {
                self.error(
                    Diagnostic::error(
                        Code::SyntaxError,
                        self.span(at, at + 1 + other.len_utf8()),
                        format!("unknown escape `\\{other}`"),
                    )
                    .with_help("the escapes are \\n \\t \\\\ \\\" \\{ \\}"),
                );
                other
            }
        }
    }

    fn interpolation(&self, inner: &str, offset: usize) -> Expr {
        let span = self.span(offset, offset + inner.len());
        if inner.trim().is_empty() {
            self.error(
                Diagnostic::error(Code::SyntaxError, span, "empty `{}` in string")
                    .with_help("put an expression inside, or write literal braces as `\\{\\}`"),
            );
            return Expr::error(span);
        }
        let mut lex_errors = Vec::new();
        let tokens = tokenize(inner, self.file, offset, &mut lex_errors);
        self.errors.borrow_mut().extend(lex_errors);
        let limited = nesting::limit(tokens, self.file, offset + inner.len());
        self.cut_nesting(&limited);
        match grammar::ExprParser::new().parse(self, limited.tokens) {
            Ok(expr) => expr,
            Err(error) => {
                self.report(&error, offset + inner.len());
                Expr::error(span)
            }
        }
    }

    /// Reports a statement the grammar could not parse and stands an error node in for it.
    pub fn recover_stmt(
        &self,
        recovery: ErrorRecovery<usize, Tok<'input>, ()>,
        start: usize,
        end: usize,
    ) -> Stmt {
        self.report(&recovery.error, self.text.len());
        let span = self.span(start, end);
        match self.recovered_let(start, end) {
            Some(target) => Stmt::new(StmtKind::Let(target, Expr::error(span)), span),
            None => Stmt::new(StmtKind::Error, span),
        }
    }

    /// The target of a `let` whose value did not parse (`let y = x +`): the statement keeps
    /// defining its names, so the code after it is checked without a cascade of unknown names.
    fn recovered_let(&self, start: usize, end: usize) -> Option<Target> {
        let text = self.text.get(start..end)?;
        let mut tokens = logos::Logos::lexer(text)
            .spanned()
            .filter_map(|(token, range)| Some((token.ok()?, range)))
            .map(|(token, range): (Tok<'_>, _)| {
                let ident = |name: &str| Ident {
                    name: name.into(),
                    span: self.span(start + range.start, start + range.end),
                };
                match token {
                    Tok::Ident(name) => (token, Some(ident(name))),
                    _ => (token, None),
                }
            });
        if !matches!(tokens.next()?, (Tok::Let, _)) {
            return None;
        }
        let target = match tokens.next()? {
            (Tok::Ident(_), Some(name)) => Target::Name(name),
            (Tok::LBracket, _) => {
                let mut names = Vec::new();
                let mut rest = None;
                loop {
                    match tokens.next()? {
                        (Tok::Ident(_), Some(name)) => names.push(name),
                        (Tok::Ellipsis, _) => match tokens.next()? {
                            (Tok::Ident(_), name) => rest = name,
                            _ => return None,
                        },
                        (Tok::Comma, _) => {}
                        (Tok::RBracket, _) => break,
                        _ => return None,
                    }
                }
                let span = names
                    .first()
                    .map_or(self.span(start, end), |first| first.span);
                Target::List { names, rest, span }
            }
            _ => return None,
        };
        matches!(tokens.next()?, (Tok::Assign, _)).then_some(target)
    }

    fn report(&self, error: &ParseError<usize, Tok<'input>, ()>, text_end: usize) {
        let diagnostic = match error {
            ParseError::UnrecognizedEof { location, expected } => {
                self.reached_end.set(true);
                let at = (*location).min(text_end);
                Diagnostic::error(
                    Code::SyntaxError,
                    self.span(at, at),
                    "unexpected end of input",
                )
                .with_label(expected_list(expected))
            }
            ParseError::UnrecognizedToken {
                token: (start, token, end),
                expected,
            } => {
                let diagnostic = unexpected_token(self.span(*start, *end), token, expected);
                match self.python_hint(*start, token, expected) {
                    Some(help) => diagnostic.with_help(help),
                    None => diagnostic,
                }
            }
            ParseError::ExtraToken {
                token: (start, token, end),
            } => Diagnostic::error(
                Code::SyntaxError,
                self.span(*start, *end),
                format!("unexpected {}", token.describe()),
            ),
            ParseError::InvalidToken { location } => Diagnostic::error(
                Code::SyntaxError,
                self.span(*location, *location + 1),
                "invalid token",
            ),
            ParseError::User { .. } => return,
        };
        self.error(diagnostic);
    }
}

impl ParseCtx<'_> {
    /// Help for an unexpected token that a Python or PyTorch habit explains: a Python
    /// keyword (`def`, `elif`, `import`…) before it or as it, a string prefix (`f"…"`), a
    /// colon opening a block, `&&` or `||`.
    fn python_hint(&self, start: usize, token: &Tok<'_>, expected: &[String]) -> Option<String> {
        let before = self.text.get(..start).unwrap_or_default();
        let attached = before
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .next()
            .unwrap_or_default();
        let previous_word = before
            .trim_end_matches([' ', '\t'])
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .next()
            .unwrap_or_default();
        let previous_char = before.trim_end_matches([' ', '\t']).chars().last();
        let help = match token {
            Tok::Str(_) if !attached.is_empty() => hints::string_prefix(attached),
            Tok::Ident(word) if hints::keyword(word).is_some() => hints::keyword(word),
            Tok::Colon if expected.iter().any(|name| name == "\"{\"") => {
                Some("blocks are written in braces, not after a colon: `if cond { … }`")
            }
            Tok::Comma if expected.iter().any(|name| name == "\")\"") => Some(hints::TUPLE),
            Tok::Amp if previous_char == Some('&') => Some("logical and is written `and`"),
            Tok::Pipe if previous_char == Some('|') => Some("logical or is written `or`"),
            _ => hints::keyword(previous_word),
        };
        help.map(str::to_string)
    }
}

fn unexpected_token(span: Span, token: &Tok<'_>, expected: &[String]) -> Diagnostic {
    let diagnostic = Diagnostic::error(
        Code::SyntaxError,
        span,
        format!("unexpected {}", token.describe()),
    )
    .with_label(expected_list(expected));
    match token {
        Tok::Assign => diagnostic.with_help("use `==` to compare; `=` only assigns a variable"),
        Tok::Sep if expected.iter().any(|name| name == "\"}\"") => {
            diagnostic.with_help("a statement ends at the end of its line")
        }
        Tok::Sep => diagnostic.with_help(
            "a statement ends at the end of its line; to continue an expression on the next \
             line, wrap it in parentheses",
        ),
        _ => diagnostic,
    }
}

/// "expected `)` or `,`" from lalrpop's terminal names.
fn expected_list(expected: &[String]) -> String {
    let mut names: Vec<String> = expected.iter().map(|name| terminal_name(name)).collect();
    names.sort();
    names.dedup();
    match names.len() {
        0 => "unexpected here".to_string(),
        1 => format!("expected {}", names[0]),
        2..=6 => {
            let last = names.pop().unwrap_or_default();
            format!("expected {} or {last}", names.join(", "))
        }
        _ => "expected an expression or statement".to_string(),
    }
}

fn terminal_name(name: &str) -> String {
    match name {
        "IDENT" => "a name".to_string(),
        "INT" | "FLOAT" => "a number".to_string(),
        "STR" => "a string".to_string(),
        "SEP" => "end of line".to_string(),
        quoted => format!("`{}`", quoted.trim_matches('"').replace("\\\"", "\"")),
    }
}

/// The byte index of the `}` closing the `{` at `open`, skipping escaped braces.
fn matching_brace(body: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut escaped = false;
    for (at, c) in body[open..].char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + at);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::ast::Item;

    fn messages(text: &str) -> Vec<String> {
        parse(FileId(0), text)
            .diagnostics
            .iter()
            .map(|diagnostic| diagnostic.message.clone())
            .collect()
    }

    #[test]
    fn a_valid_program_has_no_diagnostics() {
        let text = r#"
use std.nn as nn
use "lib.tsl" as lib

@compile(dynamic = true)
fn head(x: f32[n], y: f32[m], k: int = 2) -> f32[?] {
    let u0 = x.sum().long().item()
    check_size u0, max = 10
    check u0 <= y.size(0), "want {u0} elements, y has {y.size(0)}"
    let [a, b, ...rest] = y.shape
    if a > 2 and not b { return y } else if a == 1 { return y[1:, ::2] }
    for [i, v] in enumerate([1, 2.5, -.5e3]) { a = a + i ** -1 }
    return y.narrow(0, 0, u0)[..., 0]
}
print(head(ones(3), arange(10).float()))
"#;
        let parsed = parse(FileId(0), text);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        assert_eq!(parsed.program.items.len(), 4);
        assert!(!parsed.incomplete);
    }

    #[test]
    fn each_broken_statement_is_reported() {
        let text = "let x = 1 +\nlet y = * 2\nprint(3 4)\nlet z = 5\n";
        assert_eq!(
            messages(text),
            [
                "unexpected end of line",
                "unexpected `*`",
                "unexpected number `4`"
            ]
        );
    }

    #[test]
    fn unfinished_input_is_incomplete() {
        for text in ["fn f() {", "let x = [1,", "if a {\n  b\n"] {
            assert!(parse(FileId(0), text).incomplete, "{text}");
        }
        assert!(!parse(FileId(0), "let x = )").incomplete);
    }

    #[test]
    fn deep_nesting_is_one_error_not_a_crash() {
        let parens = format!("let x = {}1{}", "(".repeat(100_000), ")".repeat(100_000));
        assert_eq!(messages(&parens).len(), 1);
        let unclosed = format!("let x = {}1", "(".repeat(100_000));
        assert!(!messages(&unclosed).is_empty());
        let lists = format!("let x = {}1{}", "[".repeat(5_000), "]".repeat(5_000));
        assert_eq!(
            messages(&lists),
            ["this code is nested more than 1000 levels deep"]
        );
        let sum = format!("let x = 1{}", " + 1".repeat(200_000));
        assert_eq!(
            messages(&sum),
            ["this expression chains more than 1000 operators"]
        );
        let longest = format!("let x = 1{}", " * 2 + 1".repeat(500));
        assert!(messages(&longest).is_empty());
        let ifs = format!("{}{}", "if a {".repeat(3_000), "}".repeat(3_000));
        assert_eq!(messages(&ifs).len(), 1);
    }

    #[test]
    fn interpolations_parse_with_file_offsets() {
        let text = "print(\"a {x + 1} b \\{c\\}\")";
        let parsed = parse(FileId(0), text);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let Item::Stmt(stmt) = &parsed.program.items[0] else {
            panic!("expected a statement")
        };
        let StmtKind::Expr(call) = &stmt.kind else {
            panic!("expected an expression")
        };
        let ExprKind::Call { args, .. } = &call.kind else {
            panic!("expected a call")
        };
        let ExprKind::Str(parts) = &args[0].value.kind else {
            panic!("expected a string")
        };
        let StrPart::Interpolation(inner) = &parts[1] else {
            panic!("expected an interpolation")
        };
        assert_eq!(&text[inner.span.range()], "x + 1");
        assert!(matches!(&parts[2], StrPart::Text(t) if t == " b {c}"));
    }

    #[test]
    fn string_errors_are_reported() {
        assert_eq!(messages(r#"let s = "a {b""#), ["unclosed `{` in string"]);
        assert_eq!(messages(r#"let s = "\q""#), ["unknown escape `\\q`"]);
        assert_eq!(messages(r#"let s = "{}""#), ["empty `{}` in string"]);
    }
}
