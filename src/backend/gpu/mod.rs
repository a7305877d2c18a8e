//! The GPU device (wgpu, Vulkan): tensors in pooled buffers, kernels generated as WGSL, work
//! queued without waiting, failures reported through a status buffer.
//!
//! Code map:
//! - `context`: opening the adapter and device, wgpu errors caught;
//! - `pool`: storage buffers in size classes;
//! - `batch`: queued commands, parameter blocks, pipelines, the status buffer;
//! - `tensor`: views of buffers, and host scalars;
//! - `codegen/`: WGSL from kernel descriptions (pure functions, tested without a GPU);
//! - `run`: an op to kernels; `views`, `transfer`, and one file per kernel family.
//!
//! This module is the only one importing `wgpu` (checked by `tests/architecture.rs`).

mod batch;
pub mod codegen;
mod context;
mod kernels;
mod pool;
mod run;
mod tensor;
mod transfer;
mod views;

use std::sync::{Arc, MutexGuard, Weak};

pub use context::{OpenError, Stats};
pub use tensor::Tensor;

use self::batch::{Command, Pipeline, Report, State};
use self::codegen::{Param, Wgsl};
use self::context::{Context, poisoned};
use self::pool::Buffer;
use crate::backend::error::{KernelError, MAX_ELEMENTS};
use crate::backend::exec::{Deferred, Failure, Site};
use crate::dtype::DType;
use crate::graph::passes::FusionPolicy;

/// How many loop iterations Mesa's llvmpipe runs in one shader invocation before it ends
/// the loops (measured: a product's sums stopped growing there).
const LLVMPIPE_LOOP_ITERATIONS: u64 = 65_535;

/// An open GPU. Cloning shares it; tensors keep it alive.
#[derive(Clone)]
pub struct Gpu(Arc<Context>);

/// Sees whether a GPU is still open without keeping it open: once every interpreter, tensor
/// and queued report that used it is gone, its device must be closed, not held for the rest
/// of the process by a reference cycle.
#[derive(Clone)]
pub struct Watch(Weak<Context>);

impl Watch {
    /// Whether anything still holds the GPU open.
    pub fn is_open(&self) -> bool {
        self.0.strong_count() > 0
    }
}

impl Gpu {
    /// Opens the GPU (`TSL_GPU_ADAPTER` picks among several).
    pub fn open() -> Result<Gpu, OpenError> {
        Context::open().map(|context| Gpu(Arc::new(context)))
    }

    /// What the GPU did so far.
    pub fn stats(&self) -> Stats {
        self.0.stats.lock().map(|stats| *stats).unwrap_or_default()
    }

    pub(crate) fn count(&self, update: impl FnOnce(&mut Stats)) {
        if let Ok(mut stats) = self.0.stats.lock() {
            update(&mut stats);
        }
    }

    /// Whether two handles are the same open GPU.
    pub fn same(&self, other: &Gpu) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// A handle that does not keep the GPU open, to see whether something else still does.
    pub fn watch(&self) -> Watch {
        Watch(Arc::downgrade(&self.0))
    }

    /// Queues a device assert on a one-element bool tensor; a failure is reported by the
    /// next [`Gpu::sync`] at the current site.
    pub fn device_assert(&self, condition: &Tensor) -> Result<(), KernelError> {
        let condition = self.materialize(condition)?;
        let slot = self.slot(Report::Assert)?;
        let wgsl = codegen::assert::device_assert();
        let buffers = condition.buffer().into_iter().cloned().collect();
        let offset = condition.offset as u32;
        self.launch(&wgsl, buffers, 1, &mut |param| {
            Ok(match param {
                Param::Offset(_) => offset,
                Param::Slot(_) => slot,
                _ => 0,
            })
        })
    }

    /// The adapter's name, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The groups the fusion pass may form: elementwise only, and no more tensors per
    /// kernel than the device binds (less the status buffer).
    pub fn fusion_policy(&self) -> FusionPolicy {
        FusionPolicy {
            elementwise_only: true,
            max_tensors: (self.0.limits.max_storage_buffers_per_shader_stage as usize)
                .saturating_sub(1),
            ..FusionPolicy::default()
        }
    }

    /// The site of the operations queued next.
    pub fn set_site(&self, site: Site) {
        if let Ok(mut state) = self.0.state.lock() {
            state.site = site;
        }
    }

    /// Waits for queued work and returns the earliest failure it found, if any.
    pub fn sync(&self) -> Result<Option<Deferred>, KernelError> {
        let found = transfer::harvest(self)?;
        let Some(found) = found else {
            return Ok(None);
        };
        let failure = match transfer::resolve_report(self, &found.report, found.position)? {
            None => Failure::Assert,
            Some(error) => Failure::Kernel(error),
        };
        Ok(Some(Deferred {
            site: found.site,
            failure,
        }))
    }

    /// Reports a failure the work queued at the current site found, now (an op that reads a
    /// size back cannot go on with a wrong one). A failure of an earlier site stays queued
    /// for the executor's sync, which reports it instead of this op's error.
    pub(crate) fn fail_now(&self) -> Result<(), KernelError> {
        transfer::recycle_slots(self)?;
        let mut state = self.state()?;
        let site = state.site;
        let Some(found) = state.found.take_if(|found| found.site == site) else {
            return match state.found {
                Some(_) => Err(KernelError::Internal("an earlier operation failed".into())),
                None => Ok(()),
            };
        };
        drop(state);
        match transfer::resolve_report(self, &found.report, found.position)? {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    fn state(&self) -> Result<MutexGuard<'_, State>, KernelError> {
        self.0.state.lock().map_err(|_| poisoned())
    }

    /// Checks that results of these dtypes and element counts fit what the GPU can hold,
    /// before an operation starts (its kernels refuse them again when they allocate).
    pub fn reserve(&self, results: &[(DType, u64)]) -> Result<(), KernelError> {
        for (dtype, numel) in results {
            let numel = usize::try_from(*numel).unwrap_or(usize::MAX);
            if numel > 0 {
                self.check_size(*dtype, numel)?;
            }
        }
        Ok(())
    }

    /// A contiguous tensor of `shape` whose elements the caller's kernel will write.
    pub(crate) fn alloc(&self, dtype: DType, shape: &[usize]) -> Result<Tensor, KernelError> {
        let buffer = self.buffer(dtype, shape.iter().product())?;
        Ok(Tensor::contiguous(buffer, self.clone(), dtype, shape))
    }

    /// A buffer for `numel` elements, refused past the element limit or the largest
    /// binding the device allows.
    pub(crate) fn buffer(&self, dtype: DType, numel: usize) -> Result<Arc<Buffer>, KernelError> {
        let bytes = self.check_size(dtype, numel)?;
        Ok(Arc::new(self.0.pool.take(bytes)))
    }

    /// The bytes of `numel` elements, refused past the element limit or the largest binding.
    fn check_size(&self, dtype: DType, numel: usize) -> Result<u64, KernelError> {
        if numel > MAX_ELEMENTS {
            return Err(KernelError::TooLarge {
                numel: numel as u128,
            });
        }
        let bytes = (numel as u64) * stored_size(dtype);
        let limit = self.0.max_binding();
        if bytes > limit {
            return Err(KernelError::DeviceLimit(format!(
                "a tensor of {numel} {dtype} elements ({bytes} bytes) is larger than the largest \
                 buffer `{}` can bind ({limit} bytes, its max_storage_buffer_binding_size)",
                self.0.name
            )));
        }
        Ok(bytes)
    }

    /// Refuses a kernel whose invocations would loop more often than the device runs a
    /// shader's loops: Mesa's llvmpipe ends them after 65,535 iterations in all, and the
    /// results past that point would be silently wrong.
    /// `work` names the kernel's work for the message (`a matmul with an inner size of 9`).
    pub(crate) fn check_loop_iterations(
        &self,
        work: &str,
        iterations: u64,
    ) -> Result<(), KernelError> {
        if self.0.name.contains("llvmpipe") && iterations > LLVMPIPE_LOOP_ITERATIONS {
            return Err(KernelError::DeviceLimit(format!(
                "{work} loops {iterations} times in one shader invocation, more than `{}` \
                 runs ({LLVMPIPE_LOOP_ITERATIONS}; Mesa's software driver ends longer loops \
                 early)",
                self.0.name
            )));
        }
        Ok(())
    }

    /// Queues one dispatch of `wgsl` over `groups` workgroups, binding `tensors` in order and
    /// filling the parameters with `value`.
    pub(crate) fn launch(
        &self,
        wgsl: &Wgsl,
        tensors: Vec<Arc<Buffer>>,
        groups: u64,
        value: &mut dyn FnMut(Param) -> Result<u32, KernelError>,
    ) -> Result<(), KernelError> {
        if groups == 0 {
            return Ok(());
        }
        let words = wgsl
            .params
            .iter()
            .map(|param| value(*param))
            .collect::<Result<Vec<u32>, _>>()?;
        let pipeline = self.pipeline(wgsl)?;
        self.count(|stats| stats.dispatches += 1);
        let mut state = self.state()?;
        let params = state.push_params(&words, wgsl.param_vectors());
        state.commands.push(Command::Dispatch {
            pipeline,
            buffers: tensors,
            params,
            groups: grid(groups)?,
        });
        if state.full() {
            self.submit(&mut state)?;
        }
        Ok(())
    }

    /// Queues a dispatch with one invocation per unit of work (`count` of them).
    pub(crate) fn launch_each(
        &self,
        wgsl: &Wgsl,
        tensors: Vec<Arc<Buffer>>,
        count: usize,
        value: &mut dyn FnMut(Param) -> Result<u32, KernelError>,
    ) -> Result<(), KernelError> {
        let size = u64::from(codegen::workgroup_size());
        self.launch(wgsl, tensors, (count as u64).div_ceil(size), value)
    }

    /// The compiled pipeline of a kernel, compiled on first use.
    fn pipeline(&self, wgsl: &Wgsl) -> Result<Arc<Pipeline>, KernelError> {
        if let Some(pipeline) = self.state()?.pipelines.get(&wgsl.source) {
            return Ok(pipeline.clone());
        }
        let pipeline = Arc::new(batch::compile(&self.0.device, wgsl)?);
        self.count(|stats| stats.pipelines += 1);
        self.state()?
            .pipelines
            .insert(wgsl.source.clone(), pipeline.clone());
        Ok(pipeline)
    }

    /// A status slot for failures of work queued now, reported as `report` says.
    pub(crate) fn slot(&self, report: Report) -> Result<u32, KernelError> {
        if let Some(slot) = self.state()?.slot(report.clone()) {
            return Ok(slot);
        }
        // Every slot is taken: check what is queued, keep the earliest failure, start over.
        transfer::recycle_slots(self)?;
        self.state()?
            .slot(report)
            .ok_or_else(|| KernelError::Internal("no status slot is free".into()))
    }

    fn submit(&self, state: &mut State) -> Result<(), KernelError> {
        batch::submit(&self.0.device, &self.0.queue, state, self.0.max_binding());
        self.0.take_error()
    }
}

/// The bytes one element of `dtype` takes in a buffer.
pub(crate) fn stored_size(dtype: DType) -> u64 {
    match dtype {
        DType::I64 => 8,
        DType::F32 | DType::Bool => 4,
    }
}

/// Workgroups as a 2-D grid: at most 65,535 along x, as every device allows.
fn grid(groups: u64) -> Result<(u32, u32), KernelError> {
    const WIDTH: u64 = 65_535;
    let x = groups.min(WIDTH);
    let y = groups.div_ceil(x);
    let y = u32::try_from(y)
        .ok()
        .filter(|y| u64::from(*y) <= WIDTH)
        .ok_or(KernelError::TooLarge {
            numel: u128::from(groups) * 256,
        })?;
    Ok((x as u32, y))
}
