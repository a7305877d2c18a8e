//! A cursor over the tokens of one line, with the checks every reader needs.

use super::ParseError;
use super::lexer::{Spanned, Token, tokenize};

pub struct Cursor {
    tokens: Vec<Spanned>,
    position: usize,
    line: usize,
    end: usize,
}

impl Cursor {
    /// The tokens of `text`, a piece of line `line` starting at column `column`.
    pub fn new(text: &str, line: usize, column: usize) -> Result<Cursor, ParseError> {
        let tokens = tokenize(text, column).map_err(|(message, column)| ParseError {
            line,
            column,
            message,
        })?;
        Ok(Cursor {
            tokens,
            position: 0,
            line,
            end: column + text.chars().count(),
        })
    }

    pub fn peek(&self) -> Option<&Token> {
        self.peek_at(0)
    }

    pub fn peek_at(&self, offset: usize) -> Option<&Token> {
        self.tokens.get(self.position + offset).map(|t| &t.token)
    }

    pub fn next(&mut self) -> Option<Token> {
        let token = self.peek().cloned();
        self.position += usize::from(token.is_some());
        token
    }

    /// The column of the next token, or of the end of the text.
    pub fn column(&self) -> usize {
        self.tokens
            .get(self.position)
            .map_or(self.end, |t| t.column)
    }

    pub fn line(&self) -> usize {
        self.line
    }

    pub fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError {
            line: self.line,
            column: self.column(),
            message: message.into(),
        }
    }

    pub fn at_end(&self) -> bool {
        self.position >= self.tokens.len()
    }

    pub fn finish(&self) -> Result<(), ParseError> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.error(format!("unexpected {}", self.describe())))
        }
    }

    /// The next token as a message shows it.
    pub fn describe(&self) -> String {
        match self.peek() {
            None => "end of line".to_string(),
            Some(Token::Value(node, None)) => format!("`%{node}`"),
            Some(Token::Value(node, Some(output))) => format!("`%{node}.{output}`"),
            Some(Token::Int(value)) => format!("`{value}`"),
            Some(Token::Float(value)) => format!("`{value}`"),
            Some(Token::Ident(word)) => format!("`{word}`"),
            Some(Token::Str(_)) => "a string".to_string(),
            Some(Token::Punct(punct)) => format!("`{punct}`"),
        }
    }

    pub fn is(&self, punct: &str) -> bool {
        matches!(self.peek(), Some(Token::Punct(p)) if *p == punct)
    }

    pub fn is_word(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Token::Ident(w)) if w == word)
    }

    pub fn eat(&mut self, punct: &str) -> bool {
        let found = self.is(punct);
        self.position += usize::from(found);
        found
    }

    pub fn eat_word(&mut self, word: &str) -> bool {
        let found = self.is_word(word);
        self.position += usize::from(found);
        found
    }

    pub fn expect(&mut self, punct: &str) -> Result<(), ParseError> {
        if self.eat(punct) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{punct}`, found {}", self.describe())))
        }
    }

    pub fn expect_word(&mut self, word: &str) -> Result<(), ParseError> {
        if self.eat_word(word) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{word}`, found {}", self.describe())))
        }
    }

    pub fn ident(&mut self) -> Result<String, ParseError> {
        match self.peek() {
            Some(Token::Ident(word)) => {
                let word = word.clone();
                self.position += 1;
                Ok(word)
            }
            _ => Err(self.error(format!("expected a name, found {}", self.describe()))),
        }
    }

    pub fn integer(&mut self) -> Result<u64, ParseError> {
        match self.peek() {
            Some(Token::Int(value)) => {
                let value = *value;
                self.position += 1;
                Ok(value)
            }
            _ => Err(self.error(format!("expected a number, found {}", self.describe()))),
        }
    }

    /// A small non-negative number: a dim, an index, a count.
    pub fn index(&mut self) -> Result<usize, ParseError> {
        let column = self.column();
        let value = self.integer()?;
        u32::try_from(value)
            .map(|value| value as usize)
            .map_err(|_| ParseError {
                line: self.line,
                column,
                message: format!("{value} is too large here"),
            })
    }

    /// A comma-separated list up to `close` (the opening bracket already read).
    pub fn list<T>(
        &mut self,
        close: &str,
        mut item: impl FnMut(&mut Cursor) -> Result<T, ParseError>,
    ) -> Result<Vec<T>, ParseError> {
        let mut items = Vec::new();
        if self.eat(close) {
            return Ok(items);
        }
        loop {
            items.push(item(self)?);
            if self.eat(close) {
                return Ok(items);
            }
            self.expect(",")?;
        }
    }
}
