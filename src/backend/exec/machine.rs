//! The run loop: nodes in program order, slots, symbol binding, asserts, prints, `cond`, and
//! the bookkeeping of failures a device defers.

use super::plan::{Plan, Step};
use super::profile::{KernelCall, Profile};
use super::report::{self, check_failed, failure, kernel, op_failure};
use super::{Deferred, Device, Failure, RunValue, Site};
use crate::backend::error::{KernelError, check_fused_results};
use crate::backend::interrupt::Interrupt;
use crate::diag::{Code, Diagnostic, Result};
use crate::dtype::{DType, Scalar};
use crate::graph::ir::{Arg, BindSource, Graph, Node, NodeKind, Output, Part, Template, ValueRef};
use crate::graph::op::Op;
use crate::graph::shape::{Dim, Meta};
use crate::source::Span;
use crate::sym::{EvalError, ExprId, SymbolId, SymbolKind};

pub(super) fn execute<D: Device>(
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
        pending: Vec::new(),
        root: plan,
        interrupt: Interrupt::current(),
    };
    let inputs = tensors.into_iter().map(Some).collect();
    let result = machine.run(plan, inputs).and_then(|mut slots| {
        // Outputs are only returned once every queued check has passed.
        machine.sync()?;
        machine.output(plan, &plan.graph.output, &mut slots)
    });
    let output = match result {
        Ok(output) => output,
        Err(error) => return Err(machine.earlier_failure().unwrap_or(error)),
    };
    if let (Some(profile), Some(started)) = (machine.profile, started) {
        profile.function(&plan.graph.name, started.elapsed());
    }
    Ok(output)
}

/// The state of one run.
pub(super) struct Machine<'r, 'p, D: Device> {
    pub(super) device: &'r mut D,
    constants: &'r [D::Tensor],
    /// Symbol values by symbol number; shared by a graph and its branches, whose symbols are
    /// numbered after the graph's.
    symbols: Vec<i64>,
    print: &'r mut dyn FnMut(&str),
    /// Where kernel times go, when the run is profiled.
    profile: Option<&'r mut Profile>,
    /// Device asserts the device queued and has not yet confirmed, with what their messages
    /// need if they fail.
    pending: Vec<Pending<'p, D::Tensor>>,
    /// The plan the run started from, to find a failing node by its site.
    root: &'p Plan,
    /// Checked before every node: Ctrl-C stops a compiled call between operations.
    interrupt: Interrupt,
}

/// A queued device assert: its node and the tensors its message shows (kept alive past
/// their last use, so the message can be written after the sync that finds the failure).
struct Pending<'p, T> {
    site: Site,
    plan: &'p Plan,
    captured: Vec<(ValueRef, T)>,
    /// What locates the first failing element (the assert's arguments after its condition;
    /// `None` for a host number).
    subjects: Vec<Option<T>>,
}

pub(super) type Slots<T> = Vec<Option<T>>;

impl<'p, D: Device> Machine<'_, 'p, D> {
    /// Runs every node of `plan`, returning the slots that still hold values.
    fn run(
        &mut self,
        plan: &'p Plan,
        mut inputs: Vec<Option<D::Tensor>>,
    ) -> Result<Slots<D::Tensor>> {
        let mut slots: Slots<D::Tensor> = vec![None; plan.slot_count];
        for (node, step) in plan.graph.nodes.iter().zip(&plan.steps) {
            self.interrupt
                .check()
                .map_err(|error| kernel(&error, node))?;
            self.device.set_site(step.site);
            match &node.kind {
                NodeKind::Input { .. } => {
                    slots[step.slot] = inputs.get_mut(step.input).and_then(Option::take);
                }
                NodeKind::Constant { index } => {
                    slots[step.slot] = self.constants.get(*index).cloned();
                }
                NodeKind::Op(op) => self.op(plan, step, &mut slots, op, node)?,
                NodeKind::Item => {
                    let tensor = self.operand(plan, &mut slots, &node.args[0], false, node)?;
                    self.sync()?;
                    let element = self.item(&tensor, node)?;
                    for (symbol, source) in &node.binds {
                        if *source == BindSource::Element {
                            self.set(*symbol, element.as_i64());
                        }
                    }
                    let value = self.device.scalar(element).map_err(|e| kernel(&e, node))?;
                    slots[step.slot] = Some(value);
                }
                NodeKind::Assert {
                    cond,
                    message,
                    code,
                } => {
                    let env = &plan.graph.env;
                    let holds = env
                        .eval_bool(*cond, &|symbol| self.value(symbol))
                        .map_err(|error| report::unevaluable_check(error, node))?;
                    if !holds {
                        // A failure the device has not reported yet came first.
                        self.sync()?;
                        let text = self.format(plan, &slots, message, Some(node))?;
                        if *code == Code::CheckFailed {
                            return Err(check_failed(Code::CheckFailed, text, node));
                        }
                        let origins = self.origins(&plan.graph, *cond, message);
                        return Err(report::assumption_failed(*code, text, node, origins));
                    }
                }
                NodeKind::DeviceAssert { message, .. } => {
                    self.device_assert(plan, step, &mut slots, message, node)?;
                }
                NodeKind::Print { line } => {
                    self.sync()?;
                    let text = self.format(plan, &slots, line, Some(node))?;
                    (self.print)(&text);
                }
                NodeKind::Cond { .. } => {
                    let outputs = self.cond(plan, step, &mut slots, node)?;
                    self.bind(node, &outputs)?;
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

    fn op(
        &mut self,
        plan: &Plan,
        step: &Step,
        slots: &mut Slots<D::Tensor>,
        op: &Op,
        node: &Node,
    ) -> Result<()> {
        let resolved;
        let op = if step.symbolic {
            resolved = self.resolve(op, &plan.graph, node)?;
            &resolved
        } else {
            op
        };
        if let Op::Fused(fused) = op {
            check_fused_results(fused).map_err(|error| op_failure(op, &error, node))?;
        }
        let mut operands = Vec::with_capacity(node.args.len());
        for (arg, take) in node.args.iter().zip(&step.take) {
            operands.push(self.operand(plan, slots, arg, *take, node)?);
        }
        self.reserve(&plan.graph, op, &operands, node)?;
        let outputs = self.run_op(&plan.graph.name, op, operands, node)?;
        self.bind(node, &outputs)?;
        debug_check_outputs(self, &plan.graph, node, &outputs);
        for (offset, output) in outputs.into_iter().enumerate() {
            slots[step.slot + offset] = Some(output);
        }
        Ok(())
    }

    /// A device assert: checked now, or queued with the tensors its message needs.
    fn device_assert(
        &mut self,
        plan: &'p Plan,
        step: &Step,
        slots: &mut Slots<D::Tensor>,
        message: &Template,
        node: &'p Node,
    ) -> Result<()> {
        let tensor = self.operand(plan, slots, &node.args[0], false, node)?;
        match self.device.device_assert(&tensor) {
            Ok(Some(true)) => Ok(()),
            Ok(Some(false)) => {
                self.sync()?;
                let text = self.format(plan, slots, message, Some(node))?;
                let subjects = self.subjects(plan, slots, node)?;
                let place = self.locate(node, subjects);
                Err(with_place(
                    check_failed(report::assert_code(node), text, node),
                    place,
                ))
            }
            Ok(None) => {
                let subjects = self.subjects(plan, slots, node)?;
                let mut captured = Vec::new();
                for part in &message.0 {
                    if let Part::Scalar(value) | Part::Tensor(value) = part
                        && let Some(tensor) = &slots[plan.slot(*value)]
                    {
                        captured.push((*value, tensor.clone()));
                    }
                }
                self.pending.push(Pending {
                    site: step.site,
                    plan,
                    captured,
                    subjects,
                });
                Ok(())
            }
            Err(error) => Err(self.element_error(&tensor, error, node)),
        }
    }

    /// The arguments of a device assert after its condition: tensors (what its failure
    /// is located with), `None` for host numbers.
    fn subjects(
        &mut self,
        plan: &Plan,
        slots: &mut Slots<D::Tensor>,
        node: &Node,
    ) -> Result<Vec<Option<D::Tensor>>> {
        let mut subjects = Vec::new();
        for arg in node.args.iter().skip(1) {
            subjects.push(match arg {
                Arg::Tensor(_) => Some(self.operand(plan, slots, arg, false, node)?),
                _ => None,
            });
        }
        Ok(subjects)
    }

    /// Where a failed `check all(P)` is first false (`a[1] = -2.0`), computing `P` again
    /// from its subjects; `None` when the assert does not say, or the place cannot be read.
    fn locate(&mut self, node: &Node, subjects: Vec<Option<D::Tensor>>) -> Option<String> {
        let NodeKind::DeviceAssert {
            located: Some(located),
            ..
        } = &node.kind
        else {
            return None;
        };
        let mut operands = Vec::new();
        for (arg, subject) in node.args.iter().skip(1).zip(&subjects) {
            operands.push(match (subject, arg) {
                (Some(tensor), _) => tensor.clone(),
                (None, Arg::Float(value)) => self.device.scalar(Scalar::Float(*value)).ok()?,
                (None, Arg::Bool(value)) => self.device.scalar(Scalar::Bool(*value)).ok()?,
                (None, Arg::Int(Dim::Known(value))) => {
                    self.device.scalar(Scalar::Int(*value)).ok()?
                }
                (None, _) => return None,
            });
        }
        let predicate = match located.op {
            Some(op) => self.device.run(&Op::Binary(op), operands).ok()?.pop()?,
            None => operands.pop()?,
        };
        let predicate = self.device.download(&predicate).ok()?;
        let mut hosts = Vec::new();
        for subject in &subjects {
            hosts.push(match subject {
                Some(tensor) => Some(self.device.download(tensor).ok()?),
                None => None,
            });
        }
        let shown: Vec<(&str, Option<&crate::backend::host::Tensor>)> = located
            .names
            .iter()
            .zip(&hosts)
            .map(|(name, host)| (name.as_str(), host.as_ref()))
            .collect();
        crate::backend::host::first_failure(&predicate, &shown)
    }

    /// Waits for the device and reports the earliest failure it deferred, if any.
    pub(super) fn sync(&mut self) -> Result<()> {
        match self.device.sync() {
            Ok(None) => {
                self.pending.clear();
                Ok(())
            }
            Ok(Some(deferred)) => Err(self.deferred(deferred)),
            Err(error) => Err(Box::new(error.diagnostic(crate::source::Span::default()))),
        }
    }

    /// After an error: a failure the device deferred from an earlier node, which eager code
    /// would have reported first.
    fn earlier_failure(&mut self) -> Option<Box<Diagnostic>> {
        match self.device.sync() {
            Ok(Some(deferred)) => Some(self.deferred(deferred)),
            Ok(None) | Err(_) => None,
        }
    }

    /// The diagnostic of a deferred failure, at its node.
    fn deferred(&mut self, deferred: Deferred) -> Box<Diagnostic> {
        let Some((_, node)) = self.root.node_at(deferred.site) else {
            return Box::new(Diagnostic::internal(
                crate::source::Span::default(),
                format!(
                    "a device reported a failure at unknown site {}",
                    deferred.site.0
                ),
            ));
        };
        let pending = std::mem::take(&mut self.pending);
        match (&deferred.failure, &node.kind) {
            (Failure::Kernel(error), NodeKind::Op(op)) => op_failure(op, error, node),
            (Failure::Kernel(error), _) => kernel(error, node),
            (Failure::Assert, NodeKind::DeviceAssert { message, .. }) => {
                let Some(pending) = pending.into_iter().find(|p| p.site == deferred.site) else {
                    return failure(
                        Diagnostic::internal(
                            node.span,
                            "a device assert failed that was not queued",
                        ),
                        node,
                    );
                };
                let lookup = |value: ValueRef| {
                    pending
                        .captured
                        .iter()
                        .find(|(captured, _)| *captured == value)
                        .map(|(_, tensor)| tensor.clone())
                };
                let text = self.format_with(pending.plan, &lookup, message, Some(node));
                match text {
                    Ok(text) => {
                        let place = self.locate(node, pending.subjects);
                        with_place(check_failed(report::assert_code(node), text, node), place)
                    }
                    Err(error) => error,
                }
            }
            (Failure::Assert, _) => failure(
                Diagnostic::internal(
                    node.span,
                    "a device reported a failed assert at an operation",
                ),
                node,
            ),
        }
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
        let (outputs, code) = self
            .device
            .run_telling(op, operands)
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
                code,
                time,
                elements,
                bytes: read + written,
            });
        }
        Ok(outputs)
    }

    /// Where the data-dependent values in a failed assumption came from, with the values they
    /// had: `(span of the item() call, "u1 = 1, from item()")`.
    fn origins(&self, graph: &Graph, cond: ExprId, message: &Template) -> Vec<(Span, String)> {
        let env = &graph.env;
        let mut symbols = env.free_symbols(cond);
        for part in &message.0 {
            if let Part::Int(Dim::Sym(expr)) = part {
                symbols.extend(env.free_symbols(*expr));
            }
        }
        let mut origins = Vec::new();
        for symbol in symbols {
            let SymbolKind::Unbacked { origin } = &env.symbol(symbol).kind else {
                continue;
            };
            let name = env.display(env.symbol_expr(symbol));
            let Some(value) = self.value(symbol) else {
                continue;
            };
            let label = format!("{name} = {value}, from {}", origin.operation);
            if !origins.iter().any(|(_, seen)| *seen == label) {
                origins.push((origin.span, label));
            }
        }
        origins
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
        let result = |meta: &Meta| {
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
        };
        // Most ops have one result: its size is passed without a vector.
        let reserved = match node.outputs.as_slice() {
            [meta] => self.device.reserve(op, operands, &[result(meta)]),
            metas => {
                let results: Vec<(DType, u64)> = metas.iter().map(result).collect();
                self.device.reserve(op, operands, &results)
            }
        };
        reserved.map_err(|error| kernel(&error, node))
    }

    fn bytes(&self, tensor: &D::Tensor) -> usize {
        let numel: usize = self.device.shape(tensor).iter().product();
        numel * self.device.dtype(tensor).size_of()
    }

    pub(super) fn value(&self, symbol: SymbolId) -> Option<i64> {
        self.symbols.get(symbol.index()).copied()
    }

    fn set(&mut self, symbol: SymbolId, value: i64) {
        if let Some(slot) = self.symbols.get_mut(symbol.index()) {
            *slot = value;
        }
    }

    /// Binds the symbols `node` defines from the sizes or values of its outputs.
    fn bind(&mut self, node: &Node, outputs: &[D::Tensor]) -> Result<()> {
        for (symbol, source) in &node.binds {
            let value = match *source {
                BindSource::Dim { output, dim } => outputs
                    .get(output)
                    .and_then(|tensor| self.device.shape(tensor).get(dim).copied())
                    .unwrap_or_default() as i64,
                BindSource::Value { output } => match outputs.get(output) {
                    Some(tensor) => self
                        .device
                        .element(tensor)
                        .map_err(|error| kernel(&error, node))?
                        .as_i64(),
                    None => 0,
                },
                BindSource::Element => continue,
            };
            self.set(*symbol, value);
        }
        Ok(())
    }

    pub(super) fn int(&self, graph: &Graph, dim: Dim, node: &Node) -> Result<i64> {
        match dim {
            Dim::Known(value) => Ok(value),
            Dim::Sym(expr) => graph
                .env
                .eval_int(expr, &|symbol| self.value(symbol))
                .map_err(|error| report::uncomputable_size(error, node)),
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
            Arg::Tensor(value) => return tensor(plan, slots, *value, take, node),
            Arg::Int(dim) => Scalar::Int(self.int(&plan.graph, *dim, node)?),
            Arg::Float(value) => Scalar::Float(*value),
            Arg::Bool(value) => Scalar::Bool(*value),
        };
        self.device.scalar(scalar).map_err(|e| kernel(&e, node))
    }

    /// The element of a one-element tensor, with the error `item()` gives eagerly.
    fn item(&mut self, tensor: &D::Tensor, node: &Node) -> Result<Scalar> {
        self.device
            .element(tensor)
            .map_err(|error| self.element_error(tensor, error, node))
    }

    fn element_error(
        &self,
        tensor: &D::Tensor,
        error: KernelError,
        node: &Node,
    ) -> Box<Diagnostic> {
        match error {
            KernelError::Shape(_) => {
                report::not_one_element(self.device.dtype(tensor), self.device.shape(tensor), node)
            }
            error => kernel(&error, node),
        }
    }

    /// Runs the branch of a `cond` its predicate picks; its output tensors in order.
    fn cond(
        &mut self,
        plan: &'p Plan,
        step: &'p Step,
        slots: &mut Slots<D::Tensor>,
        node: &Node,
    ) -> Result<Vec<D::Tensor>> {
        let predicate = match &node.args[0] {
            Arg::Int(Dim::Sym(cond)) => plan
                .graph
                .env
                .eval_bool(*cond, &|symbol| self.value(symbol))
                .map_err(|error| report::unevaluable_predicate(error, node))?,
            Arg::Bool(value) => *value,
            Arg::Int(Dim::Known(value)) => *value != 0,
            arg => {
                let tensor = self.operand(plan, slots, arg, false, node)?;
                self.sync()?;
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
        let lookup = |value: ValueRef| slots[plan.slot(value)].clone();
        self.format_with(plan, &lookup, template, node)
    }

    /// Formats a template, reading tensors through `lookup`.
    fn format_with(
        &mut self,
        plan: &Plan,
        lookup: &dyn Fn(ValueRef) -> Option<D::Tensor>,
        template: &Template,
        node: Option<&Node>,
    ) -> Result<String> {
        let env = &plan.graph.env;
        let mut text = String::new();
        for part in &template.0 {
            match part {
                Part::Text(literal) => text.push_str(literal),
                Part::Int(Dim::Known(value)) => text.push_str(&value.to_string()),
                Part::Int(Dim::Sym(expr)) => {
                    match env.eval_int(*expr, &|symbol| self.value(symbol)) {
                        Ok(value) => text.push_str(&value.to_string()),
                        Err(error) => text.push_str(&uncomputable_part(plan, *expr, error, node)?),
                    }
                }
                Part::Bool(expr) => match env.eval_bool(*expr, &|symbol| self.value(symbol)) {
                    Ok(value) => text.push_str(&value.to_string()),
                    Err(error) => text.push_str(&uncomputable_part(plan, *expr, error, node)?),
                },
                Part::Scalar(value) | Part::Tensor(value) => {
                    let Some(tensor) = lookup(*value) else {
                        text.push_str("<unavailable>");
                        continue;
                    };
                    let host = self.device.download(&tensor).map_err(|error| {
                        let span = node.map(|node| node.span).unwrap_or_default();
                        Box::new(error.diagnostic(span))
                    })?;
                    match part {
                        Part::Scalar(_) => text.push_str(&report::scalar_text(&host)),
                        _ => text.push_str(&host_format(&host)),
                    }
                }
            }
        }
        Ok(text)
    }

    /// The graph's output as values, tensors cloned out of their slots.
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
                    .map_err(|error| report::uncomputable_output(error, &plan.graph, *expr))?,
            ),
            Output::SymBool(expr) => RunValue::Bool(
                env.eval_bool(*expr, &|symbol| self.value(symbol))
                    .map_err(|error| report::uncomputable_output(error, &plan.graph, *expr))?,
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

/// The text of a size or condition in a template that cannot be computed this run. A printed
/// line or a returned string fails as eager code fails computing it (`integer overflow`);
/// a failed check's message shows the expression instead, so the check's own error stands.
fn uncomputable_part(
    plan: &Plan,
    expr: ExprId,
    error: EvalError,
    node: Option<&Node>,
) -> Result<String> {
    match node {
        Some(node) if matches!(node.kind, NodeKind::Print { .. }) => {
            Err(report::uncomputable_size(error, node))
        }
        Some(_) => Ok(plan.graph.env.display(expr)),
        None => Err(report::uncomputable_output(error, &plan.graph, expr)),
    }
}

fn host_format(tensor: &crate::backend::host::Tensor) -> String {
    crate::backend::host::format_tensor(tensor)
}

/// A failed check's diagnostic with the place it failed at, when known.
fn with_place(diagnostic: Box<Diagnostic>, place: Option<String>) -> Box<Diagnostic> {
    match place {
        Some(place) => Box::new(diagnostic.with_note(format!("failed at {place}"))),
        None => diagnostic,
    }
}

/// A tensor argument, moved out of its slot at its last use.
fn tensor<T: Clone>(
    plan: &Plan,
    slots: &mut Slots<T>,
    value: ValueRef,
    take: bool,
    node: &Node,
) -> Result<T> {
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

/// In debug builds, every output must have the dtype and sizes the trace predicted for it:
/// the whole test suite then checks the symbolic engine's answers against real runs.
fn debug_check_outputs<D: Device>(
    machine: &Machine<'_, '_, D>,
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
            report::describe(meta, &predicted),
            node.kind,
            machine.device.dtype(tensor),
            crate::backend::error::format_shape(shape)
        );
    }
}
