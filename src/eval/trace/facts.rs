//! What a trace saw, kept for editors (`Options::record_types`): the symbolic type of every
//! value bound or computed in traced code, and what each `check` became. Types are recorded
//! as metadata and expressions while the trace runs and rendered when it ends, so facts
//! learned later (a replacement `u1 = u0`) show up simplified, in the user's names (`n` for
//! the symbol of an annotation's size).

use std::collections::HashMap;
use std::fmt::Write as _;

use super::Tracer;
use crate::dtype::DType;
use crate::eval::Interpreter;
use crate::eval::value::Value;
use crate::graph::shape::{Dim, Meta};
use crate::source::{SourceMap, Span};
use crate::sym::ExprId;

/// The most distinct types kept for one place (a loop or a helper called many times).
const MAX_TYPES_PER_SPAN: usize = 8;
/// The most items of a list shown in its type.
const MAX_LIST_ITEMS: usize = 8;

/// A value's type as the trace saw it.
#[derive(Clone, Debug, PartialEq)]
enum Recorded {
    Tensor(Meta),
    Int(ExprId),
    Bool(ExprId),
    /// A float or bool known only when the graph runs.
    Scalar(DType),
    List(Vec<Recorded>, usize),
}

/// What a `check` became in the trace.
#[derive(Clone, Debug, PartialEq)]
pub(in crate::eval) enum Became {
    /// A runtime assert on sizes: the condition.
    RuntimeAssert(ExprId),
    /// An assert on tensor data, computed by the compiled kernels.
    DeviceAssert,
    /// Already known to hold: nothing is emitted.
    Proved,
    /// Decided by input sizes when the function is called: a guard, no assert.
    Guard(Option<ExprId>),
}

/// What one trace recorded, before rendering.
#[derive(Default)]
pub struct Recording {
    types: HashMap<Span, Vec<Recorded>>,
    checks: Vec<(Span, Became)>,
}

/// The type of the value at one place of the source.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeFact {
    pub span: Span,
    /// `f32[n, 3]`; several when the place was traced with different types.
    pub types: Vec<String>,
    /// What the data-dependent sizes in them are: `u0 = nonzero() at 3:16, range [0, inf],
    /// size-like`.
    pub symbols: Vec<String>,
}

/// What one `check` statement became.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckFact {
    pub span: Span,
    pub became: Vec<String>,
}

/// Everything recorded while tracing one compiled function.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceFacts {
    pub function: String,
    pub types: Vec<TypeFact>,
    pub checks: Vec<CheckFact>,
}

impl Interpreter {
    fn recording(&mut self) -> Option<&mut Recording> {
        self.tracer.as_mut()?.recording.as_mut()
    }

    /// Records the type of `value` at `span`, when the trace records types.
    pub(in crate::eval) fn record_type(&mut self, span: Span, value: &Value) {
        let Some(recording) = self.recording() else {
            return;
        };
        let Some(recorded) = recorded(value) else {
            return;
        };
        let types = recording.types.entry(span).or_default();
        if types.len() < MAX_TYPES_PER_SPAN && !types.contains(&recorded) {
            types.push(recorded);
        }
    }

    /// Records what the `check` at `span` became.
    pub(in crate::eval) fn record_check(&mut self, span: Span, became: Became) {
        if let Some(recording) = self.recording() {
            recording.checks.push((span, became));
        }
    }

    /// The facts recorded by the traces since the last call.
    pub fn take_trace_facts(&mut self) -> Vec<TraceFacts> {
        std::mem::take(&mut self.trace_facts)
    }
}

/// How deep the recorded type of a list goes (lists nested deeper record no type).
const MAX_LIST_DEPTH: usize = 4;

fn recorded(value: &Value) -> Option<Recorded> {
    recorded_within(value, MAX_LIST_DEPTH)
}

fn recorded_within(value: &Value, depth: usize) -> Option<Recorded> {
    match value {
        Value::Tensor(tensor) => Some(Recorded::Tensor(tensor.meta())),
        Value::SymInt(expr) => Some(Recorded::Int(*expr)),
        Value::SymBool(expr) => Some(Recorded::Bool(*expr)),
        Value::RuntimeScalar(tensor) => Some(Recorded::Scalar(tensor.dtype())),
        Value::List(items) => {
            let inner = depth.checked_sub(1)?;
            let shown: Vec<Recorded> = items
                .iter()
                .take(MAX_LIST_ITEMS)
                .map(|item| recorded_within(item, inner))
                .collect::<Option<_>>()?;
            Some(Recorded::List(shown, items.len()))
        }
        _ => None,
    }
}

impl Tracer {
    /// Renders what the trace recorded, in source order.
    pub fn render_facts(&mut self, function: &str, sources: &SourceMap) -> Option<TraceFacts> {
        let recording = self.recording.take()?;
        let mut types: Vec<TypeFact> = recording
            .types
            .into_iter()
            .map(|(span, recorded)| {
                let mut symbols = Vec::new();
                let types = recorded
                    .iter()
                    .map(|recorded| self.render(recorded, sources, &mut symbols))
                    .collect();
                TypeFact {
                    span,
                    types,
                    symbols,
                }
            })
            .collect();
        types.sort_by_key(|fact| (fact.span.file, fact.span.start, fact.span.end));
        let mut checks: Vec<CheckFact> = Vec::new();
        for (span, became) in recording.checks {
            let text = self.describe(&became);
            match checks.iter_mut().find(|check| check.span == span) {
                Some(check) if !check.became.contains(&text) => check.became.push(text),
                Some(_) => {}
                None => checks.push(CheckFact {
                    span,
                    became: vec![text],
                }),
            }
        }
        Some(TraceFacts {
            function: function.to_string(),
            types,
            checks,
        })
    }

    fn render(
        &mut self,
        recorded: &Recorded,
        sources: &SourceMap,
        symbols: &mut Vec<String>,
    ) -> String {
        match recorded {
            Recorded::Tensor(meta) => {
                let dims: Vec<String> = meta
                    .shape
                    .iter()
                    .map(|dim| self.render_dim(*dim, sources, symbols))
                    .collect();
                format!("{}[{}]", meta.dtype, dims.join(", "))
            }
            Recorded::Int(expr) => format!(
                "int = {}",
                self.render_dim(Dim::Sym(*expr), sources, symbols)
            ),
            Recorded::Bool(expr) => {
                let expr = self.graph.env.resolve(*expr);
                self.note_symbols(expr, sources, symbols);
                format!("bool = {}", self.show(expr))
            }
            Recorded::Scalar(dtype) => format!("{dtype} (known when the graph runs)"),
            Recorded::List(items, length) => {
                let mut shown: Vec<String> = items
                    .iter()
                    .map(|item| self.render(item, sources, symbols))
                    .collect();
                if *length > items.len() {
                    shown.push(format!("… {} more", length - items.len()));
                }
                format!("[{}]", shown.join(", "))
            }
        }
    }

    fn render_dim(&mut self, dim: Dim, sources: &SourceMap, symbols: &mut Vec<String>) -> String {
        match dim {
            Dim::Known(value) => value.to_string(),
            Dim::Sym(expr) => {
                let expr = self.graph.env.resolve(expr);
                match self.graph.env.as_int(expr) {
                    Some(value) => value.to_string(),
                    None => {
                        self.note_symbols(expr, sources, symbols);
                        self.show(expr)
                    }
                }
            }
        }
    }

    /// Adds what each data-dependent symbol of `expr` is, once.
    fn note_symbols(&mut self, expr: ExprId, sources: &SourceMap, symbols: &mut Vec<String>) {
        for report in self.graph.env.explain(expr).symbols {
            let mut line = format!("{} = ", report.name);
            if let Some(origin) = &report.origin {
                let _ = write!(
                    line,
                    "{} at {}",
                    origin.operation,
                    sources.location(origin.span)
                );
            } else {
                line.push_str("an input size");
            }
            let _ = write!(line, ", range {}", crate::graph::print::range(report.range));
            if report.size_like {
                line.push_str(", size-like");
            }
            if !symbols.contains(&line) {
                symbols.push(line);
            }
        }
    }

    fn describe(&mut self, became: &Became) -> String {
        match became {
            Became::RuntimeAssert(cond) => {
                let cond = self.graph.env.resolve(*cond);
                format!(
                    "a runtime assert: `{}` is checked when the compiled function runs",
                    self.show(cond)
                )
            }
            Became::DeviceAssert => {
                "a device assert: the compiled kernels check the data when they run".to_string()
            }
            Became::Proved => {
                "proved while tracing: no assert is emitted, the trace already knows it holds"
                    .to_string()
            }
            Became::Guard(Some(cond)) => {
                let cond = self.graph.env.resolve(*cond);
                format!(
                    "a guard on input sizes: `{}` is decided from the sizes when the function is called, and no assert is emitted",
                    self.show(cond)
                )
            }
            Became::Guard(None) => "a guard on input sizes: decided from the sizes when the function is called, and no assert is emitted".to_string(),
        }
    }
}
