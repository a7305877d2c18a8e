//! Call arguments, and binding them to a builtin's parameters with typed access.

use std::rc::Rc;

use super::value::{TensorValue, Value};
use super::{Interpreter, error};
use crate::diag::{Code, Diagnostic, Result};
use crate::dtype::{DType, Scalar};
use crate::graph::shape::Dim;
use crate::source::Span;

pub struct Positional {
    pub value: Value,
    pub span: Span,
}

pub struct Keyword {
    pub name: Rc<str>,
    pub value: Value,
    pub span: Span,
}

/// Evaluated arguments of one call.
pub struct CallArgs {
    pub positional: Vec<Positional>,
    pub keywords: Vec<Keyword>,
    /// The whole call expression.
    pub span: Span,
}

impl CallArgs {
    pub fn new(span: Span) -> CallArgs {
        CallArgs {
            positional: Vec::new(),
            keywords: Vec::new(),
            span,
        }
    }

    /// Binds to `params` in order. A parameter written `*name` collects the remaining
    /// positional arguments, and the parameters after it are keyword-only; every other
    /// parameter may be given by position or keyword.
    pub fn bind(self, function: &'static str, params: &'static [&'static str]) -> Result<Bound> {
        debug_assert!(
            super::builtins::binds_declared(function, params),
            "{function}() binds {params:?}, which its signature in the builtin table does not declare"
        );
        let variadic = params.iter().position(|param| param.starts_with('*'));
        let positional = variadic.unwrap_or(params.len());
        let mut slots: Vec<Option<(Value, Span)>> = vec![None; params.len()];
        let mut rest = Vec::new();
        for (position, arg) in self.positional.into_iter().enumerate() {
            if position < positional {
                slots[position] = Some((arg.value, arg.span));
            } else if variadic.is_some() {
                rest.push(arg);
            } else {
                return Err(error(
                    Code::TypeError,
                    arg.span,
                    format!(
                        "{function}() takes at most {positional} argument{}",
                        if positional == 1 { "" } else { "s" }
                    ),
                )
                .with_label("unexpected argument")
                .into());
            }
        }
        for keyword in self.keywords {
            let position = params
                .iter()
                .position(|param| !param.starts_with('*') && **param == *keyword.name);
            let Some(position) = position else {
                return Err(unknown_keyword(function, params, &keyword));
            };
            if slots[position].is_some() {
                return Err(error(
                    Code::TypeError,
                    keyword.span,
                    format!("{function}() got two values for `{}`", keyword.name),
                )
                .into());
            }
            slots[position] = Some((keyword.value, keyword.span));
        }
        Ok(Bound {
            function,
            params,
            slots,
            rest,
            span: self.span,
        })
    }
}

fn unknown_keyword(function: &str, params: &[&str], keyword: &Keyword) -> Box<Diagnostic> {
    let names: Vec<String> = params
        .iter()
        .filter(|p| !p.starts_with('*'))
        .map(|p| format!("`{p}`"))
        .collect();
    error(
        Code::NameError,
        keyword.span,
        format!("{function}() has no parameter `{}`", keyword.name),
    )
    .with_help(if names.is_empty() {
        format!("{function}() takes no keyword arguments")
    } else if let Some(hint) = crate::syntax::hints::keyword_argument(&keyword.name) {
        format!("{hint}; the parameters are {}", names.join(", "))
    } else {
        format!("its parameters are {}", names.join(", "))
    })
    .into()
}

/// Arguments bound to parameters, with typed accessors that report precise errors.
pub struct Bound {
    function: &'static str,
    params: &'static [&'static str],
    slots: Vec<Option<(Value, Span)>>,
    /// Positional arguments collected by a `*name` parameter.
    pub rest: Vec<Positional>,
    pub span: Span,
}

impl Bound {
    pub fn function(&self) -> &'static str {
        self.function
    }

    /// The argument for parameter `index`, if given (and not `none`).
    pub fn get(&self, index: usize) -> Option<&Value> {
        match &self.slots[index] {
            Some((Value::None, _)) | None => None,
            Some((value, _)) => Some(value),
        }
    }

    /// Where parameter `index`'s argument was written, or the call if it was not.
    pub fn span(&self, index: usize) -> Span {
        self.slots[index]
            .as_ref()
            .map_or(self.span, |(_, span)| *span)
    }

    pub fn required(&self, index: usize) -> Result<&Value> {
        self.get(index).ok_or_else(|| {
            error(
                Code::TypeError,
                self.span,
                format!(
                    "{}() is missing the argument `{}`",
                    self.function, self.params[index]
                ),
            )
            .into()
        })
    }

    /// A type error about parameter `index`.
    pub fn wrong(&self, index: usize, wanted: &str, got: &Value) -> Box<Diagnostic> {
        if let Value::RuntimeScalar(_) = got
            && eager_accepts(wanted, &got.kind())
        {
            // A host number known only when the compiled graph runs (arithmetic the size
            // reasoning cannot express, such as `&` on a value read from data).
            return error(
                Code::DataDependentInt,
                self.span(index),
                format!(
                    "{}() needs {wanted} for `{}`, got a number computed from data when the graph runs",
                    self.function, self.params[index],
                ),
            )
            .with_help(
                "sizes in compiled code combine input sizes and values read with item() by + - * // % ** min max; other arithmetic on them is only known at run time",
            )
            .into();
        }
        error(
            Code::TypeError,
            self.span(index),
            format!(
                "{}() needs {wanted} for `{}`, got {}",
                self.function,
                self.params[index],
                got.kind()
            ),
        )
        .into()
    }

    pub fn tensor(&self, index: usize) -> Result<TensorValue> {
        match self.required(index)? {
            Value::Tensor(tensor) => Ok(tensor.clone()),
            other => Err(self.wrong(index, "a tensor", other)),
        }
    }

    /// [`Bound::tensor`], moving the argument out so a temporary's buffer can be reused.
    pub fn take_tensor(&mut self, index: usize) -> Result<TensorValue> {
        let tensor = self.tensor(index)?;
        self.slots[index] = None;
        Ok(tensor)
    }

    /// An int that must be concrete; a symbolic int (while tracing) is guarded on or, if it
    /// depends on data, is a `data-dependent-int`.
    pub fn int(&self, interpreter: &mut Interpreter, index: usize) -> Result<i64> {
        let why = format!(
            "the `{}` argument of {}()",
            self.params[index], self.function
        );
        self.int_for(interpreter, index, &why)
    }

    /// [`Bound::int`], saying `why` the value must be concrete.
    pub fn int_for(&self, interpreter: &mut Interpreter, index: usize, why: &str) -> Result<i64> {
        let value = self.required(index)?;
        match interpreter.concrete(value, self.span(index), why)? {
            Some(value) => Ok(value),
            None => Err(self.wrong(index, "an int", value)),
        }
    }

    pub fn int_or(&self, interpreter: &mut Interpreter, index: usize, default: i64) -> Result<i64> {
        match self.get(index) {
            None => Ok(default),
            Some(_) => self.int(interpreter, index),
        }
    }

    /// A size: an int, or a symbolic int while tracing.
    pub fn size(&self, index: usize) -> Result<Dim> {
        let value = self.required(index)?;
        value
            .as_dim()
            .ok_or_else(|| self.wrong(index, "an int", value))
    }

    pub fn bool_or(&self, index: usize, default: bool) -> Result<bool> {
        match self.get(index) {
            None => Ok(default),
            Some(Value::Bool(value)) => Ok(*value),
            Some(other) => Err(self.wrong(index, "a bool", other)),
        }
    }

    pub fn string(&self, index: usize) -> Result<Rc<String>> {
        match self.required(index)? {
            Value::Str(text) => Ok(text.clone()),
            other => Err(self.wrong(index, "a string", other)),
        }
    }

    pub fn dtype(&self, index: usize) -> Result<Option<DType>> {
        match self.get(index) {
            None => Ok(None),
            Some(Value::DType(dtype)) => Ok(Some(*dtype)),
            Some(other) => Err(self.wrong(index, "a dtype (f32, i64 or bool)", other)),
        }
    }

    /// A dimension index for a tensor of `ndim` dimensions; negative values count from the end.
    pub fn dim(&self, interpreter: &mut Interpreter, index: usize, ndim: usize) -> Result<usize> {
        let value = self.int(interpreter, index)?;
        normalize_dim(value, ndim, self.span(index))
    }

    pub fn dim_or(
        &self,
        interpreter: &mut Interpreter,
        index: usize,
        ndim: usize,
        default: i64,
    ) -> Result<usize> {
        let value = self.int_or(interpreter, index, default)?;
        normalize_dim(value, ndim, self.span(index))
    }

    /// A list of sizes given for parameter `index`.
    pub fn size_list(&self, index: usize) -> Result<Vec<Dim>> {
        let value = self.required(index)?;
        let Value::List(items) = value else {
            return Err(self.wrong(index, "a list of ints", value));
        };
        items
            .iter()
            .map(|item| {
                item.as_dim()
                    .ok_or_else(|| self.wrong(index, "a list of ints", item))
            })
            .collect()
    }

    /// Sizes given as separate ints (`zeros(2, 3)`) after the fixed parameters, or as one list
    /// (`zeros([2, 3])`).
    pub fn sizes(&self) -> Result<Vec<Dim>> {
        let values: Vec<(&Value, Span)> = match self.rest.as_slice() {
            [
                Positional {
                    value: Value::List(items),
                    span,
                },
            ] => items.iter().map(|item| (item, *span)).collect(),
            rest => rest.iter().map(|arg| (&arg.value, arg.span)).collect(),
        };
        values
            .into_iter()
            .map(|(value, span)| match value.as_dim() {
                Some(size) => Ok(size),
                None => Err(error(
                    Code::TypeError,
                    span,
                    format!(
                        "{}() sizes must be ints, got {}",
                        self.function,
                        value.kind()
                    ),
                )
                .into()),
            })
            .collect()
    }
}

/// The scalar a value stands for when it meets a tensor (a concrete one).
pub fn scalar_of(value: &Value) -> Option<Scalar> {
    match value {
        Value::Bool(b) => Some(Scalar::Bool(*b)),
        Value::Int(i) => Some(Scalar::Int(*i)),
        Value::Float(x) => Some(Scalar::Float(*x)),
        _ => None,
    }
}

/// Wraps a possibly negative dimension index into `0..ndim`.
pub fn normalize_dim(dim: i64, ndim: usize, span: Span) -> Result<usize> {
    let rank = ndim as i64;
    let wrapped = if dim < 0 { dim + rank } else { dim };
    if (0..rank).contains(&wrapped) {
        return Ok(wrapped as usize);
    }
    let expected = if ndim == 0 {
        "a 0-d tensor has no dimensions".to_string()
    } else {
        format!("expected {} to {}", -rank, rank - 1)
    };
    Err(error(
        Code::ShapeError,
        span,
        format!("dimension {dim} is out of range for a {ndim}-d tensor"),
    )
    .with_label(expected)
    .into())
}

/// Whether an argument described as `wanted` (as [`Bound::wrong`] words it, for the argument
/// or for an item of it) takes a host number of `kind` (`int`, `float` or `bool`) in eager
/// code. When it does not, a number computed from data is the type error eager code reports;
/// when it does, the compiled call fails only because the number is not known while tracing.
fn eager_accepts(wanted: &str, kind: &str) -> bool {
    wanted
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| {
            word == "number" || word == "numbers" || word.strip_suffix('s').unwrap_or(word) == kind
        })
}
