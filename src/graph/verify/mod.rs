//! The graph verifier. A graph is valid when:
//!
//! 1. every argument is an output of an earlier node, with an output index in range;
//! 2. every symbol a node needs (in its op's sizes, its arguments, an assert's condition, a
//!    printed part) is bound earlier: backed symbols by the graph's inputs
//!    (`Graph::backed`), unbacked ones by the `binds` of an earlier node;
//! 3. every unbacked symbol is bound by one node only, at an output size that is exactly
//!    that symbol (or the element of an `item`);
//! 4. input and constant nodes have no arguments; an `item` has one one-element tensor
//!    argument; a device assert has one `bool` tensor argument; an assert's condition is
//!    boolean;
//! 5. an op node has the form its shape rule expects (operand count, dims within the
//!    operands' ranks: `form`), and its outputs have the dtypes and ranks that rule gives for
//!    its arguments;
//! 6. the output refers to existing values and bound symbols;
//! 7. the branches of a `cond` are valid graphs (with the parent's symbols bound) whose
//!    outputs have the node's dtypes and ranks.

mod form;

use std::collections::HashSet;

use super::ir::{Arg, BindSource, Graph, Node, NodeKind, Output, Part, ValueRef};
use super::shape::{self, Cmp, Dim, Meta, RuleResult, Sizes};
use crate::dtype::DType;
use crate::sym::{ExprId, ShapeEnv, SymbolId};

/// Checks every invariant; the first violation is described.
pub fn verify(graph: &Graph) -> Result<(), String> {
    let bound: HashSet<SymbolId> = graph.backed.iter().map(|(symbol, _)| *symbol).collect();
    verify_with(graph, bound)
}

fn verify_with(graph: &Graph, mut bound: HashSet<SymbolId>) -> Result<(), String> {
    let env = &graph.env;
    for (index, node) in graph.nodes.iter().enumerate() {
        let at = |problem: String| format!("%{index}: {problem}");
        for arg in &node.args {
            check_arg(graph, index, arg, &bound).map_err(at)?;
        }
        for needed in node_expressions(node) {
            check_bound(env, needed, &bound).map_err(at)?;
        }
        check_kind(graph, node, &bound).map_err(at)?;
        for (symbol, source) in &node.binds {
            check_bind(env, node, *symbol, *source).map_err(at)?;
            if !bound.insert(*symbol) {
                return Err(at(format!(
                    "binds {} a second time",
                    env.display(env.symbol_expr(*symbol))
                )));
            }
        }
        for meta in &node.outputs {
            for d in &meta.shape {
                if let Dim::Sym(expr) = d {
                    check_bound(env, *expr, &bound).map_err(at)?;
                }
            }
        }
    }
    check_output(graph, &graph.output, &bound)
}

fn check_arg(
    graph: &Graph,
    index: usize,
    arg: &Arg,
    bound: &HashSet<SymbolId>,
) -> Result<(), String> {
    match arg {
        Arg::Tensor(value) => check_value(graph, *value, index),
        Arg::Int(Dim::Sym(expr)) => check_bound(&graph.env, *expr, bound),
        _ => Ok(()),
    }
}

fn check_value(graph: &Graph, value: ValueRef, before: usize) -> Result<(), String> {
    if value.node.index() >= before {
        return Err(format!("uses {} before it is defined", value.node));
    }
    let outputs = graph.node(value.node).outputs.len();
    if value.output as usize >= outputs {
        return Err(format!(
            "uses output {} of {}, which has {outputs}",
            value.output, value.node
        ));
    }
    Ok(())
}

fn check_bound(env: &ShapeEnv, expr: ExprId, bound: &HashSet<SymbolId>) -> Result<(), String> {
    match env
        .free_symbols(expr)
        .into_iter()
        .find(|symbol| !bound.contains(symbol))
    {
        Some(symbol) => Err(format!(
            "needs {} before anything binds it",
            env.display(env.symbol_expr(symbol))
        )),
        None => Ok(()),
    }
}

/// The expressions a node needs bound before it runs.
fn node_expressions(node: &Node) -> Vec<ExprId> {
    let mut needed: Vec<ExprId> = Vec::new();
    let mut dim = |d: Dim| {
        if let Dim::Sym(expr) = d {
            needed.push(expr);
        }
    };
    match &node.kind {
        NodeKind::Op(op) => op.dims().into_iter().for_each(&mut dim),
        NodeKind::Assert { cond, message, .. } => {
            dim(Dim::Sym(*cond));
            template_expressions(&message.0, &mut dim);
        }
        NodeKind::DeviceAssert { message, .. } => template_expressions(&message.0, &mut dim),
        NodeKind::Print { line } => template_expressions(&line.0, &mut dim),
        NodeKind::Input { .. }
        | NodeKind::Constant { .. }
        | NodeKind::Item
        | NodeKind::Cond { .. } => {}
    }
    needed
}

fn template_expressions(parts: &[Part], dim: &mut impl FnMut(Dim)) {
    for part in parts {
        match part {
            Part::Int(d) => dim(*d),
            Part::Bool(expr) => dim(Dim::Sym(*expr)),
            _ => {}
        }
    }
}

fn check_kind(graph: &Graph, node: &Node, bound: &HashSet<SymbolId>) -> Result<(), String> {
    let arg_meta = |arg: &Arg| match arg {
        Arg::Tensor(value) => graph.meta(*value).clone(),
        Arg::Int(_) => Meta::scalar(DType::I64),
        Arg::Float(_) => Meta::scalar(DType::F32),
        Arg::Bool(_) => Meta::scalar(DType::Bool),
    };
    match &node.kind {
        NodeKind::Input { .. } | NodeKind::Constant { .. } if !node.args.is_empty() => {
            Err("an input or constant takes no arguments".to_string())
        }
        NodeKind::Item if !matches!(node.args.as_slice(), [Arg::Tensor(_)]) => {
            Err("item() takes one tensor".to_string())
        }
        NodeKind::DeviceAssert { located, .. } => {
            let subjects = match located {
                None => 0,
                Some(located) if located.op.is_some() => 2,
                Some(_) => 1,
            };
            match node.args.as_slice() {
                [Arg::Tensor(value), rest @ ..]
                    if graph.meta(*value).dtype == DType::Bool && rest.len() == subjects =>
                {
                    Ok(())
                }
                _ => Err(
                    "a device assert takes one bool tensor (and what locates a failure)"
                        .to_string(),
                ),
            }
        }
        NodeKind::Assert { cond, .. } if !graph.env.is_bool(*cond) => {
            Err("an assert's condition is not boolean".to_string())
        }
        NodeKind::Op(super::op::Op::Squeeze { dims }) => {
            let input = node.args.first().map(arg_meta);
            let expected = input.map(|meta| {
                let rank = meta.ndim().saturating_sub(dims.len());
                Meta::new(meta.dtype, vec![Dim::ONE; rank])
            });
            same_types(&expected.into_iter().collect::<Vec<_>>(), &node.outputs)
        }
        NodeKind::Op(op) => {
            let metas: Vec<Meta> = node.args.iter().map(arg_meta).collect();
            form::check_form(op, &metas).map_err(|problem| format!("{}: {problem}", op.name()))?;
            let mut op = op.clone();
            let expected = shape::infer(&mut op, &metas, &mut Lenient).map_err(|rule| {
                format!(
                    "{} does not apply to its arguments: {}",
                    op.name(),
                    rule.message
                )
            })?;
            same_types(&expected, &node.outputs)
        }
        NodeKind::Cond {
            then_branch,
            else_branch,
        } => {
            for branch in [then_branch, else_branch] {
                verify_with(branch, bound.clone())?;
                let types = output_types(branch, &branch.output);
                same_types(&types, &node.outputs)?;
            }
            Ok(())
        }
        NodeKind::Input { .. }
        | NodeKind::Constant { .. }
        | NodeKind::Item
        | NodeKind::Assert { .. }
        | NodeKind::Print { .. } => Ok(()),
    }
}

/// Outputs agree when dtypes and ranks do (sizes are symbolic and checked by the rule itself).
fn same_types(expected: &[Meta], actual: &[Meta]) -> Result<(), String> {
    let agree = expected.len() == actual.len()
        && expected
            .iter()
            .zip(actual)
            .all(|(a, b)| a.dtype == b.dtype && a.ndim() == b.ndim());
    if agree {
        Ok(())
    } else {
        Err(format!(
            "outputs {actual:?} do not match the rule's {expected:?}"
        ))
    }
}

fn output_types(graph: &Graph, output: &Output) -> Vec<Meta> {
    match output {
        Output::Tensor(value) => vec![graph.meta(*value).clone()],
        Output::List(items) => items
            .iter()
            .flat_map(|item| output_types(graph, item))
            .collect(),
        _ => Vec::new(),
    }
}

fn check_bind(
    env: &ShapeEnv,
    node: &Node,
    symbol: SymbolId,
    source: BindSource,
) -> Result<(), String> {
    let name = || env.display(env.symbol_expr(symbol));
    match source {
        BindSource::Element if matches!(node.kind, NodeKind::Item) => Ok(()),
        BindSource::Element => Err(format!("only item() binds {} from an element", name())),
        BindSource::Value { output } => match node.outputs.get(output) {
            Some(meta) if meta.dtype == DType::I64 && meta.shape.is_empty() => Ok(()),
            _ => Err(format!(
                "binds {} from an output that is not a 0-d i64",
                name()
            )),
        },
        BindSource::Dim { output, dim } => {
            let size = node
                .outputs
                .get(output)
                .and_then(|meta| meta.shape.get(dim));
            match size {
                Some(Dim::Sym(expr)) if env.as_symbol(*expr) == Some(symbol) => Ok(()),
                _ => Err(format!(
                    "binds {} at a size that is not that symbol",
                    name()
                )),
            }
        }
    }
}

fn check_output(graph: &Graph, output: &Output, bound: &HashSet<SymbolId>) -> Result<(), String> {
    let end = graph.nodes.len();
    match output {
        Output::Tensor(value) | Output::Scalar(value) => check_value(graph, *value, end),
        Output::Int(Dim::Sym(expr)) | Output::SymBool(expr) => {
            check_bound(&graph.env, *expr, bound)
        }
        Output::Template(template) => {
            for part in &template.0 {
                match part {
                    Part::Scalar(value) | Part::Tensor(value) => check_value(graph, *value, end)?,
                    Part::Int(Dim::Sym(expr)) | Part::Bool(expr) => {
                        check_bound(&graph.env, *expr, bound)?;
                    }
                    _ => {}
                }
            }
            Ok(())
        }
        Output::List(items) => items
            .iter()
            .try_for_each(|item| check_output(graph, item, bound)),
        _ => Ok(()),
    }
}

/// Sizes that answer nothing and accept everything, to recompute dtypes and ranks.
struct Lenient;

impl Sizes for Lenient {
    fn add(&mut self, a: Dim, _: Dim) -> RuleResult<Dim> {
        Ok(a)
    }
    fn sub(&mut self, a: Dim, _: Dim) -> RuleResult<Dim> {
        Ok(a)
    }
    fn mul(&mut self, a: Dim, _: Dim) -> RuleResult<Dim> {
        Ok(a)
    }
    fn floor_div(&mut self, a: Dim, _: Dim) -> RuleResult<Dim> {
        Ok(a)
    }
    fn modulo(&mut self, a: Dim, _: Dim) -> RuleResult<Dim> {
        Ok(a)
    }
    fn max(&mut self, a: Dim, _: Dim) -> Dim {
        a
    }
    fn min(&mut self, a: Dim, _: Dim) -> Dim {
        a
    }
    fn decide(&mut self, _: Dim, _: Cmp, _: Dim) -> Option<bool> {
        None
    }
    fn require(&mut self, _: Dim, _: Cmp, _: Dim, _: &dyn Fn() -> String) -> RuleResult<()> {
        Ok(())
    }
    fn size_argument(&mut self, _: Dim, _: &str) -> RuleResult<()> {
        Ok(())
    }
    fn concrete(&mut self, d: Dim, _: &str) -> RuleResult<i64> {
        Ok(d.known().unwrap_or(2))
    }
    fn fresh(&mut self, _: &str, _: Option<Dim>) -> Dim {
        Dim::Known(0)
    }
    fn show(&self, d: Dim) -> String {
        d.known()
            .map_or_else(|| "?".to_string(), |value| value.to_string())
    }
}
