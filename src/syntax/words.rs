//! What a completer needs to know about the text before the cursor, shared by the REPL and
//! the language server so both complete the same way.

/// Whether `c` can be part of a name.
pub fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `text` ends with `use std` (as a statement, not `reuse std`).
pub fn after_use_std(text: &str) -> bool {
    let Some(rest) = text.strip_suffix("std") else {
        return false;
    };
    let keyword = rest.trim_end();
    keyword.len() < rest.len()
        && keyword
            .strip_suffix("use")
            .is_some_and(|before| !before.ends_with(is_word_char))
}

#[cfg(test)]
mod tests {
    use super::after_use_std;

    #[test]
    fn use_std_as_a_statement_only() {
        assert!(after_use_std("use std"));
        assert!(after_use_std("x = 1\nuse  std"));
        assert!(!after_use_std("reuse std"));
        assert!(!after_use_std("usestd"));
        assert!(!after_use_std("use st"));
    }
}
