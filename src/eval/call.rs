//! Calls of user functions: argument binding, annotations, recursion limit, call traces.

use std::collections::HashMap;
use std::rc::Rc;

use super::args::CallArgs;
use super::stmt::Flow;
use super::value::{Function, Value};
use super::{Frame, Interpreter, error, limits};
use crate::diag::{Code, Diagnostic, Result};
use crate::source::Span;
use crate::syntax::ast::{DimAnn, TypeAnn, TypeKind};

/// The most call frames one diagnostic lists.
const MAX_TRACE: usize = 16;

/// Sizes bound by named dims of annotations (`n` in `f32[n, 3]`), with where each was bound.
type DimBindings = HashMap<Rc<str>, (i64, String)>;

/// A call's local variables.
type Locals = HashMap<Rc<str>, Value>;

impl Interpreter {
    pub(super) fn call_function(
        &mut self,
        function: &Rc<Function>,
        args: CallArgs,
    ) -> Result<Value> {
        let call_site = args.span;
        if self.call_depth >= limits::CALL_DEPTH {
            return Err(error(
                Code::RecursionLimit,
                call_site,
                format!(
                    "calls nested more than {} deep (calling `{}`)",
                    limits::CALL_DEPTH,
                    function.qualified_name()
                ),
            )
            .with_help("check that the recursion has a base case that is reached")
            .into());
        }
        self.call_depth += 1;
        let result = self.call_body(function, args);
        self.call_depth -= 1;
        result.map_err(|mut diagnostic| {
            if diagnostic.trace.len() < MAX_TRACE {
                diagnostic.push_frame(function.qualified_name(), call_site);
            }
            diagnostic
        })
    }

    fn call_body(&mut self, function: &Rc<Function>, args: CallArgs) -> Result<Value> {
        let (locals, spans) = self.bind_params(function, args)?;
        self.frames.push(Frame {
            module: function.module.clone(),
            scopes: vec![locals],
            in_function: true,
        });
        let result = self.run_body(function, &spans);
        self.frames.pop();
        result
    }

    fn run_body(&mut self, function: &Rc<Function>, arg_spans: &[Span]) -> Result<Value> {
        let mut dims = self.check_params(function, arg_spans)?;
        let (value, span) = match self.exec_stmts(&function.def.body.stmts)? {
            Flow::Return(value, span) => (value, span),
            Flow::Next => (Value::None, function.def.body.span),
        };
        if let Some(annotation) = &function.def.returns {
            check_annotation(&value, annotation, "the return value", span, &mut dims).map_err(
                |mut diagnostic| {
                    diagnostic.add_secondary(annotation.span, "the function declares this");
                    diagnostic
                },
            )?;
        }
        Ok(value)
    }

    /// Matches arguments to parameters (positional, then keywords, then defaults); returns
    /// the locals and where each argument was written (the call, for defaults).
    fn bind_params(
        &mut self,
        function: &Rc<Function>,
        args: CallArgs,
    ) -> Result<(Locals, Vec<Span>)> {
        let call_span = args.span;
        let def = &function.def;
        let name = function.qualified_name();
        let params = &def.params;
        if args.positional.len() > params.len() {
            let extra = &args.positional[params.len()];
            return Err(error(
                Code::TypeError,
                extra.span,
                format!(
                    "{name}() takes {} argument{} but {} were given",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    args.positional.len()
                ),
            )
            .with_secondary(def.name.span, "defined here")
            .into());
        }
        let mut slots: Vec<Option<(Value, Span)>> = vec![None; params.len()];
        for (slot, arg) in slots.iter_mut().zip(args.positional) {
            *slot = Some((arg.value, arg.span));
        }
        for keyword in args.keywords {
            let Some(position) = params.iter().position(|p| p.name.name == keyword.name) else {
                let names: Vec<String> = params
                    .iter()
                    .map(|p| format!("`{}`", p.name.name))
                    .collect();
                return Err(error(
                    Code::NameError,
                    keyword.span,
                    format!("{name}() has no parameter `{}`", keyword.name),
                )
                .with_help(format!("its parameters are {}", names.join(", ")))
                .into());
            };
            if slots[position].is_some() {
                return Err(error(
                    Code::TypeError,
                    keyword.span,
                    format!("{name}() got two values for `{}`", keyword.name),
                )
                .into());
            }
            slots[position] = Some((keyword.value, keyword.span));
        }
        let mut locals = HashMap::new();
        let mut spans = Vec::with_capacity(params.len());
        for (param, slot) in params.iter().zip(slots) {
            let (value, span) = match (slot, &param.default) {
                (Some(bound), _) => bound,
                (None, Some(default)) => (self.eval_default(function, default)?, call_span),
                (None, None) => {
                    return Err(error(
                        Code::TypeError,
                        call_span,
                        format!("{name}() is missing the argument `{}`", param.name.name),
                    )
                    .with_secondary(param.name.span, "this parameter has no default")
                    .into());
                }
            };
            locals.insert(param.name.name.clone(), value);
            spans.push(span);
        }
        Ok((locals, spans))
    }

    /// Defaults are evaluated in the function's module, at call time.
    fn eval_default(
        &mut self,
        function: &Rc<Function>,
        default: &crate::syntax::ast::Expr,
    ) -> Result<Value> {
        self.frames.push(Frame {
            module: function.module.clone(),
            scopes: vec![HashMap::new()],
            in_function: true,
        });
        let value = self.eval(default);
        self.frames.pop();
        value
    }

    /// Checks annotated parameters and binds their named dims as local ints.
    fn check_params(&mut self, function: &Rc<Function>, arg_spans: &[Span]) -> Result<DimBindings> {
        let mut dims = DimBindings::new();
        for (param, span) in function.def.params.iter().zip(arg_spans) {
            let Some(annotation) = &param.annotation else {
                continue;
            };
            let value = self
                .lookup(&param.name.name)
                .expect("parameters are bound before they are checked");
            let what = format!("`{}`", param.name.name);
            check_annotation(&value, annotation, &what, *span, &mut dims).map_err(
                |mut diagnostic| {
                    diagnostic.add_secondary(annotation.span, "declared here");
                    diagnostic
                },
            )?;
        }
        let params: Vec<Rc<str>> = function
            .def
            .params
            .iter()
            .map(|p| p.name.name.clone())
            .collect();
        for (name, (size, _)) in &dims {
            if !params.contains(name) {
                self.define(name.clone(), Value::Int(*size));
            }
        }
        Ok(dims)
    }
}

/// Checks one value against its annotation; errors point at `span`.
fn check_annotation(
    value: &Value,
    annotation: &TypeAnn,
    what: &str,
    span: Span,
    dims: &mut DimBindings,
) -> Result<()> {
    let mismatch = |expected: &str| -> Box<Diagnostic> {
        error(
            Code::TypeError,
            span,
            format!("{what} should be {expected}, got {}", value.kind()),
        )
        .into()
    };
    match (&annotation.kind, value) {
        (TypeKind::Int, Value::Int(_))
        | (TypeKind::Float, Value::Float(_) | Value::Int(_))
        | (TypeKind::Bool, Value::Bool(_))
        | (TypeKind::Str, Value::Str(_))
        | (TypeKind::List, Value::List(_)) => Ok(()),
        (TypeKind::Tensor { dtype, dims: shape }, Value::Tensor(tensor)) => {
            if tensor.dtype() != *dtype {
                return Err(mismatch(&tensor_kind(*dtype)));
            }
            match shape {
                Some(shape) => check_dims(tensor.shape(), shape, what, span, dims),
                None => Ok(()),
            }
        }
        (kind, _) => Err(mismatch(&describe(kind))),
    }
}

fn describe(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Int => "an int".to_string(),
        TypeKind::Float => "a float".to_string(),
        TypeKind::Bool => "a bool".to_string(),
        TypeKind::Str => "a str".to_string(),
        TypeKind::List => "a list".to_string(),
        TypeKind::Tensor { dtype, .. } => tensor_kind(*dtype),
    }
}

/// "an f32 tensor", "a bool tensor".
fn tensor_kind(dtype: crate::dtype::DType) -> String {
    let article = if dtype == crate::dtype::DType::Bool {
        "a"
    } else {
        "an"
    };
    format!("{article} {dtype} tensor")
}

/// Checks a tensor's sizes against `f32[n, 3, ?]`, binding or comparing named dims.
fn check_dims(
    shape: &[usize],
    expected: &[DimAnn],
    what: &str,
    span: Span,
    dims: &mut DimBindings,
) -> Result<()> {
    let shape_error =
        |message: String| -> Box<Diagnostic> { error(Code::ShapeError, span, message).into() };
    if shape.len() != expected.len() {
        return Err(shape_error(format!(
            "{what} should have {} dimension{}, got shape {}",
            expected.len(),
            if expected.len() == 1 { "" } else { "s" },
            crate::backend::cpu::format_shape(shape)
        )));
    }
    for (dim, (size, annotation)) in shape.iter().zip(expected).enumerate() {
        let size = *size as i64;
        match annotation {
            DimAnn::Fixed(wanted, _) if size != *wanted => {
                return Err(shape_error(format!(
                    "{what} should have size {wanted} in dimension {dim}, got {size}"
                )));
            }
            DimAnn::Named(name) => match dims.get(&name.name) {
                Some((bound, source)) if *bound != size => {
                    return Err(shape_error(format!(
                        "{what} has size {size} in dimension {dim}, but `{}` is {bound} from {source}",
                        name.name
                    )));
                }
                Some(_) => {}
                None => {
                    dims.insert(
                        name.name.clone(),
                        (size, format!("{what} (dimension {dim})")),
                    );
                }
            },
            _ => {}
        }
    }
    Ok(())
}
