//! Operators on values: Python semantics for ints and floats, lists and strings, and the
//! elementwise tensor operations (with a scalar on either side).

use std::cmp::Ordering;

use super::args::scalar_of;
use super::tensor::Operand;
use super::trace::{Ask, comparison};
use super::value::Value;
use super::{Interpreter, error, limits};
use crate::backend::KernelError;
use crate::diag::{Code, Diagnostic, Result};
use crate::dtype::DType;
use crate::graph::ir::{Part, Template};
use crate::graph::op::{BinaryOp as TensorOp, Op, UnaryOp};
use crate::source::Span;
use crate::syntax::ast::BinaryOp;

mod exact;

use exact::exact_float_comparison;

impl Interpreter {
    pub(super) fn binary(&mut self, op: BinaryOp, a: Value, b: Value, span: Span) -> Result<Value> {
        let with_none = matches!(a, Value::None) || matches!(b, Value::None);
        if with_none && matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
            let same = matches!((&a, &b), (Value::None, Value::None));
            return Ok(Value::Bool(same == (op == BinaryOp::Eq)));
        }
        let (a, b) = self.conditions_as_numbers(op, (a, b), span)?;
        if matches!(a, Value::Tensor(_)) || matches!(b, Value::Tensor(_)) {
            return self.tensor_binary(op, a, b, span);
        }
        let runtime = |value: &Value| matches!(value, Value::RuntimeScalar(_));
        let symbolic = |value: &Value| matches!(value, Value::SymInt(_) | Value::SymBool(_));
        let (a, b) = self.concrete_repeat_count(op, a, b, span)?;
        let traced = runtime(&a) || runtime(&b) || symbolic(&a) || symbolic(&b);
        let numbers = a.is_number() && b.is_number();
        if matches!(op, BinaryOp::Eq | BinaryOp::Ne) && traced && !numbers {
            // A number never equals a value of another kind, known now or when the graph
            // runs, as in eager code.
            return Ok(Value::Bool(op == BinaryOp::Ne));
        }
        let division = matches!(op, BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::Rem);
        if division && traced && numbers {
            // Host division of numbers: eager code refuses a zero divisor; so does the trace.
            // Other values are a type error first, whatever the divisor.
            match &b {
                Value::Int(0) | Value::Bool(false) => return Err(division_by_zero(span)),
                Value::Float(x) if *x == 0.0 => return Err(division_by_zero(span)),
                Value::SymInt(divisor) => self.trace_divisor(*divisor, span)?,
                Value::RuntimeScalar(_) => {
                    self.require_nonzero(b.clone(), "division by zero", span)?;
                }
                _ => {}
            }
        }
        if op == BinaryOp::Pow
            && let Value::RuntimeScalar(base) = &a
            && base.dtype() != DType::F32
            && matches!(b, Value::Int(exponent) if exponent < 0)
        {
            // An int (or bool) read from data to a negative power is a float, as in eager
            // code, from a base that must not be 0.
            self.require_nonzero(a.clone(), "0 cannot be raised to a negative power", span)?;
            let cast = Op::Cast(DType::F32);
            let base = self.apply_one(cast, vec![Operand::Tensor(base.clone())], span)?;
            let base = self.host_number(base, span)?;
            return self.runtime_binary(op, base, b, span);
        }
        if !runtime(&a) && !runtime(&b) && (symbolic(&a) || symbolic(&b)) {
            if let Some(value) = self.symbolic_binary(op, &a, &b, span)? {
                return Ok(value);
            }
        }
        if traced {
            // A host value read from data is a host number as in eager code, so bitwise
            // operators on a float are refused with eager code's error.
            if matches!(op, BinaryOp::BitAnd | BinaryOp::BitOr) && (a.is_float() || b.is_float()) {
                return Err(unsupported(op, &a, &b, span));
            }
            return self.runtime_binary(op, a, b, span);
        }
        // Text known only when the graph runs; two plain strings are joined below.
        if let (Value::Template(_) | Value::Str(_), Value::Template(_) | Value::Str(_)) = (&a, &b)
            && op == BinaryOp::Add
            && (matches!(a, Value::Template(_)) || matches!(b, Value::Template(_)))
        {
            let mut parts = self.template_of(std::slice::from_ref(&a), span).0;
            parts.extend(self.template_of(std::slice::from_ref(&b), span).0);
            return Ok(Interpreter::string_value(parts));
        }
        if let (BinaryOp::Mul, Value::Template(template), Value::Int(count))
        | (BinaryOp::Mul, Value::Int(count), Value::Template(template)) = (op, &a, &b)
        {
            return self.repeat_template(template, *count, span);
        }
        let text = |value: &Value| matches!(value, Value::Template(_) | Value::Str(_));
        if comparison(op).is_some()
            && text(&a)
            && text(&b)
            && (matches!(a, Value::Template(_)) || matches!(b, Value::Template(_)))
        {
            return Err(run_time_text(Code::DataDependentGuard, span));
        }
        if let (Some(x), Some(y)) = (number(&a), number(&b)) {
            return scalar_binary(op, x, y, span);
        }
        match (op, &a, &b) {
            (BinaryOp::Eq | BinaryOp::Ne, _, _) => self.equality(op, &a, &b, span),
            (BinaryOp::Add, Value::Str(x), Value::Str(y)) => {
                if x.len().saturating_add(y.len()) > limits::LIST_LENGTH {
                    return Err(too_long("string", span));
                }
                self.count_built(x.len() + y.len(), span)?;
                let mut text = empty_text(x.len() + y.len(), span)?;
                text.push_str(x);
                text.push_str(y);
                Ok(Value::string(text))
            }
            (BinaryOp::Add, Value::List(x), Value::List(y)) => {
                if x.len().saturating_add(y.len()) > limits::LIST_LENGTH {
                    return Err(too_long("list", span));
                }
                self.count_built(value_bytes(x.len() + y.len()), span)?;
                reserve_values(x.len() + y.len(), span)?;
                Ok(Value::list(x.iter().chain(y.iter()).cloned().collect()))
            }
            (BinaryOp::Mul, Value::List(items), Value::Int(count))
            | (BinaryOp::Mul, Value::Int(count), Value::List(items)) => {
                let count = usize::try_from(*count).unwrap_or(0);
                let length = items.len().saturating_mul(count);
                if length > limits::LIST_LENGTH {
                    return Err(too_long("list", span));
                }
                self.count_built(value_bytes(length), span)?;
                reserve_values(length, span)?;
                let repeated = std::iter::repeat_n(&**items, count).flatten();
                Ok(Value::list(repeated.cloned().collect()))
            }
            (BinaryOp::Mul, Value::Str(text), Value::Int(count))
            | (BinaryOp::Mul, Value::Int(count), Value::Str(text)) => {
                let count = usize::try_from(*count).unwrap_or(0);
                if text.len().saturating_mul(count) > limits::LIST_LENGTH {
                    return Err(repeated_too_long(span));
                }
                self.count_built(text.len() * count, span)?;
                Ok(Value::string(repeat_text(text, count, span)?))
            }
            (_, Value::Str(x), Value::Str(y)) if op.is_comparison() => {
                Ok(Value::Bool(compare(op, x.cmp(y))))
            }
            _ => Err(unsupported(op, &a, &b, span)),
        }
    }

    /// `text * count` for text known only when the graph runs: its parts, `count` times
    /// (none for a count below 1, as for a plain string). A value in it prints as one byte
    /// at least, so a repetition eager code would refuse as too long is refused here; one of
    /// more parts than a traced list may hold is refused too.
    fn repeat_template(&mut self, template: &Template, count: i64, span: Span) -> Result<Value> {
        let count = usize::try_from(count).unwrap_or(0);
        let least: usize = template
            .0
            .iter()
            .map(|part| match part {
                Part::Text(text) => text.len(),
                Part::Int(_) | Part::Bool(_) | Part::Scalar(_) | Part::Tensor(_) => 1,
            })
            .sum();
        if least.saturating_mul(count) > limits::LIST_LENGTH {
            return Err(repeated_too_long(span));
        }
        let parts = template.0.len().saturating_mul(count);
        if parts > limits::TRACED_LIST_LENGTH {
            return Err(error(
                Code::ValueError,
                span,
                format!(
                    "a string repeated into {parts} parts is more than the {} a compiled \
                     function's string may hold",
                    limits::TRACED_LIST_LENGTH
                ),
            )
            .into());
        }
        self.count_built(least * count, span)?;
        let repeated = template.0.iter().cloned().cycle().take(parts).collect();
        Ok(Interpreter::string_value(repeated))
    }

    /// Host numbers known only when the graph runs: the operation is traced on one-element
    /// tensors and the result stays a host value.
    pub(in crate::eval) fn runtime_binary(
        &mut self,
        op: BinaryOp,
        a: Value,
        b: Value,
        span: Span,
    ) -> Result<Value> {
        let (a, b) = exact_float_comparison(op, a, b);
        let value = self.tensor_binary(op, a, b, span)?;
        self.host_number(value, span)
    }

    /// A one-element tensor of the graph as the host number it stands for. An int is a
    /// symbol, as `item()` of an `i64` is, so it sizes and indexes tensors as an eager int
    /// does; a float or a bool is a number known when the graph runs.
    pub(in crate::eval) fn host_number(&mut self, value: Value, span: Span) -> Result<Value> {
        match value {
            Value::Tensor(tensor) | Value::RuntimeScalar(tensor)
                if tensor.dtype() == DType::I64 && tensor.graph_value().is_some() =>
            {
                self.trace_host_int(&tensor, span)
            }
            Value::Tensor(tensor) => Ok(Value::RuntimeScalar(tensor)),
            other => Ok(other),
        }
    }

    /// Requires a host number read from data not to be 0, where eager code raises
    /// `value-error` with `message`: a device assert at this point of the program.
    fn require_nonzero(&mut self, value: Value, message: &str, span: Span) -> Result<()> {
        if let Value::RuntimeScalar(nonzero) =
            self.runtime_binary(BinaryOp::Ne, value, Value::Int(0), span)?
        {
            self.trace_device_requirement(&nonzero, Code::ValueError, message, span);
        }
        Ok(())
    }

    /// A symbolic condition in arithmetic, or compared with a number, counts as 0 or 1, as a
    /// bool does in eager code. The symbolic engine has no int of a condition, so the
    /// condition is decided, as `int()` decides one: guarded on input sizes, a
    /// `data-dependent-guard` on data. `&` and `|` between two bools stay conditions.
    fn conditions_as_numbers(
        &mut self,
        op: BinaryOp,
        (a, b): (Value, Value),
        span: Span,
    ) -> Result<(Value, Value)> {
        let boolean = |value: &Value| matches!(value, Value::Bool(_) | Value::SymBool(_));
        let numeric = |value: &Value| value.is_number() || matches!(value, Value::Tensor(_));
        let both_bool = boolean(&a) && boolean(&b);
        if (both_bool && matches!(op, BinaryOp::BitAnd | BinaryOp::BitOr))
            || !(numeric(&a) && numeric(&b))
        {
            return Ok((a, b));
        }
        Ok((
            self.condition_as_number(a, span)?,
            self.condition_as_number(b, span)?,
        ))
    }

    /// A symbolic condition as a bool (see [`Interpreter::conditions_as_numbers`]); other
    /// values as they are.
    pub(in crate::eval) fn condition_as_number(
        &mut self,
        value: Value,
        span: Span,
    ) -> Result<Value> {
        let Value::SymBool(cond) = value else {
            return Ok(value);
        };
        self.decide(cond, span, Ask::Normal)
            .map(Value::Bool)
            .map_err(|mut diagnostic| {
                if diagnostic.code == Code::DataDependentGuard {
                    diagnostic.help = Some(
                        "a condition on data is known only when the graph runs, so it cannot \
                         count as 0 or 1 while tracing: compute with it as a tensor \
                         (`(t > 0).long()`), or read it as an int with `.long().item()`"
                            .to_string(),
                    );
                }
                diagnostic
            })
    }

    /// `text * n` and `list * n` repeat: a count computed while tracing is decided (or
    /// guarded on) as any int a loop needs.
    fn concrete_repeat_count(
        &mut self,
        op: BinaryOp,
        a: Value,
        b: Value,
        span: Span,
    ) -> Result<(Value, Value)> {
        let repeated = |value: &Value| matches!(value, Value::Str(_) | Value::List(_));
        match (op, &a, &b) {
            (BinaryOp::Mul, Value::SymInt(count), other) if repeated(other) => {
                let count = self.concrete_int(*count, span, "a repeat count")?;
                Ok((Value::Int(count), b))
            }
            (BinaryOp::Mul, other, Value::SymInt(count)) if repeated(other) => {
                let count = self.concrete_int(*count, span, "a repeat count")?;
                Ok((a, Value::Int(count)))
            }
            _ => Ok((a, b)),
        }
    }

    fn tensor_binary(&mut self, op: BinaryOp, a: Value, b: Value, span: Span) -> Result<Value> {
        let is_operand = |value: &Value| {
            matches!(
                value,
                Value::Tensor(_) | Value::RuntimeScalar(_) | Value::SymInt(_)
            ) || scalar_of(value).is_some()
        };
        let both_tensors = matches!((&a, &b), (Value::Tensor(_), Value::Tensor(_)));
        let tensor_op = match op {
            BinaryOp::MatMul if both_tensors => Some(Op::MatMul),
            BinaryOp::MatMul => None,
            other => tensor_op(other).map(Op::Binary),
        };
        let (Some(tensor_op), true) = (tensor_op, is_operand(&a) && is_operand(&b)) else {
            return Err(unsupported(op, &a, &b, span));
        };
        self.apply_one(tensor_op, vec![into_operand(a), into_operand(b)], span)
    }

    pub(super) fn negate(&mut self, value: Value, span: Span) -> Result<Value> {
        match value {
            Value::Int(i) => i
                .checked_neg()
                .map(Value::Int)
                .ok_or_else(|| overflow(span)),
            Value::Bool(b) => Ok(Value::Int(-i64::from(b))),
            Value::Float(x) => Ok(Value::Float(-x)),
            Value::SymInt(_) | Value::SymBool(_) => {
                self.binary(BinaryOp::Sub, Value::Int(0), value, span)
            }
            Value::RuntimeScalar(tensor) => {
                // A bool read from data is a host bool: negated, it is an int (`-True` is -1).
                let operand = if tensor.dtype() == DType::Bool {
                    let cast = Op::Cast(DType::I64);
                    into_operand(self.apply_one(cast, vec![Operand::Tensor(tensor)], span)?)
                } else {
                    Operand::Tensor(tensor)
                };
                let negated = self.apply_one(Op::Unary(UnaryOp::Neg), vec![operand], span)?;
                self.host_number(negated, span)
            }
            Value::Tensor(tensor) => {
                self.apply_one(Op::Unary(UnaryOp::Neg), vec![Operand::Tensor(tensor)], span)
            }
            other => Err(error(
                Code::TypeError,
                span,
                format!("cannot negate {}", other.kind()),
            )
            .into()),
        }
    }

    /// `==` and `!=` on values that are not numbers or tensors (lists, strings, ...). Lists
    /// holding sizes or numbers known only symbolically or when the graph runs (`p.shape ==
    /// q.shape` after two masks) compare item by item as such numbers do, and the answers are
    /// combined as `and` combines them; where the structure alone decides, so does the answer.
    fn equality(&mut self, op: BinaryOp, a: &Value, b: &Value, span: Span) -> Result<Value> {
        let unequal = Value::Bool(op == BinaryOp::Ne);
        let Some(undecided) = equal_but_for(a, b) else {
            return Ok(unequal);
        };
        let mut all = Value::Bool(true);
        for (x, y) in undecided {
            let same = self.binary(BinaryOp::Eq, x.clone(), y.clone(), span)?;
            all = match (all, same) {
                (_, Value::Bool(false)) => return Ok(unequal),
                (all, Value::Bool(true)) => all,
                (Value::Bool(true), same) => same,
                (all, same) => self.binary(BinaryOp::BitAnd, all, same, span)?,
            };
        }
        if op == BinaryOp::Eq {
            Ok(all)
        } else {
            self.logical_not(all, span)
        }
    }

    pub(super) fn logical_not(&mut self, value: Value, span: Span) -> Result<Value> {
        match value {
            Value::Bool(b) => Ok(Value::Bool(!b)),
            Value::SymBool(cond) => self.symbolic_not(cond, span),
            // A number read from data is a host number: `not` takes only a bool, as eagerly.
            Value::RuntimeScalar(tensor) if tensor.dtype() == DType::Bool => {
                let negated =
                    self.apply_one(Op::Unary(UnaryOp::Not), vec![Operand::Tensor(tensor)], span)?;
                self.host_number(negated, span)
            }
            Value::Tensor(tensor) => {
                self.apply_one(Op::Unary(UnaryOp::Not), vec![Operand::Tensor(tensor)], span)
            }
            other => Err(error(
                Code::TypeError,
                span,
                format!("`not` needs a bool or a tensor, got {}", other.kind()),
            )
            .with_help("compare explicitly, e.g. `not (n == 0)`")
            .into()),
        }
    }
}

impl Interpreter {
    /// `~x` as in PyTorch: logical not of a bool tensor, bitwise not of an i64 tensor
    /// (computed as `-x - 1`, which is the same in wrapping arithmetic). Anything else is a
    /// type error whose help gives the TSL spelling.
    pub(super) fn invert(&mut self, value: Value, span: Span) -> Result<Value> {
        let tensor = match value {
            Value::Tensor(tensor) => tensor,
            Value::Bool(_) | Value::SymBool(_) => {
                return Err(error(
                    Code::TypeError,
                    span,
                    "`~` needs a bool or i64 tensor, got bool",
                )
                .with_help("logical not of a bool is written `not b`")
                .into());
            }
            other => {
                return Err(error(
                    Code::TypeError,
                    span,
                    format!("`~` needs a bool or i64 tensor, got {}", other.kind()),
                )
                .with_help("logical not is written `not x`")
                .into());
            }
        };
        match tensor.dtype() {
            DType::Bool => {
                self.apply_one(Op::Unary(UnaryOp::Not), vec![Operand::Tensor(tensor)], span)
            }
            DType::I64 => {
                let negated =
                    self.apply_one(Op::Unary(UnaryOp::Neg), vec![Operand::Tensor(tensor)], span)?;
                self.binary(BinaryOp::Sub, negated, Value::Int(1), span)
            }
            DType::F32 => Err(error(
                Code::TypeError,
                span,
                format!("`~` needs a bool or i64 tensor, got {}", tensor.meta()),
            )
            .with_help("for a logical not of any tensor write `not x` (true where x == 0)")
            .into()),
        }
    }
}

/// A tensor or number as an operand, moved so a temporary tensor's buffer can be reused.
fn into_operand(value: Value) -> Operand {
    match value {
        Value::Tensor(tensor) | Value::RuntimeScalar(tensor) => Operand::Tensor(tensor),
        Value::SymInt(expr) => Operand::SymInt(expr),
        other => Operand::Scalar(scalar_of(&other).expect("checked to be a number")),
    }
}

/// The tensor operation an operator stands for.
fn tensor_op(op: BinaryOp) -> Option<TensorOp> {
    Some(match op {
        BinaryOp::Add => TensorOp::Add,
        BinaryOp::Sub => TensorOp::Sub,
        BinaryOp::Mul => TensorOp::Mul,
        BinaryOp::Div => TensorOp::Div,
        BinaryOp::FloorDiv => TensorOp::FloorDiv,
        BinaryOp::Rem => TensorOp::Rem,
        BinaryOp::Pow => TensorOp::Pow,
        BinaryOp::Eq => TensorOp::Eq,
        BinaryOp::Ne => TensorOp::Ne,
        BinaryOp::Lt => TensorOp::Lt,
        BinaryOp::Le => TensorOp::Le,
        BinaryOp::Gt => TensorOp::Gt,
        BinaryOp::Ge => TensorOp::Ge,
        BinaryOp::BitAnd => TensorOp::And,
        BinaryOp::BitOr => TensorOp::Or,
        BinaryOp::MatMul | BinaryOp::And | BinaryOp::Or => return None,
    })
}

/// A host number: ints (bools count as ints, as in Python) or floats.
#[derive(Clone, Copy)]
enum Number {
    Int(i64),
    Float(f64),
    Bool(bool),
}

fn number(value: &Value) -> Option<Number> {
    match value {
        Value::Int(i) => Some(Number::Int(*i)),
        Value::Float(x) => Some(Number::Float(*x)),
        Value::Bool(b) => Some(Number::Bool(*b)),
        _ => None,
    }
}

impl Number {
    fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(x) => x,
            Number::Bool(b) => f64::from(u8::from(b)),
        }
    }

    fn as_int(self) -> Option<i64> {
        match self {
            Number::Int(i) => Some(i),
            Number::Bool(b) => Some(i64::from(b)),
            Number::Float(_) => None,
        }
    }
}

fn scalar_binary(op: BinaryOp, x: Number, y: Number, span: Span) -> Result<Value> {
    if let (Number::Bool(a), Number::Bool(b)) = (x, y) {
        match op {
            BinaryOp::BitAnd => return Ok(Value::Bool(a & b)),
            BinaryOp::BitOr => return Ok(Value::Bool(a | b)),
            _ => {}
        }
    }
    if op.is_comparison() {
        let ordering = match (x.as_int(), y.as_int()) {
            (Some(a), Some(b)) => Some(a.cmp(&b)),
            _ => x.as_f64().partial_cmp(&y.as_f64()),
        };
        return Ok(Value::Bool(
            ordering.is_some_and(|ordering| compare(op, ordering))
                || (op == BinaryOp::Ne && ordering.is_none()),
        ));
    }
    match (x.as_int(), y.as_int()) {
        (Some(a), Some(b)) => int_binary(op, a, b, span),
        _ => float_binary(op, x.as_f64(), y.as_f64(), span),
    }
}

fn int_binary(op: BinaryOp, a: i64, b: i64, span: Span) -> Result<Value> {
    let checked = |result: Option<i64>| result.map(Value::Int).ok_or_else(|| overflow(span));
    match op {
        BinaryOp::Add => checked(a.checked_add(b)),
        BinaryOp::Sub => checked(a.checked_sub(b)),
        BinaryOp::Mul => checked(a.checked_mul(b)),
        BinaryOp::Div => {
            if b == 0 {
                return Err(division_by_zero(span));
            }
            Ok(Value::Float(a as f64 / b as f64))
        }
        BinaryOp::FloorDiv => {
            if b == 0 {
                return Err(division_by_zero(span));
            }
            checked(floor_div(a, b))
        }
        BinaryOp::Rem => {
            if b == 0 {
                return Err(division_by_zero(span));
            }
            checked(a.checked_rem(b).map(|r| {
                if r != 0 && (r < 0) != (b < 0) {
                    r + b
                } else {
                    r
                }
            }))
        }
        BinaryOp::Pow => int_pow(a, b, span),
        BinaryOp::BitAnd => Ok(Value::Int(a & b)),
        BinaryOp::BitOr => Ok(Value::Int(a | b)),
        _ => Err(error(
            Code::TypeError,
            span,
            format!("`{}` is not defined for ints", op.symbol()),
        )
        .into()),
    }
}

/// Python's `//` on ints: rounds toward negative infinity.
pub fn floor_div(a: i64, b: i64) -> Option<i64> {
    let quotient = a.checked_div(b)?;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        quotient.checked_sub(1)
    } else {
        Some(quotient)
    }
}

fn int_pow(base: i64, exponent: i64, span: Span) -> Result<Value> {
    if exponent < 0 {
        if base == 0 {
            return Err(error(
                Code::ValueError,
                span,
                "0 cannot be raised to a negative power",
            )
            .into());
        }
        return Ok(Value::Float((base as f64).powf(exponent as f64)));
    }
    let result = match base {
        0 | 1 => Some(if exponent == 0 { 1 } else { base }),
        -1 => Some(if exponent % 2 == 0 { 1 } else { -1 }),
        _ => u32::try_from(exponent)
            .ok()
            .and_then(|exponent| base.checked_pow(exponent)),
    };
    result.map(Value::Int).ok_or_else(|| overflow(span))
}

fn float_binary(op: BinaryOp, a: f64, b: f64, span: Span) -> Result<Value> {
    let divides = matches!(op, BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::Rem);
    if divides && b == 0.0 {
        return Err(division_by_zero(span));
    }
    let value = match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div => a / b,
        BinaryOp::FloorDiv => (a / b).floor(),
        BinaryOp::Rem => {
            let r = a % b;
            if r != 0.0 && (r < 0.0) != (b < 0.0) {
                r + b
            } else {
                r
            }
        }
        BinaryOp::Pow => a.powf(b),
        _ => {
            return Err(error(
                Code::TypeError,
                span,
                format!("`{}` is not defined for floats", op.symbol()),
            )
            .into());
        }
    };
    Ok(Value::Float(value))
}

fn compare(op: BinaryOp, ordering: Ordering) -> bool {
    match op {
        BinaryOp::Eq => ordering == Ordering::Equal,
        BinaryOp::Ne => ordering != Ordering::Equal,
        BinaryOp::Lt => ordering == Ordering::Less,
        BinaryOp::Le => ordering != Ordering::Greater,
        BinaryOp::Gt => ordering == Ordering::Greater,
        BinaryOp::Ge => ordering != Ordering::Less,
        _ => false,
    }
}

/// `==` on non-tensor values: structural, numbers compared by value (`1 == 1.0`). As in
/// Python, a list is equal to itself without comparing its items, and nested lists are walked
/// with a stack of the pairs still open, not by recursion, so no nesting is too deep. Lists
/// never change, so a pair of lists met again is not compared again: a list can hold another
/// twice, and thirty doublings of each side would otherwise be a billion comparisons.
///
/// Pairs of items of which one is known only symbolically or when the graph runs are left
/// aside: the answer is `None` when the values differ whatever those items are, else the
/// pairs that must also be equal (none when the values are equal).
fn equal_but_for<'v>(a: &'v Value, b: &'v Value) -> Option<Vec<(&'v Value, &'v Value)>> {
    let traced = |value: &Value| {
        matches!(
            value,
            Value::SymInt(_) | Value::SymBool(_) | Value::RuntimeScalar(_)
        )
    };
    let mut undecided = Vec::new();
    let mut open: Vec<(&[Value], &[Value])> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut pair = (a, b);
    loop {
        match pair {
            (Value::List(x), Value::List(y)) => {
                if x.len() != y.len() {
                    return None;
                }
                let key = (x.as_ptr().addr(), y.as_ptr().addr());
                if !x.is_empty() && !std::rc::Rc::ptr_eq(x, y) && seen.insert(key) {
                    open.push((x, y));
                }
            }
            (x, y) if traced(x) || traced(y) => undecided.push((x, y)),
            (x, y) => {
                if !equal_item(x, y) {
                    return None;
                }
            }
        }
        // The next pair to compare, after the lists that are done.
        loop {
            let Some((x, y)) = open.last_mut() else {
                return Some(undecided);
            };
            if let (Some((p, rest_x)), Some((q, rest_y))) = (x.split_first(), y.split_first()) {
                (*x, *y) = (rest_x, rest_y);
                pair = (p, q);
                break;
            }
            open.pop();
        }
    }
}

/// `==` on two values that are not both lists.
fn equal_item(a: &Value, b: &Value) -> bool {
    if let (Some(x), Some(y)) = (number(a), number(b)) {
        return match (x.as_int(), y.as_int()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        };
    }
    match (a, b) {
        (Value::None, Value::None) => true,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::DType(x), Value::DType(y)) => x == y,
        (Value::Function(x), Value::Function(y)) => std::rc::Rc::ptr_eq(x, y),
        (Value::Builtin(x), Value::Builtin(y)) => x.name() == y.name(),
        (Value::Module(x), Value::Module(y)) => std::rc::Rc::ptr_eq(x, y),
        _ => false,
    }
}

/// A string or list longer than [`limits::LIST_LENGTH`] (bytes of a string, items of a
/// list).
pub(super) fn too_long(what: &str, span: Span) -> Box<crate::diag::Diagnostic> {
    let unit = if what == "string" { "bytes" } else { "items" };
    error(
        Code::ValueError,
        span,
        format!(
            "a {what} of more than {} {unit} is too long",
            limits::LIST_LENGTH
        ),
    )
    .into()
}

/// Fails with a `value-error` when a list of `count` values cannot be allocated now.
pub(super) fn reserve_values(count: usize, span: Span) -> Result<()> {
    reserve(count, std::mem::size_of::<Value>(), span)
}

/// An empty string with room for `bytes`, or a `value-error` when the machine cannot
/// provide them now. Long strings are built in room asked for first, and their values hold
/// them without a copy: a string the machine could not hold aborted the process.
pub(super) fn empty_text(bytes: usize, span: Span) -> Result<String> {
    let mut text = String::new();
    text.try_reserve_exact(bytes)
        .map_err(|_| out_of_memory(bytes, span))?;
    Ok(text)
}

/// The `value-error` for `bytes` the machine cannot provide now.
pub(super) fn out_of_memory(bytes: usize, span: Span) -> Box<Diagnostic> {
    let bytes = bytes as u64;
    super::tensor::kernel_error(&KernelError::OutOfMemory { bytes }, span)
}

/// A repeated string over the length a string may have, plain or known when the graph runs.
fn repeated_too_long(span: Span) -> Box<Diagnostic> {
    error(Code::ValueError, span, "the repeated string is too long").into()
}

/// `text` repeated `count` times (at most [`limits::LIST_LENGTH`] bytes), in room asked for
/// first: copies of what is built so far double it, as `str::repeat` does.
fn repeat_text(text: &str, count: usize, span: Span) -> Result<String> {
    let bytes = text.len() * count;
    let mut repeated = empty_text(bytes, span)?.into_bytes();
    if count > 0 {
        repeated.extend_from_slice(text.as_bytes());
    }
    while repeated.len() < bytes {
        // Whole copies of `text`: what is built and what is left are both multiples of it.
        let take = (bytes - repeated.len()).min(repeated.len());
        repeated.extend_from_within(..take);
    }
    String::from_utf8(repeated).map_err(|error| {
        Diagnostic::internal(span, format!("a repeated string is not UTF-8: {error}")).into()
    })
}

/// Bytes a tensor made into a list takes with its item, even a view of no elements (its
/// shape, strides and reference counts: 330 to 450 bytes measured for a million rows or
/// split parts, with what making them holds at its peak).
const TENSOR_IN_LIST_BYTES: usize = 512;

/// Reserves the memory of `count` tensors made into a list.
pub(super) fn reserve_tensors(count: usize, span: Span) -> Result<()> {
    reserve(count, TENSOR_IN_LIST_BYTES, span)
}

fn reserve(count: usize, each: usize, span: Span) -> Result<()> {
    let bytes = (count as u64).saturating_mul(each as u64);
    crate::backend::memory::reserve(bytes)
        .map_err(|kernel| super::tensor::kernel_error(&kernel, span))
}

/// Bytes that `count` values of a list take, as counted against
/// [`limits::TRACE_BUILT_BYTES`].
pub(super) fn value_bytes(count: usize) -> usize {
    count.saturating_mul(std::mem::size_of::<Value>())
}

fn unsupported(op: BinaryOp, a: &Value, b: &Value, span: Span) -> Box<crate::diag::Diagnostic> {
    // Host numbers (known now, or only when a compiled graph runs) are worded as plain
    // numbers are, so compiled and eager code report the same message.
    let kinds = [a.kind(), b.kind()];
    let numbers = kinds
        .iter()
        .all(|kind| matches!(kind.as_str(), "int" | "float" | "bool"));
    let operands = if numbers && kinds.iter().any(|kind| kind == "float") {
        "floats".to_string()
    } else if numbers {
        "ints".to_string()
    } else {
        format!("{} and {}", kinds[0], kinds[1])
    };
    let diagnostic = error(
        Code::TypeError,
        span,
        format!("`{}` is not defined for {operands}", op.symbol()),
    );
    let help = match (a, b) {
        (Value::Str(_), _) | (_, Value::Str(_)) => {
            Some("build strings with interpolation: \"n = {n}\"")
        }
        (Value::List(_), Value::Tensor(_)) | (Value::Tensor(_), Value::List(_)) => {
            Some("turn the list into a tensor first: tensor([...])")
        }
        _ => None,
    };
    match help {
        Some(help) => diagnostic.with_help(help).into(),
        None => diagnostic.into(),
    }
}

/// Text that shows values known only when the graph runs (`str(k)`, `"{k}"` for a size or a
/// number from data) cannot be compared, measured or parsed while tracing.
pub(in crate::eval) fn run_time_text(code: Code, span: Span) -> Box<crate::diag::Diagnostic> {
    error(
        code,
        span,
        "this text shows values known only when the compiled graph runs, so it cannot be \
         compared, measured or parsed while tracing",
    )
    .with_label("text built from values known when the graph runs")
    .with_help("compare or measure the values themselves (`k == 2`), not their text")
    .into()
}

pub(in crate::eval) fn overflow(span: Span) -> Box<crate::diag::Diagnostic> {
    crate::diag::Diagnostic::integer_overflow(span).into()
}

pub(in crate::eval) fn division_by_zero(span: Span) -> Box<crate::diag::Diagnostic> {
    crate::diag::Diagnostic::division_by_zero(span).into()
}

#[cfg(test)]
mod tests {
    use crate::eval::value::Value;

    /// Lists nested 200,000 deep compare and print on a thread with a 1 MiB stack, which
    /// recursion over the nesting would overflow.
    #[test]
    fn deep_lists_compare_and_print_without_recursion() {
        let on_small_stack = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(|| {
                let nested = |depth: usize| {
                    (0..depth).fold(Value::Int(1), |inner, _| Value::list(vec![inner]))
                };
                let (a, b, c) = (nested(200_000), nested(200_000), nested(199_999));
                let text = a.to_string();
                let equal = |x, y| super::equal_but_for(x, y).is_some_and(|pairs| pairs.is_empty());
                let outcome = (equal(&a, &b), equal(&a, &c), text.len());
                // Dropping them would recurse as deep; the test process ends soon after.
                std::mem::forget((a, b, c));
                outcome
            })
            .expect("starting a thread");
        let (equal, unequal, length) = on_small_stack.join().expect("no stack overflow");
        assert!(equal && !unequal);
        assert_eq!(length, 2 * 200_000 + 1);
    }
}
