//! The lexer: logos tokens, then the statement-separator rule of spec §2.
//!
//! A statement ends at a newline outside `()` and `[]`, or at `;`. [`tokenize`] turns newlines
//! and semicolons into [`Tok::Sep`], drops newlines inside brackets, and normalises separators so
//! the grammar sees at most one between two statements and none after `{`, before `}`, before
//! `else`, or at either end of the file. Characters that start no token become diagnostics, never
//! an abort.

use logos::Logos;

use crate::diag::{Code, Diagnostic};
use crate::source::{BYTE_ORDER_MARK, FileId, Span};

/// The keywords of spec §2: the words the lexer never reads as identifiers. The REPL and the
/// language server complete them, and the editor grammars highlight exactly these.
pub const KEYWORDS: &[&str] = &[
    "fn",
    "let",
    "if",
    "else",
    "for",
    "in",
    "return",
    "check",
    "check_size",
    "use",
    "as",
    "and",
    "or",
    "not",
    "true",
    "false",
    "none",
];

#[derive(Logos, Clone, Copy, Debug, PartialEq)]
#[logos(skip r"[ \t\r\x0c]+")]
#[logos(skip(r"#[^\n]*", allow_greedy = true))]
pub enum Tok<'a> {
    #[token("fn")]
    Fn,
    #[token("let")]
    Let,
    #[token("if")]
    If,
    #[token("else")]
    Else,
    #[token("for")]
    For,
    #[token("in")]
    In,
    #[token("return")]
    Return,
    #[token("check")]
    Check,
    #[token("check_size")]
    CheckSize,
    #[token("use")]
    Use,
    #[token("as")]
    As,
    #[token("and")]
    And,
    #[token("or")]
    Or,
    #[token("not")]
    Not,
    #[token("true")]
    True,
    #[token("false")]
    False,
    #[token("none")]
    None,

    #[regex("[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice())]
    Ident(&'a str),
    #[regex("[0-9][0-9_]*", |lex| lex.slice())]
    Int(&'a str),
    #[regex(r"[0-9][0-9_]*\.([0-9][0-9_]*)?([eE][+-]?[0-9]+)?", |lex| lex.slice())]
    #[regex(r"\.[0-9][0-9_]*([eE][+-]?[0-9]+)?", |lex| lex.slice())]
    #[regex(r"[0-9][0-9_]*[eE][+-]?[0-9]+", |lex| lex.slice())]
    Float(&'a str),
    /// A string literal including its quotes; escapes and `{…}` are handled by the parser.
    #[regex(r#""([^"\\\n]|\\[^\n])*""#, |lex| lex.slice())]
    Str(&'a str),
    /// A string literal missing its closing quote (reported, never given to the parser).
    #[regex(r#""([^"\\\n]|\\[^\n])*"#)]
    UnterminatedStr,

    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("//")]
    SlashSlash,
    #[token("%")]
    Percent,
    #[token("**")]
    StarStar,
    #[token("@")]
    At,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("=")]
    Assign,
    #[token("&")]
    Amp,
    #[token("|")]
    Pipe,
    #[token("~")]
    Tilde,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    #[token(".")]
    Dot,
    #[token("...")]
    Ellipsis,
    #[token("->")]
    Arrow,
    #[token("?")]
    Question,
    #[token("\n")]
    Newline,
    #[token(";")]
    Semi,
    /// A statement separator, made by [`tokenize`] from newlines and semicolons.
    Sep,
}

impl Tok<'_> {
    /// How the token reads in an "expected …" message.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(name) => format!("identifier `{name}`"),
            Tok::Int(text) | Tok::Float(text) => format!("number `{text}`"),
            Tok::Str(_) | Tok::UnterminatedStr => "string".to_string(),
            Tok::Sep | Tok::Newline => "end of line".to_string(),
            Tok::Semi => "`;`".to_string(),
            other => format!("`{}`", other.text()),
        }
    }

    fn text(&self) -> &'static str {
        match self {
            Tok::Fn => "fn",
            Tok::Let => "let",
            Tok::If => "if",
            Tok::Else => "else",
            Tok::For => "for",
            Tok::In => "in",
            Tok::Return => "return",
            Tok::Check => "check",
            Tok::CheckSize => "check_size",
            Tok::Use => "use",
            Tok::As => "as",
            Tok::And => "and",
            Tok::Or => "or",
            Tok::Not => "not",
            Tok::True => "true",
            Tok::False => "false",
            Tok::None => "none",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::SlashSlash => "//",
            Tok::Percent => "%",
            Tok::StarStar => "**",
            Tok::At => "@",
            Tok::EqEq => "==",
            Tok::NotEq => "!=",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::Assign => "=",
            Tok::Amp => "&",
            Tok::Pipe => "|",
            Tok::Tilde => "~",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Comma => ",",
            Tok::Colon => ":",
            Tok::Dot => ".",
            Tok::Ellipsis => "...",
            Tok::Arrow => "->",
            Tok::Question => "?",
            Tok::Newline | Tok::Semi | Tok::Sep => ";",
            Tok::Ident(_) | Tok::Int(_) | Tok::Float(_) | Tok::Str(_) | Tok::UnterminatedStr => "",
        }
    }
}

/// A token with its byte range, as lalrpop consumes it.
pub type Spanned<'a> = (usize, Tok<'a>, usize);

/// Lexes `text` into the separator-normalised stream the grammar expects. `base` is the byte
/// offset of `text` in its file (non-zero for an interpolation inside a string). Lexical errors
/// are pushed to `errors` and the offending characters skipped.
pub fn tokenize<'a>(
    text: &'a str,
    file: FileId,
    base: usize,
    errors: &mut Vec<Diagnostic>,
) -> Vec<Spanned<'a>> {
    // Past this many, lexical errors are skipped silently: the parser reports at most a
    // hundred errors per file anyway, and a binary file would otherwise make millions.
    const MAX_ERRORS: usize = 1000;
    // A byte order mark opens some files saved on Windows; it is not part of the program.
    let (text, base) = match text.strip_prefix(BYTE_ORDER_MARK) {
        Some(rest) if base == 0 => (rest, BYTE_ORDER_MARK.len_utf8()),
        _ => (text, base),
    };
    let mut error_count = 0;
    let mut brackets = Brackets::default();
    let mut tokens: Vec<Spanned<'a>> = Vec::new();
    let mut lexer = Tok::lexer(text)
        .spanned()
        .map(|(result, range)| (result, range.start + base..range.end + base))
        .peekable();
    while let Some((result, range)) = lexer.next() {
        let Ok(token) = result else {
            let mut end = range.end;
            while let Some((Err(()), next)) = lexer.peek() {
                if next.start != end {
                    break;
                }
                end = next.end;
                lexer.next();
            }
            error_count += 1;
            if error_count <= MAX_ERRORS {
                errors.push(unexpected_characters(text, file, base, range.start..end));
            }
            continue;
        };
        match token {
            Tok::UnterminatedStr => {
                error_count += 1;
                if error_count > MAX_ERRORS {
                    continue;
                }
                errors.push(
                    Diagnostic::error(
                        Code::SyntaxError,
                        Span::new(file, range.start, range.end),
                        "unterminated string",
                    )
                    .with_label("this string has no closing `\"`")
                    .with_help("close the string on the same line; write a line break as `\\n`"),
                );
            }
            Tok::Newline if matches!(brackets.open.last(), Some(Tok::LParen | Tok::LBracket)) => {}
            Tok::Newline | Tok::Semi => push_separator(&mut tokens, range.start, range.end),
            Tok::LParen | Tok::LBracket | Tok::LBrace => {
                brackets.push(token);
                tokens.push((range.start, token, range.end));
            }
            Tok::RParen | Tok::RBracket | Tok::RBrace => {
                brackets.close(token);
                if token == Tok::RBrace {
                    drop_trailing_separator(&mut tokens);
                }
                tokens.push((range.start, token, range.end));
            }
            Tok::Else => {
                drop_trailing_separator(&mut tokens);
                tokens.push((range.start, token, range.end));
            }
            _ => tokens.push((range.start, token, range.end)),
        }
    }
    drop_trailing_separator(&mut tokens);
    tokens
}

fn push_separator(tokens: &mut Vec<Spanned<'_>>, start: usize, end: usize) {
    match tokens.last() {
        None | Some((_, Tok::Sep | Tok::LBrace, _)) => {}
        Some(_) => tokens.push((start, Tok::Sep, end)),
    }
}

fn drop_trailing_separator(tokens: &mut Vec<Spanned<'_>>) {
    if let Some((_, Tok::Sep, _)) = tokens.last() {
        tokens.pop();
    }
}

/// The open brackets, innermost last, with a count of each kind so that a stray closer is
/// recognised without a walk down the stack (which made deeply nested text quadratic).
#[derive(Default)]
struct Brackets<'a> {
    open: Vec<Tok<'a>>,
    /// Open `(`, `[` and `{`, in that order.
    counts: [usize; 3],
}

impl<'a> Brackets<'a> {
    fn kind(token: Tok<'_>) -> usize {
        match token {
            Tok::LParen | Tok::RParen => 0,
            Tok::LBracket | Tok::RBracket => 1,
            _ => 2,
        }
    }

    fn push(&mut self, opening: Tok<'a>) {
        self.counts[Self::kind(opening)] += 1;
        self.open.push(opening);
    }

    /// Pops the bracket that `closing` closes and every bracket opened after it. A stray
    /// closer leaves the stack alone; the parser reports it.
    fn close(&mut self, closing: Tok<'_>) {
        if self.counts[Self::kind(closing)] == 0 {
            return;
        }
        while let Some(open) = self.open.pop() {
            self.counts[Self::kind(open)] -= 1;
            if Self::kind(open) == Self::kind(closing) {
                break;
            }
        }
    }
}

fn unexpected_characters(
    text: &str,
    file: FileId,
    base: usize,
    range: std::ops::Range<usize>,
) -> Diagnostic {
    let (start, end) = (range.start, range.end);
    let bad = text.get(start - base..end - base).unwrap_or("");
    let shown: String = bad
        .chars()
        .take(20)
        .flat_map(char::escape_default)
        .collect();
    let message = if bad.chars().count() == 1 {
        format!("unexpected character `{shown}`")
    } else {
        format!("unexpected characters `{shown}`")
    };
    let diagnostic = Diagnostic::error(Code::SyntaxError, Span::new(file, start, end), message)
        .with_label("not part of any TSL token");
    match bad {
        "!" => diagnostic.with_help("logical not is written `not x`"),
        "'" => diagnostic.with_help("strings are written in double quotes: \"…\""),
        _ => match bad.chars().next().map(Unusual::of) {
            Some(Unusual::Quote) => diagnostic
                .with_help("strings are written in straight double quotes: \"…\" (U+0022)"),
            Some(Unusual::Space) => diagnostic.with_help(
                "an invisible or non-ASCII space (often pasted from a web page or a document); \
                 delete it or type a plain space",
            ),
            Some(Unusual::Letter) => {
                diagnostic.with_help("names are made of ASCII letters, digits and `_` (spec §2)")
            }
            Some(Unusual::Other) | None => diagnostic,
        },
    }
}

/// Characters outside TSL's alphabet that have a likely cause, for the help of a lexical error.
enum Unusual {
    /// Typographic quotes, as word processors and web pages turn `"` into.
    Quote,
    /// Spaces other than ASCII ones, and characters that print as nothing.
    Space,
    /// Letters and digits outside ASCII, as in a name.
    Letter,
    Other,
}

impl Unusual {
    fn of(c: char) -> Unusual {
        match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{201C}' | '\u{201D}'
            | '\u{201E}' | '\u{201F}' | '\u{00AB}' | '\u{00BB}' => Unusual::Quote,
            '\u{200B}'..='\u{200D}' | '\u{2060}' | BYTE_ORDER_MARK => Unusual::Space,
            c if c.is_whitespace() => Unusual::Space,
            c if !c.is_ascii() && c.is_alphanumeric() => Unusual::Letter,
            _ => Unusual::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<String> {
        let mut errors = Vec::new();
        let tokens = tokenize(text, FileId(0), 0, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        tokens
            .into_iter()
            .map(|(_, token, _)| match token {
                Tok::Sep => ";".to_string(),
                other => other.describe().trim_matches('`').to_string(),
            })
            .collect()
    }

    #[test]
    fn every_keyword_is_a_token_of_its_own() {
        for keyword in KEYWORDS {
            let tokens: Vec<_> = Tok::lexer(keyword).collect();
            assert_eq!(tokens.len(), 1, "{keyword}");
            let token = tokens[0].expect("a keyword lexes");
            assert!(!matches!(token, Tok::Ident(_)), "{keyword} lexes as a name");
            assert_eq!(token.text(), *keyword);
        }
    }

    #[test]
    fn words_that_are_not_keywords_are_names() {
        for word in ["function", "while", "self", "check_sizes", "Let", "lets"] {
            let tokens: Vec<_> = Tok::lexer(word).collect();
            assert!(matches!(tokens[..], [Ok(Tok::Ident(_))]), "{word}");
        }
    }

    #[test]
    fn newlines_separate_statements_only_outside_brackets() {
        assert_eq!(
            kinds("let x = f(1,\n 2)\nx"),
            [
                "let",
                "identifier `x",
                "=",
                "identifier `f",
                "(",
                "number `1",
                ",",
                "number `2",
                ")",
                ";",
                "identifier `x"
            ]
        );
    }

    #[test]
    fn separators_are_normalised_around_braces_and_else() {
        let text = "\n\nif a {\n  b\n\n}\nelse { c; }\n\n";
        assert_eq!(
            kinds(text),
            [
                "if",
                "identifier `a",
                "{",
                "identifier `b",
                "}",
                "else",
                "{",
                "identifier `c",
                "}"
            ]
        );
    }

    #[test]
    fn numbers_strings_and_comments() {
        assert_eq!(
            kinds("1_000 .5 1e-3 2.5e3 3. \"a\\\"b\" # note"),
            [
                "number `1_000",
                "number `.5",
                "number `1e-3",
                "number `2.5e3",
                "number `3.",
                "string"
            ]
        );
    }

    #[test]
    fn bad_characters_and_unterminated_strings_are_reported() {
        let mut errors = Vec::new();
        let tokens = tokenize(
            "let x = 1 $$ 2\nlet s = \"abc\nlet y = \0",
            FileId(0),
            0,
            &mut errors,
        );
        let messages: Vec<_> = errors.iter().map(|error| error.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "unexpected characters `$$`",
                "unterminated string",
                "unexpected character `\\u{0}`"
            ]
        );
        assert!(tokens.iter().any(|(_, token, _)| *token == Tok::Int("2")));
    }

    #[test]
    fn a_byte_order_mark_opens_a_file_and_nothing_else() {
        let mut errors = Vec::new();
        let tokens = tokenize("\u{feff}let x = 1", FileId(0), 0, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(tokens.first(), Some(&(3, Tok::Let, 6)));
        tokenize("let x = \u{feff}1", FileId(0), 0, &mut errors);
        assert_eq!(errors.len(), 1);
    }

    #[test]
    fn characters_pasted_from_documents_get_help() {
        let help = |text: &str| {
            let mut errors = Vec::new();
            tokenize(text, FileId(0), 0, &mut errors);
            let [error, ..] = errors.as_slice() else {
                panic!("an error expected for {text:?}");
            };
            error.help.clone().unwrap_or_default()
        };
        assert!(help("print(\u{201C}hi\u{201D})").contains("straight double quotes"));
        assert!(help("let x\u{a0}= 1").contains("non-ASCII space"));
        assert!(help("let x = 1\u{200b}").contains("non-ASCII space"));
        assert!(help("let café = 1").contains("ASCII letters"));
        assert_eq!(help("let x = 1 $ 2"), "");
    }
}
