//! Compiled loops, and the one place they are called.
//!
//! Cranelift compiles a [`Loop`] into machine code held for the rest of the process; the
//! crate hands back only the code's address, so calling it takes `unsafe` twice: to view the
//! address as a function, and to call it. The call is sound because [`Code::run`] checks
//! what the code relies on before calling it: one address per operand and output, every
//! operand read whole holds the elements of the range, every other one holds a value, and
//! every output has room for them; the generated function reads operands only at the
//! positions of its range (or at their one value) and writes outputs only there
//! (`codegen`). Every output position in the range is written (the vector loop and then the
//! scalar loop cover it), so after the calls over the whole length the outputs take their
//! length (`Vec::set_len`), as `fresh.rs` does.

use std::sync::OnceLock;

use cranelift_codegen::ir::UserFuncName;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use rayon::prelude::*;

use super::super::Buffer;
use super::codegen;
use super::lower::Loop;
use crate::backend::error::{KernelError, Result};
use crate::backend::interrupt::Interrupt;
use crate::backend::memory::scratch_vec;

/// Elements one call computes when a kernel runs in parallel.
const BLOCK: usize = 16 * 1024;

/// Kernels of fewer elements run on the calling thread: waking the thread pool costs tens
/// of microseconds, as long as such a kernel takes.
const PARALLEL_FROM: usize = 8 * BLOCK;

/// Operand addresses, output addresses, start, end.
type Entry = unsafe extern "C" fn(*const usize, *const usize, usize, usize);

/// A loop compiled for this processor.
pub(super) struct Code {
    entry: Entry,
    /// Per operand: read whole, or as one value.
    whole: Vec<bool>,
    /// Per output: `bool` values (masks), or `f32` ones.
    masks: Vec<bool>,
}

/// Why a loop has no code.
pub(super) enum Failure {
    /// Cranelift does not generate code for this processor: the interpreter computes.
    Unsupported,
    /// The generator or Cranelift failed: a bug in TSL.
    Compile(String),
}

/// The code generator for the processor this runs on, made once.
fn host() -> Option<&'static OwnedTargetIsa> {
    static HOST: OnceLock<Option<OwnedTargetIsa>> = OnceLock::new();
    HOST.get_or_init(|| {
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").ok()?;
        flags.set("is_pic", "false").ok()?;
        let builder = cranelift_native::builder().ok()?;
        builder.finish(settings::Flags::new(flags)).ok()
    })
    .as_ref()
}

/// Whether the processor has fused multiply-adds (which `exp` needs, to compute the
/// interpreter's bits at speed); `None` when Cranelift does not know the processor.
pub(super) fn fma() -> Option<bool> {
    let flags = host()?.isa_flags();
    let fma = flags.iter().find(|flag| flag.name == "has_fma");
    Some(fma.and_then(cranelift_codegen::settings::Value::as_bool) == Some(true))
}

impl Code {
    /// Compiles `looped`. Its machine code stays for the rest of the process.
    pub fn compile(looped: &Loop) -> std::result::Result<Code, Failure> {
        let isa = host().ok_or(Failure::Unsupported)?;
        let failed = |error: &dyn std::fmt::Display| Failure::Compile(error.to_string());
        let mut module = JITModule::new(JITBuilder::with_isa(isa.clone(), default_libcall_names()));
        let pointer = module.target_config().pointer_type();
        let signature = codegen::signature(module.make_signature(), pointer);
        let id = (module.declare_function("fused", Linkage::Local, &signature))
            .map_err(|error| failed(&error))?;
        let mut context = module.make_context();
        context.func.signature = signature;
        context.func.name = UserFuncName::user(0, id.as_u32());
        let mut builder = FunctionBuilderContext::new();
        let host = super::steps::Host {
            pointer,
            call: isa.default_call_conv(),
        };
        codegen::define(looped, &mut context.func, &mut builder, host)
            .map_err(|error| failed(&error))?;
        (module.define_function(id, &mut context)).map_err(|error| failed(&error))?;
        module
            .finalize_definitions()
            .map_err(|error| failed(&error))?;
        let address = module.get_finalized_function(id);
        // SAFETY: `address` is the function just defined with `codegen::signature`: four
        // pointer-sized parameters, nothing returned, the platform's C calling convention
        // (the module's default), which is `Entry`.
        #[allow(unsafe_code)]
        let entry = unsafe { std::mem::transmute::<*const u8, Entry>(address) };
        // The code is freed only with the module's memory; it is kept for the process (the
        // cache of loops holds a bounded number).
        std::mem::forget(module);
        Ok(Code {
            entry,
            whole: looped.whole.clone(),
            masks: (looped.outputs.iter())
                .map(|&step| looped.steps[step].is_mask())
                .collect(),
        })
    }

    /// The outputs, of `len` elements each, computed from `operands`.
    pub fn run(&self, operands: &[&[f32]], len: usize) -> Result<Vec<Buffer>> {
        let fits = operands.len() == self.whole.len()
            && (operands.iter().zip(&self.whole)).all(|(values, &whole)| {
                if whole {
                    values.len() == len
                } else {
                    !values.is_empty()
                }
            });
        if !fits {
            return Err(KernelError::Internal(
                "a native loop's operands do not have its elements".into(),
            ));
        }
        let mut outputs = (self.masks.iter())
            .map(|&mask| {
                if mask {
                    scratch_vec::<bool>(len).map(Buffer::Bool)
                } else {
                    scratch_vec::<f32>(len).map(Buffer::F32)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let operands: Vec<usize> = (operands.iter())
            .map(|values| values.as_ptr().expose_provenance())
            .collect();
        let places: Vec<usize> = outputs.iter_mut().map(place).collect();
        let call = |start: usize, end: usize| {
            // SAFETY: the addresses are those of `operands` (each holding the elements of
            // `0..len`, or one value when it is not read whole, as checked above) and of
            // `outputs` (each with room for `len` values); `start..end` lies in `0..len`, and
            // the code reads and writes nothing else (see the module doc).
            #[allow(unsafe_code)]
            unsafe {
                (self.entry)(operands.as_ptr(), places.as_ptr(), start, end);
            }
        };
        let interrupt = Interrupt::current();
        if len < PARALLEL_FROM {
            call(0, len);
        } else {
            (0..len.div_ceil(BLOCK)).into_par_iter().for_each(|block| {
                if !interrupt.requested() {
                    let start = block * BLOCK;
                    call(start, (start + BLOCK).min(len));
                }
            });
        }
        // Blocks skipped for Ctrl-C were not written: the outputs stay empty.
        interrupt.check()?;
        for output in &mut outputs {
            // SAFETY: every call wrote every position of its range in every output (a mask as
            // 0 or 1, a valid `bool`), and the calls covered `0..len` (no block was skipped:
            // the interrupt was not requested).
            #[allow(unsafe_code)]
            unsafe {
                match output {
                    Buffer::F32(values) => values.set_len(len),
                    Buffer::I64(values) => values.set_len(len),
                    Buffer::Bool(values) => values.set_len(len),
                }
            }
        }
        Ok(outputs)
    }
}

/// The address where an output's values go: its capacity.
fn place(output: &mut Buffer) -> usize {
    match output {
        Buffer::F32(values) => values.spare_capacity_mut().as_mut_ptr().expose_provenance(),
        Buffer::I64(values) => values.spare_capacity_mut().as_mut_ptr().expose_provenance(),
        Buffer::Bool(values) => values.spare_capacity_mut().as_mut_ptr().expose_provenance(),
    }
}
