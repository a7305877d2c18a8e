//! The device a session computes on, and the tensors it holds.
//!
//! Eager code and compiled graphs reach kernels the same way: through a [`Dispatch`], the
//! executor's [`Device`] for the session's [`Target`]. A [`Tensor`] remembers which device
//! holds it; an operation on the target first brings its operands there (a host tensor is
//! uploaded, a device tensor downloaded), so values made before the device was switched
//! keep working.

use rand_chacha::ChaCha8Rng;

use super::error::{KernelError, format_shape};
use super::exec::{Deferred, Device, Site};
use super::{cpu, host};
use crate::dtype::{DType, Scalar};
use crate::graph::op::Op;
use crate::graph::passes::FusionPolicy;

/// A concrete tensor and the device that holds it.
#[derive(Clone, Debug)]
pub enum Tensor {
    Host(host::Tensor),
}

impl Tensor {
    pub fn shape(&self) -> &[usize] {
        match self {
            Tensor::Host(tensor) => tensor.shape(),
        }
    }

    pub fn dtype(&self) -> DType {
        match self {
            Tensor::Host(tensor) => tensor.dtype(),
        }
    }

    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// The tensor in host memory (waiting for the device when it is still computing it).
    pub fn to_host(&self) -> Result<host::Tensor, KernelError> {
        match self {
            Tensor::Host(tensor) => Ok(tensor.clone()),
        }
    }

    /// The host tensor, without a copy when this is one.
    pub fn into_host(self) -> Result<host::Tensor, KernelError> {
        match self {
            Tensor::Host(tensor) => Ok(tensor),
        }
    }
}

impl From<host::Tensor> for Tensor {
    fn from(tensor: host::Tensor) -> Tensor {
        Tensor::Host(tensor)
    }
}

/// Where a session computes: chosen with `--device`, `TSL_DEVICE` or the REPL's `:device`.
#[derive(Debug, Default)]
pub enum Target {
    #[default]
    Cpu,
}

impl Target {
    /// The name `--device` takes.
    pub fn name(&self) -> &'static str {
        match self {
            Target::Cpu => "cpu",
        }
    }
}

/// A target with the session's random generator: the [`Device`] through which eager code and
/// the executor run every operation.
pub struct Dispatch<'r> {
    pub target: &'r mut Target,
    pub rng: &'r mut ChaCha8Rng,
}

impl Dispatch<'_> {
    /// Runs one operation of eager code: like [`Device::run`], but any failure the device
    /// found in the data is reported now, as eager code must.
    pub fn run_now(&mut self, op: &Op, inputs: Vec<Tensor>) -> Result<Vec<Tensor>, KernelError> {
        let outputs = self.run(op, inputs)?;
        match self.sync()? {
            None => Ok(outputs),
            Some(Deferred { failure, .. }) => Err(match failure {
                super::exec::Failure::Kernel(error) => error,
                super::exec::Failure::Assert => KernelError::Value("a device check failed".into()),
            }),
        }
    }

    /// A host tensor on the target.
    pub fn place(&mut self, tensor: host::Tensor) -> Result<Tensor, KernelError> {
        self.upload(&tensor)
    }
}

impl Device for Dispatch<'_> {
    type Tensor = Tensor;

    fn upload(&mut self, tensor: &host::Tensor) -> Result<Tensor, KernelError> {
        match self.target {
            Target::Cpu => Ok(Tensor::Host(tensor.clone())),
        }
    }

    fn download(&mut self, tensor: &Tensor) -> Result<host::Tensor, KernelError> {
        tensor.to_host()
    }

    fn shape<'t>(&self, tensor: &'t Tensor) -> &'t [usize] {
        tensor.shape()
    }

    fn dtype(&self, tensor: &Tensor) -> DType {
        tensor.dtype()
    }

    fn scalar(&mut self, value: Scalar) -> Result<Tensor, KernelError> {
        Ok(Tensor::Host(host::Tensor::scalar(value)))
    }

    fn run(&mut self, op: &Op, inputs: Vec<Tensor>) -> Result<Vec<Tensor>, KernelError> {
        match self.target {
            Target::Cpu => {
                let inputs = inputs
                    .into_iter()
                    .map(Tensor::into_host)
                    .collect::<Result<Vec<_>, _>>()?;
                let outputs = cpu::Cpu { rng: self.rng }.run(op, inputs)?;
                Ok(outputs.into_iter().map(Tensor::Host).collect())
            }
        }
    }

    fn reserve(
        &mut self,
        op: &Op,
        operands: &[Tensor],
        results: &[(DType, u64)],
    ) -> Result<(), KernelError> {
        match self.target {
            Target::Cpu => {
                let hosts: Vec<&host::Tensor> = operands
                    .iter()
                    .map(|operand| match operand {
                        Tensor::Host(tensor) => tensor,
                    })
                    .collect();
                cpu::memory::reserve_for(op, &hosts, results)
            }
        }
    }

    fn element(&mut self, tensor: &Tensor) -> Result<Scalar, KernelError> {
        let host = tensor.to_host()?;
        host.to_scalar().ok_or_else(|| {
            KernelError::Shape(format!(
                "expected a one-element tensor, got {}{}",
                host.dtype(),
                format_shape(host.shape())
            ))
        })
    }

    fn set_site(&mut self, _site: Site) {}

    fn fusion_policy(&self) -> FusionPolicy {
        FusionPolicy::default()
    }
}
