//! The per-function cache of compiled graphs (spec §6).
//!
//! An entry holds a graph with what its trace relied on: the argument structure it saw
//! (dtypes, ranks, the sizes and ints it specialised on, list lengths, other values), the
//! globals it read, which argument sizes share a symbol (duck sizing), and the guards on its
//! symbols. A call runs the first entry whose conditions all hold. On a miss the function is
//! traced again; automatic dynamic makes every size or int that changed since the earlier
//! calls symbolic in the new trace.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::rc::Rc;

use super::super::value::{Module, TensorValue, Value};
use crate::backend::exec::Plan;
use crate::dtype::DType;
use crate::graph::ir::{ArgumentPath, InputSource};
use crate::sym::{GuardSet, SymbolId};

use super::super::trace::DynamicPolicy;

/// How many traces one function may have; past that, new inputs run eagerly.
pub const RECOMPILE_LIMIT: usize = 8;

/// The compiled graphs of one function and what earlier calls passed it.
#[derive(Default)]
pub struct CompileCache {
    pub entries: Vec<Rc<Entry>>,
    /// How many times the function was traced.
    pub traces: usize,
    /// What the calls so far passed, for automatic dynamic.
    seen: Option<Vec<Seen>>,
    /// The recompile limit was reached and reported.
    pub exhausted: bool,
}

/// One compiled graph and the conditions under which it may run.
pub struct Entry {
    /// The graph as traced and optimised (what `:graph` shows and the conditions read).
    pub plan: Plan,
    /// The graph as it runs on each device the entry ran on: fused by that device's policy.
    prepared: RefCell<Vec<(&'static str, Rc<Plan>)>>,
    /// The tensors the graph captured. Each keeps its copy on the device it last ran on, so
    /// a constant crosses to a device once per entry, not once per call.
    pub constants: Vec<TensorValue>,
    /// The argument structure, one pattern per parameter.
    patterns: Vec<Pattern>,
    /// The globals the trace read and what they were.
    globals: Vec<GlobalRead>,
    /// Each backed symbol's sources, in the order the trace made them.
    backed: Vec<Backed>,
    pub guards: GuardSet,
    /// The parameter names, for messages.
    names: Rc<[String]>,
}

struct Backed {
    symbol: SymbolId,
    /// The symbol's number in the guard set (`s3` is 3).
    number: usize,
    source: InputSource,
    /// Whether an earlier source gave this symbol its value (duck sizing): this one must
    /// agree.
    repeat: bool,
}

/// A global name the trace read: `value` is `None` when the name was a builtin (the guard
/// then is that no global has taken the name since).
#[derive(Clone)]
pub struct GlobalRead {
    pub module: Rc<Module>,
    pub name: Rc<str>,
    pub value: Option<Value>,
}

/// What an entry needs of one argument.
enum Pattern {
    /// `sizes[d]` is the size a dim was specialised to, `None` when it is a symbol.
    Tensor {
        dtype: DType,
        sizes: Vec<Option<i64>>,
    },
    /// The value an int was specialised to, `None` when it is a symbol.
    Int(Option<i64>),
    List(Vec<Pattern>),
    /// Any other value, compared by identity (tensors, functions) or by value.
    Same(Value),
}

/// The concrete inputs of one call, checked against an entry: symbol values by symbol index
/// (for the executor) and by backed number (for the guard set).
pub struct Bindings {
    pub symbols: Vec<i64>,
    numbers: Vec<i64>,
}

pub use super::miss::{Cause, Miss};

impl Entry {
    pub fn new(
        plan: Plan,
        constants: Vec<TensorValue>,
        arguments: &[Value],
        globals: Vec<GlobalRead>,
        names: Rc<[String]>,
    ) -> Entry {
        let graph = plan.graph();
        let symbolic_dims: HashSet<(&[usize], usize)> = graph
            .backed
            .iter()
            .filter_map(|(_, source)| match source {
                InputSource::TensorDim { path, dim } => Some((path.as_slice(), *dim)),
                InputSource::Int { .. } => None,
            })
            .collect();
        let symbolic_ints: HashSet<&[usize]> = graph
            .backed
            .iter()
            .filter_map(|(_, source)| match source {
                InputSource::Int { path } => Some(path.as_slice()),
                InputSource::TensorDim { .. } => None,
            })
            .collect();
        let patterns = arguments
            .iter()
            .enumerate()
            .map(|(index, value)| pattern(value, &mut vec![index], &symbolic_dims, &symbolic_ints))
            .collect();
        let mut seen = HashSet::new();
        let backed = graph
            .backed
            .iter()
            .map(|(symbol, source)| Backed {
                symbol: *symbol,
                number: graph.env.symbol(*symbol).number as usize,
                source: source.clone(),
                repeat: !seen.insert(*symbol),
            })
            .collect();
        let guards = GuardSet::new(&graph.env);
        Entry {
            plan,
            prepared: RefCell::new(Vec::new()),
            constants,
            patterns,
            globals,
            backed,
            guards,
            names,
        }
    }

    /// The plan prepared for `device` earlier, if any.
    pub fn prepared(&self, device: &str) -> Option<Rc<Plan>> {
        self.prepared
            .borrow()
            .iter()
            .find(|(name, _)| *name == device)
            .map(|(_, plan)| plan.clone())
    }

    /// Keeps the plan prepared for `device`.
    pub fn keep_prepared(&self, device: &'static str, plan: Rc<Plan>) {
        self.prepared.borrow_mut().push((device, plan));
    }

    /// The symbol values for `arguments` when every condition of the entry holds.
    pub fn matches(&self, arguments: &[Value]) -> Option<Bindings> {
        let structure = self.patterns.len() == arguments.len()
            && self
                .patterns
                .iter()
                .zip(arguments)
                .all(|(pattern, value)| fits(pattern, value));
        if !structure || !self.globals.iter().all(GlobalRead::holds) {
            return None;
        }
        let bindings = self.bind(arguments).ok()?;
        self.guards.evaluate(&bindings.numbers).ok()?;
        Some(bindings)
    }

    /// Why `arguments` do not fit the entry (`None` if they do).
    pub fn miss(&self, arguments: &[Value]) -> Option<Miss> {
        for (index, (pattern, value)) in self.patterns.iter().zip(arguments).enumerate() {
            let name = self.names.get(index).cloned().unwrap_or_default();
            if let Some(reason) = misfit(pattern, value, &name) {
                return Some(reason);
            }
        }
        if let Some(read) = self.globals.iter().find(|read| !read.holds()) {
            return Some(Miss::new(
                format!("the global {} changed", read.name),
                Cause::Global {
                    name: read.name.to_string(),
                },
            ));
        }
        let bindings = match self.bind(arguments) {
            Ok(bindings) => bindings,
            Err(reason) => return Some(reason),
        };
        let failed = self.guards.evaluate(&bindings.numbers).err()?;
        let env = &self.plan.graph().env;
        let values: Vec<String> = self
            .guards
            .symbols(failed)
            .iter()
            .map(|symbol| {
                let value = bindings.symbols.get(symbol.index()).copied().unwrap_or(0);
                format!("{} = {value}", env.display(env.symbol_expr(*symbol)))
            })
            .collect();
        Some(Miss::new(
            format!(
                "{} failed ({})",
                self.guards.describe(failed).unwrap_or("a guard"),
                values.join(", ")
            ),
            Cause::Guard,
        ))
    }

    /// Every condition of the entry in TSL syntax, in the order a call checks them: the
    /// argument structure, the globals, where each symbol comes from, then the guards.
    pub fn conditions(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (index, pattern) in self.patterns.iter().enumerate() {
            let name = self.names.get(index).cloned().unwrap_or_default();
            describe_pattern(pattern, &name, &mut lines);
        }
        for read in &self.globals {
            lines.push(match &read.value {
                Some(value) => format!("global {} is {}", read.name, shown(value)),
                None => format!("global {} is the builtin", read.name),
            });
        }
        let env = &self.plan.graph().env;
        for backed in &self.backed {
            let symbol = env.display(env.symbol_expr(backed.symbol));
            let source = self.describe(&backed.source);
            lines.push(if backed.repeat {
                format!("{source} == {symbol}")
            } else {
                format!("{symbol} = {source}")
            });
        }
        lines.extend(self.guards.labels().iter().cloned());
        lines
    }

    /// Reads every backed symbol's value from the arguments; sizes that share a symbol must
    /// be equal.
    fn bind(&self, arguments: &[Value]) -> Result<Bindings, Miss> {
        let mut symbols = vec![0; self.plan.symbol_count()];
        let mut numbers = vec![0; self.guard_numbers()];
        for backed in &self.backed {
            let value = read(arguments, &backed.source).ok_or_else(|| {
                let reason = format!("{} is missing", self.describe(&backed.source));
                Miss::new(reason, Cause::Guard)
            })?;
            let slot = backed.symbol.index();
            if backed.repeat && symbols[slot] != value {
                let first = self
                    .backed
                    .iter()
                    .find(|other| other.symbol == backed.symbol)
                    .expect("a repeated symbol has a first source");
                let (a, b) = (self.describe(&first.source), self.describe(&backed.source));
                return Err(Miss::new(
                    format!("{a} == {b} failed ({a} = {}, {b} = {value})", symbols[slot]),
                    Cause::Guard,
                ));
            }
            symbols[slot] = value;
            numbers[backed.number] = value;
        }
        Ok(Bindings { symbols, numbers })
    }

    fn guard_numbers(&self) -> usize {
        self.backed
            .iter()
            .map(|backed| backed.number + 1)
            .max()
            .unwrap_or(0)
    }

    /// A source as the user writes it: `x.size(0)`, `n`, `xs[1].size(0)`.
    fn describe(&self, source: &InputSource) -> String {
        match source {
            InputSource::TensorDim { path, dim } => {
                format!("{}.size({dim})", path_name(&self.names, path))
            }
            InputSource::Int { path } => path_name(&self.names, path),
        }
    }
}

impl GlobalRead {
    fn holds(&self) -> bool {
        let current = self.module.get(&self.name);
        match (&self.value, &current) {
            (None, None) => true,
            (Some(read), Some(now)) => same(read, now),
            _ => false,
        }
    }
}

impl CompileCache {
    /// Records the arguments of a call that missed, and returns which sizes and ints have
    /// changed since the earlier calls (automatic dynamic).
    pub fn observe(&mut self, arguments: &[Value]) -> DynamicPolicy {
        let seen = match self.seen.take() {
            None => arguments.iter().map(Seen::of).collect(),
            Some(mut seen) => {
                for (slot, value) in seen.iter_mut().zip(arguments) {
                    slot.merge(value);
                }
                seen
            }
        };
        let mut policy = DynamicPolicy::default();
        for (index, slot) in seen.iter().enumerate() {
            slot.changed(&mut vec![index], &mut policy);
        }
        self.seen = Some(seen);
        policy
    }
}

/// What earlier calls passed for one argument: sizes and ints, `None` once they changed.
enum Seen {
    Tensor(Vec<Option<i64>>),
    Int(Option<i64>),
    List(Vec<Seen>),
    Other,
}

impl Seen {
    fn of(value: &Value) -> Seen {
        match value {
            Value::Tensor(tensor) => {
                Seen::Tensor(tensor.dims().iter().map(|dim| dim.known()).collect())
            }
            Value::Int(value) => Seen::Int(Some(*value)),
            Value::List(items) => Seen::List(items.iter().map(Seen::of).collect()),
            _ => Seen::Other,
        }
    }

    fn merge(&mut self, value: &Value) {
        match (self, value) {
            (Seen::Tensor(sizes), Value::Tensor(tensor)) if sizes.len() == tensor.ndim() => {
                for (seen, dim) in sizes.iter_mut().zip(tensor.dims()) {
                    if *seen != dim.known() {
                        *seen = None;
                    }
                }
            }
            (Seen::Int(seen), Value::Int(value)) if *seen != Some(*value) => *seen = None,
            (Seen::List(items), Value::List(values)) => {
                for (item, value) in items.iter_mut().zip(values.iter()) {
                    item.merge(value);
                }
            }
            _ => {}
        }
    }

    fn changed(&self, path: &mut ArgumentPath, policy: &mut DynamicPolicy) {
        match self {
            Seen::Tensor(sizes) => {
                for (dim, size) in sizes.iter().enumerate() {
                    if size.is_none() {
                        policy.dims.insert((path.clone(), dim));
                    }
                }
            }
            Seen::Int(None) => {
                policy.ints.insert(path.clone());
            }
            Seen::List(items) => {
                for (index, item) in items.iter().enumerate() {
                    path.push(index);
                    item.changed(path, policy);
                    path.pop();
                }
            }
            Seen::Int(Some(_)) | Seen::Other => {}
        }
    }
}

fn pattern(
    value: &Value,
    path: &mut ArgumentPath,
    symbolic_dims: &HashSet<(&[usize], usize)>,
    symbolic_ints: &HashSet<&[usize]>,
) -> Pattern {
    match value {
        Value::Tensor(tensor) => Pattern::Tensor {
            dtype: tensor.dtype(),
            sizes: tensor
                .dims()
                .iter()
                .enumerate()
                .map(|(dim, size)| {
                    if symbolic_dims.contains(&(path.as_slice(), dim)) {
                        None
                    } else {
                        size.known()
                    }
                })
                .collect(),
        },
        Value::Int(value) => {
            Pattern::Int((!symbolic_ints.contains(path.as_slice())).then_some(*value))
        }
        Value::List(items) => Pattern::List(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    path.push(index);
                    let inner = pattern(item, path, symbolic_dims, symbolic_ints);
                    path.pop();
                    inner
                })
                .collect(),
        ),
        other => Pattern::Same(other.clone()),
    }
}

/// Whether a value fits a pattern (the fast check of every call).
fn fits(pattern: &Pattern, value: &Value) -> bool {
    match (pattern, value) {
        (Pattern::Tensor { dtype, sizes }, Value::Tensor(tensor)) => {
            let Some(data) = tensor.real() else {
                return false;
            };
            data.dtype() == *dtype
                && data.shape().len() == sizes.len()
                && sizes
                    .iter()
                    .zip(data.shape())
                    .all(|(want, size)| want.is_none_or(|want| want == *size as i64))
        }
        (Pattern::Int(want), Value::Int(value)) => want.is_none_or(|want| want == *value),
        (Pattern::List(patterns), Value::List(items)) => {
            patterns.len() == items.len()
                && patterns
                    .iter()
                    .zip(items.iter())
                    .all(|(pattern, item)| fits(pattern, item))
        }
        (Pattern::Same(want), value) => same(want, value),
        _ => false,
    }
}

/// Why a value does not fit a pattern, naming it as `name` (`None` if it fits).
fn misfit(pattern: &Pattern, value: &Value, name: &str) -> Option<Miss> {
    if fits(pattern, value) {
        return None;
    }
    let differs = |what: String, want: String, got: String, cause: Cause| {
        Some(Miss::new(
            format!("{what} == {want} failed ({what} = {got})"),
            cause,
        ))
    };
    let name_only = || name.to_string();
    match (pattern, value) {
        (Pattern::Tensor { dtype, sizes }, Value::Tensor(tensor)) => {
            if tensor.dtype() != *dtype {
                return differs(
                    format!("{name}.dtype"),
                    dtype.to_string(),
                    tensor.dtype().to_string(),
                    Cause::Dtype { name: name_only() },
                );
            }
            if tensor.ndim() != sizes.len() {
                return differs(
                    format!("{name}.ndim"),
                    sizes.len().to_string(),
                    tensor.ndim().to_string(),
                    Cause::Rank { name: name_only() },
                );
            }
            let (dim, want, got) =
                sizes
                    .iter()
                    .zip(tensor.dims())
                    .enumerate()
                    .find_map(|(dim, (want, got))| {
                        let want = (*want)?;
                        let got = got.known()?;
                        (want != got).then_some((dim, want, got))
                    })?;
            differs(
                format!("{name}.size({dim})"),
                want.to_string(),
                got.to_string(),
                Cause::Specialised,
            )
        }
        (Pattern::Int(Some(want)), Value::Int(got)) => differs(
            name.to_string(),
            want.to_string(),
            got.to_string(),
            Cause::Specialised,
        ),
        (Pattern::List(patterns), Value::List(items)) => {
            if patterns.len() != items.len() {
                return differs(
                    format!("len({name})"),
                    patterns.len().to_string(),
                    items.len().to_string(),
                    Cause::ListLength { name: name_only() },
                );
            }
            patterns
                .iter()
                .zip(items.iter())
                .enumerate()
                .find_map(|(index, (pattern, item))| {
                    misfit(pattern, item, &format!("{name}[{index}]"))
                })
        }
        (Pattern::Same(want), got) if want.kind() == got.kind() => Some(Miss::new(
            format!("{name} is {} as traced, got {}", shown(want), shown(got)),
            Cause::Value {
                name: name_only(),
                kind: want.kind(),
            },
        )),
        (Pattern::Same(want), got) => Some(Miss::new(
            format!("{name} is {} as traced, got {}", shown(want), shown(got)),
            Cause::Kind { name: name_only() },
        )),
        (want, got) => Some(Miss::new(
            format!(
                "{name} was {} when traced, got {}",
                pattern_kind(want),
                got.kind()
            ),
            Cause::Kind { name: name_only() },
        )),
    }
}

fn describe_pattern(pattern: &Pattern, name: &str, lines: &mut Vec<String>) {
    match pattern {
        Pattern::Tensor { dtype, sizes } => {
            lines.push(format!("{name}.dtype == {dtype}"));
            lines.push(format!("{name}.ndim == {}", sizes.len()));
            for (dim, size) in sizes.iter().enumerate() {
                if let Some(size) = size {
                    lines.push(format!("{name}.size({dim}) == {size}"));
                }
            }
        }
        Pattern::Int(Some(value)) => lines.push(format!("{name} == {value}")),
        Pattern::Int(None) => {}
        Pattern::List(items) => {
            lines.push(format!("len({name}) == {}", items.len()));
            for (index, item) in items.iter().enumerate() {
                describe_pattern(item, &format!("{name}[{index}]"), lines);
            }
        }
        Pattern::Same(value) => lines.push(format!("{name} is {}", shown(value))),
    }
}

fn pattern_kind(pattern: &Pattern) -> &'static str {
    match pattern {
        Pattern::Tensor { .. } => "a tensor",
        Pattern::Int(_) => "an int",
        Pattern::List(_) => "a list",
        Pattern::Same(_) => "another value",
    }
}

fn shown(value: &Value) -> String {
    match value {
        Value::Tensor(tensor) => format!("a tensor {}", tensor.meta()),
        Value::Str(text) => format!("{text:?}"),
        other => other.to_string(),
    }
}

/// Whether two values are the same for a cached graph: tensors, functions and modules by
/// identity, everything else by value.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::None, Value::None) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Int(a), Value::Int(b)) => a == b,
        (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
        (Value::Str(a), Value::Str(b)) => a == b,
        (Value::DType(a), Value::DType(b)) => a == b,
        (Value::Tensor(a), Value::Tensor(b)) => a.same(b),
        (Value::Function(a), Value::Function(b)) => Rc::ptr_eq(a, b),
        (Value::Module(a), Value::Module(b)) => Rc::ptr_eq(a, b),
        (Value::Builtin(a), Value::Builtin(b)) => a.name() == b.name(),
        (Value::List(a), Value::List(b)) => {
            a.len() == b.len() && a.iter().zip(b.iter()).all(|(a, b)| same(a, b))
        }
        _ => false,
    }
}

/// The value an input source reads from the arguments.
fn read(arguments: &[Value], source: &InputSource) -> Option<i64> {
    match source {
        InputSource::TensorDim { path, dim } => match at(arguments, path)? {
            Value::Tensor(tensor) => tensor
                .real()
                .and_then(|data| data.shape().get(*dim))
                .map(|size| *size as i64),
            _ => None,
        },
        InputSource::Int { path } => match at(arguments, path)? {
            Value::Int(value) => Some(*value),
            _ => None,
        },
    }
}

/// The values of a graph's backed symbols read from the arguments, by symbol index (sizes
/// that share a symbol are not compared: for a graph that never joins the cache).
pub fn backed_values(plan: &Plan, arguments: &[Value]) -> Option<Vec<i64>> {
    let mut symbols = vec![0; plan.symbol_count()];
    for (symbol, source) in &plan.graph().backed {
        symbols[symbol.index()] = read(arguments, source)?;
    }
    Some(symbols)
}

/// The tensors a graph takes, in the order of its input nodes.
pub fn input_tensors(plan: &Plan, arguments: &[Value]) -> Option<Vec<TensorValue>> {
    plan.inputs()
        .iter()
        .map(|path| match at(arguments, path)? {
            Value::Tensor(tensor) if !tensor.is_fake() => Some(tensor.clone()),
            _ => None,
        })
        .collect()
}

/// The argument at `path`: a parameter, then list items.
fn at<'v>(arguments: &'v [Value], path: &[usize]) -> Option<&'v Value> {
    let (first, rest) = path.split_first()?;
    let mut value = arguments.get(*first)?;
    for index in rest {
        match value {
            Value::List(items) => value = items.get(*index)?,
            _ => return None,
        }
    }
    Some(value)
}

/// How the user writes the argument at `path`: `x`, `xs[1]`.
fn path_name(names: &[String], path: &[usize]) -> String {
    let mut text = path
        .first()
        .and_then(|index| names.get(*index))
        .cloned()
        .unwrap_or_default();
    for index in path.iter().skip(1) {
        let _ = write!(text, "[{index}]");
    }
    text
}
