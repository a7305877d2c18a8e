//! Totals: a fused kernel's reductions over every element (or every kept element), folded
//! per task with the accumulators of the reduce kernel and combined in task order, as the
//! reduce kernel combines its blocks.

use super::super::error::{KernelError, format_shape};
use super::super::fold::{All, Any, Best, Fold, ProdF32, ProdI64, SumF32, SumI64};
use super::super::tensor::Element;
use super::lanes::{reduce_bool, reduce_f32, reduce_i64};
use super::layout::{Operand, Values};
use super::slot::{Segment, Slot, View, materialise};
use crate::dtype::{DType, Scalar};
use crate::graph::fused::{FusedKernel, OutputKind};
use crate::graph::op::ReduceOp;

/// The fold of a total output over one task's elements.
pub(crate) enum Accumulator {
    SumF32(SumF32),
    MeanF32(SumF32),
    ProdF32(ProdF32),
    MaxF32(Best<f32, true>),
    MinF32(Best<f32, false>),
    SumI64(SumI64),
    ProdI64(ProdI64),
    MaxI64(Best<i64, true>),
    MinI64(Best<i64, false>),
    All(All),
    Any(Any),
    MaxBool(Best<bool, true>),
    MinBool(Best<bool, false>),
}

impl Accumulator {
    pub fn new(op: ReduceOp, dtype: DType) -> Accumulator {
        match (op, dtype) {
            (ReduceOp::Mean, _) => Accumulator::MeanF32(SumF32::default()),
            (ReduceOp::Prod, DType::F32) => Accumulator::ProdF32(ProdF32::default()),
            (ReduceOp::Max, DType::F32) => Accumulator::MaxF32(Best::default()),
            (ReduceOp::Min, DType::F32) => Accumulator::MinF32(Best::default()),
            (
                ReduceOp::Sum | ReduceOp::Argmax | ReduceOp::Argmin | ReduceOp::All | ReduceOp::Any,
                DType::F32,
            ) => Accumulator::SumF32(SumF32::default()),
            (ReduceOp::Prod, DType::I64) => Accumulator::ProdI64(ProdI64::default()),
            (ReduceOp::Max, DType::I64) => Accumulator::MaxI64(Best::default()),
            (ReduceOp::Min, DType::I64) => Accumulator::MinI64(Best::default()),
            (_, DType::I64) => Accumulator::SumI64(SumI64::default()),
            (ReduceOp::Any, DType::Bool) => Accumulator::Any(Any::default()),
            (ReduceOp::Max, DType::Bool) => Accumulator::MaxBool(Best::default()),
            (ReduceOp::Min, DType::Bool) => Accumulator::MinBool(Best::default()),
            (_, DType::Bool) => Accumulator::All(All::default()),
        }
    }

    /// Folds a slot's values over `segment`.
    pub fn push(
        &mut self,
        slot: &Slot,
        operands: &[Operand<'_>],
        segment: Segment,
    ) -> Result<(), KernelError> {
        let view = View {
            slot,
            operands,
            segment,
        };
        let (mut f32s, mut i64s, mut bools) = (Vec::new(), Vec::new(), Vec::new());
        let values = match self.dtype() {
            DType::F32 => Values::F32(materialise::<f32>(&view, &mut f32s).into()),
            DType::I64 => Values::I64(materialise::<i64>(&view, &mut i64s).into()),
            DType::Bool => Values::Bool(materialise::<bool>(&view, &mut bools).into()),
        };
        self.push_values(&values)
    }

    /// The type of the values it folds.
    fn dtype(&self) -> DType {
        match self {
            Accumulator::SumF32(_)
            | Accumulator::MeanF32(_)
            | Accumulator::ProdF32(_)
            | Accumulator::MaxF32(_)
            | Accumulator::MinF32(_) => DType::F32,
            Accumulator::SumI64(_)
            | Accumulator::ProdI64(_)
            | Accumulator::MaxI64(_)
            | Accumulator::MinI64(_) => DType::I64,
            Accumulator::All(_)
            | Accumulator::Any(_)
            | Accumulator::MaxBool(_)
            | Accumulator::MinBool(_) => DType::Bool,
        }
    }

    /// Folds the next values; `Internal` if they are not of the type it folds.
    pub fn push_values(&mut self, values: &Values<'_>) -> Result<(), KernelError> {
        match (self, values) {
            (Accumulator::SumF32(fold) | Accumulator::MeanF32(fold), Values::F32(values)) => {
                fold.push(values);
            }
            (Accumulator::ProdF32(fold), Values::F32(values)) => fold.push(values),
            (Accumulator::MaxF32(fold), Values::F32(values)) => fold.push(values),
            (Accumulator::MinF32(fold), Values::F32(values)) => fold.push(values),
            (Accumulator::SumI64(fold), Values::I64(values)) => fold.push(values),
            (Accumulator::ProdI64(fold), Values::I64(values)) => fold.push(values),
            (Accumulator::MaxI64(fold), Values::I64(values)) => fold.push(values),
            (Accumulator::MinI64(fold), Values::I64(values)) => fold.push(values),
            (Accumulator::All(fold), Values::Bool(values)) => fold.push(values),
            (Accumulator::Any(fold), Values::Bool(values)) => fold.push(values),
            (Accumulator::MaxBool(fold), Values::Bool(values)) => fold.push(values),
            (Accumulator::MinBool(fold), Values::Bool(values)) => fold.push(values),
            _ => {
                return Err(KernelError::Internal(
                    "a total was given values of another type to fold".into(),
                ));
            }
        }
        Ok(())
    }

    /// The task's partial result (a mean's partial is its sum).
    pub fn finish(self) -> Scalar {
        match self {
            Accumulator::SumF32(fold) | Accumulator::MeanF32(fold) => fold.finish().to_scalar(),
            Accumulator::ProdF32(fold) => fold.finish().to_scalar(),
            Accumulator::MaxF32(fold) => fold.finish().to_scalar(),
            Accumulator::MinF32(fold) => fold.finish().to_scalar(),
            Accumulator::SumI64(fold) => fold.finish().to_scalar(),
            Accumulator::ProdI64(fold) => fold.finish().to_scalar(),
            Accumulator::MaxI64(fold) => fold.finish().to_scalar(),
            Accumulator::MinI64(fold) => fold.finish().to_scalar(),
            Accumulator::All(fold) => fold.finish().to_scalar(),
            Accumulator::Any(fold) => fold.finish().to_scalar(),
            Accumulator::MaxBool(fold) => fold.finish().to_scalar(),
            Accumulator::MinBool(fold) => fold.finish().to_scalar(),
        }
    }
}

/// The totals of a kernel from the partial results of each output (its blocks', in order),
/// folded in order as the reduce kernel folds its blocks. `extent` gives, for the value an
/// output reduces, how many elements it has and the shape to name in errors. `Err` for an
/// extremum over no elements.
pub(crate) fn combine_totals(
    kernel: &FusedKernel,
    partials: &[Vec<Scalar>],
    extent: &dyn Fn(usize) -> (usize, Vec<usize>),
) -> Result<Vec<Option<Scalar>>, KernelError> {
    kernel
        .outputs
        .iter()
        .enumerate()
        .map(|(index, output)| {
            let OutputKind::Total(op, value) = output.kind else {
                return Ok(None);
            };
            let (len, shape) = extent(value);
            if len == 0 && op.needs_elements() {
                return Err(KernelError::InMember {
                    member: output.member,
                    error: Box::new(KernelError::Empty(format!(
                        "cannot take {} over an empty extent of a tensor of shape {}",
                        op.name(),
                        format_shape(&shape)
                    ))),
                });
            }
            let dtype = kernel.body[value].dtype;
            let partials = partials.get(index).map_or(&[][..], Vec::as_slice);
            let total = match partials {
                [only] => *only,
                _ => combine(op, dtype, partials),
            };
            Ok(Some(match (op, total) {
                (ReduceOp::Mean, Scalar::Float(sum)) => {
                    Scalar::Float(f64::from(sum as f32 / len as f32))
                }
                _ => total,
            }))
        })
        .collect()
}

/// Folds partial results as the reduce kernel folds its block results.
fn combine(op: ReduceOp, dtype: DType, partials: &[Scalar]) -> Scalar {
    match dtype {
        DType::F32 => {
            let values: Vec<f32> = partials.iter().map(|x| f32::from_scalar(*x)).collect();
            let op = if op == ReduceOp::Mean {
                ReduceOp::Sum
            } else {
                op
            };
            reduce_f32(op, &values)
        }
        DType::I64 => {
            let values: Vec<i64> = partials.iter().map(|x| x.as_i64()).collect();
            reduce_i64(op, &values)
        }
        DType::Bool => {
            let values: Vec<bool> = partials.iter().map(|x| x.as_bool()).collect();
            reduce_bool(op, &values)
        }
    }
}
