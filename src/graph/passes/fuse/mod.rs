//! Fusion: groups of elementwise operations over one iteration shape, with the reductions
//! and mask compactions among them, become one `Op::Fused` node computed in one pass over
//! memory.
//!
//! The pass walks the nodes in program order and grows one group at a time. A node joins the
//! open group when it is an elementwise op of the group's iteration shape, a reduction of
//! one of its per-element values over the last dim (the group then runs row by row, and
//! later members may use the per-row result, as softmax does), a reduction over every
//! element (an output only), or a compaction by a mask of the iteration shape (`x[mask]`,
//! `masked_select`, `nonzero` of a 1-D mask) with the elementwise work, `squeeze`, takes at
//! the kept positions (`index_select`, `gather`, `x[indices]` along dim 0) and reductions
//! over everything that follow it (`group.rs`). The fused node takes the place of the
//! group's last member.
//!
//! Checks are never moved: the open group is closed by every node with effects (asserts,
//! device asserts, prints, random numbers), every `item`, `cond` and other symbol-binding
//! node, every node that reads one of the group's values, and every node that needs the
//! count of kept elements the group binds (the fused node binds it, from its count output,
//! where the group ends). So each of these still runs after the operations it followed and
//! before the ones it preceded. Once a group holds a member whose elements can fail (integer
//! `//`, `%`, `**`, an extremum over a possibly empty extent), any further operation outside
//! the group closes it too, so a failure is never reported after one that came later in the
//! program. Members only ever move later, past independent pure operations.

mod build;
mod group;

use std::collections::HashMap;
use std::sync::Arc;

use self::group::{Group, tensor_operands};
use super::rewrite::{for_each_use, retain};
use crate::graph::fused::OutputKind;
use crate::graph::ir::{Arg, BindSource, Graph, Node, NodeId, NodeKind, Part, ValueRef};
use crate::graph::op::Op;
use crate::graph::shape::{Dim, Meta};
use crate::sym::ExprId;

/// What a device lets the pass form.
#[derive(Clone, Debug)]
pub struct FusionPolicy {
    /// The most members in one group.
    pub max_members: usize,
    /// Whether groups hold elementwise members only: no reductions, no compaction by a mask.
    pub elementwise_only: bool,
    /// The most tensors (operands plus outputs) one kernel may bind; a group needing more
    /// stays unfused.
    pub max_tensors: usize,
}

impl Default for FusionPolicy {
    fn default() -> FusionPolicy {
        FusionPolicy {
            max_members: 64,
            elementwise_only: false,
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

fn find_groups(graph: &Graph, policy: &FusionPolicy) -> Vec<Group> {
    let mut groups = Vec::new();
    let mut open: Option<Group> = None;
    for (index, node) in graph.nodes.iter().enumerate() {
        if let Some(group) = &mut open
            && group.members.len() < policy.max_members
            && let Some(value) = group.joins(graph, node)
            && (!policy.elementwise_only || value == group::Value::Element)
        {
            group.add(index, node, value);
            continue;
        }
        let candidate = Group::start(graph, index, node).filter(|group| {
            !policy.elementwise_only
                || group
                    .values
                    .values()
                    .all(|value| *value == group::Value::Element)
        });
        if candidate.is_some()
            || open
                .as_ref()
                .is_some_and(|group| breaks(graph, group, node))
        {
            groups.extend(open.take().filter(|group| group.members.len() > 1));
        }
        if candidate.is_some() {
            open = candidate;
        }
    }
    groups.extend(open.filter(|group| group.members.len() > 1));
    groups
}

/// Whether a node that is not a member must close the group before it runs.
fn breaks(graph: &Graph, group: &Group, node: &Node) -> bool {
    let mut reads_group = false;
    visit_reads(node, &mut |value| {
        reads_group |= group.value(value).is_some();
    });
    reads_group
        || group.fallible
        || node.kind.has_effects()
        || !node.binds.is_empty()
        || matches!(node.kind, NodeKind::Item | NodeKind::Cond { .. })
        || group.needed_by(graph, node, true)
}

/// The size expressions an assert's condition and a message or printed line read.
fn effect_expressions(node: &Node) -> Vec<ExprId> {
    let (cond, parts) = match &node.kind {
        NodeKind::Assert { cond, message, .. } => (Some(*cond), &message.0[..]),
        NodeKind::DeviceAssert { message, .. } => (None, &message.0[..]),
        NodeKind::Print { line } => (None, &line.0[..]),
        NodeKind::Input { .. }
        | NodeKind::Constant { .. }
        | NodeKind::Op(_)
        | NodeKind::Item
        | NodeKind::Cond { .. } => (None, &[][..]),
    };
    let mut expressions: Vec<ExprId> = cond.into_iter().collect();
    for part in parts {
        match part {
            Part::Int(Dim::Sym(expr)) | Part::Bool(expr) => expressions.push(*expr),
            _ => {}
        }
    }
    expressions
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
        let count = kernel
            .outputs
            .iter()
            .position(|output| matches!(output.kind, OutputKind::Count(_)));
        let binds = match count {
            Some(output) => group
                .binds
                .iter()
                .map(|symbol| (*symbol, BindSource::Value { output }))
                .collect(),
            None => Vec::new(),
        };
        let last_node = &graph.nodes[last];
        let node = Node {
            outputs: kernel.output_metas(),
            kind: NodeKind::Op(Op::Fused(Arc::new(kernel))),
            args: operands.into_iter().map(Arg::Tensor).collect(),
            binds,
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

/// Per member: whether something outside the group reads its value, or nothing reads it at
/// all. Dead-code elimination keeps an unread operation only where making its result can
/// fail (over the element limit), so the kernel makes that result as the operation would.
fn escaping(graph: &Graph, members: &[usize]) -> Vec<bool> {
    let position: HashMap<usize, usize> = members
        .iter()
        .enumerate()
        .map(|(position, member)| (*member, position))
        .collect();
    let mut escapes = vec![false; members.len()];
    let mut read = vec![false; members.len()];
    for (index, node) in graph.nodes.iter().enumerate() {
        let outside = !position.contains_key(&index);
        visit_reads(node, &mut |value: ValueRef| {
            if value.output == 0
                && let Some(&member) = position.get(&value.node.index())
            {
                read[member] = true;
                escapes[member] |= outside;
            }
        });
    }
    graph.output.visit_values(&mut |value: ValueRef| {
        if let Some(&member) = position.get(&value.node.index()) {
            read[member] = true;
            escapes[member] |= value.output == 0;
        }
    });
    escapes
        .iter()
        .zip(&read)
        .map(|(escapes, read)| *escapes || !read)
        .collect()
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
