//! Applying a tensor operation: the shared shape rule first, then the kernel of the session's
//! device (through `backend::Dispatch`, the path compiled graphs take too).
//!
//! Running the rule before every eager kernel means eager code reports exactly the errors
//! traced code will, and (in debug builds) that every rule's predicted shape is checked
//! against what the kernel really produced.

use super::value::{TensorValue, Value};
use super::{Interpreter, error};
use crate::backend::exec::Device;
use crate::backend::{self, Dispatch, KernelError, host};
use crate::diag::{Code, Diagnostic, Result};
use crate::dtype::Scalar;
use crate::graph::op::{IndexSpec, Op};
use crate::graph::shape::{self, Concrete, Meta, RuleError, RuleErrorKind, UNKNOWN};
use crate::source::Span;

/// An operand of a tensor operation: a tensor, or a host scalar that meets one.
#[derive(Clone)]
pub enum Operand {
    Tensor(TensorValue),
    Scalar(Scalar),
    /// While tracing: a symbolic int.
    SymInt(crate::sym::ExprId),
}

impl Operand {
    pub fn meta(&self) -> Meta {
        match self {
            Operand::Tensor(tensor) => tensor.meta(),
            Operand::Scalar(scalar) => Meta::scalar(scalar.dtype()),
            Operand::SymInt(_) => Meta::scalar(crate::dtype::DType::I64),
        }
    }

    /// Whether the operand only exists in a trace.
    pub fn is_traced(&self) -> bool {
        match self {
            Operand::Tensor(tensor) => tensor.is_fake(),
            Operand::Scalar(_) => false,
            Operand::SymInt(_) => true,
        }
    }

    /// The operand on the device `dispatch` computes on.
    fn into_tensor(self, dispatch: &mut Dispatch) -> Result<backend::Tensor, KernelError> {
        match self {
            Operand::Tensor(tensor) => placed(tensor, dispatch),
            Operand::Scalar(scalar) => Ok(backend::Tensor::Host(host::Tensor::scalar(scalar))),
            Operand::SymInt(_) => unreachable!("symbolic operands are traced, never computed"),
        }
    }
}

impl Interpreter {
    /// Checks `op` against its operands with the shape rule, then computes it. Operands are
    /// consumed, so a temporary's buffer can hold the result.
    pub(super) fn apply(
        &mut self,
        mut op: Op,
        operands: Vec<Operand>,
        span: Span,
    ) -> Result<Vec<TensorValue>> {
        // Random numbers must differ per call, so they are always recorded while tracing, as
        // is anything with a symbolic operand or size; the rest, on constants alone, is
        // computed now (constant folding), except large tensors in a trace without hints:
        // `tsl check` and `tsl graph` never compute those.
        let traced = self.tracer.as_ref().is_some_and(|tracer| {
            matches!(op, Op::Randn { .. })
                || operands.iter().any(Operand::is_traced)
                || op.dims().iter().any(|d| d.known().is_none())
                || (tracer.hintless && !small_constant(&op, &operands))
        });
        if traced {
            return self.apply_traced(op, operands, span);
        }
        let metas: Vec<Meta> = operands.iter().map(Operand::meta).collect();
        let predicted =
            shape::infer(&mut op, &metas, &mut Concrete).map_err(|e| rule_error(e, span))?;
        let results = crate::backend::memory::result_sizes(&predicted);
        backend::interrupt::watch(&self.interrupt);
        let mut dispatch = self.dispatch();
        let inputs = operands
            .into_iter()
            .map(|operand| operand.into_tensor(&mut dispatch))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| kernel_error(&e, span))?;
        dispatch
            .reserve(&op, &inputs, &results)
            .map_err(|e| kernel_error(&e, span))?;
        let outputs = dispatch
            .run_now(&op, inputs)
            .map_err(|e| kernel_error(&e, span))?;
        debug_assert!(
            agrees(&predicted, &outputs),
            "the shape rule of {op:?} predicted {predicted:?}"
        );
        Ok(outputs.into_iter().map(TensorValue::new).collect())
    }

    /// The session's device, through which every operation runs.
    pub(super) fn dispatch(&mut self) -> Dispatch<'_> {
        Dispatch {
            target: &mut self.devices.target,
            rng: &mut self.rng,
            native: self.options.native,
        }
    }

    /// The data of a concrete tensor in host memory (`None` for a traced tensor); reading it
    /// waits for the device that computes it.
    pub(super) fn host_data(
        &mut self,
        tensor: &TensorValue,
        span: Span,
    ) -> Result<Option<host::Tensor>> {
        match tensor.host() {
            Some(data) => data.map(Some).map_err(|e| kernel_error(&e, span)),
            None => Ok(None),
        }
    }

    /// A concrete tensor on the session's device, for a compiled graph to take.
    pub(super) fn resident(&mut self, tensor: &TensorValue, span: Span) -> Result<backend::Tensor> {
        if tensor.real().is_none() {
            return Err(Box::new(Diagnostic::internal(
                span,
                "a traced tensor reached a compiled run",
            )));
        }
        // A clone, so the caller's value keeps its data and the copy made for this device
        // (a weight passed to every call crosses to the GPU once).
        placed(tensor.clone(), &mut self.dispatch()).map_err(|e| kernel_error(&e, span))
    }

    /// [`Interpreter::apply`] for an operation with one output, as a value.
    pub(super) fn apply_one(
        &mut self,
        op: Op,
        operands: Vec<Operand>,
        span: Span,
    ) -> Result<Value> {
        let mut outputs = self.apply(op, operands, span)?;
        Ok(Value::Tensor(outputs.swap_remove(0)))
    }

    /// `item()`: the element of a one-element tensor as a host value (symbolic while
    /// tracing).
    pub(super) fn tensor_item(&mut self, tensor: &TensorValue, span: Span) -> Result<Value> {
        let Some(data) = self.host_data(tensor, span)? else {
            return self.trace_item(tensor, span);
        };
        match data.to_scalar() {
            Some(scalar) => Ok(super::builtins::scalar_value(scalar)),
            None => Err(error(
                Code::ShapeError,
                span,
                format!("item() needs a one-element tensor, got {}", tensor.meta()),
            )
            .with_help("reduce it first (sum(), max()...) or index one element")
            .into()),
        }
    }

    /// The truth of a one-element bool tensor (`if`, `check`).
    pub(super) fn tensor_truth(
        &mut self,
        tensor: &TensorValue,
        span: Span,
        context: &str,
    ) -> Result<bool> {
        let Some(data) = self.host_data(tensor, span)? else {
            return Err(self.tensor_data_guard(span, context));
        };
        match data.to_scalar() {
            Some(Scalar::Bool(value)) if tensor.dtype() == crate::dtype::DType::Bool => Ok(value),
            _ => Err(
                error(Code::TypeError, span, not_one_bool_message(context, tensor))
                    .with_help("reduce it first, e.g. all(x > 0) or any(mask)")
                    .into(),
            ),
        }
    }

    /// A condition on tensor data while tracing: its value is only known when the graph runs.
    pub(super) fn tensor_data_guard(&mut self, span: Span, context: &str) -> Box<Diagnostic> {
        error(
            Code::DataDependentGuard,
            span,
            format!("{context} on tensor data cannot be decided while tracing"),
        )
        .with_label("the value of this tensor is only known when the compiled code runs")
        .with_help(
            "branch with cond(pred, then_fn, else_fn, args), choose elementwise with \
             where(...), or state a fact about the data with `check`",
        )
        .into()
    }

    /// The first `count` rows of `tensor` as a list's items, within the length a list of
    /// tensors may have ([`Interpreter::tensor_list_limit`]).
    pub(super) fn first_rows(
        &mut self,
        tensor: &TensorValue,
        count: usize,
        span: Span,
    ) -> Result<Vec<Value>> {
        let limit = self.tensor_list_limit();
        if count > limit {
            let help = if self.tracer.is_some() {
                "in a compiled function every row is an operation of the trace: compute with operations on whole tensors, or make the list outside @compile"
            } else {
                "loop over the rows with `for`, which takes them one at a time, or compute with operations on whole tensors"
            };
            return Err(error(
                Code::ValueError,
                span,
                format!(
                    "a list of the {count} rows of a tensor is too long (the limit is {limit})"
                ),
            )
            .with_help(help)
            .into());
        }
        crate::eval::operators::reserve_tensors(count, span)?;
        (0..count)
            .map(|row| self.tensor_row(tensor, row, span))
            .collect()
    }

    /// The most tensors a list made at once (the rows of a tensor, the parts of a split) may
    /// hold: [`limits::LIST_LENGTH`], or [`limits::TRACED_LIST_LENGTH`] while tracing, where
    /// each is an operation or output of the trace.
    ///
    /// [`limits::LIST_LENGTH`]: crate::eval::limits::LIST_LENGTH
    /// [`limits::TRACED_LIST_LENGTH`]: crate::eval::limits::TRACED_LIST_LENGTH
    pub(super) fn tensor_list_limit(&self) -> usize {
        if self.tracer.is_some() {
            crate::eval::limits::TRACED_LIST_LENGTH
        } else {
            crate::eval::limits::LIST_LENGTH
        }
    }

    /// How many rows iterating over `tensor` visits (its first size, which must be concrete).
    pub(super) fn row_count(&mut self, tensor: &TensorValue, span: Span) -> Result<usize> {
        let Some(&first) = tensor.dims().first() else {
            return Err(error(Code::TypeError, span, "cannot iterate over a 0-d tensor").into());
        };
        let rows = match first {
            crate::graph::shape::Dim::Known(rows) => rows,
            crate::graph::shape::Dim::Sym(expr) => {
                self.concrete_int(expr, span, "a loop over the rows of a tensor")?
            }
        };
        Ok(usize::try_from(rows).unwrap_or(0))
    }

    /// Row `row` of `tensor` (`tensor[row]`).
    pub(super) fn tensor_row(
        &mut self,
        tensor: &TensorValue,
        row: usize,
        span: Span,
    ) -> Result<Value> {
        let op = Op::Index {
            items: vec![IndexSpec::Int((row as i64).into())],
        };
        self.apply_one(op, vec![Operand::Tensor(tensor.clone())], span)
    }

    /// `x.T`: the dimensions in reverse order.
    pub(super) fn transpose_all(&mut self, tensor: TensorValue, span: Span) -> Result<Value> {
        let dims = (0..tensor.ndim()).rev().collect();
        self.apply_one(Op::Permute { dims }, vec![Operand::Tensor(tensor)], span)
    }
}

/// A concrete tensor on the device `dispatch` computes on: itself when it is there (moved,
/// so a kernel may reuse a buffer nobody else holds), else its copy there, made once and
/// kept with the value.
fn placed(tensor: TensorValue, dispatch: &mut Dispatch) -> Result<backend::Tensor, KernelError> {
    let data = tensor.real().expect("only concrete tensors reach a kernel");
    if data.is_on(dispatch.target) {
        return Ok(tensor.into_data());
    }
    if let Some(mirror) = tensor.mirror()
        && mirror.is_on(dispatch.target)
    {
        return Ok(mirror.clone());
    }
    let copy = dispatch.place(data)?;
    tensor.keep_mirror(copy.clone());
    Ok(copy)
}

/// The most elements a trace without hints computes in one constant operation (inputs and
/// outputs); larger constants are recorded in the graph instead.
const HINTLESS_CONSTANT_ELEMENTS: i64 = 1 << 16;

/// Whether `op` on constant `operands` is cheap enough to compute while checking: every
/// operand and every output (as the shape rule predicts it) holds at most
/// [`HINTLESS_CONSTANT_ELEMENTS`].
fn small_constant(op: &Op, operands: &[Operand]) -> bool {
    let small = |meta: &Meta| {
        meta.shape
            .iter()
            .try_fold(1i64, |count, dim| {
                let size = dim.known().filter(|size| *size >= 0)?;
                count
                    .checked_mul(size)
                    .filter(|count| *count <= HINTLESS_CONSTANT_ELEMENTS)
            })
            .is_some()
    };
    let metas: Vec<Meta> = operands.iter().map(Operand::meta).collect();
    if !metas.iter().all(small) {
        return false;
    }
    let mut probe = op.clone();
    match shape::infer(&mut probe, &metas, &mut Concrete) {
        Ok(outputs) => outputs
            .iter()
            .all(|meta| meta.shape.contains(&UNKNOWN) || small(meta)),
        // The rule's error is the same either way; computing reports it.
        Err(_) => true,
    }
}

/// Whether the kernel's outputs have the dtypes and sizes the rule predicted (sizes the rule
/// could not know, such as `nonzero()`'s row count, match anything).
fn agrees(predicted: &[Meta], outputs: &[backend::Tensor]) -> bool {
    predicted.len() == outputs.len()
        && predicted.iter().zip(outputs).all(|(meta, tensor)| {
            meta.dtype == tensor.dtype()
                && meta.ndim() == tensor.ndim()
                && meta
                    .shape
                    .iter()
                    .zip(tensor.shape())
                    .all(|(dim, size)| *dim == UNKNOWN || dim.known() == Some(*size as i64))
        })
}

/// The type error of a condition (`if`, `check`, `cond()`) given a tensor that is not one
/// `bool` element; `context` names the statement or function.
pub(super) fn not_one_bool_message(context: &str, tensor: &TensorValue) -> String {
    format!(
        "{context} needs a bool or a one-element bool tensor, got a tensor {}",
        tensor.meta()
    )
}

pub(super) fn rule_error(rule: RuleError, span: Span) -> Box<Diagnostic> {
    let code = match rule.kind {
        RuleErrorKind::Shape => Code::ShapeError,
        RuleErrorKind::Type => Code::TypeError,
        RuleErrorKind::Value => Code::ValueError,
        RuleErrorKind::DataDependentInt => Code::DataDependentInt,
    };
    let diagnostic = error(code, span, rule.message);
    match rule.help {
        Some(help) => diagnostic.with_help(help).into(),
        None => diagnostic.into(),
    }
}

pub(super) fn kernel_error(kernel: &KernelError, span: Span) -> Box<Diagnostic> {
    kernel.diagnostic(span).into()
}
