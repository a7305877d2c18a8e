//! Fused kernels compiled to machine code: one loop over the elements per kernel.
//!
//! The interpreter (`eval.rs`) computes each instruction over a segment into a buffer in the
//! first-level cache, so a chain of five operations loads and stores every element six
//! times; on the chain `relu(x * 2.0 + 1.0) * x - 0.5` over 10^7 `f32` that took twice as
//! long as one loop. A kernel of float arithmetic ([`lower`]) is instead compiled with
//! Cranelift into one loop that keeps each element in a register from its operands' loads to
//! its outputs' stores ([`codegen`]), and called over blocks of elements in parallel
//! ([`code`]). Its steps are the element functions of `graph::semantics` instruction for
//! instruction, so its results are bitwise those of the interpreter.
//!
//! Compiling takes about a millisecond, so only kernels over many elements are compiled
//! ([`Native::Large`]), once per distinct loop for the whole process (the cache holds at
//! most [`CACHED`] loops; further kernels are interpreted).

mod code;
mod codegen;
mod lower;
mod steps;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use self::code::{Code, Failure};
use self::lower::Loop;
use super::layout::{Operand, Values};
use super::{Buffer, concrete};
use crate::backend::cpu::tensor::Tensor;
use crate::backend::error::{KernelError, Result};
use crate::graph::fused::FusedKernel;

/// Which fused kernels run as machine code (the others are interpreted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Native {
    /// Kernels of at least [`LARGE`] elements, where compiling once pays for itself.
    #[default]
    Large,
    /// Every kernel that can: to test the compiled loops on small programs.
    Always,
    /// None: every kernel is interpreted.
    Never,
}

/// The fewest elements a kernel has to be compiled under [`Native::Large`].
pub const LARGE: usize = 32 * 1024;

/// Loops compiled at most: each holds a few pages of code for the rest of the process.
const CACHED: usize = 1024;

/// The compiled loops by what they compute.
type Cache = HashMap<Loop, Arc<Code>>;

fn cache() -> &'static Mutex<Cache> {
    static CACHE: std::sync::OnceLock<Mutex<Cache>> = std::sync::OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The kernel's outputs computed by its compiled loop, or `None` when it is interpreted:
/// too small, not of float arithmetic, or on a processor Cranelift does not know.
pub(super) fn run(
    kernel: &FusedKernel,
    operands: &[Operand<'_>],
    numel: usize,
    native: Native,
) -> Option<Result<Vec<Tensor>>> {
    match native {
        Native::Large if numel >= LARGE => {}
        Native::Always if numel > 0 => {}
        Native::Large | Native::Always | Native::Never => return None,
    }
    let mut values = Vec::with_capacity(operands.len());
    let mut whole = Vec::with_capacity(operands.len());
    for operand in operands {
        let Values::F32(data) = operand.values() else {
            return None;
        };
        if !operand.is_full() && data.len() != 1 {
            return None;
        }
        values.push(&data[..]);
        whole.push(operand.is_full());
    }
    let looped = lower::lower(kernel, whole, code::fma()?)?;
    let code = match compiled(looped)? {
        Ok(code) => code,
        Err(error) => return Some(Err(error)),
    };
    Some(
        code.run(&values, numel)
            .and_then(|outputs| tensors(kernel, outputs)),
    )
}

/// The code of `looped`, compiled now if it is not yet; `None` when it is not compiled (the
/// cache is full, or Cranelift does not know this processor).
fn compiled(looped: Loop) -> Option<Result<Arc<Code>>> {
    let mut cache = cache().lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(code) = cache.get(&looped) {
        return Some(Ok(code.clone()));
    }
    if cache.len() >= CACHED {
        return None;
    }
    match Code::compile(&looped) {
        Ok(code) => {
            let code = Arc::new(code);
            cache.insert(looped, code.clone());
            Some(Ok(code))
        }
        Err(Failure::Unsupported) => None,
        Err(Failure::Compile(error)) => Some(Err(KernelError::Internal(format!(
            "a fused kernel could not be compiled to machine code: {error}"
        )))),
    }
}

/// The outputs as tensors of the kernel's output shapes.
fn tensors(kernel: &FusedKernel, outputs: Vec<Buffer>) -> Result<Vec<Tensor>> {
    (kernel.outputs.iter().zip(outputs))
        .map(|(output, values)| values.into_tensor(&concrete(&output.meta.shape)?))
        .collect()
}
