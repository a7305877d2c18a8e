//! Compiled functions: tracing a call into a graph with its guards, caching it, and running
//! it.
//!
//! A trace runs the function's own code in the tracing domain (`eval::trace`) on fake
//! arguments and ends with the finished graph: output recorded, passes run, invariants
//! verified, and the graph logged on `TSL_LOG=graph`. The graph then joins the function's
//! cache (`cache`) and runs on the CPU through the shared executor (`backend::exec`); later
//! calls whose inputs satisfy its guards run it without tracing.

pub mod cache;
mod miss;

use std::rc::Rc;

use self::cache::{Bindings, Cause, Entry, GlobalRead, Miss, RECOMPILE_LIMIT};
use super::Interpreter;
use super::args::CallArgs;
use super::trace::{TraceRequest, Tracer};
use super::value::{Function, TensorValue, Value};
use crate::backend;
use crate::backend::exec::Device as _;
use crate::backend::exec::{self, Plan, RunValue};
use crate::diag::{Code, Diagnostic, Result};
use crate::graph::ir::{Graph, Output};
use crate::graph::{passes, print, verify};
use crate::source::Span;

/// A finished trace: the graph, the tensors it captured, the globals it read, and notes of a
/// trace without hints.
pub struct Traced {
    pub graph: Graph,
    pub constants: Vec<TensorValue>,
    pub globals: Vec<GlobalRead>,
    pub notes: Vec<Diagnostic>,
}

impl Interpreter {
    /// A call of a `@compile` function from eager code: the first cached graph whose guards
    /// hold runs; otherwise the function is traced again (or, past the recompile limit, runs
    /// eagerly).
    pub(super) fn call_compiled(
        &mut self,
        function: &Rc<Function>,
        args: CallArgs,
    ) -> Result<Value> {
        let call_site = args.span;
        let bound = self.bind_arguments(function, args)?;
        let arguments: Vec<Value> = bound.iter().map(|(value, _)| value.clone()).collect();
        let hit = function
            .cache
            .borrow()
            .entries
            .iter()
            .find_map(|entry| Some((entry.clone(), entry.matches(&arguments)?)));
        if let Some((entry, bindings)) = hit {
            return self.run_entry(&entry, &arguments, bindings, call_site);
        }
        let (traces, reason) = {
            let cache = function.cache.borrow();
            let reason = cache
                .entries
                .last()
                .and_then(|entry| entry.miss(&arguments));
            (cache.traces, reason)
        };
        if traces >= RECOMPILE_LIMIT {
            self.give_up(function, reason, call_site);
            return self.run_bound(function, bound);
        }
        if self.options.log.recompiles
            && let Some(reason) = reason
        {
            let line = format!("recompile {}: {reason}", function.qualified_name());
            self.out.log(&line);
        }
        if let Err(refused) = super::trace::check_argument_lists(function, &bound) {
            self.check_arguments(function, &bound)?;
            return Err(refused);
        }
        let mut policy = function.cache.borrow_mut().observe(&arguments);
        let options = function.compile.unwrap_or_default();
        policy.all = options.dynamic == Some(true);
        policy.never = options.dynamic == Some(false);
        let spans: Vec<Span> = bound.iter().map(|(_, span)| *span).collect();
        let traced = self.trace_call(
            function,
            arguments.clone(),
            &spans,
            &TraceRequest { policy },
            call_site,
        )?;
        let constants = traced
            .constants
            .into_iter()
            .filter(|tensor| !tensor.is_fake())
            .collect();
        let entry = Rc::new(Entry::new(
            Plan::new(traced.graph),
            constants,
            &arguments,
            traced.globals,
            parameter_names(function).into(),
        ));
        let Some(bindings) = entry.matches(&arguments) else {
            let reason = entry
                .miss(&arguments)
                .map(|miss| miss.reason)
                .unwrap_or_default();
            return Err(internal(
                call_site,
                &format!(
                    "the new trace of `{}` does not accept its own inputs: {reason}",
                    function.qualified_name()
                ),
            ));
        };
        {
            let mut cache = function.cache.borrow_mut();
            cache.traces += 1;
            cache.entries.push(entry.clone());
        }
        self.run_entry(&entry, &arguments, bindings, call_site)
    }

    /// Past the recompile limit: a warning the first time, then eager runs.
    fn give_up(&mut self, function: &Rc<Function>, reason: Option<Miss>, call_site: Span) {
        if std::mem::replace(&mut function.cache.borrow_mut().exhausted, true) {
            return;
        }
        let name = function.qualified_name();
        let dynamic = function.compile.unwrap_or_default().dynamic;
        let help = reason.as_ref().map_or_else(
            || Miss::new("", Cause::Specialised).help(dynamic),
            |reason| reason.help(dynamic),
        );
        let mut warning = Diagnostic::warning(
            Code::RecompileLimit,
            call_site,
            format!(
                "`{name}` was compiled {RECOMPILE_LIMIT} times; calls that fit none of its graphs now run eagerly"
            ),
        )
        .with_label("this call needed another compilation")
        .with_help(help);
        if let Some(reason) = reason {
            warning = warning.with_note(format!("the last graph did not fit because {reason}"));
        }
        self.report(&warning);
    }

    /// Runs a cached graph on the call's arguments.
    fn run_entry(
        &mut self,
        entry: &Entry,
        arguments: &[Value],
        bindings: Bindings,
        call_site: Span,
    ) -> Result<Value> {
        let tensors = cache::input_tensors(&entry.plan, arguments)
            .ok_or_else(|| internal(call_site, "an input of the compiled graph is missing"))?;
        let plan = self.prepared_plan(entry, call_site)?;
        let result = self.execute(&plan, &entry.constants, tensors, bindings.symbols)?;
        Ok(value_of(result))
    }

    /// The entry's graph as it runs on the session's device, prepared on its first run there.
    fn prepared_plan(&mut self, entry: &Entry, call_site: Span) -> Result<Rc<Plan>> {
        let device = self.devices.target.name();
        if let Some(plan) = entry.prepared(device) {
            return Ok(plan);
        }
        let graph = self.prepare(entry.plan.graph().clone(), call_site)?;
        let plan = Rc::new(Plan::new(graph));
        entry.keep_prepared(device, plan.clone());
        Ok(plan)
    }

    /// Traces `function` for concrete arguments (one per parameter, in order).
    pub(super) fn trace_call(
        &mut self,
        function: &Rc<Function>,
        arguments: Vec<Value>,
        spans: &[Span],
        request: &TraceRequest,
        call_site: Span,
    ) -> Result<Traced> {
        let names = parameter_names(function);
        let tracer = Tracer::new(function.name(), false);
        let concrete = arguments.clone();
        let (result, tracer) = self.with_tracer(tracer, |this| {
            let arguments = this.trace_arguments(&names, arguments, &request.policy);
            let value = this.call_with_values(function, arguments, spans)?;
            this.output_of(&value, call_site)
        });
        match result {
            Ok(output) => self.finish(output, *tracer, call_site),
            Err(mut error) => {
                let mut tracer = tracer;
                tracer.record_refuted(&error);
                tracer.unmark_diagnostic(&mut error);
                Err(self.run_partial(*tracer, &concrete).unwrap_or(error))
            }
        }
    }

    /// After a trace stopped with an error, runs what was traced before it, so that the
    /// prints and checks that precede the error happen as they would eagerly (a check that
    /// fails there is the error eager code would report first). `None` when it all ran.
    fn run_partial(&mut self, tracer: Tracer, arguments: &[Value]) -> Option<Box<Diagnostic>> {
        let Tracer {
            mut graph,
            constants,
            ..
        } = tracer;
        // Operations that can fail on data, or make a result over the element limit, fail
        // first in eager code too.
        let observable = graph.has_effects()
            || graph
                .nodes
                .iter()
                .any(crate::graph::ir::Node::can_fail_on_data)
            || !crate::graph::passes::all_within_limit(&mut graph);
        if !observable || verify::verify(&graph).is_err() {
            return None;
        }
        let plan = Plan::new(graph);
        let symbols = cache::backed_values(&plan, arguments)?;
        let tensors = cache::input_tensors(&plan, arguments)?;
        let constants: Vec<TensorValue> = constants
            .into_iter()
            .filter(|tensor| !tensor.is_fake())
            .collect();
        self.execute(&plan, &constants, tensors, symbols).err()
    }

    /// Runs a graph on the session's device, printing to the interpreter's output.
    fn execute(
        &mut self,
        plan: &Plan,
        constants: &[TensorValue],
        tensors: Vec<TensorValue>,
        symbols: Vec<i64>,
    ) -> Result<RunValue<backend::Tensor>> {
        let span = plan
            .graph()
            .nodes
            .first()
            .map(|node| node.span)
            .unwrap_or_default();
        let constants = constants
            .iter()
            .map(|tensor| self.resident(tensor, span))
            .collect::<Result<Vec<_>>>()?;
        let tensors = tensors
            .iter()
            .map(|tensor| self.resident(tensor, span))
            .collect::<Result<Vec<_>>>()?;
        backend::interrupt::watch(&self.interrupt);
        let Interpreter {
            rng,
            out,
            profile,
            devices,
            options,
            ..
        } = self;
        let mut device = backend::Dispatch {
            target: &mut devices.target,
            rng,
            native: options.native,
        };
        let mut print = |text: &str| out.print(text);
        exec::execute(
            plan,
            &mut device,
            &constants,
            tensors,
            symbols,
            &mut print,
            profile.as_mut(),
        )
    }

    /// Traces `function` from its annotations, with input sizes as symbols that have no hint
    /// (`tsl graph`, `tsl check`). Notes say what the trace had to assume; a note that stopped
    /// the trace comes back as the error.
    pub fn trace_from_annotations(
        &mut self,
        function: &Rc<Function>,
    ) -> (Result<Traced>, Vec<Diagnostic>) {
        let mut tracer = Tracer::new(function.name(), true);
        if self.options.record_types {
            tracer.recording = Some(super::trace::Recording::default());
        }
        let span = function.def.name.span;
        let (result, mut tracer) = self.with_tracer(tracer, |this| {
            let arguments = this.arguments_from_annotations(function)?;
            let spans = vec![span; arguments.len()];
            let value = this.call_with_values(function, arguments, &spans)?;
            this.output_of(&value, span)
        });
        if let Some(facts) = tracer.render_facts(&function.qualified_name(), &self.sources) {
            self.trace_facts.push(facts);
        }
        let mut notes = std::mem::take(&mut tracer.notes);
        for note in &mut notes {
            tracer.unmark_diagnostic(note);
        }
        let traced = result
            .map_err(|mut error| {
                tracer.unmark_diagnostic(&mut error);
                error
            })
            .and_then(|output| self.finish(output, *tracer, span));
        (traced, notes)
    }

    /// Runs `body` with `tracer` as the trace in progress, restoring the outer one after.
    fn with_tracer<T>(
        &mut self,
        mut tracer: Tracer,
        body: impl FnOnce(&mut Interpreter) -> Result<T>,
    ) -> (Result<T>, Box<Tracer>) {
        crate::diag::panic::inject("trace");
        tracer.call_base = self.call_sites.len();
        let outer = self.tracer.replace(Box::new(tracer));
        let result = body(self);
        self.flush_logs();
        let tracer = std::mem::replace(&mut self.tracer, outer).expect("the trace is still there");
        (result, tracer)
    }

    /// Runs `function` on arguments already matched to its parameters, each with the span of
    /// the argument it came from (its call frame is the caller's).
    fn call_with_values(
        &mut self,
        function: &Rc<Function>,
        arguments: Vec<Value>,
        spans: &[Span],
    ) -> Result<Value> {
        let bound = arguments.into_iter().zip(spans.iter().copied()).collect();
        self.run_bound(function, bound)
    }

    /// Readies a finished trace to run: its elementwise operations fused (unless the options
    /// say otherwise), verified again.
    fn prepare(&mut self, mut graph: Graph, span: Span) -> Result<Graph> {
        if self.options.unfused {
            return Ok(graph);
        }
        let policy = self.dispatch().fusion_policy();
        passes::fuse(&mut graph, &policy);
        verify::verify(&graph).map_err(|problem| {
            Box::new(Diagnostic::internal(
                span,
                format!("the fused graph of `{}` is invalid: {problem}", graph.name),
            ))
        })?;
        Ok(graph)
    }

    /// Records the output, optimises, verifies and logs a finished trace.
    fn finish(&mut self, output: Output, tracer: Tracer, span: Span) -> Result<Traced> {
        let Tracer {
            mut graph,
            constants,
            globals,
            notes,
            ..
        } = tracer;
        graph.output = output;
        if self.options.keep_unoptimized {
            self.unoptimized.push(graph.clone());
        }
        passes::optimize(&mut graph);
        if let Err(problem) = verify::verify(&graph) {
            return Err(Diagnostic::internal(
                span,
                format!("the traced graph of `{}` is invalid: {problem}", graph.name),
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
            globals,
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

/// A value the executor returned, as an eager value.
fn value_of(value: RunValue<backend::Tensor>) -> Value {
    match value {
        RunValue::None => Value::None,
        RunValue::Bool(value) => Value::Bool(value),
        RunValue::Int(value) => Value::Int(value),
        RunValue::Float(value) => Value::Float(value),
        RunValue::Str(text) => Value::str(&text),
        RunValue::Tensor(tensor) => Value::Tensor(TensorValue::new(tensor)),
        RunValue::List(items) => Value::list(items.into_iter().map(value_of).collect()),
    }
}

fn internal(span: Span, message: &str) -> Box<Diagnostic> {
    Diagnostic::internal(span, message).into()
}
