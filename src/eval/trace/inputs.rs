//! From a call's arguments to the graph's inputs (spec §6): every tensor argument becomes an
//! input node whose sizes are constants or backed symbols, every int argument a constant or a
//! backed symbol. Sizes 0 and 1 are always specialised; equal sizes share one symbol (duck
//! sizing). Without argument values (`tsl check`, `tsl graph`), annotations give the types and
//! named dims become symbols with no hint.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::diag::{Code, Diagnostic, Result};
use crate::eval::Interpreter;
use crate::eval::value::{Function, TensorValue, Value};
use crate::graph::ir::{ArgumentPath, InputSource, NodeKind, ValueRef};
use crate::graph::shape::{Dim, Meta};
use crate::source::Span;
use crate::sym::{NEG_INF, POS_INF, Range, SymbolId};
use crate::syntax::ast::{DimAnn, TypeKind};

/// Which argument sizes become symbols in a trace.
#[derive(Clone, Debug, Default)]
pub struct DynamicPolicy {
    /// Every size (`@compile(dynamic = true)`).
    pub all: bool,
    /// No size, whatever `mark_dynamic` says (`@compile(dynamic = false)`).
    pub never: bool,
    /// These tensor sizes, by argument path and dimension (automatic dynamic).
    pub dims: HashSet<(ArgumentPath, usize)>,
    /// These int arguments (automatic dynamic).
    pub ints: HashSet<ArgumentPath>,
}

/// How to trace a function.
#[derive(Clone, Debug, Default)]
pub struct TraceRequest {
    pub policy: DynamicPolicy,
}

/// The synthetic hint of a symbol with no value; never used to decide anything, because a
/// trace without hints intercepts every question that would read it.
const NO_HINT: i64 = 1 << 40;

/// Symbols already made for a hint (duck sizing) or a dim name.
#[derive(Default)]
struct SymbolTable {
    by_hint: HashMap<i64, SymbolId>,
    by_name: HashMap<String, SymbolId>,
}

/// How deep the lists in a compiled function's arguments and result may nest.
pub(in crate::eval) const LIST_DEPTH: usize = 1000;

/// Refuses an argument of a compiled function whose lists hold more than
/// [`limits::TRACED_LIST_LENGTH`] items in all, or nest more than [`LIST_DEPTH`] deep: every
/// item is an input the trace guards on.
///
/// [`limits::TRACED_LIST_LENGTH`]: crate::eval::limits::TRACED_LIST_LENGTH
pub(in crate::eval) fn check_argument_lists(
    function: &Function,
    arguments: &[(Value, Span)],
) -> Result<()> {
    let items = crate::eval::limits::TRACED_LIST_LENGTH;
    for (value, span) in arguments {
        if let Some(problem) = value.lists_beyond(items, LIST_DEPTH) {
            return Err(Diagnostic::error(
                Code::ValueError,
                *span,
                format!(
                    "the lists passed to compiled `{}` {problem}",
                    function.qualified_name()
                ),
            )
            .with_help("each item of a list argument is an input the trace guards on: pass the values as a tensor, or call the function without @compile")
            .into());
        }
    }
    Ok(())
}

impl Interpreter {
    /// Turns concrete arguments into traced ones, recording input nodes and symbol sources.
    pub(in crate::eval) fn trace_arguments(
        &mut self,
        names: &[String],
        values: Vec<Value>,
        policy: &DynamicPolicy,
    ) -> Vec<Value> {
        let mut table = SymbolTable::default();
        values
            .into_iter()
            .enumerate()
            .map(|(index, value)| {
                let name = names.get(index).cloned().unwrap_or_default();
                self.trace_argument(&name, vec![index], value, policy, &mut table)
            })
            .collect()
    }

    fn trace_argument(
        &mut self,
        name: &str,
        path: ArgumentPath,
        value: Value,
        policy: &DynamicPolicy,
        table: &mut SymbolTable,
    ) -> Value {
        match value {
            Value::Tensor(tensor) if tensor.real().is_some() => {
                Value::Tensor(self.trace_tensor(name, path, &tensor, policy, table))
            }
            Value::Int(value)
                if !policy.never
                    && (policy.all || policy.ints.contains(&path))
                    && !(0..=1).contains(&value) =>
            {
                let tracer = self.tracer.as_mut().expect("tracing");
                let expr =
                    tracer
                        .graph
                        .env
                        .backed_symbol(value, name, Range::new(NEG_INF, POS_INF));
                let symbol = tracer.graph.env.as_symbol(expr).expect("a new symbol");
                tracer
                    .graph
                    .backed
                    .push((symbol, InputSource::Int { path }));
                Value::SymInt(expr)
            }
            Value::List(items) => Value::list(
                items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| {
                        let mut inner = path.clone();
                        inner.push(index);
                        self.trace_argument(
                            &format!("{name}[{index}]"),
                            inner,
                            item.clone(),
                            policy,
                            table,
                        )
                    })
                    .collect(),
            ),
            other => other,
        }
    }

    fn trace_tensor(
        &mut self,
        name: &str,
        path: ArgumentPath,
        tensor: &TensorValue,
        policy: &DynamicPolicy,
        table: &mut SymbolTable,
    ) -> TensorValue {
        let tracer = self.tracer.as_mut().expect("tracing");
        let mut shape = Vec::new();
        for (dim, size) in tensor.dims().into_iter().enumerate() {
            let size = size.known().expect("arguments are concrete");
            let dynamic = !policy.never
                && (policy.all
                    || policy.dims.contains(&(path.clone(), dim))
                    || tensor.is_marked_dynamic(dim));
            if !dynamic || (0..=1).contains(&size) {
                shape.push(Dim::Known(size));
                continue;
            }
            let symbol = *table.by_hint.entry(size).or_insert_with(|| {
                let source = format!("{name}.size({dim})");
                let expr = tracer
                    .graph
                    .env
                    .backed_symbol(size, source, Range::new(2, POS_INF));
                tracer.graph.env.as_symbol(expr).expect("a new symbol")
            });
            tracer.graph.backed.push((
                symbol,
                InputSource::TensorDim {
                    path: path.clone(),
                    dim,
                },
            ));
            shape.push(Dim::Sym(tracer.graph.env.symbol_expr(symbol)));
        }
        let meta = Meta::new(tensor.dtype(), shape);
        self.input_node(name, path, meta, Span::default())
    }

    fn input_node(
        &mut self,
        name: &str,
        path: ArgumentPath,
        meta: Meta,
        span: Span,
    ) -> TensorValue {
        let tracer = self.tracer.as_mut().expect("tracing");
        let kind = NodeKind::Input {
            path,
            name: name.to_string(),
        };
        let id = tracer.push(kind, Vec::new(), vec![meta.clone()], span, Vec::new());
        TensorValue::fake(ValueRef::first(id), meta)
    }

    /// Arguments made from a function's annotations alone, for a trace without hints: named
    /// dims become symbols (at least 2, as compiled sizes 0 and 1 are specialised), shared by
    /// every parameter that names them.
    pub(in crate::eval) fn arguments_from_annotations(
        &mut self,
        function: &Rc<Function>,
    ) -> Result<Vec<Value>> {
        let mut table = SymbolTable::default();
        let mut values = Vec::new();
        for (index, param) in function.def.params.iter().enumerate() {
            let name = param.name.name.to_string();
            let value = match (&param.annotation, &param.default) {
                (Some(annotation), _) => self.annotated_argument(
                    &name,
                    index,
                    &annotation.kind,
                    annotation.span,
                    &mut table,
                )?,
                (None, Some(default)) => self.eval_default(function, default)?,
                (None, None) => {
                    let missing = Interpreter::unannotated_parameter(function)
                        .expect("a parameter without annotation or default");
                    return Err(missing.into());
                }
            };
            values.push(value);
        }
        Ok(values)
    }

    fn annotated_argument(
        &mut self,
        name: &str,
        index: usize,
        kind: &TypeKind,
        span: Span,
        table: &mut SymbolTable,
    ) -> Result<Value> {
        match kind {
            TypeKind::Tensor {
                dtype,
                dims: Some(dims),
            } => {
                let shape = dims
                    .iter()
                    .enumerate()
                    .map(|(dim, annotation)| {
                        self.annotated_dim(name, index, dim, annotation, table)
                    })
                    .collect();
                let meta = Meta::new(*dtype, shape);
                Ok(Value::Tensor(self.input_node(
                    name,
                    vec![index],
                    meta,
                    span,
                )))
            }
            TypeKind::Int => {
                let symbol = self.hintless_symbol(
                    name,
                    table,
                    Range::new(NEG_INF, POS_INF),
                    InputSource::Int { path: vec![index] },
                );
                Ok(Value::SymInt(self.env().symbol_expr(symbol)))
            }
            TypeKind::Float => {
                let meta = Meta::scalar(crate::dtype::DType::F32);
                Ok(Value::RuntimeScalar(self.input_node(
                    name,
                    vec![index],
                    meta,
                    span,
                )))
            }
            TypeKind::Bool => {
                let symbol = self.hintless_symbol(
                    name,
                    table,
                    Range::new(0, 1),
                    InputSource::Int { path: vec![index] },
                );
                let expr = self.env().symbol_expr(symbol);
                let zero = self.env().int(0);
                let truth = self
                    .env()
                    .ne(expr, zero)
                    .expect("comparing a symbol with 0");
                Ok(Value::SymBool(truth))
            }
            TypeKind::Tensor { dims: None, .. } | TypeKind::Str | TypeKind::List => {
                Err(Diagnostic::error(
                    Code::TypeError,
                    span,
                    format!("cannot trace without a value for `{name}`"),
                )
                .with_label("this annotation does not say enough")
                .with_help("give tensors their dims, for example `f32[n, 3]`")
                .into())
            }
        }
    }

    fn annotated_dim(
        &mut self,
        name: &str,
        index: usize,
        dim: usize,
        annotation: &DimAnn,
        table: &mut SymbolTable,
    ) -> Dim {
        let source = InputSource::TensorDim {
            path: vec![index],
            dim,
        };
        let symbol = match annotation {
            DimAnn::Fixed(size, _) => return Dim::Known(*size),
            DimAnn::Named(ident) => {
                self.hintless_symbol(&ident.name, table, Range::new(2, POS_INF), source)
            }
            DimAnn::Any(_) => {
                let label = format!("{name}.size({dim})");
                let expr = self
                    .env()
                    .backed_symbol(NO_HINT, label, Range::new(2, POS_INF));
                let symbol = self.env().as_symbol(expr).expect("a new symbol");
                self.tracer
                    .as_mut()
                    .expect("tracing")
                    .graph
                    .backed
                    .push((symbol, source));
                symbol
            }
        };
        Dim::Sym(self.env().symbol_expr(symbol))
    }

    /// The first parameter a trace from annotations cannot give a value: no annotation and
    /// no default.
    pub fn unannotated_parameter(function: &Function) -> Option<Diagnostic> {
        let param = function
            .def
            .params
            .iter()
            .find(|param| param.annotation.is_none() && param.default.is_none())?;
        let name = &param.name.name;
        Some(
            Diagnostic::error(
                Code::TypeError,
                param.name.span,
                format!(
                    "cannot trace `{}` without knowing what `{name}` is",
                    function.name()
                ),
            )
            .with_label("this parameter has no annotation")
            .with_help(format!(
                "annotate it, for example `{name}: f32[n, 3]` or `{name}: int`"
            )),
        )
    }

    /// The symbol for a dim name (one per name), recording where it is read from.
    fn hintless_symbol(
        &mut self,
        name: &str,
        table: &mut SymbolTable,
        range: Range,
        source: InputSource,
    ) -> SymbolId {
        let tracer = self.tracer.as_mut().expect("tracing");
        let symbol = *table.by_name.entry(name.to_string()).or_insert_with(|| {
            let expr = tracer.graph.env.backed_symbol(NO_HINT, name, range);
            let symbol = tracer.graph.env.as_symbol(expr).expect("a new symbol");
            tracer.names.insert(symbol, name.to_string());
            symbol
        });
        tracer.graph.backed.push((symbol, source));
        symbol
    }
}
