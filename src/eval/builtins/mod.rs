//! Builtin functions and tensor methods (spec §5), one table for both.
//!
//! A builtin callable as a method (`x.sum(dim = 0)`) receives the tensor as its first
//! argument, so every tensor operation is written once for both forms.

mod core;
mod creation;
mod data;
mod math;
mod shape;

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

pub struct Def {
    name: &'static str,
    run: Run,
    form: Form,
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

const fn def(name: &'static str, form: Form, run: Run) -> Def {
    Def { name, run, form }
}

use Form::{Both, Function, Method};

static TABLE: &[Def] = &[
    // values and control
    def("print", Function, core::print),
    def("len", Function, core::len),
    def("range", Function, core::range),
    def("enumerate", Function, core::enumerate),
    def("zip", Function, core::zip),
    def("int", Function, core::int),
    def("float", Both, core::float),
    def("str", Function, core::str),
    def("min", Both, core::min),
    def("max", Both, core::max),
    def("abs", Both, core::abs),
    def("seed", Function, core::seed),
    // tracing helpers (their eager meaning)
    def("is_compiling", Function, core::is_compiling),
    def("size_oblivious", Function, core::size_oblivious),
    def("guard_or_false", Function, core::guard_or_false),
    def("guard_or_true", Function, core::guard_or_true),
    def("known_true", Function, core::known_true),
    def("cond", Function, core::cond),
    def("mark_dynamic", Function, core::mark_dynamic),
    // creation and files
    def("tensor", Function, creation::tensor),
    def("zeros", Function, creation::zeros),
    def("ones", Function, creation::ones),
    def("full", Function, creation::full),
    def("arange", Function, creation::arange),
    def("randn", Function, creation::randn),
    def("load", Function, creation::load),
    def("save", Both, creation::save),
    // properties
    def("size", Method, shape::size),
    def("numel", Both, shape::numel),
    def("dim", Method, shape::dim),
    // elementwise
    def("exp", Both, math::exp),
    def("log", Both, math::log),
    def("sqrt", Both, math::sqrt),
    def("relu", Both, math::relu),
    def("sigmoid", Both, math::sigmoid),
    def("tanh", Both, math::tanh),
    def("neg", Both, math::neg),
    def("maximum", Both, math::maximum),
    def("minimum", Both, math::minimum),
    def("where", Function, math::where_),
    def("clamp", Both, math::clamp),
    def("long", Method, math::long),
    def("bool", Method, math::bool),
    def("to", Method, math::to),
    // reductions and scans
    def("sum", Both, math::sum),
    def("mean", Both, math::mean),
    def("prod", Both, math::prod),
    def("all", Both, math::all),
    def("any", Both, math::any),
    def("argmax", Both, math::argmax),
    def("argmin", Both, math::argmin),
    def("cumsum", Both, math::cumsum),
    def("diff", Both, math::diff),
    def("matmul", Both, math::matmul),
    // shape
    def("reshape", Both, shape::reshape),
    def("view", Both, shape::reshape),
    def("flatten", Both, shape::flatten),
    def("unsqueeze", Both, shape::unsqueeze),
    def("squeeze", Both, shape::squeeze),
    def("transpose", Both, shape::transpose),
    def("permute", Both, shape::permute),
    def("expand", Both, shape::expand),
    def("cat", Function, shape::cat),
    def("stack", Function, shape::stack),
    def("split", Both, shape::split),
    def("tensor_split", Both, shape::tensor_split),
    def("narrow", Both, shape::narrow),
    def("index_select", Both, shape::index_select),
    def("gather", Both, shape::gather),
    // data-dependent
    def("item", Method, data::item),
    def("tolist", Method, data::tolist),
    def("nonzero", Both, data::nonzero),
    def("masked_select", Both, data::masked_select),
    def("repeat_interleave", Both, data::repeat_interleave),
    def("unique", Both, data::unique),
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
