//! Running a traced graph: the executor every backend shares.
//!
//! A run walks the nodes of a [`Plan`] in program order. Symbols get their values as they
//! become known: backed ones from the inputs before the run starts, unbacked ones from the
//! node that binds them (an output size, or the element of an `item`). Symbolic sizes in an
//! op are resolved just before it runs. Asserts and device asserts run where the trace put
//! them, so a failing check stops the run before anything after it runs or prints; prints go
//! to the caller's sink in program order. `cond` runs the branch its predicate picks.
//!
//! What is computed where is the [`Device`]'s business: the executor reaches kernels only
//! through the trait. A device may run work without waiting for it (a GPU queues kernels):
//! then a device assert, or an error a kernel finds in the data, is a [`Deferred`] failure
//! tagged with the node's [`Site`]. The executor synchronises before anything observable
//! (a print, reading an element, reporting a failed host assert, the end of the run) and
//! reports the failure with the earliest site, so every device fails at the same check with
//! the same message as eager code, and nothing after it prints.

mod machine;
mod plan;
mod profile;
mod report;
#[cfg(test)]
mod tests;

pub use plan::Plan;
pub use profile::{KernelCall, KernelCode, Profile};

use crate::backend::error::KernelError;
use crate::backend::host;
use crate::diag::Result;
use crate::dtype::{DType, Scalar};
use crate::graph::op::Op;
use crate::graph::passes::FusionPolicy;

/// A node's place in program order (see `Plan`): the earliest failing site is the failure
/// eager code would have reported first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Site(pub u32);

/// A failure a device found in work it queued, reported at the next [`Device::sync`].
#[derive(Clone, Debug, PartialEq)]
pub struct Deferred {
    /// The site of the failing node (the earliest one, when several failed).
    pub site: Site,
    pub failure: Failure,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// A device assert whose condition was false.
    Assert,
    /// An error an operation found in its data (an integer division by zero, an index out of
    /// range), as the same operation would have returned it on the CPU.
    Kernel(KernelError),
}

/// Where tensors live and how operations on them are computed.
pub trait Device {
    type Tensor: Clone;
    /// A host tensor on the device.
    fn upload(&mut self, tensor: &host::Tensor) -> Result<Self::Tensor, KernelError>;
    /// A device tensor on the host.
    fn download(&mut self, tensor: &Self::Tensor) -> Result<host::Tensor, KernelError>;
    fn shape<'t>(&self, tensor: &'t Self::Tensor) -> &'t [usize];
    fn dtype(&self, tensor: &Self::Tensor) -> DType;
    /// A 0-d tensor holding `value`.
    fn scalar(&mut self, value: Scalar) -> Result<Self::Tensor, KernelError>;
    /// Computes a canonical op whose sizes are all concrete, saying how it computed a fused
    /// kernel where the device can tell (for `tsl run --profile`). A device that queues work
    /// may return before it is done; an error found in the data is then reported by a later
    /// [`Device::sync`] at the site last given to [`Device::set_site`].
    fn run_telling(
        &mut self,
        op: &Op,
        inputs: Vec<Self::Tensor>,
    ) -> Result<(Vec<Self::Tensor>, Option<KernelCode>), KernelError>;
    /// [`Device::run_telling`]'s results alone.
    fn run(
        &mut self,
        op: &Op,
        inputs: Vec<Self::Tensor>,
    ) -> Result<Vec<Self::Tensor>, KernelError> {
        self.run_telling(op, inputs).map(|(outputs, _)| outputs)
    }
    /// The element of a one-element tensor (after the work computing it finished).
    fn element(&mut self, tensor: &Self::Tensor) -> Result<Scalar, KernelError>;

    /// Fails when the results of `op` on `operands` (each a dtype and an element count, as
    /// its node predicts them) cannot be allocated now (see `cpu::memory`); asked before
    /// each op runs, so that running out of memory is an error, not an abort.
    fn reserve(
        &mut self,
        op: &Op,
        operands: &[Self::Tensor],
        results: &[(DType, u64)],
    ) -> Result<(), KernelError> {
        let _ = (op, operands, results);
        Ok(())
    }

    /// The site of the node whose operations run next.
    fn set_site(&mut self, _site: Site) {}

    /// Checks a device assert on a one-element bool tensor: `Some(holds)` when checked now,
    /// `None` when the device queued the check and reports a failure at the next sync.
    fn device_assert(&mut self, condition: &Self::Tensor) -> Result<Option<bool>, KernelError> {
        Ok(Some(self.element(condition)?.as_bool()))
    }

    /// Waits for queued work and returns the earliest deferred failure, if any (clearing it).
    fn sync(&mut self) -> Result<Option<Deferred>, KernelError> {
        Ok(None)
    }

    /// Which groups the fusion pass may form for this device.
    fn fusion_policy(&self) -> FusionPolicy {
        FusionPolicy::default()
    }
}

/// What a run returns: the graph's output with tensors on the device.
#[derive(Clone, Debug, PartialEq)]
pub enum RunValue<T> {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Tensor(T),
    List(Vec<RunValue<T>>),
}

/// Runs `plan`. `tensors` are the inputs in the order of [`Plan::inputs`]; `symbols` holds the
/// values of the backed symbols (by symbol number, at least [`Plan::symbol_count`] long);
/// `constants` are the tensors the graph captured; `print` receives printed lines.
pub fn execute<D: Device>(
    plan: &Plan,
    device: &mut D,
    constants: &[D::Tensor],
    tensors: Vec<D::Tensor>,
    symbols: Vec<i64>,
    print: &mut dyn FnMut(&str),
    profile: Option<&mut Profile>,
) -> Result<RunValue<D::Tensor>> {
    machine::execute(plan, device, constants, tensors, symbols, print, profile)
}
