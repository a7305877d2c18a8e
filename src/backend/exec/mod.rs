//! Running a traced graph: the executor every backend shares.
//!
//! A run walks the nodes of a [`Plan`] in program order. Symbols get their values as they
//! become known: backed ones from the inputs before the run starts, unbacked ones from the
//! node that binds them (an output size, or the element of an `item`). Symbolic sizes in an
//! op are resolved just before it runs. Asserts and device asserts run where the trace put
//! them, so a failing check stops the run before anything after it runs or prints; prints go
//! to the caller's sink in program order. `cond` runs the branch its predicate picks.
//!
//! What is computed where is the [`Device`]'s business: the CPU device calls the ndarray
//! kernels; another device only has to implement the same trait.

mod plan;
mod profile;

pub use plan::Plan;
pub use profile::{KernelCall, Profile};

use crate::backend::cpu::{self, KernelError, format_shape};
use crate::diag::{Code, Diagnostic, Result};
use crate::dtype::{DType, Scalar, format_f64};
use crate::graph::ir::{Arg, BindSource, Graph, Node, NodeKind, Output, Part, Template, ValueRef};
use crate::graph::op::Op;
use crate::graph::shape::{Dim, Meta};
use crate::sym::{ExprId, SymbolId};

/// Where tensors live and how operations on them are computed.
pub trait Device {
    type Tensor: Clone;
    /// A host tensor on the device.
    fn upload(&mut self, tensor: &cpu::Tensor) -> Result<Self::Tensor, KernelError>;
    /// A device tensor on the host.
    fn download(&mut self, tensor: &Self::Tensor) -> Result<cpu::Tensor, KernelError>;
    fn shape<'t>(&self, tensor: &'t Self::Tensor) -> &'t [usize];
    fn dtype(&self, tensor: &Self::Tensor) -> DType;
    /// A 0-d tensor holding `value`.
    fn scalar(&mut self, value: Scalar) -> Result<Self::Tensor, KernelError>;
    /// Computes a canonical op whose sizes are all concrete.
    fn run(&mut self, op: &Op, inputs: Vec<Self::Tensor>)
    -> Result<Vec<Self::Tensor>, KernelError>;
    /// The element of a one-element tensor.
    fn element(&mut self, tensor: &Self::Tensor) -> Result<Scalar, KernelError>;
    /// Fails when the results of `op` on `operands` (each a dtype and an element count, as
    /// its node predicts them) cannot be allocated now (see `cpu::memory`); asked before
    /// each op runs.
    fn reserve(
        &mut self,
        op: &Op,
        operands: &[Self::Tensor],
        results: &[(DType, u64)],
    ) -> Result<(), KernelError> {
        let _ = (op, operands, results);
        Ok(())
    }
}

/// What a run returns: the graph's output with tensors on the device.
#[derive(Clone, Debug, PartialEq)]
pub enum RunValue<T> {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Tensor(T),
    List(Vec<RunValue<T>>),
}

/// Runs `plan`. `tensors` are the inputs in the order of [`Plan::inputs`]; `symbols` holds the
/// values of the backed symbols (by symbol number, at least [`Plan::symbol_count`] long);
/// `constants` are the tensors the graph captured; `print` receives printed lines.
pub fn execute<D: Device>(
    plan: &Plan,
    device: &mut D,
    constants: &[D::Tensor],
    tensors: Vec<D::Tensor>,
    symbols: Vec<i64>,
    print: &mut dyn FnMut(&str),
    profile: Option<&mut Profile>,
) -> Result<RunValue<D::Tensor>> {
    let started = profile.is_some().then(std::time::Instant::now);
    let mut machine = Machine {
        device,
        constants,
        symbols,
        print,
        profile,
    };
    let inputs = tensors.into_iter().map(Some).collect();
    let mut slots = machine.run(plan, inputs)?;
    let output = machine.output(plan, &plan.graph.output, &mut slots);
    if let (Some(profile), Some(started)) = (machine.profile, started) {
        profile.function(&plan.graph.name, started.elapsed());
    }
    output
}

/// The state of one run.
struct Machine<'r, D: Device> {
    device: &'r mut D,
    constants: &'r [D::Tensor],
    /// Symbol values by symbol number; shared by a graph and its branches, whose symbols are
    /// numbered after the graph's.
    symbols: Vec<i64>,
    print: &'r mut dyn FnMut(&str),
    /// Where kernel times go, when the run is profiled.
    profile: Option<&'r mut Profile>,
}

type Slots<T> = Vec<Option<T>>;

impl<D: Device> Machine<'_, D> {
    /// Runs every node of `plan`, returning the slots that still hold values.
    fn run(&mut self, plan: &Plan, mut inputs: Vec<Option<D::Tensor>>) -> Result<Slots<D::Tensor>> {
        let mut slots: Slots<D::Tensor> = vec![None; plan.slot_count];
        for (node, step) in plan.graph.nodes.iter().zip(&plan.steps) {
            let env = &plan.graph.env;
            match &node.kind {
                NodeKind::Input { .. } => {
                    slots[step.slot] = inputs.get_mut(step.input).and_then(Option::take);
                }
                NodeKind::Constant { index } => {
                    slots[step.slot] = self.constants.get(*index).cloned();
                }
                NodeKind::Op(op) => {
                    let resolved;
                    let op = if step.symbolic {
                        resolved = self.resolve(op, &plan.graph, node)?;
                        &resolved
                    } else {
                        op
                    };
                    let mut operands = Vec::with_capacity(node.args.len());
                    for (arg, take) in node.args.iter().zip(&step.take) {
                        operands.push(self.operand(plan, &mut slots, arg, *take, node)?);
                    }
                    self.reserve(&plan.graph, op, &operands, node)?;
                    let outputs = self.run_op(&plan.graph.name, op, operands, node)?;
                    self.bind(node, &outputs);
                    debug_check_outputs(self, &plan.graph, node, &outputs);
                    for (offset, output) in outputs.into_iter().enumerate() {
                        slots[step.slot + offset] = Some(output);
                    }
                }
                NodeKind::Item => {
                    let tensor = self.operand(plan, &mut slots, &node.args[0], false, node)?;
                    let element = self.item(&tensor, node)?;
                    for (symbol, source) in &node.binds {
                        if *source == BindSource::Element {
                            self.set(*symbol, element.as_i64());
                        }
                    }
                    let value = self.device.scalar(element).map_err(|e| kernel(&e, node))?;
                    slots[step.slot] = Some(value);
                }
                NodeKind::Assert { cond, message } => {
                    let holds =
                        env.eval_bool(*cond, &|symbol| self.value(symbol))
                            .map_err(|error| {
                                failure(
                                    Diagnostic::error(
                                        Code::ValueError,
                                        node.span,
                                        format!("this check cannot be evaluated: {error}"),
                                    ),
                                    node,
                                )
                            })?;
                    if !holds {
                        let text = self.format(plan, &slots, message, Some(node))?;
                        return Err(check_failed(Code::CheckFailed, text, node));
                    }
                }
                NodeKind::DeviceAssert { message, scalar } => {
                    let tensor = self.operand(plan, &mut slots, &node.args[0], false, node)?;
                    if !self.item(&tensor, node)?.as_bool() {
                        let code = if *scalar {
                            Code::CheckFailed
                        } else {
                            Code::DeviceCheckFailed
                        };
                        let text = self.format(plan, &slots, message, Some(node))?;
                        return Err(check_failed(code, text, node));
                    }
                }
                NodeKind::Print { line } => {
                    let text = self.format(plan, &slots, line, Some(node))?;
                    (self.print)(&text);
                }
                NodeKind::Cond { .. } => {
                    let outputs = self.cond(plan, step, &mut slots, node)?;
                    self.bind(node, &outputs);
                    for (offset, output) in outputs.into_iter().enumerate() {
                        slots[step.slot + offset] = Some(output);
                    }
                }
            }
            for slot in &step.release {
                slots[*slot] = None;
            }
        }
        Ok(slots)
    }

    /// Runs one op on the device, timing it when the run is profiled.
    fn run_op(
        &mut self,
        function: &str,
        op: &Op,
        operands: Vec<D::Tensor>,
        node: &Node,
    ) -> Result<Vec<D::Tensor>> {
        if self.profile.is_none() {
            return self
                .device
                .run(op, operands)
                .map_err(|error| op_failure(op, &error, node));
        }
        let read: usize = operands.iter().map(|tensor| self.bytes(tensor)).sum();
        let started = std::time::Instant::now();
        let outputs = self
            .device
            .run(op, operands)
            .map_err(|error| op_failure(op, &error, node))?;
        let time = started.elapsed();
        let written: usize = outputs.iter().map(|tensor| self.bytes(tensor)).sum();
        let elements = outputs
            .iter()
            .map(|tensor| self.device.shape(tensor).iter().product::<usize>())
            .sum();
        let kernel = match op {
            Op::Fused(kernel) => format!("fused[{}]", kernel.member_names().join(", ")),
            op => op.name().to_string(),
        };
        if let Some(profile) = self.profile.as_deref_mut() {
            profile.kernel(KernelCall {
                function,
                kernel,
                time,
                elements,
                bytes: read + written,
            });
        }
        Ok(outputs)
    }

    /// Asks the device for the memory of `node`'s results (a result whose size is not
    /// known before it runs counts as empty).
    fn reserve(
        &mut self,
        graph: &Graph,
        op: &Op,
        operands: &[D::Tensor],
        node: &Node,
    ) -> Result<()> {
        let results: Vec<(DType, u64)> = node
            .outputs
            .iter()
            .map(|meta| {
                let numel = meta.shape.iter().try_fold(1u64, |count, dim| {
                    let size = match *dim {
                        Dim::Known(size) => size,
                        Dim::Sym(expr) => graph
                            .env
                            .eval_int(expr, &|symbol| self.value(symbol))
                            .ok()?,
                    };
                    Some(count.saturating_mul(u64::try_from(size).ok()?))
                });
                (meta.dtype, numel.unwrap_or(0))
            })
            .collect();
        self.device
            .reserve(op, operands, &results)
            .map_err(|error| kernel(&error, node))
    }

    fn bytes(&self, tensor: &D::Tensor) -> usize {
        let numel: usize = self.device.shape(tensor).iter().product();
        numel * self.device.dtype(tensor).size_of()
    }

    fn value(&self, symbol: SymbolId) -> Option<i64> {
        self.symbols.get(symbol.index()).copied()
    }

    fn set(&mut self, symbol: SymbolId, value: i64) {
        if let Some(slot) = self.symbols.get_mut(symbol.index()) {
            *slot = value;
        }
    }

    /// Binds the symbols `node` defines from the sizes of its outputs.
    fn bind(&mut self, node: &Node, outputs: &[D::Tensor]) {
        for (symbol, source) in &node.binds {
            if let BindSource::Dim { output, dim } = *source {
                let size = outputs
                    .get(output)
                    .and_then(|tensor| self.device.shape(tensor).get(dim).copied())
                    .unwrap_or_default();
                self.set(*symbol, size as i64);
            }
        }
    }

    fn int(&self, graph: &Graph, dim: Dim, node: &Node) -> Result<i64> {
        match dim {
            Dim::Known(value) => Ok(value),
            Dim::Sym(expr) => graph
                .env
                .eval_int(expr, &|symbol| self.value(symbol))
                .map_err(|error| {
                    failure(
                        Diagnostic::error(
                            Code::ValueError,
                            node.span,
                            format!("a size of this operation cannot be computed: {error}"),
                        ),
                        node,
                    )
                }),
        }
    }

    /// The op with every size concrete.
    fn resolve(&self, op: &Op, graph: &Graph, node: &Node) -> Result<Op> {
        let mut op = op.clone();
        op.try_for_each_dim(&mut |dim: &mut Dim| -> Result<()> {
            *dim = Dim::Known(self.int(graph, *dim, node)?);
            Ok(())
        })?;
        Ok(op)
    }

    /// An argument as a device tensor (host numbers become 0-d tensors).
    fn operand(
        &mut self,
        plan: &Plan,
        slots: &mut Slots<D::Tensor>,
        arg: &Arg,
        take: bool,
        node: &Node,
    ) -> Result<D::Tensor> {
        let scalar = match arg {
            Arg::Tensor(value) => return self.tensor(plan, slots, *value, take, node),
            Arg::Int(dim) => Scalar::Int(self.int(&plan.graph, *dim, node)?),
            Arg::Float(value) => Scalar::Float(*value),
            Arg::Bool(value) => Scalar::Bool(*value),
        };
        self.device.scalar(scalar).map_err(|e| kernel(&e, node))
    }

    fn tensor(
        &self,
        plan: &Plan,
        slots: &mut Slots<D::Tensor>,
        value: ValueRef,
        take: bool,
        node: &Node,
    ) -> Result<D::Tensor> {
        let slot = &mut slots[plan.slot(value)];
        let tensor = if take { slot.take() } else { slot.clone() };
        tensor.ok_or_else(|| {
            failure(
                Diagnostic::internal(
                    node.span,
                    format!("{value:?} has no value when this operation runs"),
                ),
                node,
            )
        })
    }

    /// The element of a one-element tensor, with the error `item()` gives eagerly.
    fn item(&mut self, tensor: &D::Tensor, node: &Node) -> Result<Scalar> {
        self.device.element(tensor).map_err(|_| {
            let shape = self.device.shape(tensor);
            failure(
                Diagnostic::error(
                    Code::ShapeError,
                    node.span,
                    format!(
                        "item() needs a one-element tensor, got {}{}",
                        self.device.dtype(tensor),
                        format_shape(shape)
                    ),
                ),
                node,
            )
        })
    }

    /// Runs the branch of a `cond` its predicate picks; its output tensors in order.
    fn cond(
        &mut self,
        plan: &Plan,
        step: &plan::Step,
        slots: &mut Slots<D::Tensor>,
        node: &Node,
    ) -> Result<Vec<D::Tensor>> {
        let predicate = match &node.args[0] {
            Arg::Int(Dim::Sym(cond)) => plan
                .graph
                .env
                .eval_bool(*cond, &|symbol| self.value(symbol))
                .map_err(|error| {
                    failure(
                        Diagnostic::error(
                            Code::ValueError,
                            node.span,
                            format!("the predicate of cond() cannot be evaluated: {error}"),
                        ),
                        node,
                    )
                })?,
            Arg::Bool(value) => *value,
            Arg::Int(Dim::Known(value)) => *value != 0,
            arg => {
                let tensor = self.operand(plan, slots, arg, false, node)?;
                self.item(&tensor, node)?.as_bool()
            }
        };
        let branches = step
            .branches
            .as_ref()
            .expect("a cond node has the plans of its branches");
        let branch = &branches[usize::from(!predicate)];
        let mut inputs = Vec::with_capacity(branch.inputs().len());
        for path in branch.inputs() {
            let arg = path.first().and_then(|index| node.args.get(index + 1));
            inputs.push(match arg {
                Some(arg @ Arg::Tensor(_)) => Some(self.operand(plan, slots, arg, false, node)?),
                _ => None,
            });
        }
        let mut branch_slots = self.run(branch, inputs)?;
        let mut outputs = Vec::new();
        collect_tensors(
            branch,
            &branch.graph.output,
            &mut branch_slots,
            &mut outputs,
        );
        Ok(outputs)
    }

    /// Formats a message or printed line with the values of this run.
    fn format(
        &mut self,
        plan: &Plan,
        slots: &Slots<D::Tensor>,
        template: &Template,
        node: Option<&Node>,
    ) -> Result<String> {
        let env = &plan.graph.env;
        let mut text = String::new();
        for part in &template.0 {
            match part {
                Part::Text(literal) => text.push_str(literal),
                Part::Int(Dim::Known(value)) => text.push_str(&value.to_string()),
                Part::Int(Dim::Sym(expr)) => text.push_str(&self.show_int(env, *expr)),
                Part::Bool(expr) => match env.eval_bool(*expr, &|symbol| self.value(symbol)) {
                    Ok(value) => text.push_str(&value.to_string()),
                    Err(_) => text.push_str(&env.display(*expr)),
                },
                Part::Scalar(value) | Part::Tensor(value) => {
                    let Some(tensor) = &slots[plan.slot(*value)] else {
                        text.push_str("<unavailable>");
                        continue;
                    };
                    let host = self.device.download(tensor).map_err(|error| {
                        let span = node.map(|node| node.span).unwrap_or_default();
                        Box::new(error.diagnostic(span))
                    })?;
                    match part {
                        Part::Scalar(_) => text.push_str(&scalar_text(&host)),
                        _ => text.push_str(&cpu::format_tensor(&host)),
                    }
                }
            }
        }
        Ok(text)
    }

    fn show_int(&self, env: &crate::sym::ShapeEnv, expr: ExprId) -> String {
        match env.eval_int(expr, &|symbol| self.value(symbol)) {
            Ok(value) => value.to_string(),
            Err(_) => env.display(expr),
        }
    }

    /// The graph's output as values, tensors moved out of their slots.
    fn output(
        &mut self,
        plan: &Plan,
        output: &Output,
        slots: &mut Slots<D::Tensor>,
    ) -> Result<RunValue<D::Tensor>> {
        let env = &plan.graph.env;
        let missing = || {
            Box::new(Diagnostic::internal(
                crate::source::Span::default(),
                "an output of the compiled graph has no value",
            ))
        };
        Ok(match output {
            Output::None => RunValue::None,
            Output::Bool(value) => RunValue::Bool(*value),
            Output::Float(value) => RunValue::Float(*value),
            Output::Str(text) => RunValue::Str(text.clone()),
            Output::Int(Dim::Known(value)) => RunValue::Int(*value),
            Output::Int(Dim::Sym(expr)) => RunValue::Int(
                env.eval_int(*expr, &|symbol| self.value(symbol))
                    .map_err(|_| missing())?,
            ),
            Output::SymBool(expr) => RunValue::Bool(
                env.eval_bool(*expr, &|symbol| self.value(symbol))
                    .map_err(|_| missing())?,
            ),
            Output::Scalar(value) => {
                let tensor = slots[plan.slot(*value)].clone().ok_or_else(missing)?;
                match self.device.element(&tensor).map_err(|_| missing())? {
                    Scalar::Float(x) => RunValue::Float(x),
                    Scalar::Int(x) => RunValue::Int(x),
                    Scalar::Bool(x) => RunValue::Bool(x),
                }
            }
            Output::Template(template) => RunValue::Str(self.format(plan, slots, template, None)?),
            Output::Tensor(value) => {
                // The same value may be returned twice (`return [y, y]`): clone, never move.
                RunValue::Tensor(slots[plan.slot(*value)].clone().ok_or_else(missing)?)
            }
            Output::List(items) => RunValue::List(
                items
                    .iter()
                    .map(|item| self.output(plan, item, slots))
                    .collect::<Result<_>>()?,
            ),
        })
    }
}

/// The tensors of a branch's output, in order.
fn collect_tensors<T: Clone>(
    plan: &Plan,
    output: &Output,
    slots: &mut Slots<T>,
    into: &mut Vec<T>,
) {
    match output {
        Output::Tensor(value) => into.extend(slots[plan.slot(*value)].clone()),
        Output::List(items) => {
            for item in items {
                collect_tensors(plan, item, slots, into);
            }
        }
        _ => {}
    }
}

/// A host scalar printed as its eager value prints (`item()` of an `f32` is a float).
fn scalar_text(tensor: &cpu::Tensor) -> String {
    match tensor.to_scalar() {
        Some(Scalar::Float(value)) => format_f64(value),
        Some(Scalar::Int(value)) => value.to_string(),
        Some(Scalar::Bool(value)) => value.to_string(),
        None => cpu::format_tensor(tensor),
    }
}

/// A diagnostic raised by `node`, with the calls inside the compiled function that led to it.
fn failure(mut diagnostic: Diagnostic, node: &Node) -> Box<Diagnostic> {
    for frame in &node.trace {
        diagnostic.push_frame(frame.function.clone(), frame.call_site);
    }
    Box::new(diagnostic)
}

/// A diagnostic for an error an op raised when it ran. An error inside a fused kernel is
/// reported at the operation it replaced that raised it, as that operation alone would be.
fn op_failure(op: &Op, error: &KernelError, node: &Node) -> Box<Diagnostic> {
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

fn kernel(error: &KernelError, node: &Node) -> Box<Diagnostic> {
    failure(error.diagnostic(node.span), node)
}

fn check_failed(code: Code, text: String, node: &Node) -> Box<Diagnostic> {
    failure(
        Diagnostic::error(code, node.span, text).with_label("this check failed"),
        node,
    )
}

/// In debug builds, every output must have the dtype and sizes the trace predicted for it:
/// the whole test suite then checks the symbolic engine's answers against real runs.
fn debug_check_outputs<D: Device>(
    machine: &Machine<'_, D>,
    graph: &Graph,
    node: &Node,
    outputs: &[D::Tensor],
) {
    if !cfg!(debug_assertions) {
        return;
    }
    assert_eq!(outputs.len(), node.outputs.len(), "{node:?}");
    for (tensor, meta) in outputs.iter().zip(&node.outputs) {
        let shape = machine.device.shape(tensor);
        let predicted: Vec<Option<i64>> = meta
            .shape
            .iter()
            .map(|dim| machine.int(graph, *dim, node).ok())
            .collect();
        let actual: Vec<Option<i64>> = shape.iter().map(|size| Some(*size as i64)).collect();
        assert!(
            machine.device.dtype(tensor) == meta.dtype && predicted == actual,
            "the trace predicted {} for {:?}, the run produced {}{}",
            describe(meta, &predicted),
            node.kind,
            machine.device.dtype(tensor),
            format_shape(shape)
        );
    }
}

fn describe(meta: &Meta, sizes: &[Option<i64>]) -> String {
    let sizes: Vec<String> = sizes
        .iter()
        .map(|size| size.map_or_else(|| "?".to_string(), |size| size.to_string()))
        .collect();
    format!("{}[{}]", meta.dtype, sizes.join(", "))
}
