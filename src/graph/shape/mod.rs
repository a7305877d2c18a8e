//! Shape and dtype rules for every tensor operation, written once for eager and traced code.
//!
//! A rule sees the operands' [`Meta`] (dtype and sizes) and a [`Sizes`] implementation that does
//! size arithmetic and answers size questions. Eagerly every size is a concrete [`Dim::Known`] and
//! [`Concrete`] answers at once; while tracing, sizes are symbolic and the reasoner answers,
//! guarding on input sizes where it must. Rules never stop over a special case they cannot
//! decide (is this size 1? is this index negative?): they take the general path and
//! [`Sizes::require`] what it assumes, which becomes a runtime assert in compiled code.
//!
//! [`infer`] also canonicalises the op: `-1` sizes resolved, negative starts wrapped, squeezes
//! narrowed to the dims that really are 1.

mod elementwise;
mod index;
mod layout;
mod reduce;
mod sort;

pub use elementwise::{binary_dtype, broadcast, unary_dtype};
pub use index::python_slice_length;
pub use layout::arange_direction_message;
pub use reduce::reduce_dtype;

use std::fmt;

use super::op::Op;
use crate::dtype::DType;
pub use crate::sym::Cmp;
use crate::sym::ExprId;

/// A size: a concrete integer, or (while tracing) an expression of the symbolic engine.
/// A symbolic size is never a constant: constants are always `Known`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dim {
    Known(i64),
    Sym(ExprId),
}

impl Dim {
    pub const ZERO: Dim = Dim::Known(0);
    pub const ONE: Dim = Dim::Known(1);

    pub fn known(self) -> Option<i64> {
        match self {
            Dim::Known(value) => Some(value),
            Dim::Sym(_) => None,
        }
    }
}

impl From<i64> for Dim {
    fn from(value: i64) -> Dim {
        Dim::Known(value)
    }
}

impl From<usize> for Dim {
    fn from(value: usize) -> Dim {
        Dim::Known(value as i64)
    }
}

/// Which diagnostic a rule failure becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleErrorKind {
    Shape,
    Type,
    Value,
    /// A concrete integer was needed from a data-dependent size.
    DataDependentInt,
}

/// Why an operation cannot apply to its operands.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleError {
    pub kind: RuleErrorKind,
    pub message: String,
    pub help: Option<String>,
    /// For a data-dependent failure, the size that could not be made concrete.
    pub subject: Option<Dim>,
}

impl RuleError {
    pub fn shape(message: impl Into<String>) -> RuleError {
        RuleError {
            kind: RuleErrorKind::Shape,
            message: message.into(),
            help: None,
            subject: None,
        }
    }

    pub fn type_error(message: impl Into<String>) -> RuleError {
        RuleError {
            kind: RuleErrorKind::Type,
            message: message.into(),
            help: None,
            subject: None,
        }
    }

    pub fn value(message: impl Into<String>) -> RuleError {
        RuleError {
            kind: RuleErrorKind::Value,
            message: message.into(),
            help: None,
            subject: None,
        }
    }

    /// A concrete integer was needed from `subject`, which depends on data.
    pub fn data_dependent(subject: Dim, message: impl Into<String>) -> RuleError {
        RuleError {
            kind: RuleErrorKind::DataDependentInt,
            message: message.into(),
            help: None,
            subject: Some(subject),
        }
    }

    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> RuleError {
        self.help = Some(help.into());
        self
    }
}

pub type RuleResult<T> = Result<T, RuleError>;

/// Size arithmetic and size questions, answered concretely or by the symbolic reasoner.
pub trait Sizes {
    fn add(&mut self, a: Dim, b: Dim) -> RuleResult<Dim>;
    fn sub(&mut self, a: Dim, b: Dim) -> RuleResult<Dim>;
    fn mul(&mut self, a: Dim, b: Dim) -> RuleResult<Dim>;
    /// Floor division; `b` is known to be positive by the caller.
    fn floor_div(&mut self, a: Dim, b: Dim) -> RuleResult<Dim>;
    /// Python `%`; `b` is known to be positive by the caller.
    fn modulo(&mut self, a: Dim, b: Dim) -> RuleResult<Dim>;
    fn max(&mut self, a: Dim, b: Dim) -> Dim;
    fn min(&mut self, a: Dim, b: Dim) -> Dim;
    /// Answers `a op b` when the sizes decide it (while tracing, possibly by guarding on input
    /// sizes); `None` when the answer depends on data.
    fn decide(&mut self, a: Dim, op: Cmp, b: Dim) -> Option<bool>;
    /// Requires `a op b`: nothing if it is decided true, an error with `message` if decided
    /// false, otherwise a runtime assert with `message`.
    fn require(&mut self, a: Dim, op: Cmp, b: Dim, message: &dyn Fn() -> String) -> RuleResult<()>;
    /// Requires `a op b` on the general path of a rule whose special case eager code would
    /// take (a size of 1 broadcast, a `-1`, a negative start that wraps). With concrete sizes
    /// this is [`Sizes::require`] with `error`. While tracing, an undecided `a op b` becomes a
    /// runtime assert that fails with `check-failed` naming `assumption` (eager code may have
    /// succeeded there), and one decided false an assert that always fails.
    fn assume_general(
        &mut self,
        a: Dim,
        op: Cmp,
        b: Dim,
        error: &dyn Fn() -> String,
        assumption: &dyn Fn() -> String,
    ) -> RuleResult<()> {
        let _ = assumption;
        self.require(a, op, b, error)
    }
    /// Declares `d` a size given to a factory or length argument: at least 0, and size-like.
    fn size_argument(&mut self, d: Dim, what: &str) -> RuleResult<()>;
    /// A concrete value for `d`, guarding on input sizes while tracing; an error when it
    /// depends on data.
    fn concrete(&mut self, d: Dim, why: &str) -> RuleResult<i64>;
    /// A size known only when the operation runs (a data-dependent output size), at most
    /// `max` when that bound is known.
    fn fresh(&mut self, operation: &str, max: Option<Dim>) -> Dim;
    /// How `d` reads in a message (`3`, `s0`, `u1 + 1`).
    fn show(&self, d: Dim) -> String;
}

/// [`Sizes`] for eager code: every size is concrete, every question decided.
#[derive(Debug, Default)]
pub struct Concrete;

/// Eager rules cannot know data-dependent output sizes; the kernel computes them. This marker
/// stands in for such a size in the metadata a rule returns.
pub const UNKNOWN: Dim = Dim::Known(-1);

fn known(d: Dim) -> i64 {
    d.known().expect("eager sizes are concrete")
}

/// How a size reads when no symbolic engine is at hand.
fn show_plain(d: Dim) -> String {
    match d {
        Dim::Known(value) => value.to_string(),
        Dim::Sym(expr) => mark(expr),
    }
}

/// The marks around a symbolic size written into a message (characters of Unicode's private
/// use area, which no message otherwise contains). A message about traced values writes each
/// symbolic size as [`mark`]; the tracer turns the marks into values or names before the
/// message is shown, or into template parts when it becomes a runtime assert's message
/// (`eval::trace::sizes`).
pub const MARK_OPEN: char = '\u{E000}';
pub const MARK_CLOSE: char = '\u{E001}';

/// A symbolic size as it is written into a message: a mark standing for `expr`.
pub fn mark(expr: ExprId) -> String {
    format!("{MARK_OPEN}{}{MARK_CLOSE}", expr.index())
}

fn overflow() -> RuleError {
    RuleError::value("size arithmetic overflows 64-bit integers")
}

impl Sizes for Concrete {
    fn add(&mut self, a: Dim, b: Dim) -> RuleResult<Dim> {
        known(a)
            .checked_add(known(b))
            .map(Dim::Known)
            .ok_or_else(overflow)
    }

    fn sub(&mut self, a: Dim, b: Dim) -> RuleResult<Dim> {
        known(a)
            .checked_sub(known(b))
            .map(Dim::Known)
            .ok_or_else(overflow)
    }

    fn mul(&mut self, a: Dim, b: Dim) -> RuleResult<Dim> {
        known(a)
            .checked_mul(known(b))
            .map(Dim::Known)
            .ok_or_else(overflow)
    }

    fn floor_div(&mut self, a: Dim, b: Dim) -> RuleResult<Dim> {
        let (a, b) = (known(a), known(b));
        if b == 0 {
            return Err(RuleError::value("size division by zero"));
        }
        Ok(Dim::Known(
            a.div_euclid(b) - i64::from(a.rem_euclid(b) != 0 && b < 0),
        ))
    }

    fn modulo(&mut self, a: Dim, b: Dim) -> RuleResult<Dim> {
        let (a, b) = (known(a), known(b));
        if b == 0 {
            return Err(RuleError::value("size division by zero"));
        }
        Ok(Dim::Known(((a % b) + b) % b))
    }

    fn max(&mut self, a: Dim, b: Dim) -> Dim {
        Dim::Known(known(a).max(known(b)))
    }

    fn min(&mut self, a: Dim, b: Dim) -> Dim {
        Dim::Known(known(a).min(known(b)))
    }

    fn decide(&mut self, a: Dim, op: Cmp, b: Dim) -> Option<bool> {
        Some(op.holds(known(a), known(b)))
    }

    fn require(&mut self, a: Dim, op: Cmp, b: Dim, message: &dyn Fn() -> String) -> RuleResult<()> {
        if op.holds(known(a), known(b)) {
            Ok(())
        } else {
            Err(RuleError::shape(message()))
        }
    }

    fn size_argument(&mut self, d: Dim, what: &str) -> RuleResult<()> {
        if known(d) < 0 {
            return Err(RuleError::shape(format!(
                "{what} must not be negative, got {}",
                known(d)
            )));
        }
        Ok(())
    }

    fn concrete(&mut self, d: Dim, _why: &str) -> RuleResult<i64> {
        Ok(known(d))
    }

    fn fresh(&mut self, _operation: &str, _max: Option<Dim>) -> Dim {
        UNKNOWN
    }

    fn show(&self, d: Dim) -> String {
        show_plain(d)
    }
}

/// What a rule knows about a tensor (or a scalar operand, which is 0-d).
#[derive(Clone, Debug, PartialEq)]
pub struct Meta {
    pub dtype: DType,
    pub shape: Vec<Dim>,
}

impl Meta {
    pub fn new(dtype: DType, shape: Vec<Dim>) -> Meta {
        Meta { dtype, shape }
    }

    pub fn scalar(dtype: DType) -> Meta {
        Meta {
            dtype,
            shape: Vec::new(),
        }
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// `f32[2, n]` as messages print a tensor type.
    pub fn show(&self, sizes: &dyn Sizes) -> String {
        format!("{}{}", self.dtype, show_shape(&self.shape, sizes))
    }
}

/// `[2, n]`.
pub fn show_shape(shape: &[Dim], sizes: &dyn Sizes) -> String {
    let dims: Vec<String> = shape.iter().map(|d| sizes.show(*d)).collect();
    format!("[{}]", dims.join(", "))
}

impl fmt::Display for Meta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.show(&Concrete))
    }
}

/// The number of elements of a shape.
pub fn numel(sizes: &mut dyn Sizes, shape: &[Dim]) -> RuleResult<Dim> {
    shape
        .iter()
        .try_fold(Dim::ONE, |total, d| sizes.mul(total, *d))
}

/// Checks the operands and computes the outputs of `op`, canonicalising it in place.
pub fn infer(op: &mut Op, inputs: &[Meta], sizes: &mut dyn Sizes) -> RuleResult<Vec<Meta>> {
    let one = |meta: Meta| Ok(vec![meta]);
    match op {
        Op::Full { shape, dtype } => {
            for d in shape.iter() {
                sizes.size_argument(*d, "a size")?;
            }
            one(Meta::new(*dtype, shape.clone()))
        }
        Op::Arange { start, end, step } => one(layout::arange(*start, *end, *step, sizes)?),
        Op::Randn { shape } => one(layout::randn(shape, sizes)?),
        Op::Binary(binary) => one(elementwise::binary(*binary, &inputs[0], &inputs[1], sizes)?),
        Op::Unary(unary) => one(elementwise::unary(*unary, &inputs[0])?),
        Op::Cast(dtype) => one(Meta::new(*dtype, inputs[0].shape.clone())),
        Op::Where => one(elementwise::where_(inputs, sizes)?),
        Op::Clamp { .. } => one(elementwise::clamp(inputs, sizes)?),
        Op::Reduce { op, dims, keepdim } => one(reduce::reduce(
            *op,
            dims.as_deref(),
            *keepdim,
            &inputs[0],
            sizes,
        )?),
        Op::Cumsum { .. } => one(reduce::cumsum(&inputs[0])),
        Op::Diff { dim } => one(reduce::diff(*dim, &inputs[0], sizes)?),
        Op::Sort { .. } => Ok(sort::sort(&inputs[0])),
        Op::TopK { k, dim, .. } => sort::topk(&inputs[0], *k, *dim, sizes),
        Op::MatMul => one(elementwise::matmul(&inputs[0], &inputs[1], sizes)?),
        Op::Index { items } => one(index::index(items, inputs, sizes)?),
        Op::Narrow { dim, start, length } => {
            one(index::narrow_rule(&inputs[0], *dim, start, *length, sizes)?)
        }
        Op::IndexSelect { dim } => one(index::index_select(&inputs[0], &inputs[1], *dim, sizes)?),
        Op::Gather { dim } => one(index::gather(&inputs[0], &inputs[1], *dim, sizes)?),
        Op::Nonzero => one(index::nonzero(&inputs[0], sizes)?),
        Op::MaskedSelect => one(index::masked_select(&inputs[0], &inputs[1], sizes)?),
        Op::RepeatInterleave { dim } => one(index::repeat_interleave(
            &inputs[0], &inputs[1], *dim, sizes,
        )?),
        Op::RepeatIndices => one(index::repeat_indices(&inputs[0], sizes)?),
        Op::Unique => one(index::unique(&inputs[0], sizes)?),
        Op::Reshape { shape } => {
            *shape = layout::reshape(&inputs[0], shape, sizes)?;
            one(Meta::new(inputs[0].dtype, shape.clone()))
        }
        Op::Permute { dims } => one(Meta::new(
            inputs[0].dtype,
            layout::permute(&inputs[0], dims, sizes)?,
        )),
        Op::Squeeze { dims } => one(Meta::new(
            inputs[0].dtype,
            layout::squeeze(&inputs[0], dims, sizes),
        )),
        Op::Unsqueeze { dim } => one(Meta::new(
            inputs[0].dtype,
            layout::unsqueeze(&inputs[0], *dim),
        )),
        Op::Expand { shape } => {
            *shape = layout::expand(&inputs[0], shape, sizes)?;
            one(Meta::new(inputs[0].dtype, shape.clone()))
        }
        Op::Cat { dim } => one(layout::cat(inputs, *dim, sizes)?),
        Op::Stack { dim } => one(layout::stack(inputs, *dim, sizes)?),
        Op::Split { sizes: parts, dim } => layout::split(&inputs[0], parts, *dim, sizes),
        Op::Fused(kernel) => Ok(kernel.output_metas()),
    }
}
