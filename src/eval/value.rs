//! Runtime values and their printed form (spec §8).

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use super::builtins::Builtin;
use crate::backend::{self, host};
use crate::dtype::{DType, format_f64};
use crate::graph::ir::{Template, ValueRef};
use crate::graph::shape::{Dim, Meta};
use crate::source::{FileId, Span};
use crate::sym::ExprId;
use crate::syntax::ast::FnDef;

/// A TSL value. Values are immutable; lists and tensors share their storage when copied.
#[derive(Clone)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<String>),
    List(Rc<[Value]>),
    Tensor(TensorValue),
    Function(Rc<Function>),
    Builtin(Builtin),
    Module(Rc<Module>),
    DType(DType),
    /// While tracing: an int that is a symbolic size expression.
    SymInt(ExprId),
    /// While tracing: a bool that is a symbolic condition on sizes.
    SymBool(ExprId),
    /// While tracing: a host float or bool known only when the graph runs (a one-element
    /// tensor of the graph, such as `item()` of an `f32`).
    RuntimeScalar(TensorValue),
    /// While tracing: a string with parts known only when the graph runs.
    Template(Rc<Template>),
}

impl Value {
    /// The kind of value, as type errors name it.
    pub fn kind(&self) -> String {
        match self {
            Value::None => "none".to_string(),
            Value::Bool(_) | Value::SymBool(_) => "bool".to_string(),
            Value::Int(_) | Value::SymInt(_) => "int".to_string(),
            Value::Float(_) => "float".to_string(),
            Value::Str(_) | Value::Template(_) => "str".to_string(),
            Value::List(_) => "list".to_string(),
            Value::Tensor(tensor) => format!("tensor {}", tensor.meta()),
            Value::Function(_) | Value::Builtin(_) => "function".to_string(),
            Value::Module(_) => "module".to_string(),
            Value::DType(_) => "dtype".to_string(),
            Value::RuntimeScalar(scalar) => match scalar.dtype() {
                DType::F32 => "float".to_string(),
                DType::I64 => "int".to_string(),
                DType::Bool => "bool".to_string(),
            },
        }
    }

    /// A size as a value: an int, or a symbolic int while tracing.
    pub fn from_dim(dim: Dim) -> Value {
        match dim {
            Dim::Known(value) => Value::Int(value),
            Dim::Sym(expr) => Value::SymInt(expr),
        }
    }

    /// The size an int value stands for.
    pub fn as_dim(&self) -> Option<Dim> {
        match self {
            Value::Int(value) => Some(Dim::Known(*value)),
            Value::SymInt(expr) => Some(Dim::Sym(*expr)),
            _ => None,
        }
    }

    /// Whether the value is a host number: an int, float or bool, known now, symbolic or read
    /// from data.
    pub fn is_number(&self) -> bool {
        matches!(
            self,
            Value::Int(_)
                | Value::Float(_)
                | Value::Bool(_)
                | Value::SymInt(_)
                | Value::SymBool(_)
                | Value::RuntimeScalar(_)
        )
    }

    /// Whether the value is a host float: known now, or read from data (an `f32`).
    pub fn is_float(&self) -> bool {
        match self {
            Value::Float(_) => true,
            Value::RuntimeScalar(tensor) => tensor.dtype() == crate::dtype::DType::F32,
            _ => false,
        }
    }

    /// Whether the value is only known symbolically (while tracing).
    pub fn is_symbolic(&self) -> bool {
        match self {
            Value::SymInt(_) | Value::SymBool(_) | Value::RuntimeScalar(_) | Value::Template(_) => {
                true
            }
            Value::Tensor(tensor) => tensor.is_fake(),
            Value::List(items) => {
                // Each list once: a list can hold another twice, so a walk of every item
                // would grow exponentially with the nesting.
                let mut seen = std::collections::HashSet::new();
                let mut pending: Vec<&Rc<[Value]>> = vec![items];
                while let Some(list) = pending.pop() {
                    for item in list.iter() {
                        match item {
                            Value::List(inner)
                                if seen.insert(Rc::as_ptr(inner).cast::<Value>()) =>
                            {
                                pending.push(inner);
                            }
                            Value::List(_) => {}
                            other if other.is_symbolic() => return true,
                            _ => {}
                        }
                    }
                }
                false
            }
            _ => false,
        }
    }

    /// What makes the lists in this value too big to walk item by item, if anything: more
    /// than `items` items in all (a list held twice counts twice, so items grow exponentially
    /// with the nesting) or nesting more than `depth` deep. The walk stops at the limit.
    pub fn lists_beyond(&self, items: usize, depth: usize) -> Option<String> {
        let Value::List(list) = self else {
            return None;
        };
        let mut open = vec![list.iter()];
        let mut count = 0;
        while let Some(level) = open.last_mut() {
            let Some(item) = level.next() else {
                open.pop();
                continue;
            };
            count += 1;
            if count > items {
                return Some(format!("hold more than {items} items"));
            }
            if let Value::List(inner) = item {
                if open.len() == depth {
                    return Some(format!("nest more than {depth} deep"));
                }
                open.push(inner.iter());
            }
        }
        None
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::from(items))
    }

    pub fn str(text: &str) -> Value {
        Value::Str(Rc::new(text.to_owned()))
    }

    /// A string value holding `text` itself: a long string built in memory asked for first
    /// becomes a value without a second copy.
    pub fn string(text: String) -> Value {
        Value::Str(Rc::new(text))
    }
}

/// A tensor value: concrete data (eagerly), or a value of the graph being traced with its
/// symbolic type; plus the dims `mark_dynamic` flagged for compilation.
#[derive(Clone)]
pub struct TensorValue(Rc<TensorCell>);

struct TensorCell {
    data: TensorData,
    dynamic_dims: Cell<u64>,
    /// The same value on the other device, once an operation there needed it: an upload of
    /// a host tensor, or the download of a GPU tensor. Values are immutable, so a weight
    /// passed to every call crosses to the GPU once, and a result is downloaded once.
    mirror: OnceCell<backend::Tensor>,
}

enum TensorData {
    Real(backend::Tensor),
    Fake { value: ValueRef, meta: Meta },
}

impl TensorValue {
    pub fn new(data: impl Into<backend::Tensor>) -> TensorValue {
        TensorValue::with(TensorData::Real(data.into()))
    }

    /// A tensor of the graph being traced.
    pub fn fake(value: ValueRef, meta: Meta) -> TensorValue {
        TensorValue::with(TensorData::Fake { value, meta })
    }

    fn with(data: TensorData) -> TensorValue {
        TensorValue(Rc::new(TensorCell {
            data,
            dynamic_dims: Cell::new(0),
            mirror: OnceCell::new(),
        }))
    }

    /// The concrete data; `None` for a traced tensor.
    pub fn real(&self) -> Option<&backend::Tensor> {
        match &self.0.data {
            TensorData::Real(tensor) => Some(tensor),
            TensorData::Fake { .. } => None,
        }
    }

    /// The graph value of a traced tensor.
    pub fn graph_value(&self) -> Option<ValueRef> {
        match &self.0.data {
            TensorData::Real(_) => None,
            TensorData::Fake { value, .. } => Some(*value),
        }
    }

    /// The value in host memory (`None` for a traced tensor): the tensor itself, or its
    /// download, kept for the next time.
    pub fn host(&self) -> Option<Result<host::Tensor, backend::KernelError>> {
        let data = self.real()?;
        if let Some(tensor) = data.as_host() {
            return Some(Ok(tensor.clone()));
        }
        if let Some(tensor) = self.mirror().and_then(backend::Tensor::as_host) {
            return Some(Ok(tensor.clone()));
        }
        Some(data.to_host().inspect(|tensor| {
            self.keep_mirror(backend::Tensor::Host(tensor.clone()));
        }))
    }

    /// The copy kept on the other device, if one was made.
    pub fn mirror(&self) -> Option<&backend::Tensor> {
        self.0.mirror.get()
    }

    /// Keeps `copy` as the value's copy on the other device.
    pub fn keep_mirror(&self, copy: backend::Tensor) {
        let _ = self.0.mirror.set(copy);
    }

    pub fn is_fake(&self) -> bool {
        self.graph_value().is_some()
    }

    /// The concrete data, without copying the reference when this value is its only holder
    /// (so a kernel may reuse the buffer). Only for concrete tensors.
    pub fn into_data(self) -> backend::Tensor {
        match Rc::try_unwrap(self.0) {
            Ok(TensorCell {
                data: TensorData::Real(tensor),
                ..
            }) => tensor,
            Ok(_) => unreachable!("only concrete tensors reach a kernel"),
            Err(shared) => match &shared.data {
                TensorData::Real(tensor) => tensor.clone(),
                TensorData::Fake { .. } => unreachable!("only concrete tensors reach a kernel"),
            },
        }
    }

    pub fn dtype(&self) -> DType {
        match &self.0.data {
            TensorData::Real(tensor) => tensor.dtype(),
            TensorData::Fake { meta, .. } => meta.dtype,
        }
    }

    /// The sizes, symbolic for a traced tensor.
    pub fn dims(&self) -> Vec<Dim> {
        match &self.0.data {
            TensorData::Real(tensor) => tensor.shape().iter().map(|d| Dim::from(*d)).collect(),
            TensorData::Fake { meta, .. } => meta.shape.clone(),
        }
    }

    pub fn ndim(&self) -> usize {
        match &self.0.data {
            TensorData::Real(tensor) => tensor.ndim(),
            TensorData::Fake { meta, .. } => meta.ndim(),
        }
    }

    pub fn meta(&self) -> Meta {
        Meta::new(self.dtype(), self.dims())
    }

    /// Whether two values are the same tensor object.
    pub fn same(&self, other: &TensorValue) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }

    /// Flags `dim` to be compiled with a symbolic size from the first trace on.
    pub fn mark_dynamic(&self, dim: usize) {
        let cell = &self.0.dynamic_dims;
        cell.set(cell.get() | (1u64 << dim.min(63)));
    }

    pub fn is_marked_dynamic(&self, dim: usize) -> bool {
        self.0.dynamic_dims.get() & (1u64 << dim.min(63)) != 0
    }
}

/// Options of `@compile(...)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// `Some(true)`: every input dim symbolic; `Some(false)`: always static; `None`: automatic.
    pub dynamic: Option<bool>,
}

/// A user-defined function and the module it was defined in.
pub struct Function {
    pub def: Rc<FnDef>,
    pub module: Rc<Module>,
    pub compile: Option<CompileOptions>,
    /// The compiled graphs of a `@compile` function.
    pub cache: RefCell<super::compile::cache::CompileCache>,
}

impl Function {
    pub fn name(&self) -> &str {
        &self.def.name.name
    }

    /// `nn.softmax` for std and imported modules, `f` in the main script.
    pub fn qualified_name(&self) -> String {
        match &self.module.alias {
            Some(alias) => format!("{alias}.{}", self.name()),
            None => self.name().to_string(),
        }
    }
}

/// A loaded module: its file and its global names.
pub struct Module {
    /// `std.nn`, a file path, or `<main>`.
    pub name: String,
    /// The name the user's code calls it by, for call traces.
    pub alias: Option<String>,
    pub file: FileId,
    pub globals: RefCell<HashMap<Rc<str>, Value>>,
    /// Where the module was first used, for circular-use errors.
    pub used_at: Option<Span>,
    /// Globals its top-level `let`s declare (known before they are assigned).
    declared: RefCell<Vec<Rc<str>>>,
}

impl Module {
    pub fn new(name: String, alias: Option<String>, file: FileId) -> Module {
        Module {
            name,
            alias,
            file,
            globals: RefCell::new(HashMap::new()),
            used_at: None,
            declared: RefCell::new(Vec::new()),
        }
    }

    /// Records the names a top-level `let` declares.
    pub fn declare(&self, target: &crate::syntax::ast::Target) {
        let mut declared = self.declared.borrow_mut();
        match target {
            crate::syntax::ast::Target::Name(name) => declared.push(name.name.clone()),
            crate::syntax::ast::Target::List { names, rest, .. } => {
                declared.extend(names.iter().chain(rest).map(|name| name.name.clone()));
            }
        }
    }

    pub fn declares(&self, name: &str) -> bool {
        self.declared
            .borrow()
            .iter()
            .any(|declared| &**declared == name)
    }

    /// The function defined under `name`.
    pub fn function(&self, name: &str) -> Option<Rc<Function>> {
        match self.get(name) {
            Some(Value::Function(function)) => Some(function),
            _ => None,
        }
    }

    /// The names of the module's functions, sorted.
    pub fn function_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .globals
            .borrow()
            .iter()
            .filter(|(_, value)| matches!(value, Value::Function(_)))
            .map(|(name, _)| name.to_string())
            .collect();
        names.sort();
        names
    }

    /// The module's `@compile` functions, in source order.
    pub fn compiled_functions(&self) -> Vec<Rc<Function>> {
        let mut functions: Vec<Rc<Function>> = self
            .globals
            .borrow()
            .values()
            .filter_map(|value| match value {
                Value::Function(function) if function.compile.is_some() => Some(function.clone()),
                _ => None,
            })
            .collect();
        functions.sort_by_key(|function| function.def.span.start);
        functions
    }

    pub fn get(&self, name: &str) -> Option<Value> {
        self.globals.borrow().get(name).cloned()
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Str(text) => f.write_str(text),
            other => write_shown(f, other),
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_shown(f, self)
    }
}

/// A value's form inside a list, or for a list whose text would be longer than
/// [`limits::LIST_LENGTH`] characters (lists can share items, so `[l, l]` doubles the text
/// of `l` in one step), a summary: a lower bound on the text's length that passes the limit
/// decides at once; otherwise the text is built up to the limit, never past it.
///
/// [`limits::LIST_LENGTH`]: super::limits::LIST_LENGTH
fn write_shown(f: &mut fmt::Formatter<'_>, value: &Value) -> fmt::Result {
    let Value::List(items) = value else {
        return write_repr(f, value);
    };
    let limit = super::limits::LIST_LENGTH;
    if least_text(items, 64, &mut HashMap::new()) <= limit as u64 {
        let mut text = Bounded {
            text: String::new(),
            room: limit,
        };
        if fmt::write(&mut text, format_args!("{}", Repr(value))).is_ok() {
            return f.write_str(&text.text);
        }
    }
    write!(
        f,
        "<list of {} items, longer than {limit} characters to show>",
        items.len()
    )
}

/// A lower bound on the length of the text of a list of `items`, found without writing it:
/// every item at least one character, and nested lists, to `depth` levels, counted in full,
/// each distinct list once (`[l, l]` costs no more than `l`).
fn least_text(items: &Rc<[Value]>, depth: usize, memo: &mut HashMap<*const Value, u64>) -> u64 {
    let key = Rc::as_ptr(items).cast::<Value>();
    if let Some(&known) = memo.get(&key) {
        return known;
    }
    let separators = 2 * items.len().saturating_sub(1) as u64;
    let mut length = 2 + separators;
    for item in items.iter() {
        let least = match item {
            Value::List(inner) if depth > 0 => least_text(inner, depth - 1, memo),
            Value::List(_) => 2,
            _ => 1,
        };
        length = length.saturating_add(least);
    }
    memo.insert(key, length);
    length
}

/// Text that refuses to grow past `room` more bytes.
struct Bounded {
    text: String,
    room: usize,
}

impl fmt::Write for Bounded {
    fn write_str(&mut self, part: &str) -> fmt::Result {
        self.room = self.room.checked_sub(part.len()).ok_or(fmt::Error)?;
        self.text.push_str(part);
        Ok(())
    }
}

/// Formats through [`write_repr`].
struct Repr<'a>(&'a Value);

impl fmt::Display for Repr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_repr(f, self.0)
    }
}

/// The form a value takes inside a list: strings are quoted there. Nested lists are walked
/// with a stack of the lists still open, not by recursion, so no nesting is too deep.
fn write_repr(f: &mut fmt::Formatter<'_>, value: &Value) -> fmt::Result {
    let mut open: Vec<(&[Value], usize)> = Vec::new();
    let mut current = value;
    loop {
        if let Value::List(items) = current {
            f.write_str("[")?;
            open.push((items, 0));
        } else {
            write_item(f, current)?;
        }
        // The next value to write, after closing the lists that are done.
        loop {
            let Some((items, next)) = open.last_mut() else {
                return Ok(());
            };
            if let Some(item) = items.get(*next) {
                if *next > 0 {
                    f.write_str(", ")?;
                }
                *next += 1;
                current = item;
                break;
            }
            f.write_str("]")?;
            open.pop();
        }
    }
}

/// The form of a value other than a list inside a list.
fn write_item(f: &mut fmt::Formatter<'_>, value: &Value) -> fmt::Result {
    match value {
        Value::None => f.write_str("none"),
        Value::Bool(b) => write!(f, "{b}"),
        Value::Int(i) => write!(f, "{i}"),
        Value::Float(x) => f.write_str(&format_f64(*x)),
        Value::Str(text) => write!(f, "{text:?}"),
        Value::List(_) => write_repr(f, value),
        Value::Tensor(tensor) => match tensor.host() {
            Some(Ok(host)) => f.write_str(&host::format_tensor(&host)),
            Some(Err(error)) => write!(f, "<tensor unavailable: {error}>"),
            None => write!(f, "<traced tensor {}>", tensor.meta()),
        },
        Value::Function(function) => write!(f, "<fn {}>", function.qualified_name()),
        Value::Builtin(builtin) => write!(f, "<builtin {}>", builtin.name()),
        Value::Module(module) => write!(f, "<module {}>", module.name),
        Value::DType(dtype) => write!(f, "{dtype}"),
        Value::SymInt(_) | Value::SymBool(_) | Value::RuntimeScalar(_) | Value::Template(_) => {
            f.write_str("<traced value>")
        }
    }
}
