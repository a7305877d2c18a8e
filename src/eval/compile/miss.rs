//! Why a cached graph did not fit a call, and what to change when that keeps happening (the
//! help of the `recompile-limit` warning names the real cause).

use std::fmt;

/// Why an entry did not match: the reason as `TSL_LOG=recompiles` prints it, and its cause.
#[derive(Clone, Debug)]
pub struct Miss {
    pub reason: String,
    pub cause: Cause,
}

/// Which kind of condition failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// A size or int argument the graph specialised on.
    Specialised,
    /// A tensor argument's dtype.
    Dtype { name: String },
    /// A tensor argument's number of dimensions.
    Rank { name: String },
    /// A list argument's length.
    ListLength { name: String },
    /// Another argument compared by value or identity (a float, bool, string, function...).
    Value { name: String, kind: String },
    /// An argument that is not the same kind of value as when traced.
    Kind { name: String },
    /// A global the trace read.
    Global { name: String },
    /// A condition on sizes: sizes that shared a symbol now differ, or a guard failed.
    Guard,
}

impl Miss {
    pub fn new(reason: impl Into<String>, cause: Cause) -> Miss {
        Miss {
            reason: reason.into(),
            cause,
        }
    }

    /// What to change so the function stops compiling again; `dynamic` is the function's
    /// `@compile(dynamic = …)` option.
    pub fn help(&self, dynamic: Option<bool>) -> String {
        match &self.cause {
            Cause::Specialised if dynamic == Some(false) => {
                "`dynamic = false` compiles again for every new size or int: remove it (sizes \
                 that change become symbolic) or write `@compile(dynamic = true)`"
                    .to_string()
            }
            Cause::Specialised => "make the sizes that vary symbolic from the start: \
                 `@compile(dynamic = true)`, or `mark_dynamic(x, dim)` before the call"
                .to_string(),
            Cause::Value { name, kind } if kind == "float" => format!(
                "a float argument is a constant of the graph, so every new value of `{name}` \
                 compiles again: pass it as a tensor (`tensor({name})`) to make it data"
            ),
            Cause::Value { name, kind } => format!(
                "a {kind} argument is a constant of the graph, so every new value of `{name}` \
                 compiles again: keep it the same from call to call, or pass the data as a tensor"
            ),
            Cause::Dtype { name } => format!(
                "each dtype of `{name}` needs its own graph: convert it before the call (for \
                 example `{name}.float()`) so every call passes the same dtype"
            ),
            Cause::Rank { name } => format!(
                "each number of dimensions of `{name}` needs its own graph: reshape it before \
                 the call so every call passes the same rank"
            ),
            Cause::ListLength { name } => format!(
                "the length of the list `{name}` is fixed in each graph: pass one tensor \
                 (`stack({name})`) instead of a list whose length changes"
            ),
            Cause::Kind { name } => format!(
                "`{name}` is a different kind of value from call to call: pass the same kind \
                 every time"
            ),
            Cause::Global { name } => format!(
                "the graph depends on the global `{name}`, which changes between calls: pass \
                 it as an argument instead"
            ),
            Cause::Guard => "each side of a condition on sizes needs its own graph (an `if` on \
                 a size, or a size of 0 or 1, which is always specialised): avoid branching on \
                 sizes that change from call to call"
                .to_string(),
        }
    }
}

impl fmt::Display for Miss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_names_the_cause() {
        let float = Miss::new(
            "scale is 2.0 as traced, got 3.0",
            Cause::Value {
                name: "scale".into(),
                kind: "float".into(),
            },
        );
        assert!(float.help(None).contains("tensor(scale)"));
        let size = Miss::new("x.size(0) == 3 failed (x.size(0) = 4)", Cause::Specialised);
        assert!(size.help(Some(false)).contains("`dynamic = false`"));
        assert!(size.help(None).contains("dynamic = true"));
        let global = Miss::new("the global w changed", Cause::Global { name: "w".into() });
        assert!(global.help(None).contains("`w`"));
        assert_eq!(float.to_string(), "scale is 2.0 as traced, got 3.0");
    }
}
