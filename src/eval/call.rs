//! Calls of user functions: argument binding, annotations, recursion limit, call traces.

use std::collections::HashMap;
use std::rc::Rc;

use super::args::CallArgs;
use super::stmt::Flow;
use super::value::{Function, Value};
use super::{CallFrame, Interpreter, error, limits};
use crate::diag::{Code, Diagnostic, Result};
use crate::graph::shape::{Cmp, Dim, RuleResult, Sizes, show_shape};
use crate::source::Span;
use crate::syntax::ast::{DimAnn, TypeAnn, TypeKind};

/// The most call frames one diagnostic lists.
const MAX_TRACE: usize = 16;

/// Sizes bound by named dims of annotations (`n` in `f32[n, 3]`), with where each was bound.
type DimBindings = HashMap<Rc<str>, (Dim, String)>;

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
        self.check_trace_size(call_site)?;
        self.call_depth += 1;
        self.call_sites.push((function.clone(), call_site));
        let compiled = function.compile.is_some() && !self.options.eager && self.tracer.is_none();
        let result = if compiled {
            self.call_compiled(function, args)
        } else {
            self.call_body(function, args)
        };
        self.call_sites.pop();
        self.call_depth -= 1;
        result.map_err(|mut diagnostic| {
            if diagnostic.trace.len() < MAX_TRACE {
                diagnostic.push_frame(function.qualified_name(), call_site);
            }
            diagnostic
        })
    }

    /// Runs a function's body on its arguments.
    pub(super) fn call_body(&mut self, function: &Rc<Function>, args: CallArgs) -> Result<Value> {
        let bound = self.bind_arguments(function, args)?;
        self.run_bound(function, bound)
    }

    /// Runs a function's body on arguments already matched to its parameters.
    pub(super) fn run_bound(
        &mut self,
        function: &Rc<Function>,
        bound: Vec<(Value, Span)>,
    ) -> Result<Value> {
        let spans: Vec<Span> = bound.iter().map(|(_, span)| *span).collect();
        if self.tracer.is_some() {
            for (param, (value, _)) in function.def.params.iter().zip(&bound) {
                self.record_type(param.name.span, value);
            }
        }
        let locals = function
            .def
            .params
            .iter()
            .zip(bound)
            .map(|(param, (value, _))| (param.name.name.clone(), value))
            .collect();
        self.frames.push(CallFrame {
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
        // The traced function's own body finishes last, so its return is what stays.
        if let Some(tracer) = self.tracer.as_mut() {
            tracer.graph.output_span = span;
        }
        if let Some(annotation) = &function.def.returns {
            self.check_annotation(&value, annotation, "the return value", span, &mut dims)
                .map_err(|mut diagnostic| {
                    diagnostic.add_secondary(annotation.span, "the function declares this");
                    diagnostic
                })?;
        }
        Ok(value)
    }

    /// Matches arguments to parameters (positional, then keywords, then defaults): one value
    /// per parameter with where it was written (the call, for defaults).
    pub(super) fn bind_arguments(
        &mut self,
        function: &Rc<Function>,
        args: CallArgs,
    ) -> Result<Vec<(Value, Span)>> {
        let call_span = args.span;
        let def = &function.def;
        // Written only into an error: a call that binds costs no string.
        let name = || function.qualified_name();
        let params = &def.params;
        if args.keywords.is_empty() && args.positional.len() == params.len() {
            // Every parameter given by position: the arguments are the binding.
            let given = args.positional.into_iter();
            return Ok(given.map(|arg| (arg.value, arg.span)).collect());
        }
        if args.positional.len() > params.len() {
            let extra = &args.positional[params.len()];
            return Err(error(
                Code::TypeError,
                extra.span,
                format!(
                    "{}() takes {} argument{} but {} were given",
                    name(),
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
                    format!("{}() has no parameter `{}`", name(), keyword.name),
                )
                .with_help(format!("its parameters are {}", names.join(", ")))
                .into());
            };
            if slots[position].is_some() {
                return Err(error(
                    Code::TypeError,
                    keyword.span,
                    format!("{}() got two values for `{}`", name(), keyword.name),
                )
                .into());
            }
            slots[position] = Some((keyword.value, keyword.span));
        }
        let mut bound = Vec::with_capacity(params.len());
        for (param, slot) in params.iter().zip(slots) {
            bound.push(match (slot, &param.default) {
                (Some(given), _) => given,
                (None, Some(default)) => (self.eval_default(function, default)?, call_span),
                (None, None) => {
                    return Err(error(
                        Code::TypeError,
                        call_span,
                        format!("{}() is missing the argument `{}`", name(), param.name.name),
                    )
                    .with_secondary(param.name.span, "this parameter has no default")
                    .into());
                }
            });
        }
        Ok(bound)
    }

    /// Defaults are evaluated in the function's module, at call time.
    pub(super) fn eval_default(
        &mut self,
        function: &Rc<Function>,
        default: &crate::syntax::ast::Expr,
    ) -> Result<Value> {
        self.frames.push(CallFrame {
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
            self.check_parameter(&param.name.name, &value, annotation, *span, &mut dims)?;
        }
        let params: Vec<Rc<str>> = function
            .def
            .params
            .iter()
            .map(|p| p.name.name.clone())
            .collect();
        let mut names: Vec<&Rc<str>> = dims.keys().collect();
        names.sort();
        for name in names {
            if !params.contains(name) {
                let (size, _) = dims[name];
                self.define(name.clone(), Value::from_dim(size));
            }
        }
        Ok(dims)
    }

    /// Checks the argument `value` of parameter `name` against its annotation.
    fn check_parameter(
        &mut self,
        name: &str,
        value: &Value,
        annotation: &TypeAnn,
        span: Span,
        dims: &mut DimBindings,
    ) -> Result<()> {
        let what = format!("`{name}`");
        self.check_annotation(value, annotation, &what, span, dims)
            .map_err(|mut diagnostic| {
                diagnostic.add_secondary(annotation.span, "declared here");
                diagnostic
            })
    }

    /// The first error eager code finds in the annotated arguments `bound` (in parameter
    /// order), without binding their dims: a compiled call that refuses an argument's lists as
    /// too large to trace reports this instead when there is one (a list passed for a tensor).
    pub(super) fn check_arguments(
        &mut self,
        function: &Rc<Function>,
        bound: &[(Value, Span)],
    ) -> Result<()> {
        let mut dims = DimBindings::new();
        for (param, (value, span)) in function.def.params.iter().zip(bound) {
            if let Some(annotation) = &param.annotation {
                self.check_parameter(&param.name.name, value, annotation, *span, &mut dims)?;
            }
        }
        Ok(())
    }

    /// Checks one value against its annotation; errors point at `span`. Size checks go
    /// through the shape rules' `Sizes`, so while tracing they guard or become runtime
    /// asserts.
    fn check_annotation(
        &mut self,
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
        let runtime_dtype = |value: &Value| match value {
            Value::RuntimeScalar(scalar) => Some(scalar.dtype()),
            _ => None,
        };
        match (&annotation.kind, value) {
            (TypeKind::Int, Value::Int(_) | Value::SymInt(_))
            | (TypeKind::Float, Value::Float(_) | Value::Int(_) | Value::SymInt(_))
            | (TypeKind::Bool, Value::Bool(_) | Value::SymBool(_))
            | (TypeKind::Str, Value::Str(_) | Value::Template(_))
            | (TypeKind::List, Value::List(_)) => Ok(()),
            (TypeKind::Float, scalar)
                if runtime_dtype(scalar) == Some(crate::dtype::DType::F32) =>
            {
                Ok(())
            }
            (TypeKind::Bool, scalar)
                if runtime_dtype(scalar) == Some(crate::dtype::DType::Bool) =>
            {
                Ok(())
            }
            (TypeKind::Tensor { dtype, dims: shape }, Value::Tensor(tensor)) => {
                if tensor.dtype() != *dtype {
                    return Err(mismatch(&tensor_kind(*dtype)));
                }
                match shape {
                    Some(shape) => {
                        let sizes = tensor.dims();
                        self.with_any_sizes(span, |any| check_dims(&sizes, shape, what, dims, any))
                            .map_err(|message| error(Code::ShapeError, span, message).into())
                    }
                    None => Ok(()),
                }
            }
            (kind, _) => Err(mismatch(&describe(kind))),
        }
    }

    /// Runs size logic with the sizes of the current domain: concrete eagerly, the symbolic
    /// engine while tracing.
    pub(super) fn with_any_sizes<T>(
        &mut self,
        span: Span,
        body: impl FnOnce(&mut dyn Sizes) -> T,
    ) -> T {
        if self.tracer.is_some() {
            self.with_sizes(span, body)
        } else {
            body(&mut crate::graph::shape::Concrete)
        }
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

/// Checks a tensor's sizes against `f32[n, 3, ?]`, binding or comparing named dims; the
/// message of the first failure is returned.
fn check_dims(
    shape: &[Dim],
    expected: &[DimAnn],
    what: &str,
    dims: &mut DimBindings,
    sizes: &mut dyn Sizes,
) -> std::result::Result<(), String> {
    if shape.len() != expected.len() {
        return Err(format!(
            "{what} should have {} dimension{}, got shape {}",
            expected.len(),
            if expected.len() == 1 { "" } else { "s" },
            show_shape(shape, sizes)
        ));
    }
    for (dim, (size, annotation)) in shape.iter().zip(expected).enumerate() {
        let shown = sizes.show(*size);
        let outcome: RuleResult<()> = match annotation {
            DimAnn::Fixed(wanted, _) => sizes.require(*size, Cmp::Eq, Dim::Known(*wanted), &|| {
                format!("{what} should have size {wanted} in dimension {dim}, got {shown}")
            }),
            DimAnn::Named(name) => match dims.get(&name.name) {
                Some((bound, source)) => {
                    let bound_shown = sizes.show(*bound);
                    let source = source.clone();
                    sizes.require(*size, Cmp::Eq, *bound, &|| {
                        format!(
                            "{what} has size {shown} in dimension {dim}, but `{}` is {bound_shown} from {source}",
                            name.name
                        )
                    })
                }
                None => {
                    dims.insert(
                        name.name.clone(),
                        (*size, format!("{what} (dimension {dim})")),
                    );
                    Ok(())
                }
            },
            DimAnn::Any(_) => Ok(()),
        };
        outcome.map_err(|rule| rule.message)?;
    }
    Ok(())
}
