//! Symbolic expressions as `sym::print` writes them, rebuilt with the environment's own
//! constructors: `or` < `and` < comparisons < `+ -` < `* // %` < unary `-` < `**` < atoms
//! (integers, `true`, `false`, symbols, `min(a, b)`, `max(a, b)`, parentheses).

use std::collections::HashMap;

use super::ParseError;
use super::cursor::Cursor;
use super::lexer::Token;
use crate::graph::shape::Dim;
use crate::sym::{Cmp, ExprId, ShapeEnv, SymError, SymbolId};

/// Symbols in scope by printed name.
pub type Names = HashMap<String, SymbolId>;

/// Deepest nesting of parentheses and calls, so no input can exhaust the stack.
const MAX_DEPTH: usize = 200;

/// What an expression reader needs: the environment to build in and the names in scope.
pub struct Builder<'a> {
    pub env: &'a mut ShapeEnv,
    pub names: &'a Names,
    depth: usize,
}

impl<'a> Builder<'a> {
    pub fn new(env: &'a mut ShapeEnv, names: &'a Names) -> Builder<'a> {
        Builder {
            env,
            names,
            depth: 0,
        }
    }

    /// A whole expression.
    pub fn expr(&mut self, cursor: &mut Cursor) -> Result<ExprId, ParseError> {
        self.nested(cursor, Builder::or)
    }

    /// Runs `read` one level deeper, refusing to go past [`MAX_DEPTH`] (for anything that
    /// nests: parentheses, calls, lists).
    pub fn nested<T>(
        &mut self,
        cursor: &mut Cursor,
        read: impl FnOnce(&mut Self, &mut Cursor) -> Result<T, ParseError>,
    ) -> Result<T, ParseError> {
        if self.depth >= MAX_DEPTH {
            return Err(cursor.error("nested too deeply"));
        }
        self.depth += 1;
        let result = read(self, cursor);
        self.depth -= 1;
        result
    }

    /// An integer expression as a size: a constant becomes `Known`.
    pub fn dim(&mut self, cursor: &mut Cursor) -> Result<Dim, ParseError> {
        let column = cursor.column();
        let expr = self.expr(cursor)?;
        if self.env.is_bool(expr) {
            return Err(at(cursor, column, "expected an integer, found a condition"));
        }
        Ok(self.env.as_int(expr).map_or(Dim::Sym(expr), Dim::Known))
    }

    /// An operand expression: an integer, or a condition (the predicate of a `cond`).
    pub fn operand(&mut self, cursor: &mut Cursor) -> Result<Dim, ParseError> {
        let expr = self.expr(cursor)?;
        Ok(self.env.as_int(expr).map_or(Dim::Sym(expr), Dim::Known))
    }

    /// A boolean expression.
    pub fn condition(&mut self, cursor: &mut Cursor) -> Result<ExprId, ParseError> {
        let column = cursor.column();
        let expr = self.expr(cursor)?;
        if self.env.is_bool(expr) {
            Ok(expr)
        } else {
            Err(at(cursor, column, "expected a condition, found an integer"))
        }
    }

    fn or(&mut self, cursor: &mut Cursor) -> Result<ExprId, ParseError> {
        let mut left = self.and(cursor)?;
        while cursor.eat_word("or") {
            let right = self.and(cursor)?;
            left = built(cursor, self.env.or(left, right))?;
        }
        Ok(left)
    }

    fn and(&mut self, cursor: &mut Cursor) -> Result<ExprId, ParseError> {
        let mut left = self.compare(cursor)?;
        while cursor.eat_word("and") {
            let right = self.compare(cursor)?;
            left = built(cursor, self.env.and(left, right))?;
        }
        Ok(left)
    }

    fn compare(&mut self, cursor: &mut Cursor) -> Result<ExprId, ParseError> {
        let left = self.sum(cursor)?;
        let relations = [
            ("==", Cmp::Eq),
            ("!=", Cmp::Ne),
            ("<=", Cmp::Le),
            (">=", Cmp::Ge),
            ("<", Cmp::Lt),
            (">", Cmp::Gt),
        ];
        for (punct, relation) in relations {
            if cursor.eat(punct) {
                let right = self.sum(cursor)?;
                return built(cursor, self.env.compare(relation, left, right));
            }
        }
        Ok(left)
    }

    fn sum(&mut self, cursor: &mut Cursor) -> Result<ExprId, ParseError> {
        let mut left = self.term(cursor)?;
        loop {
            let result = if cursor.eat("+") {
                let right = self.term(cursor)?;
                self.env.add(left, right)
            } else if cursor.eat("-") {
                let right = self.term(cursor)?;
                self.env.sub(left, right)
            } else {
                return Ok(left);
            };
            left = built(cursor, result)?;
        }
    }

    fn term(&mut self, cursor: &mut Cursor) -> Result<ExprId, ParseError> {
        let mut left = self.unary(cursor)?;
        loop {
            let result = if cursor.eat("*") {
                let right = self.unary(cursor)?;
                self.env.mul(left, right)
            } else if cursor.eat("//") {
                let right = self.unary(cursor)?;
                self.env.floor_div(left, right)
            } else if cursor.eat("%") {
                let right = self.unary(cursor)?;
                self.env.modulo(left, right)
            } else {
                return Ok(left);
            };
            left = built(cursor, result)?;
        }
    }

    fn unary(&mut self, cursor: &mut Cursor) -> Result<ExprId, ParseError> {
        let mut negations = 0;
        while cursor.eat("-") {
            negations += 1;
        }
        // `-9223372036854775808` only exists as a negative literal.
        let literal = matches!(cursor.peek(), Some(Token::Int(_)))
            && !matches!(cursor.peek_at(1), Some(Token::Punct("**")));
        let mut operand = if negations > 0 && literal {
            negations -= 1;
            self.negative_literal(cursor)?
        } else {
            self.power(cursor)?
        };
        for _ in 0..negations {
            operand = built(cursor, self.env.neg(operand))?;
        }
        Ok(operand)
    }

    fn negative_literal(&mut self, cursor: &mut Cursor) -> Result<ExprId, ParseError> {
        let column = cursor.column();
        let magnitude = cursor.integer()?;
        let value = i64::try_from(-i128::from(magnitude))
            .map_err(|_| at(cursor, column, "integer out of range"))?;
        Ok(self.env.int(value))
    }

    fn power(&mut self, cursor: &mut Cursor) -> Result<ExprId, ParseError> {
        let base = self.atom(cursor)?;
        if !cursor.eat("**") {
            return Ok(base);
        }
        let exponent = self.atom(cursor)?;
        built(cursor, self.env.pow(base, exponent))
    }

    fn atom(&mut self, cursor: &mut Cursor) -> Result<ExprId, ParseError> {
        let column = cursor.column();
        match cursor.next() {
            Some(Token::Int(value)) => {
                let value =
                    i64::try_from(value).map_err(|_| at(cursor, column, "integer out of range"))?;
                Ok(self.env.int(value))
            }
            Some(Token::Punct("(")) => {
                let inner = self.expr(cursor)?;
                cursor.expect(")")?;
                Ok(inner)
            }
            Some(Token::Ident(word)) => self.word(cursor, &word, column),
            _ => Err(at(cursor, column, "expected an expression")),
        }
    }

    fn word(
        &mut self,
        cursor: &mut Cursor,
        word: &str,
        column: usize,
    ) -> Result<ExprId, ParseError> {
        match word {
            "true" => Ok(self.env.bool(true)),
            "false" => Ok(self.env.bool(false)),
            "min" | "max" => {
                cursor.expect("(")?;
                let a = self.expr(cursor)?;
                cursor.expect(",")?;
                let b = self.expr(cursor)?;
                cursor.expect(")")?;
                let result = if word == "min" {
                    self.env.min(a, b)
                } else {
                    self.env.max(a, b)
                };
                built(cursor, result)
            }
            name => match self.names.get(name) {
                Some(symbol) => Ok(self.env.symbol_expr(*symbol)),
                None => Err(at(cursor, column, format!("unknown symbol `{name}`"))),
            },
        }
    }
}

fn at(cursor: &Cursor, column: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line: cursor.line(),
        column,
        message: message.into(),
    }
}

fn built(cursor: &Cursor, result: Result<ExprId, SymError>) -> Result<ExprId, ParseError> {
    result.map_err(|error| cursor.error(error.to_string()))
}
