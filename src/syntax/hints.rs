//! Help for what a Python or PyTorch user types on day one: the TSL spelling of a Python
//! name, keyword, string prefix, operator, method or keyword argument. The parser, the
//! interpreter and `tsl check` all take their help from these tables, so each mistake gets
//! the same help wherever it is found.

/// Help for an unknown global name that is Python's or PyTorch's spelling of something.
pub fn name(name: &str) -> Option<&'static str> {
    Some(match name {
        "None" => "TSL writes `none`",
        "True" => "TSL writes `true`",
        "False" => "TSL writes `false`",
        "torch" | "np" | "numpy" => {
            "there is no `torch` module: tensor functions are builtins (`zeros(3)`, \
             `x.sum()`), and `use std.nn as nn` loads the neural-network helpers"
        }
        "nn" | "F" => "load the neural-network helpers with `use std.nn as nn`",
        "float32" | "float64" | "double" | "half" => "the float dtype is `f32`",
        "int64" | "int32" | "long" => "the integer dtype is `i64`",
        "elif" => "write `else if`",
        "pass" => "an empty block is `{}`",
        "pow" => "write `x ** p`",
        "mm" | "bmm" => "write `a @ b`, or `matmul(a, b)`",
        "concat" | "concatenate" => "write `cat([a, b], dim)`",
        "softmax" | "log_softmax" | "gelu" | "layer_norm" | "cross_entropy" => {
            "the neural-network functions are in the standard library: `use std.nn as nn`, \
             then `nn.softmax(x, dim = -1)`"
        }
        "self" => "TSL has no classes: pass values as arguments",
        _ => return None,
    })
}

/// Help for a Python keyword written where a TSL statement or expression was expected
/// (`def f(x):`, `elif`, `import torch`).
pub fn keyword(word: &str) -> Option<&'static str> {
    Some(match word {
        "def" => "functions are declared with `fn`: `fn name(x) { … }`",
        "elif" => "write `else if`",
        "import" | "from" => {
            "modules are loaded with `use`: `use std.nn as nn`, or `use \"file.tsl\" as name`"
        }
        "while" => "TSL has no `while` loop: loop over `range(n)` with `for`",
        "lambda" => "define the function with `fn` and pass its name",
        "is" => "compare with `==` and `!=` (`x == none` tests for `none`)",
        "class" => "TSL has no classes: write functions with `fn`",
        _ => return None,
    })
}

/// Help for a string literal right after a letter: Python's `f"…"`, `r"…"` or `b"…"`.
pub fn string_prefix(prefix: &str) -> Option<&'static str> {
    match prefix.to_ascii_lowercase().as_str() {
        "f" => Some("strings interpolate `{…}` without a prefix: drop the `f`"),
        "r" | "b" | "rb" | "br" | "fr" | "rf" | "u" => Some(
            "TSL strings have no prefixes; every string interpolates `{…}` and \
             takes the escapes \\n \\t \\\\ \\\" \\{ \\}",
        ),
        _ => None,
    }
}

/// Help for a tensor method or field TSL does not have.
pub fn tensor_member(name: &str) -> Option<&'static str> {
    Some(match name {
        "contiguous" => {
            "TSL tensors have no strides, so nothing needs `contiguous()`: drop the call"
        }
        "detach" | "requires_grad_" | "backward" | "grad" => "TSL has no autograd",
        "cpu" | "cuda" => "tensors live on the device chosen with `--device`: drop the call",
        "numpy" => "print the tensor, or save it with `save(x, \"x.npy\")`",
        "int" | "short" => "the integer dtype is `i64`: write `x.long()`",
        "double" | "half" => "the float dtype is `f32`: write `x.float()`",
        "t" => "write `x.T`, or `x.transpose(0, 1)`",
        "pow" => "write `x ** p`",
        "add" | "sub" | "mul" | "div" => "write the operator: `x + y`, `x - y`, `x * y`, `x / y`",
        "eq" | "ne" | "lt" | "le" | "gt" | "ge" => {
            "compare with the operators `==`, `!=`, `<`, `<=`, `>`, `>=`"
        }
        "logical_not" => "write `~x` (a bool tensor) or `not x`",
        "logical_and" | "logical_or" => "write `a & b` or `a | b` on bool tensors",
        "mm" | "bmm" => "write `a @ b`",
        "softmax" | "log_softmax" => {
            "`use std.nn as nn`, then `nn.softmax(x, dim = -1)` (or `nn.log_softmax`)"
        }
        "values" | "indices" => {
            "`max(dim)` and `min(dim)` return the values only: drop `.values`, and use \
             `argmax(dim)` or `argmin(dim)` for the indices"
        }
        "masked_fill_" | "add_" | "mul_" | "zero_" | "copy_" | "fill_" | "clamp_" => {
            "values are immutable: use the out-of-place form (without `_`) and bind the result"
        }
        _ => return None,
    })
}

/// Help for a member of a list that a PyTorch user expects on a returned tuple.
pub fn list_member(name: &str) -> Option<&'static str> {
    Some(match name {
        "values" | "indices" => {
            "sort() and topk() return a list `[values, indices]`: write \
             `let [values, indices] = x.sort()`, or index it with `[0]` and `[1]`"
        }
        "append" | "extend" | "pop" | "insert" => {
            "lists are immutable: build a new one, e.g. `xs + [x]`"
        }
        _ => return None,
    })
}

/// Help for a comma inside parentheses: Python's tuple, which TSL writes as a list.
pub const TUPLE: &str =
    "TSL has no tuples: write a list, e.g. `x.reshape([2, 3])` or `cat([a, b])`";

/// Help for a keyword argument spelled as NumPy spells it.
pub fn keyword_argument(name: &str) -> Option<&'static str> {
    Some(match name {
        "axis" => "TSL, like PyTorch, calls it `dim`",
        "keepdims" => "TSL, like PyTorch, calls it `keepdim`",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_spellings_get_the_tsl_spelling() {
        assert_eq!(name("None"), Some("TSL writes `none`"));
        assert_eq!(name("True"), Some("TSL writes `true`"));
        assert_eq!(name("False"), Some("TSL writes `false`"));
        assert!(name("none").is_none());
        assert!(keyword("def").is_some_and(|help| help.contains("`fn`")));
        assert!(string_prefix("f").is_some_and(|help| help.contains("without a prefix")));
        assert!(string_prefix("F").is_some());
        assert!(string_prefix("x").is_none());
        assert!(keyword_argument("axis").is_some_and(|help| help.contains("`dim`")));
        assert!(list_member("values").is_some_and(|help| help.contains("[values, indices]")));
    }
}
