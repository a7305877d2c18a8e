//! Elementwise kernels on tensors: fused groups, single ops (one-member kernels), copies.

use std::sync::Arc;

use super::Walk;
use crate::backend::error::KernelError;
use crate::backend::gpu::batch::Report;
use crate::backend::gpu::codegen::Param;
use crate::backend::gpu::codegen::elementwise::{ElementwiseSpec, elementwise};
use crate::backend::gpu::tensor::Tensor;
use crate::backend::gpu::{Gpu, stored_size};
use crate::dtype::{DType, Scalar};
use crate::graph::fused::{Domain, FusedKernel, FusedOutput, Instr, InstrKind, Member, OutputKind};
use crate::graph::semantics::Fault;
use crate::graph::shape::{Dim, Meta};

impl Gpu {
    /// Computes `kernel` on `inputs` into new contiguous outputs. `fused`: the kernel came
    /// from the fusion pass, so an element error names the member that raised it.
    pub(crate) fn elementwise(
        &self,
        kernel: &FusedKernel,
        inputs: &[Tensor],
        fused: bool,
    ) -> Result<Vec<Tensor>, KernelError> {
        let shape = concrete(&kernel.shape)?;
        let aliased = overwritable(kernel, inputs, &shape);
        let outputs = kernel
            .outputs
            .iter()
            .zip(&aliased)
            .map(|(output, alias)| match alias {
                Some(input) => Ok(inputs[*input].reused(output.meta.dtype, &shape)),
                None => self.alloc(output.meta.dtype, &shape),
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.write(kernel, inputs, &outputs, &aliased, fused)?;
        if aliased.iter().any(Option::is_some) {
            self.count(|stats| stats.in_place += 1);
        }
        Ok(outputs)
    }

    /// Computes `kernel` on `inputs`, writing into the views `outputs` (of its shape).
    pub(crate) fn elementwise_into(
        &self,
        kernel: &FusedKernel,
        inputs: &[Tensor],
        outputs: &[Tensor],
        fused: bool,
    ) -> Result<(), KernelError> {
        self.write(kernel, inputs, outputs, &vec![None; outputs.len()], fused)
    }

    fn write(
        &self,
        kernel: &FusedKernel,
        inputs: &[Tensor],
        outputs: &[Tensor],
        aliased: &[Option<usize>],
        fused: bool,
    ) -> Result<(), KernelError> {
        if inputs.len() != kernel.inputs.len() || outputs.len() != kernel.outputs.len() {
            return Err(KernelError::Internal(
                "a kernel received the wrong number of tensors".into(),
            ));
        }
        let shape = concrete(&kernel.shape)?;
        let tensors: Vec<&Tensor> = inputs.iter().chain(outputs).collect();
        let walk = Walk::new(&shape, &tensors)?;
        let numel = walk.numel();
        if numel == 0 || shape.contains(&0) {
            return Ok(());
        }
        let layouts = walk.layouts();
        let spec = ElementwiseSpec {
            kernel,
            rank: walk.shape.len(),
            inputs: layouts[..inputs.len()].to_vec(),
            outputs: layouts[inputs.len()..].to_vec(),
            aliased: aliased.to_vec(),
        };
        let wgsl = elementwise(&spec).map_err(KernelError::Internal)?;
        let slots = self.fault_slots(kernel, fused)?;
        // Bindings: the inputs, then the outputs that do not overwrite an input.
        let buffers: Vec<Arc<_>> = inputs
            .iter()
            .chain(
                outputs
                    .iter()
                    .zip(aliased)
                    .filter(|(_, alias)| alias.is_none())
                    .map(|(output, _)| output),
            )
            .filter_map(|tensor| tensor.buffer().cloned())
            .collect();
        let mut value = |param: Param| -> Result<u32, KernelError> {
            Ok(match param {
                Param::Count => numel as u32,
                Param::Size(d) => walk.shape[d as usize] as u32,
                Param::Offset(t) => walk.tensors[t as usize].2 as u32,
                Param::Stride(t, d) => walk.tensors[t as usize].1[d as usize] as u32,
                Param::ScalarLow(t) => scalar_words(tensors[t as usize]).0,
                Param::ScalarHigh(t) => scalar_words(tensors[t as usize]).1,
                Param::Slot(k) => slots[k as usize],
                Param::Value(_) | Param::Zero => 0,
            })
        };
        self.launch_each(&wgsl, buffers, numel, &mut value)
    }

    /// A status slot per fallible instruction of `kernel`, in order.
    fn fault_slots(&self, kernel: &FusedKernel, fused: bool) -> Result<Vec<u32>, KernelError> {
        let mut slots = Vec::new();
        for instr in &kernel.body {
            let InstrKind::Binary(op, ..) = instr.kind else {
                continue;
            };
            let Some(fault) = Fault::of(op).filter(|_| instr.dtype == DType::I64) else {
                continue;
            };
            let error = KernelError::from(fault);
            let report = if fused {
                Report::InMember {
                    member: instr.member,
                    report: Box::new(Report::Fixed(error)),
                }
            } else {
                Report::Fixed(error)
            };
            slots.push(self.slot(report)?);
        }
        Ok(slots)
    }

    /// Copies `source` into the view `target` of the same shape and dtype.
    pub(crate) fn copy_into(&self, source: &Tensor, target: &Tensor) -> Result<(), KernelError> {
        let kernel = identity(source.dtype, &target.shape);
        self.elementwise_into(
            &kernel,
            std::slice::from_ref(source),
            std::slice::from_ref(target),
            false,
        )
    }

    /// A host scalar as a one-element tensor in a buffer.
    pub(crate) fn materialize(&self, tensor: &Tensor) -> Result<Tensor, KernelError> {
        match tensor.host_scalar() {
            Some(value) => self.upload(&crate::backend::host::Tensor::scalar(value)),
            None => Ok(tensor.clone()),
        }
    }
}

/// Per output, an input whose buffer it may overwrite: an input nothing else sees, laid out
/// exactly as the output (contiguous over the iteration shape), with elements of the same
/// size, whose buffer no other input of the kernel binds.
fn overwritable(kernel: &FusedKernel, inputs: &[Tensor], shape: &[usize]) -> Vec<Option<usize>> {
    let mut taken = vec![false; inputs.len()];
    kernel
        .outputs
        .iter()
        .map(|output| {
            let candidate = inputs.iter().enumerate().position(|(position, input)| {
                !taken[position]
                    && input.is_sole_view()
                    && input.shape == shape
                    && input.is_contiguous()
                    && stored_size(input.dtype) == stored_size(output.meta.dtype)
                    && !inputs.iter().enumerate().any(|(other, tensor)| {
                        other != position
                            && tensor
                                .buffer()
                                .zip(input.buffer())
                                .is_some_and(|(a, b)| Arc::ptr_eq(a, b))
                    })
            })?;
            taken[candidate] = true;
            Some(candidate)
        })
        .collect()
}

/// The sizes of a resolved kernel shape.
fn concrete(shape: &[Dim]) -> Result<Vec<usize>, KernelError> {
    shape
        .iter()
        .map(|dim| {
            dim.known()
                .and_then(|size| usize::try_from(size).ok())
                .ok_or_else(|| KernelError::Internal("a kernel size was not resolved".into()))
        })
        .collect()
}

/// The two parameter words of a host scalar operand.
fn scalar_words(tensor: &Tensor) -> (u32, u32) {
    match tensor.host_scalar() {
        Some(Scalar::Float(value)) => ((value as f32).to_bits(), 0),
        Some(Scalar::Int(value)) => (value as u32, (value >> 32) as u32),
        Some(Scalar::Bool(value)) => (u32::from(value), 0),
        None => (0, 0),
    }
}

/// The kernel that copies a tensor of `dtype` and `shape`.
pub(crate) fn identity(dtype: DType, shape: &[usize]) -> FusedKernel {
    let shape: Vec<Dim> = shape.iter().map(|&size| Dim::from(size)).collect();
    let meta = Meta::new(dtype, shape.clone());
    FusedKernel {
        shape,
        rows: false,
        inputs: vec![meta.clone()],
        body: vec![Instr {
            kind: InstrKind::Input(0),
            dtype,
            domain: Domain::Element,
            member: 0,
        }],
        outputs: vec![FusedOutput {
            kind: OutputKind::Values(0),
            meta,
            member: 0,
        }],
        members: vec![Member {
            name: "copy",
            span: crate::source::Span::default(),
            trace: Vec::new(),
        }],
    }
}
