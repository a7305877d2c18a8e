//! Compiled functions: tracing a call into a graph with its guards.
//!
//! A trace runs the function's own code in the tracing domain (`eval::trace`) on fake
//! arguments and ends with the finished graph: output recorded, passes run, invariants
//! verified, and the graph logged on `TSL_LOG=graph`.

use std::rc::Rc;

use super::args::CallArgs;
use super::trace::{DynamicPolicy, TraceRequest, Tracer};
use super::value::{Function, TensorValue, Value};
use super::{Interpreter, error};
use crate::diag::{Code, Diagnostic, Result};
use crate::graph::ir::{Graph, Output};
use crate::graph::{passes, print, verify};
use crate::source::Span;

/// A finished trace: the graph, the tensors it captured, and notes of a trace without hints.
pub struct Traced {
    pub graph: Graph,
    pub constants: Vec<TensorValue>,
    pub notes: Vec<Diagnostic>,
}

impl Interpreter {
    /// A call of a `@compile` function from eager code.
    pub(super) fn call_compiled(
        &mut self,
        function: &Rc<Function>,
        args: CallArgs,
    ) -> Result<Value> {
        let call_site = args.span;
        let bound = self.bind_arguments(function, args)?;
        let values: Vec<Value> = bound.iter().map(|(value, _)| value.clone()).collect();
        let options = function.compile.unwrap_or_default();
        let request = TraceRequest {
            policy: DynamicPolicy {
                all: options.dynamic == Some(true),
                never: options.dynamic == Some(false),
                ..DynamicPolicy::default()
            },
        };
        self.trace_call(function, values, &request, call_site)?;
        // The graph is traced for its diagnostics and guards; it runs once the executor exists.
        self.run_bound(function, bound)
    }

    /// Traces `function` for concrete arguments (one per parameter, in order).
    pub(super) fn trace_call(
        &mut self,
        function: &Rc<Function>,
        arguments: Vec<Value>,
        request: &TraceRequest,
        call_site: Span,
    ) -> Result<Traced> {
        let names = parameter_names(function);
        let tracer = Tracer::new(function.name(), false);
        let (result, tracer) = self.with_tracer(tracer, |this| {
            let arguments = this.trace_arguments(&names, arguments, &request.policy);
            let value = this.call_with_values(function, arguments, call_site)?;
            this.output_of(&value, call_site)
        });
        self.finish(result?, *tracer, call_site)
    }

    /// Traces `function` from its annotations, with input sizes as symbols that have no hint
    /// (`tsl graph`, `tsl check`). Notes say what the trace had to assume; a note that stopped
    /// the trace comes back as the error.
    pub fn trace_from_annotations(
        &mut self,
        function: &Rc<Function>,
    ) -> (Result<Traced>, Vec<Diagnostic>) {
        let tracer = Tracer::new(function.name(), true);
        let span = function.def.name.span;
        let (result, mut tracer) = self.with_tracer(tracer, |this| {
            let arguments = this.arguments_from_annotations(function)?;
            let value = this.call_with_values(function, arguments, span)?;
            this.output_of(&value, span)
        });
        let notes = std::mem::take(&mut tracer.notes);
        let traced = result.and_then(|output| self.finish(output, *tracer, span));
        (traced, notes)
    }

    /// Runs `body` with `tracer` as the trace in progress, restoring the outer one after.
    fn with_tracer<T>(
        &mut self,
        mut tracer: Tracer,
        body: impl FnOnce(&mut Interpreter) -> Result<T>,
    ) -> (Result<T>, Box<Tracer>) {
        tracer.call_base = self.call_sites.len();
        let outer = self.tracer.replace(Box::new(tracer));
        let result = body(self);
        self.flush_logs();
        let tracer = std::mem::replace(&mut self.tracer, outer).expect("the trace is still there");
        (result, tracer)
    }

    /// Runs `function` on arguments already matched to its parameters (its call frame is the
    /// caller's).
    fn call_with_values(
        &mut self,
        function: &Rc<Function>,
        arguments: Vec<Value>,
        call_site: Span,
    ) -> Result<Value> {
        let bound = arguments
            .into_iter()
            .map(|value| (value, call_site))
            .collect();
        self.run_bound(function, bound)
    }

    /// Records the output, optimises, verifies and logs a finished trace.
    fn finish(&mut self, output: Output, tracer: Tracer, span: Span) -> Result<Traced> {
        let Tracer {
            mut graph,
            constants,
            notes,
            ..
        } = tracer;
        graph.output = output;
        if self.options.keep_unoptimized {
            self.unoptimized.push(graph.clone());
        }
        passes::optimize(&mut graph);
        if let Err(problem) = verify::verify(&graph) {
            return Err(error(
                Code::TypeError,
                span,
                format!(
                    "internal error: the traced graph of `{}` is invalid: {problem}",
                    graph.name
                ),
            )
            .into());
        }
        if self.options.log.graph {
            let text = print::print_graph(&graph, Some(&self.sources));
            for line in text.lines() {
                self.out.log(line);
            }
        }
        Ok(Traced {
            graph,
            constants,
            notes,
        })
    }
}

fn parameter_names(function: &Function) -> Vec<String> {
    function
        .def
        .params
        .iter()
        .map(|param| param.name.name.to_string())
        .collect()
}
