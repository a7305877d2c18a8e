//! Completion candidates and hints, from the text before the cursor and the session's names.

use super::commands;
use crate::eval::{Interpreter, LogChannels};
use crate::syntax::KEYWORDS;
use crate::syntax::words::{after_use_std, is_word_char};

/// What completion knows about the session, refreshed before each cell.
#[derive(Default)]
pub(super) struct Vocabulary {
    /// Session globals, builtins and dtypes.
    pub(super) names: Vec<String>,
    /// Modules bound in the session, with their members.
    pub(super) modules: Vec<(String, Vec<String>)>,
}

impl Vocabulary {
    pub(super) fn of(interpreter: &Interpreter) -> Vocabulary {
        Vocabulary {
            names: interpreter.completion_names(),
            modules: interpreter.session_modules(),
        }
    }

    fn members(&self, module: &str) -> Option<&[String]> {
        self.modules
            .iter()
            .find(|(name, _)| name == module)
            .map(|(_, members)| members.as_slice())
    }
}

/// A hint shown after the cursor; `completion` is what accepting it inserts.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Hint {
    pub(super) display: String,
    pub(super) completion: Option<String>,
}

/// The byte where the word before `pos` starts, and the sorted candidates that extend it.
pub(super) fn complete(vocabulary: &Vocabulary, line: &str, pos: usize) -> (usize, Vec<String>) {
    let before = &line[..pos];
    if let Some(prefix) = command_word(before) {
        let names = commands::matching(prefix)
            .into_iter()
            .map(|command| format!(":{}", command.name));
        return (0, names.collect());
    }
    let start = before.trim_end_matches(is_word_char).len();
    let word = &before[start..];
    let head = &before[..start];
    let pool: Vec<&str> = if head.trim_start().starts_with(":log") {
        let names = LogChannels::NAMES.into_iter();
        names.chain(["all", "off"]).collect()
    } else if head.ends_with('@') {
        vec!["compile"]
    } else if let Some(receiver) = head.strip_suffix('.') {
        members(vocabulary, receiver)
    } else {
        let names = vocabulary.names.iter().map(String::as_str);
        names.chain(KEYWORDS.iter().copied()).collect()
    };
    let mut candidates: Vec<String> = pool
        .into_iter()
        .filter(|candidate| candidate.starts_with(word))
        .map(String::from)
        .collect();
    candidates.sort();
    candidates.dedup();
    (start, candidates)
}

/// Characters of a word typed before a name is hinted (one letter hints too eagerly).
const HINT_AFTER: usize = 2;

/// A hint at the end of the line: a command's argument, or the rest of the only name that
/// completes the word being typed.
pub(super) fn hint(vocabulary: &Vocabulary, line: &str, pos: usize) -> Option<Hint> {
    if pos < line.len() {
        return None;
    }
    if let Some(prefix) = command_word(line) {
        let matching = commands::matching(prefix);
        let [command] = matching.as_slice() else {
            return None;
        };
        let rest = &command.name[prefix.len()..];
        let argument = match command.argument {
            "" => String::new(),
            argument => format!(" {argument}"),
        };
        if rest.is_empty() && argument.is_empty() {
            return None;
        }
        return Some(Hint {
            display: format!("{rest}{argument}"),
            completion: (!rest.is_empty()).then(|| rest.to_string()),
        });
    }
    let (start, candidates) = complete(vocabulary, line, pos);
    let word = &line[start..pos];
    match candidates.as_slice() {
        [only] if word.len() >= HINT_AFTER && only.len() > word.len() => {
            let rest = only[word.len()..].to_string();
            Some(Hint {
                display: rest.clone(),
                completion: Some(rest),
            })
        }
        _ => None,
    }
}

/// The partial command name when the text is `:name` with nothing after it.
fn command_word(before: &str) -> Option<&str> {
    let name = before.trim_start().strip_prefix(':')?;
    name.chars().all(is_word_char).then_some(name)
}

/// What may follow `receiver.`: std modules after `use std.`, a session module's members, or
/// tensor methods and fields.
fn members<'a>(vocabulary: &'a Vocabulary, receiver: &str) -> Vec<&'a str> {
    if after_use_std(receiver) {
        return Interpreter::std_module_names();
    }
    let name_start = receiver.trim_end_matches(is_word_char).len();
    let name = &receiver[name_start..];
    let chained = receiver[..name_start].ends_with('.');
    match vocabulary.members(name) {
        Some(members) if !chained => members.iter().map(String::as_str).collect(),
        _ => Interpreter::method_names(),
    }
}

#[cfg(test)]
mod tests {
    use super::{Hint, Vocabulary, complete, hint};

    fn vocabulary() -> Vocabulary {
        Vocabulary {
            names: ["arange", "argmax", "print", "total", "f32"]
                .map(String::from)
                .to_vec(),
            modules: vec![(
                "nn".to_string(),
                vec!["softmax".to_string(), "relu".to_string()],
            )],
        }
    }

    fn candidates(line: &str) -> Vec<String> {
        complete(&vocabulary(), line, line.len()).1
    }

    #[test]
    fn names_in_scope_and_keywords() {
        assert_eq!(candidates("let y = ar"), ["arange", "argmax"]);
        assert_eq!(candidates("print(to"), ["total"]);
        assert_eq!(candidates("che"), ["check", "check_size"]);
        assert_eq!(candidates("@c"), ["compile"]);
        assert_eq!(complete(&vocabulary(), "let y = ar", 10).0, 8);
    }

    #[test]
    fn methods_after_a_dot() {
        assert_eq!(candidates("x.su"), ["sum"]);
        assert_eq!(candidates("ones(3).resh"), ["reshape"]);
        assert_eq!(candidates("x.sha"), ["shape"]);
        assert!(candidates("x.").contains(&"unsqueeze".to_string()));
    }

    #[test]
    fn members_of_session_modules() {
        assert_eq!(candidates("nn.so"), ["softmax"]);
        assert_eq!(candidates("nn."), ["relu", "softmax"]);
        assert_eq!(candidates("x.nn.su"), ["sum"]);
    }

    #[test]
    fn std_modules_after_use_std() {
        assert_eq!(candidates("use std."), ["jagged", "nn", "shape"]);
        assert_eq!(candidates("use  std.ja"), ["jagged"]);
        assert!(candidates("reuse std.ja").is_empty());
    }

    #[test]
    fn commands_and_their_arguments() {
        assert_eq!(candidates(":g"), [":graph", ":guards"]);
        assert_eq!(candidates(":ty"), [":type"]);
        assert_eq!(candidates(":type x.su"), ["sum"]);
        assert_eq!(candidates(":log dyn"), ["dynamic"]);
        assert_eq!(candidates(":log guards,gr"), ["graph"]);
    }

    #[test]
    fn hints_complete_the_only_candidate() {
        let hinted = |line: &str| hint(&vocabulary(), line, line.len());
        assert_eq!(
            hinted("pri"),
            Some(Hint {
                display: "nt".to_string(),
                completion: Some("nt".to_string())
            })
        );
        assert_eq!(hinted("ar"), None);
        assert_eq!(hinted("t"), None, "one letter is too little to hint");
        assert_eq!(hinted("print"), None);
        assert_eq!(
            hinted(":ty"),
            Some(Hint {
                display: "pe EXPR".to_string(),
                completion: Some("pe".to_string())
            })
        );
        assert_eq!(
            hinted(":load"),
            Some(Hint {
                display: " FILE".to_string(),
                completion: None
            })
        );
        assert_eq!(hinted(":quit"), None);
        assert_eq!(hint(&vocabulary(), "pri", 1), None);
    }
}
