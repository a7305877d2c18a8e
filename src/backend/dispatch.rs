//! The device a session computes on, and the tensors it holds.
//!
//! Eager code and compiled graphs reach kernels the same way: through a [`Dispatch`], the
//! executor's [`Device`] for the session's [`Target`]. A [`Tensor`] remembers which device
//! holds it; an operation on the target first brings its operands there (a host tensor is
//! uploaded, a device tensor downloaded), so values made before the device was switched
//! keep working.

use rand_chacha::ChaCha8Rng;

use super::error::{KernelError, format_shape};
use super::exec::{Deferred, Device, Failure, KernelCode, Site};
#[cfg(feature = "gpu")]
use super::gpu;
use super::{cpu, host};
use crate::dtype::{DType, Scalar};
use crate::graph::op::Op;
use crate::graph::passes::FusionPolicy;

/// A concrete tensor and the device that holds it.
#[derive(Clone, Debug)]
pub enum Tensor {
    Host(host::Tensor),
    #[cfg(feature = "gpu")]
    Gpu(gpu::Tensor),
}

impl Tensor {
    pub fn shape(&self) -> &[usize] {
        match self {
            Tensor::Host(tensor) => tensor.shape(),
            #[cfg(feature = "gpu")]
            Tensor::Gpu(tensor) => tensor.shape(),
        }
    }

    pub fn dtype(&self) -> DType {
        match self {
            Tensor::Host(tensor) => tensor.dtype(),
            #[cfg(feature = "gpu")]
            Tensor::Gpu(tensor) => tensor.dtype(),
        }
    }

    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// The host tensor, when the tensor is one.
    pub fn as_host(&self) -> Option<&host::Tensor> {
        match self {
            Tensor::Host(tensor) => Some(tensor),
            #[cfg(feature = "gpu")]
            Tensor::Gpu(_) => None,
        }
    }

    /// The tensor in host memory (waiting for the device when it is still computing it).
    pub fn to_host(&self) -> Result<host::Tensor, KernelError> {
        match self {
            Tensor::Host(tensor) => Ok(tensor.clone()),
            #[cfg(feature = "gpu")]
            Tensor::Gpu(tensor) => tensor.to_host(),
        }
    }

    /// The host tensor, without a copy when this is one.
    pub fn into_host(self) -> Result<host::Tensor, KernelError> {
        match self {
            Tensor::Host(tensor) => Ok(tensor),
            #[cfg(feature = "gpu")]
            Tensor::Gpu(tensor) => tensor.to_host(),
        }
    }

    /// Whether the tensor lives where `target` computes.
    pub fn is_on(&self, target: &Target) -> bool {
        match (self, target) {
            (Tensor::Host(_), Target::Cpu) => true,
            #[cfg(feature = "gpu")]
            (Tensor::Gpu(tensor), Target::Gpu(gpu)) => tensor.is_on(gpu),
            #[cfg(feature = "gpu")]
            _ => false,
        }
    }
}

impl From<host::Tensor> for Tensor {
    fn from(tensor: host::Tensor) -> Tensor {
        Tensor::Host(tensor)
    }
}

/// The devices a session can choose (`--device cpu|gpu`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceKind {
    #[default]
    Cpu,
    Gpu,
}

impl DeviceKind {
    pub fn parse(name: &str) -> Option<DeviceKind> {
        match name.trim().to_ascii_lowercase().as_str() {
            "cpu" => Some(DeviceKind::Cpu),
            "gpu" => Some(DeviceKind::Gpu),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Gpu => "gpu",
        }
    }
}

/// Where a session computes: chosen with `--device`, `TSL_DEVICE` or the REPL's `:device`.
#[derive(Default)]
pub enum Target {
    #[default]
    Cpu,
    #[cfg(feature = "gpu")]
    Gpu(gpu::Gpu),
}

impl Target {
    /// The name `--device` takes.
    pub fn name(&self) -> &'static str {
        match self {
            Target::Cpu => "cpu",
            #[cfg(feature = "gpu")]
            Target::Gpu(_) => "gpu",
        }
    }

    /// What the device is, for messages (`gpu (llvmpipe ...)`).
    pub fn describe(&self) -> String {
        match self {
            Target::Cpu => "cpu".to_string(),
            #[cfg(feature = "gpu")]
            Target::Gpu(gpu) => format!("gpu ({})", gpu.name()),
        }
    }
}

/// The session's devices: the target, and the GPU once opened (kept when the session
/// switches back to the CPU, so switching again is free).
#[derive(Default)]
pub struct Devices {
    pub target: Target,
    #[cfg(feature = "gpu")]
    gpu: Option<gpu::Gpu>,
}

/// Why a device cannot be used: a message and the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable {
    pub message: String,
    pub help: String,
}

impl Devices {
    /// What the GPU did so far, once it was opened.
    #[cfg(feature = "gpu")]
    pub fn gpu_stats(&self) -> Option<gpu::Stats> {
        self.gpu.as_ref().map(gpu::Gpu::stats)
    }

    /// A watch on the GPU, once it was opened.
    #[cfg(feature = "gpu")]
    pub fn gpu_watch(&self) -> Option<gpu::Watch> {
        self.gpu.as_ref().map(gpu::Gpu::watch)
    }

    /// Computes on `kind` from now on, opening the GPU the first time it is asked for.
    pub fn choose(&mut self, kind: DeviceKind) -> Result<(), Unavailable> {
        match kind {
            DeviceKind::Cpu => self.target = Target::Cpu,
            #[cfg(feature = "gpu")]
            DeviceKind::Gpu => {
                let gpu = match &self.gpu {
                    Some(gpu) => gpu.clone(),
                    None => gpu::Gpu::open().map_err(|error| Unavailable {
                        message: error.message(),
                        help: error.help().to_string(),
                    })?,
                };
                self.gpu = Some(gpu.clone());
                self.target = Target::Gpu(gpu);
            }
            #[cfg(not(feature = "gpu"))]
            DeviceKind::Gpu => {
                return Err(Unavailable {
                    message:
                        "this build of tsl has no GPU support (built without the `gpu` feature)"
                            .into(),
                    help: "rebuild with the default features, or run with `--device cpu`".into(),
                });
            }
        }
        Ok(())
    }
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// A target with the session's random generator: the [`Device`] through which eager code and
/// the executor run every operation.
pub struct Dispatch<'r> {
    pub target: &'r mut Target,
    pub rng: &'r mut ChaCha8Rng,
    /// Which fused kernels the CPU runs as machine code.
    pub native: cpu::Native,
}

impl Dispatch<'_> {
    /// Runs one operation of eager code: like [`Device::run`], but any failure the device
    /// found in the data is reported now, as eager code must.
    pub fn run_now(&mut self, op: &Op, inputs: Vec<Tensor>) -> Result<Vec<Tensor>, KernelError> {
        let outputs = self.run(op, inputs)?;
        match self.sync()? {
            None => Ok(outputs),
            Some(Deferred { failure, .. }) => Err(match failure {
                Failure::Kernel(error) => error,
                Failure::Assert => {
                    KernelError::Internal("an eager operation queued a check".into())
                }
            }),
        }
    }

    /// `tensor` on the target (itself when it is there already).
    pub fn place(&mut self, tensor: &Tensor) -> Result<Tensor, KernelError> {
        if tensor.is_on(self.target) {
            return Ok(tensor.clone());
        }
        let host = tensor.to_host()?;
        self.upload(&host)
    }
}

impl Device for Dispatch<'_> {
    type Tensor = Tensor;

    fn upload(&mut self, tensor: &host::Tensor) -> Result<Tensor, KernelError> {
        match self.target {
            Target::Cpu => Ok(Tensor::Host(tensor.clone())),
            #[cfg(feature = "gpu")]
            Target::Gpu(gpu) => gpu.upload(tensor).map(Tensor::Gpu),
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
        match self.target {
            Target::Cpu => Ok(Tensor::Host(host::Tensor::scalar(value))),
            #[cfg(feature = "gpu")]
            Target::Gpu(_) => Ok(Tensor::Gpu(gpu::Tensor::host_value(value))),
        }
    }

    fn run_telling(
        &mut self,
        op: &Op,
        inputs: Vec<Tensor>,
    ) -> Result<(Vec<Tensor>, Option<KernelCode>), KernelError> {
        match self.target {
            Target::Cpu => {
                let inputs = inputs
                    .into_iter()
                    .map(Tensor::into_host)
                    .collect::<Result<Vec<_>, _>>()?;
                let (outputs, code) = cpu::Cpu {
                    rng: self.rng,
                    native: self.native,
                }
                .run_telling(op, inputs)?;
                Ok((outputs.into_iter().map(Tensor::Host).collect(), code))
            }
            #[cfg(feature = "gpu")]
            Target::Gpu(gpu) => {
                let inputs = inputs
                    .into_iter()
                    .map(|tensor| on_gpu(gpu, tensor))
                    .collect::<Result<Vec<_>, _>>()?;
                let outputs = gpu.run(op, inputs, self.rng)?;
                Ok((outputs.into_iter().map(Tensor::Gpu).collect(), None))
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
            // Small results are never reserved: not worth copying the operands' handles.
            Target::Cpu if crate::backend::memory::too_small_to_reserve(results) => Ok(()),
            Target::Cpu => {
                let hosts = operands
                    .iter()
                    .map(|operand| match operand {
                        Tensor::Host(tensor) => Ok(tensor.clone()),
                        #[cfg(feature = "gpu")]
                        Tensor::Gpu(tensor) => tensor.to_host(),
                    })
                    .collect::<Result<Vec<host::Tensor>, KernelError>>()?;
                let hosts: Vec<&host::Tensor> = hosts.iter().collect();
                cpu::memory::reserve_for(op, &hosts, results)
            }
            #[cfg(feature = "gpu")]
            Target::Gpu(gpu) => gpu.reserve(results),
        }
    }

    fn element(&mut self, tensor: &Tensor) -> Result<Scalar, KernelError> {
        #[cfg(feature = "gpu")]
        if let Tensor::Gpu(tensor) = tensor {
            return tensor.element();
        }
        let host = tensor.to_host()?;
        host.to_scalar().ok_or_else(|| {
            KernelError::Shape(format!(
                "expected a one-element tensor, got {}{}",
                host.dtype(),
                format_shape(host.shape())
            ))
        })
    }

    fn set_site(&mut self, site: Site) {
        #[cfg(feature = "gpu")]
        if let Target::Gpu(gpu) = self.target {
            gpu.set_site(site);
        }
        let _ = site;
    }

    fn device_assert(&mut self, condition: &Tensor) -> Result<Option<bool>, KernelError> {
        #[cfg(feature = "gpu")]
        if let (Target::Gpu(gpu), Tensor::Gpu(condition)) = (&*self.target, condition)
            && condition.is_on(gpu)
        {
            return gpu.device_assert(condition).map(|()| None);
        }
        Ok(Some(self.element(condition)?.as_bool()))
    }

    fn sync(&mut self) -> Result<Option<Deferred>, KernelError> {
        match self.target {
            Target::Cpu => Ok(None),
            #[cfg(feature = "gpu")]
            Target::Gpu(gpu) => gpu.sync(),
        }
    }

    fn fusion_policy(&self) -> FusionPolicy {
        match &*self.target {
            Target::Cpu => FusionPolicy::default(),
            #[cfg(feature = "gpu")]
            Target::Gpu(gpu) => gpu.fusion_policy(),
        }
    }
}

/// A tensor on `gpu`: uploaded from the host (or from another GPU through the host).
#[cfg(feature = "gpu")]
fn on_gpu(gpu: &gpu::Gpu, tensor: Tensor) -> Result<gpu::Tensor, KernelError> {
    match tensor {
        Tensor::Gpu(tensor) if tensor.is_on(gpu) => Ok(tensor),
        Tensor::Host(host) if host.ndim() == 0 => host
            .to_scalar()
            .map(gpu::Tensor::host_value)
            .ok_or_else(|| KernelError::Internal("a 0-d tensor without an element".into())),
        other => gpu.upload(&other.into_host()?),
    }
}
