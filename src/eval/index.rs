//! Indexing and slicing: Python semantics for lists, PyTorch semantics for tensors.

use super::tensor::Operand;
use super::value::{TensorValue, Value};
use super::{Interpreter, error};
use crate::backend::host;
use crate::diag::{Code, Result};
use crate::dtype::DType;
use crate::graph::op::{IndexSpec, Op};
use crate::graph::shape::{Dim, python_slice_length};
use crate::source::Span;
use crate::syntax::ast::{Expr, IndexItem};

/// An index item after evaluation.
enum Item {
    Value(Value, Span),
    Slice {
        start: Option<Dim>,
        stop: Option<Dim>,
        step: i64,
        span: Span,
    },
    Ellipsis(Span),
}

impl Interpreter {
    pub(super) fn eval_index(
        &mut self,
        value: Value,
        items: &[IndexItem],
        span: Span,
    ) -> Result<Value> {
        let items = items
            .iter()
            .map(|item| self.eval_index_item(item))
            .collect::<Result<Vec<_>>>()?;
        match &value {
            Value::List(list) => {
                let items = self.concrete_items(items)?;
                index_list(list, &items, span)
            }
            Value::Tensor(tensor) => self.index_tensor(tensor, items, span),
            other => Err(error(
                Code::TypeError,
                span,
                format!("cannot index {}", other.kind()),
            )
            .into()),
        }
    }

    fn eval_index_item(&mut self, item: &IndexItem) -> Result<Item> {
        Ok(match item {
            IndexItem::Expr(expr) => Item::Value(self.eval(expr)?, expr.span),
            IndexItem::Slice {
                start,
                stop,
                step,
                span,
            } => {
                let step = match step {
                    Some(step) => self.slice_bound(step)?,
                    None => None,
                };
                let step = match step {
                    Some(Dim::Known(step)) => step,
                    Some(Dim::Sym(expr)) => {
                        self.concrete_int(expr, item_span(item), "a slice step")?
                    }
                    None => 1,
                };
                if step <= 0 {
                    let span = item_span(item);
                    return Err(error(Code::ValueError, span, "slice step must be positive")
                        .with_help("negative steps are not supported, as in PyTorch")
                        .into());
                }
                Item::Slice {
                    start: self.optional_bound(start.as_ref())?,
                    stop: self.optional_bound(stop.as_ref())?,
                    step,
                    span: *span,
                }
            }
            IndexItem::Ellipsis(span) => Item::Ellipsis(*span),
        })
    }

    fn optional_bound(&mut self, bound: Option<&Expr>) -> Result<Option<Dim>> {
        match bound {
            Some(expr) => self.slice_bound(expr),
            None => Ok(None),
        }
    }

    fn slice_bound(&mut self, expr: &Expr) -> Result<Option<Dim>> {
        match self.eval(expr)? {
            Value::None => Ok(None),
            value if value.as_dim().is_some() => Ok(value.as_dim()),
            other => Err(error(
                Code::TypeError,
                expr.span,
                format!("slice bounds must be ints, got {}", other.kind()),
            )
            .into()),
        }
    }

    fn index_tensor(
        &mut self,
        tensor: &TensorValue,
        items: Vec<Item>,
        span: Span,
    ) -> Result<Value> {
        let mut specs = Vec::new();
        let mut operands = vec![Operand::Tensor(tensor.clone())];
        let mut ellipsis = None;
        for item in items {
            match item {
                Item::Slice {
                    start, stop, step, ..
                } => specs.push(IndexSpec::Slice { start, stop, step }),
                Item::Ellipsis(at) => {
                    if ellipsis.replace(specs.len()).is_some() {
                        return Err(error(Code::SyntaxError, at, "only one `...` per index").into());
                    }
                }
                Item::Value(value, at) => {
                    specs.push(self.index_spec(value, at, &mut operands)?);
                }
            }
        }
        if let Some(position) = ellipsis {
            let consumed: usize = specs.iter().map(consumed_dims).sum();
            let missing = tensor.ndim().saturating_sub(consumed);
            let full = IndexSpec::Slice {
                start: None,
                stop: None,
                step: 1,
            };
            specs.splice(position..position, std::iter::repeat_n(full, missing));
        }
        self.apply_one(Op::Index { items: specs }, operands, span)
    }

    fn index_spec(
        &mut self,
        value: Value,
        at: Span,
        operands: &mut Vec<Operand>,
    ) -> Result<IndexSpec> {
        let tensor = match value {
            Value::Int(_) | Value::SymInt(_) => {
                return Ok(IndexSpec::Int(value.as_dim().expect("an int")));
            }
            Value::None => return Ok(IndexSpec::NewAxis),
            Value::Tensor(tensor) => tensor,
            Value::List(items) => self.list_to_index(&items, at)?,
            other => {
                return Err(error(
                    Code::TypeError,
                    at,
                    format!("cannot index a tensor with {}", other.kind()),
                )
                .with_help("index with ints, slices, `...`, none, a bool mask or an i64 tensor")
                .into());
            }
        };
        let spec = match tensor.dtype() {
            DType::Bool => IndexSpec::Mask {
                dims: tensor.ndim(),
            },
            DType::I64 => IndexSpec::Indices {
                ndim: tensor.ndim(),
            },
            DType::F32 => {
                return Err(
                    error(Code::TypeError, at, "cannot index with an f32 tensor")
                        .with_help("convert the indices with .long()")
                        .into(),
                );
            }
        };
        operands.push(Operand::Tensor(tensor));
        Ok(spec)
    }

    /// List indexing needs concrete positions: symbolic ones are guarded on or are
    /// data-dependent (spec §6).
    fn concrete_items(&mut self, items: Vec<Item>) -> Result<Vec<Item>> {
        let concrete =
            |this: &mut Interpreter, bound: Option<Dim>, span: Span| -> Result<Option<Dim>> {
                Ok(match bound {
                    Some(Dim::Sym(expr)) => {
                        Some(Dim::Known(this.concrete_int(expr, span, "a list index")?))
                    }
                    other => other,
                })
            };
        items
            .into_iter()
            .map(|item| {
                Ok(match item {
                    Item::Value(Value::SymInt(expr), at) => {
                        Item::Value(Value::Int(self.concrete_int(expr, at, "a list index")?), at)
                    }
                    Item::Slice {
                        start,
                        stop,
                        step,
                        span,
                    } => Item::Slice {
                        start: concrete(self, start, span)?,
                        stop: concrete(self, stop, span)?,
                        step,
                        span,
                    },
                    other => other,
                })
            })
            .collect()
    }

    fn list_to_index(&mut self, items: &[Value], at: Span) -> Result<TensorValue> {
        if items.iter().any(Value::is_symbolic) {
            let list = Value::list(items.to_vec());
            return match super::builtins::symbolic_tensor(self, &list, Some(DType::I64), at)? {
                Value::Tensor(tensor) => Ok(tensor),
                _ => unreachable!("symbolic_tensor makes a tensor"),
            };
        }
        let positions = items
            .iter()
            .map(|item| match item {
                Value::Int(position) => Ok(crate::dtype::Scalar::Int(*position)),
                other => Err(error(
                    Code::TypeError,
                    at,
                    format!("an index list must hold ints, got {}", other.kind()),
                )
                .into()),
            })
            .collect::<Result<Vec<_>>>()?;
        let tensor = host::from_elements(&[positions.len()], &positions, Some(DType::I64))
            .map_err(|e| super::tensor::kernel_error(&e, at))?;
        Ok(TensorValue::new(tensor))
    }
}

fn consumed_dims(spec: &IndexSpec) -> usize {
    match spec {
        IndexSpec::NewAxis => 0,
        IndexSpec::Mask { dims } => *dims,
        _ => 1,
    }
}

fn item_span(item: &IndexItem) -> Span {
    match item {
        IndexItem::Expr(expr) => expr.span,
        IndexItem::Slice { span, .. } | IndexItem::Ellipsis(span) => *span,
    }
}

fn index_list(list: &[Value], items: &[Item], span: Span) -> Result<Value> {
    let [item] = items else {
        return Err(error(Code::TypeError, span, "a list takes one index").into());
    };
    let length = list.len() as i64;
    match item {
        Item::Value(Value::Int(position), at) => {
            let wrapped = if *position < 0 {
                position + length
            } else {
                *position
            };
            if !(0..length).contains(&wrapped) {
                return Err(error(
                    Code::ValueError,
                    *at,
                    format!("list index {position} is out of range for a list of length {length}"),
                )
                .into());
            }
            Ok(list[wrapped as usize].clone())
        }
        Item::Slice {
            start, stop, step, ..
        } => {
            let start = start.and_then(Dim::known);
            let stop = stop.and_then(Dim::known);
            let count =
                python_slice_length(start.unwrap_or(0), stop.unwrap_or(length), *step, length);
            let first = match start {
                Some(start) if start < 0 => (start + length).max(0),
                Some(start) => start.min(length),
                None => 0,
            };
            let picked = (0..count)
                .map(|k| list[(first + k * step) as usize].clone())
                .collect();
            Ok(Value::list(picked))
        }
        Item::Value(other, at) => Err(error(
            Code::TypeError,
            *at,
            format!("list indices must be ints, got {}", other.kind()),
        )
        .into()),
        Item::Ellipsis(at) => {
            Err(error(Code::TypeError, *at, "cannot index a list with `...`").into())
        }
    }
}
