//! Test support: an environment declared in one line and a small parser of TSL expressions,
//! so that tests are written as data.

use crate::source::Span;
use crate::sym::{ExprId, NEG_INF, Origin, POS_INF, Range, ShapeEnv, SymError};

/// An environment with named symbols.
pub struct Fixture {
    pub env: ShapeEnv,
    names: Vec<(String, ExprId)>,
}

impl Fixture {
    /// Declares symbols in order: `s0=5` (backed, hint 5, range `[2, inf]` unless given),
    /// `u0` (unbacked, range `[-inf, inf]` unless given), with an optional range suffix
    /// `:lo..hi` where either end may be omitted (`u0:0..`, `s1=3:1..8`).
    pub fn new(declarations: &str) -> Fixture {
        let mut fixture = Fixture {
            env: ShapeEnv::new(),
            names: Vec::new(),
        };
        for declaration in declarations.split_whitespace() {
            fixture.declare(declaration);
        }
        fixture
    }

    fn declare(&mut self, declaration: &str) {
        let (head, range) = match declaration.split_once(':') {
            Some((head, range)) => (head, Some(parse_range(range))),
            None => (declaration, None),
        };
        let name = head.split('=').next().unwrap_or(head);
        let expr = if let Some((name, hint)) = head.split_once('=') {
            let hint = hint.parse().expect("hint");
            let range = range.unwrap_or(Range::DYNAMIC_SIZE);
            let source = format!("{name}.size(0)");
            self.env.backed_symbol(hint, source, range)
        } else {
            let origin = Origin {
                operation: "item()".to_string(),
                span: Span::default(),
            };
            self.env
                .unbacked_symbol(origin, range.unwrap_or(Range::ALL))
        };
        assert_eq!(self.env.display(expr), name, "declare symbols in order");
        self.names.push((name.to_string(), expr));
    }

    /// Parses and builds an expression.
    pub fn parse(&mut self, text: &str) -> Result<ExprId, SymError> {
        let tokens = tokenize(text);
        let mut parser = Parser {
            tokens,
            position: 0,
            fixture: self,
        };
        let expr = parser.expression(0)?;
        assert!(
            parser.position == parser.tokens.len(),
            "trailing input in {text:?}"
        );
        Ok(expr)
    }

    /// Parses an expression that must build.
    pub fn expr(&mut self, text: &str) -> ExprId {
        self.parse(text)
            .unwrap_or_else(|error| panic!("{text:?}: {error}"))
    }

    fn lookup(&self, name: &str) -> ExprId {
        let found = self.names.iter().find(|(known, _)| known == name);
        found.map_or_else(|| panic!("undeclared symbol {name}"), |&(_, expr)| expr)
    }
}

/// `lo..hi`, either end optional, `inf`/`-inf` allowed.
pub fn parse_range(text: &str) -> Range {
    let (lo, hi) = text.split_once("..").expect("range lo..hi");
    let end = |text: &str, infinite: i64| match text {
        "" | "inf" | "-inf" => infinite,
        value => value.parse().expect("range end"),
    };
    Range::new(end(lo, NEG_INF), end(hi, POS_INF))
}

fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let characters: Vec<char> = text.chars().collect();
    let mut index = 0;
    while index < characters.len() {
        let c = characters[index];
        if c.is_whitespace() {
            index += 1;
            continue;
        }
        let start = index;
        if c.is_ascii_alphanumeric() || c == '_' {
            while index < characters.len()
                && (characters[index].is_ascii_alphanumeric() || characters[index] == '_')
            {
                index += 1;
            }
        } else {
            let pair: String = characters[index..(index + 2).min(characters.len())]
                .iter()
                .collect();
            index += if ["//", "**", "==", "!=", "<=", ">="].contains(&pair.as_str()) {
                2
            } else {
                1
            };
        }
        tokens.push(characters[start..index].iter().collect());
    }
    tokens
}

struct Parser<'a> {
    tokens: Vec<String>,
    position: usize,
    fixture: &'a mut Fixture,
}

/// Binding power of each binary operator (spec §3): or < and < comparisons < + - < * // % < **.
fn binary_power(token: &str) -> Option<u8> {
    Some(match token {
        "or" => 1,
        "and" => 2,
        "==" | "!=" | "<" | "<=" | ">" | ">=" => 4,
        "+" | "-" => 5,
        "*" | "//" | "%" => 6,
        "**" => 8,
        _ => return None,
    })
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.position).map(String::as_str)
    }

    fn next(&mut self) -> String {
        self.position += 1;
        self.tokens[self.position - 1].clone()
    }

    fn expect(&mut self, token: &str) {
        assert_eq!(self.next(), token);
    }

    fn expression(&mut self, min_power: u8) -> Result<ExprId, SymError> {
        let mut left = self.prefix()?;
        while let Some(power) = self.peek().and_then(binary_power) {
            if power < min_power {
                break;
            }
            let op = self.next();
            let next_power = if op == "**" { power } else { power + 1 };
            let right = self.expression(next_power)?;
            left = apply(&mut self.fixture.env, &op, left, right)?;
        }
        Ok(left)
    }

    fn prefix(&mut self) -> Result<ExprId, SymError> {
        let token = self.next();
        let env = &mut self.fixture.env;
        match token.as_str() {
            "(" => {
                let inner = self.expression(0)?;
                self.expect(")");
                Ok(inner)
            }
            "-" => {
                let operand = self.expression(7)?;
                self.fixture.env.neg(operand)
            }
            "not" => {
                let operand = self.expression(3)?;
                self.fixture.env.not(operand)
            }
            "true" => Ok(env.bool(true)),
            "false" => Ok(env.bool(false)),
            "min" | "max" => {
                self.expect("(");
                let a = self.expression(0)?;
                self.expect(",");
                let b = self.expression(0)?;
                self.expect(")");
                let env = &mut self.fixture.env;
                if token == "min" {
                    env.min(a, b)
                } else {
                    env.max(a, b)
                }
            }
            name if name.starts_with(|c: char| c.is_ascii_digit()) => {
                Ok(env.int(name.replace('_', "").parse().expect("integer")))
            }
            name => Ok(self.fixture.lookup(name)),
        }
    }
}

/// `a <op> b` for an operator written as in TSL (`min` and `max` as binary operators).
pub fn apply(env: &mut ShapeEnv, op: &str, a: ExprId, b: ExprId) -> Result<ExprId, SymError> {
    match op {
        "+" => env.add(a, b),
        "-" => env.sub(a, b),
        "*" => env.mul(a, b),
        "//" => env.floor_div(a, b),
        "%" => env.modulo(a, b),
        "**" => env.pow(a, b),
        "min" => env.min(a, b),
        "max" => env.max(a, b),
        "==" => env.eq(a, b),
        "!=" => env.ne(a, b),
        "<" => env.lt(a, b),
        "<=" => env.le(a, b),
        ">" => env.gt(a, b),
        ">=" => env.ge(a, b),
        "and" => env.and(a, b),
        "or" => env.or(a, b),
        _ => unreachable!("operator {op}"),
    }
}
