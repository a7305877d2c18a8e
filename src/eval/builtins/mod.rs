//! Builtin functions and tensor methods (spec §5), one table for both.
//!
//! A builtin callable as a method (`x.sum(dim = 0)`) receives the tensor as its first
//! argument, so every tensor operation is written once for both forms.

mod core;
mod creation;
mod data;
mod fill;
mod math;
mod order;
mod shape;
mod variance;

pub use core::sym_int_tensor;
pub use creation::symbolic_tensor;
pub use data::{check_list_values, scalar_value};
pub use shape::size_list;

use std::collections::HashMap;
use std::sync::LazyLock;

use super::Interpreter;
use super::args::CallArgs;
use super::tensor::Operand;
use super::value::Value;
use crate::diag::Result;
use crate::dtype::DType;
use crate::graph::op::Op;

type Run = fn(&mut Interpreter, CallArgs) -> Result<Value>;

/// Where a builtin can be called from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `f(x)` only.
    Function,
    /// `x.f()` only.
    Method,
    /// Both `f(x)` and `x.f()`.
    Both,
}

/// One builtin: its name, where it can be called from, its parameters and a one-line doc
/// (what completion, hover and `tsl check`'s arity check read), and the code that runs it.
pub struct Def {
    name: &'static str,
    form: Form,
    /// The parameters as written in a signature: `x, dim = none, keepdim = false`; `*sizes`
    /// collects the remaining positional arguments, and the parameters after it are
    /// keyword-only. `CallArgs::bind` is called with exactly these names (checked in debug
    /// builds).
    params: &'static str,
    doc: &'static str,
    run: Run,
}

/// One parameter of a builtin's signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    /// The default as the signature writes it (`none`, `0`, `false`); `None` when required.
    pub default: Option<&'static str>,
    /// `*sizes`: takes the remaining positional arguments (none is fine).
    pub variadic: bool,
}

impl Def {
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// What the builtin does, in one line.
    pub fn doc(&self) -> &'static str {
        self.doc
    }

    /// Callable as `f(x)`.
    pub fn is_function(&self) -> bool {
        self.form != Form::Method
    }

    /// Callable as `x.f()` on a tensor (which becomes the first argument).
    pub fn is_method(&self) -> bool {
        self.form != Form::Function
    }

    pub fn params(&self) -> impl Iterator<Item = Param> {
        self.params
            .split(',')
            .map(str::trim)
            .filter(|param| !param.is_empty())
            .map(|param| {
                let (name, default) = match param.split_once('=') {
                    Some((name, default)) => (name.trim(), Some(default.trim())),
                    None => (param, None),
                };
                match name.strip_prefix('*') {
                    Some(name) => Param {
                        name,
                        default,
                        variadic: true,
                    },
                    None => Param {
                        name,
                        default,
                        variadic: false,
                    },
                }
            })
    }

    /// `sum(x, dim = none, keepdim = false)`.
    pub fn signature(&self) -> String {
        format!("{}({})", self.name, self.params)
    }

    /// Whether `names` (as `CallArgs::bind` receives them, `*` included) are the parameters
    /// this signature declares.
    fn declares(&self, names: &[&str]) -> bool {
        let declared: Vec<String> = self
            .params()
            .map(|param| {
                if param.variadic {
                    format!("*{}", param.name)
                } else {
                    param.name.to_string()
                }
            })
            .collect();
        declared == names
    }
}

/// The builtin function called `name` (not a method-only builtin).
pub fn function_def(name: &str) -> Option<&'static Def> {
    GLOBALS.get(name).copied()
}

/// The tensor method called `name`.
pub fn method_def(name: &str) -> Option<&'static Def> {
    METHODS.get(name).copied()
}

/// Every builtin, in table order.
pub fn defs() -> &'static [Def] {
    TABLE
}

/// Whether `CallArgs::bind` was called with the parameters the table declares for
/// `function` (a debug check that keeps signatures, docs and binding in step).
pub(in crate::eval) fn binds_declared(function: &str, params: &[&str]) -> bool {
    TABLE
        .iter()
        .filter(|def| def.name == function)
        .all(|def| def.declares(params))
}

/// A builtin function value.
#[derive(Clone, Copy)]
pub struct Builtin(&'static Def);

impl Builtin {
    pub fn name(self) -> &'static str {
        self.0.name
    }

    pub(super) fn call(self, interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
        (self.0.run)(interpreter, args)
    }
}

/// A builtin taking one tensor `x` and applying `op` to it (the tensor is moved, so a
/// temporary's buffer can hold the result).
fn on_tensor(
    interpreter: &mut Interpreter,
    args: CallArgs,
    name: &'static str,
    op: Op,
) -> Result<Value> {
    let mut args = args.bind(name, &["x"])?;
    let tensor = args.take_tensor(0)?;
    interpreter.apply_one(op, vec![Operand::Tensor(tensor)], args.span)
}

const fn def(
    name: &'static str,
    form: Form,
    params: &'static str,
    doc: &'static str,
    run: Run,
) -> Def {
    Def {
        name,
        form,
        params,
        doc,
        run,
    }
}

use Form::{Both, Function, Method};

#[rustfmt::skip]
static TABLE: &[Def] = &[
    // values and control
    def("print", Function, "*values", "Prints the values separated by spaces, then a newline.", core::print),
    def("len", Function, "value", "The length of a list or string, or the size of a tensor's first dimension.", core::len),
    def("range", Function, "start, stop = none, step = 1", "The ints from start up to (not including) stop by step; range(n) counts from 0 to n - 1.", core::range),
    def("enumerate", Function, "items", "[index, item] for each item of a list or row of a tensor.", core::enumerate),
    def("zip", Function, "*lists", "Lists of the items at the same position in each list, as long as the shortest.", core::zip),
    def("int", Function, "value", "Converts a number, bool, numeric string or one-element tensor to an int.", core::int),
    def("float", Both, "value", "Converts a number or string to a float; a tensor to dtype f32.", core::float),
    def("str", Function, "value = none", "The text a value prints as.", core::str),
    def("min", Both, "a, b = none, dim = none, keepdim = false", "The smaller of two values (elementwise for tensors), the smallest of a list, or a tensor's minimum (over dim).", core::min),
    def("max", Both, "a, b = none, dim = none, keepdim = false", "The larger of two values (elementwise for tensors), the largest of a list, or a tensor's maximum (over dim).", core::max),
    def("abs", Both, "x", "The absolute value of a number or of each element of a tensor.", core::abs),
    def("seed", Function, "value", "Reseeds the random generator that randn() draws from.", core::seed),
    // tracing helpers (their eager meaning)
    def("is_compiling", Function, "", "True while a @compile function is being traced, false when code runs eagerly.", core::is_compiling),
    def("size_oblivious", Function, "condition", "Decides a size condition as if sizes 0 and 1 were not special, avoiding a guard.", core::size_oblivious),
    def("guard_or_false", Function, "condition", "The condition's value when it can be decided without data, else false (no guard on data).", core::guard_or_false),
    def("guard_or_true", Function, "condition", "The condition's value when it can be decided without data, else true (no guard on data).", core::guard_or_true),
    def("known_true", Function, "condition", "True only when the condition is known to hold from what the trace knows; never guards.", core::known_true),
    def("cond", Function, "pred, then_fn, else_fn, args = none", "Calls then_fn(args...) or else_fn(args...) by a condition on data; compiled, both branches are traced.", core::cond),
    def("mark_dynamic", Function, "x, dim", "Makes size dim of x symbolic in the next compilation instead of specialising on it.", core::mark_dynamic),
    // creation and files
    def("tensor", Function, "data, dtype = none", "A tensor from a number or nested list (dtype inferred unless given).", creation::tensor),
    def("zeros", Function, "*sizes, dtype = f32", "A tensor of zeros of the given sizes.", creation::zeros),
    def("ones", Function, "*sizes, dtype = f32", "A tensor of ones of the given sizes.", creation::ones),
    def("full", Function, "size, value, dtype = none", "A tensor of the given size (an int or a list) filled with value.", creation::full),
    def("arange", Function, "start, end = none, step = none, dtype = none", "Evenly spaced values from start up to (not including) end; arange(n) counts from 0.", creation::arange),
    def("randn", Function, "*sizes", "A tensor of standard normal samples from the seeded generator.", creation::randn),
    def("load", Function, "path", "Reads a tensor from a NumPy .npy file (relative to the script's directory).", creation::load),
    def("save", Both, "x, path", "Writes a tensor to a NumPy .npy file (relative to the script's directory).", creation::save),
    def("zeros_like", Function, "x, dtype = none", "Zeros of x's sizes, in x's dtype unless dtype is given.", fill::zeros_like),
    def("ones_like", Function, "x, dtype = none", "Ones of x's sizes, in x's dtype unless dtype is given.", fill::ones_like),
    def("full_like", Function, "x, fill_value, dtype = none", "fill_value in every element of a tensor of x's sizes and dtype (unless dtype is given).", fill::full_like_builtin),
    def("randn_like", Function, "x, dtype = none", "Standard normal f32 samples of x's sizes.", fill::randn_like),
    def("clone", Both, "x", "The tensor itself: values are immutable, so nothing is copied.", fill::clone),
    // properties
    def("size", Method, "x, dim = none", "The size of dimension dim, or the list of all sizes.", shape::size),
    def("numel", Both, "x", "The number of elements of a tensor.", shape::numel),
    def("dim", Method, "x", "The number of dimensions of a tensor.", shape::dim),
    // elementwise
    def("exp", Both, "x", "e to the power of each element.", math::exp),
    def("log", Both, "x", "The natural logarithm of each element.", math::log),
    def("sqrt", Both, "x", "The square root of each element.", math::sqrt),
    def("relu", Both, "x", "max(x, 0) for each element.", math::relu),
    def("sigmoid", Both, "x", "1 / (1 + exp(-x)) for each element.", math::sigmoid),
    def("tanh", Both, "x", "The hyperbolic tangent of each element.", math::tanh),
    def("neg", Both, "x", "The negation of each element.", math::neg),
    def("isnan", Both, "x", "Whether each element is NaN (a bool tensor).", math::isnan),
    def("isinf", Both, "x", "Whether each element is infinite (a bool tensor).", math::isinf),
    def("masked_fill", Both, "x, mask, value", "value where the bool mask is true, x elsewhere, in x's dtype.", fill::masked_fill),
    def("maximum", Both, "a, b", "The larger of a and b, elementwise with broadcasting.", math::maximum),
    def("minimum", Both, "a, b", "The smaller of a and b, elementwise with broadcasting.", math::minimum),
    def("where", Function, "condition, x, y", "x where condition is true, else y, elementwise with broadcasting.", math::where_),
    def("clamp", Both, "x, min = none, max = none", "Each element limited to [min, max] (either bound may be left out).", math::clamp),
    def("long", Method, "x", "The tensor converted to dtype i64.", math::long),
    def("bool", Method, "x", "The tensor converted to dtype bool (nonzero is true).", math::bool),
    def("to", Method, "x, dtype", "The tensor converted to dtype (f32, i64 or bool).", math::to),
    // reductions and scans
    def("sum", Both, "x, dim = none, keepdim = false", "The sum of the elements, over all dimensions or over dim (an int or a list).", math::sum),
    def("mean", Both, "x, dim = none, keepdim = false", "The mean of the elements, over all dimensions or over dim (an int or a list).", math::mean),
    def("prod", Both, "x, dim = none, keepdim = false", "The product of the elements, over all dimensions or over dim (an int or a list).", math::prod),
    def("all", Both, "x, dim = none, keepdim = false", "Whether every element is true, over all dimensions or over dim (an int or a list).", math::all),
    def("any", Both, "x, dim = none, keepdim = false", "Whether some element is true, over all dimensions or over dim (an int or a list).", math::any),
    def("argmax", Both, "x, dim = none, keepdim = false", "The index of the largest element (the first on ties), flat or along dim.", math::argmax),
    def("argmin", Both, "x, dim = none, keepdim = false", "The index of the smallest element (the first on ties), flat or along dim.", math::argmin),
    def("amax", Both, "x, dim = none, keepdim = false", "The largest element, over all dimensions or over dim (an int or a list).", math::amax),
    def("amin", Both, "x, dim = none, keepdim = false", "The smallest element, over all dimensions or over dim (an int or a list).", math::amin),
    def("var", Both, "x, dim = none, unbiased = none, keepdim = false, correction = none", "The variance over all dimensions or over dim, divided by count - correction (1 unless given).", variance::var),
    def("std", Both, "x, dim = none, unbiased = none, keepdim = false, correction = none", "The standard deviation: the square root of var with the same arguments.", variance::std),
    def("cumsum", Both, "x, dim", "Running sums along dim.", math::cumsum),
    def("diff", Both, "x, dim = -1", "Differences of neighbouring elements along dim (one shorter).", math::diff),
    // sorting
    def("sort", Both, "x, dim = -1, descending = false, stable = false", "[values, indices] sorted along dim; stable, NaN above every number.", order::sort),
    def("argsort", Both, "x, dim = -1, descending = false, stable = false", "The indices that sort x along dim (stable).", order::argsort),
    def("topk", Both, "x, k, dim = -1, largest = true, sorted = true", "[values, indices] of the k largest (or smallest) along dim, in order.", order::topk),
    def("matmul", Both, "a, b", "The matrix product a @ b (batched and broadcast like PyTorch).", math::matmul),
    // shape
    def("reshape", Both, "x, *shape", "The same elements in a new shape; one size may be -1.", shape::reshape),
    def("view", Both, "x, *shape", "The same as reshape.", shape::reshape),
    def("flatten", Both, "x, start_dim = 0, end_dim = -1", "Dimensions start_dim to end_dim merged into one.", shape::flatten),
    def("unsqueeze", Both, "x, dim", "A new dimension of size 1 inserted at dim.", shape::unsqueeze),
    def("squeeze", Both, "x, dim = none", "Dimensions of size 1 removed (all, or those in dim).", shape::squeeze),
    def("transpose", Both, "x, dim0, dim1", "Dimensions dim0 and dim1 swapped.", shape::transpose),
    def("permute", Both, "x, *dims", "Dimensions reordered: result dimension i is x's dimension dims[i].", shape::permute),
    def("expand", Both, "x, *sizes", "Dimensions of size 1 repeated to the given sizes (-1 keeps a size).", shape::expand),
    def("cat", Function, "tensors, dim = 0", "Tensors joined along an existing dimension.", shape::cat),
    def("stack", Function, "tensors, dim = 0", "Tensors of one shape joined along a new dimension.", shape::stack),
    def("split", Both, "x, sizes, dim = 0", "Pieces of x along dim: of one size each, or of the sizes in a list.", shape::split),
    def("tensor_split", Both, "x, indices_or_sections, dim = 0", "Pieces of x along dim: a number of nearly equal sections, or cut before each index in a list.", shape::tensor_split),
    def("narrow", Both, "x, dim, start, length", "length elements of dim starting at start.", shape::narrow),
    def("index_select", Both, "x, dim, index", "The entries of dim at the positions in a 1-d i64 tensor.", shape::index_select),
    def("gather", Both, "x, dim, index", "Values picked along dim by an index tensor of the same rank.", shape::gather),
    // data-dependent
    def("item", Method, "x", "The one element of a tensor as a number; while tracing, an unbacked symbol.", data::item),
    def("tolist", Method, "x", "The elements as nested lists of numbers.", data::tolist),
    def("nonzero", Both, "x", "The indices of the nonzero elements, one row each: i64[u, ndim] with a data-dependent u.", data::nonzero),
    def("masked_select", Both, "x, mask", "The elements of x where mask is true, as a 1-d tensor of data-dependent length.", data::masked_select),
    def("repeat_interleave", Both, "x, repeats = none, dim = none", "Each element (or slice along dim) of x repeated by the matching count in repeats; with x alone, each index repeated x[i] times.", data::repeat_interleave),
    def("unique", Both, "x", "The distinct elements, sorted, as a 1-d tensor of data-dependent length.", data::unique),
];

static GLOBALS: LazyLock<HashMap<&'static str, &'static Def>> = LazyLock::new(|| {
    TABLE
        .iter()
        .filter(|def| def.form != Method)
        .map(|def| (def.name, def))
        .collect()
});

static METHODS: LazyLock<HashMap<&'static str, &'static Def>> = LazyLock::new(|| {
    TABLE
        .iter()
        .filter(|def| def.form != Function)
        .map(|def| (def.name, def))
        .collect()
});

/// A global builtin name: a function or a dtype (`f32`, `i64`, `bool`).
pub fn lookup_global(name: &str) -> Option<Value> {
    if let Some(dtype) = DType::from_name(name) {
        return Some(Value::DType(dtype));
    }
    GLOBALS.get(name).map(|def| Value::Builtin(Builtin(def)))
}

/// A tensor method by name.
pub fn method(name: &str) -> Option<Builtin> {
    METHODS.get(name).map(|def| Builtin(def))
}

pub fn global_names() -> impl Iterator<Item = &'static str> {
    GLOBALS
        .keys()
        .copied()
        .chain(DType::ALL.into_iter().map(DType::name))
}

pub fn method_names() -> impl Iterator<Item = &'static str> {
    METHODS.keys().copied()
}

#[cfg(test)]
mod tests {
    use super::{TABLE, function_def, method_def};

    fn is_identifier(name: &str) -> bool {
        let mut chars = name.chars();
        chars
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    }

    #[test]
    fn every_signature_is_well_formed() {
        for def in TABLE {
            let params: Vec<_> = def.params().collect();
            assert!(
                params.iter().all(|param| is_identifier(param.name)),
                "{}",
                def.signature()
            );
            assert!(
                params.iter().filter(|param| param.variadic).count() <= 1,
                "{}",
                def.signature()
            );
            // After a parameter with a default, every positional one has a default too.
            let positional: Vec<_> = params.iter().take_while(|param| !param.variadic).collect();
            let first_default = positional.iter().position(|param| param.default.is_some());
            if let Some(first) = first_default {
                assert!(
                    positional[first..]
                        .iter()
                        .all(|param| param.default.is_some()),
                    "{}",
                    def.signature()
                );
            }
        }
    }

    #[test]
    fn every_builtin_has_a_one_line_doc() {
        for def in TABLE {
            let doc = def.doc();
            assert!(
                doc.ends_with('.') && !doc.contains('\n') && doc.len() < 160,
                "{}: {doc:?}",
                def.name()
            );
        }
    }

    #[test]
    fn signatures_render_as_calls() {
        let sum = function_def("sum").expect("sum");
        assert_eq!(sum.signature(), "sum(x, dim = none, keepdim = false)");
        assert!(sum.is_function() && sum.is_method());
        let item = method_def("item").expect("item");
        assert!(!item.is_function());
        assert!(function_def("item").is_none());
        let zeros = function_def("zeros").expect("zeros");
        let variadic: Vec<_> = zeros.params().filter(|param| param.variadic).collect();
        assert_eq!(variadic.len(), 1);
        assert_eq!(variadic[0].name, "sizes");
    }
}
