//! Guard programs: a condition compiled to register instructions over the DAG of its
//! expression, each node once, run against concrete sizes with the evaluation order and
//! errors of [`ShapeEnv::eval_bool`]. Programs of up to 32 instructions keep their registers on
//! the stack.

use super::env::ShapeEnv;
use super::eval::{compare, floor_div_i64, modulo_i64};
use super::node::{ExprId, FxHashMap, FxHashSet, Node, Relation};

/// One instruction; operands are registers of the same program.
#[derive(Clone, Copy, Debug)]
pub(super) enum Op {
    Const(i64),
    Load(u32),
    Scale(u32, i64),
    Add(u32, u32),
    Mul(u32, u32),
    Pow(u32, u32),
    FloorDiv(u32, u32),
    Mod(u32, u32),
    /// `x // 2**k` as an arithmetic shift (it floors, as Python does).
    Shift(u32, u32),
    /// `x % 2**k` as a mask (non-negative, as Python's is for a positive divisor).
    Mask(u32, i64),
    Min(u32, u32),
    Max(u32, u32),
    Compare(u32, Relation, i64),
    /// Starts an `i128` accumulator at a constant.
    WideStart(i64),
    /// Adds `coefficient * register` to the accumulator.
    WideAdd(u32, i64),
    /// Compares the accumulator with a bound.
    WideCompare(Relation, i64),
    And(u32, u32),
    Or(u32, u32),
}

/// Compiles every node of the condition's DAG once, children first; constants are loaded
/// where an operation needs them in a register.
pub(super) fn compile(env: &ShapeEnv, cond: ExprId, program: &mut Vec<Op>) {
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
    let mut compiler = Compiler {
        env,
        start: program.len(),
        program,
        registers: FxHashMap::default(),
    };
    for node in order {
        let constant = matches!(env.arena.node(node), Node::Int(_) | Node::Bool(_));
        if !constant || node == cond {
            let register = compiler.emit(node);
            compiler.registers.insert(node, register);
        }
    }
}

struct Compiler<'a> {
    env: &'a ShapeEnv,
    program: &'a mut Vec<Op>,
    start: usize,
    registers: FxHashMap<ExprId, u32>,
}

impl Compiler<'_> {
    /// Appends an instruction and returns its register.
    fn push(&mut self, op: Op) -> u32 {
        self.program.push(op);
        (self.program.len() - self.start - 1) as u32
    }

    /// The register holding a compiled child, loading a constant on first use.
    fn operand(&mut self, expr: ExprId) -> u32 {
        if let Some(&register) = self.registers.get(&expr) {
            return register;
        }
        let value = match self.env.arena.node(expr) {
            Node::Int(value) => *value,
            Node::Bool(value) => i64::from(*value),
            _ => 0,
        };
        let register = self.push(Op::Const(value));
        self.registers.insert(expr, register);
        register
    }

    /// Appends the instructions of one node and returns the register of its value.
    fn emit(&mut self, expr: ExprId) -> u32 {
        match self.env.arena.node(expr) {
            Node::Int(value) => self.push(Op::Const(*value)),
            Node::Bool(value) => self.push(Op::Const(i64::from(*value))),
            Node::Symbol(symbol) => self.push(Op::Load(self.env.symbol(*symbol).number)),
            Node::Sum { terms, constant } => self.sum(terms, *constant),
            Node::Product(factors) => self.product(factors),
            Node::FloorDiv(a, b) => self.divide(*a, *b, false),
            Node::Mod(a, b) => self.divide(*a, *b, true),
            Node::Min(args) => self.chain(args, Op::Min),
            Node::Max(args) => self.chain(args, Op::Max),
            Node::Compare {
                relation,
                form,
                bound,
            } => self.compare(*form, *relation, *bound),
            Node::And(args) => self.chain(args, Op::And),
            Node::Or(args) => self.chain(args, Op::Or),
        }
    }

    /// A comparison: a sum form is accumulated in `i128` by the wide instructions, as
    /// evaluation does, so that a difference leaving `i64` does not fail.
    fn compare(&mut self, form: ExprId, relation: Relation, bound: i64) -> u32 {
        let Node::Sum { terms, constant } = self.env.arena.node(form) else {
            let form = self.operand(form);
            return self.push(Op::Compare(form, relation, bound));
        };
        let registers: Vec<(u32, i64)> = terms
            .iter()
            .map(|&(term, coefficient)| (self.operand(term), coefficient))
            .collect();
        self.push(Op::WideStart(*constant));
        for (register, coefficient) in registers {
            self.push(Op::WideAdd(register, coefficient));
        }
        self.push(Op::WideCompare(relation, bound))
    }

    /// In evaluation order: the constant first, then each term (a zero constant and unit
    /// coefficients change nothing, even on overflow).
    fn sum(&mut self, terms: &[(ExprId, i64)], constant: i64) -> u32 {
        let mut total = (constant != 0).then(|| self.push(Op::Const(constant)));
        for &(term, coefficient) in terms {
            let mut value = self.operand(term);
            if coefficient != 1 {
                value = self.push(Op::Scale(value, coefficient));
            }
            if let Some(sum) = total {
                value = self.push(Op::Add(sum, value));
            }
            total = Some(value);
        }
        total.unwrap_or_else(|| self.push(Op::Const(0)))
    }

    fn product(&mut self, factors: &[(ExprId, u32)]) -> u32 {
        let mut total = None;
        for &(factor, exponent) in factors {
            let mut value = self.operand(factor);
            if exponent != 1 {
                value = self.push(Op::Pow(value, exponent));
            }
            if let Some(product) = total {
                value = self.push(Op::Mul(product, value));
            }
            total = Some(value);
        }
        total.unwrap_or_else(|| self.push(Op::Const(1)))
    }

    /// `//` and `%`, with a shift or a mask for a constant power of two.
    fn divide(&mut self, a: ExprId, b: ExprId, modulo: bool) -> u32 {
        let dividend = self.operand(a);
        let divisor = self.env.as_int(b);
        if let Some(divisor) = divisor.filter(|&d| d > 0 && d.count_ones() == 1) {
            let op = if modulo {
                Op::Mask(dividend, divisor - 1)
            } else {
                Op::Shift(dividend, divisor.trailing_zeros())
            };
            return self.push(op);
        }
        let divisor = self.operand(b);
        self.push(if modulo {
            Op::Mod(dividend, divisor)
        } else {
            Op::FloorDiv(dividend, divisor)
        })
    }

    fn chain(&mut self, args: &[ExprId], join: fn(u32, u32) -> Op) -> u32 {
        let mut total = self.operand(args[0]);
        for &arg in &args[1..] {
            let next = self.operand(arg);
            total = self.push(join(total, next));
        }
        total
    }
}

/// Registers of a running program; `None` marks a failed evaluation.
trait Registers {
    fn get(&self, register: u32) -> Option<i64>;
    fn set(&mut self, register: u32, value: Option<i64>);
}

/// The register file of short programs: values and a bit per failed register, on the stack.
struct Small<const N: usize> {
    values: [i64; N],
    failed: u32,
}

impl<const N: usize> Small<N> {
    fn new() -> Self {
        Small {
            values: [0; N],
            failed: 0,
        }
    }
}

impl<const N: usize> Registers for Small<N> {
    fn get(&self, register: u32) -> Option<i64> {
        (self.failed & (1 << register) == 0).then(|| self.values[register as usize])
    }

    fn set(&mut self, register: u32, value: Option<i64>) {
        match value {
            Some(value) => self.values[register as usize] = value,
            None => self.failed |= 1 << register,
        }
    }
}

impl Registers for Vec<Option<i64>> {
    fn get(&self, register: u32) -> Option<i64> {
        self[register as usize]
    }

    fn set(&mut self, register: u32, value: Option<i64>) {
        self[register as usize] = value;
    }
}

/// Runs a program with registers of the given kind; the result is its last register.
fn run(program: &[Op], values: &[i64], registers: &mut impl Registers) -> bool {
    let mut wide: Option<i128> = None;
    for (index, op) in program.iter().enumerate() {
        let value = match *op {
            Op::WideStart(constant) => {
                wide = Some(i128::from(constant));
                Some(0)
            }
            Op::WideAdd(register, coefficient) => {
                let term = registers
                    .get(register)
                    .map(|v| i128::from(v) * i128::from(coefficient));
                wide = wide
                    .zip(term)
                    .and_then(|(total, term)| total.checked_add(term));
                Some(0)
            }
            Op::WideCompare(relation, bound) => wide
                .take()
                .map(|total| i64::from(compare(relation, total, bound))),
            op => step(op, values, |register| registers.get(register)),
        };
        registers.set(index as u32, value);
    }
    registers
        .get(program.len() as u32 - 1)
        .is_some_and(|value| value != 0)
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
        Op::Shift(a, bits) => get(a).map(|x| x >> bits),
        Op::Mask(a, mask) => get(a).map(|x| x & mask),
        Op::Min(a, b) => both(a, b).map(|(x, y)| x.min(y)),
        Op::Max(a, b) => both(a, b).map(|(x, y)| x.max(y)),
        Op::Compare(a, relation, bound) => {
            get(a).map(|x| i64::from(compare(relation, i128::from(x), bound)))
        }
        Op::WideStart(_) | Op::WideAdd(..) | Op::WideCompare(..) => None,
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

/// Runs a program: true when it evaluates to a non-zero value without error.
pub(super) fn execute(program: &[Op], values: &[i64]) -> bool {
    match program.len() {
        0 => false,
        1..=8 => run(program, values, &mut Small::<8>::new()),
        9..=32 => run(program, values, &mut Small::<32>::new()),
        length => run(program, values, &mut vec![None; length]),
    }
}
