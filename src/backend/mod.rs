//! Backends that execute tensor operations.
//!
//! - `error`: the error every device's kernels return, and the allocation limit;
//! - `host`: tensors in host memory;
//! - `interrupt`: Ctrl-C reaching the executor and chunked kernels;
//! - `memory`: fallible reservation of result buffers (out of memory is an error);
//! - `cpu`: the CPU device (ndarray kernels);
//! - `exec`: the graph executor, which reaches kernels only through its `Device` trait;
//! - `dispatch`: the session's device ([`Target`]) and the tensors it holds ([`Tensor`]):
//!   eager code and compiled graphs both run through it.

pub mod cpu;
mod dispatch;
pub mod error;
pub mod exec;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod host;
pub mod interrupt;
pub mod memory;

pub use cpu::Native;
pub use dispatch::{DeviceKind, Devices, Dispatch, Target, Tensor, Unavailable};
pub use error::{KernelError, MAX_ELEMENTS, format_shape};
#[cfg(feature = "gpu")]
pub use gpu::Stats as GpuStats;
#[cfg(feature = "gpu")]
pub use gpu::Watch as GpuWatch;
