//! Expressions: literals, names, strings, lists, calls, methods and fields.

use std::fmt::Write as _;

use super::args::{CallArgs, Keyword, Positional};
use super::builtins;
use super::trace::Ask;
use super::value::Value;
use super::{Interpreter, error};
use crate::diag::{Code, Diagnostic, Result};
use crate::graph::ir::Part;
use crate::source::Span;
use crate::syntax::ast::{Arg, BinaryOp, Expr, ExprKind, Ident, StrPart, UnaryOp};
use crate::syntax::hints;

impl Interpreter {
    pub(super) fn eval(&mut self, expr: &Expr) -> Result<Value> {
        let value = self.nested(expr.span, |this| this.eval_inner(expr))?;
        if self.tracer.is_some() {
            self.record_type(expr.span, &value);
        }
        Ok(value)
    }

    fn eval_inner(&mut self, expr: &Expr) -> Result<Value> {
        match &expr.kind {
            ExprKind::Int(value) => Ok(Value::Int(*value)),
            ExprKind::Float(value) => Ok(Value::Float(*value)),
            ExprKind::Bool(value) => Ok(Value::Bool(*value)),
            ExprKind::None => Ok(Value::None),
            ExprKind::Str(parts) => self.eval_string(parts),
            ExprKind::Name(name) => self.eval_name(name),
            ExprKind::List(items) => {
                let items = items
                    .iter()
                    .map(|item| self.eval(item))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Value::list(items))
            }
            ExprKind::Unary(op, operand) => {
                let value = self.eval(operand)?;
                match op {
                    UnaryOp::Neg => self.negate(value, expr.span),
                    UnaryOp::Not => self.logical_not(value, expr.span),
                    UnaryOp::Invert => self.invert(value, expr.span),
                }
            }
            ExprKind::Binary(BinaryOp::And, a, b) => self.short_circuit(false, a, b),
            ExprKind::Binary(BinaryOp::Or, a, b) => self.short_circuit(true, a, b),
            ExprKind::Binary(op, a, b) => {
                let left = self.eval(a)?;
                let right = self.eval(b)?;
                self.binary(*op, left, right, expr.span)
            }
            ExprKind::Call { callee, args } => {
                let function = self.eval(callee)?;
                let args = self.eval_args(args, expr.span)?;
                self.call_value(&function, args, callee.span)
            }
            ExprKind::Method {
                receiver,
                name,
                args,
            } => {
                let receiver_value = self.eval(receiver)?;
                let args = self.eval_args(args, expr.span)?;
                self.call_method(receiver_value, receiver.span, name, args)
            }
            ExprKind::Field { receiver, name } => {
                let value = self.eval(receiver)?;
                self.field(value, name)
            }
            ExprKind::Index { receiver, items } => {
                let value = self.eval(receiver)?;
                self.eval_index(value, items, expr.span)
            }
            ExprKind::Error => Err(error(
                Code::SyntaxError,
                expr.span,
                "this expression could not be parsed",
            )
            .into()),
        }
    }

    /// A string literal; while tracing, interpolated values known only when the graph runs
    /// make it a template.
    fn eval_string(&mut self, parts: &[StrPart]) -> Result<Value> {
        let mut text = String::new();
        let mut pieces = Vec::new();
        let mut interpolated = None;
        for part in parts {
            match part {
                StrPart::Text(literal) => text.push_str(literal),
                StrPart::Interpolation(expr) => {
                    let value = self.eval(expr)?;
                    if value.is_symbolic() {
                        pieces.push(Part::Text(std::mem::take(&mut text)));
                        pieces.extend(self.template_of(std::slice::from_ref(&value), expr.span).0);
                    } else {
                        if let Value::Str(piece) = &value {
                            let bytes = text.len() + piece.len();
                            text.try_reserve(piece.len())
                                .map_err(|_| super::operators::out_of_memory(bytes, expr.span))?;
                        }
                        let _ = write!(text, "{value}");
                        // Each piece is bounded (strings, and the text of lists and tensors),
                        // but not how many a literal holds.
                        if text.len() > super::limits::LIST_LENGTH {
                            return Err(super::operators::too_long("string", expr.span));
                        }
                        interpolated = Some(expr.span);
                    }
                }
            }
        }
        if let Some(span) = interpolated {
            self.count_built(text.len(), span)?;
        }
        pieces.push(Part::Text(text));
        Ok(Interpreter::string_value(pieces))
    }

    fn eval_name(&mut self, name: &Ident) -> Result<Value> {
        if let Some(value) = self.lookup(&name.name) {
            if self.tracer.is_some() {
                self.record_global_read(&name.name);
            }
            return Ok(value);
        }
        let hintless = self.tracer.as_ref().is_some_and(|tracer| tracer.hintless);
        if hintless && self.current_module().declares(&name.name) {
            return Err(Diagnostic::note(
                Code::Specialization,
                name.span,
                format!(
                    "the trace needs the global `{}`, which only has a value when the script runs; the rest of this function is not checked",
                    name.name
                ),
            )
            .with_label("set by a top-level `let`")
            .into());
        }
        Err(self.unknown_name(name).into())
    }

    fn unknown_name(&self, name: &Ident) -> Diagnostic {
        let diagnostic = error(
            Code::NameError,
            name.span,
            format!("`{}` is not defined", shorten(&name.name)),
        );
        if let Some(help) = hints::name(&name.name) {
            return diagnostic.with_help(help);
        }
        match suggest(&name.name, self.visible_names()) {
            Some(close) => diagnostic.with_help(format!("did you mean `{close}`?")),
            None => diagnostic,
        }
    }

    /// Every name the current code can see, for suggestions.
    fn visible_names(&self) -> Vec<String> {
        let mut names: Vec<String> = builtins::global_names().map(str::to_string).collect();
        if let Some(frame) = self.frames.last() {
            for scope in &frame.scopes {
                names.extend(scope.keys().map(ToString::to_string));
            }
            names.extend(
                frame
                    .module
                    .globals
                    .borrow()
                    .keys()
                    .map(ToString::to_string),
            );
        }
        names
    }

    /// `a and b` / `a or b` on bools, evaluating `b` only when needed. On a symbolic
    /// condition (while tracing) both sides are evaluated and combined symbolically.
    fn short_circuit(&mut self, is_or: bool, a: &Expr, b: &Expr) -> Result<Value> {
        let word = if is_or { "`or`" } else { "`and`" };
        let left = self.eval(a)?;
        self.logical_operand(&left, a.span, word)?;
        if let Value::Bool(value) = left
            && value == is_or
        {
            return Ok(Value::Bool(value));
        }
        let mark = match (&left, &self.tracer) {
            (Value::SymBool(_), Some(tracer)) => Some(tracer.mark()),
            _ => None,
        };
        let right = self
            .eval(b)
            .and_then(|right| self.logical_operand(&right, b.span, word).map(|()| right));
        let right = match (&left, right) {
            (Value::SymBool(cond), Err(problem)) => {
                // Eager code looks at `b` only when `a` does not decide, so whether `b` fails
                // depends on `a`: decide it, as an `if` would. Where eager code would not
                // have evaluated `b`, what tracing it recorded (an operation that fails on
                // data, a print) is forgotten.
                let decided = self.decide(*cond, a.span, Ask::Normal);
                if !matches!(decided, Ok(value) if value != is_or)
                    && let (Some(mark), Some(tracer)) = (mark, self.tracer.as_mut())
                {
                    tracer.rewind(mark);
                }
                if decided? == is_or {
                    return Ok(Value::Bool(is_or));
                }
                return Err(problem);
            }
            (_, right) => right?,
        };
        let op = if is_or {
            BinaryOp::BitOr
        } else {
            BinaryOp::BitAnd
        };
        match (&left, &right) {
            // `left` did not decide it, so `right` does.
            (Value::Bool(_), _) => Ok(right),
            // `x or true` is true, `x and false` is false.
            (_, Value::Bool(value)) if *value == is_or => Ok(right),
            // `x or false` and `x and true` are `x`.
            (_, Value::Bool(_)) => Ok(left),
            _ => Ok(self
                .symbolic_binary(op, &left, &right, a.span.to(b.span))?
                .expect("two symbolic conditions combine")),
        }
    }

    /// Checks an operand of `and`/`or`: a bool or a symbolic condition.
    fn logical_operand(&mut self, value: &Value, span: Span, word: &str) -> Result<()> {
        match value {
            Value::Bool(_) | Value::SymBool(_) => Ok(()),
            // A bool computed from data when the graph runs, as an `if` on it would be.
            Value::RuntimeScalar(scalar) if scalar.dtype() == crate::dtype::DType::Bool => {
                Err(self.tensor_data_guard(span, word))
            }
            Value::Tensor(_) => Err(error(
                Code::TypeError,
                span,
                format!("{word} needs bools, got a tensor"),
            )
            .with_help("combine bool tensors elementwise with `&` and `|`")
            .into()),
            other => Err(error(
                Code::TypeError,
                span,
                format!("{word} needs bools, got {}", other.kind()),
            )
            .into()),
        }
    }

    pub(super) fn eval_args(&mut self, args: &[Arg], span: Span) -> Result<CallArgs> {
        let mut call = CallArgs::new(span);
        for arg in args {
            let value = self.eval(&arg.value)?;
            match &arg.name {
                None => call.positional.push(Positional {
                    value,
                    span: arg.value.span,
                }),
                Some(name) => call.keywords.push(Keyword {
                    name: name.name.clone(),
                    value,
                    span: name.span.to(arg.value.span),
                }),
            }
        }
        Ok(call)
    }

    /// Calls any callable value.
    pub(super) fn call_value(
        &mut self,
        function: &Value,
        args: CallArgs,
        callee_span: Span,
    ) -> Result<Value> {
        match function {
            Value::Function(function) => self.call_function(function, args),
            Value::Builtin(builtin) => builtin.call(self, args),
            other => Err(error(
                Code::TypeError,
                callee_span,
                format!("{} is not callable", other.kind()),
            )
            .into()),
        }
    }

    pub(super) fn call_method(
        &mut self,
        receiver: Value,
        receiver_span: Span,
        name: &Ident,
        mut args: CallArgs,
    ) -> Result<Value> {
        match &receiver {
            Value::Module(module) => match module.get(&name.name) {
                Some(function) => self.call_value(&function, args, name.span),
                None => Err(self.missing_member(&receiver, name, module_names(module))),
            },
            Value::Tensor(_) => match builtins::method(&name.name) {
                Some(builtin) => {
                    args.positional.insert(
                        0,
                        Positional {
                            value: receiver,
                            span: receiver_span,
                        },
                    );
                    builtin.call(self, args)
                }
                None => Err(self.missing_member(
                    &receiver,
                    name,
                    builtins::method_names().map(str::to_string).collect(),
                )),
            },
            _ => Err(self.missing_member(&receiver, name, Vec::new())),
        }
    }

    fn missing_member(
        &self,
        receiver: &Value,
        name: &Ident,
        candidates: Vec<String>,
    ) -> Box<Diagnostic> {
        let owner = match receiver {
            Value::Module(module) => format!("module {}", module.name),
            Value::Tensor(_) => "a tensor".to_string(),
            other => other.kind(),
        };
        let diagnostic = error(
            Code::NameError,
            name.span,
            format!("{owner} has no member `{}`", name.name),
        );
        let hint = match receiver {
            Value::Tensor(_) => hints::tensor_member(&name.name),
            Value::List(_) => hints::list_member(&name.name),
            _ => None,
        };
        let diagnostic = match (hint, suggest(&name.name, candidates)) {
            (Some(help), _) => diagnostic.with_help(help),
            (None, Some(close)) => diagnostic.with_help(format!("did you mean `{close}`?")),
            (None, None) if matches!(receiver, Value::List(_)) => {
                diagnostic.with_help("lists are immutable: build a new one, e.g. `xs + [x]`")
            }
            (None, None) => diagnostic,
        };
        diagnostic.into()
    }

    fn field(&mut self, value: Value, name: &Ident) -> Result<Value> {
        match &value {
            Value::Tensor(tensor) => match &*name.name {
                "shape" => Ok(super::builtins::size_list(&tensor.dims())),
                "ndim" => Ok(Value::Int(tensor.ndim() as i64)),
                "dtype" => Ok(Value::DType(tensor.dtype())),
                "T" => self.transpose_all(tensor.clone(), name.span),
                _ => Err(self.missing_member(
                    &value,
                    name,
                    ["shape", "ndim", "dtype", "T"]
                        .into_iter()
                        .map(String::from)
                        .collect(),
                )),
            },
            Value::Module(module) => module
                .get(&name.name)
                .ok_or_else(|| self.missing_member(&value, name, module_names(module))),
            _ => Err(self.missing_member(&value, name, Vec::new())),
        }
    }
}

fn module_names(module: &super::Module) -> Vec<String> {
    module
        .globals
        .borrow()
        .keys()
        .map(ToString::to_string)
        .collect()
}

/// A name as messages show it: very long names are cut.
fn shorten(name: &str) -> String {
    if name.chars().count() <= 60 {
        return name.to_string();
    }
    format!("{}…", name.chars().take(60).collect::<String>())
}

/// The candidate closest to `name`, if it is close enough to be a likely typo.
pub fn suggest(name: &str, candidates: Vec<String>) -> Option<String> {
    if name.len() > 64 {
        return None;
    }
    candidates
        .into_iter()
        .filter(|candidate| candidate != name)
        .map(|candidate| (strsim::damerau_levenshtein(name, &candidate), candidate))
        .filter(|(distance, candidate)| *distance <= 2.min(candidate.len().max(name.len()) / 3 + 1))
        .min()
        .map(|(_, candidate)| candidate)
}
