//! Compiled guard sets: the conditions a cached graph relies on, checked against concrete
//! input sizes in nanoseconds and without allocation.
//!
//! A guard set holds, in order, the declared range of every backed symbol (`s0 >= 2` after 0/1
//! specialisation) and then every recorded guard. A guard that is a linear comparison of
//! symbols, the common case, is a flat loop over `(symbol, coefficient)` pairs; any other
//! guard is a small register program over the DAG of its expression. Both follow the
//! evaluation order and errors of [`ShapeEnv::eval_bool`], so a guard set accepts exactly the
//! sizes for which every guard evaluates to true.

use super::env::ShapeEnv;
use super::eval::{compare, floor_div_i64, modulo_i64};
use super::node::{ExprId, FxHashMap, FxHashSet, Node, Relation};
use super::symbol::SymbolId;

/// Programs of at most this many instructions run on a stack-allocated register file.
const REGISTERS: usize = 32;

/// One compiled condition.
#[derive(Clone, Copy, Debug)]
enum Check {
    /// `Σ coefficient*values[symbol] <relation> bound`, terms in `terms[start..end]`.
    Linear {
        start: u32,
        end: u32,
        relation: Relation,
        bound: i64,
    },
    /// A register program in `program[start..end]`; the last register is the result.
    Program { start: u32, end: u32 },
    /// A condition that can never be checked (it mentions an unbacked symbol).
    Never,
}

/// One instruction; operands are registers of the same program.
#[derive(Clone, Copy, Debug)]
enum Op {
    Const(i64),
    Load(u32),
    Scale(u32, i64),
    Add(u32, u32),
    Mul(u32, u32),
    Pow(u32, u32),
    FloorDiv(u32, u32),
    Mod(u32, u32),
    Min(u32, u32),
    Max(u32, u32),
    Compare(u32, Relation, i64),
    And(u32, u32),
    Or(u32, u32),
}

/// The guards of one trace, compiled.
#[derive(Clone, Debug, Default)]
pub struct GuardSet {
    checks: Vec<Check>,
    terms: Vec<(u32, i64)>,
    program: Vec<Op>,
    labels: Vec<String>,
}

impl GuardSet {
    /// Compiles the declared ranges of the backed symbols and the guards of `env`.
    pub fn new(env: &ShapeEnv) -> GuardSet {
        let mut set = GuardSet::default();
        for (index, symbol) in env.symbols().iter().enumerate() {
            if !symbol.is_backed() {
                continue;
            }
            let expr = env.symbol_expr(SymbolId(index as u32));
            let bounds = [
                (Relation::Ge, symbol.declared.finite_lo()),
                (Relation::Le, symbol.declared.finite_hi()),
            ];
            for (relation, bound) in bounds {
                if let Some(bound) = bound {
                    set.push_linear(env, expr, relation, bound);
                    set.labels.push(env.display_relation(relation, expr, bound));
                }
            }
        }
        for guard in env.guards() {
            set.push_condition(env, guard.cond);
            set.labels.push(env.display(guard.cond));
        }
        set
    }

    /// Checks concrete sizes (`values[n]` is the value of `s{n}`): `Err` names the first
    /// condition that fails, or that cannot be evaluated (overflow, division by zero, a
    /// missing value).
    pub fn evaluate(&self, values: &[i64]) -> Result<(), usize> {
        for (index, check) in self.checks.iter().enumerate() {
            if !self.holds(*check, values) {
                return Err(index);
            }
        }
        Ok(())
    }

    /// Number of conditions.
    pub fn len(&self) -> usize {
        self.checks.len()
    }

    /// Whether there is no condition.
    pub fn is_empty(&self) -> bool {
        self.checks.is_empty()
    }

    /// A condition in TSL syntax, for `recompile f: s0 > 2 failed (s0 = 1)`.
    pub fn describe(&self, index: usize) -> Option<&str> {
        self.labels.get(index).map(String::as_str)
    }

    fn holds(&self, check: Check, values: &[i64]) -> bool {
        match check {
            Check::Linear {
                start,
                end,
                relation,
                bound,
            } => {
                let terms = &self.terms[start as usize..end as usize];
                linear_value(terms, values).is_some_and(|value| compare(relation, value, bound))
            }
            Check::Program { start, end } => {
                let program = &self.program[start as usize..end as usize];
                if program.len() <= REGISTERS {
                    run(program, values, &mut [None; REGISTERS])
                } else {
                    run(program, values, &mut vec![None; program.len()])
                }
            }
            Check::Never => false,
        }
    }

    fn push_condition(&mut self, env: &ShapeEnv, cond: ExprId) {
        if env.arena.data(cond).unbacked {
            self.checks.push(Check::Never);
            return;
        }
        if let Node::Compare {
            relation,
            form,
            bound,
        } = *env.arena.node(cond)
        {
            if is_linear_in_symbols(env, form) {
                self.push_linear(env, form, relation, bound);
                return;
            }
        }
        let start = self.program.len() as u32;
        compile(env, cond, &mut self.program);
        let end = self.program.len() as u32;
        self.checks.push(Check::Program { start, end });
    }

    fn push_linear(&mut self, env: &ShapeEnv, form: ExprId, relation: Relation, bound: i64) {
        let start = self.terms.len() as u32;
        match env.arena.node(form) {
            Node::Sum { terms, .. } => {
                for &(term, coefficient) in terms {
                    self.terms.push((backed_number(env, term), coefficient));
                }
            }
            _ => self.terms.push((backed_number(env, form), 1)),
        }
        let end = self.terms.len() as u32;
        self.checks.push(Check::Linear {
            start,
            end,
            relation,
            bound,
        });
    }
}

fn backed_number(env: &ShapeEnv, term: ExprId) -> u32 {
    env.as_symbol(term)
        .map_or(u32::MAX, |symbol| env.symbol(symbol).number)
}

fn is_linear_in_symbols(env: &ShapeEnv, form: ExprId) -> bool {
    match env.arena.node(form) {
        Node::Symbol(_) => true,
        Node::Sum { terms, constant: 0 } => terms.iter().all(|&(t, _)| env.as_symbol(t).is_some()),
        _ => false,
    }
}

/// `Σ coefficient*value` in the order and with the overflow checks of evaluation.
fn linear_value(terms: &[(u32, i64)], values: &[i64]) -> Option<i64> {
    let mut total: i64 = 0;
    for &(symbol, coefficient) in terms {
        let value = *values.get(symbol as usize)?;
        total = total.checked_add(value.checked_mul(coefficient)?)?;
    }
    Some(total)
}

/// Compiles every node of the condition's DAG once, children first.
fn compile(env: &ShapeEnv, cond: ExprId, program: &mut Vec<Op>) {
    let start = program.len();
    let mut order = vec![cond];
    let mut seen: FxHashSet<ExprId> = order.iter().copied().collect();
    let mut index = 0;
    while let Some(&node) = order.get(index) {
        index += 1;
        env.arena.node(node).for_each_child(|child| {
            if seen.insert(child) {
                order.push(child);
            }
        });
    }
    order.sort_unstable();
    let mut registers: FxHashMap<ExprId, u32> = FxHashMap::default();
    for node in order {
        let register = |id: ExprId| registers.get(&id).copied().unwrap_or(0);
        emit(env, node, register, program, start);
        registers.insert(node, (program.len() - start - 1) as u32);
    }
}

/// Appends the instructions of one node; `register` gives its children's registers.
fn emit(
    env: &ShapeEnv,
    expr: ExprId,
    register: impl Fn(ExprId) -> u32,
    program: &mut Vec<Op>,
    start: usize,
) {
    let last = |program: &Vec<Op>| (program.len() - start - 1) as u32;
    let chain = |program: &mut Vec<Op>, args: &[ExprId], join: fn(u32, u32) -> Op| {
        let mut total = register(args[0]);
        for &arg in &args[1..] {
            program.push(join(total, register(arg)));
            total = last(program);
        }
    };
    match env.arena.node(expr) {
        Node::Int(value) => program.push(Op::Const(*value)),
        Node::Bool(value) => program.push(Op::Const(i64::from(*value))),
        Node::Symbol(symbol) => program.push(Op::Load(env.symbol(*symbol).number)),
        Node::Sum { terms, constant } => {
            program.push(Op::Const(*constant));
            for &(term, coefficient) in terms {
                let total = last(program);
                program.push(Op::Scale(register(term), coefficient));
                program.push(Op::Add(total, last(program)));
            }
        }
        Node::Product(factors) => {
            program.push(Op::Const(1));
            for &(factor, exponent) in factors {
                let total = last(program);
                program.push(Op::Pow(register(factor), exponent));
                program.push(Op::Mul(total, last(program)));
            }
        }
        Node::FloorDiv(a, b) => program.push(Op::FloorDiv(register(*a), register(*b))),
        Node::Mod(a, b) => program.push(Op::Mod(register(*a), register(*b))),
        Node::Min(args) => chain(program, args, Op::Min),
        Node::Max(args) => chain(program, args, Op::Max),
        Node::Compare {
            relation,
            form,
            bound,
        } => program.push(Op::Compare(register(*form), *relation, *bound)),
        Node::And(args) => chain(program, args, Op::And),
        Node::Or(args) => chain(program, args, Op::Or),
    }
}

/// Runs a program; `None` registers hold failed evaluations.
fn run(program: &[Op], values: &[i64], registers: &mut [Option<i64>]) -> bool {
    for (index, op) in program.iter().enumerate() {
        let get = |register: u32| registers[register as usize];
        registers[index] = step(*op, values, get);
    }
    registers[program.len() - 1].is_some_and(|value| value != 0)
}

fn step(op: Op, values: &[i64], get: impl Fn(u32) -> Option<i64>) -> Option<i64> {
    let both = |a: u32, b: u32| get(a).zip(get(b));
    match op {
        Op::Const(value) => Some(value),
        Op::Load(symbol) => values.get(symbol as usize).copied(),
        Op::Scale(a, factor) => get(a)?.checked_mul(factor),
        Op::Add(a, b) => both(a, b).and_then(|(x, y)| x.checked_add(y)),
        Op::Mul(a, b) => both(a, b).and_then(|(x, y)| x.checked_mul(y)),
        Op::Pow(a, exponent) => get(a)?.checked_pow(exponent),
        Op::FloorDiv(a, b) => both(a, b).and_then(|(x, y)| floor_div_i64(x, y)),
        Op::Mod(a, b) => both(a, b).and_then(|(x, y)| modulo_i64(x, y)),
        Op::Min(a, b) => both(a, b).map(|(x, y)| x.min(y)),
        Op::Max(a, b) => both(a, b).map(|(x, y)| x.max(y)),
        Op::Compare(a, relation, bound) => get(a).map(|x| i64::from(compare(relation, x, bound))),
        Op::And(a, b) => connective(get(a), get(b), false),
        Op::Or(a, b) => connective(get(a), get(b), true),
    }
}

/// `and`/`or` with evaluation's rule: a decisive operand wins even if the other failed.
fn connective(a: Option<i64>, b: Option<i64>, decisive: bool) -> Option<i64> {
    let is_decisive = |value: Option<i64>| value.is_some_and(|v| (v != 0) == decisive);
    if is_decisive(a) || is_decisive(b) {
        return Some(i64::from(decisive));
    }
    a.and(b).map(|_| i64::from(!decisive))
}
