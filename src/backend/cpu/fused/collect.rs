//! Writing a kernel's only output without filling it with zeros first.
//!
//! Most kernels write one tensor of `f32` or `i64` and nothing else to fold. Their output is
//! written in parallel straight into fresh memory, as runs of [`RUN`] values
//! ([`par_pieces`]): a run is computed from the segments it covers (a worker keeps its last
//! segment's values, so each is computed once per worker) and copied from the worker's
//! scratch into its place, so no output element is written twice. A zero-filled buffer
//! would cost a whole extra pass over memory, about a fifth of an elementwise kernel's
//! time. (Collecting each run by value through rayon, as before, copied it twice: the
//! chain over 10^7 elements ran 6 to 10% faster with one copy.)
//!
//! Where each run lands is known before it is computed: while a worker computes a run, it
//! asks for the next run's destination and inputs ([`Spread`]), a few cache lines between
//! each two instructions, so that neither the copy nor the first reads wait for memory line
//! by line (the elementwise chain ran about a fifth faster than with one burst of requests
//! per run).
//!
//! Small kernels stay on the calling thread: handing work to the thread pool and waking
//! the caller again costs tens of microseconds on a virtual machine, as much as computing
//! about 64 runs of a short chain alone (a 65,536-element chain ran 30% faster unsplit).
//! A kernel of at most one run does not go through rayon at all: its values are written
//! straight into a vector of their number.

use std::sync::Mutex;

use super::super::error::KernelError;
use super::super::fresh::{Piece, par_pieces};
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

/// The values of instruction `value` (not kept values: see [`collectable`]) over the whole
/// iteration space; the earliest element error is left in `failure`. Their memory is asked
/// for first: `OutOfMemory` when the machine cannot provide it.
pub(super) fn collect(
    context: &Context<'_>,
    plan: &Partition,
    value: usize,
    dtype: DType,
    failure: &Failure,
    interrupt: &Interrupt,
) -> Result<Buffer, KernelError> {
    let domain = context.kernel.body[value].domain;
    if domain == Domain::Kept {
        return Err(KernelError::Internal(
            "kept values cannot be collected: their segments' counts vary".into(),
        ));
    }
    let segments = Segments::new(plan, domain);
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

/// The segments in order, each giving the same number of the output's values but the last.
struct Segments<'p> {
    plan: &'p Partition,
    domain: Domain,
    per_segment: usize,
    total: usize,
}

impl<'p> Segments<'p> {
    fn new(plan: &'p Partition, domain: Domain) -> Segments<'p> {
        Segments {
            plan,
            domain,
            per_segment: plan.values_per_segment(domain).max(1),
            total: plan.values_of(domain),
        }
    }

    /// The segment whose values hold output position `position`.
    fn holding(&self, position: usize) -> usize {
        position / self.per_segment
    }

    /// Segment `index`, and how many values it gives.
    fn get(&self, index: usize) -> (Segment, usize) {
        self.plan.segment_in_order(index, self.domain)
    }

    /// Where segment `index`'s values start in the output.
    fn start(&self, index: usize) -> usize {
        index * self.per_segment
    }
}

struct Target<'t> {
    context: &'t Context<'t>,
    segments: &'t Segments<'t>,
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
    fn collect<T: Lane>(&self) -> Vec<T> {
        let total = self.segments.total;
        let runs = total.div_ceil(RUN);
        if runs <= 1 {
            let mut values = Vec::with_capacity(total);
            self.fill(&mut Worker::new(self.context.kernel), 0, total, &mut values);
            return values;
        }
        par_pieces(
            total,
            RUN,
            MIN_RUNS_PER_PIECE,
            || Worker::new(self.context.kernel),
            |worker, run, piece| {
                worker.spread.clear();
                if run + AHEAD < runs {
                    let bytes = piece.len() * size_of::<T>();
                    let ahead = piece.address().wrapping_add(AHEAD * bytes);
                    let len = RUN.min(total - (run + AHEAD) * RUN) * size_of::<T>();
                    worker.spread.push(ahead, len, Intent::Write);
                }
                self.inputs_of(run + INPUTS_AHEAD, &mut worker.spread);
                self.fill(worker, run * RUN, piece.len(), piece);
                // A run whose segment was computed before asks for it all at once.
                worker.spread.finish();
            },
        )
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

    /// Appends the output's `count` values from position `position` on to `out`, from the
    /// segments that hold them.
    fn fill<T: Lane>(
        &self,
        worker: &mut Worker,
        mut position: usize,
        count: usize,
        out: &mut impl Append<T>,
    ) {
        let end = position + count;
        while position < end {
            let index = self.segments.holding(position);
            let count = self.segments.get(index).1;
            let offset = position - self.segments.start(index);
            let take = (end - position).min(count - offset);
            match self.values::<T>(worker, index) {
                Side::Splat(value) => out.repeat(value, take),
                Side::Slice(slice) => {
                    let available = slice.len().saturating_sub(offset).min(take);
                    out.extend(&slice[offset..offset + available]);
                    out.repeat(T::default(), take - available);
                }
            }
            position += take;
        }
    }

    /// The output's values over segment `index` (computed unless the worker holds them).
    fn values<'w, T: Lane>(&'w self, worker: &'w mut Worker, index: usize) -> Side<'w, T> {
        let (segment, count) = self.segments.get(index);
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

/// Where a kernel's values are appended: a piece of the output, or the whole output of a
/// kernel computed on the calling thread.
trait Append<T> {
    fn extend(&mut self, values: &[T]);
    fn repeat(&mut self, value: T, count: usize);
}

impl<T: Lane> Append<T> for Piece<'_, T> {
    fn extend(&mut self, values: &[T]) {
        Piece::extend(self, values);
    }

    fn repeat(&mut self, value: T, count: usize) {
        Piece::repeat(self, value, count);
    }
}

impl<T: Lane> Append<T> for Vec<T> {
    fn extend(&mut self, values: &[T]) {
        self.extend_from_slice(values);
    }

    fn repeat(&mut self, value: T, count: usize) {
        Extend::extend(self, std::iter::repeat_n(value, count));
    }
}
