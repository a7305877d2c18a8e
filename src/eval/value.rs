//! Runtime values and their printed form (spec §8).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use super::builtins::Builtin;
use crate::backend::cpu;
use crate::dtype::{DType, format_f64};
use crate::graph::shape::{Dim, Meta};
use crate::source::{FileId, Span};
use crate::syntax::ast::FnDef;

/// A TSL value. Values are immutable; lists and tensors share their storage when copied.
#[derive(Clone)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<str>),
    List(Rc<[Value]>),
    Tensor(TensorValue),
    Function(Rc<Function>),
    Builtin(Builtin),
    Module(Rc<Module>),
    DType(DType),
}

impl Value {
    /// The kind of value, as type errors name it.
    pub fn kind(&self) -> String {
        match self {
            Value::None => "none".to_string(),
            Value::Bool(_) => "bool".to_string(),
            Value::Int(_) => "int".to_string(),
            Value::Float(_) => "float".to_string(),
            Value::Str(_) => "str".to_string(),
            Value::List(_) => "list".to_string(),
            Value::Tensor(tensor) => format!("tensor {}", tensor.meta()),
            Value::Function(_) | Value::Builtin(_) => "function".to_string(),
            Value::Module(_) => "module".to_string(),
            Value::DType(_) => "dtype".to_string(),
        }
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::from(items))
    }

    pub fn str(text: &str) -> Value {
        Value::Str(Rc::from(text))
    }
}

/// A tensor value: concrete data plus the dims `mark_dynamic` flagged for compilation.
#[derive(Clone)]
pub struct TensorValue(Rc<TensorCell>);

struct TensorCell {
    data: cpu::Tensor,
    dynamic_dims: Cell<u64>,
}

impl TensorValue {
    pub fn new(data: cpu::Tensor) -> TensorValue {
        TensorValue(Rc::new(TensorCell {
            data,
            dynamic_dims: Cell::new(0),
        }))
    }

    pub fn data(&self) -> &cpu::Tensor {
        &self.0.data
    }

    /// The data, without copying the reference when this value is its only holder (so a
    /// kernel may reuse the buffer).
    pub fn into_data(self) -> cpu::Tensor {
        match Rc::try_unwrap(self.0) {
            Ok(cell) => cell.data,
            Err(shared) => shared.data.clone(),
        }
    }

    pub fn dtype(&self) -> DType {
        self.0.data.dtype()
    }

    pub fn shape(&self) -> &[usize] {
        self.0.data.shape()
    }

    pub fn ndim(&self) -> usize {
        self.0.data.ndim()
    }

    pub fn meta(&self) -> Meta {
        Meta::new(
            self.dtype(),
            self.shape().iter().map(|d| Dim::from(*d)).collect(),
        )
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
}

impl Module {
    pub fn new(name: String, alias: Option<String>, file: FileId) -> Module {
        Module {
            name,
            alias,
            file,
            globals: RefCell::new(HashMap::new()),
            used_at: None,
        }
    }

    pub fn get(&self, name: &str) -> Option<Value> {
        self.globals.borrow().get(name).cloned()
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Str(text) => f.write_str(text),
            other => write_repr(f, other),
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_repr(f, self)
    }
}

/// The form a value takes inside a list: strings are quoted there.
fn write_repr(f: &mut fmt::Formatter<'_>, value: &Value) -> fmt::Result {
    match value {
        Value::None => f.write_str("none"),
        Value::Bool(b) => write!(f, "{b}"),
        Value::Int(i) => write!(f, "{i}"),
        Value::Float(x) => f.write_str(&format_f64(*x)),
        Value::Str(text) => write!(f, "{text:?}"),
        Value::List(items) => {
            f.write_str("[")?;
            for (position, item) in items.iter().enumerate() {
                if position > 0 {
                    f.write_str(", ")?;
                }
                write_repr(f, item)?;
            }
            f.write_str("]")
        }
        Value::Tensor(tensor) => f.write_str(&cpu::format_tensor(tensor.data())),
        Value::Function(function) => write!(f, "<fn {}>", function.qualified_name()),
        Value::Builtin(builtin) => write!(f, "<builtin {}>", builtin.name()),
        Value::Module(module) => write!(f, "<module {}>", module.name),
        Value::DType(dtype) => write!(f, "{dtype}"),
    }
}
