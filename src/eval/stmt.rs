//! Statements: bindings, control flow, and `check`/`check_size` evaluated at once.

use super::args::{CallArgs, Positional};
use super::trace::{Ask, CheckMessage};
use super::value::{TensorValue, Value};
use super::{Interpreter, error};
use crate::diag::{Code, Diagnostic, Result};
use crate::dtype::DType;
use crate::graph::ir::Template;
use crate::graph::op::BinaryOp as TensorOp;
use crate::graph::shape::{Cmp, Dim};
use crate::source::Span;
use crate::syntax::ast::{BinaryOp, Block, Else, Expr, ExprKind, Ident, Stmt, StmtKind, Target};

/// What a statement did to control flow.
pub enum Flow {
    Next,
    /// `return` with its value and where it was written.
    Return(Value, Span),
}

impl Interpreter {
    pub(super) fn exec_stmt(&mut self, stmt: &Stmt) -> Result<Flow> {
        self.nested(stmt.span, |this| this.exec_stmt_inner(stmt))
    }

    fn exec_stmt_inner(&mut self, stmt: &Stmt) -> Result<Flow> {
        crate::diag::panic::inject("statement");
        match &stmt.kind {
            StmtKind::Let(target, value) => {
                let value = self.eval(value)?;
                self.bind_target(target, value)?;
            }
            StmtKind::Assign(name, value) => {
                let value = self.eval(value)?;
                self.assign_existing(name, value)?;
            }
            StmtKind::If {
                condition,
                then,
                otherwise,
            } => {
                let value = self.eval(condition)?;
                if self.truth(&value, condition.span, "`if`")? {
                    return self.exec_block(then);
                }
                return match otherwise {
                    Some(Else::Block(block)) => self.exec_block(block),
                    Some(Else::If(stmt)) => self.exec_stmt(stmt),
                    None => Ok(Flow::Next),
                };
            }
            StmtKind::For {
                target,
                iterable,
                body,
            } => return self.exec_for(target, iterable, body),
            StmtKind::Return(value) => {
                let value = match value {
                    Some(expr) => self.eval(expr)?,
                    None => Value::None,
                };
                return Ok(Flow::Return(value, stmt.span));
            }
            StmtKind::Check { condition, message } => {
                self.exec_check(condition, message.as_ref(), stmt.span)?;
            }
            StmtKind::CheckSize { value, max } => {
                self.exec_check_size(value, max.as_ref(), stmt.span)?;
            }
            StmtKind::Expr(expr) => {
                self.eval(expr)?;
            }
            StmtKind::Error => {}
        }
        Ok(Flow::Next)
    }

    pub(super) fn exec_block(&mut self, block: &Block) -> Result<Flow> {
        self.push_scope();
        let result = self.exec_stmts(&block.stmts);
        self.pop_scope();
        result
    }

    /// Runs statements in the current scope.
    pub(super) fn exec_stmts(&mut self, stmts: &[Stmt]) -> Result<Flow> {
        for stmt in stmts {
            if let Flow::Return(value, span) = self.exec_stmt(stmt)? {
                return Ok(Flow::Return(value, span));
            }
        }
        Ok(Flow::Next)
    }

    fn exec_for(&mut self, target: &Target, iterable: &Expr, body: &Block) -> Result<Flow> {
        let items = self.eval(iterable)?;
        let span = iterable.span;
        // A tensor's rows are taken one at a time, so a long loop holds one row, not all.
        if let Value::Tensor(tensor) = &items {
            for row in 0..self.row_count(tensor, span)? {
                self.check_trace_size(span)?;
                let item = self.tensor_row(tensor, row, span)?;
                if let Some(flow) = self.exec_iteration(target, item, body)? {
                    return Ok(flow);
                }
            }
            return Ok(Flow::Next);
        }
        for item in self.iterate(&items, span)? {
            self.check_trace_size(span)?;
            if let Some(flow) = self.exec_iteration(target, item, body)? {
                return Ok(flow);
            }
        }
        Ok(Flow::Next)
    }

    /// One iteration of a `for` loop: the `return` it reached, if any.
    fn exec_iteration(
        &mut self,
        target: &Target,
        item: Value,
        body: &Block,
    ) -> Result<Option<Flow>> {
        self.push_scope();
        let result = self
            .bind_target(target, item)
            .and_then(|()| self.exec_stmts(&body.stmts));
        self.pop_scope();
        match result? {
            Flow::Return(value, span) => Ok(Some(Flow::Return(value, span))),
            Flow::Next => Ok(None),
        }
    }

    /// The items a `for` loop or destructuring visits: list items, or a tensor's rows.
    pub(super) fn iterate(&mut self, value: &Value, span: Span) -> Result<Vec<Value>> {
        let length = self.iteration_length(value, span)?;
        self.first_items(value, length, span)
    }

    /// How many items iterating over `value` visits.
    pub(super) fn iteration_length(&mut self, value: &Value, span: Span) -> Result<usize> {
        match value {
            Value::List(items) => Ok(items.len()),
            Value::Tensor(tensor) => self.row_count(tensor, span),
            other => Err(not_iterable(other, span)),
        }
    }

    /// The first `count` items iterating over `value` visits (`count` at most its length).
    pub(super) fn first_items(
        &mut self,
        value: &Value,
        count: usize,
        span: Span,
    ) -> Result<Vec<Value>> {
        match value {
            Value::List(items) => Ok(items[..count.min(items.len())].to_vec()),
            Value::Tensor(tensor) => self.first_rows(tensor, count, span),
            other => Err(not_iterable(other, span)),
        }
    }

    /// Binds a `let` or `for` target in the innermost scope.
    fn bind_target(&mut self, target: &Target, value: Value) -> Result<()> {
        match target {
            Target::Name(name) => {
                if self.tracer.is_some() {
                    self.record_type(name.span, &value);
                }
                self.define(name.name.clone(), value);
                Ok(())
            }
            Target::List { names, rest, span } => {
                // The length first: a tensor's rows are made only once they fit the names.
                let length = self.iteration_length(&value, *span)?;
                let fits = match rest {
                    Some(_) => length >= names.len(),
                    None => length == names.len(),
                };
                if !fits {
                    let wanted = if rest.is_some() { "at least " } else { "" };
                    return Err(error(
                        Code::ValueError,
                        *span,
                        format!(
                            "cannot unpack {length} values into {wanted}{} names",
                            names.len()
                        ),
                    )
                    .into());
                }
                let items = self.first_items(&value, length, *span)?;
                for (name, item) in names.iter().zip(&items) {
                    if self.tracer.is_some() {
                        self.record_type(name.span, item);
                    }
                    self.define(name.name.clone(), item.clone());
                }
                if let Some(rest) = rest {
                    self.define(
                        rest.name.clone(),
                        Value::list(items[names.len()..].to_vec()),
                    );
                }
                Ok(())
            }
        }
    }

    fn assign_existing(&mut self, name: &Ident, value: Value) -> Result<()> {
        if self.tracer.is_some() {
            self.record_type(name.span, &value);
        }
        if self.assign(&name.name, value) {
            return Ok(());
        }
        let global = self.current_module().get(&name.name).is_some();
        let diagnostic = if global {
            error(
                Code::NameError,
                name.span,
                format!(
                    "cannot assign to the global `{}` inside a function",
                    name.name
                ),
            )
            .with_help(format!("declare a local instead: `let {} = …`", name.name))
        } else {
            error(
                Code::NameError,
                name.span,
                format!("`{}` is not defined", name.name),
            )
            .with_help(format!("declare it first: `let {} = …`", name.name))
        };
        Err(diagnostic.into())
    }

    /// A condition's truth: a bool, or a one-element bool tensor; while tracing, a symbolic
    /// condition is decided (guarding on input sizes) or is data-dependent.
    pub(super) fn truth(&mut self, value: &Value, span: Span, context: &str) -> Result<bool> {
        match value {
            Value::Bool(b) => Ok(*b),
            Value::SymBool(cond) => self.decide(*cond, span, Ask::Normal),
            Value::Tensor(tensor) => self.tensor_truth(tensor, span, context),
            Value::RuntimeScalar(scalar) if scalar.dtype() == DType::Bool => {
                Err(self.tensor_data_guard(span, context))
            }
            other => Err(error(
                Code::TypeError,
                span,
                format!("{context} needs a bool, got {}", other.kind()),
            )
            .with_help("compare explicitly, e.g. `n > 0`")
            .into()),
        }
    }

    fn exec_check(&mut self, condition: &Expr, message: Option<&Expr>, span: Span) -> Result<()> {
        let (value, predicate) = match self.eval_all(condition)? {
            Some((value, predicate)) => (value, Some(predicate)),
            None => (self.eval(condition)?, None),
        };
        let message_of = |this: &mut Interpreter| this.check_message(condition, message);
        let (holds, code) = match &value {
            Value::Bool(b) => (*b, Code::CheckFailed),
            Value::SymBool(cond) => return self.trace_check(*cond, &message_of, span),
            Value::Tensor(tensor) | Value::RuntimeScalar(tensor) if tensor.is_fake() => {
                self.require_one_bool(&value, tensor, condition.span)?;
                let message = message_of(self)?;
                let scalar = matches!(value, Value::RuntimeScalar(_));
                let located = predicate.as_ref().filter(|_| !scalar);
                self.trace_device_check(tensor, message, scalar, span, located);
                return Ok(());
            }
            Value::Tensor(tensor) => (
                self.tensor_truth(tensor, condition.span, "`check`")?,
                Code::DeviceCheckFailed,
            ),
            other => {
                return Err(error(
                    Code::TypeError,
                    condition.span,
                    format!("`check` needs a bool condition, got {}", other.kind()),
                )
                .into());
            }
        };
        if holds {
            return Ok(());
        }
        if self.tracer.is_some() && code == Code::CheckFailed {
            let message = message_of(self)?;
            return Err(self.refuted_check(message, span));
        }
        let text = match message {
            Some(message) => self.eval(message)?.to_string(),
            None => format!("check failed: {}", self.sources.snippet(condition.span)),
        };
        let mut failure = error(code, span, text).with_label("this check failed");
        if let Some(place) = predicate.and_then(|predicate| self.first_failure(&predicate)) {
            failure = failure.with_note(format!("failed at {place}"));
        }
        Err(failure.into())
    }

    /// `check all(P)` or `check P.all()`, evaluated in parts so that a failure can name
    /// the first element of `P` that is false: the condition's value, and `P` with what it
    /// was computed from (both sides of a comparison, or `P` itself). `None` for any other
    /// condition (nothing is evaluated then).
    fn eval_all(&mut self, condition: &Expr) -> Result<Option<(Value, Predicate)>> {
        match &condition.kind {
            ExprKind::Call { callee, args } if args.len() == 1 && args[0].name.is_none() => {
                if !matches!(&callee.kind, ExprKind::Name(name) if &*name.name == "all") {
                    return Ok(None);
                }
                let function = self.eval(callee)?;
                if !matches!(&function, Value::Builtin(builtin) if builtin.name() == "all") {
                    // A user's own `all`: evaluate the call as written, once.
                    let args = self.eval_args(args, condition.span)?;
                    let value = self.call_value(&function, args, callee.span)?;
                    return Ok(Some((value, Predicate::none())));
                }
                let argument = &args[0].value;
                let predicate = self.predicate(argument)?;
                let mut call = CallArgs::new(condition.span);
                call.positional.push(Positional {
                    value: predicate.value.clone(),
                    span: argument.span,
                });
                let value = self.call_value(&function, call, callee.span)?;
                Ok(Some((value, predicate)))
            }
            ExprKind::Method {
                receiver,
                name,
                args,
            } if &*name.name == "all" && args.is_empty() => {
                let predicate = self.predicate(receiver)?;
                let call = CallArgs::new(condition.span);
                let value = self.call_method(predicate.value.clone(), receiver.span, name, call)?;
                Ok(Some((value, predicate)))
            }
            _ => Ok(None),
        }
    }

    /// The value of `expr` and what it was computed from: a comparison evaluates its two
    /// sides, then compares them (as evaluating it whole would).
    fn predicate(&mut self, expr: &Expr) -> Result<Predicate> {
        let comparison = |op: &BinaryOp| {
            Some(match op {
                BinaryOp::Eq => TensorOp::Eq,
                BinaryOp::Ne => TensorOp::Ne,
                BinaryOp::Lt => TensorOp::Lt,
                BinaryOp::Le => TensorOp::Le,
                BinaryOp::Gt => TensorOp::Gt,
                BinaryOp::Ge => TensorOp::Ge,
                _ => return None,
            })
        };
        if let ExprKind::Binary(op, left, right) = &expr.kind
            && let Some(tensor_op) = comparison(op)
        {
            let a = self.eval(left)?;
            let b = self.eval(right)?;
            let subjects = vec![
                (self.sources.snippet(left.span).to_string(), a.clone()),
                (self.sources.snippet(right.span).to_string(), b.clone()),
            ];
            let value = self.binary(*op, a, b, expr.span)?;
            return Ok(Predicate {
                value,
                op: Some(tensor_op),
                subjects,
            });
        }
        let value = self.eval(expr)?;
        Ok(Predicate {
            subjects: vec![(self.sources.snippet(expr.span).to_string(), value.clone())],
            value,
            op: None,
        })
    }

    /// Where a failed check's predicate is first false, with its subjects' elements there.
    fn first_failure(&mut self, predicate: &Predicate) -> Option<String> {
        let Value::Tensor(tensor) = &predicate.value else {
            return None;
        };
        let host = tensor.host()?.ok()?;
        let mut subjects = Vec::new();
        for (name, value) in &predicate.subjects {
            let data = match value {
                Value::Tensor(tensor) => Some(tensor.host()?.ok()?),
                _ => None,
            };
            subjects.push((name.as_str(), data));
        }
        let subjects: Vec<(&str, Option<&crate::backend::host::Tensor>)> = subjects
            .iter()
            .map(|(name, data)| (*name, data.as_ref()))
            .collect();
        crate::backend::host::first_failure(&host, &subjects)
    }

    /// While tracing, what a check reports when it fails: its message, as a template
    /// formatted then, or the error building the message raised. Eager code builds the
    /// message only when the check fails, so such an error is the check's failure, and what
    /// tracing the message recorded is forgotten. An error of tracing itself (a question on
    /// data) is raised at once.
    fn check_message(&mut self, condition: &Expr, message: Option<&Expr>) -> Result<CheckMessage> {
        let Some(message) = message else {
            return Ok(CheckMessage::Text(Template::text(format!(
                "check failed: {}",
                self.sources.snippet(condition.span)
            ))));
        };
        let mark = self.tracer.as_ref().map(|tracer| tracer.mark());
        match self.eval(message) {
            Ok(value) => Ok(CheckMessage::Text(
                self.template_of(std::slice::from_ref(&value), message.span),
            )),
            Err(error)
                if matches!(
                    error.code,
                    Code::NameError
                        | Code::TypeError
                        | Code::ShapeError
                        | Code::ValueError
                        | Code::CheckFailed
                ) =>
            {
                let Some(tracer) = self.tracer.as_mut() else {
                    return Ok(CheckMessage::Fails(error));
                };
                if let Some(mark) = mark {
                    tracer.rewind(mark);
                }
                if tracer.hintless {
                    // `tsl check` and editors say so: the message is broken whatever the
                    // values.
                    let at = error.span.unwrap_or(message.span);
                    let text = format!("this check's message cannot be built: {}", error.message);
                    tracer.notes.push(
                        Diagnostic::warning(error.code, at, text)
                            .with_label("built when the check fails")
                            .with_help(
                                "when the check fails, it raises this error instead of its message",
                            ),
                    );
                }
                Ok(CheckMessage::Fails(error))
            }
            Err(error) => Err(error),
        }
    }

    /// A traced check on tensor data needs one `bool` element. A wrong dtype is reported as
    /// eager code reports it for the same value (a tensor, or a host number).
    fn require_one_bool(&mut self, value: &Value, tensor: &TensorValue, span: Span) -> Result<()> {
        let message = match value {
            Value::Tensor(_) => super::tensor::not_one_bool_message("`check`", tensor),
            other => format!("`check` needs a bool condition, got {}", other.kind()),
        };
        if tensor.dtype() != DType::Bool {
            return Err(error(Code::TypeError, span, message).into());
        }
        self.require_one_element(tensor, &message, span)
    }

    /// While tracing: `tensor` must hold one element, or the type error `message` is raised:
    /// while tracing when its element count is known or decided by a guard, else when the
    /// graph runs, by a device assert placed here.
    pub(in crate::eval) fn require_one_element(
        &mut self,
        tensor: &TensorValue,
        message: &str,
        span: Span,
    ) -> Result<()> {
        let dims = tensor.dims();
        let count = self
            .with_sizes(span, |sizes| crate::graph::shape::numel(sizes, &dims))
            .map_err(|rule| super::tensor::rule_error(rule, span))?;
        match count {
            Dim::Known(1) => Ok(()),
            Dim::Known(_) => Err(error(Code::TypeError, span, message).into()),
            Dim::Sym(count) => {
                let one = self.env().int(1);
                let cond = self
                    .env()
                    .compare(Cmp::Eq, count, one)
                    .map_err(|failure| error(Code::ValueError, span, failure.to_string()))?;
                self.trace_requirement(cond, Code::TypeError, message, span)
            }
        }
    }

    fn exec_check_size(&mut self, value: &Expr, max: Option<&Expr>, span: Span) -> Result<()> {
        let size = self.eval(value)?;
        let bound = match max {
            Some(max) => Some((self.eval(max)?, max.span)),
            None => None,
        };
        let shown = self.sources.snippet(value.span).to_string();
        let symbolic = size.is_symbolic() || bound.as_ref().is_some_and(|(b, _)| b.is_symbolic());
        if symbolic {
            return self.trace_check_size(&size, bound, &shown, value.span, span);
        }
        let Value::Int(size) = size else {
            return Err(error(
                Code::TypeError,
                value.span,
                format!("`check_size` needs an int, got {}", size.kind()),
            )
            .into());
        };
        if size < 0 {
            return Err(error(
                Code::CheckFailed,
                span,
                format!("check_size failed: {shown} = {size} is negative"),
            )
            .with_label("this check failed")
            .into());
        }
        if let Some((bound, bound_span)) = bound {
            let Value::Int(bound) = bound else {
                return Err(error(
                    Code::TypeError,
                    bound_span,
                    format!("the max of `check_size` needs an int, got {}", bound.kind()),
                )
                .into());
            };
            if size > bound {
                return Err(error(
                    Code::CheckFailed,
                    span,
                    format!("check_size failed: {shown} = {size} exceeds max = {bound}"),
                )
                .with_label("this check failed")
                .into());
            }
        }
        Ok(())
    }
}

/// The predicate `P` of a `check all(P)`: its value and, to name a failing element, the
/// comparison that made it (if any) and the values it compared, with their source text.
pub(super) struct Predicate {
    pub value: Value,
    pub op: Option<TensorOp>,
    pub subjects: Vec<(String, Value)>,
}

impl Predicate {
    /// No predicate to point into (a user-defined `all`).
    fn none() -> Predicate {
        Predicate {
            value: Value::None,
            op: None,
            subjects: Vec::new(),
        }
    }
}

/// The error for a `for` loop or destructuring over a value that has no items.
fn not_iterable(value: &Value, span: Span) -> Box<Diagnostic> {
    error(
        Code::TypeError,
        span,
        format!("cannot iterate over {}", value.kind()),
    )
    .with_help("loop over a list, range(n) or a tensor")
    .into()
}
