//! One canonical op on GPU tensors: the shape rule first (so sizes are checked as on the
//! CPU), then views, kernels, or for `unique` the host.

use rand_chacha::ChaCha8Rng;

use super::Gpu;
use super::tensor::Tensor;
use super::views;
use crate::backend::error::KernelError;
use crate::backend::{cpu, host};
use crate::dtype::Scalar;
use crate::graph::op::{Number, Op};
use crate::graph::passes;
use crate::graph::shape::{self, Concrete, Dim, Meta, RuleErrorKind, UNKNOWN};

impl Gpu {
    /// Computes a canonical op whose sizes are concrete; random numbers come from `rng`, the
    /// host generator, so seeded programs agree across devices.
    pub fn run(
        &self,
        op: &Op,
        inputs: Vec<Tensor>,
        rng: &mut ChaCha8Rng,
    ) -> Result<Vec<Tensor>, KernelError> {
        if let Op::Fused(kernel) = op {
            return self.elementwise(kernel, &inputs, true);
        }
        let metas: Vec<Meta> = inputs.iter().map(meta).collect();
        let outputs = shape::infer(&mut op.clone(), &metas, &mut Concrete).map_err(|error| {
            match error.kind {
                RuleErrorKind::Type => KernelError::Type(error.message),
                RuleErrorKind::Value => KernelError::Value(error.message),
                RuleErrorKind::Shape | RuleErrorKind::DataDependentInt => {
                    KernelError::Shape(error.message)
                }
            }
        })?;
        let one = |tensor: Tensor| Ok(vec![tensor]);
        let input = || inputs.first().ok_or_else(|| arity(op));
        match op {
            Op::Binary(_) | Op::Unary(_) | Op::Cast(_) | Op::Where | Op::Clamp { .. } => {
                let output = outputs.first().ok_or_else(|| arity(op))?;
                let kernel = passes::single(op, &metas, output)
                    .ok_or_else(|| KernelError::Internal(format!("no kernel for {op}")))?;
                self.elementwise(&kernel, &inputs, false)
            }
            Op::Full { shape, dtype } => {
                let value = input()?.host_scalar().ok_or_else(|| arity(op))?;
                let output = self.alloc(*dtype, &sizes(shape)?)?;
                let fill = super::kernels::identity(value.dtype(), &output.shape);
                let mut fill = fill;
                fill.body.push(crate::graph::fused::Instr {
                    kind: crate::graph::fused::InstrKind::Cast(0),
                    dtype: *dtype,
                    domain: crate::graph::fused::Domain::Element,
                    member: 0,
                });
                fill.outputs[0].kind = crate::graph::fused::OutputKind::Values(1);
                fill.outputs[0].meta.dtype = *dtype;
                self.elementwise_into(
                    &fill,
                    &[Tensor::scalar(value)],
                    std::slice::from_ref(&output),
                    false,
                )?;
                one(output)
            }
            Op::Arange { start, end, step } => {
                let host = cpu::arange(number(*start)?, number(*end)?, number(*step)?, None)?;
                one(self.upload(&host)?)
            }
            Op::Randn { shape } => one(self.upload(&cpu::randn(&sizes(shape)?, rng)?)?),
            Op::Reshape { shape } => one(self.reshape(input()?, &sizes(shape)?)?),
            Op::Permute { dims } => one(views::permute(input()?, dims)?),
            Op::Squeeze { dims } => one(views::squeeze(input()?, dims)?),
            Op::Unsqueeze { dim } => one(views::unsqueeze(input()?, *dim)?),
            Op::Expand { shape } => one(views::expand(input()?, &sizes(shape)?)?),
            Op::Narrow { dim, start, length } => one(views::narrow(
                input()?,
                *dim,
                size(*start)?,
                size(*length)?,
            )?),
            Op::Split { sizes: parts, dim } => views::split(input()?, &sizes(parts)?, *dim),
            Op::Cat { dim } => one(self.cat(&inputs, *dim, &outputs)?),
            Op::Stack { dim } => {
                let unsqueezed = inputs
                    .iter()
                    .map(|tensor| views::unsqueeze(tensor, *dim))
                    .collect::<Result<Vec<_>, _>>()?;
                one(self.cat(&unsqueezed, *dim, &outputs)?)
            }
            Op::Reduce {
                op: reduce, dims, ..
            } => {
                let output = outputs.first().ok_or_else(|| arity(op))?;
                one(self.reduce(
                    *reduce,
                    input()?,
                    dims.as_deref(),
                    output.dtype,
                    &sizes(&output.shape)?,
                )?)
            }
            Op::Cumsum { dim } => one(self.cumsum(input()?, *dim)?),
            Op::Diff { dim } => one(self.diff(input()?, *dim)?),
            Op::Sort { dim, descending } => self.sort(input()?, *dim, None, *descending),
            Op::TopK { k, dim, largest } => self.sort(input()?, *dim, Some(size(*k)?), *largest),
            Op::IndexSelect { dim } => {
                one(self.index_select(input()?, *dim, second(op, &inputs)?)?)
            }
            Op::Gather { dim } => one(self.gather(input()?, *dim, second(op, &inputs)?)?),
            Op::Index { items } => one(self.index(input()?, items, &inputs[1..])?),
            Op::Nonzero => one(self.nonzero(input()?)?),
            Op::MaskedSelect => one(self.masked_select(input()?, second(op, &inputs)?)?),
            Op::RepeatInterleave { dim } => {
                one(self.repeat_interleave(input()?, second(op, &inputs)?, *dim)?)
            }
            Op::RepeatIndices => one(self.repeat_indices(input()?)?),
            // Sorting for `unique` runs on the host; its size must be read back anyway.
            Op::Unique => self.on_host(op, &inputs, rng),
            Op::MatMul => {
                let output = outputs.first().ok_or_else(|| arity(op))?;
                one(self.matmul(input()?, second(op, &inputs)?, &sizes(&output.shape)?)?)
            }
            // Taken before the output sizes are inferred, above.
            Op::Fused(kernel) => self.elementwise(kernel, &inputs, true),
        }
    }

    /// Runs `op` on the CPU with the inputs downloaded, and uploads the results.
    fn on_host(
        &self,
        op: &Op,
        inputs: &[Tensor],
        rng: &mut ChaCha8Rng,
    ) -> Result<Vec<Tensor>, KernelError> {
        let host = inputs
            .iter()
            .map(|tensor| self.download(tensor))
            .collect::<Result<Vec<host::Tensor>, _>>()?;
        cpu::run(op, host, rng)?
            .iter()
            .map(|tensor| self.upload(tensor))
            .collect()
    }

    /// `tensor` converted to `dtype` (itself when it has that dtype).
    pub(crate) fn cast(
        &self,
        tensor: &Tensor,
        dtype: crate::dtype::DType,
    ) -> Result<Tensor, KernelError> {
        if tensor.dtype == dtype {
            return Ok(tensor.clone());
        }
        let op = Op::Cast(dtype);
        let output = Meta::new(dtype, meta(tensor).shape);
        let kernel = passes::single(&op, &[meta(tensor)], &output)
            .ok_or_else(|| KernelError::Internal("no cast kernel".into()))?;
        Ok(self
            .elementwise(&kernel, std::slice::from_ref(tensor), false)?
            .remove(0))
    }

    /// Joins `inputs` along `dim` by copying each into its slice of the output.
    fn cat(&self, inputs: &[Tensor], dim: usize, outputs: &[Meta]) -> Result<Tensor, KernelError> {
        let meta = outputs.first().ok_or_else(|| arity(&Op::Cat { dim }))?;
        let shape = meta
            .shape
            .iter()
            .map(|dim| size(*dim))
            .collect::<Result<Vec<_>, _>>()?;
        let output = self.alloc(meta.dtype, &shape)?;
        let mut start = 0;
        for input in inputs {
            let length = input.shape.get(dim).copied().unwrap_or(1);
            let slice = views::narrow(&output, dim, start, length)?;
            let source = self.cast(input, meta.dtype)?;
            self.copy_into(&source, &slice)?;
            start += length;
        }
        Ok(output)
    }
}

fn second<'t>(op: &Op, inputs: &'t [Tensor]) -> Result<&'t Tensor, KernelError> {
    inputs.get(1).ok_or_else(|| arity(op))
}

fn meta(tensor: &Tensor) -> Meta {
    Meta::new(
        tensor.dtype,
        tensor.shape.iter().map(|&size| Dim::from(size)).collect(),
    )
}

fn arity(op: &Op) -> KernelError {
    KernelError::Value(format!("{op} received the wrong operands"))
}

fn size(dim: Dim) -> Result<usize, KernelError> {
    let value = dim
        .known()
        .filter(|_| dim != UNKNOWN)
        .ok_or_else(|| KernelError::Value("a size was not resolved before running".into()))?;
    usize::try_from(value)
        .map_err(|_| KernelError::Shape(format!("sizes must not be negative, got {value}")))
}

fn sizes(shape: &[Dim]) -> Result<Vec<usize>, KernelError> {
    shape.iter().map(|dim| size(*dim)).collect()
}

fn number(number: Number) -> Result<Scalar, KernelError> {
    Ok(match number {
        Number::Int(dim) => {
            Scalar::Int(dim.known().ok_or_else(|| {
                KernelError::Value("a size was not resolved before running".into())
            })?)
        }
        Number::Float(value) => Scalar::Float(value),
    })
}
