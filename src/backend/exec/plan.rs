//! A graph prepared for repeated runs: where each value lives, when each value is used for
//! the last time, the plans of `cond` branches, and each node's site (its place in program
//! order). Built once per compiled graph, so a run does no analysis of its own.

use super::Site;
use crate::graph::ir::{Arg, ArgumentPath, Graph, Node, NodeKind, Part, ValueRef};

/// A graph with its run-time layout.
#[derive(Debug)]
pub struct Plan {
    pub(super) graph: Graph,
    pub(super) steps: Vec<Step>,
    pub(super) slot_count: usize,
    /// The paths of the input nodes, in node order: the tensors a run takes, in this order.
    inputs: Vec<ArgumentPath>,
    /// One more than the highest symbol index of the graph and its branches.
    symbol_count: usize,
    /// One past the last site of the graph and its branches.
    site_end: u32,
}

/// How one node runs.
#[derive(Debug)]
pub(super) struct Step {
    /// The slot of the node's first output; the others follow.
    pub slot: usize,
    /// For an input node, its position among the inputs.
    pub input: usize,
    /// Per argument: this is the value's last use, so the run moves it out of its slot (an
    /// elementwise kernel can then write into its buffer).
    pub take: Vec<bool>,
    /// Slots emptied after the node ran: values read for the last time without being moved,
    /// and outputs nothing uses.
    pub release: Vec<usize>,
    /// Whether the op has sizes to resolve before it runs.
    pub symbolic: bool,
    /// The plans of a `cond` node's branches.
    pub branches: Option<Box<[Plan; 2]>>,
    /// The node's place in program order: sites number the nodes of a graph and of its
    /// branches in one pre-order walk, so an earlier site is an earlier operation of the
    /// program even across branches. A device that defers failures reports the earliest.
    pub site: Site,
}

impl Plan {
    pub fn new(graph: Graph) -> Plan {
        Plan::starting_at(graph, 0)
    }

    /// The plan of `graph`, its first node at site `first_site`.
    fn starting_at(graph: Graph, first_site: u32) -> Plan {
        let mut next_site = first_site;
        let mut first_slot = Vec::with_capacity(graph.nodes.len());
        let mut slot_count = 0;
        for node in &graph.nodes {
            first_slot.push(slot_count);
            slot_count += node.outputs.len();
        }
        let slot_of = |value: ValueRef| first_slot[value.node.index()] + value.output as usize;
        let last_use = last_uses(&graph, slot_count, &slot_of);
        let mut released: Vec<Vec<usize>> = vec![Vec::new(); graph.nodes.len()];
        for (slot, last) in last_use.iter().enumerate() {
            if let Some(&node) = last.as_ref()
                && node < graph.nodes.len()
            {
                released[node].push(slot);
            }
        }
        let mut inputs = Vec::new();
        let mut steps = Vec::with_capacity(graph.nodes.len());
        for (index, node) in graph.nodes.iter().enumerate() {
            let mut take = vec![false; node.args.len()];
            let mut release = std::mem::take(&mut released[index]);
            for (position, arg) in node.args.iter().enumerate() {
                let Arg::Tensor(value) = arg else { continue };
                let slot = slot_of(*value);
                let used_again_here = node.args[position + 1..]
                    .iter()
                    .any(|later| matches!(later, Arg::Tensor(v) if slot_of(*v) == slot));
                take[position] = last_use[slot] == Some(index) && !used_again_here;
            }
            let first = first_slot[index];
            release.extend((first..first + node.outputs.len()).filter(|s| last_use[*s].is_none()));
            let input = inputs.len();
            let site = Site(next_site);
            next_site += 1;
            let (symbolic, branches) = match &node.kind {
                NodeKind::Input { path, .. } => {
                    inputs.push(path.clone());
                    (false, None)
                }
                NodeKind::Op(op) => (op.dims().iter().any(|d| d.known().is_none()), None),
                NodeKind::Cond {
                    then_branch,
                    else_branch,
                } => {
                    let then_plan = Plan::starting_at((**then_branch).clone(), next_site);
                    let else_plan = Plan::starting_at((**else_branch).clone(), then_plan.site_end);
                    next_site = else_plan.site_end;
                    (false, Some(Box::new([then_plan, else_plan])))
                }
                NodeKind::Constant { .. }
                | NodeKind::Item
                | NodeKind::Assert { .. }
                | NodeKind::DeviceAssert { .. }
                | NodeKind::Print { .. } => (false, None),
            };
            steps.push(Step {
                slot: first,
                input,
                take,
                release,
                symbolic,
                branches,
                site,
            });
        }
        let symbol_count = steps
            .iter()
            .filter_map(|step| step.branches.as_ref())
            .flat_map(|plans| plans.iter().map(Plan::symbol_count))
            .fold(graph.env.symbols().len(), usize::max);
        Plan {
            graph,
            steps,
            slot_count,
            inputs,
            symbol_count,
            site_end: next_site,
        }
    }

    /// The node at `site` with the plan it belongs to (this one or a branch's).
    pub fn node_at(&self, site: Site) -> Option<(&Plan, &Node)> {
        let index = self.steps.partition_point(|step| step.site <= site);
        let step = self.steps.get(index.checked_sub(1)?)?;
        if step.site == site {
            return Some((self, self.graph.nodes.get(index - 1)?));
        }
        let branches = step.branches.as_ref()?;
        branches.iter().find_map(|branch| branch.node_at(site))
    }

    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Where each tensor a run takes comes from, in order.
    pub fn inputs(&self) -> &[ArgumentPath] {
        &self.inputs
    }

    /// How many symbol values a run needs room for (indexed by symbol number).
    pub fn symbol_count(&self) -> usize {
        self.symbol_count
    }

    pub(super) fn slot(&self, value: ValueRef) -> usize {
        self.steps[value.node.index()].slot + value.output as usize
    }
}

/// For every slot, the index of the last node that reads it (`None`: nothing reads it). The
/// graph's output counts as a read after every node.
fn last_uses(
    graph: &Graph,
    slot_count: usize,
    slot_of: &impl Fn(ValueRef) -> usize,
) -> Vec<Option<usize>> {
    let mut last = vec![None; slot_count];
    for (index, node) in graph.nodes.iter().enumerate() {
        for arg in &node.args {
            if let Arg::Tensor(value) = arg {
                last[slot_of(*value)] = Some(index);
            }
        }
        let parts = match &node.kind {
            NodeKind::Assert { message, .. } | NodeKind::DeviceAssert { message, .. } => {
                &message.0[..]
            }
            NodeKind::Print { line } => &line.0[..],
            NodeKind::Input { .. }
            | NodeKind::Constant { .. }
            | NodeKind::Op(_)
            | NodeKind::Item
            | NodeKind::Cond { .. } => &[],
        };
        for part in parts {
            if let Part::Scalar(value) | Part::Tensor(value) = part {
                last[slot_of(*value)] = Some(index);
            }
        }
    }
    let end = graph.nodes.len();
    graph
        .output
        .visit_values(&mut |value| last[slot_of(value)] = Some(end));
    last
}
