//! The diagnostics a run reports: failed checks, kernel errors at the node (or fused member)
//! that raised them, and sizes or conditions that could not be evaluated.

use crate::backend::error::{KernelError, format_shape};
use crate::backend::host;
use crate::diag::{Code, Diagnostic};
use crate::dtype::{DType, Scalar, format_f64};
use crate::graph::ir::{Graph, Node, NodeKind};
use crate::graph::op::Op;
use crate::graph::shape::Meta;
use crate::source::Span;
use crate::sym::{EvalError, ExprId};

/// A diagnostic raised by `node`, with the calls inside the compiled function that led to it.
pub(super) fn failure(mut diagnostic: Diagnostic, node: &Node) -> Box<Diagnostic> {
    for frame in &node.trace {
        diagnostic.push_frame(frame.function.clone(), frame.call_site);
    }
    Box::new(diagnostic)
}

/// A diagnostic for an error an op raised when it ran. An error inside a fused kernel is
/// reported at the operation it replaced that raised it, as that operation alone would be.
pub(super) fn op_failure(op: &Op, error: &KernelError, node: &Node) -> Box<Diagnostic> {
    if let (Op::Fused(kernel), KernelError::InMember { member, error }) = (op, error)
        && let Some(member) = kernel.members.get(*member)
    {
        let mut diagnostic = error.diagnostic(member.span);
        for frame in &member.trace {
            diagnostic.push_frame(frame.function.clone(), frame.call_site);
        }
        return Box::new(diagnostic);
    }
    failure(error.diagnostic(node.span), node)
}

pub(super) fn kernel(error: &KernelError, node: &Node) -> Box<Diagnostic> {
    failure(error.diagnostic(node.span), node)
}

pub(super) fn check_failed(code: Code, text: String, node: &Node) -> Box<Diagnostic> {
    let mut diagnostic = Diagnostic::error(code, node.span, text);
    if matches!(code, Code::CheckFailed | Code::DeviceCheckFailed) {
        diagnostic = diagnostic.with_label("this check failed");
    }
    failure(diagnostic, node)
}

/// A failed assumption of a shape rule: the error eager code raises at the operation, with
/// the run's values in its message and, as secondary labels, where each data-dependent value
/// in it came from.
pub(super) fn assumption_failed(
    code: Code,
    text: String,
    node: &Node,
    origins: Vec<(Span, String)>,
) -> Box<Diagnostic> {
    let mut diagnostic = Diagnostic::error(code, node.span, text);
    let values: Vec<String> = origins
        .iter()
        .map(|(_, origin)| origin.replacen(", from ", " (from ", 1) + ")")
        .collect();
    if !values.is_empty() {
        diagnostic.notes.push(format!(
            "in this run {}; the labels show where each was computed",
            values.join(" and ")
        ));
    }
    for (span, label) in origins {
        diagnostic.add_secondary(span, label);
    }
    failure(diagnostic, node)
}

/// The code a failed device assert reports.
pub(super) fn assert_code(node: &Node) -> Code {
    match node.kind {
        NodeKind::DeviceAssert { code, .. } => code,
        _ => Code::DeviceCheckFailed,
    }
}

pub(super) fn not_one_element(dtype: DType, shape: &[usize], node: &Node) -> Box<Diagnostic> {
    failure(
        Diagnostic::error(
            Code::ShapeError,
            node.span,
            format!(
                "item() needs a one-element tensor, got {dtype}{}",
                format_shape(shape)
            ),
        ),
        node,
    )
}

/// A check whose condition cannot be computed: overflow and division by zero are eager
/// arithmetic's errors, which eager code raises computing the condition.
pub(super) fn unevaluable_check(error: EvalError, node: &Node) -> Box<Diagnostic> {
    eager_arithmetic(error, node)
        .unwrap_or_else(|| value_error(format!("this check cannot be evaluated: {error}"), node))
}

/// Eager arithmetic's own error for `error` at `node`, where it is one (overflow, division
/// by zero).
fn eager_arithmetic(error: EvalError, node: &Node) -> Option<Box<Diagnostic>> {
    match error {
        EvalError::Overflow => Some(failure(Diagnostic::integer_overflow(node.span), node)),
        EvalError::DivisionByZero => Some(failure(Diagnostic::division_by_zero(node.span), node)),
        _ => None,
    }
}

/// A size or host int of a node that cannot be computed from the run's symbols. Overflow and
/// division by zero are eager arithmetic's errors, worded as eager code words them (the
/// expression is the user's arithmetic on sizes, such as `n ** 64`).
pub(super) fn uncomputable_size(error: EvalError, node: &Node) -> Box<Diagnostic> {
    eager_arithmetic(error, node).unwrap_or_else(|| {
        value_error(
            format!("a size of this operation cannot be computed: {error}"),
            node,
        )
    })
}

/// A returned size or condition that cannot be computed from the run's symbols (`n * big`
/// with `n` from data): eager arithmetic's error, at the function's `return`.
pub(super) fn uncomputable_output(
    error: EvalError,
    graph: &Graph,
    expr: ExprId,
) -> Box<Diagnostic> {
    let span = graph.output_span;
    let diagnostic = match error {
        EvalError::Overflow => Diagnostic::integer_overflow(span),
        EvalError::DivisionByZero => Diagnostic::division_by_zero(span),
        other => Diagnostic::internal(
            span,
            format!("a value the compiled graph returns cannot be computed: {other}"),
        ),
    };
    let returned = graph.env.display(expr);
    Box::new(diagnostic.with_note(format!(
        "computing `{returned}`, which `{}` returns, when the graph runs",
        graph.name
    )))
}

pub(super) fn unevaluable_predicate(error: EvalError, node: &Node) -> Box<Diagnostic> {
    eager_arithmetic(error, node).unwrap_or_else(|| {
        value_error(
            format!("the predicate of cond() cannot be evaluated: {error}"),
            node,
        )
    })
}

fn value_error(message: String, node: &Node) -> Box<Diagnostic> {
    failure(
        Diagnostic::error(Code::ValueError, node.span, message),
        node,
    )
}

/// A host scalar printed as its eager value prints (`item()` of an `f32` is a float).
pub(super) fn scalar_text(tensor: &host::Tensor) -> String {
    match tensor.to_scalar() {
        Some(Scalar::Float(value)) => format_f64(value),
        Some(Scalar::Int(value)) => value.to_string(),
        Some(Scalar::Bool(value)) => value.to_string(),
        None => host::format_tensor(tensor),
    }
}

pub(super) fn describe(meta: &Meta, sizes: &[Option<i64>]) -> String {
    let sizes: Vec<String> = sizes
        .iter()
        .map(|size| size.map_or_else(|| "?".to_string(), |size| size.to_string()))
        .collect();
    format!("{}[{}]", meta.dtype, sizes.join(", "))
}
