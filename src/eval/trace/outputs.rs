//! From traced values to what the graph records: the function's returned value, and the
//! templates that `print` and check messages become (formatted when the graph runs).

use crate::diag::{Code, Result};
use crate::dtype::format_f64;
use crate::eval::value::Value;
use crate::eval::{Interpreter, error};
use crate::graph::ir::{Output, Part, Template};
use crate::graph::shape::Dim;
use crate::source::Span;

impl Interpreter {
    /// The graph output standing for a returned value.
    pub(in crate::eval) fn output_of(&mut self, value: &Value, span: Span) -> Result<Output> {
        let items = crate::eval::limits::TRACED_LIST_LENGTH;
        if let Some(problem) = value.lists_beyond(items, super::inputs::LIST_DEPTH) {
            return Err(error(
                Code::ValueError,
                span,
                format!("the lists a compiled function returns {problem}"),
            )
            .with_help(
                "each item of a returned list is an output of the graph: return a tensor instead",
            )
            .into());
        }
        self.output_tree(value, span)
    }

    /// [`Interpreter::output_of`] for a value whose lists are within the limits.
    fn output_tree(&mut self, value: &Value, span: Span) -> Result<Output> {
        Ok(match value {
            Value::None => Output::None,
            Value::Bool(b) => Output::Bool(*b),
            Value::Int(i) => Output::Int(Dim::Known(*i)),
            Value::Float(x) => Output::Float(*x),
            Value::Str(text) => Output::Str(text.to_string()),
            Value::SymInt(expr) => Output::Int(Dim::Sym(*expr)),
            Value::SymBool(expr) => Output::SymBool(*expr),
            Value::Template(template) => Output::Template((**template).clone()),
            Value::RuntimeScalar(tensor) | Value::Tensor(tensor) => {
                let tracer = self.tracer.as_mut().expect("tracing");
                let graph_value = tracer.tensor_arg(tensor, span);
                if matches!(value, Value::Tensor(_)) {
                    Output::Tensor(graph_value)
                } else {
                    Output::Scalar(graph_value)
                }
            }
            Value::List(items) => Output::List(
                items
                    .iter()
                    .map(|item| self.output_tree(item, span))
                    .collect::<Result<_>>()?,
            ),
            other => {
                return Err(error(
                    Code::TypeError,
                    span,
                    format!("a compiled function cannot return {}", other.kind()),
                )
                .with_help("return tensors, numbers, strings or lists of them")
                .into());
            }
        })
    }

    /// The template printing `values` separated by spaces, as `print` would.
    pub(in crate::eval) fn template_of(&mut self, values: &[Value], span: Span) -> Template {
        let mut parts = Vec::new();
        for (position, value) in values.iter().enumerate() {
            if position > 0 {
                parts.push(Part::Text(" ".to_string()));
            }
            // A list known now prints as eager code prints it (long ones summarised); one
            // with parts known only when the graph runs is a template item by item.
            let items = crate::eval::limits::TRACED_LIST_LENGTH;
            match value {
                Value::List(_) if !value.is_symbolic() => {
                    parts.push(Part::Text(value.to_string()));
                }
                Value::List(list) => match value.lists_beyond(items, super::inputs::LIST_DEPTH) {
                    Some(problem) => parts.push(Part::Text(format!(
                        "<list of {} items, whose lists {problem} to show in a compiled function>",
                        list.len()
                    ))),
                    None => self.append_parts(&mut parts, value, false, span),
                },
                _ => self.append_parts(&mut parts, value, false, span),
            }
        }
        Template(merge_text(parts))
    }

    fn append_parts(&mut self, parts: &mut Vec<Part>, value: &Value, in_list: bool, span: Span) {
        match value {
            Value::SymInt(expr) => parts.push(Part::Int(Dim::Sym(*expr))),
            Value::SymBool(expr) => parts.push(Part::Bool(*expr)),
            Value::RuntimeScalar(tensor) => {
                let tracer = self.tracer.as_mut().expect("tracing");
                parts.push(Part::Scalar(tracer.tensor_arg(tensor, span)));
            }
            Value::Tensor(tensor) if tensor.is_fake() => {
                let tracer = self.tracer.as_mut().expect("tracing");
                parts.push(Part::Tensor(tracer.tensor_arg(tensor, span)));
            }
            Value::Template(template) => parts.extend(template.0.iter().cloned()),
            Value::List(items) => {
                parts.push(Part::Text("[".to_string()));
                for (position, item) in items.iter().enumerate() {
                    if position > 0 {
                        parts.push(Part::Text(", ".to_string()));
                    }
                    self.append_parts(parts, item, true, span);
                }
                parts.push(Part::Text("]".to_string()));
            }
            Value::Str(text) if in_list => parts.push(Part::Text(format!("{text:?}"))),
            Value::Float(x) => parts.push(Part::Text(format_f64(*x))),
            other => parts.push(Part::Text(if in_list {
                format!("{other:?}")
            } else {
                other.to_string()
            })),
        }
    }

    /// `str(value)`: the text `print` shows for it. While tracing, the parts known only when
    /// the graph runs (sizes and numbers from data, tensors) are filled in then, as `print`
    /// fills them.
    pub(in crate::eval) fn text_of(&mut self, value: &Value, span: Span) -> Value {
        if self.tracer.is_none() {
            return Value::str(&value.to_string());
        }
        let mut parts = Vec::new();
        self.append_parts(&mut parts, value, false, span);
        Self::string_value(parts)
    }

    /// A string value from parts: a plain string when every part is known now.
    pub(in crate::eval) fn string_value(parts: Vec<Part>) -> Value {
        let mut parts = merge_text(parts);
        match parts.as_mut_slice() {
            [] => Value::str(""),
            [Part::Text(text)] => Value::string(std::mem::take(text)),
            _ => Value::Template(std::rc::Rc::new(Template(parts))),
        }
    }
}

/// Joins neighbouring text parts.
fn merge_text(parts: Vec<Part>) -> Vec<Part> {
    let mut merged: Vec<Part> = Vec::new();
    for part in parts {
        if let (Some(Part::Text(previous)), Part::Text(text)) = (merged.last_mut(), &part) {
            previous.push_str(text);
            continue;
        }
        merged.push(part);
    }
    merged
}
