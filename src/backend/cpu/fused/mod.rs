//! Evaluates a fused kernel (`Op::Fused`) in one pass over memory.
//!
//! The iteration space is cut into tasks that run in parallel: blocks of [`BLOCK`] elements,
//! or, in a kernel that reduces rows, runs of whole rows. A task walks its part in segments
//! (chunks of [`CHUNK`] elements, or as many whole rows as fit in one, at least one; a
//! per-row value then holds one value per row of the segment, repeated along the rows for the
//! per-element instructions that read it) and computes every instruction over a segment
//! into scratch storages that stay in cache, are reused from segment to segment and are
//! passed on from a value no instruction reads any more to the next one computed, so nothing
//! is allocated per segment; constants and operand reads that are the same in every segment
//! are computed in a task's first segment only. While a task computes a segment, it asks
//! for the next segment's inputs, into the second-level cache (the first holds the segment's
//! own buffers), a share before each instruction and before each output it writes or folds
//! ([`prefetch::Spread`](super::prefetch::Spread)); so does the pass that
//! counts a mask's kept elements. Without the requests, a sum over kept values took 5 to
//! 17% longer and `x[x > 0]` 3 to 10% (varying from one sitting to the next); with requests
//! only between instructions, a kernel of two operands and two short instructions asked for
//! 64 lines at a time and took a quarter longer than with none. Each instruction is the
//! same element function the unfused kernel applies (`graph::semantics`), and reductions use
//! the same accumulators in the same blocks (`fold`), so fused results are bitwise equal to
//! unfused ones.
//!
//! A kernel of `f32` and `bool` elementwise work over many elements is instead compiled to
//! machine code, one loop for all its instructions, with the same bits ([`native`]).
//!
//! Element errors (integer division by zero, a negative integer power, an extremum over an
//! empty row) do not stop the pass; the error of the earliest instruction that failed
//! anywhere is returned, as the member it belongs to ([`KernelError::InMember`]), which is the
//! error the unfused operations would have raised first.

mod collect;
mod eval;
mod lanes;
mod layout;
mod native;
mod partition;
mod sequenced;
mod slot;
mod totals;

use ndarray::{ArrayD, IxDyn};
use rayon::prelude::*;

use crate::backend::exec::KernelCode;
use crate::backend::interrupt::Interrupt;

use self::eval::{Scratch, Task, TaskResult};
use self::layout::Operand;
use self::partition::Partition;
use super::error::{KernelError, Result, checked_numel, zeroed_vec};
use super::fresh::Fresh;
use super::tensor::Tensor;
use crate::dtype::{DType, Scalar};
use crate::graph::fused::{Domain, FusedKernel, OutputKind};
use crate::graph::shape::Dim;

pub use self::native::Native;

/// Elements per segment of a kernel without row reductions: small enough that the buffers
/// of a chain of instructions stay in the first-level cache (4 KiB each for `f32`; at 4,096
/// elements a five-operation chain spilled to the second level and ran about a fifth slower).
pub(crate) const CHUNK: usize = 1024;

/// Computes a fused kernel whose sizes are concrete, on its operands: as machine code where
/// `native` says so and the kernel can be, else interpreted.
pub fn run(kernel: &FusedKernel, inputs: &[Tensor], native: Native) -> Result<Vec<Tensor>> {
    run_telling(kernel, inputs, native).map(|(outputs, _)| outputs)
}

/// [`run`], saying whether the kernel ran as machine code.
pub fn run_telling(
    kernel: &FusedKernel,
    inputs: &[Tensor],
    native: Native,
) -> Result<(Vec<Tensor>, KernelCode)> {
    let shape = concrete(&kernel.shape)?;
    let numel = checked_numel(&shape)?;
    let operands = inputs
        .iter()
        .map(|tensor| Operand::new(tensor, &shape))
        .collect::<Result<Vec<_>>>()?;
    if let Some(outputs) = native::run(kernel, &operands, numel, native) {
        return Ok((outputs?, KernelCode::MachineCode));
    }
    interpreted(kernel, &operands, &shape, numel).map(|outputs| (outputs, KernelCode::Interpreted))
}

/// The kernel's outputs computed by interpreting its instructions.
fn interpreted(
    kernel: &FusedKernel,
    operands: &[Operand<'_>],
    shape: &[usize],
    numel: usize,
) -> Result<Vec<Tensor>> {
    let context = eval::Context {
        kernel,
        operands,
        shape,
    };
    if sequenced::applies(kernel) {
        let (written, count) = sequenced::run(&context, numel)?;
        return outputs(kernel, written, count);
    }
    let plan = Partition::new(&context, numel);
    // Collecting computes only the segments that give output values; without elements,
    // rows give none, yet a row reduction over empty rows must still fail.
    if let Some(index) = collect::collectable(kernel).filter(|_| numel > 0) {
        return collected(&context, &plan, index);
    }
    let written = match repeated_row(&context, &plan)? {
        Some(written) => written,
        None => in_tasks(&context, &plan)?,
    };
    outputs(kernel, written, plan.count)
}

/// The kernel's outputs from what its tasks wrote, and how many elements its mask kept.
fn outputs(kernel: &FusedKernel, (buffers, totals): Written, count: usize) -> Result<Vec<Tensor>> {
    buffers
        .into_iter()
        .zip(&kernel.outputs)
        .zip(totals)
        .map(
            |((buffer, output), total)| match (output.kind, buffer, total) {
                (OutputKind::Values(value), Some(buffer), _) => {
                    buffer.into_tensor(&output_sizes(kernel, value, output, count)?)
                }
                (_, _, Some(total)) => {
                    super::reshape(&Tensor::scalar(total), &concrete(&output.meta.shape)?)
                }
                _ => Ok(Tensor::scalar(Scalar::Int(count as i64))),
            },
        )
        .collect()
}

/// Per output: its buffer (a tensor output) or its value (a total).
type Written = (Vec<Option<Buffer>>, Vec<Option<Scalar>>);

/// The outputs of a kernel whose only tensor output (`index`) is collected without filling
/// it first.
fn collected(context: &eval::Context<'_>, plan: &Partition, index: usize) -> Result<Vec<Tensor>> {
    let kernel = context.kernel;
    let output = &kernel.outputs[index];
    let OutputKind::Values(value) = output.kind else {
        return Err(KernelError::Value(
            "a fused total cannot be collected".into(),
        ));
    };
    let failure = std::sync::Mutex::new(None);
    let interrupt = Interrupt::current();
    let buffer = collect::collect(
        context,
        plan,
        value,
        output.meta.dtype,
        &failure,
        &interrupt,
    )?;
    interrupt.check()?;
    let failure = failure
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((instr, _, error)) = failure {
        return Err(in_member(kernel, instr, error));
    }
    let mut buffer = Some(buffer);
    (kernel.outputs.iter().enumerate())
        .map(
            |(at, output)| match (output.kind, buffer.take_if(|_| at == index)) {
                (OutputKind::Values(value), Some(buffer)) => {
                    buffer.into_tensor(&output_sizes(kernel, value, output, plan.count)?)
                }
                (OutputKind::Count(_), _) => Ok(Tensor::scalar(Scalar::Int(plan.count as i64))),
                (OutputKind::Values(_) | OutputKind::Total(..), _) => Err(KernelError::Internal(
                    "a kernel whose output is collected has no other values or totals".into(),
                )),
            },
        )
        .collect()
}

/// The outputs of a kernel over many rows without elements that has no totals, computed
/// for one row and repeated: each row computes the same values (and fails the same way), and
/// running them one by one cost about 25 ns a row (5 s for `x.sum(1) > 0.0` over 2 * 10^8
/// empty rows, where eager code takes a tenth of a second). `None` for any other kernel.
fn repeated_row(context: &eval::Context<'_>, plan: &Partition) -> Result<Option<Written>> {
    let kernel = context.kernel;
    let values_only =
        (kernel.outputs.iter()).all(|output| matches!(output.kind, OutputKind::Values(_)));
    let Some((one, rows)) = plan.one_empty_row().filter(|_| values_only) else {
        return Ok(None);
    };
    let (buffers, totals) = in_tasks(context, &one)?;
    let buffers = buffers
        .into_iter()
        .map(|buffer| buffer.map(|buffer| buffer.repeated(rows)).transpose())
        .collect::<Result<_>>()?;
    Ok(Some((buffers, totals)))
}

/// A kernel's outputs written in parallel tasks into buffers made first.
fn in_tasks(context: &eval::Context<'_>, plan: &Partition) -> Result<Written> {
    let kernel = context.kernel;
    let mut buffers: Vec<Option<Pending>> = kernel
        .outputs
        .iter()
        .map(|output| match output.kind {
            OutputKind::Values(value) => {
                let lens = plan.output_lens(kernel.body[value].domain);
                Pending::new(output.meta.dtype, lens.iter().sum()).map(Some)
            }
            OutputKind::Total(..) | OutputKind::Count(_) => Ok(None),
        })
        .collect::<Result<_>>()?;
    let tasks = tasks(kernel, plan, &mut buffers);
    // Ctrl-C skips the tasks not yet started.
    let interrupt = Interrupt::current();
    // A task's segments are listed when it starts: listed up front, the rows of a kernel
    // over many short (or empty) rows took more memory than its results.
    let run = |scratch: &mut Scratch, (index, mut task): (usize, Task<'_>)| {
        if interrupt.requested() {
            return TaskResult {
                failure: None,
                totals: Vec::new(),
            };
        }
        task.segments = plan.segments(index);
        context.run(task, scratch)
    };
    let results: Vec<TaskResult> = if tasks.len() > 1 {
        tasks
            .into_par_iter()
            .map_init(|| Scratch::new(kernel), run)
            .collect()
    } else {
        let mut scratch = Scratch::new(kernel);
        tasks
            .into_iter()
            .map(|task| run(&mut scratch, task))
            .collect()
    };
    interrupt.check()?;
    let first_failure = results
        .iter()
        .filter_map(|result| result.failure.as_ref())
        .min_by_key(|(instr, _)| *instr);
    if let Some((instr, error)) = first_failure {
        return Err(in_member(kernel, *instr, error.clone()));
    }
    let extent = |value: usize| match kernel.body[value].domain {
        Domain::Kept => (plan.count, vec![plan.count]),
        Domain::Uniform | Domain::Row | Domain::Element => (plan.numel(), context.shape.to_vec()),
    };
    let partials: Vec<Vec<Scalar>> = (0..kernel.outputs.len())
        .map(|index| {
            (results.iter())
                .filter_map(|result| result.totals.get(index).copied().flatten())
                .collect()
        })
        .collect();
    let totals = totals::combine_totals(kernel, &partials, &extent)?;
    let buffers = (buffers.into_iter())
        .map(|buffer| buffer.map(Pending::finish))
        .collect();
    Ok((buffers, totals))
}

/// An element error of instruction `instr`, as an error of the member it computes for.
fn in_member(kernel: &FusedKernel, instr: usize, error: KernelError) -> KernelError {
    KernelError::InMember {
        member: kernel.body[instr].member,
        error: Box::new(error),
    }
}

/// The sizes of a value output: its own, or for kept values the count and then ones.
fn output_sizes(
    kernel: &FusedKernel,
    value: usize,
    output: &crate::graph::fused::FusedOutput,
    count: usize,
) -> Result<Vec<usize>> {
    if kernel.body[value].domain != Domain::Kept {
        return concrete(&output.meta.shape);
    }
    let mut sizes = vec![1; output.meta.shape.len()];
    if let Some(first) = sizes.first_mut() {
        *first = count;
    }
    Ok(sizes)
}

/// Every task, by index, with its parts of the outputs (its segments are listed when it runs).
fn tasks<'b>(
    kernel: &FusedKernel,
    plan: &Partition,
    buffers: &'b mut [Option<Pending>],
) -> Vec<(usize, Task<'b>)> {
    let mut tasks: Vec<(usize, Task<'b>)> = (0..plan.tasks())
        .map(|index| {
            let task = Task {
                segments: Vec::new(),
                outputs: Vec::new(),
            };
            (index, task)
        })
        .collect();
    for (buffer, output) in buffers.iter_mut().zip(&kernel.outputs) {
        let Some(buffer) = buffer else {
            for (_, task) in &mut tasks {
                task.outputs.push(eval::OutChunk::Total);
            }
            continue;
        };
        let OutputKind::Values(value) = output.kind else {
            continue;
        };
        let lens = plan.output_lens(kernel.body[value].domain);
        for ((_, task), chunk) in tasks.iter_mut().zip(buffer.split(&lens)) {
            task.outputs.push(chunk);
        }
    }
    tasks
}

fn concrete(shape: &[Dim]) -> Result<Vec<usize>> {
    shape
        .iter()
        .map(|dim| {
            dim.known()
                .and_then(|size| usize::try_from(size).ok())
                .ok_or_else(|| KernelError::Value("a size was not resolved before running".into()))
        })
        .collect()
}

/// An output being written by a kernel's tasks, each appending to its part.
enum Pending {
    F32(Fresh<f32>),
    I64(Fresh<i64>),
    Bool(Fresh<bool>),
}

impl Pending {
    /// Room for `len` values, written once by the tasks (never zero-filled first).
    fn new(dtype: DType, len: usize) -> Result<Pending> {
        checked_numel(&[len])?;
        Ok(match dtype {
            DType::F32 => Pending::F32(Fresh::new(len)?),
            DType::I64 => Pending::I64(Fresh::new(len)?),
            DType::Bool => Pending::Bool(Fresh::new(len)?),
        })
    }

    /// The output cut into consecutive parts of `lens` elements.
    fn split(&mut self, lens: &[usize]) -> Vec<eval::OutChunk<'_>> {
        match self {
            Pending::F32(values) => (values.pieces(lens).into_iter())
                .map(eval::OutChunk::F32)
                .collect(),
            Pending::I64(values) => (values.pieces(lens).into_iter())
                .map(eval::OutChunk::I64)
                .collect(),
            Pending::Bool(values) => (values.pieces(lens).into_iter())
                .map(eval::OutChunk::Bool)
                .collect(),
        }
    }

    /// The written output.
    fn finish(self) -> Buffer {
        match self {
            Pending::F32(values) => Buffer::F32(values.finish()),
            Pending::I64(values) => Buffer::I64(values.finish()),
            Pending::Bool(values) => Buffer::Bool(values.finish()),
        }
    }

    /// The output's first `len` values, written through its tail.
    fn finish_first(self, len: usize) -> Buffer {
        match self {
            Pending::F32(values) => Buffer::F32(values.finish_first(len)),
            Pending::I64(values) => Buffer::I64(values.finish_first(len)),
            Pending::Bool(values) => Buffer::Bool(values.finish_first(len)),
        }
    }
}

/// An output's values.
enum Buffer {
    F32(Vec<f32>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
}

impl Buffer {
    /// Gives back the room past the values.
    fn shrink_to_fit(&mut self) {
        match self {
            Buffer::F32(values) => values.shrink_to_fit(),
            Buffer::I64(values) => values.shrink_to_fit(),
            Buffer::Bool(values) => values.shrink_to_fit(),
        }
    }

    /// A buffer of one value as `len` copies of it; an empty one (of a kernel without
    /// elements) stays empty.
    fn repeated(self, len: usize) -> Result<Buffer> {
        /// Zeroed memory is faulted in when it is first used; a fill would touch all of it,
        /// so a value whose bits are all zero is not written.
        fn fill<T: Copy + Default>(
            values: Vec<T>,
            len: usize,
            zero: impl Fn(T) -> bool,
        ) -> Result<Vec<T>> {
            let Some(&value) = values.first() else {
                return Ok(values);
            };
            let mut repeated = zeroed_vec(len)?;
            if !zero(value) {
                repeated.fill(value);
            }
            Ok(repeated)
        }
        Ok(match self {
            Buffer::F32(values) => Buffer::F32(fill(values, len, |x| x.to_bits() == 0)?),
            Buffer::I64(values) => Buffer::I64(fill(values, len, |x| x == 0)?),
            Buffer::Bool(values) => Buffer::Bool(fill(values, len, |x| !x)?),
        })
    }

    /// The output as a tensor of `shape`. The fusion pass gives every output the values of
    /// its shape, so a mismatch is a bug in TSL, not in the program.
    fn into_tensor(self, shape: &[usize]) -> Result<Tensor> {
        let error = |error: ndarray::ShapeError| {
            KernelError::Internal(format!(
                "a fused kernel's output does not have the values of its shape {shape:?}: {error}"
            ))
        };
        let shape = IxDyn(shape);
        Ok(match self {
            Buffer::F32(values) => {
                Tensor::from(ArrayD::from_shape_vec(shape, values).map_err(error)?)
            }
            Buffer::I64(values) => {
                Tensor::from(ArrayD::from_shape_vec(shape, values).map_err(error)?)
            }
            Buffer::Bool(values) => {
                Tensor::from(ArrayD::from_shape_vec(shape, values).map_err(error)?)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Buffer;
    use crate::backend::error::KernelError;
    use crate::diag::Code;
    use crate::source::Span;

    /// An output without the values of its shape is TSL's fault, reported as such.
    #[test]
    fn an_output_of_the_wrong_size_is_an_internal_error() {
        let Err(error) = Buffer::F32(vec![1.0, 2.0]).into_tensor(&[3]) else {
            panic!("two values made a tensor of three");
        };
        assert!(matches!(error, KernelError::Internal(_)), "{error}");
        let diagnostic = error.diagnostic(Span::default());
        assert_eq!(diagnostic.code, Code::InternalError);
        assert!(diagnostic.message.contains("[3]"), "{}", diagnostic.message);
    }
}
