//! Which fused kernels run as machine code, and the loop each one becomes.
//!
//! A kernel qualifies when every value is an `f32` or a `bool` computed element by element
//! (no row reductions, no kept elements, no totals), its operands are `f32` tensors read
//! whole or single values, its outputs are values of the whole iteration space, and
//! every instruction is one whose element function has the same bits in machine code as in
//! `graph::semantics` (arithmetic, extrema, comparisons, selection, logic, the casts between
//! `f32` and `bool`, `exp` and `sigmoid` spelled out, `log` and `tanh` called). Anything else
//! stays with the interpreter.

use cranelift_codegen::ir::condcodes::FloatCC;

use crate::dtype::DType;
use crate::graph::fused::{Domain, FusedKernel, InstrKind, OutputKind};
use crate::graph::op::{BinaryOp, UnaryOp};
use crate::graph::semantics as element;

/// The loop a kernel becomes: what the code generator compiles and what compiled code is
/// cached by. Two kernels with the same loop share their code.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Loop {
    /// Per operand: read element by element (`true`), or its one element for every element.
    pub whole: Vec<bool>,
    pub steps: Vec<Step>,
    /// The steps written to the outputs, in the kernel's output order: `f32` values, or
    /// `bool` values for masks.
    pub outputs: Vec<usize>,
}

/// One value per element. Masks (`bool` values) hold all ones or all zeros per lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Step {
    /// The operand at this position.
    Input(usize),
    /// An `f32` constant, by its bits.
    Float(u32),
    Bool(bool),
    Float1(Float1, usize),
    Float2(Float2, usize, usize),
    /// Compares two floats (ordered as Rust compares them): a mask.
    Compare(FloatCC, usize, usize),
    /// Is the float NaN, infinite, or zero (`not` of a float): a mask.
    Test(Test, usize),
    /// Both masks, either mask, or the mask inverted.
    And(usize, usize),
    Or(usize, usize),
    Not(usize),
    /// Mask, then-float, else-float.
    Select(usize, usize, usize),
    /// A mask as `1.0` or `0.0`.
    ToFloat(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Float1 {
    Neg,
    Abs,
    Relu,
    Sqrt,
    /// `exp_f32` and `sigmoid_f32`, instruction for instruction (their multiply-adds fused).
    Exp,
    Sigmoid,
    /// The standard library's `ln` and `tanh`, called for each element.
    Log,
    Tanh,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Float2 {
    Add,
    Sub,
    Mul,
    Div,
    Maximum,
    Minimum,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Test {
    IsNan,
    IsInf,
    /// `not` of a float: whether it is zero.
    IsZero,
    /// A float cast to `bool`: whether it is not zero (NaN is not).
    NonZero,
}

impl Step {
    /// The steps this one reads.
    pub fn operands(self) -> impl Iterator<Item = usize> {
        let (a, b, c) = match self {
            Step::Input(_) | Step::Float(_) | Step::Bool(_) => (None, None, None),
            Step::Float1(_, a) | Step::Test(_, a) | Step::Not(a) | Step::ToFloat(a) => {
                (Some(a), None, None)
            }
            Step::Float2(_, a, b) | Step::Compare(_, a, b) | Step::And(a, b) | Step::Or(a, b) => {
                (Some(a), Some(b), None)
            }
            Step::Select(c, a, b) => (Some(c), Some(a), Some(b)),
        };
        a.into_iter().chain(b).chain(c)
    }

    /// Whether the step's values are masks.
    pub fn is_mask(self) -> bool {
        match self {
            Step::Bool(_)
            | Step::Compare(..)
            | Step::Test(..)
            | Step::And(..)
            | Step::Or(..)
            | Step::Not(_) => true,
            Step::Input(_)
            | Step::Float(_)
            | Step::Float1(..)
            | Step::Float2(..)
            | Step::Select(..)
            | Step::ToFloat(_) => false,
        }
    }
}

impl Loop {
    /// Per step: whether it has one value for every element (computed once, before the
    /// loop): a constant, an operand read as one value, or a step of such steps only.
    pub fn uniform(&self) -> Vec<bool> {
        let mut uniform: Vec<bool> = Vec::with_capacity(self.steps.len());
        for step in &self.steps {
            let same = match *step {
                Step::Input(operand) => !self.whole[operand],
                _ => step.operands().all(|operand| uniform[operand]),
            };
            uniform.push(same);
        }
        uniform
    }
}

/// The loop of `kernel` with operands read whole (`true`) or as one value, or `None` when
/// the kernel does not qualify. Without fused multiply-adds (`fma`) in the processor, `exp`
/// and `sigmoid` do not.
pub(super) fn lower(kernel: &FusedKernel, whole: Vec<bool>, fma: bool) -> Option<Loop> {
    if kernel.rows || whole.len() != kernel.inputs.len() {
        return None;
    }
    if (kernel.inputs.iter()).any(|input| input.dtype != DType::F32) {
        return None;
    }
    // The step of each instruction (a cast to its own dtype is its operand's step), and the
    // integer constants, which become steps only through casts to `f32` or `bool`.
    let mut at: Vec<Option<usize>> = Vec::with_capacity(kernel.body.len());
    let mut ints: Vec<Option<i64>> = Vec::with_capacity(kernel.body.len());
    let mut steps: Vec<Step> = Vec::with_capacity(kernel.body.len());
    for instr in &kernel.body {
        if !matches!(instr.domain, Domain::Uniform | Domain::Element) {
            return None;
        }
        if let InstrKind::Int(dim) = instr.kind {
            at.push(None);
            ints.push(Some(dim.known()?));
            continue;
        }
        let dtype = |operand: usize| kernel.body[operand].dtype;
        let step = |operand: usize| at.get(operand).copied().flatten();
        let mask = match instr.dtype {
            DType::F32 => false,
            DType::Bool => true,
            DType::I64 => return None,
        };
        let next = match instr.kind {
            InstrKind::Input(operand) if operand < whole.len() => Step::Input(operand),
            InstrKind::Float(value) if !mask => Step::Float((value as f32).to_bits()),
            InstrKind::Bool(value) if mask => Step::Bool(value),
            InstrKind::Unary(op, a) => unary(op, dtype(a), step(a)?, fma)?,
            InstrKind::Binary(op, a, b) => binary(op, dtype(a), step(a)?, step(b)?)?,
            InstrKind::Cast(a) => match (dtype(a), instr.dtype, ints[a]) {
                (DType::I64, DType::F32, Some(value)) => {
                    Step::Float(element::i64_to_f32(value).to_bits())
                }
                (DType::I64, DType::Bool, Some(value)) => Step::Bool(value != 0),
                (from, to, None) if from == to => {
                    at.push(Some(step(a)?));
                    ints.push(None);
                    continue;
                }
                (DType::Bool, DType::F32, None) => Step::ToFloat(step(a)?),
                (DType::F32, DType::Bool, None) => Step::Test(Test::NonZero, step(a)?),
                _ => return None,
            },
            InstrKind::Where(c, a, b) if !mask => Step::Select(step(c)?, step(a)?, step(b)?),
            InstrKind::Input(_)
            | InstrKind::Int(_)
            | InstrKind::Float(_)
            | InstrKind::Bool(_)
            | InstrKind::Where(..)
            | InstrKind::Reduce(..)
            | InstrKind::Keep(..)
            | InstrKind::Position(_) => return None,
        };
        if next.is_mask() != mask {
            return None;
        }
        at.push(Some(steps.len()));
        ints.push(None);
        steps.push(next);
    }
    let mut outputs = Vec::with_capacity(kernel.outputs.len());
    for output in &kernel.outputs {
        let OutputKind::Values(value) = output.kind else {
            return None;
        };
        let step = at.get(value).copied().flatten()?;
        let dtype = if steps[step].is_mask() {
            DType::Bool
        } else {
            DType::F32
        };
        if output.meta.dtype != dtype || output.meta.shape != kernel.shape {
            return None;
        }
        outputs.push(step);
    }
    Some(Loop {
        whole,
        steps,
        outputs,
    })
}

fn unary(op: UnaryOp, dtype: DType, a: usize, fma: bool) -> Option<Step> {
    if dtype == DType::Bool {
        return (op == UnaryOp::Not).then_some(Step::Not(a));
    }
    if dtype != DType::F32 {
        return None;
    }
    Some(match op {
        UnaryOp::Neg => Step::Float1(Float1::Neg, a),
        UnaryOp::Abs => Step::Float1(Float1::Abs, a),
        UnaryOp::Relu => Step::Float1(Float1::Relu, a),
        UnaryOp::Sqrt => Step::Float1(Float1::Sqrt, a),
        UnaryOp::Not => Step::Test(Test::IsZero, a),
        UnaryOp::IsNan => Step::Test(Test::IsNan, a),
        UnaryOp::IsInf => Step::Test(Test::IsInf, a),
        UnaryOp::Exp if fma => Step::Float1(Float1::Exp, a),
        UnaryOp::Sigmoid if fma => Step::Float1(Float1::Sigmoid, a),
        UnaryOp::Exp | UnaryOp::Sigmoid => return None,
        UnaryOp::Log => Step::Float1(Float1::Log, a),
        UnaryOp::Tanh => Step::Float1(Float1::Tanh, a),
    })
}

fn binary(op: BinaryOp, dtype: DType, a: usize, b: usize) -> Option<Step> {
    if dtype == DType::Bool {
        return match op {
            BinaryOp::And => Some(Step::And(a, b)),
            BinaryOp::Or => Some(Step::Or(a, b)),
            BinaryOp::Add
            | BinaryOp::Sub
            | BinaryOp::Mul
            | BinaryOp::Div
            | BinaryOp::FloorDiv
            | BinaryOp::Rem
            | BinaryOp::Pow
            | BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge
            | BinaryOp::Maximum
            | BinaryOp::Minimum => None,
        };
    }
    if dtype != DType::F32 {
        return None;
    }
    let float2 = |op| Some(Step::Float2(op, a, b));
    let compare = |op| Some(Step::Compare(op, a, b));
    match op {
        BinaryOp::Add => float2(Float2::Add),
        BinaryOp::Sub => float2(Float2::Sub),
        BinaryOp::Mul => float2(Float2::Mul),
        BinaryOp::Div => float2(Float2::Div),
        BinaryOp::Maximum => float2(Float2::Maximum),
        BinaryOp::Minimum => float2(Float2::Minimum),
        BinaryOp::Eq => compare(FloatCC::Equal),
        BinaryOp::Ne => compare(FloatCC::NotEqual),
        BinaryOp::Lt => compare(FloatCC::LessThan),
        BinaryOp::Le => compare(FloatCC::LessThanOrEqual),
        BinaryOp::Gt => compare(FloatCC::GreaterThan),
        BinaryOp::Ge => compare(FloatCC::GreaterThanOrEqual),
        BinaryOp::FloorDiv | BinaryOp::Rem | BinaryOp::Pow | BinaryOp::And | BinaryOp::Or => None,
    }
}
