//! `cond(pred, then_fn, else_fn, args)` on a data-dependent predicate (spec §6): both branches
//! are traced as subgraphs, each in its own copy of the symbolic environment so that facts
//! learned in one branch never hold outside it. Output sizes the branches agree on (sizes of
//! the arguments, constants) are kept; the others become a fresh unbacked size that the
//! `cond` node binds when it runs.

use std::mem;

use super::Tracer;
use crate::diag::{Code, Diagnostic, Result};
use crate::eval::Interpreter;
use crate::eval::args::{CallArgs, Positional};
use crate::eval::value::{TensorValue, Value};
use crate::graph::ir::{Arg, BindSource, Graph, Node, NodeKind, Output, ValueRef};
use crate::graph::passes;
use crate::graph::shape::{Dim, Meta};
use crate::source::Span;
use crate::sym::{ExprId, Origin, POS_INF, Range};

/// One traced branch: its graph (with its own environment) and its output tensors in order.
struct Branch {
    graph: Graph,
    tensors: Vec<Meta>,
}

impl Interpreter {
    /// Records a `cond` node whose predicate is only known when the graph runs.
    pub(in crate::eval) fn trace_cond(
        &mut self,
        predicate: Arg,
        functions: [&Value; 2],
        operands: Vec<Value>,
        span: Span,
    ) -> Result<Value> {
        let known = self.env().expression_count();
        let then_branch = self.trace_branch("then", functions[0], &operands, span)?;
        let else_branch = self.trace_branch("else", functions[1], &operands, span)?;
        let shape = output_shape(&then_branch.graph.output, span)?;
        if output_shape(&else_branch.graph.output, span)? != shape {
            return Err(branch_error(
                span,
                "the branches of cond() return different structures",
            ));
        }
        let tracer = self.tracer.as_mut().expect("tracing");
        tracer
            .graph
            .env
            .skip_numbers_used_by(&then_branch.graph.env);
        tracer
            .graph
            .env
            .skip_numbers_used_by(&else_branch.graph.env);
        let mut binds = Vec::new();
        let mut outputs = Vec::new();
        for (index, (a, b)) in then_branch
            .tensors
            .iter()
            .zip(&else_branch.tensors)
            .enumerate()
        {
            outputs.push(join(tracer, a, b, known, index, span, &mut binds)?);
        }
        let mut args = vec![predicate];
        for operand in &operands {
            args.push(operand_arg(tracer, operand, span)?);
        }
        let trace = self.node_trace();
        let tracer = self.tracer.as_mut().expect("tracing");
        let id = tracer.graph.push(Node {
            kind: NodeKind::Cond {
                then_branch: Box::new(then_branch.graph),
                else_branch: Box::new(else_branch.graph),
            },
            args,
            outputs: outputs.clone(),
            binds,
            span,
            trace,
        });
        let mut tensors = outputs.into_iter().enumerate().map(|(output, meta)| {
            TensorValue::fake(
                ValueRef {
                    node: id,
                    output: output as u32,
                },
                meta,
            )
        });
        Ok(rebuild(&shape, &mut tensors))
    }

    /// Traces one branch on the operands (traced tensors become the subgraph's inputs).
    fn trace_branch(
        &mut self,
        name: &str,
        function: &Value,
        operands: &[Value],
        span: Span,
    ) -> Result<Branch> {
        let parent = self.tracer.as_mut().expect("tracing");
        let mut branch = Tracer::new(name, parent.hintless);
        branch.graph.env = parent.graph.env.clone();
        branch.constants = mem::take(&mut parent.constants);
        branch.names.clone_from(&parent.names);
        branch.call_base = self.call_sites.len();
        let parent = self.tracer.replace(Box::new(branch)).expect("tracing");
        let result = self.run_branch(function, operands, span);
        let mut branch = self.tracer.replace(parent).expect("the branch");
        // Sizes in messages are marked with the branch's own expressions: show them here.
        let mut notes = mem::take(&mut branch.notes);
        for note in &mut notes {
            branch.unmark_diagnostic(note);
        }
        let result = result.map_err(|mut error| {
            branch.unmark_diagnostic(&mut error);
            if !error.notes.iter().any(|note| note == BOTH_BRANCHES) {
                error.notes.push(BOTH_BRANCHES.to_string());
            }
            error
        });
        let tracer = self.tracer.as_mut().expect("tracing");
        tracer.constants = mem::take(&mut branch.constants);
        tracer.notes.append(&mut notes);
        tracer.globals.append(&mut branch.globals);
        let output = result?;
        let mut graph = branch.graph;
        graph.output = output;
        passes::optimize(&mut graph);
        let tensors = output_tensors(&graph, &graph.output);
        Ok(Branch { graph, tensors })
    }

    fn run_branch(&mut self, function: &Value, operands: &[Value], span: Span) -> Result<Output> {
        let mut args = CallArgs::new(span);
        for (index, operand) in operands.iter().enumerate() {
            let value = match operand {
                Value::Tensor(tensor) if tensor.is_fake() => {
                    let tracer = self.tracer.as_mut().expect("tracing");
                    let kind = NodeKind::Input {
                        path: vec![index],
                        name: format!("arg{index}"),
                    };
                    let id = tracer.push(kind, Vec::new(), vec![tensor.meta()], span, Vec::new());
                    Value::Tensor(TensorValue::fake(ValueRef::first(id), tensor.meta()))
                }
                other => other.clone(),
            };
            args.positional.push(Positional { value, span });
        }
        let value = self.call_value(function, args, span)?;
        self.output_of(&value, span)
    }
}

/// The structure of a branch's output: a tensor, or a list of such.
#[derive(Clone, Debug, PartialEq)]
enum Shape {
    Tensor,
    List(Vec<Shape>),
}

fn output_shape(output: &Output, span: Span) -> Result<Shape> {
    match output {
        Output::Tensor(_) => Ok(Shape::Tensor),
        Output::List(items) => Ok(Shape::List(
            items
                .iter()
                .map(|item| output_shape(item, span))
                .collect::<Result<_>>()?,
        )),
        _ => Err(branch_error(
            span,
            "the branches of cond() must return tensors or lists of tensors",
        )),
    }
}

fn output_tensors(graph: &Graph, output: &Output) -> Vec<Meta> {
    match output {
        Output::Tensor(value) => vec![graph.meta(*value).clone()],
        Output::List(items) => items
            .iter()
            .flat_map(|item| output_tensors(graph, item))
            .collect(),
        _ => Vec::new(),
    }
}

fn rebuild(shape: &Shape, tensors: &mut impl Iterator<Item = TensorValue>) -> Value {
    match shape {
        Shape::Tensor => Value::Tensor(tensors.next().expect("one tensor per output")),
        Shape::List(items) => {
            Value::list(items.iter().map(|item| rebuild(item, tensors)).collect())
        }
    }
}

/// The type of one output of `cond`: sizes both branches agree on and that exist outside
/// them are kept; the others are fresh sizes bound by the node.
fn join(
    tracer: &mut Tracer,
    a: &Meta,
    b: &Meta,
    known: usize,
    output: usize,
    span: Span,
    binds: &mut Vec<(crate::sym::SymbolId, BindSource)>,
) -> Result<Meta> {
    if a.dtype != b.dtype || a.ndim() != b.ndim() {
        return Err(branch_error(
            span,
            &format!(
                "the branches of cond() return tensors of different types: {}{} and {}{}",
                a.dtype,
                rank(a),
                b.dtype,
                rank(b)
            ),
        ));
    }
    let outer = |d: &Dim| match d {
        Dim::Known(_) => true,
        Dim::Sym(expr) => (expr_index(*expr)) < known,
    };
    let mut shape = Vec::new();
    for (dim, (x, y)) in a.shape.iter().zip(&b.shape).enumerate() {
        if x == y && outer(x) {
            shape.push(*x);
            continue;
        }
        let origin = Origin {
            operation: "cond()".to_string(),
            span,
        };
        let expr = tracer
            .graph
            .env
            .unbacked_symbol(origin, Range::new(0, POS_INF));
        let symbol = tracer.graph.env.as_symbol(expr).expect("a new symbol");
        tracer.graph.env.mark_size_like(symbol);
        binds.push((symbol, BindSource::Dim { output, dim }));
        shape.push(Dim::Sym(expr));
    }
    Ok(Meta::new(a.dtype, shape))
}

fn rank(meta: &Meta) -> String {
    format!("[{} dims]", meta.ndim())
}

/// Expressions are numbered in creation order, so those older than the branches exist in the
/// enclosing environment too.
fn expr_index(expr: ExprId) -> usize {
    expr.index()
}

fn operand_arg(tracer: &mut Tracer, operand: &Value, span: Span) -> Result<Arg> {
    Ok(match operand {
        Value::Tensor(tensor) => Arg::Tensor(tracer.tensor_arg(tensor, span)),
        Value::Int(value) => Arg::Int(Dim::Known(*value)),
        Value::SymInt(expr) => Arg::Int(tracer.dim(*expr)),
        Value::Float(value) => Arg::Float(*value),
        Value::Bool(value) => Arg::Bool(*value),
        other => {
            return Err(branch_error(
                span,
                &format!(
                    "cond() passes tensors and numbers to its branches, not {}",
                    other.kind()
                ),
            ));
        }
    })
}

fn branch_error(span: Span, message: &str) -> Box<Diagnostic> {
    Diagnostic::error(Code::TypeError, span, message)
        .with_note(BOTH_BRANCHES)
        .with_help(
            "both branches take the same arguments and return tensors of the same dtypes and ranks",
        )
        .into()
}

/// Why an error in a branch this call would not take stops a compiled call (eager code runs
/// only the branch it takes).
const BOTH_BRANCHES: &str =
    "compiled code traces both branches of cond(), also the one a call does not take";
