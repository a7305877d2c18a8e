//! Which nodes may join an open group, and what each member computes there.
//!
//! A group has one iteration shape. Its members compute one value per element of it, one
//! per row (a reduction over the last dim, and values computed from such), one total (a
//! reduction over everything, an output only), or one value per kept element: the elements
//! where the group's mask is true, as `x[mask]`, `masked_select` and `nonzero` compact them,
//! and what elementwise work, `squeeze` and takes along dim 0 at those positions compute
//! from them. A group keeps by one mask at most, and never also reduces rows.

use crate::graph::fused::{Fusible, fusible};
use crate::graph::ir::{Arg, BindSource, Graph, Node, NodeKind, ValueRef};
use crate::graph::shape::Dim;
use crate::sym::SymbolId;
use std::collections::HashMap;

/// The kind of value a member computes.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Value {
    /// One per element of the iteration shape.
    Element,
    /// One per row (a reduction over the last dim, or computed from such values), of these
    /// sizes.
    Row(Vec<Dim>),
    /// A reduction over every element: an output only.
    Total,
    /// One per kept element, with the member's sizes (`[count]`, or `[count, 1]` for the
    /// positions `nonzero` gives). `position`: the values are the positions of the kept
    /// elements, so a take at them along dim 0 keeps the elements of its input.
    Kept { shape: Vec<Dim>, position: bool },
    /// A reduction over every kept element: an output only.
    KeptTotal,
}

/// What a group's reductions over everything reduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Totals {
    None,
    Elements,
    Kept,
}

pub(super) struct Group {
    pub members: Vec<usize>,
    pub values: HashMap<usize, Value>,
    pub shape: Vec<Dim>,
    pub rows: bool,
    /// What the group's reductions over everything reduce: they fold in blocks of elements,
    /// or of kept elements, never both.
    pub totals: Totals,
    pub fallible: bool,
    /// The mask the group keeps elements by.
    pub mask: Option<ValueRef>,
    /// The symbols its members bind (the counts of kept elements), which the fused node
    /// binds in their place.
    pub binds: Vec<SymbolId>,
}

impl Group {
    /// A new group holding only `node`, if it can be a member.
    pub fn start(graph: &Graph, index: usize, node: &Node) -> Option<Group> {
        let op = member_op(node)?;
        let operand = |position: usize| tensor_operands(node).nth(position);
        let out = &node.outputs[0].shape;
        let (shape, value) = match op {
            Fusible::Reduce { dims, .. } => {
                let shape = graph.meta(operand(0)?).shape.clone();
                let value = reduction_value(dims, &shape, out)?;
                (shape, value)
            }
            Fusible::Keep => {
                let shape = graph.meta(operand(1)?).shape.clone();
                (graph.meta(operand(0)?).shape == shape).then_some(())?;
                (shape, kept(out, false))
            }
            Fusible::Nonzero => {
                let shape = graph.meta(operand(0)?).shape.clone();
                (shape.len() == 1).then_some(())?;
                (shape, kept(out, true))
            }
            Fusible::Take | Fusible::Squeeze => return None,
            Fusible::Binary(_)
            | Fusible::Unary(_)
            | Fusible::Cast(_)
            | Fusible::Where
            | Fusible::Clamp { .. } => (out.clone(), Value::Element),
        };
        let mut group = Group {
            members: Vec::new(),
            values: HashMap::new(),
            shape,
            rows: false,
            totals: Totals::None,
            fallible: false,
            mask: None,
            binds: Vec::new(),
        };
        group.add(index, node, value);
        Some(group)
    }

    /// How `node` would join the group, if it can.
    pub fn joins(&self, graph: &Graph, node: &Node) -> Option<Value> {
        let op = member_op(node)?;
        if self.needed_by(graph, node, false) {
            return None;
        }
        let operands: Vec<ValueRef> = tensor_operands(node).collect();
        let values: Vec<Option<&Value>> = operands.iter().map(|v| self.value(*v)).collect();
        let out = &node.outputs[0].shape;
        match op {
            Fusible::Reduce { dims, .. } => self.reduction(graph, dims, operands[0], out),
            Fusible::Keep => {
                let fits =
                    self.per_element(graph, operands[0]) && self.keeps_by(graph, operands[1]);
                fits.then(|| kept(out, false))
            }
            Fusible::Nonzero => {
                let fits = self.shape.len() == 1 && self.keeps_by(graph, operands[0]);
                fits.then(|| kept(out, true))
            }
            Fusible::Take => {
                let positions = matches!(values.get(1), Some(Some(Value::Kept { shape, position: true })) if shape == out && out.len() == 1);
                let fits =
                    positions && self.shape.len() == 1 && self.per_element(graph, operands[0]);
                fits.then(|| kept(out, false))
            }
            Fusible::Squeeze => match values.first() {
                Some(Some(Value::Kept { shape, position })) if out.first() == shape.first() => {
                    Some(kept(out, *position))
                }
                _ => None,
            },
            Fusible::Binary(_)
            | Fusible::Unary(_)
            | Fusible::Cast(_)
            | Fusible::Where
            | Fusible::Clamp { .. } => self.elementwise(graph, &operands, &values, out),
        }
    }

    /// A reduction of `input` over `dims`: a total or a per-row value of the group's values,
    /// or a total of its kept values.
    fn reduction(
        &self,
        graph: &Graph,
        dims: Option<&[usize]>,
        input: ValueRef,
        out: &[Dim],
    ) -> Option<Value> {
        if let Some(Value::Kept { shape, .. }) = self.value(input) {
            let everything = dims.is_none_or(|dims| dims == [0] && shape.len() == 1);
            let allowed = self.totals != Totals::Elements;
            return (everything && allowed).then_some(Value::KeptTotal);
        }
        if !self.per_element(graph, input) {
            return None;
        }
        let value = reduction_value(dims, &self.shape, out)?;
        let allowed = match value {
            Value::Total => !self.rows && self.totals != Totals::Kept,
            Value::Row(_) => self.totals == Totals::None && self.mask.is_none(),
            Value::Element | Value::Kept { .. } | Value::KeptTotal => false,
        };
        allowed.then_some(value)
    }

    /// An elementwise op: per element of the iteration shape (reading per-row values along
    /// their rows), per row, or per kept element.
    fn elementwise(
        &self,
        graph: &Graph,
        operands: &[ValueRef],
        values: &[Option<&Value>],
        out: &[Dim],
    ) -> Option<Value> {
        if values
            .iter()
            .flatten()
            .any(|v| matches!(v, Value::Kept { .. }))
        {
            let members_fit = values
                .iter()
                .flatten()
                .all(|v| matches!(v, Value::Kept { shape, .. } if shape == out));
            let others_fit = operands
                .iter()
                .zip(values)
                .filter(|(_, value)| value.is_none())
                .all(|(operand, _)| graph.meta(*operand).shape.iter().all(|d| *d == Dim::ONE));
            return (members_fit && others_fit).then(|| kept(out, false));
        }
        if *out == self.shape {
            let usable = values.iter().flatten().all(|value| match value {
                Value::Element => true,
                Value::Row(shape) => broadcasts_per_row(shape, &self.shape),
                Value::Total | Value::Kept { .. } | Value::KeptTotal => false,
            });
            return usable.then_some(Value::Element);
        }
        // A per-row value is computed from per-row values: an op of sizes and constants
        // alone (`n - 0.5`, a 0-d value) is none, whatever the group.
        let all_rows = !values.is_empty()
            && values
                .iter()
                .all(|value| matches!(value, Some(Value::Row(shape)) if shape == out));
        (self.rows && all_rows).then(|| Value::Row(out.to_vec()))
    }

    /// Whether `value` holds one value per element of the iteration shape: a per-element
    /// member, or an operand of that shape.
    fn per_element(&self, graph: &Graph, value: ValueRef) -> bool {
        match self.value(value) {
            Some(member) => *member == Value::Element,
            None => graph.meta(value).shape == self.shape,
        }
    }

    /// Whether the group can keep elements by `mask`: it is per element, and the group
    /// keeps by no other mask and reduces no rows.
    fn keeps_by(&self, graph: &Graph, mask: ValueRef) -> bool {
        !self.rows && self.mask.is_none_or(|known| known == mask) && self.per_element(graph, mask)
    }

    pub fn value(&self, value: ValueRef) -> Option<&Value> {
        (value.output == 0)
            .then(|| self.values.get(&value.node.index()))
            .flatten()
    }

    pub fn add(&mut self, index: usize, node: &Node, value: Value) {
        let op = member_op(node);
        match &value {
            Value::Row(_) => self.rows |= matches!(op, Some(Fusible::Reduce { .. })),
            Value::Total => self.totals = Totals::Elements,
            Value::KeptTotal => self.totals = Totals::Kept,
            Value::Element | Value::Kept { .. } => {}
        }
        match op {
            Some(Fusible::Keep) => self.mask = tensor_operands(node).nth(1),
            Some(Fusible::Nonzero) => self.mask = tensor_operands(node).next(),
            _ => {}
        }
        self.binds
            .extend(node.binds.iter().map(|(symbol, _)| *symbol));
        // A take at kept positions reads the elements it keeps, which are always in range.
        self.fallible |= node.can_fail_on_data() && op != Some(Fusible::Take);
        self.members.push(index);
        self.values.insert(index, value);
    }

    /// Whether `node` needs a symbol the group binds before it runs: in its sizes or
    /// arguments, and, when it would run outside the group (`outside`), in the sizes of its
    /// outputs, its condition or its message. The fused node binds them at the group's end.
    pub fn needed_by(&self, graph: &Graph, node: &Node, outside: bool) -> bool {
        if self.binds.is_empty() {
            return false;
        }
        let env = &graph.env;
        let mut dims: Vec<Dim> = node
            .args
            .iter()
            .filter_map(|arg| match arg {
                Arg::Int(dim) => Some(*dim),
                _ => None,
            })
            .collect();
        if let NodeKind::Op(op) = &node.kind {
            dims.extend(op.dims());
        }
        if outside {
            dims.extend(
                node.outputs
                    .iter()
                    .flat_map(|meta| meta.shape.iter().copied()),
            );
            dims.extend(super::effect_expressions(node).into_iter().map(Dim::Sym));
        }
        dims.iter().any(|dim| match dim {
            Dim::Sym(expr) => env
                .free_symbols(*expr)
                .iter()
                .any(|symbol| self.binds.contains(symbol)),
            Dim::Known(_) => false,
        })
    }
}

fn kept(shape: &[Dim], position: bool) -> Value {
    Value::Kept {
        shape: shape.to_vec(),
        position,
    }
}

/// What a node that could be a member computes: a fusible op with one output. Only the
/// ops that keep elements may bind symbols (their counts, at the first size).
fn member_op(node: &Node) -> Option<Fusible<'_>> {
    let NodeKind::Op(op) = &node.kind else {
        return None;
    };
    let fusible = fusible(op)?;
    let binds_count = node
        .binds
        .iter()
        .all(|(_, source)| *source == BindSource::Dim { output: 0, dim: 0 });
    let binds_allowed = node.binds.is_empty()
        || (matches!(fusible, Fusible::Keep | Fusible::Nonzero) && binds_count);
    (node.outputs.len() == 1 && binds_allowed).then_some(fusible)
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

pub(super) fn tensor_operands(node: &Node) -> impl Iterator<Item = ValueRef> + '_ {
    node.args.iter().filter_map(|arg| match arg {
        Arg::Tensor(value) => Some(*value),
        _ => None,
    })
}
