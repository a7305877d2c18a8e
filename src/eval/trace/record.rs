//! Recording into the graph: tensor operations (shape rule through the symbolic engine, then
//! a node), `item`/`tolist`, `print`, `check`/`check_size` (runtime asserts) and checks on
//! tensor data (device asserts), and the log lines of spec §9.

use std::fmt::Write as _;

use super::Became;
use super::sizes::TraceSizes;
use crate::diag::{Code, Diagnostic, Result};
use crate::dtype::{DType, Scalar};
use crate::eval::Interpreter;
use crate::eval::tensor::{Operand, rule_error};
use crate::eval::value::{TensorValue, Value};
use crate::graph::ir::{Arg, BindSource, Node, NodeKind, Part, Template, ValueRef};
use crate::graph::op::{IndexSpec, Op};
use crate::graph::print;
use crate::graph::shape::{self, Cmp, Dim, Meta, RuleError, RuleErrorKind, Sizes};
use crate::source::Span;
use crate::sym::{CheckOutcome, Event, ExprId, NEG_INF, Origin, POS_INF, Range};

/// What a traced `check` reports when it fails.
pub(in crate::eval) enum CheckMessage {
    /// Its message, formatted when it fails.
    Text(Template),
    /// The error that building its message raised while tracing (`check c, not "text"`).
    /// Eager code builds the message only when the check fails, and fails there with this
    /// error, so the compiled check fails with it too, and only then.
    Fails(Box<Diagnostic>),
}

/// The failure an assert node raises: its code, message and place.
pub(in crate::eval) struct Failure {
    pub code: Code,
    pub template: Template,
    pub span: Span,
}

impl CheckMessage {
    /// The failure of a check at `span` whose own failure is `code`.
    fn failure(&self, code: Code, span: Span, tracer: &super::Tracer) -> Failure {
        match self {
            CheckMessage::Text(template) => Failure {
                code,
                template: template.clone(),
                span,
            },
            CheckMessage::Fails(error) => Failure {
                code: error.code,
                template: tracer.message_template(&error.message),
                span: error.span.unwrap_or(span),
            },
        }
    }
}

impl Interpreter {
    /// Refuses to trace on once the trace holds more than [`limits::TRACE_SIZE`] nodes and
    /// size expressions, a size expression deeper than [`limits::EXPRESSION_DEPTH`], or has
    /// run more than [`limits::TRACE_TURNS`] loop turns and calls (or the lower number of
    /// [`Options::trace_turns`]). Called at every iteration of a loop and every call while
    /// tracing, the places where a trace can grow or run without bound.
    ///
    /// [`limits::TRACE_SIZE`]: crate::eval::limits::TRACE_SIZE
    /// [`limits::EXPRESSION_DEPTH`]: crate::eval::limits::EXPRESSION_DEPTH
    /// [`limits::TRACE_TURNS`]: crate::eval::limits::TRACE_TURNS
    /// [`Options::trace_turns`]: crate::eval::Options::trace_turns
    pub(in crate::eval) fn check_trace_size(&mut self, span: Span) -> Result<()> {
        let turn_limit = self
            .options
            .trace_turns
            .unwrap_or(crate::eval::limits::TRACE_TURNS);
        let Some(tracer) = self.tracer.as_mut() else {
            return Ok(());
        };
        tracer.turns += 1;
        let graph = &tracer.graph;
        let size = graph.nodes.len() + graph.env.expression_count();
        let (size_limit, depth_limit) = (
            crate::eval::limits::TRACE_SIZE,
            crate::eval::limits::EXPRESSION_DEPTH,
        );
        let problem = if size > size_limit {
            format!("grew past {size_limit} operations and size expressions")
        } else if graph.env.deepest_expression() > depth_limit {
            format!("built a size expression nested more than {depth_limit} deep")
        } else if tracer.turns > turn_limit {
            format!("ran more than {turn_limit} loop turns and calls")
        } else {
            return Ok(());
        };
        Err(unrolled_too_far(
            &graph.name,
            problem,
            span,
            "the trace was this far",
        ))
    }

    /// Counts `bytes` of a string or list built at `span` against
    /// [`limits::TRACE_BUILT_BYTES`] while tracing; past it, refuses to trace on.
    ///
    /// [`limits::TRACE_BUILT_BYTES`]: crate::eval::limits::TRACE_BUILT_BYTES
    pub(in crate::eval) fn count_built(&mut self, bytes: usize, span: Span) -> Result<()> {
        let Some(tracer) = self.tracer.as_mut() else {
            return Ok(());
        };
        let limit = crate::eval::limits::TRACE_BUILT_BYTES;
        tracer.built_bytes = tracer.built_bytes.saturating_add(bytes as u64);
        if tracer.built_bytes <= limit {
            return Ok(());
        }
        let problem = format!("built more than {limit} bytes of strings and lists");
        let label = "this passed the limit";
        Err(unrolled_too_far(&tracer.graph.name, problem, span, label))
    }

    fn tracer_mut(&mut self) -> &mut super::Tracer {
        self.tracer
            .as_mut()
            .expect("recording happens while tracing")
    }

    /// The calls made inside the traced function, innermost first, for a new node.
    pub(in crate::eval) fn node_trace(&self) -> Vec<crate::diag::Frame> {
        let base = self.tracer.as_ref().map_or(0, |tracer| tracer.call_base);
        self.call_sites[base.min(self.call_sites.len())..]
            .iter()
            .rev()
            .map(|(function, call_site)| crate::diag::Frame {
                function: function.qualified_name(),
                call_site: *call_site,
                repeated: 1,
                kind: crate::diag::FrameKind::Call,
            })
            .collect()
    }

    /// Records `op`: the shared shape rule runs on symbolic sizes, then a node is appended.
    pub(in crate::eval) fn apply_traced(
        &mut self,
        mut op: Op,
        operands: Vec<Operand>,
        span: Span,
    ) -> Result<Vec<TensorValue>> {
        let frames = self.node_trace();
        let metas: Vec<Meta> = operands.iter().map(Operand::meta).collect();
        let inferred = {
            let tracer = self.tracer_mut();
            let mut sizes = TraceSizes::new(tracer, span, &frames);
            shape::infer(&mut op, &metas, &mut sizes)
        };
        self.flush_logs();
        let outputs = inferred.map_err(|rule| self.traced_rule_error(rule, span))?;
        let tracer = self.tracer_mut();
        let args = operands
            .iter()
            .map(|operand| match operand {
                Operand::Tensor(tensor) => Arg::Tensor(tracer.tensor_arg(tensor, span)),
                Operand::Scalar(Scalar::Int(value)) => Arg::Int(Dim::Known(*value)),
                Operand::Scalar(Scalar::Float(value)) => Arg::Float(*value),
                Operand::Scalar(Scalar::Bool(value)) => Arg::Bool(*value),
                Operand::SymInt(expr) => Arg::Int(tracer.dim(*expr)),
            })
            .collect();
        let binds = tracer.take_binds(&outputs);
        let id = tracer.record(Node {
            kind: NodeKind::Op(op),
            args,
            outputs: outputs.clone(),
            binds,
            span,
            trace: frames,
        });
        Ok(outputs
            .into_iter()
            .enumerate()
            .map(|(output, meta)| {
                let value = ValueRef {
                    node: id,
                    output: output as u32,
                };
                TensorValue::fake(value, meta)
            })
            .collect())
    }

    /// A rule failure while tracing; a size that had to be concrete but depends on data is a
    /// `data-dependent-int` with its explanation (or, without hints, a note).
    fn traced_rule_error(&mut self, rule: RuleError, span: Span) -> Box<Diagnostic> {
        match (rule.kind, rule.subject) {
            (RuleErrorKind::DataDependentInt, Some(Dim::Sym(expr))) => {
                let hintless = self.tracer.as_ref().is_some_and(|tracer| tracer.hintless);
                if hintless && self.env().unbacked_symbols(expr).is_empty() {
                    return Diagnostic::note(Code::Specialization, span, rule.message)
                        .with_label("this operation specialises on an input size")
                        .into();
                }
                self.data_dependent_int(expr, span, "this operation")
            }
            _ => rule_error(rule, span),
        }
    }

    /// Sizes for a shape question outside an operation (annotations, `item()`).
    pub(in crate::eval) fn with_sizes<T>(
        &mut self,
        span: Span,
        body: impl FnOnce(&mut dyn Sizes) -> T,
    ) -> T {
        let frames = self.node_trace();
        let tracer = self.tracer_mut();
        let mut sizes = TraceSizes::new(tracer, span, &frames);
        let result = body(&mut sizes);
        self.flush_logs();
        result
    }

    /// `item()` of a traced tensor: a symbol for an `i64` or `bool` element (the same symbol
    /// for the same value), a run-time float for an `f32`.
    pub(in crate::eval) fn trace_item(
        &mut self,
        tensor: &TensorValue,
        span: Span,
    ) -> Result<Value> {
        self.trace_element(tensor, span, "item()")
    }

    /// An int computed on the host from numbers read from data (a one-element `i64` tensor
    /// of the graph): a symbol, as `item()` of it would be.
    pub(in crate::eval) fn trace_host_int(
        &mut self,
        tensor: &TensorValue,
        span: Span,
    ) -> Result<Value> {
        self.trace_element(tensor, span, "arithmetic on data")
    }

    /// [`Interpreter::trace_item`] for the builtin `operation` (`item()` or `tolist()`), which
    /// a new symbol names as its origin.
    fn trace_element(
        &mut self,
        tensor: &TensorValue,
        span: Span,
        operation: &str,
    ) -> Result<Value> {
        let value = tensor
            .graph_value()
            .expect("only traced tensors are traced");
        if let Some(item) = self.tracer_mut().memoised_item(value) {
            return Ok(item);
        }
        let dims = tensor.dims();
        let meta = tensor.meta();
        self.with_sizes(span, |sizes| -> std::result::Result<(), RuleError> {
            let count = shape::numel(sizes, &dims)?;
            let shown = meta.show(sizes);
            sizes.require(count, Cmp::Eq, Dim::ONE, &|| {
                format!("item() needs a one-element tensor, got {shown}")
            })
        })
        .map_err(|rule| rule_error(rule, span))?;
        let frames = self.node_trace();
        let dtype = tensor.dtype();
        let tracer = self.tracer_mut();
        let mut node = Node {
            kind: NodeKind::Item,
            args: vec![Arg::Tensor(value)],
            outputs: vec![Meta::scalar(dtype)],
            binds: Vec::new(),
            span,
            trace: frames,
        };
        let origin = Origin {
            operation: operation.to_string(),
            span,
        };
        let item = match dtype {
            DType::F32 => None,
            DType::I64 => Some(
                tracer
                    .graph
                    .env
                    .unbacked_symbol(origin, Range::new(NEG_INF, POS_INF)),
            ),
            DType::Bool => Some(tracer.graph.env.unbacked_symbol(origin, Range::new(0, 1))),
        };
        if let Some(expr) = item {
            let symbol = tracer.graph.env.as_symbol(expr).expect("a new symbol");
            node.binds.push((symbol, BindSource::Element));
            tracer.note_origin_call(symbol, &node.trace);
        }
        let id = tracer.graph.push(node);
        let result = match (dtype, item) {
            (DType::I64, Some(expr)) => Value::SymInt(expr),
            (DType::Bool, Some(expr)) => {
                let zero = tracer.graph.env.int(0);
                Value::SymBool(
                    tracer
                        .graph
                        .env
                        .ne(expr, zero)
                        .expect("comparing a symbol with 0"),
                )
            }
            _ => Value::RuntimeScalar(TensorValue::fake(ValueRef::first(id), Meta::scalar(dtype))),
        };
        tracer.memoise_item(value, result.clone());
        self.flush_logs();
        Ok(result)
    }

    /// `tolist()` of a traced tensor: its size must be known (guarded on input sizes), then
    /// every element is an `item()`.
    pub(in crate::eval) fn trace_tolist(
        &mut self,
        tensor: &TensorValue,
        span: Span,
    ) -> Result<Value> {
        let mut sizes = Vec::new();
        for dim in tensor.dims() {
            let size = match dim {
                Dim::Known(size) => size,
                Dim::Sym(expr) => self.concrete_int(expr, span, "tolist()")?,
            };
            sizes.push(usize::try_from(size).unwrap_or(0));
        }
        crate::eval::builtins::check_list_values(
            &sizes,
            crate::eval::limits::TRACED_LIST_LENGTH,
            span,
        )?;
        self.nested_items(tensor, &sizes, span)
    }

    fn nested_items(&mut self, tensor: &TensorValue, sizes: &[usize], span: Span) -> Result<Value> {
        let Some((&rows, inner)) = sizes.split_first() else {
            return self.trace_element(tensor, span, "tolist()");
        };
        let mut items = Vec::with_capacity(rows);
        for row in 0..rows {
            let op = Op::Index {
                items: vec![IndexSpec::Int(Dim::Known(row as i64))],
            };
            let mut parts = self.apply_traced(op, vec![Operand::Tensor(tensor.clone())], span)?;
            items.push(self.nested_items(&parts.swap_remove(0), inner, span)?);
        }
        Ok(Value::list(items))
    }

    /// `print` inside traced code: a node that prints when the graph runs.
    pub(in crate::eval) fn trace_print(&mut self, values: &[Value], span: Span) {
        let mut line = self.template_of(values, span);
        line.0.push(Part::Text("\n".to_string()));
        let frames = self.node_trace();
        self.tracer_mut().push(
            NodeKind::Print { line },
            Vec::new(),
            Vec::new(),
            span,
            frames,
        );
    }

    /// A `check` on a symbolic condition: nothing if proven, an error now if refuted (or
    /// refuted by the input sizes), otherwise a fact and a runtime assert.
    pub(in crate::eval) fn trace_check(
        &mut self,
        cond: ExprId,
        message: &dyn Fn(&mut Interpreter) -> Result<CheckMessage>,
        span: Span,
    ) -> Result<()> {
        let hintless = self.tracer.as_ref().is_some_and(|tracer| tracer.hintless);
        if hintless && self.env().unbacked_symbols(cond).is_empty() {
            if self.env().assume(cond).unwrap_or(true) {
                self.record_check(span, Became::Guard(Some(cond)));
                return Ok(());
            }
            let template = match message(self)? {
                CheckMessage::Text(template) => template,
                CheckMessage::Fails(error) => return Err(error),
            };
            let text = render(&template, self);
            return Err(Diagnostic::error(Code::CheckFailed, span, text)
                .with_label("this check can never hold")
                .into());
        }
        self.trace_checked(span, message, |env| Ok(env.check(cond, span)))
    }

    /// `check_size` on a symbolic size (and maximum): the same outcomes as a `check`, with
    /// the messages an eager `check_size` gives.
    pub(in crate::eval) fn trace_check_size(
        &mut self,
        size: &Value,
        bound: Option<(Value, Span)>,
        shown: &str,
        value_span: Span,
        span: Span,
    ) -> Result<()> {
        // Worded as eager code words them.
        let not_int = |what: &str, value: &Value, at: Span| -> Box<Diagnostic> {
            Diagnostic::error(
                Code::TypeError,
                at,
                format!("{what}`check_size` needs an int, got {}", value.kind()),
            )
            .into()
        };
        let size_expr = self
            .int_expr(size)
            .ok_or_else(|| not_int("", size, value_span))?;
        let size_part = Part::Int(self.tracer_mut().dim(size_expr));
        let prefix = Part::Text(format!("check_size failed: {shown} = "));
        let negative = Template(vec![
            prefix.clone(),
            size_part.clone(),
            Part::Text(" is negative".to_string()),
        ]);
        self.trace_checked(span, &|_| Ok(CheckMessage::Text(negative.clone())), |env| {
            env.check_size(size_expr, None, span)
        })?;
        if let Some((bound, bound_span)) = bound {
            let max = self
                .int_expr(&bound)
                .ok_or_else(|| not_int("the max of ", &bound, bound_span))?;
            let max_part = Part::Int(self.tracer_mut().dim(max));
            let exceeds = Template(vec![
                prefix,
                size_part,
                Part::Text(" exceeds max = ".to_string()),
                max_part,
            ]);
            self.trace_checked(span, &|_| Ok(CheckMessage::Text(exceeds.clone())), |env| {
                env.check_size(size_expr, Some(max), span)
            })?;
        }
        Ok(())
    }

    /// Host division by a symbolic int: eager code raises `division by zero` where it is 0,
    /// so the trace decides that or asserts it at run time, with eager code's error.
    pub(in crate::eval) fn trace_divisor(&mut self, divisor: ExprId, span: Span) -> Result<()> {
        self.trace_nonzero(divisor, "division by zero", span)
    }

    /// Requires the symbolic int `expr` not to be 0, where eager code raises `value-error`
    /// with `message`.
    pub(in crate::eval) fn trace_nonzero(
        &mut self,
        expr: ExprId,
        message: &str,
        span: Span,
    ) -> Result<()> {
        let zero = self.env().int(0);
        let nonzero = self
            .env()
            .compare(Cmp::Ne, expr, zero)
            .map_err(|error| Diagnostic::error(Code::ValueError, span, error.to_string()))?;
        self.trace_requirement(nonzero, Code::ValueError, message, span)
    }

    /// Requires `cond` where eager code raises `code` with `message` (its sizes marked) when
    /// it fails: decided now, or a runtime assert failing with that error.
    pub(in crate::eval) fn trace_requirement(
        &mut self,
        cond: ExprId,
        code: Code,
        message: &str,
        span: Span,
    ) -> Result<()> {
        let outcome = self.env().check(cond, span);
        self.flush_logs();
        match outcome {
            CheckOutcome::AlreadyTrue | CheckOutcome::Guarded(true) => Ok(()),
            CheckOutcome::False | CheckOutcome::Guarded(false) => {
                Err(Diagnostic::error(code, span, message).into())
            }
            CheckOutcome::Learned => {
                let frames = self.node_trace();
                let tracer = self.tracer_mut();
                let template = tracer.message_template(message);
                tracer.emit_asserts(code, &template, span, &frames);
                Ok(())
            }
            CheckOutcome::Error(error) => {
                Err(Diagnostic::error(Code::ValueError, span, error.to_string()).into())
            }
        }
    }

    /// Runs a check on the environment and acts on its outcome.
    fn trace_checked(
        &mut self,
        span: Span,
        message: &dyn Fn(&mut Interpreter) -> Result<CheckMessage>,
        run: impl FnOnce(
            &mut crate::sym::ShapeEnv,
        ) -> std::result::Result<CheckOutcome, crate::sym::SymError>,
    ) -> Result<()> {
        let outcome = run(self.env());
        self.flush_logs();
        match outcome {
            Ok(CheckOutcome::AlreadyTrue) => {
                self.record_check(span, Became::Proved);
                Ok(())
            }
            Ok(CheckOutcome::Guarded(true)) => {
                self.record_check(span, Became::Guard(None));
                Ok(())
            }
            Ok(CheckOutcome::False | CheckOutcome::Guarded(false)) => {
                let message = message(self)?;
                Err(self.refuted_check(message, span))
            }
            Ok(CheckOutcome::Learned) => {
                let message = message(self)?;
                let frames = self.node_trace();
                let tracer = self.tracer_mut();
                let failure = message.failure(Code::CheckFailed, span, tracer);
                let conditions =
                    tracer.emit_asserts(failure.code, &failure.template, failure.span, &frames);
                for cond in conditions {
                    self.record_check(span, Became::RuntimeAssert(cond));
                }
                Ok(())
            }
            Ok(CheckOutcome::Error(error)) => {
                Err(Diagnostic::error(Code::ValueError, span, error.to_string()).into())
            }
            Err(error) => Err(Diagnostic::error(Code::ValueError, span, error.to_string()).into()),
        }
    }

    /// A check that cannot hold for these inputs: the trace stops with `check-failed`. The
    /// check is also recorded as an assert that always fails, so that when the part of the
    /// function traced so far runs (see `compile::run_partial`), the failure's message is
    /// formatted from the values of the run, as eager code formats it.
    pub(in crate::eval) fn refuted_check(
        &mut self,
        message: CheckMessage,
        span: Span,
    ) -> Box<Diagnostic> {
        let frames = self.node_trace();
        let never = self.env().bool(false);
        let tracer = self.tracer_mut();
        let Failure {
            code,
            template,
            span: at,
        } = message.failure(Code::CheckFailed, span, tracer);
        tracer.push(
            NodeKind::Assert {
                cond: never,
                message: template,
                code,
            },
            Vec::new(),
            Vec::new(),
            at,
            frames,
        );
        match message {
            CheckMessage::Fails(error) => error,
            CheckMessage::Text(template) => {
                let text = render(&template, self);
                Diagnostic::error(Code::CheckFailed, span, text)
                    .with_label("this check failed")
                    .into()
            }
        }
    }

    /// A `check` on tensor data: a device assert, kept by every pass. `scalar` marks a
    /// condition that was a host value in the user's code, which fails with `check-failed`.
    pub(in crate::eval) fn trace_device_check(
        &mut self,
        condition: &TensorValue,
        message: CheckMessage,
        scalar: bool,
        span: Span,
        located: Option<&crate::eval::stmt::Predicate>,
    ) {
        self.record_check(span, Became::DeviceAssert);
        let frames = self.node_trace();
        let tracer = self.tracer_mut();
        let code = if scalar {
            Code::CheckFailed
        } else {
            Code::DeviceCheckFailed
        };
        let failure = message.failure(code, span, tracer);
        // A failure building the message is what eager code reports, without a place.
        let located = located.filter(|_| matches!(message, CheckMessage::Text(_)));
        let value = tracer.tensor_arg(condition, span);
        let mut args = vec![Arg::Tensor(value)];
        let mut names = Vec::new();
        let mut usable = located.is_some_and(|located| !located.subjects.is_empty());
        for (name, subject) in located.map_or(&[][..], |located| &located.subjects[..]) {
            let arg = match subject {
                Value::Tensor(tensor) => Some(Arg::Tensor(tracer.tensor_arg(tensor, span))),
                Value::Int(value) => Some(Arg::Int(Dim::Known(*value))),
                Value::SymInt(expr) => Some(Arg::Int(Dim::Sym(*expr))),
                Value::Float(value) => Some(Arg::Float(*value)),
                Value::Bool(value) => Some(Arg::Bool(*value)),
                _ => None,
            };
            usable &= arg.is_some();
            args.extend(arg);
            names.push(name.clone());
        }
        let located = match located {
            Some(located) if usable => Some(crate::graph::ir::Located {
                op: located.op,
                names,
            }),
            _ => {
                args.truncate(1);
                None
            }
        };
        tracer.push(
            NodeKind::DeviceAssert {
                message: failure.template,
                code: failure.code,
                located,
            },
            args,
            Vec::new(),
            failure.span,
            frames,
        );
    }

    /// Requires a host bool read from data (`condition`, a 0-d `bool`) where eager code
    /// raises `code` with `message` when it is false: a device assert, kept by every pass,
    /// at this point of the program.
    pub(in crate::eval) fn trace_device_requirement(
        &mut self,
        condition: &TensorValue,
        code: Code,
        message: &str,
        span: Span,
    ) {
        let frames = self.node_trace();
        let tracer = self.tracer_mut();
        let template = tracer.message_template(message);
        let value = tracer.tensor_arg(condition, span);
        tracer.push(
            NodeKind::DeviceAssert {
                message: template,
                code,
                located: None,
            },
            vec![Arg::Tensor(value)],
            Vec::new(),
            span,
            frames,
        );
    }

    /// Prints the environment's pending events on the enabled log channels.
    pub(in crate::eval) fn flush_logs(&mut self) {
        let Some(tracer) = self.tracer.as_mut() else {
            return;
        };
        let events = tracer.take_events();
        let channels = self.options.log;
        for event in events {
            let env = &self.tracer.as_ref().expect("tracing").graph.env;
            let line = match event {
                Event::CreateUnbacked {
                    symbol,
                    range,
                    span,
                } if channels.dynamic => format!(
                    "create_unbacked {} {} at {}",
                    env.display(env.symbol_expr(symbol)),
                    print::range(range),
                    self.sources.location(span)
                ),
                Event::SetReplacement { symbol, expr } if channels.dynamic => format!(
                    "set_replacement {} = {}",
                    env.display(env.symbol_expr(symbol)),
                    env.display(expr)
                ),
                Event::RuntimeAssert { cond, span } if channels.dynamic => format!(
                    "runtime_assert {} at {}",
                    env.display(cond),
                    self.sources.location(span)
                ),
                Event::Guard { cond, span } if channels.guards => format!(
                    "guard {} at {}",
                    env.display(cond),
                    self.sources.location(span)
                ),
                Event::Fallback { cond, value, span } if channels.dynamic => format!(
                    "guard_or_{value} {} fell back to {value} at {}",
                    env.display(cond),
                    self.sources.location(span)
                ),
                _ => continue,
            };
            self.out.log(&line);
        }
    }
}

/// A template as text now, for a check refuted at trace time: sizes read from the inputs
/// show their values (the message reads as the eager one), other parts their expressions.
pub(in crate::eval) fn render(template: &Template, interpreter: &mut Interpreter) -> String {
    let env = interpreter.env();
    let mut text = String::new();
    for part in &template.0 {
        match part {
            Part::Text(literal) => text.push_str(literal),
            Part::Int(Dim::Known(value)) => text.push_str(&value.to_string()),
            Part::Int(Dim::Sym(expr)) => {
                let hint = |symbol: crate::sym::SymbolId| env.symbol(symbol).hint();
                let known = env.eval_int(*expr, &hint).ok();
                match known.or_else(|| env.range(*expr).constant()) {
                    Some(value) => text.push_str(&value.to_string()),
                    None => text.push_str(&env.display(*expr)),
                }
            }
            Part::Bool(expr) => match env.eval_bool(*expr, &|symbol| env.symbol(symbol).hint()) {
                Ok(value) => text.push_str(&value.to_string()),
                Err(_) => text.push_str(&env.display(*expr)),
            },
            Part::Scalar(value) | Part::Tensor(value) => {
                let _ = write!(text, "{}", value.node);
            }
        }
    }
    text
}

/// A trace stopped for running too far: `problem` says how.
fn unrolled_too_far(name: &str, problem: String, span: Span, label: &str) -> Box<Diagnostic> {
    Diagnostic::error(Code::ValueError, span, format!("the trace of `{name}` {problem}"))
        .with_label(label)
        .with_help(
            "loops and recursion in a compiled function are unrolled when traced: compute with operations on whole tensors, or run the loop outside @compile",
        )
        .into()
}
