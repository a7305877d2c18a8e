//! Evaluates a fused kernel (`Op::Fused`) in one pass over memory.
//!
//! The iteration space is cut into tasks that run in parallel: blocks of [`BLOCK`] elements,
//! or, in a kernel that reduces rows, runs of whole rows. A task walks its part in segments
//! (chunks of [`CHUNK`] elements, or single rows) and computes every instruction over a
//! segment into scratch buffers that stay in cache and are reused from segment to segment, so
//! nothing is allocated per segment. Each instruction is the same element function the
//! unfused kernel applies (`graph::semantics`), and reductions use the same accumulators in
//! the same blocks (`fold`), so fused results are bitwise equal to unfused ones.
//!
//! Element errors (integer division by zero, a negative integer power, an extremum over an
//! empty row) do not stop the pass; the error of the earliest instruction that failed
//! anywhere is returned, as the member it belongs to ([`KernelError::InMember`]), which is the
//! error the unfused operations would have raised first.

mod eval;
mod layout;

use ndarray::{ArrayD, IxDyn};
use rayon::prelude::*;

use crate::backend::interrupt::Interrupt;

use self::eval::{Scratch, Segment, Task};
use self::layout::Operand;
use super::error::{KernelError, Result, checked_numel};
use super::fold::BLOCK;
use super::tensor::Tensor;
use crate::dtype::DType;
use crate::graph::fused::{FusedKernel, FusedOutput};
use crate::graph::shape::Dim;

/// Elements per segment of a kernel without row reductions: small enough that every
/// instruction's buffer stays in the first-level cache.
pub(crate) const CHUNK: usize = 4096;

/// Computes a fused kernel whose sizes are concrete, on its operands.
pub fn run(kernel: &FusedKernel, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
    let shape = concrete(&kernel.shape)?;
    let numel = checked_numel(&shape)?;
    let operands = inputs
        .iter()
        .map(|tensor| Operand::new(tensor, &shape))
        .collect::<Result<Vec<_>>>()?;
    let plan = Partition::new(kernel, &shape, numel);
    let mut buffers: Vec<Buffer> = kernel
        .outputs
        .iter()
        .map(|output| Buffer::new(output.meta.dtype, plan.output_len(kernel, output)))
        .collect::<Result<_>>()?;
    let tasks = plan.tasks(kernel, &mut buffers);
    let context = eval::Context {
        kernel,
        operands: &operands,
        shape: &shape,
    };
    // Ctrl-C skips the tasks not yet started.
    let interrupt = Interrupt::current();
    let run = |scratch: &mut Scratch, task| {
        if interrupt.requested() {
            return eval::TaskResult {
                failure: None,
                totals: Vec::new(),
            };
        }
        context.run(task, scratch)
    };
    let results: Vec<eval::TaskResult> = if tasks.len() > 1 {
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
        return Err(KernelError::InMember {
            member: kernel.body[*instr].member,
            error: Box::new(error.clone()),
        });
    }
    let totals = eval::combine_totals(kernel, &results, numel, &shape)?;
    buffers
        .into_iter()
        .zip(&kernel.outputs)
        .zip(totals)
        .map(|((buffer, output), total)| {
            let sizes = concrete(&output.meta.shape)?;
            match total {
                Some(value) => super::reshape(&Tensor::scalar(value), &sizes),
                None => buffer.into_tensor(&sizes),
            }
        })
        .collect()
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

/// How the iteration space is cut into tasks and segments.
struct Partition {
    numel: usize,
    /// For a kernel that reduces rows: how many rows, and their length (the last size).
    rows: Option<(usize, usize)>,
    /// Rows (row kernels) or elements (others) per task.
    per_task: usize,
}

impl Partition {
    fn new(kernel: &FusedKernel, shape: &[usize], numel: usize) -> Partition {
        if !kernel.rows {
            return Partition {
                numel,
                rows: None,
                per_task: BLOCK,
            };
        }
        let (length, outer) = shape
            .split_last()
            .map_or((1, &[][..]), |(last, outer)| (*last, outer));
        Partition {
            numel,
            rows: Some((outer.iter().product(), length)),
            per_task: (BLOCK / length.max(1)).max(1),
        }
    }

    /// Elements of an output: one per element, one per row for a per-row value, none
    /// (the accumulators hold it) for a total.
    fn output_len(&self, kernel: &FusedKernel, output: &FusedOutput) -> usize {
        match self.rows {
            _ if output.reduce.is_some() => 0,
            Some((rows, _)) if kernel.body[output.value].row => rows,
            _ => self.numel,
        }
    }

    fn tasks<'b>(&self, kernel: &FusedKernel, buffers: &'b mut [Buffer]) -> Vec<Task<'b>> {
        let units = self.rows.map_or(self.numel, |(rows, _)| rows);
        let mut tasks: Vec<Task<'b>> = (0..units.div_ceil(self.per_task))
            .map(|index| self.task(index))
            .collect();
        let element_span = self
            .rows
            .map_or(self.per_task, |(_, length)| self.per_task * length);
        for (buffer, output) in buffers.iter_mut().zip(&kernel.outputs) {
            if output.reduce.is_some() {
                for task in &mut tasks {
                    task.outputs.push(eval::OutChunk::Total);
                }
                continue;
            }
            let span = if kernel.body[output.value].row {
                self.per_task
            } else {
                element_span
            };
            let dtype = output.meta.dtype;
            let mut chunks = buffer.chunks(span).into_iter();
            for task in &mut tasks {
                let chunk = chunks
                    .next()
                    .unwrap_or_else(|| eval::OutChunk::empty(dtype));
                task.outputs.push(chunk);
            }
        }
        tasks
    }

    fn task<'b>(&self, index: usize) -> Task<'b> {
        let first = index * self.per_task;
        let segments = match self.rows {
            Some((rows, length)) => (first..(first + self.per_task).min(rows))
                .map(|row| Segment {
                    start: row * length,
                    len: length,
                })
                .collect(),
            None => {
                let last = (first + self.per_task).min(self.numel);
                (first..last)
                    .step_by(CHUNK)
                    .map(|start| Segment {
                        start,
                        len: CHUNK.min(last - start),
                    })
                    .collect()
            }
        };
        Task {
            segments,
            outputs: Vec::new(),
        }
    }
}

/// An output being written.
enum Buffer {
    F32(Vec<f32>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
}

impl Buffer {
    fn new(dtype: DType, len: usize) -> Result<Buffer> {
        checked_numel(&[len])?;
        Ok(match dtype {
            DType::F32 => Buffer::F32(vec![0.0; len]),
            DType::I64 => Buffer::I64(vec![0; len]),
            DType::Bool => Buffer::Bool(vec![false; len]),
        })
    }

    fn chunks(&mut self, size: usize) -> Vec<eval::OutChunk<'_>> {
        let size = size.max(1);
        match self {
            Buffer::F32(values) => values.chunks_mut(size).map(eval::OutChunk::F32).collect(),
            Buffer::I64(values) => values.chunks_mut(size).map(eval::OutChunk::I64).collect(),
            Buffer::Bool(values) => values.chunks_mut(size).map(eval::OutChunk::Bool).collect(),
        }
    }

    fn into_tensor(self, shape: &[usize]) -> Result<Tensor> {
        let shape = IxDyn(shape);
        let error = |error: ndarray::ShapeError| KernelError::Shape(error.to_string());
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
