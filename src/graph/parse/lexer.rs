//! Tokens of one line of graph text, each with its column.

/// One token.
#[derive(Clone, Debug, PartialEq)]
pub enum Token {
    /// `%3` (output `None`) or `%3.1`.
    Value(u32, Option<u32>),
    /// A non-negative integer literal; a sign is a separate `-`.
    Int(u64),
    /// A literal with a point or an exponent: `2.0`, `1e-5`.
    Float(f64),
    Ident(String),
    /// The raw text between double quotes, escapes still in place.
    Str(String),
    Punct(&'static str),
}

/// A token and the 1-based column it starts at.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned {
    pub token: Token,
    pub column: usize,
}

/// Longest first, so `**` wins over `*`.
const PUNCTUATION: [&str; 25] = [
    "**", "//", "==", "!=", "<=", ">=", "->", "(", ")", "[", "]", ",", ":", "=", "+", "-", "*",
    "%", "<", ">", "@", "#", ".", "{", "}",
];

/// The tokens of `text`, whose first character is at column `start`; an error is a message
/// and its column.
pub fn tokenize(text: &str, start: usize) -> Result<Vec<Spanned>, (String, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut position = 0;
    while position < chars.len() {
        let c = chars[position];
        let column = start + position;
        if c.is_whitespace() {
            position += 1;
            continue;
        }
        let (token, length) =
            if c == '%' && chars.get(position + 1).is_some_and(char::is_ascii_digit) {
                value(&chars[position + 1..]).map(|(token, length)| (token, length + 1))
            } else if c.is_ascii_digit() {
                number(&chars[position..])
            } else if c.is_alphabetic() || c == '_' {
                Ok(identifier(&chars[position..]))
            } else if c == '"' {
                string(&chars[position + 1..]).map(|(token, length)| (token, length + 1))
            } else {
                punctuation(&chars[position..])
            }
            .map_err(|message| (message, column))?;
        tokens.push(Spanned { token, column });
        position += length;
    }
    Ok(tokens)
}

fn digits(chars: &[char]) -> usize {
    chars.iter().take_while(|c| c.is_ascii_digit()).count()
}

fn parse_u32(chars: &[char]) -> Result<u32, String> {
    let text: String = chars.iter().collect();
    text.parse().map_err(|_| format!("`{text}` is too large"))
}

/// `3` or `3.1` after a `%`.
fn value(chars: &[char]) -> Result<(Token, usize), String> {
    let node_length = digits(chars);
    let node = parse_u32(&chars[..node_length])?;
    if chars.get(node_length) == Some(&'.') {
        let output_length = digits(&chars[node_length + 1..]);
        if output_length > 0 {
            let end = node_length + 1 + output_length;
            let output = parse_u32(&chars[node_length + 1..end])?;
            return Ok((Token::Value(node, Some(output)), end));
        }
    }
    Ok((Token::Value(node, None), node_length))
}

fn number(chars: &[char]) -> Result<(Token, usize), String> {
    let mut length = digits(chars);
    let mut float = false;
    if chars.get(length) == Some(&'.') && chars.get(length + 1).is_some_and(char::is_ascii_digit) {
        float = true;
        length += 1 + digits(&chars[length + 1..]);
    }
    if chars.get(length) == Some(&'e') {
        let sign = usize::from(matches!(chars.get(length + 1), Some('-' | '+')));
        let exponent = digits(&chars[(length + 1 + sign).min(chars.len())..]);
        if exponent > 0 {
            float = true;
            length += 1 + sign + exponent;
        }
    }
    let text: String = chars[..length].iter().collect();
    let token = if float {
        Token::Float(text.parse().map_err(|_| format!("bad number `{text}`"))?)
    } else {
        Token::Int(text.parse().map_err(|_| format!("`{text}` is too large"))?)
    };
    Ok((token, length))
}

fn identifier(chars: &[char]) -> (Token, usize) {
    let length = chars
        .iter()
        .take_while(|c| c.is_alphanumeric() || **c == '_')
        .count();
    (Token::Ident(chars[..length].iter().collect()), length)
}

/// The raw contents up to the closing quote (a backslash escapes the next character).
fn string(chars: &[char]) -> Result<(Token, usize), String> {
    let mut position = 0;
    while let Some(&c) = chars.get(position) {
        match c {
            '"' => {
                let raw = chars[..position].iter().collect();
                return Ok((Token::Str(raw), position + 1));
            }
            '\\' => position += 2,
            _ => position += 1,
        }
    }
    Err("unterminated string".to_string())
}

fn punctuation(chars: &[char]) -> Result<(Token, usize), String> {
    for punct in PUNCTUATION {
        let length = punct.chars().count();
        if chars.len() >= length && chars[..length].iter().copied().eq(punct.chars()) {
            return Ok((Token::Punct(punct), length));
        }
    }
    Err(format!("unexpected character `{}`", chars[0]))
}
