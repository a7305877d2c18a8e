//! The editor grammar cannot drift from the language: the keywords the VS Code TextMate
//! grammar highlights are exactly the lexer's keywords, and its files are valid JSON with
//! the scope name the extension's manifest registers.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

fn read_json(relative: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("reading {relative}"));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{relative} is not JSON: {error}"))
}

/// The words of a `\b(?:a|b|c)\b` pattern.
fn alternatives(pattern: &str) -> Vec<String> {
    let inner = pattern
        .strip_prefix("\\b(?:")
        .and_then(|rest| rest.strip_suffix(")\\b"))
        .unwrap_or_else(|| panic!("a keyword pattern is written \\b(?:a|b)\\b: {pattern}"));
    inner.split('|').map(str::to_string).collect()
}

#[test]
fn the_grammar_highlights_exactly_the_lexers_keywords() {
    let grammar = read_json("editors/vscode/syntaxes/tsl.tmLanguage.json");
    let patterns = grammar["repository"]["keywords"]["patterns"]
        .as_array()
        .expect("the grammar has a keywords repository");
    let mut highlighted = BTreeSet::new();
    for pattern in patterns {
        let words = alternatives(pattern["match"].as_str().expect("a match"));
        for word in words {
            assert!(highlighted.insert(word.clone()), "`{word}` is listed twice");
        }
    }
    let keywords: BTreeSet<String> = tsl::syntax::KEYWORDS
        .iter()
        .map(|keyword| (*keyword).to_string())
        .collect();
    assert_eq!(highlighted, keywords);
}

#[test]
fn the_manifest_registers_the_grammar_and_the_language() {
    let manifest = read_json("editors/vscode/package.json");
    let grammar = read_json("editors/vscode/syntaxes/tsl.tmLanguage.json");
    let registered = &manifest["contributes"]["grammars"][0];
    assert_eq!(registered["scopeName"], grammar["scopeName"]);
    assert_eq!(registered["language"], "tsl");
    assert_eq!(
        manifest["contributes"]["languages"][0]["extensions"][0],
        ".tsl"
    );
    let configuration = read_json("editors/vscode/language-configuration.json");
    assert_eq!(configuration["comments"]["lineComment"], "#");
}
