//! Computing a fused kernel's instructions over one task's segments.

use std::cell::RefCell;

use super::super::error::{KernelError, format_shape};
use super::super::fresh::Piece;
use super::super::prefetch::{Intent, Spread};
use super::lanes::{self, binary, cast, keep, positions, select, unary, write};
use super::layout::{Operand, Values};
use super::slot::{Lane, Segment, Side, Slot, State, Storage, View, zero};
use super::totals::Accumulator;
use crate::dtype::{DType, Scalar};
use crate::graph::fused::{Domain, FusedKernel, Instr, InstrKind, OutputKind};
use crate::graph::op::ReduceOp;

/// The segments one task computes and the parts of the outputs it writes.
pub(crate) struct Task<'b> {
    pub segments: Vec<Segment>,
    pub outputs: Vec<OutChunk<'b>>,
}

/// A task's part of an output: elements, rows, kept elements, or nothing (a total,
/// accumulated instead, or the count).
pub(crate) enum OutChunk<'b> {
    F32(Piece<'b, f32>),
    I64(Piece<'b, i64>),
    Bool(Piece<'b, bool>),
    Total,
}

/// What a task leaves: the earliest failing instruction, and its accumulators of totals.
pub(crate) struct TaskResult {
    pub failure: Option<(usize, KernelError)>,
    pub totals: Vec<Option<Scalar>>,
}

/// The per-task scratch: one slot per instruction, which of them hold a value that is the
/// same in every segment (computed once), how many elements of the current segment the
/// mask kept, and the storages no value alive needs.
pub(crate) struct Scratch {
    slots: Vec<Slot>,
    settled: Vec<bool>,
    kept: usize,
    free: Vec<Storage>,
    /// `(after, value)`, by `after`: instruction `value` is read by nothing computed after
    /// instruction `after`, so its storage is free from then on.
    deaths: Vec<(usize, usize)>,
    /// Per-row values of a segment of many rows, each repeated along its row for a
    /// per-element instruction that reads it: `(instruction, slot)`, swapped into the
    /// instruction's place while the reader computes.
    spread_rows: Vec<(usize, Slot)>,
    /// The next segment's inputs, asked for while this one is computed.
    ahead: Spread,
}

/// Scratches kept on each thread for the next kernel it runs, at most this many.
const SPARES: usize = 4;

/// Storages of more values than this are not kept with a spare scratch (a long row's).
const SPARE_VALUES: usize = 4 * super::CHUNK;

thread_local! {
    /// Scratches of kernels that finished on this thread. A kernel of a few elements
    /// allocated its slots, liveness and storages anew on every call, about a dozen
    /// allocations of a compiled call's thirty-odd.
    static SPARE: RefCell<Vec<Scratch>> = const { RefCell::new(Vec::new()) };
}

impl Scratch {
    /// A scratch for `kernel`: a spare one of this thread, made ready for it, or a new one.
    pub fn new(kernel: &FusedKernel) -> Scratch {
        let spare = SPARE.try_with(|spare| spare.try_borrow_mut().ok()?.pop());
        let mut scratch = spare.ok().flatten().unwrap_or_else(Scratch::empty);
        scratch.prepare(kernel);
        scratch
    }

    /// A scratch of no kernel, holding no memory.
    const fn empty() -> Scratch {
        Scratch {
            slots: Vec::new(),
            settled: Vec::new(),
            kept: 0,
            free: Vec::new(),
            deaths: Vec::new(),
            spread_rows: Vec::new(),
            ahead: Spread::new(),
        }
    }

    /// Sets the scratch up for `kernel`, keeping what memory it holds: every storage is
    /// free, no value is settled.
    fn prepare(&mut self, kernel: &FusedKernel) {
        self.release_slots();
        self.slots.clear();
        (self.slots).extend(kernel.body.iter().map(|instr| Slot::new(instr.dtype)));
        self.settled.clear();
        self.settled.resize(kernel.body.len(), false);
        self.kept = 0;
        deaths(kernel, &mut self.deaths);
        self.ahead.clear();
    }

    /// Every slot's storage is free again.
    fn release_slots(&mut self) {
        for slot in &mut self.slots {
            release(&mut self.free, &mut slot.storage);
        }
    }

    /// How many elements the mask kept in the segment last computed.
    pub fn kept(&self) -> usize {
        self.kept
    }

    /// Every storage a value of the last segment held is free again (settled values hold
    /// none: they are constants or operands' slices).
    fn reclaim(&mut self) {
        for (slot, settled) in self.slots.iter_mut().zip(&self.settled) {
            if !settled {
                release(&mut self.free, &mut slot.storage);
            }
        }
    }

    /// Frees the storages of the values no instruction from `index` on reads, starting at
    /// `cursor` in the deaths; returns where the next call starts.
    fn bury(&mut self, index: usize, mut cursor: usize) -> usize {
        while let Some(&(after, value)) = self.deaths.get(cursor) {
            if after >= index {
                break;
            }
            release(&mut self.free, &mut self.slots[value].storage);
            cursor += 1;
        }
        cursor
    }
}

impl Drop for Scratch {
    /// Keeps the scratch's memory for the thread's next kernel, less its large storages.
    fn drop(&mut self) {
        if self.slots.capacity() == 0 {
            return;
        }
        let _ = SPARE.try_with(|spare| {
            let Ok(mut spare) = spare.try_borrow_mut() else {
                return;
            };
            if spare.len() < SPARES {
                let mut kept = std::mem::replace(self, Scratch::empty());
                kept.release_slots();
                for (_, slot) in &mut kept.spread_rows {
                    release(&mut kept.free, &mut slot.storage);
                }
                kept.free
                    .retain(|storage| storage.values_held() <= SPARE_VALUES);
                spare.push(kept);
            }
        });
    }
}

/// Moves a storage that holds memory to the free ones (one holding none is not worth
/// keeping: handing it out would only allocate).
fn release(free: &mut Vec<Storage>, storage: &mut Storage) {
    if storage.holds_memory() {
        free.push(std::mem::take(storage));
    }
}

/// When each instruction's value dies: after its last reader, or after itself if nothing
/// reads it. Values read after the segment (outputs, totals, counted masks) and masks (read
/// by the counting pass, which skips instructions it does not need) never die in a segment.
fn deaths(kernel: &FusedKernel, deaths: &mut Vec<(usize, usize)>) {
    // `(after, value)` by value first, `after` the last reader so far (`NEVER` for a value
    // that never dies); written into `deaths` itself, so that nothing is allocated.
    const NEVER: usize = usize::MAX;
    deaths.clear();
    deaths.extend((0..kernel.body.len()).map(|value| (value, value)));
    for (index, instr) in kernel.body.iter().enumerate() {
        for operand in instr.operands() {
            if let Some((after, _)) = deaths.get_mut(operand) {
                *after = (*after).max(index);
            }
        }
        if let InstrKind::Keep(_, mask) | InstrKind::Position(mask) = instr.kind {
            deaths[mask].0 = NEVER;
        }
    }
    for output in &kernel.outputs {
        let (OutputKind::Values(value) | OutputKind::Total(_, value) | OutputKind::Count(value)) =
            output.kind;
        deaths[value].0 = NEVER;
    }
    deaths.retain(|(after, _)| *after != NEVER);
    deaths.sort_unstable();
}

/// What every task shares.
pub(crate) struct Context<'k> {
    pub kernel: &'k FusedKernel,
    pub operands: &'k [Operand<'k>],
    pub shape: &'k [usize],
}

impl Context<'_> {
    pub fn run(&self, mut task: Task<'_>, scratch: &mut Scratch) -> TaskResult {
        let mut result = TaskResult {
            failure: None,
            totals: Vec::new(),
        };
        let mut totals: Vec<Option<Accumulator>> = self
            .kernel
            .outputs
            .iter()
            .map(|output| match output.kind {
                OutputKind::Total(op, value) => {
                    Some(Accumulator::new(op, self.kernel.body[value].dtype))
                }
                OutputKind::Values(_) | OutputKind::Count(_) => None,
            })
            .collect();
        // Each output written or folded after a segment is one more step to spread the
        // next segment's requests over.
        let after = (self.kernel.outputs.iter())
            .filter(|output| !matches!(output.kind, OutputKind::Count(_)))
            .count();
        let mut ahead = std::mem::take(&mut scratch.ahead);
        for (index, segment) in task.segments.iter().enumerate() {
            ahead.clear();
            if let Some(next) = task.segments.get(index + 1) {
                self.inputs_of(*next, None, &mut ahead);
            }
            let spread = Some((&mut ahead, after));
            self.segment(*segment, scratch, &mut result.failure, None, spread);
            let rows = self.rows_of(*segment);
            let kept = Segment {
                start: 0,
                len: scratch.kept,
            };
            for ((output, chunk), total) in self
                .kernel
                .outputs
                .iter()
                .zip(&mut task.outputs)
                .zip(&mut totals)
            {
                let (OutputKind::Values(value) | OutputKind::Total(_, value)) = output.kind else {
                    continue;
                };
                ahead.step();
                let slot = &scratch.slots[value];
                let operands = self.operands;
                let domain = self.kernel.body[value].domain;
                let Some(total) = total else {
                    let extent = match domain {
                        Domain::Kept => kept,
                        Domain::Row => rows,
                        Domain::Uniform | Domain::Element => *segment,
                    };
                    write(chunk, slot, operands, extent);
                    continue;
                };
                let extent = if domain == Domain::Kept {
                    kept
                } else {
                    *segment
                };
                if let Err(error) = total.push(slot, operands, extent) {
                    result.failure.get_or_insert((value, error));
                }
            }
            ahead.finish();
        }
        scratch.ahead = ahead;
        result.totals = totals
            .into_iter()
            .map(|total| total.map(Accumulator::finish))
            .collect();
        result
    }

    /// The mask's flags over `segment`, computing only the instructions it depends on, and
    /// asking for their inputs over `next` meanwhile.
    pub fn flags<'s>(
        &'s self,
        segment: Segment,
        next: Option<Segment>,
        scratch: &'s mut Scratch,
        needed: &[bool],
        mask: usize,
    ) -> Side<'s, bool> {
        let mut ahead = std::mem::take(&mut scratch.ahead);
        ahead.clear();
        if let Some(next) = next {
            self.inputs_of(next, Some(needed), &mut ahead);
        }
        let spread = Some((&mut ahead, 0));
        self.segment(segment, scratch, &mut None, Some(needed), spread);
        ahead.finish();
        scratch.ahead = ahead;
        let view = View {
            slot: &scratch.slots[mask],
            operands: self.operands,
            segment,
        };
        view.side::<bool>()
    }

    /// Computes every instruction over one segment; an element error is left in `failure`
    /// unless an earlier instruction's is already there. The memory in `spread` is asked for
    /// a share at a time between the instructions.
    pub fn evaluate(
        &self,
        segment: Segment,
        scratch: &mut Scratch,
        failure: &mut Option<(usize, KernelError)>,
        spread: &mut Spread,
    ) {
        self.segment(segment, scratch, failure, None, Some((&mut *spread, 0)));
        spread.finish();
    }

    /// Adds to `spread` the elements over `segment` of each full-shape operand that an
    /// input instruction reads (of those `only` marks).
    pub fn inputs_of(&self, segment: Segment, only: Option<&[bool]>, spread: &mut Spread) {
        for (index, instr) in self.kernel.body.iter().enumerate() {
            let InstrKind::Input(position) = instr.kind else {
                continue;
            };
            let Some(operand) = self.operands.get(position) else {
                continue;
            };
            if !operand.is_full() || only.is_some_and(|needed| !needed[index]) {
                continue;
            }
            let (address, size) = match operand.values() {
                Values::F32(data) => (data.as_ptr().addr(), size_of::<f32>()),
                Values::I64(data) => (data.as_ptr().addr(), size_of::<i64>()),
                Values::Bool(data) => (data.as_ptr().addr(), size_of::<bool>()),
            };
            let start = address.wrapping_add(segment.start * size);
            spread.push(start, segment.len * size, Intent::ReadNext);
        }
    }

    /// Instruction `value`'s values over `segment` (for a kept value, over the kept elements)
    /// after [`Context::evaluate`].
    pub fn view<'s>(&'s self, scratch: &'s Scratch, value: usize, segment: Segment) -> View<'s> {
        View {
            slot: &scratch.slots[value],
            operands: self.operands,
            segment,
        }
    }

    /// Computes every instruction (or those `only` marks) over one segment. The memory in
    /// `spread` is spread over the instructions computed and the steps the caller takes
    /// after them (the second number); the caller asks for what is left.
    fn segment(
        &self,
        segment: Segment,
        scratch: &mut Scratch,
        failure: &mut Option<(usize, KernelError)>,
        only: Option<&[bool]>,
        mut spread: Option<(&mut Spread, usize)>,
    ) {
        scratch.kept = 0;
        let rows = self.rows_of(segment);
        scratch.reclaim();
        let mut buried = 0;
        if let Some((spread, after)) = spread.as_mut() {
            let steps = (0..self.kernel.body.len()).filter(|&index| computes(scratch, only, index));
            spread.plan(steps.count() + *after);
        }
        for (index, instr) in self.kernel.body.iter().enumerate() {
            if !computes(scratch, only, index) {
                continue;
            }
            if let Some((spread, _)) = spread.as_mut() {
                spread.step();
            }
            buried = scratch.bury(index, buried);
            scratch.slots[index].storage = scratch.free.pop().unwrap_or_default();
            // Kept instructions read kept values; those that keep read per-element ones.
            let keeps = matches!(instr.kind, InstrKind::Keep(..) | InstrKind::Position(_));
            // A reduction reads the elements of the rows it computes a value for.
            let reduces = matches!(instr.kind, InstrKind::Reduce(..));
            let extent = match instr.domain {
                Domain::Kept if !keeps => Segment {
                    start: 0,
                    len: scratch.kept,
                },
                Domain::Row if !reduces => rows,
                Domain::Uniform | Domain::Element | Domain::Kept | Domain::Row => segment,
            };
            let spread = if instr.domain == Domain::Element && rows.len > 1 {
                self.spread_rows(instr, scratch, rows)
            } else {
                0
            };
            let (done, rest) = scratch.slots.split_at_mut(index);
            let slot = &mut rest[0];
            match self.instr(&instr.kind, done, slot, extent) {
                Ok((state, kept)) => {
                    slot.state = state;
                    if keeps {
                        scratch.kept = kept;
                    }
                    scratch.settled[index] = Self::invariant(&instr.kind, state);
                }
                Err(error) => {
                    slot.state = State::Splat(zero(instr.dtype));
                    if failure.as_ref().is_none_or(|(first, _)| index < *first) {
                        *failure = Some((index, error));
                    }
                }
            }
            // A value that is one number or an operand's slice needs no storage.
            if !matches!(slot.state, State::Buffer) {
                release(&mut scratch.free, &mut slot.storage);
            }
            // Only after the result is stored: kept in registers until then (held across
            // this loop, it went through memory and stalled every instruction).
            for (operand, values) in &mut scratch.spread_rows[..spread] {
                std::mem::swap(&mut done[*operand], values);
            }
        }
    }

    /// The rows `segment` covers in a kernel over rows, as the extent of its per-row values
    /// (a segment of rows without elements covers one row; so, for this purpose, does every
    /// segment of a kernel without rows).
    pub fn rows_of(&self, segment: Segment) -> Segment {
        match self.shape.last() {
            Some(&length) if self.kernel.rows && length > 0 => Segment {
                start: segment.start / length,
                len: segment.len / length,
            },
            _ => Segment { start: 0, len: 1 },
        }
    }

    /// Puts in the place of each per-row operand of per-element `instr` that holds a value
    /// for each of several `rows` those values repeated along their rows (the slots it
    /// replaces wait in `scratch.spread_rows`, to be swapped back); returns how many.
    fn spread_rows(&self, instr: &Instr, scratch: &mut Scratch, rows: Segment) -> usize {
        let length = self.shape.last().copied().unwrap_or(1);
        let mut count = 0;
        for operand in instr.operands() {
            let source = &scratch.slots[operand];
            let per_row = self.kernel.body[operand].domain == Domain::Row;
            let spread = &mut scratch.spread_rows;
            let seen = spread[..count].iter().any(|(index, _)| *index == operand);
            if !per_row || !matches!(source.state, State::Buffer) || seen {
                continue;
            }
            if spread.len() == count {
                spread.push((operand, Slot::new(source.dtype)));
            }
            let (index, target) = &mut spread[count];
            *index = operand;
            target.dtype = source.dtype;
            target.state = State::Buffer;
            match source.dtype {
                DType::F32 => repeat_each::<f32>(source, rows.len, length, target),
                DType::I64 => repeat_each::<i64>(source, rows.len, length, target),
                DType::Bool => repeat_each::<bool>(source, rows.len, length, target),
            }
            std::mem::swap(&mut scratch.slots[operand], target);
            count += 1;
        }
        count
    }

    /// An instruction's value over `segment` (a reduction's: one for each row of it), and
    /// for one that keeps elements, how many it kept. Inlined into its one caller, so the
    /// result stays in registers (out of line, moving it through memory stalled every
    /// instruction of every segment).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn instr(
        &self,
        kind: &InstrKind,
        done: &[Slot],
        slot: &mut Slot,
        segment: Segment,
    ) -> Result<(State, usize), KernelError> {
        let operands = self.operands;
        let view = |index: usize| View {
            slot: &done[index],
            operands,
            segment,
        };
        let state = match kind {
            InstrKind::Input(position) => self.input(*position, slot, segment),
            InstrKind::Int(dim) => State::Splat(Scalar::Int(dim.known().ok_or_else(|| {
                KernelError::Value("a size was not resolved before running".into())
            })?)),
            InstrKind::Float(value) => State::Splat(Scalar::Float(*value)),
            InstrKind::Bool(value) => State::Splat(Scalar::Bool(*value)),
            InstrKind::Unary(op, a) => unary(*op, &view(*a), slot),
            InstrKind::Binary(op, a, b) => binary(*op, &view(*a), &view(*b), slot)?,
            InstrKind::Cast(a) => cast(&view(*a), slot),
            InstrKind::Where(c, a, b) => select(&view(*c), &view(*a), &view(*b), slot),
            InstrKind::Reduce(op, a) => {
                let rows = self.rows_of(segment).len;
                self.reduce(*op, &view(*a), slot, rows)?
            }
            InstrKind::Keep(a, mask) => return Ok(keep(&view(*a), &view(*mask), slot)),
            InstrKind::Position(mask) => return Ok(positions(&view(*mask), slot)),
        };
        Ok((state, 0))
    }

    /// Whether an instruction's value is the same in every segment: a constant, or an
    /// operand read as its one element or as the slice of a full-shape operand (a segment's
    /// slice is found when it is read), not gathered into the slot's buffer.
    fn invariant(kind: &InstrKind, state: State) -> bool {
        match kind {
            InstrKind::Int(_) | InstrKind::Float(_) | InstrKind::Bool(_) => true,
            InstrKind::Input(_) => !matches!(state, State::Buffer),
            InstrKind::Unary(..)
            | InstrKind::Binary(..)
            | InstrKind::Cast(_)
            | InstrKind::Where(..)
            | InstrKind::Reduce(..)
            | InstrKind::Keep(..)
            | InstrKind::Position(_) => false,
        }
    }

    fn input(&self, position: usize, slot: &mut Slot, segment: Segment) -> State {
        let operand = &self.operands[position];
        match operand.values() {
            Values::F32(data) => gathered(operand, segment, data, slot, position),
            Values::I64(data) => gathered(operand, segment, data, slot, position),
            Values::Bool(data) => gathered(operand, segment, data, slot, position),
        }
    }

    /// A reduction of each of the `rows` rows the input's segment covers.
    fn reduce(
        &self,
        op: ReduceOp,
        input: &View<'_>,
        slot: &mut Slot,
        rows: usize,
    ) -> Result<State, KernelError> {
        if input.segment.len == 0 && op.needs_elements() {
            return Err(KernelError::Empty(format!(
                "cannot take {} over an empty extent of a tensor of shape {}",
                op.name(),
                format_shape(self.shape)
            )));
        }
        // Rows whose result has their elements' type fold straight into the slot's buffer,
        // with code made for short rows.
        let length = input.segment.len / rows.max(1);
        if rows > 1 && length > 0 && input.slot.dtype == slot.dtype {
            let folded = match slot.dtype {
                DType::F32 => fold_rows_into(input, slot, rows, |values, out| {
                    lanes::reduce_rows_f32(op, values, length, out)
                }),
                DType::I64 => fold_rows_into(input, slot, rows, |values, out| {
                    lanes::reduce_rows_i64(op, values, length, out)
                }),
                DType::Bool => fold_rows_into(input, slot, rows, |values, out| {
                    lanes::reduce_rows_bool(op, values, length, out)
                }),
            };
            if folded {
                return Ok(State::Buffer);
            }
        }
        Ok(match input.slot.dtype {
            DType::F32 => reduce_rows::<f32>(input, slot, rows, |row| lanes::reduce_f32(op, row)),
            DType::I64 => reduce_rows::<i64>(input, slot, rows, |row| lanes::reduce_i64(op, row)),
            DType::Bool => {
                reduce_rows::<bool>(input, slot, rows, |row| lanes::reduce_bool(op, row))
            }
        })
    }
}

/// Whether a segment computes instruction `index`: it is not settled, and `only` (if given)
/// marks it.
fn computes(scratch: &Scratch, only: Option<&[bool]>, index: usize) -> bool {
    !scratch.settled[index] && only.is_none_or(|needed| needed[index])
}

/// Each of the first `rows` values of `source` (held in its buffer) `length` times, into
/// `target`'s buffer.
fn repeat_each<T: Lane>(source: &Slot, rows: usize, length: usize, target: &mut Slot) {
    let values = T::values(source);
    let values = &values[..rows.min(values.len())];
    let buffer = T::buffer(target);
    buffer.clear();
    // Short rows as arrays of a known length: filled one by one, rows of four took a
    // quarter of a softmax over them (2,500,000 x 4), seven times as long as this.
    match length {
        1 => buffer.extend_from_slice(values),
        2 => repeat_rows::<T, 2>(values, buffer),
        3 => repeat_rows::<T, 3>(values, buffer),
        4 => repeat_rows::<T, 4>(values, buffer),
        5 => repeat_rows::<T, 5>(values, buffer),
        6 => repeat_rows::<T, 6>(values, buffer),
        7 => repeat_rows::<T, 7>(values, buffer),
        8 => repeat_rows::<T, 8>(values, buffer),
        16 => repeat_rows::<T, 16>(values, buffer),
        _ => {
            buffer.resize(values.len() * length, T::default());
            for (row, &value) in buffer.chunks_exact_mut(length.max(1)).zip(values) {
                row.fill(value);
            }
        }
    }
}

/// Each of `values` `LENGTH` times, appended to `buffer`.
fn repeat_rows<T: Copy, const LENGTH: usize>(values: &[T], buffer: &mut Vec<T>) {
    buffer.extend(values.iter().flat_map(|&value| [value; LENGTH]));
}

/// Folds the `rows` rows of `input` into the slot's buffer of the same type with `fold`
/// (one of the `reduce_rows_*` of [`lanes`]); whether it could (the input is a slice and
/// `fold` takes the reduction).
fn fold_rows_into<T: Lane>(
    input: &View<'_>,
    slot: &mut Slot,
    rows: usize,
    fold: impl FnOnce(&[T], &mut [T]) -> Option<()>,
) -> bool {
    let Side::Slice(values) = input.side::<T>() else {
        return false;
    };
    let out = T::buffer(slot);
    out.clear();
    out.resize(rows, T::default());
    fold(values, out).is_some()
}

/// Folds each of `rows` rows of `input` (the values of a segment of whole rows) into the
/// slot: one value per row, or one for all of them when there is one row or the input is
/// the same everywhere (every row then folds the same elements).
fn reduce_rows<T: Lane>(
    input: &View<'_>,
    slot: &mut Slot,
    rows: usize,
    fold: impl Fn(&[T]) -> Scalar,
) -> State {
    let length = input.segment.len / rows.max(1);
    match input.side::<T>() {
        Side::Slice(values) if rows > 1 => {
            let folded = values.chunks_exact(length.max(1)).map(fold);
            match slot.dtype {
                DType::F32 => extend::<f32>(slot, folded),
                DType::I64 => extend::<i64>(slot, folded),
                DType::Bool => extend::<bool>(slot, folded),
            }
            State::Buffer
        }
        Side::Slice(values) => State::Splat(fold(values)),
        Side::Splat(value) => {
            let row = T::buffer(slot);
            row.clear();
            row.extend(std::iter::repeat_n(value, length));
            State::Splat(fold(row))
        }
    }
}

/// Replaces the values in the slot's buffer of `T` with `values`.
fn extend<T: Lane>(slot: &mut Slot, values: impl Iterator<Item = Scalar>) {
    let buffer = T::buffer(slot);
    buffer.clear();
    buffer.extend(values.map(T::from_scalar));
}

/// An operand's elements for a segment: one value when it has a single element (it then
/// reads the same everywhere, kept elements included), the operand's own slice when it has
/// the iteration shape, else gathered into the slot's buffer.
fn gathered<T: Lane>(
    operand: &Operand<'_>,
    segment: Segment,
    data: &[T],
    slot: &mut Slot,
    position: usize,
) -> State {
    if let [value] = data {
        return State::Splat(value.to_scalar());
    }
    if operand.is_full() {
        return State::Operand(position);
    }
    match operand.side(segment, data, T::buffer(slot)) {
        Side::Splat(value) => State::Splat(value.to_scalar()),
        Side::Slice(_) => State::Buffer,
    }
}

#[cfg(test)]
mod tests {
    use super::super::layout::Operand;
    use super::*;
    use crate::backend::cpu::Tensor;
    use crate::graph::fused::{FusedOutput, Instr, Member};
    use crate::graph::op::{BinaryOp, UnaryOp};
    use crate::graph::shape::{Dim, Meta};

    fn instr(kind: InstrKind, dtype: DType) -> Instr {
        let domain = match kind {
            InstrKind::Float(_) | InstrKind::Int(_) | InstrKind::Bool(_) => Domain::Uniform,
            _ => Domain::Element,
        };
        Instr {
            kind,
            dtype,
            domain,
            member: 0,
        }
    }

    fn kernel(len: usize, body: Vec<Instr>, outputs: Vec<OutputKind>) -> FusedKernel {
        let meta = Meta::new(DType::F32, vec![Dim::from(len)]);
        FusedKernel {
            shape: vec![Dim::from(len)],
            rows: false,
            inputs: vec![meta.clone()],
            body,
            outputs: outputs
                .into_iter()
                .map(|kind| FusedOutput {
                    kind,
                    meta: meta.clone(),
                    member: 0,
                })
                .collect(),
            members: vec![Member {
                name: "chain",
                span: crate::source::Span::default(),
                trace: Vec::new(),
            }],
        }
    }

    /// `relu(x * 2 + 1) * x - 0.5`: instruction 0 reads `x`, 8 is the result.
    fn chain(len: usize) -> FusedKernel {
        use InstrKind::{Binary, Float, Input, Unary};
        let body = vec![
            instr(Input(0), DType::F32),
            instr(Float(2.0), DType::F32),
            instr(Binary(BinaryOp::Mul, 0, 1), DType::F32),
            instr(Float(1.0), DType::F32),
            instr(Binary(BinaryOp::Add, 2, 3), DType::F32),
            instr(Unary(UnaryOp::Relu, 4), DType::F32),
            instr(Binary(BinaryOp::Mul, 5, 0), DType::F32),
            instr(Float(0.5), DType::F32),
            instr(Binary(BinaryOp::Sub, 6, 7), DType::F32),
        ];
        kernel(len, body, vec![OutputKind::Values(8)])
    }

    #[test]
    fn values_die_after_their_last_reader_and_outputs_and_masks_never() {
        use InstrKind::{Binary, Float, Input, Keep};
        // `x` is read last by instruction 6, the product by 4, ...; the result never dies.
        // Into a vector that holds a stale entry, as a spare scratch's does.
        let deaths = |kernel: &FusedKernel| {
            let mut deaths = vec![(7, 7)];
            super::deaths(kernel, &mut deaths);
            deaths
        };
        assert_eq!(
            deaths(&chain(8)),
            [
                (2, 1),
                (4, 2),
                (4, 3),
                (5, 4),
                (6, 0),
                (6, 5),
                (8, 6),
                (8, 7)
            ]
        );
        let body = vec![
            instr(Input(0), DType::F32),
            instr(Float(0.0), DType::F32),
            instr(Binary(BinaryOp::Gt, 0, 1), DType::Bool),
            instr(Keep(0, 2), DType::F32),
        ];
        let masked = kernel(8, body, vec![OutputKind::Values(3), OutputKind::Count(2)]);
        // The mask (2) and the kept values (3) never die; `x` dies after the keep.
        assert_eq!(deaths(&masked), [(2, 1), (3, 0)]);
    }

    #[test]
    fn a_chain_is_computed_in_two_storages_whatever_its_length() {
        let len = 3000;
        let xs: Vec<f32> = (0..len).map(|i| i as f32 / 100.0 - 10.0).collect();
        let x = Tensor::from_vec(&[len], xs.clone()).unwrap();
        let kernel = chain(len);
        let shape = [len];
        let operands = [Operand::new(&x, &shape).unwrap()];
        let context = Context {
            kernel: &kernel,
            operands: &operands,
            shape: &shape,
        };
        // Not a spare of this thread's: those may hold more storages.
        let mut scratch = Scratch::empty();
        scratch.prepare(&kernel);
        let mut spread = Spread::default();
        for start in (0..len).step_by(1024) {
            let segment = Segment {
                start,
                len: 1024.min(len - start),
            };
            let mut failure = None;
            context.evaluate(segment, &mut scratch, &mut failure, &mut spread);
            assert!(failure.is_none());
            let Side::Slice(values) = context.view(&scratch, 8, segment).side::<f32>() else {
                panic!("the result is per element");
            };
            let expected: Vec<f32> = xs[start..start + segment.len]
                .iter()
                .map(|&x| (x * 2.0 + 1.0).max(0.0) * x - 0.5)
                .collect();
            assert_eq!(values, expected);
            let holding = scratch
                .slots
                .iter()
                .map(|slot| &slot.storage)
                .chain(&scratch.free)
                .filter(|storage| storage.holds_memory())
                .count();
            assert_eq!(holding, 2, "after the segment at {start}");
        }
    }

    /// The values of instruction `value` of `kernel` over `x` (one segment of 4), computed in
    /// `scratch`.
    fn computed(kernel: &FusedKernel, x: &Tensor, scratch: &mut Scratch, value: usize) -> Vec<f32> {
        let shape = [4];
        let operands = [Operand::new(x, &shape).unwrap()];
        let context = Context {
            kernel,
            operands: &operands,
            shape: &shape,
        };
        let segment = Segment { start: 0, len: 4 };
        let mut failure = None;
        context.evaluate(segment, scratch, &mut failure, &mut Spread::default());
        assert!(failure.is_none());
        match context.view(scratch, value, segment).side::<f32>() {
            Side::Slice(values) => values.to_vec(),
            Side::Splat(value) => vec![value; 4],
        }
    }

    #[test]
    fn a_spare_scratch_serves_the_next_kernel_as_a_new_one_would() {
        use InstrKind::{Binary, Input, Unary};
        let x = Tensor::from_vec(&[4], vec![1.0, -2.0, 3.0, -4.0]).unwrap();
        let first = chain(4);
        let mut scratch = Scratch::new(&first);
        assert_eq!(
            computed(&first, &x, &mut scratch, 8),
            [2.5, -0.5, 20.5, -0.5]
        );
        drop(scratch);
        // Instruction 1 was a settled constant of the first kernel; here it is computed.
        let body = vec![
            instr(Input(0), DType::F32),
            instr(Unary(UnaryOp::Neg, 0), DType::F32),
            instr(Binary(BinaryOp::Mul, 1, 0), DType::F32),
        ];
        let second = kernel(4, body, vec![OutputKind::Values(2)]);
        let mut scratch = Scratch::new(&second);
        assert!(
            scratch.free.iter().any(Storage::holds_memory),
            "the first kernel's storages are reused"
        );
        assert_eq!(scratch.deaths, [(2, 0), (2, 1)]);
        for _ in 0..2 {
            assert_eq!(
                computed(&second, &x, &mut scratch, 2),
                [-1.0, -4.0, -9.0, -16.0]
            );
        }
    }

    #[test]
    fn per_row_values_repeat_over_rows_of_every_length() {
        let rows = 5;
        for length in 0..=20 {
            let mut source = Slot::new(DType::I64);
            *i64::buffer(&mut source) = (10..10 + rows as i64).collect();
            // A target that held longer values before, as a reused one does.
            let mut target = Slot::new(DType::I64);
            *i64::buffer(&mut target) = vec![-1; 200];
            repeat_each::<i64>(&source, rows, length, &mut target);
            let expected: Vec<i64> = (10..10 + rows as i64)
                .flat_map(|value| std::iter::repeat_n(value, length))
                .collect();
            assert_eq!(i64::values(&target), expected, "rows of {length}");
        }
    }
}
