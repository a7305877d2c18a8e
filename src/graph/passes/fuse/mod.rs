//! Fusion: groups of elementwise operations over one iteration shape, with the reductions
//! that end them, become one `Op::Fused` node computed in a single pass over memory.
//!
//! The pass walks the nodes in program order and grows one group at a time. A node joins the
//! open group when it is an elementwise op of the group's iteration shape, a reduction of
//! one of its per-element values over the last dim (the group then runs row by row, and
//! later members may use the per-row result, as softmax does), or a reduction over every
//! element (an output only). The fused node takes the place of the group's last member.
//!
//! Checks are never moved: the open group is closed by every node with effects (asserts,
//! device asserts, prints, random numbers), every `item`, `cond` and symbol-binding node, and
//! every node that reads one of the group's values, so each of these still runs after the
//! operations it followed and before the ones it preceded. Once a group holds a member whose
//! elements can fail (integer `//`, `%`, `**`, an extremum over a possibly empty extent), any
//! further operation outside the group closes it too, so a failure is never reported after
//! one that came later in the program. Members only ever move later, past independent pure
//! operations.

mod build;

use std::collections::HashMap;
use std::sync::Arc;

use super::rewrite::{for_each_use, retain};
use crate::graph::fused::{Fusible, fusible};
use crate::graph::ir::{Arg, Graph, Node, NodeId, NodeKind, Part, ValueRef};
use crate::graph::op::Op;
use crate::graph::shape::{Dim, Meta};

/// What a device lets the pass form.
#[derive(Clone, Debug)]
pub struct FusionPolicy {
    /// The most members in one group.
    pub max_members: usize,
    /// Whether groups may hold reductions (per row or over everything).
    pub reductions: bool,
    /// The most tensors (operands plus outputs) one kernel may bind; a group needing more
    /// stays unfused.
    pub max_tensors: usize,
}

impl Default for FusionPolicy {
    fn default() -> FusionPolicy {
        FusionPolicy {
            max_members: 64,
            reductions: true,
            max_tensors: usize::MAX,
        }
    }
}

/// Fuses the groups of `graph` and of its branches.
pub fn fuse(graph: &mut Graph, policy: &FusionPolicy) {
    for node in &mut graph.nodes {
        if let NodeKind::Cond {
            then_branch,
            else_branch,
        } = &mut node.kind
        {
            fuse(then_branch, policy);
            fuse(else_branch, policy);
        }
    }
    let groups = find_groups(graph, policy);
    rewrite(graph, &groups, policy);
}

/// The kind of value a member computes.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    /// One per element of the iteration shape.
    Element,
    /// One per row (a reduction over the last dim, or computed from such values), of these
    /// sizes.
    Row(Vec<Dim>),
    /// A reduction over every element: an output only.
    Total,
}

struct Group {
    members: Vec<usize>,
    values: HashMap<usize, Value>,
    shape: Vec<Dim>,
    rows: bool,
    totals: bool,
    fallible: bool,
}

fn find_groups(graph: &Graph, policy: &FusionPolicy) -> Vec<Group> {
    let mut groups = Vec::new();
    let mut open: Option<Group> = None;
    for (index, node) in graph.nodes.iter().enumerate() {
        if let Some(group) = &mut open
            && group.members.len() < policy.max_members
            && let Some(value) = joins(graph, group, node)
            && (policy.reductions || value == Value::Element)
        {
            group.add(index, node, value);
            continue;
        }
        let candidate = start(graph, index, node).filter(|_| {
            policy.reductions || !matches!(member_op(node), Some(Fusible::Reduce { .. }))
        });
        if candidate.is_some() || open.as_ref().is_some_and(|group| breaks(group, node)) {
            groups.extend(open.take().filter(|group| group.members.len() > 1));
        }
        if candidate.is_some() {
            open = candidate;
        }
    }
    groups.extend(open.filter(|group| group.members.len() > 1));
    groups
}

/// A new group holding only `node`, if it can be a member.
fn start(graph: &Graph, index: usize, node: &Node) -> Option<Group> {
    let op = member_op(node)?;
    let (shape, value) = match op {
        Fusible::Reduce { dims, .. } => {
            let Some(Arg::Tensor(input)) = node.args.first() else {
                return None;
            };
            let shape = graph.meta(*input).shape.clone();
            let value = reduction_value(dims, &shape, &node.outputs[0].shape)?;
            (shape, value)
        }
        _ => (node.outputs[0].shape.clone(), Value::Element),
    };
    let mut group = Group {
        members: Vec::new(),
        values: HashMap::new(),
        shape,
        rows: false,
        totals: false,
        fallible: false,
    };
    group.add(index, node, value);
    Some(group)
}

/// What a node that could be a member computes: a fusible op, one output, binding nothing.
fn member_op(node: &Node) -> Option<Fusible<'_>> {
    match &node.kind {
        NodeKind::Op(op) if node.outputs.len() == 1 && node.binds.is_empty() => fusible(op),
        _ => None,
    }
}

/// What a reduction over `dims` of a value of `shape` computes in a group: a total, a
/// per-row value (over the last dim), or nothing fusible (other dims).
fn reduction_value(dims: Option<&[usize]>, shape: &[Dim], out: &[Dim]) -> Option<Value> {
    match dims {
        None => Some(Value::Total),
        Some([dim]) if *dim + 1 == shape.len() => Some(Value::Row(out.to_vec())),
        Some(_) => None,
    }
}

/// How `node` would join `group`, if it can.
fn joins(graph: &Graph, group: &Group, node: &Node) -> Option<Value> {
    let op = member_op(node)?;
    let operands: Vec<Option<&Value>> = tensor_operands(node)
        .map(|value| member_value(group, value))
        .collect();
    let out = &node.outputs[0].shape;
    if let Fusible::Reduce { dims, .. } = op {
        let from_group = match operands.first()? {
            Some(value) => **value == Value::Element,
            None => {
                let input = tensor_operands(node).next()?;
                graph.meta(input).shape == group.shape
            }
        };
        let value = reduction_value(dims, &group.shape, out)?;
        let allowed = match value {
            Value::Total => !group.rows,
            Value::Row(_) => !group.totals,
            Value::Element => false,
        };
        return (from_group && allowed).then_some(value);
    }
    if *out == group.shape {
        let usable = operands.iter().flatten().all(|value| match value {
            Value::Element => true,
            Value::Row(shape) => broadcasts_per_row(shape, &group.shape),
            Value::Total => false,
        });
        return usable.then_some(Value::Element);
    }
    let all_rows = operands
        .iter()
        .all(|value| matches!(value, Some(Value::Row(shape)) if shape == out));
    (group.rows && all_rows).then(|| Value::Row(out.clone()))
}

/// Whether a per-row value of `shape` broadcasts along the rows of `iteration`: it has the
/// iteration's outer sizes and a last size of 1 (or the iteration has a single row).
fn broadcasts_per_row(shape: &[Dim], iteration: &[Dim]) -> bool {
    match iteration.split_last() {
        None => true,
        Some((_, [])) => shape.len() <= 1 && shape.iter().all(|d| *d == Dim::ONE),
        Some((_, outer)) => {
            shape.len() == iteration.len()
                && shape[..outer.len()] == *outer
                && shape.last() == Some(&Dim::ONE)
        }
    }
}

fn member_value(group: &Group, value: ValueRef) -> Option<&Value> {
    (value.output == 0)
        .then(|| group.values.get(&value.node.index()))
        .flatten()
}

fn tensor_operands(node: &Node) -> impl Iterator<Item = ValueRef> + '_ {
    node.args.iter().filter_map(|arg| match arg {
        Arg::Tensor(value) => Some(*value),
        _ => None,
    })
}

/// Whether a node that is not a member must close the group before it runs.
fn breaks(group: &Group, node: &Node) -> bool {
    let mut reads_group = false;
    visit_reads(node, &mut |value| {
        reads_group |= member_value(group, value).is_some();
    });
    reads_group
        || group.fallible
        || node.kind.has_effects()
        || !node.binds.is_empty()
        || matches!(node.kind, NodeKind::Item | NodeKind::Cond { .. })
}

/// Every value a node reads: its tensor arguments and the values its message or line prints.
fn visit_reads(node: &Node, visit: &mut impl FnMut(ValueRef)) {
    tensor_operands(node).for_each(&mut *visit);
    let parts = match &node.kind {
        NodeKind::Assert { message, .. } | NodeKind::DeviceAssert { message, .. } => &message.0[..],
        NodeKind::Print { line } => &line.0[..],
        NodeKind::Input { .. }
        | NodeKind::Constant { .. }
        | NodeKind::Op(_)
        | NodeKind::Item
        | NodeKind::Cond { .. } => &[],
    };
    for part in parts {
        if let Part::Scalar(value) | Part::Tensor(value) = part {
            visit(*value);
        }
    }
}

impl Group {
    fn add(&mut self, index: usize, node: &Node, value: Value) {
        match value {
            Value::Row(_) => self.rows |= matches!(node.kind, NodeKind::Op(Op::Reduce { .. })),
            Value::Total => self.totals = true,
            Value::Element => {}
        }
        self.fallible |= node.can_fail_on_data();
        self.members.push(index);
        self.values.insert(index, value);
    }
}

/// Replaces each group by one fused node at the place of its last member.
fn rewrite(graph: &mut Graph, groups: &[Group], policy: &FusionPolicy) {
    let mut live = vec![true; graph.nodes.len()];
    let mut moved: HashMap<usize, ValueRef> = HashMap::new();
    let mut fused = Vec::new();
    for group in groups {
        let escaping = escaping(graph, &group.members);
        let Some((kernel, operands)) =
            build::build(graph, &group.members, &escaping, &group.shape, group.rows)
        else {
            continue;
        };
        if kernel.inputs.len() + kernel.outputs.len() > policy.max_tensors {
            continue;
        }
        let last = *group.members.last().expect("a group has members");
        let mut output = 0;
        for (&member, escapes) in group.members.iter().zip(&escaping) {
            live[member] = member == last;
            if *escapes {
                moved.insert(
                    member,
                    ValueRef {
                        node: NodeId(last as u32),
                        output,
                    },
                );
                output += 1;
            }
        }
        let last_node = &graph.nodes[last];
        let node = Node {
            outputs: kernel.output_metas(),
            kind: NodeKind::Op(Op::Fused(Arc::new(kernel))),
            args: operands.into_iter().map(Arg::Tensor).collect(),
            binds: Vec::new(),
            span: last_node.span,
            trace: last_node.trace.clone(),
        };
        fused.push((last, node));
    }
    for (index, node) in fused {
        graph.nodes[index] = node;
    }
    for_each_use(graph, &mut |value| {
        if value.output == 0
            && let Some(target) = moved.get(&value.node.index())
        {
            *value = *target;
        }
    });
    retain(graph, &live);
}

/// Per member: whether something outside the group reads its value.
fn escaping(graph: &Graph, members: &[usize]) -> Vec<bool> {
    let position: HashMap<usize, usize> = members
        .iter()
        .enumerate()
        .map(|(position, member)| (*member, position))
        .collect();
    let mut escapes = vec![false; members.len()];
    let mut mark = |value: ValueRef| {
        if value.output == 0
            && let Some(&member) = position.get(&value.node.index())
        {
            escapes[member] = true;
        }
    };
    for (index, node) in graph.nodes.iter().enumerate() {
        if !position.contains_key(&index) {
            visit_reads(node, &mut mark);
        }
    }
    graph.output.visit_values(&mut mark);
    escapes
}

/// The kernel of one elementwise op on operands of `inputs` (0-d for host scalars) giving
/// `output`: what a device that runs every elementwise op as a fused kernel runs for an op
/// that was not fused. `None` for an op that is not elementwise.
pub fn single(op: &Op, inputs: &[Meta], output: &Meta) -> Option<crate::graph::fused::FusedKernel> {
    if !matches!(
        op,
        Op::Binary(_) | Op::Unary(_) | Op::Cast(_) | Op::Where | Op::Clamp { .. }
    ) {
        return None;
    }
    let mut graph = Graph::new("op", crate::sym::ShapeEnv::new());
    let mut args = Vec::with_capacity(inputs.len());
    for (position, meta) in inputs.iter().enumerate() {
        let id = graph.push(Node {
            kind: NodeKind::Input {
                path: vec![position],
                name: format!("x{position}"),
            },
            args: Vec::new(),
            outputs: vec![meta.clone()],
            binds: Vec::new(),
            span: crate::source::Span::default(),
            trace: Vec::new(),
        });
        args.push(Arg::Tensor(ValueRef {
            node: id,
            output: 0,
        }));
    }
    let member = graph.nodes.len();
    graph.push(Node {
        kind: NodeKind::Op(op.clone()),
        args,
        outputs: vec![output.clone()],
        binds: Vec::new(),
        span: crate::source::Span::default(),
        trace: Vec::new(),
    });
    let (kernel, _) = build::build(&graph, &[member], &[true], &output.shape, false)?;
    Some(kernel)
}
