//! Mutations of TSL programs: small token-level and line-level edits that keep most of a
//! program intact, so a mutant still reaches deep into the interpreter, the tracer and the
//! kernels before it fails (if it fails at all).

use rand::seq::IndexedRandom;
use rand::{Rng, RngExt};
use tsl::source::FileId;
use tsl::syntax::lexer::{Tok, tokenize};

/// How far mutations may push sizes and counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Small values only: the mutant runs inside the test process, which has no memory limit.
    Small,
    /// Also values at and past the element limit: the mutant runs in a child process under a
    /// memory limit.
    Huge,
}

const SMALL_INTS: [&str; 10] = ["0", "1", "2", "3", "-1", "-2", "5", "8", "64", "-7"];
const HUGE_INTS: [&str; 8] = [
    "2147483647",
    "2147483648",
    "1000000000",
    "4294967296",
    "9223372036854775807",
    "100000000",
    "3000000000",
    "65536",
];
const FLOATS: [&str; 8] = [
    "0.0", "-0.0", "1.0", "-1.5", "1e30", "-1e30", "1e-30", "0.5",
];
const OPERATORS: [&str; 18] = [
    "+", "-", "*", "/", "//", "%", "**", "@", "==", "!=", "<", "<=", ">", ">=", "&", "|", "and",
    "or",
];
const TOKENS: [&str; 16] = [
    "(", ")", "[", "]", "{", "}", ",", ":", ".", "=", "not", "~", "-", "none", "...", "\n",
];
/// Names a mutant may call instead of the one written: builtins, methods and std helpers.
const NAMES: [&str; 32] = [
    "zeros",
    "ones",
    "arange",
    "tensor",
    "sum",
    "mean",
    "max",
    "min",
    "item",
    "tolist",
    "nonzero",
    "masked_select",
    "unique",
    "repeat_interleave",
    "narrow",
    "split",
    "cat",
    "stack",
    "reshape",
    "expand",
    "index_select",
    "gather",
    "cumsum",
    "diff",
    "matmul",
    "where",
    "relu",
    "abs",
    "float",
    "long",
    "cond",
    "range",
];

/// A mutant of `text`: one to three random edits. `donors` are other programs whose lines
/// may be spliced in.
pub fn mutate(text: &str, donors: &[String], scale: Scale, rng: &mut impl Rng) -> String {
    let mut text = text.to_string();
    let edits = rng.random_range(1..=3);
    for _ in 0..edits {
        text = edit(&text, donors, scale, rng);
    }
    text
}

fn edit(text: &str, donors: &[String], scale: Scale, rng: &mut impl Rng) -> String {
    let tokens = spans(text);
    if tokens.is_empty() {
        return text.to_string();
    }
    match rng.random_range(0..12) {
        0 => replace_kind(
            text,
            &tokens,
            rng,
            |tok| matches!(tok, Tok::Int(_)),
            |rng| int_literal(scale, rng),
        ),
        1 => replace_kind(
            text,
            &tokens,
            rng,
            |tok| matches!(tok, Tok::Float(_)),
            |rng| (*FLOATS.choose(rng).unwrap_or(&"0.0")).to_string(),
        ),
        2 => replace_kind(text, &tokens, rng, is_operator, |rng| {
            (*OPERATORS.choose(rng).unwrap_or(&"+")).to_string()
        }),
        3 => {
            let names: Vec<&str> = tokens
                .iter()
                .filter_map(|(_, token, _)| match token {
                    Tok::Ident(name) => Some(*name),
                    _ => None,
                })
                .collect();
            replace_kind(
                text,
                &tokens,
                rng,
                |tok| matches!(tok, Tok::Ident(_)),
                |rng| {
                    if rng.random_bool(0.5) && !names.is_empty() {
                        (*names.choose(rng).unwrap_or(&"x")).to_string()
                    } else {
                        (*NAMES.choose(rng).unwrap_or(&"sum")).to_string()
                    }
                },
            )
        }
        4 => {
            let at = tokens.choose(rng).map_or(0, |token| token.0);
            let inserted = *TOKENS.choose(rng).unwrap_or(&"(");
            splice(text, at, at, &format!("{inserted} "))
        }
        5 => {
            let (start, _, end) = *tokens.choose(rng).unwrap_or(&tokens[0]);
            splice(text, start, end, "")
        }
        6 => {
            let (start, _, _) = *tokens.choose(rng).unwrap_or(&tokens[0]);
            text[..start].to_string()
        }
        7 => toggle_compile(text, rng),
        8 => replace_kind(
            text,
            &tokens,
            rng,
            |tok| matches!(tok, Tok::Ident("f32" | "i64" | "bool" | "float" | "long")),
            |rng| {
                (*["f32", "i64", "bool", "float", "long"]
                    .choose(rng)
                    .unwrap_or(&"f32"))
                .to_string()
            },
        ),
        9 => lines(text, rng, |lines, rng| {
            let at = rng.random_range(0..lines.len());
            lines.remove(at);
        }),
        10 => lines(text, rng, |lines, rng| {
            let at = rng.random_range(0..lines.len());
            let copy = lines[at].clone();
            lines.insert(rng.random_range(0..=lines.len()), copy);
        }),
        _ => {
            let Some(donor) = donors.choose(rng) else {
                return text.to_string();
            };
            let donated: Vec<&str> = donor.lines().collect();
            let Some(line) = donated.choose(rng).map(|line| (*line).to_string()) else {
                return text.to_string();
            };
            lines(text, rng, |lines, rng| {
                lines.insert(rng.random_range(0..=lines.len()), line.clone());
            })
        }
    }
}

fn spans(text: &str) -> Vec<(usize, Tok<'_>, usize)> {
    let mut errors = Vec::new();
    tokenize(text, FileId(0), 0, &mut errors)
        .into_iter()
        .filter(|(start, _, end)| start < end && *end <= text.len())
        .collect()
}

fn is_operator(token: &Tok<'_>) -> bool {
    matches!(
        token,
        Tok::Plus
            | Tok::Minus
            | Tok::Star
            | Tok::Slash
            | Tok::SlashSlash
            | Tok::Percent
            | Tok::StarStar
            | Tok::At
            | Tok::EqEq
            | Tok::NotEq
            | Tok::Lt
            | Tok::Le
            | Tok::Gt
            | Tok::Ge
            | Tok::Amp
            | Tok::Pipe
            | Tok::And
            | Tok::Or
    )
}

fn int_literal(scale: Scale, rng: &mut impl Rng) -> String {
    let huge = scale == Scale::Huge && rng.random_bool(0.4);
    let choices: &[&str] = if huge { &HUGE_INTS } else { &SMALL_INTS };
    (*choices.choose(rng).unwrap_or(&"1")).to_string()
}

/// Replaces one token that `wanted` accepts by what `make` gives.
fn replace_kind<R: Rng>(
    text: &str,
    tokens: &[(usize, Tok<'_>, usize)],
    rng: &mut R,
    wanted: impl Fn(&Tok<'_>) -> bool,
    make: impl FnOnce(&mut R) -> String,
) -> String {
    let candidates: Vec<&(usize, Tok<'_>, usize)> = tokens
        .iter()
        .filter(|(_, token, _)| wanted(token))
        .collect();
    let Some(&&(start, _, end)) = candidates.choose(rng) else {
        return text.to_string();
    };
    let replacement = make(rng);
    splice(text, start, end, &replacement)
}

fn splice(text: &str, start: usize, end: usize, with: &str) -> String {
    format!("{}{with}{}", &text[..start], &text[end..])
}

/// Adds `@compile` (or `@compile(dynamic = true)`) before a `fn`, or removes one.
fn toggle_compile(text: &str, rng: &mut impl Rng) -> String {
    if text.contains("@compile") && rng.random_bool(0.5) {
        return text.replacen("@compile", "", 1);
    }
    let starts: Vec<usize> = text.match_indices("fn ").map(|(at, _)| at).collect();
    let Some(&at) = starts.choose(rng) else {
        return text.to_string();
    };
    let decorator = if rng.random_bool(0.3) {
        "@compile(dynamic = true)\n"
    } else {
        "@compile\n"
    };
    splice(text, at, at, decorator)
}

/// Applies `change` to the lines of `text` (when there are any).
fn lines<R: Rng>(text: &str, rng: &mut R, change: impl FnOnce(&mut Vec<String>, &mut R)) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return text.to_string();
    }
    change(&mut lines, rng);
    let mut joined = lines.join("\n");
    joined.push('\n');
    joined
}
