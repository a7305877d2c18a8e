//! Builtins on host values: printing, lists, conversions, `min`/`max`/`abs` for numbers and
//! tensors, the random seed, and the eager meaning of the tracing helpers.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::math::{elementwise_pair, reduce_over, reduction};
use crate::diag::{Code, Diagnostic, Result};
use crate::dtype::{DType, Scalar};
use crate::eval::args::{CallArgs, Positional};
use crate::eval::operators::run_time_text;
use crate::eval::tensor::{Operand, not_one_bool_message};
use crate::eval::trace::Ask;
use crate::eval::value::Value;
use crate::eval::{Interpreter, error, limits};
use crate::graph::ir::Arg;
use crate::graph::op::{BinaryOp, Op, ReduceOp, UnaryOp};
use crate::graph::shape::Dim;

pub fn print(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("print", &["*values"])?;
    if interpreter.tracer.is_some() {
        let values: Vec<Value> = args.rest.iter().map(|arg| arg.value.clone()).collect();
        interpreter.trace_print(&values, args.span);
        return Ok(Value::None);
    }
    if interpreter.analysing() {
        return Ok(Value::None);
    }
    let line: Vec<String> = args.rest.iter().map(|arg| arg.value.to_string()).collect();
    interpreter.print(&format!("{}\n", line.join(" ")));
    Ok(Value::None)
}

pub fn len(_: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("len", &["value"])?;
    match args.required(0)? {
        Value::List(items) => Ok(Value::Int(items.len() as i64)),
        Value::Str(text) => Ok(Value::Int(text.chars().count() as i64)),
        Value::Tensor(tensor) if tensor.ndim() > 0 => Ok(Value::from_dim(tensor.dims()[0])),
        Value::Template(_) => Err(run_time_text(Code::DataDependentInt, args.span(0))),
        other => Err(args.wrong(0, "a list, a string or a tensor with dimensions", other)),
    }
}

pub fn range(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("range", &["start", "stop", "step"])?;
    let (start, stop) = match args.get(1) {
        Some(_) => (
            args.int_for(interpreter, 0, "range()")?,
            args.int_for(interpreter, 1, "range()")?,
        ),
        None => (0, args.int_for(interpreter, 0, "range()")?),
    };
    let step = args.int_or(interpreter, 2, 1)?;
    if step == 0 {
        return Err(error(
            Code::ValueError,
            args.span(2),
            "range() step must not be zero",
        )
        .into());
    }
    let count = if step > 0 {
        (i128::from(stop) - i128::from(start) + i128::from(step) - 1) / i128::from(step)
    } else {
        (i128::from(start) - i128::from(stop) - i128::from(step) - 1) / -i128::from(step)
    };
    let count = usize::try_from(count.max(0)).unwrap_or(usize::MAX);
    if count > limits::LIST_LENGTH {
        return Err(error(
            Code::ValueError,
            args.span,
            format!(
                "range() of {count} items is too long (the limit is {})",
                limits::LIST_LENGTH
            ),
        )
        .into());
    }
    interpreter.count_built(crate::eval::operators::value_bytes(count), args.span)?;
    crate::eval::operators::reserve_values(count, args.span)?;
    let items = (0..count as i64)
        .map(|k| Value::Int(start + k * step))
        .collect();
    Ok(Value::list(items))
}

pub fn enumerate(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("enumerate", &["items"])?;
    let items = interpreter.iterate(args.required(0)?, args.span(0))?;
    Ok(Value::list(
        items
            .into_iter()
            .enumerate()
            .map(|(position, item)| Value::list(vec![Value::Int(position as i64), item]))
            .collect(),
    ))
}

pub fn zip(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("zip", &["*lists"])?;
    // Like Python's, `zip` stops at the shortest: only that many items of each are made.
    let mut lengths = Vec::new();
    for Positional { value, span } in &args.rest {
        lengths.push(interpreter.iteration_length(value, *span)?);
    }
    let length = lengths.into_iter().min().unwrap_or(0);
    let mut lists = Vec::new();
    for Positional { value, span } in &args.rest {
        lists.push(interpreter.first_items(value, length, *span)?);
    }
    Ok(Value::list(
        (0..length)
            .map(|k| Value::list(lists.iter().map(|list| list[k].clone()).collect()))
            .collect(),
    ))
}

pub fn int(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("int", &["value"])?;
    let value = match args.required(0)? {
        Value::Tensor(tensor) | Value::RuntimeScalar(tensor) => {
            // A float or bool element becomes an int the way a cast truncates it.
            let as_int = Op::Cast(crate::dtype::DType::I64);
            let cast =
                interpreter.apply(as_int, vec![Operand::Tensor(tensor.clone())], args.span)?;
            return interpreter.tensor_item(&cast[0], args.span);
        }
        other => other.clone(),
    };
    match value {
        Value::Int(_) | Value::SymInt(_) => Ok(value),
        Value::SymBool(cond) => {
            let truth = interpreter.decide(cond, args.span(0), crate::eval::trace::Ask::Normal)?;
            Ok(Value::Int(i64::from(truth)))
        }
        Value::Bool(b) => Ok(Value::Int(i64::from(b))),
        Value::Float(x) if x.is_finite() && x.abs() < 9.2e18 => Ok(Value::Int(x.trunc() as i64)),
        Value::Float(x) => Err(error(
            Code::ValueError,
            args.span(0),
            format!("cannot convert {} to an int", Value::Float(x)),
        )
        .into()),
        Value::Str(text) => text.trim().parse().map(Value::Int).map_err(|_| {
            error(
                Code::ValueError,
                args.span(0),
                format!("cannot parse {text:?} as an int"),
            )
            .into()
        }),
        Value::Template(_) => Err(run_time_text(Code::DataDependentInt, args.span(0))),
        other => Err(args.wrong(0, "a number, bool or string", &other)),
    }
}

/// `float(x)` converts a host value; `x.float()` casts a tensor to f32.
pub fn float(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("float", &["value"])?;
    if let Value::Tensor(tensor) = args.required(0)? {
        let operand = Operand::Tensor(tensor.clone());
        return interpreter.apply_one(Op::Cast(crate::dtype::DType::F32), vec![operand], args.span);
    }
    match args.required(0)? {
        Value::SymInt(expr) => {
            let scalar = sym_int_tensor(interpreter, *expr, DType::F32, args.span)?;
            Ok(Value::RuntimeScalar(scalar))
        }
        Value::RuntimeScalar(tensor) => {
            let op = Op::Cast(crate::dtype::DType::F32);
            let scalar = interpreter.apply(op, vec![Operand::Tensor(tensor.clone())], args.span)?;
            Ok(Value::RuntimeScalar(scalar[0].clone()))
        }
        Value::Int(i) => Ok(Value::Float(*i as f64)),
        Value::Bool(b) => Ok(Value::Float(f64::from(u8::from(*b)))),
        Value::Float(x) => Ok(Value::Float(*x)),
        Value::Str(text) => text.trim().parse().map(Value::Float).map_err(|_| {
            error(
                Code::ValueError,
                args.span(0),
                format!("cannot parse {text:?} as a float"),
            )
            .into()
        }),
        Value::Template(_) => Err(run_time_text(Code::DataDependentInt, args.span(0))),
        other => Err(args.wrong(0, "a number, bool, string or tensor", other)),
    }
}

pub fn str(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("str", &["value"])?;
    Ok(match args.get(0) {
        Some(value) => interpreter.text_of(value, args.span),
        None => Value::str("none"),
    })
}

pub fn min(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    extremum(interpreter, args, "min", ReduceOp::Min, BinaryOp::Minimum)
}

pub fn max(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    extremum(interpreter, args, "max", ReduceOp::Max, BinaryOp::Maximum)
}

/// `max(x)`, `max(x, dim)` and `x.max(dim = d)` reduce a tensor (to its values; use `argmax`
/// for indices); `max(a, b)` compares two values (elementwise for tensors); `max(list)` picks
/// from a list of numbers.
fn extremum(
    interpreter: &mut Interpreter,
    args: CallArgs,
    name: &'static str,
    reduce: ReduceOp,
    pairwise: BinaryOp,
) -> Result<Value> {
    let args = args.bind(name, &["a", "b", "dim", "keepdim"])?;
    let a = args.required(0)?.clone();
    match (&a, args.get(1)) {
        (Value::Tensor(_), None) => reduction(interpreter, &args, reduce, 2),
        // A dim, as in eager code even when it is a size computed while tracing.
        (Value::Tensor(_), Some(Value::Int(_) | Value::SymInt(_) | Value::List(_))) => {
            let keepdim = args.bool_or(3, false)?;
            reduce_over(interpreter, &args, reduce, 1, keepdim)
        }
        (_, Some(b)) if matches!(a, Value::Tensor(_)) || matches!(b, Value::Tensor(_)) => {
            elementwise_pair(interpreter, &args, pairwise)
        }
        (Value::List(items), None) => pick(interpreter, items, &args, pairwise),
        (_, Some(b)) => {
            let items = [a.clone(), b.clone()];
            pick(interpreter, &items, &args, pairwise)
        }
        (other, None) => Err(args.wrong(0, "a tensor, a list or two numbers", other)),
    }
}

/// The smallest or largest of some numbers (the first one on ties).
fn pick(
    interpreter: &mut Interpreter,
    items: &[Value],
    args: &crate::eval::args::Bound,
    pairwise: BinaryOp,
) -> Result<Value> {
    let Some(first) = items.first() else {
        return Err(error(
            Code::ValueError,
            args.span(0),
            format!("{}() of an empty list", args.function()),
        )
        .into());
    };
    let int = |item: &Value| matches!(item, Value::Int(_) | Value::SymInt(_));
    if items.iter().any(|item| matches!(item, Value::SymInt(_))) && items.iter().all(int) {
        return symbolic_extremum(interpreter, items, args, pairwise);
    }
    let better = if pairwise == BinaryOp::Minimum {
        crate::syntax::ast::BinaryOp::Lt
    } else {
        crate::syntax::ast::BinaryOp::Gt
    };
    let mut best = first.clone();
    for item in &items[1..] {
        if !item.is_number() {
            return Err(args.wrong(0, "numbers", item));
        }
        // As eager code: an item replaces the best so far only when strictly better. A
        // condition on sizes is decided (guarded, or a `data-dependent-guard` on data).
        let wins = match interpreter.binary(better, item.clone(), best.clone(), args.span)? {
            Value::SymBool(cond) => Value::Bool(
                interpreter
                    .decide(cond, args.span, Ask::Normal)
                    .map_err(|diagnostic| which_is_better(diagnostic, args))?,
            ),
            wins => wins,
        };
        best = match wins {
            Value::Bool(true) => item.clone(),
            Value::RuntimeScalar(wins) => runtime_pick(interpreter, wins, item, best, args)?,
            _ => best,
        };
    }
    Ok(best)
}

/// A `data-dependent-guard` on which number `min`/`max` picks, with help for that question.
fn which_is_better(
    mut diagnostic: Box<Diagnostic>,
    args: &crate::eval::args::Bound,
) -> Box<Diagnostic> {
    if diagnostic.code == Code::DataDependentGuard {
        diagnostic.help = Some(format!(
            "which number {}() picks depends on data here, and eager code returns that one \
             with its type: give the numbers one type (a float and `float(n)`, for example) \
             so the graph picks when it runs, or state what holds first with `check`",
            args.function()
        ));
    }
    diagnostic
}

/// The better of `item` and `best` where which one it is is known only when the graph runs
/// (`wins`, a bool read from data): both floats, the value the graph picks; otherwise the
/// result's type would depend on data (eager `max(t, 2)` is an int or a float), so it is
/// refused as a question on data.
fn runtime_pick(
    interpreter: &mut Interpreter,
    wins: crate::eval::value::TensorValue,
    item: &Value,
    best: Value,
    args: &crate::eval::args::Bound,
) -> Result<Value> {
    if !(item.is_float() && best.is_float()) {
        return Err(error(
            Code::DataDependentGuard,
            args.span,
            format!(
                "{}() of an int and a float depends on data: eager code returns one or the other type",
                args.function()
            ),
        )
        .with_help("make both numbers floats (`2.0`, `float(n)`) or both ints")
        .into());
    }
    let operands = [Value::RuntimeScalar(wins), item.clone(), best]
        .iter()
        .map(|value| scalar_operand(value).ok_or_else(|| args.wrong(0, "numbers", value)))
        .collect::<Result<Vec<_>>>()?;
    let picked = interpreter.apply_one(Op::Where, operands, args.span)?;
    interpreter.host_number(picked, args.span)
}

/// `min`/`max` of ints some of which are symbolic: a symbolic `min`/`max`.
fn symbolic_extremum(
    interpreter: &mut Interpreter,
    items: &[Value],
    args: &crate::eval::args::Bound,
    pairwise: BinaryOp,
) -> Result<Value> {
    let mut result: Option<crate::sym::ExprId> = None;
    for item in items {
        let expr = interpreter
            .int_expr(item)
            .ok_or_else(|| args.wrong(0, "ints", item))?;
        result = Some(match result {
            None => expr,
            Some(so_far) => {
                let env = interpreter.env();
                let combined = if pairwise == BinaryOp::Minimum {
                    env.min(so_far, expr)
                } else {
                    env.max(so_far, expr)
                };
                combined.map_err(|e| args.wrong(0, &format!("ints ({e})"), item))?
            }
        });
    }
    let expr = result.expect("items is not empty");
    Ok(interpreter.symbolic_value(expr))
}

pub fn abs(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("abs", &["x"])?;
    match args.required(0)? {
        Value::SymInt(expr) => {
            let negated = interpreter.env().neg(*expr);
            let result = negated.and_then(|negated| interpreter.env().max(*expr, negated));
            result
                .map(|abs| interpreter.symbolic_value(abs))
                .map_err(|e| error(Code::ValueError, args.span, e.to_string()).into())
        }
        Value::Int(i) => i
            .checked_abs()
            .map(Value::Int)
            .ok_or_else(|| error(Code::ValueError, args.span, "integer overflow").into()),
        Value::Float(x) => Ok(Value::Float(x.abs())),
        Value::Tensor(tensor) => {
            let operand = Operand::Tensor(tensor.clone());
            interpreter.apply_one(Op::Unary(UnaryOp::Abs), vec![operand], args.span)
        }
        // A number read from data: its absolute value, known when the graph runs.
        Value::RuntimeScalar(tensor) if tensor.dtype() != DType::Bool => {
            let operand = Operand::Tensor(tensor.clone());
            let abs = interpreter.apply_one(Op::Unary(UnaryOp::Abs), vec![operand], args.span)?;
            interpreter.host_number(abs, args.span)
        }
        other => Err(args.wrong(0, "a number or a tensor", other)),
    }
}

pub fn seed(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    super::creation::refuse_while_tracing(interpreter, "seed", args.span)?;
    let args = args.bind("seed", &["value"])?;
    let value = args.int(interpreter, 0)?;
    interpreter.rng = ChaCha8Rng::seed_from_u64(value as u64);
    Ok(Value::None)
}

pub fn is_compiling(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    args.bind("is_compiling", &[])?;
    Ok(Value::Bool(interpreter.tracer.is_some()))
}

pub fn size_oblivious(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    condition_helper(interpreter, args, "size_oblivious", Ask::SizeOblivious)
}

pub fn guard_or_false(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    condition_helper(interpreter, args, "guard_or_false", Ask::GuardOrFalse)
}

pub fn guard_or_true(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    condition_helper(interpreter, args, "guard_or_true", Ask::GuardOrTrue)
}

pub fn known_true(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    condition_helper(interpreter, args, "known_true", Ask::KnownTrue)
}

/// The tracing helpers of spec §6: a symbolic condition is decided as `ask` says; concrete
/// values are already decided.
fn condition_helper(
    interpreter: &mut Interpreter,
    args: CallArgs,
    name: &'static str,
    ask: Ask,
) -> Result<Value> {
    let args = args.bind(name, &["condition"])?;
    let value = args.required(0)?.clone();
    let span = args.span(0);
    match value {
        Value::SymBool(cond) => Ok(Value::Bool(interpreter.decide(cond, span, ask)?)),
        Value::Tensor(tensor) | Value::RuntimeScalar(tensor)
            if tensor.is_fake()
                && matches!(ask, Ask::GuardOrFalse | Ask::GuardOrTrue | Ask::KnownTrue) =>
        {
            Ok(Value::Bool(ask == Ask::GuardOrTrue))
        }
        other => {
            let truth = interpreter.truth(&other, span, &format!("{name}()"))?;
            Ok(Value::Bool(truth))
        }
    }
}

/// `cond(pred, then_fn, else_fn, args)`: calls the branch `pred` picks; while tracing, a
/// predicate that depends on data makes both branches traced subgraphs.
pub fn cond(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let call_span = args.span;
    let args = args.bind("cond", &["pred", "then_fn", "else_fn", "args"])?;
    let predicate = args.required(0)?.clone();
    for index in [1, 2] {
        let function = args.required(index)?;
        if !matches!(function, Value::Function(_) | Value::Builtin(_)) {
            return Err(args.wrong(index, "a function", function));
        }
    }
    let operands = match args.get(3) {
        None => Vec::new(),
        Some(Value::List(items)) => items.to_vec(),
        Some(other) => return Err(args.wrong(3, "a list of arguments", other)),
    };
    let taken = match &predicate {
        Value::SymBool(cond) if interpreter.env().unbacked_symbols(*cond).is_empty() => {
            Some(interpreter.decide(*cond, args.span(0), Ask::Normal)?)
        }
        Value::SymBool(cond) => {
            let known = interpreter.decide(*cond, args.span(0), Ask::KnownTrue)?;
            let refuted = !known && {
                let negated = interpreter.env().not(*cond);
                negated.is_ok_and(|negated| interpreter.env().known_true(negated))
            };
            if known || refuted {
                Some(known)
            } else {
                let predicate = Arg::Int(Dim::Sym(*cond));
                let functions = [args.required(1)?, args.required(2)?];
                return interpreter.trace_cond(predicate, functions, operands, call_span);
            }
        }
        Value::Tensor(tensor) | Value::RuntimeScalar(tensor)
            if tensor.is_fake() && tensor.dtype() != DType::Bool =>
        {
            // What eager code says about this predicate.
            return Err(not_a_condition(&predicate, args.span(0), "cond()"));
        }
        Value::Tensor(tensor) | Value::RuntimeScalar(tensor) if tensor.is_fake() => {
            // Eager code refuses a bool tensor of another size than one before branching.
            let message = not_one_bool_message("cond()", tensor);
            interpreter.require_one_element(tensor, &message, args.span(0))?;
            let tracer = interpreter
                .tracer
                .as_mut()
                .expect("fake tensors exist while tracing");
            let predicate = Arg::Tensor(tracer.tensor_arg(tensor, args.span(0)));
            let functions = [args.required(1)?, args.required(2)?];
            return interpreter.trace_cond(predicate, functions, operands, call_span);
        }
        other => Some(interpreter.truth(other, args.span(0), "cond()")?),
    };
    let taken = if taken == Some(true) { 1 } else { 2 };
    let function = args.required(taken)?.clone();
    let mut call = CallArgs::new(call_span);
    let span = args.span(3);
    call.positional = operands
        .into_iter()
        .map(|value| Positional { value, span })
        .collect();
    interpreter.call_value(&function, call, args.span(taken))
}

/// The error eager code raises for a condition of the wrong dtype: a tensor that is not a
/// one-element bool tensor, or a host number that is not a bool.
fn not_a_condition(value: &Value, span: crate::source::Span, context: &str) -> Box<Diagnostic> {
    match value {
        Value::Tensor(tensor) => {
            Diagnostic::error(Code::TypeError, span, not_one_bool_message(context, tensor))
                .with_help("reduce it first, e.g. all(x > 0) or any(mask)")
        }
        other => Diagnostic::error(
            Code::TypeError,
            span,
            format!("{context} needs a bool, got {}", other.kind()),
        )
        .with_help("compare explicitly, e.g. `n > 0`"),
    }
    .into()
}

pub fn mark_dynamic(interpreter: &mut Interpreter, args: CallArgs) -> Result<Value> {
    let args = args.bind("mark_dynamic", &["x", "dim"])?;
    let tensor = args.tensor(0)?;
    let dim = args.dim(interpreter, 1, tensor.ndim())?;
    tensor.mark_dynamic(dim);
    Ok(Value::None)
}

/// While tracing: a 0-d tensor of `dtype` holding the symbolic int `expr`, a node of the graph.
pub fn sym_int_tensor(
    interpreter: &mut Interpreter,
    expr: crate::sym::ExprId,
    dtype: DType,
    span: crate::source::Span,
) -> Result<crate::eval::value::TensorValue> {
    let op = Op::Full {
        shape: Vec::new(),
        dtype,
    };
    let mut scalar = interpreter.apply(op, vec![Operand::SymInt(expr)], span)?;
    Ok(scalar.swap_remove(0))
}

/// An operand for a tensor operation from a tensor or host value (symbolic ones included); a
/// symbolic condition counts as the bool it is decided to be, as in arithmetic
/// ([`Interpreter::condition_as_number`]), since eager code has a bool there.
pub fn decided_operand(
    interpreter: &mut Interpreter,
    value: &Value,
    span: crate::source::Span,
) -> Result<Option<Operand>> {
    if !matches!(value, Value::SymBool(_)) {
        return Ok(scalar_operand(value));
    }
    let value = interpreter.condition_as_number(value.clone(), span)?;
    Ok(scalar_operand(&value))
}

/// An operand for a tensor operation from a tensor or host value (symbolic ones included).
pub fn scalar_operand(value: &Value) -> Option<Operand> {
    match value {
        Value::Tensor(tensor) | Value::RuntimeScalar(tensor) => {
            Some(Operand::Tensor(tensor.clone()))
        }
        Value::SymInt(expr) => Some(Operand::SymInt(*expr)),
        Value::Bool(b) => Some(Operand::Scalar(Scalar::Bool(*b))),
        Value::Int(i) => Some(Operand::Scalar(Scalar::Int(*i))),
        Value::Float(x) => Some(Operand::Scalar(Scalar::Float(*x))),
        _ => None,
    }
}
