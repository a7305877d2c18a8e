//! Tracing: the interpreter's second value domain.
//!
//! While a `@compile` function is traced, tensors are fake (a graph value with a symbolic
//! type), ints and bools derived from sizes are symbolic, and every tensor operation is
//! recorded as a node instead of being computed. The same interpreter code runs in both
//! domains; the places that differ ask `Interpreter::tracer`:
//!
//! - `sizes`: the `graph::shape::Sizes` of a trace, which asks the symbolic engine and turns
//!   the assumptions of the shape rules' general paths into runtime asserts;
//! - `symbolic`: arithmetic, comparisons and conditions on symbolic values, and where they
//!   must become concrete (guards) or cannot (`data-dependent-guard`/`data-dependent-int`);
//! - `report`: the data-dependent diagnostics, with symbol origins, facts and suggestions;
//! - `inputs`, `outputs`: from arguments to graph inputs, from the returned value to the
//!   graph's output.

mod branches;
mod facts;
mod inputs;
mod outputs;
mod record;
mod report;
mod sizes;
mod symbolic;

use std::collections::HashMap;

pub(in crate::eval) use facts::Became;
pub use facts::{CheckFact, Recording, TraceFacts, TypeFact};
pub(in crate::eval) use inputs::check_argument_lists;
pub use inputs::{DynamicPolicy, TraceRequest};
pub(in crate::eval) use record::CheckMessage;
pub use sizes::TraceSizes;
pub use symbolic::Ask;
pub(in crate::eval) use symbolic::comparison;

use super::value::{TensorValue, Value};
use crate::diag::{Code, Diagnostic, Frame};
use crate::graph::ir::{Arg, BindSource, Graph, Node, NodeKind, Template, ValueRef};
use crate::graph::passes::NodeKey;
use crate::graph::shape::{Dim, Meta};
use crate::source::Span;
use crate::sym::{Event, ExprId, ShapeEnv, SymbolId};

/// The state of one trace: the graph being built (its symbolic environment included), the
/// tensors it captured, and what was memoised.
pub struct Tracer {
    pub graph: Graph,
    /// Tensors fixed at trace time, shared with the branches of `cond`.
    pub constants: Vec<TensorValue>,
    /// `item()` of the same traced value gives the same symbol.
    items: HashMap<ValueRef, Value>,
    /// Pure nodes already recorded, by operation and arguments: recording the same
    /// computation again reuses them, so equal values are the same graph value.
    recorded: crate::sym::FxHashMap<NodeKey, crate::graph::ir::NodeId>,
    /// Symbols made by `fresh` during the current operation, bound by its node.
    pending_fresh: Vec<SymbolId>,
    /// How many runtime asserts of the environment already have nodes.
    asserts_seen: usize,
    /// No hints: input sizes are symbols with no value (`tsl check`, `tsl graph`).
    pub hintless: bool,
    /// Notes for `tsl check`: where a trace without hints assumed something about sizes.
    pub notes: Vec<Diagnostic>,
    /// What the user calls some symbols (annotation dim names), for messages.
    pub names: HashMap<SymbolId, String>,
    /// How many calls were in progress when the trace started: nodes record the calls made
    /// inside the traced function only.
    pub call_base: usize,
    /// The global names the trace read (a cached graph is only valid while they keep their
    /// values).
    pub globals: Vec<crate::eval::compile::cache::GlobalRead>,
    /// For a symbol made inside a function the traced code called (a std function, a
    /// helper), that call: an origin note names it, so the user sees what they called.
    pub origin_calls: HashMap<SymbolId, Frame>,
    /// Types and check outcomes for editors, when the interpreter records them.
    pub recording: Option<Recording>,
    /// Loop turns and calls run so far ([`limits::TRACE_TURNS`]).
    ///
    /// [`limits::TRACE_TURNS`]: crate::eval::limits::TRACE_TURNS
    turns: u64,
    /// Bytes of strings and lists built so far ([`limits::TRACE_BUILT_BYTES`]).
    ///
    /// [`limits::TRACE_BUILT_BYTES`]: crate::eval::limits::TRACE_BUILT_BYTES
    built_bytes: u64,
}

/// A point of a trace (see [`Tracer::mark`]).
pub struct Mark {
    nodes: usize,
    asserts: usize,
    items: HashMap<ValueRef, Value>,
}

impl Tracer {
    pub fn new(name: &str, hintless: bool) -> Tracer {
        Tracer {
            graph: Graph::new(name, ShapeEnv::new()),
            constants: Vec::new(),
            items: HashMap::new(),
            recorded: crate::sym::FxHashMap::default(),
            pending_fresh: Vec::new(),
            asserts_seen: 0,
            hintless,
            notes: Vec::new(),
            names: HashMap::new(),
            call_base: 0,
            globals: Vec::new(),
            origin_calls: HashMap::new(),
            recording: None,
            turns: 0,
            built_bytes: 0,
        }
    }

    pub fn env(&mut self) -> &mut ShapeEnv {
        &mut self.graph.env
    }

    /// A symbolic expression as a size: a constant becomes `Known`.
    pub fn dim(&self, expr: ExprId) -> Dim {
        self.graph
            .env
            .as_int(expr)
            .map_or(Dim::Sym(expr), Dim::Known)
    }

    /// A size as an expression of the environment.
    pub fn expr(&mut self, dim: Dim) -> ExprId {
        match dim {
            Dim::Known(value) => self.graph.env.int(value),
            Dim::Sym(expr) => expr,
        }
    }

    /// An int value as a symbolic-or-constant size.
    pub fn value_of(&self, expr: ExprId) -> Value {
        Value::from_dim(self.dim(expr))
    }

    /// The graph value standing for a tensor: its own, or a constant node for a concrete
    /// tensor (captured once per tensor object).
    pub fn tensor_arg(&mut self, tensor: &TensorValue, span: Span) -> ValueRef {
        if let Some(value) = tensor.graph_value() {
            return value;
        }
        if let Some(index) = self.constants.iter().position(|known| known.same(tensor)) {
            let existing = self.graph.nodes.iter().position(
                |node| matches!(node.kind, NodeKind::Constant { index: at } if at == index),
            );
            if let Some(node) = existing {
                return ValueRef::first(crate::graph::ir::NodeId(node as u32));
            }
        }
        let index = self.constants.len();
        self.constants.push(tensor.clone());
        self.graph.constants = self.constants.len();
        let id = self.push(
            NodeKind::Constant { index },
            Vec::new(),
            vec![tensor.meta()],
            span,
            Vec::new(),
        );
        ValueRef::first(id)
    }

    /// Appends a node with no symbol bindings.
    pub fn push(
        &mut self,
        kind: NodeKind,
        args: Vec<Arg>,
        outputs: Vec<Meta>,
        span: Span,
        trace: Vec<Frame>,
    ) -> crate::graph::ir::NodeId {
        self.graph.push(Node {
            kind,
            args,
            outputs,
            binds: Vec::new(),
            span,
            trace,
        })
    }

    /// Records a symbol made for a data-dependent size of the operation being traced.
    pub fn note_fresh(&mut self, symbol: SymbolId) {
        self.pending_fresh.push(symbol);
    }

    /// Remembers the outermost call of `trace` (innermost first), if any, as where `symbol`
    /// was made from the traced function's point of view.
    pub fn note_origin_call(&mut self, symbol: SymbolId, trace: &[Frame]) {
        if let Some(outermost) = trace.last() {
            self.origin_calls.insert(symbol, outermost.clone());
        }
    }

    /// The bindings of the symbols made during the current operation, located in its outputs.
    pub fn take_binds(&mut self, outputs: &[Meta]) -> Vec<(SymbolId, BindSource)> {
        let fresh = std::mem::take(&mut self.pending_fresh);
        fresh
            .into_iter()
            .filter_map(|symbol| {
                let target = Dim::Sym(self.graph.env.symbol_expr(symbol));
                outputs.iter().enumerate().find_map(|(output, meta)| {
                    meta.shape
                        .iter()
                        .position(|d| *d == target)
                        .map(|dim| (symbol, BindSource::Dim { output, dim }))
                })
            })
            .collect()
    }

    /// Emits a node for every runtime assert the environment recorded since the last call,
    /// failing with `code` and `message`; returns their conditions.
    pub fn emit_asserts(
        &mut self,
        code: Code,
        message: &Template,
        span: Span,
        trace: &[Frame],
    ) -> Vec<ExprId> {
        let asserts = self.graph.env.runtime_asserts()[self.asserts_seen..].to_vec();
        self.asserts_seen += asserts.len();
        let conditions = asserts.iter().map(|recorded| recorded.cond).collect();
        for recorded in asserts {
            self.push(
                NodeKind::Assert {
                    cond: recorded.cond,
                    message: message.clone(),
                    code,
                },
                Vec::new(),
                Vec::new(),
                span,
                trace.to_vec(),
            );
        }
        conditions
    }

    /// Appends an operation node, or returns the identical pure node recorded before.
    pub fn record(&mut self, node: Node) -> crate::graph::ir::NodeId {
        let pure = node.binds.is_empty() && !node.kind.has_effects();
        let NodeKind::Op(op) = &node.kind else {
            return self.graph.push(node);
        };
        if !pure {
            return self.graph.push(node);
        }
        // The key the CSE pass uses, so recording and the pass agree on what is the same.
        let key = NodeKey::new(op.clone(), node.args.clone());
        if let Some(existing) = self.recorded.get(&key) {
            return *existing;
        }
        let id = self.graph.push(node);
        self.recorded.insert(key, id);
        id
    }

    /// Where the trace stands now, to [`Tracer::rewind`] to.
    pub fn mark(&self) -> Mark {
        Mark {
            nodes: self.graph.nodes.len(),
            asserts: self.graph.env.runtime_asserts().len(),
            items: self.items.clone(),
        }
    }

    /// Forgets what was recorded since `mark`, as if the code traced since had not run (the
    /// right operand of `and`/`or`, which eager code did not evaluate). Does nothing when
    /// that code taught the environment a runtime assert, a fact that cannot be taken back.
    /// Guards it added stay: they hold for these inputs and only make the cache entry more
    /// specific.
    pub fn rewind(&mut self, mark: Mark) {
        if self.graph.env.runtime_asserts().len() != mark.asserts {
            return;
        }
        self.graph.nodes.truncate(mark.nodes);
        self.recorded.retain(|_, id| id.index() < mark.nodes);
        self.items = mark.items;
        self.pending_fresh.clear();
    }

    pub fn memoised_item(&self, value: ValueRef) -> Option<Value> {
        self.items.get(&value).cloned()
    }

    pub fn memoise_item(&mut self, value: ValueRef, item: Value) {
        self.items.insert(value, item);
    }

    /// The events the environment logged since the last call.
    pub fn take_events(&mut self) -> Vec<Event> {
        self.graph.env.take_events()
    }
}
