//! Totals over kept values in one pass over memory.
//!
//! A total over kept values must fold the same blocks of [`BLOCK`] kept values as the reduce
//! kernel folds the compacted tensor, so where a kept value lands depends on how many the
//! elements before it keep. Counting them first costs a whole pass over the mask's inputs
//! (two fifths of `(x[x > 0] * 2.0).sum()` over 10^7 elements). A kernel whose outputs are
//! only such totals and the count runs in one pass instead: workers take blocks of [`BLOCK`]
//! elements in order from a shared counter, compute each block's kept values into a buffer
//! of their own (it stays in the second-level cache), and fold them into the running
//! accumulators when every earlier block has been folded, cutting a new accumulator every
//! [`BLOCK`] kept values. Folding a block's buffer is short beside computing it, so a worker
//! seldom waits, and each block waits only for blocks taken before it by workers that are
//! running: no block waits forever, whatever the number of threads.
//!
//! Element errors are kept as in the other tasks: the earliest instruction that failed
//! anywhere. A worker that panics marks the pass abandoned, so the others stop waiting and
//! the panic reaches the caller.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use rayon::prelude::*;

use super::super::error::{KernelError, Result};
use super::super::fold::BLOCK;
use super::super::prefetch::Spread;
use super::eval::{Context, Scratch};
use super::layout::Values;
use super::partition::Partition;
use super::slot::{Lane, Segment, Side, View};
use super::totals::{Accumulator, combine_totals};
use crate::backend::interrupt::Interrupt;
use crate::dtype::{DType, Scalar};
use crate::graph::fused::{Domain, FusedKernel, OutputKind};
use crate::graph::op::ReduceOp;

/// Whether the kernel runs this way: it keeps elements by a mask, reduces no rows, and
/// gives totals over kept values and the count, nothing else.
pub(super) fn applies(kernel: &FusedKernel) -> bool {
    let mut kept_totals = 0;
    for output in &kernel.outputs {
        match output.kind {
            OutputKind::Total(_, value) if kernel.body[value].domain == Domain::Kept => {
                kept_totals += 1;
            }
            OutputKind::Count(_) => {}
            OutputKind::Total(..) | OutputKind::Values(_) => return false,
        }
    }
    kept_totals > 0 && !kernel.rows && kernel.mask().is_some()
}

/// The kernel's totals (`None` for the count) and how many elements its mask keeps.
pub(super) fn totals(context: &Context<'_>, numel: usize) -> Result<(Vec<Option<Scalar>>, usize)> {
    let kernel = context.kernel;
    let plan = Partition::elements(numel);
    let shared = Shared {
        next: AtomicUsize::new(0),
        order: Mutex::new(Order {
            turn: 0,
            count: 0,
            folds: (kernel.outputs.iter())
                .map(|output| match output.kind {
                    OutputKind::Total(op, value) => {
                        Some(Running::new(op, kernel.body[value].dtype, value))
                    }
                    OutputKind::Count(_) | OutputKind::Values(_) => None,
                })
                .collect(),
            failure: None,
            abandoned: false,
        }),
        turned: Condvar::new(),
    };
    // Ctrl-C leaves the blocks not yet computed empty.
    let interrupt = Interrupt::current();
    let workers = rayon::current_num_threads().min(plan.tasks());
    if workers > 1 {
        (0..workers)
            .into_par_iter()
            .for_each(|_| work(context, &plan, &shared, &interrupt));
    } else {
        work(context, &plan, &shared, &interrupt);
    }
    interrupt.check()?;
    let order = (shared.order.into_inner()).unwrap_or_else(PoisonError::into_inner);
    if let Some((instr, error)) = order.failure {
        return Err(super::in_member(kernel, instr, error));
    }
    let count = order.count;
    let partials: Vec<Vec<Scalar>> = (order.folds.into_iter())
        .map(|fold| fold.map_or_else(Vec::new, Running::finish))
        .collect();
    let totals = combine_totals(kernel, &partials, &|_| (count, vec![count]))?;
    Ok((totals, count))
}

/// What the workers share: the next block to take, and the folding in block order.
struct Shared {
    next: AtomicUsize,
    order: Mutex<Order>,
    /// Signalled whenever the turn passes to the next block (or the pass is abandoned).
    turned: Condvar,
}

/// The folding state, passed from block to block in order.
struct Order {
    /// The block whose kept values are folded next.
    turn: usize,
    /// Kept values folded so far.
    count: usize,
    /// Per output: the running fold of a total.
    folds: Vec<Option<Running>>,
    /// The earliest instruction that failed in any block, with its error.
    failure: Option<(usize, KernelError)>,
    /// A worker panicked: nobody waits for the turn any more.
    abandoned: bool,
}

impl Shared {
    /// The folding state once it is `block`'s turn, or `None` if the pass was abandoned.
    fn wait_for(&self, block: usize) -> Option<MutexGuard<'_, Order>> {
        let mut order = self.order.lock().unwrap_or_else(PoisonError::into_inner);
        while order.turn != block && !order.abandoned {
            order = (self.turned.wait(order)).unwrap_or_else(PoisonError::into_inner);
        }
        (!order.abandoned).then_some(order)
    }
}

/// One worker: takes blocks in order until none is left, computing each and folding its
/// kept values in its turn.
fn work(context: &Context<'_>, plan: &Partition, shared: &Shared, interrupt: &Interrupt) {
    let kernel = context.kernel;
    let mut scratch = Scratch::new(kernel);
    let mut held: Vec<Option<Held>> = (kernel.outputs.iter())
        .map(|output| match output.kind {
            OutputKind::Total(_, value) => Some(Held::new(kernel.body[value].dtype)),
            OutputKind::Count(_) | OutputKind::Values(_) => None,
        })
        .collect();
    let mut ahead = Spread::new();
    loop {
        let block = shared.next.fetch_add(1, Ordering::Relaxed);
        if block >= plan.tasks() {
            return;
        }
        let turn = Turn {
            shared,
            block,
            folded: false,
        };
        held.iter_mut().flatten().for_each(Held::clear);
        let mut failure = None;
        let mut kept = 0;
        if !interrupt.requested() {
            let segments = plan.segments(block);
            for (index, segment) in segments.iter().enumerate() {
                ahead.clear();
                if let Some(next) = segments.get(index + 1) {
                    context.inputs_of(*next, None, &mut ahead);
                }
                context.evaluate(*segment, &mut scratch, &mut failure, &mut ahead);
                let here = Segment {
                    start: 0,
                    len: scratch.kept(),
                };
                for (output, held) in kernel.outputs.iter().zip(&mut held) {
                    if let (OutputKind::Total(_, value), Some(held)) = (output.kind, held) {
                        held.append(&context.view(&scratch, value, here));
                    }
                }
                kept += here.len;
            }
        }
        turn.fold(&held, kept, failure);
    }
}

/// A block taken by a worker, which must pass the turn on once it is folded, or mark the
/// pass abandoned if its worker unwinds first.
struct Turn<'s> {
    shared: &'s Shared,
    block: usize,
    folded: bool,
}

impl Turn<'_> {
    /// Folds the block's kept values once every earlier block is folded, and passes the turn.
    fn fold(
        mut self,
        held: &[Option<Held>],
        kept: usize,
        mut failure: Option<(usize, KernelError)>,
    ) {
        let Some(mut order) = self.shared.wait_for(self.block) else {
            self.folded = true;
            return;
        };
        let order = &mut *order;
        order.count += kept;
        for (running, held) in order.folds.iter_mut().zip(held) {
            if let (Some(running), Some(held)) = (running, held) {
                if let Err(error) = running.push(held) {
                    failure.get_or_insert((running.value, error));
                }
            }
        }
        if let Some((instr, error)) = failure {
            if (order.failure.as_ref()).is_none_or(|(first, _)| instr < *first) {
                order.failure = Some((instr, error));
            }
        }
        order.turn += 1;
        self.folded = true;
        self.shared.turned.notify_all();
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if !self.folded {
            let mut order = (self.shared.order.lock()).unwrap_or_else(PoisonError::into_inner);
            order.abandoned = true;
            self.shared.turned.notify_all();
        }
    }
}

/// The running fold of one total over kept values: whole blocks of [`BLOCK`] folded, and
/// the accumulator of the block being filled.
struct Running {
    op: ReduceOp,
    dtype: DType,
    /// The instruction it folds, named by an internal error.
    value: usize,
    accumulator: Accumulator,
    filled: usize,
    partials: Vec<Scalar>,
}

impl Running {
    fn new(op: ReduceOp, dtype: DType, value: usize) -> Running {
        Running {
            op,
            dtype,
            value,
            accumulator: Accumulator::new(op, dtype),
            filled: 0,
            partials: Vec::new(),
        }
    }

    /// Folds the next kept values, finishing a block each time it holds [`BLOCK`].
    fn push(&mut self, held: &Held) -> Result<()> {
        let mut at = 0;
        while at < held.len() {
            let take = (BLOCK - self.filled).min(held.len() - at);
            (self.accumulator).push_values(&held.values(at..at + take))?;
            self.filled += take;
            at += take;
            if self.filled == BLOCK {
                let full =
                    std::mem::replace(&mut self.accumulator, Accumulator::new(self.op, self.dtype));
                self.partials.push(full.finish());
                self.filled = 0;
            }
        }
        Ok(())
    }

    /// The result of each block, in order: at least one, as the reduce kernel folds an empty
    /// tensor as one empty block.
    fn finish(mut self) -> Vec<Scalar> {
        if self.filled > 0 || self.partials.is_empty() {
            self.partials.push(self.accumulator.finish());
        }
        self.partials
    }
}

/// One block's kept values of one total, waiting for their turn to be folded.
enum Held {
    F32(Vec<f32>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
}

impl Held {
    fn new(dtype: DType) -> Held {
        match dtype {
            DType::F32 => Held::F32(Vec::new()),
            DType::I64 => Held::I64(Vec::new()),
            DType::Bool => Held::Bool(Vec::new()),
        }
    }

    fn clear(&mut self) {
        match self {
            Held::F32(values) => values.clear(),
            Held::I64(values) => values.clear(),
            Held::Bool(values) => values.clear(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Held::F32(values) => values.len(),
            Held::I64(values) => values.len(),
            Held::Bool(values) => values.len(),
        }
    }

    /// Appends a segment's kept values.
    fn append(&mut self, view: &View<'_>) {
        fn extend<T: Lane>(values: &mut Vec<T>, view: &View<'_>) {
            match view.side::<T>() {
                Side::Slice(slice) => values.extend_from_slice(slice),
                Side::Splat(value) => values.extend(std::iter::repeat_n(value, view.segment.len)),
            }
        }
        match self {
            Held::F32(values) => extend(values, view),
            Held::I64(values) => extend(values, view),
            Held::Bool(values) => extend(values, view),
        }
    }

    fn values(&self, range: std::ops::Range<usize>) -> Values<'_> {
        match self {
            Held::F32(values) => Values::F32(values[range].into()),
            Held::I64(values) => Values::I64(values[range].into()),
            Held::Bool(values) => Values::Bool(values[range].into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::fold::{Fold, SumF32};

    #[test]
    fn kept_values_fold_in_blocks_of_kept_values_whatever_the_pieces() {
        let values: Vec<f32> = (0..2 * BLOCK + 7).map(|i| (i % 11) as f32 * 0.3).collect();
        let mut running = Running::new(ReduceOp::Sum, DType::F32, 0);
        let mut at = 0;
        for piece in [5, BLOCK - 5, 1, BLOCK + 3, 3].into_iter().cycle() {
            let end = (at + piece).min(values.len());
            running
                .push(&Held::F32(values[at..end].to_vec()))
                .expect("f32 values for an f32 total");
            at = end;
            if at == values.len() {
                break;
            }
        }
        let blocks: Vec<Scalar> = (values.chunks(BLOCK))
            .map(|block| Scalar::Float(f64::from(SumF32::of(block))))
            .collect();
        assert_eq!(running.finish(), blocks);
    }

    #[test]
    fn a_whole_number_of_blocks_gives_no_empty_block_and_nothing_gives_one() {
        let mut running = Running::new(ReduceOp::Sum, DType::I64, 0);
        running.push(&Held::I64(vec![1; 2 * BLOCK])).expect("i64");
        assert_eq!(running.finish(), vec![Scalar::Int(BLOCK as i64); 2]);
        let empty = Running::new(ReduceOp::All, DType::Bool, 0);
        assert_eq!(empty.finish(), vec![Scalar::Bool(true)]);
    }

    #[test]
    fn values_of_another_type_are_an_internal_error() {
        let mut running = Running::new(ReduceOp::Sum, DType::F32, 0);
        let error = running.push(&Held::Bool(vec![true])).unwrap_err();
        assert!(matches!(error, KernelError::Internal(_)), "{error:?}");
    }

    fn shared() -> Shared {
        Shared {
            next: AtomicUsize::new(0),
            order: Mutex::new(Order {
                turn: 0,
                count: 0,
                folds: Vec::new(),
                failure: None,
                abandoned: false,
            }),
            turned: Condvar::new(),
        }
    }

    #[test]
    fn blocks_fold_in_order_whichever_finishes_first() {
        let shared = shared();
        std::thread::scope(|scope| {
            // The second block is ready first and waits for the first.
            let second = scope.spawn(|| {
                let turn = Turn {
                    shared: &shared,
                    block: 1,
                    folded: false,
                };
                turn.fold(&[], 5, None);
            });
            std::thread::sleep(std::time::Duration::from_millis(20));
            let first = Turn {
                shared: &shared,
                block: 0,
                folded: false,
            };
            let failure = KernelError::Value("first".into());
            first.fold(&[], 3, Some((4, failure)));
            second.join().expect("the second block folds");
        });
        let order = shared.order.into_inner().expect("not poisoned");
        assert_eq!((order.turn, order.count), (2, 8));
        assert!(matches!(order.failure, Some((4, KernelError::Value(_)))));
    }

    #[test]
    fn a_block_abandoned_by_a_panic_releases_the_blocks_waiting_for_it() {
        let shared = shared();
        std::thread::scope(|scope| {
            let waiting = scope.spawn(|| shared.wait_for(1).is_none());
            let panicked = scope.spawn(|| {
                let _turn = Turn {
                    shared: &shared,
                    block: 0,
                    folded: false,
                };
                panic!("a worker fails before folding its block");
            });
            assert!(panicked.join().is_err());
            assert!(waiting.join().expect("the waiter returns"));
        });
    }
}
