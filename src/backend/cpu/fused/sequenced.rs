//! Kept values, and totals over them, in one pass over memory.
//!
//! Where a kept value lands depends on how many the elements before it keep: its position
//! in a tensor of kept values, and the block it is folded in for a total, which must fold
//! the same blocks of [`BLOCK`] kept values as the reduce kernel folds the compacted tensor.
//! Counting them first costs a whole pass over the mask's inputs (two fifths of
//! `(x[x > 0] * 2.0).sum()` over 10^7 elements, a third of `x[x > 0]`). A kernel whose
//! outputs are only kept values, totals over them and the count runs in one pass instead:
//! workers take blocks of [`BLOCK`] elements in order from a shared counter, compute each
//! block's kept values into buffers of their own (they stay in the second-level cache),
//! and when every earlier block has had its turn, fold them into the running accumulators
//! (cutting a new accumulator every [`BLOCK`] kept values) and take the next slots of each
//! output, which they fill after passing the turn on, in parallel with the other workers.
//! Taking a turn is short beside computing a block, so a worker seldom waits, and each
//! block waits only for blocks taken before it by workers that are running: no block waits
//! forever, whatever the number of threads.
//!
//! An output of kept values is given room for every element first, as its length is known
//! only at the end. Where far fewer are kept, the room is given back at the end (a copy of
//! the values, short beside the pass); otherwise the tensor keeps it, at most [`ROOM`]
//! times its values, as a growing vector would.
//!
//! Element errors are kept as in the other tasks: the earliest instruction that failed
//! anywhere. A worker that panics marks the pass abandoned, so the others stop waiting and
//! the panic reaches the caller.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use rayon::prelude::*;

use super::super::error::{KernelError, Result};
use super::super::fold::BLOCK;
use super::super::fresh::Tail;
use super::super::prefetch::Spread;
use super::eval::{Context, OutChunk, Scratch};
use super::layout::Values;
use super::partition::Partition;
use super::slot::{Lane, Segment, Side, View};
use super::totals::{Accumulator, combine_totals};
use super::{Buffer, Pending, Written};
use crate::backend::interrupt::Interrupt;
use crate::dtype::{DType, Scalar};
use crate::graph::fused::{Domain, FusedKernel, OutputKind};
use crate::graph::op::ReduceOp;

/// An output of kept values gives back its room for every element when that is more than
/// this many times its values.
const ROOM: usize = 4;

/// Whether the kernel runs this way: it keeps elements by a mask, reduces no rows, and
/// gives kept values, totals over them and the count, nothing else.
pub(super) fn applies(kernel: &FusedKernel) -> bool {
    let mut kept_outputs = 0;
    for output in &kernel.outputs {
        match output.kind {
            OutputKind::Total(_, value) | OutputKind::Values(value)
                if kernel.body[value].domain == Domain::Kept =>
            {
                kept_outputs += 1;
            }
            OutputKind::Count(_) => {}
            OutputKind::Total(..) | OutputKind::Values(_) => return false,
        }
    }
    kept_outputs > 0 && !kernel.rows && kernel.mask().is_some()
}

/// The kernel's outputs of kept values and totals (`None` for the count), and how many
/// elements its mask keeps.
pub(super) fn run(context: &Context<'_>, numel: usize) -> Result<(Written, usize)> {
    let kernel = context.kernel;
    let mut buffers: Vec<Option<Pending>> = (kernel.outputs.iter())
        .map(|output| match output.kind {
            OutputKind::Values(_) => Pending::new(output.meta.dtype, numel).map(Some),
            OutputKind::Total(..) | OutputKind::Count(_) => Ok(None),
        })
        .collect::<Result<_>>()?;
    let plan = Partition::elements(numel);
    let sinks = (kernel.outputs.iter())
        .zip(&mut buffers)
        .map(|(output, buffer)| match (output.kind, buffer) {
            (OutputKind::Total(op, value), _) => {
                let running = Running::new(op, kernel.body[value].dtype, value);
                Some(Sink::Total(Box::new(running)))
            }
            (OutputKind::Values(value), Some(buffer)) => {
                Some(Sink::Values(value, Slots::of(buffer)))
            }
            (OutputKind::Values(_) | OutputKind::Count(_), _) => None,
        })
        .collect();
    let shared = Shared {
        next: AtomicUsize::new(0),
        order: Mutex::new(Order {
            turn: 0,
            count: 0,
            sinks,
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
    let partials: Vec<Vec<Scalar>> = (order.sinks.into_iter())
        .map(|sink| match sink {
            Some(Sink::Total(running)) => (*running).finish(),
            Some(Sink::Values(..)) | None => Vec::new(),
        })
        .collect();
    let totals = combine_totals(kernel, &partials, &|_| (count, vec![count]))?;
    let buffers = (buffers.into_iter())
        .map(|buffer| {
            buffer.map(|buffer| {
                let mut values: Buffer = buffer.finish_first(count);
                if count.saturating_mul(ROOM) < numel {
                    values.shrink_to_fit();
                }
                values
            })
        })
        .collect();
    Ok(((buffers, totals), count))
}

/// What the workers share: the next block to take, and the turns in block order.
struct Shared<'o> {
    next: AtomicUsize,
    order: Mutex<Order<'o>>,
    /// Signalled whenever the turn passes to the next block (or the pass is abandoned).
    turned: Condvar,
}

/// The state passed from block to block in order.
struct Order<'o> {
    /// The block whose turn it is.
    turn: usize,
    /// Kept values so far.
    count: usize,
    /// Per output: where its kept values go (`None` for the count).
    sinks: Vec<Option<Sink<'o>>>,
    /// The earliest instruction that failed in any block, with its error.
    failure: Option<(usize, KernelError)>,
    /// A worker panicked: nobody waits for the turn any more.
    abandoned: bool,
}

/// Where a block's kept values of one output go in its turn.
enum Sink<'o> {
    /// Folded into a running total.
    Total(Box<Running>),
    /// Written after the kept values of the blocks before it, into the slots of the output
    /// of instruction `.0` not handed out yet.
    Values(usize, Slots<'o>),
}

impl Order<'_> {
    /// Keeps `failure` if it is the earliest instruction's.
    fn failed(&mut self, failure: Option<(usize, KernelError)>) {
        if let Some((instr, error)) = failure {
            if (self.failure.as_ref()).is_none_or(|(first, _)| instr < *first) {
                self.failure = Some((instr, error));
            }
        }
    }
}

impl<'o> Shared<'o> {
    /// The state, also after a worker panicked holding it (the pass is then abandoned).
    fn lock(&self) -> MutexGuard<'_, Order<'o>> {
        self.order.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The state once it is `block`'s turn, or `None` if the pass was abandoned.
    fn wait_for(&self, block: usize) -> Option<MutexGuard<'_, Order<'o>>> {
        let mut order = self.lock();
        while order.turn != block && !order.abandoned {
            order = (self.turned.wait(order)).unwrap_or_else(PoisonError::into_inner);
        }
        (!order.abandoned).then_some(order)
    }
}

/// One worker: takes blocks in order until none is left, computing each, taking its turn,
/// and writing its kept values where the turn put them.
fn work(context: &Context<'_>, plan: &Partition, shared: &Shared<'_>, interrupt: &Interrupt) {
    let kernel = context.kernel;
    let mut scratch = Scratch::new(kernel);
    let mut held: Vec<Option<Held>> = (kernel.outputs.iter())
        .map(|output| match output.kind {
            OutputKind::Total(_, value) | OutputKind::Values(value) => {
                Some(Held::new(kernel.body[value].dtype, plan.numel().min(BLOCK)))
            }
            OutputKind::Count(_) => None,
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
            taken: false,
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
                    if let (OutputKind::Total(_, value) | OutputKind::Values(value), Some(held)) =
                        (output.kind, held)
                    {
                        held.append(&context.view(&scratch, value, here));
                    }
                }
                kept += here.len;
            }
        }
        for (index, instr, piece) in turn.take(&held, kept, failure) {
            let written = held[index]
                .as_ref()
                .map_or(Ok(()), |held| held.write(piece));
            if let Err(error) = written {
                shared.lock().failed(Some((instr, error)));
            }
        }
    }
}

/// A block taken by a worker, which must pass the turn on once it has taken it, or mark the
/// pass abandoned if its worker unwinds first.
struct Turn<'s, 'o> {
    shared: &'s Shared<'o>,
    block: usize,
    taken: bool,
}

/// A piece of an output to write a block's kept values of instruction `.1` in, with the
/// output's index.
type Piece<'o> = (usize, usize, OutChunk<'o>);

impl<'o> Turn<'_, 'o> {
    /// Once every earlier block has had its turn: folds the block's kept values into the
    /// totals, takes the slots of its kept values in each output, and passes the turn on.
    fn take(
        mut self,
        held: &[Option<Held>],
        kept: usize,
        mut failure: Option<(usize, KernelError)>,
    ) -> Vec<Piece<'o>> {
        let Some(mut order) = self.shared.wait_for(self.block) else {
            self.taken = true;
            return Vec::new();
        };
        let order = &mut *order;
        order.count += kept;
        let mut pieces = Vec::new();
        for (index, (sink, held)) in order.sinks.iter_mut().zip(held).enumerate() {
            match (sink, held) {
                (Some(Sink::Total(running)), Some(held)) => {
                    if let Err(error) = running.push(held) {
                        failure.get_or_insert((running.value, error));
                    }
                }
                (Some(Sink::Values(value, slots)), Some(_)) => {
                    pieces.push((index, *value, slots.next(kept)));
                }
                (Some(Sink::Total(_) | Sink::Values(..)) | None, _) => {}
            }
        }
        order.failed(failure);
        order.turn += 1;
        self.taken = true;
        self.shared.turned.notify_all();
        pieces
    }
}

impl Drop for Turn<'_, '_> {
    fn drop(&mut self) {
        if !self.taken {
            self.shared.lock().abandoned = true;
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

/// The slots of an output of kept values not handed out yet.
enum Slots<'o> {
    F32(Tail<'o, f32>),
    I64(Tail<'o, i64>),
    Bool(Tail<'o, bool>),
}

impl<'o> Slots<'o> {
    fn of(buffer: &'o mut Pending) -> Slots<'o> {
        match buffer {
            Pending::F32(values) => Slots::F32(values.tail()),
            Pending::I64(values) => Slots::I64(values.tail()),
            Pending::Bool(values) => Slots::Bool(values.tail()),
        }
    }

    /// The next `len` slots.
    fn next(&mut self, len: usize) -> OutChunk<'o> {
        match self {
            Slots::F32(tail) => OutChunk::F32(tail.next(len)),
            Slots::I64(tail) => OutChunk::I64(tail.next(len)),
            Slots::Bool(tail) => OutChunk::Bool(tail.next(len)),
        }
    }
}

/// One block's kept values of one output, waiting for their turn to be folded or written.
enum Held {
    F32(Vec<f32>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
}

impl Held {
    /// Room for `room` values, as many as a block keeps at most.
    fn new(dtype: DType, room: usize) -> Held {
        match dtype {
            DType::F32 => Held::F32(Vec::with_capacity(room)),
            DType::I64 => Held::I64(Vec::with_capacity(room)),
            DType::Bool => Held::Bool(Vec::with_capacity(room)),
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

    /// Writes the values into `piece` (the slots their turn gave them).
    fn write(&self, piece: OutChunk<'_>) -> Result<()> {
        match (self, piece) {
            (Held::F32(values), OutChunk::F32(mut piece)) => piece.extend(values),
            (Held::I64(values), OutChunk::I64(mut piece)) => piece.extend(values),
            (Held::Bool(values), OutChunk::Bool(mut piece)) => piece.extend(values),
            (Held::F32(_) | Held::I64(_) | Held::Bool(_), _) => {
                return Err(KernelError::Internal(
                    "kept values do not have the type of their output".into(),
                ));
            }
        }
        Ok(())
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

    fn shared() -> Shared<'static> {
        Shared {
            next: AtomicUsize::new(0),
            order: Mutex::new(Order {
                turn: 0,
                count: 0,
                sinks: Vec::new(),
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
                    taken: false,
                };
                assert!(turn.take(&[], 5, None).is_empty());
            });
            std::thread::sleep(std::time::Duration::from_millis(20));
            let first = Turn {
                shared: &shared,
                block: 0,
                taken: false,
            };
            let failure = KernelError::Value("first".into());
            assert!(first.take(&[], 3, Some((4, failure))).is_empty());
            second.join().expect("the second block folds");
        });
        let order = shared.order.into_inner().expect("not poisoned");
        assert_eq!((order.turn, order.count), (2, 8));
        assert!(matches!(order.failure, Some((4, KernelError::Value(_)))));
    }

    #[test]
    fn kept_values_land_after_the_earlier_blocks_whichever_finishes_first() {
        let mut room = crate::backend::cpu::fresh::Fresh::<f32>::new(10).expect("ten values");
        let shared = Shared {
            next: AtomicUsize::new(0),
            order: Mutex::new(Order {
                turn: 0,
                count: 0,
                sinks: vec![None, Some(Sink::Values(7, Slots::F32(room.tail())))],
                failure: None,
                abandoned: false,
            }),
            turned: Condvar::new(),
        };
        let write = |block: usize, values: Vec<f32>| {
            let turn = Turn {
                shared: &shared,
                block,
                taken: false,
            };
            let held = [None, Some(Held::F32(values))];
            let kept = held[1].as_ref().map_or(0, Held::len);
            for (index, instr, piece) in turn.take(&held, kept, None) {
                assert_eq!((index, instr), (1, 7));
                held[index]
                    .as_ref()
                    .expect("held")
                    .write(piece)
                    .expect("f32");
            }
        };
        std::thread::scope(|scope| {
            let second = scope.spawn(|| write(1, vec![3.0, 4.0, 5.0]));
            std::thread::sleep(std::time::Duration::from_millis(20));
            write(0, vec![1.0, 2.0]);
            second.join().expect("the second block writes");
        });
        let order = shared.order.into_inner().expect("not poisoned");
        assert_eq!(order.count, 5);
        drop(order);
        assert_eq!(room.finish_first(5), [1.0, 2.0, 3.0, 4.0, 5.0]);
        // Values of another type than their output's are an internal error.
        let mut room = crate::backend::cpu::fresh::Fresh::<i64>::new(1).expect("one value");
        let piece = Slots::I64(room.tail()).next(1);
        let error = Held::F32(vec![1.0]).write(piece).unwrap_err();
        assert!(matches!(error, KernelError::Internal(_)), "{error:?}");
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
                    taken: false,
                };
                panic!("a worker fails before folding its block");
            });
            assert!(panicked.join().is_err());
            assert!(waiting.join().expect("the waiter returns"));
        });
    }
}
