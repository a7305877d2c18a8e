//! Writing a kernel's only output without filling it with zeros first.
//!
//! Most kernels write one tensor of `f32` or `i64` and nothing else to fold. Their output is
//! collected by rayon straight into fresh memory, as runs of [`RUN`] values: a run is computed
//! from the segments it covers (a worker keeps its last segment's values, so each is computed
//! once per worker) and copied into its place. The runs are then viewed as one flat buffer
//! (`bytemuck`), so no output element is written twice. A zero-filled buffer would cost a
//! whole extra pass over memory, about a fifth of an elementwise kernel's time.
//!
//! rayon writes the runs into the capacity reserved here, so where each run lands is known
//! before it is computed: while a worker computes a run, it asks for the next run's
//! destination and inputs ([`Spread`]), a few cache lines between each two instructions,
//! so that neither the copy nor the first reads wait for memory line by line (the
//! elementwise chain ran about a fifth faster than with one burst of requests per run).
//!
//! Small kernels stay on the calling thread: handing work to the thread pool and waking
//! the caller again costs tens of microseconds on a virtual machine, as much as computing
//! about 64 runs of a short chain alone (a 65,536-element chain ran 30% faster unsplit).
//! A kernel of at most one run does not go through rayon at all: its values are written
//! straight into a vector of their number.

use std::sync::Mutex;

use bytemuck::Pod;
use rayon::prelude::*;

use super::super::error::KernelError;
use super::super::prefetch::{Intent, Spread};
use super::Buffer;
use super::eval::{Context, Scratch};
use super::partition::Partition;
use super::slot::{Lane, Segment, Side};
use crate::backend::interrupt::Interrupt;
use crate::dtype::DType;
use crate::graph::fused::{Domain, FusedKernel, OutputKind};

/// Values per run: one page of `f32`.
const RUN: usize = 1024;

/// The fewest runs a parallel piece holds; kernels with fewer than twice as many are not split.
const MIN_RUNS_PER_PIECE: usize = 64;

/// How many runs ahead of the one computed a worker asks for the destination.
const AHEAD: usize = 1;

/// How many runs ahead of the one computed a worker asks for the inputs.
const INPUTS_AHEAD: usize = 1;

/// The output a kernel can collect this way: its only tensor output, of `f32` or `i64`, in
/// a kernel without totals. Kept values are not collected: a segment that keeps nothing
/// would then never be computed, and an element error in it never seen.
pub(super) fn collectable(kernel: &FusedKernel) -> Option<usize> {
    let mut values =
        kernel.outputs.iter().enumerate().filter(|(_, output)| {
            matches!(output.kind, OutputKind::Values(_) | OutputKind::Total(..))
        });
    let (index, output) = values.next()?;
    let single = values.next().is_none();
    let typed = matches!(output.meta.dtype, DType::F32 | DType::I64);
    let OutputKind::Values(value) = output.kind else {
        return None;
    };
    let everywhere = kernel.body[value].domain != Domain::Kept;
    (single && typed && everywhere).then_some(index)
}

/// The first element error: of the earliest instruction, then in the earliest segment (the
/// error the unfused operations raise), with that segment's start.
pub(super) type Failure = Mutex<Option<(usize, usize, KernelError)>>;

/// The values of instruction `value` over the whole iteration space; the earliest element
/// error is left in `failure`. Their number is known only now (kept values of a compaction),
/// so their memory is asked for first: `OutOfMemory` when the machine cannot provide it.
pub(super) fn collect(
    context: &Context<'_>,
    plan: &Partition,
    value: usize,
    dtype: DType,
    failure: &Failure,
    interrupt: &Interrupt,
) -> Result<Buffer, KernelError> {
    let domain = context.kernel.body[value].domain;
    let segments = Segments::new(plan.segments_in_order(domain));
    let lane_bytes = if dtype == DType::I64 { 8 } else { 4 };
    crate::backend::memory::reserve((segments.total as u64).saturating_mul(lane_bytes))?;
    let target = Target {
        context,
        segments: &segments,
        value,
        domain,
        failure,
        interrupt,
    };
    Ok(match dtype {
        DType::I64 => Buffer::I64(target.collect::<i64>()),
        DType::F32 | DType::Bool => Buffer::F32(target.collect::<f32>()),
    })
}

/// The segments in order, and where each one's values start in the output.
struct Segments {
    list: Vec<(Segment, usize)>,
    starts: Vec<usize>,
    total: usize,
}

impl Segments {
    fn new(list: Vec<(Segment, usize)>) -> Segments {
        let mut total = 0;
        let starts = list
            .iter()
            .map(|(_, values)| {
                let start = total;
                total += values;
                start
            })
            .collect();
        Segments {
            list,
            starts,
            total,
        }
    }

    /// The segment whose values hold output position `position`, searching from `hint`.
    fn holding(&self, position: usize, hint: usize) -> usize {
        let holds = |index: usize| {
            self.starts[index] <= position && position < self.starts[index] + self.list[index].1
        };
        if hint < self.list.len() && holds(hint) {
            return hint;
        }
        if hint + 1 < self.list.len() && holds(hint + 1) {
            return hint + 1;
        }
        let after = self.starts.partition_point(|start| *start <= position);
        let mut index = after.saturating_sub(1);
        while index + 1 < self.list.len() && !holds(index) {
            index += 1;
        }
        index
    }
}

struct Target<'t> {
    context: &'t Context<'t>,
    segments: &'t Segments,
    value: usize,
    domain: Domain,
    failure: &'t Failure,
    /// Ctrl-C: segments not yet computed are skipped (their values are left as zeros).
    interrupt: &'t Interrupt,
}

/// A worker's state: its scratch, which segment it holds, and the memory it asks for.
struct Worker {
    scratch: Scratch,
    held: Option<usize>,
    spread: Spread,
}

impl Worker {
    /// A worker that holds no segment yet.
    fn new(kernel: &FusedKernel) -> Worker {
        Worker {
            scratch: Scratch::new(kernel),
            held: None,
            spread: Spread::default(),
        }
    }
}

impl Target<'_> {
    fn collect<T: Lane + Pod>(&self) -> Vec<T>
    where
        [T; RUN]: Pod,
    {
        let runs = self.segments.total.div_ceil(RUN);
        if runs <= 1 {
            return self.alone();
        }
        let mut out: Vec<[T; RUN]> = Vec::with_capacity(runs);
        // Only an address to hint at: if rayon ever collected elsewhere, the hints would
        // merely be wasted.
        let destination = out.as_ptr().addr();
        let bytes = std::mem::size_of::<[T; RUN]>();
        (0..runs)
            .into_par_iter()
            .with_min_len(MIN_RUNS_PER_PIECE)
            .map_init(
                || Worker::new(self.context.kernel),
                |worker, run| {
                    worker.spread.clear();
                    if run + AHEAD < runs {
                        let ahead = destination.wrapping_add((run + AHEAD) * bytes);
                        worker.spread.push(ahead, bytes, Intent::Write);
                    }
                    self.inputs_of(run + INPUTS_AHEAD, &mut worker.spread);
                    let values = self.run::<T>(worker, run);
                    // A run whose segment was computed before asks for it all at once.
                    worker.spread.finish();
                    values
                },
            )
            .collect_into_vec(&mut out);
        let mut flat: Vec<T> = bytemuck::allocation::cast_vec(out);
        flat.truncate(self.segments.total);
        flat
    }

    /// The values of a kernel with at most one run, computed on the calling thread into a
    /// vector of their number: for a few elements, handing one run through rayon's collect
    /// and copying a whole run's array cost more than computing them (about a fifth of a
    /// cache hit of a small compiled function).
    fn alone<T: Lane>(&self) -> Vec<T> {
        let mut worker = Worker::new(self.context.kernel);
        let mut values = vec![T::default(); self.segments.total];
        self.fill(&mut worker, 0, &mut values);
        values
    }

    /// Adds the full-shape inputs' elements of run `run` to `spread`. Only where output
    /// positions are element positions: a row's value is not read from its row's position.
    fn inputs_of(&self, run: usize, spread: &mut Spread) {
        let start = run * RUN;
        if self.domain != Domain::Element || start >= self.segments.total {
            return;
        }
        let len = RUN.min(self.segments.total - start);
        self.context.inputs_of(Segment { start, len }, None, spread);
    }

    /// The values of run `run`.
    fn run<T: Lane + Pod>(&self, worker: &mut Worker, run: usize) -> [T; RUN] {
        let position = run * RUN;
        let end = (position + RUN).min(self.segments.total);
        let index = self.segments.holding(position, worker.held.unwrap_or(0));
        let offset = position - self.segments.starts[index];
        if offset + RUN <= self.segments.list[index].1 {
            // The usual case: one segment holds the whole run, which is built straight from
            // its values.
            let side = self.values::<T>(worker, index);
            return match side {
                Side::Splat(value) => [value; RUN],
                Side::Slice(slice) => match slice
                    .get(offset..offset + RUN)
                    .and_then(|values| <&[T; RUN]>::try_from(values).ok())
                {
                    Some(values) => *values,
                    None => {
                        std::array::from_fn(|i| slice.get(offset + i).copied().unwrap_or_default())
                    }
                },
            };
        }
        let mut values = [T::default(); RUN];
        self.fill(worker, position, &mut values[..end - position]);
        values
    }

    /// Writes the output's values from position `position` on into `values`, from the
    /// segments that hold them.
    fn fill<T: Lane>(&self, worker: &mut Worker, mut position: usize, values: &mut [T]) {
        let end = position + values.len();
        let mut filled = 0;
        while position < end {
            let index = self.segments.holding(position, worker.held.unwrap_or(0));
            let count = self.segments.list[index].1;
            let offset = position - self.segments.starts[index];
            let take = (end - position).min(count - offset);
            let part = &mut values[filled..filled + take];
            match self.values::<T>(worker, index) {
                Side::Splat(value) => part.fill(value),
                Side::Slice(slice) => {
                    let available = slice.len().saturating_sub(offset).min(take);
                    part[..available].copy_from_slice(&slice[offset..offset + available]);
                }
            }
            filled += take;
            position += take;
        }
    }

    /// The output's values over segment `index` (computed unless the worker holds them).
    fn values<'w, T: Lane>(&'w self, worker: &'w mut Worker, index: usize) -> Side<'w, T> {
        let (segment, count) = self.segments.list[index];
        if worker.held != Some(index) {
            self.evaluate(worker, segment);
            worker.held = Some(index);
        }
        let extent = match self.domain {
            Domain::Kept | Domain::Row => Segment {
                start: 0,
                len: count,
            },
            Domain::Uniform | Domain::Element => segment,
        };
        self.context
            .view(&worker.scratch, self.value, extent)
            .side::<T>()
    }

    fn evaluate(&self, worker: &mut Worker, segment: Segment) {
        if self.interrupt.requested() {
            return;
        }
        let mut failed = None;
        self.context.evaluate(
            segment,
            &mut worker.scratch,
            &mut failed,
            &mut worker.spread,
        );
        if let Some((instr, error)) = failed {
            let mut first = self
                .failure
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let key = (instr, segment.start);
            if first
                .as_ref()
                .is_none_or(|(known, start, _)| key < (*known, *start))
            {
                *first = Some((instr, segment.start, error));
            }
        }
    }
}
