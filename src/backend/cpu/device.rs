//! The CPU as a [`Device`] for the graph executor: tensors are host tensors, and every op runs
//! on the same kernels eager code uses.

use rand_chacha::ChaCha8Rng;

use super::{KernelError, Native, Tensor};
use crate::backend::exec::{Device, KernelCode};
use crate::dtype::{DType, Scalar};
use crate::graph::op::Op;

/// The CPU device, drawing random numbers from the session's generator.
pub struct Cpu<'r> {
    pub rng: &'r mut ChaCha8Rng,
    /// Which fused kernels run as machine code.
    pub native: Native,
}

impl Device for Cpu<'_> {
    type Tensor = Tensor;

    fn upload(&mut self, tensor: &Tensor) -> Result<Tensor, KernelError> {
        Ok(tensor.clone())
    }

    fn download(&mut self, tensor: &Tensor) -> Result<Tensor, KernelError> {
        Ok(tensor.clone())
    }

    fn shape<'t>(&self, tensor: &'t Tensor) -> &'t [usize] {
        tensor.shape()
    }

    fn dtype(&self, tensor: &Tensor) -> DType {
        tensor.dtype()
    }

    fn scalar(&mut self, value: Scalar) -> Result<Tensor, KernelError> {
        Ok(Tensor::scalar(value))
    }

    fn run_telling(
        &mut self,
        op: &Op,
        inputs: Vec<Tensor>,
    ) -> Result<(Vec<Tensor>, Option<KernelCode>), KernelError> {
        let (outputs, code) = match op {
            Op::Fused(kernel) => {
                let (outputs, code) = super::fused::run_telling(kernel, &inputs, self.native)?;
                (outputs, Some(code))
            }
            op => (super::run(op, inputs, self.rng)?, None),
        };
        // A chunked kernel skips its remaining chunks once interrupted: its result is void.
        if crate::backend::interrupt::requested() {
            return Err(KernelError::Interrupted);
        }
        Ok((outputs, code))
    }

    fn reserve(
        &mut self,
        op: &Op,
        operands: &[Tensor],
        results: &[(DType, u64)],
    ) -> Result<(), KernelError> {
        let operands: Vec<&Tensor> = operands.iter().collect();
        super::memory::reserve_for(op, &operands, results)
    }

    fn element(&mut self, tensor: &Tensor) -> Result<Scalar, KernelError> {
        tensor.to_scalar().ok_or_else(|| {
            KernelError::Shape(format!(
                "expected a one-element tensor, got {}{}",
                tensor.dtype(),
                super::format_shape(tensor.shape())
            ))
        })
    }
}
