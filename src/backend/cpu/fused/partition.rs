//! How a fused kernel's iteration space is cut into tasks that run in parallel, and each task
//! into segments.
//!
//! A kernel without a mask runs tasks of [`BLOCK`] elements (or of whole rows, when it reduces
//! rows) in segments of [`CHUNK`] elements (or of whole rows: as many as fit in [`CHUNK`]
//! elements, at least one). A kernel that keeps elements first
//! computes its mask alone over everything, in parallel, and counts the kept elements of each
//! segment: that gives their count and where each task's kept values go. Its tasks are then
//! either the same blocks of elements, each writing its kept values after those of the tasks
//! before it, or, when it reduces kept values, stretches holding exactly [`BLOCK`] kept
//! elements each: the reduce kernel folds a compacted tensor in blocks of that many, and a
//! total over kept values is bitwise equal only when it folds the same blocks. Segments stay
//! on the grid of [`CHUNK`], so the mask of a segment is the same in both passes. (A kernel
//! whose only outputs are kept values, totals over them and the count needs no counts
//! first: it runs in one pass over blocks of elements, [`super::sequenced`].)

use rayon::prelude::*;

use super::super::compact::count_set;
use super::super::fold::BLOCK;
use super::CHUNK;
use super::eval::{Context, Scratch};
use super::slot::{Segment, Side};
use crate::graph::fused::{Domain, FusedKernel, InstrKind, OutputKind};

/// One task: a stretch of elements, and how many of them the mask keeps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Stretch {
    pub start: usize,
    pub end: usize,
    pub kept_len: usize,
}

pub(crate) struct Partition {
    numel: usize,
    /// For a kernel that reduces rows: how many rows, and their length (the last size).
    rows: Option<(usize, usize)>,
    /// Rows per task in a kernel that reduces rows (a multiple of `rows_per_segment`).
    rows_per_task: usize,
    /// Rows per segment in a kernel that reduces rows.
    rows_per_segment: usize,
    /// The tasks of a kernel with a mask that does not reduce rows; without a mask, blocks
    /// of [`BLOCK`] elements (`None`: computed when asked for, not listed).
    stretches: Option<Vec<Stretch>>,
    /// How many elements the mask keeps (zero without a mask).
    pub count: usize,
}

impl Partition {
    pub fn new(context: &Context<'_>, numel: usize) -> Partition {
        let kernel = context.kernel;
        if kernel.rows {
            let (length, outer) = context
                .shape
                .split_last()
                .map_or((1, &[][..]), |(last, outer)| (*last, outer));
            // Short rows go through the evaluator many at a time: one by one, each paid for
            // a pass over every instruction (5 * 10^6 rows of 2 took 4 times as long as
            // the unfused kernels).
            let rows_per_segment = CHUNK.checked_div(length).map_or(1, |rows| rows.max(1));
            let rows_per_task = (BLOCK / length.max(1)).max(1);
            return Partition {
                numel,
                rows: Some((outer.iter().product(), length)),
                rows_per_task: rows_per_task.div_ceil(rows_per_segment) * rows_per_segment,
                rows_per_segment,
                stretches: None,
                count: 0,
            };
        }
        let Some(mask) = kernel.mask() else {
            return Partition::elements(numel);
        };
        let counts = mask_counts(context, numel, mask);
        let count = counts.iter().sum();
        let stretches = if reduces_kept(kernel) {
            kept_blocks(context, mask, &counts, numel, count)
        } else {
            element_blocks(&counts, numel)
        };
        Partition {
            numel,
            rows: None,
            rows_per_task: 0,
            rows_per_segment: 0,
            stretches: Some(stretches),
            count,
        }
    }

    /// Tasks of [`BLOCK`] elements in segments of [`CHUNK`], whatever the kernel keeps: for
    /// a pass that learns the kept counts as it goes ([`super::sequenced`]).
    pub fn elements(numel: usize) -> Partition {
        Partition {
            numel,
            rows: None,
            rows_per_task: 0,
            rows_per_segment: 0,
            stretches: None,
            count: 0,
        }
    }

    /// For a kernel over rows without elements: the plan of one such row, and how many rows
    /// there are (more than one). Every row then computes the same values from the same
    /// constants and reductions of nothing.
    pub fn one_empty_row(&self) -> Option<(Partition, usize)> {
        match self.rows {
            Some((rows, 0)) if rows > 1 => {
                let one = Partition {
                    numel: 0,
                    rows: Some((1, 0)),
                    rows_per_task: 1,
                    rows_per_segment: 1,
                    stretches: None,
                    count: 0,
                };
                Some((one, rows))
            }
            _ => None,
        }
    }

    /// How many elements the iteration shape has.
    pub fn numel(&self) -> usize {
        self.numel
    }

    /// How many tasks there are.
    pub fn tasks(&self) -> usize {
        match self.rows {
            Some((rows, _)) => rows.div_ceil(self.rows_per_task),
            None => match &self.stretches {
                Some(stretches) => stretches.len(),
                None => self.numel.div_ceil(BLOCK),
            },
        }
    }

    /// Task `index` of a kernel that does not reduce rows.
    fn stretch(&self, index: usize) -> Stretch {
        match &self.stretches {
            Some(stretches) => stretches[index],
            None => Stretch {
                start: index * BLOCK,
                end: ((index + 1) * BLOCK).min(self.numel),
                kept_len: 0,
            },
        }
    }

    /// The segments of task `index`.
    pub fn segments(&self, index: usize) -> Vec<Segment> {
        if let Some((rows, length)) = self.rows {
            let first = index * self.rows_per_task;
            let end = (first + self.rows_per_task).min(rows);
            return (first..end)
                .step_by(self.rows_per_segment)
                .map(|row| Segment {
                    start: row * length,
                    len: (self.rows_per_segment.min(end - row)) * length,
                })
                .collect();
        }
        let Stretch { start, end, .. } = self.stretch(index);
        let mut segments = Vec::with_capacity((end - start).div_ceil(CHUNK) + 1);
        let mut at = start;
        while at < end {
            let next = ((at / CHUNK + 1) * CHUNK).min(end);
            segments.push(Segment {
                start: at,
                len: next - at,
            });
            at = next;
        }
        segments
    }

    /// How many values of an output of `domain` (not kept values, whose counts vary) each
    /// segment gives, but the last, which may give fewer: segment `index`'s values are the
    /// output's from `index` times this on.
    pub fn values_per_segment(&self, domain: Domain) -> usize {
        match self.rows {
            Some((_, length)) => self.rows_per_segment * per_row(domain, length),
            None => CHUNK,
        }
    }

    /// How many values an output of `domain` (not kept values) has.
    pub fn values_of(&self, domain: Domain) -> usize {
        match self.rows {
            Some((rows, length)) => rows * per_row(domain, length),
            None => self.numel,
        }
    }

    /// Segment `index` in order, with how many values of an output of `domain` (not kept
    /// values) it gives: its elements, or its rows' values.
    pub fn segment_in_order(&self, index: usize, domain: Domain) -> (Segment, usize) {
        if let Some((rows, length)) = self.rows {
            let row = index * self.rows_per_segment;
            let count = self.rows_per_segment.min(rows.saturating_sub(row));
            let segment = Segment {
                start: row * length,
                len: count * length,
            };
            return (segment, count * per_row(domain, length));
        }
        let segment = grid_segment(index, self.numel);
        (segment, segment.len)
    }

    /// How many values of an output of `domain` each task writes, in task order.
    pub fn output_lens(&self, domain: Domain) -> Vec<usize> {
        if let Some((rows, length)) = self.rows {
            return (0..self.tasks())
                .map(|index| {
                    let first = index * self.rows_per_task;
                    let count = self.rows_per_task.min(rows - first);
                    match domain {
                        Domain::Row => count,
                        Domain::Uniform | Domain::Element | Domain::Kept => count * length,
                    }
                })
                .collect();
        }
        (0..self.tasks())
            .map(|index| self.stretch(index))
            .map(|stretch| match domain {
                Domain::Kept => stretch.kept_len,
                Domain::Uniform | Domain::Row | Domain::Element => stretch.end - stretch.start,
            })
            .collect()
    }
}

/// Whether a total reduces kept values.
fn reduces_kept(kernel: &FusedKernel) -> bool {
    kernel.outputs.iter().any(|output| {
        matches!(output.kind, OutputKind::Total(_, value) if kernel.body[value].domain == Domain::Kept)
    })
}

/// How many elements the mask keeps in each segment of [`CHUNK`] elements, computed in
/// parallel blocks with only the instructions the mask depends on.
fn mask_counts(context: &Context<'_>, numel: usize, mask: usize) -> Vec<usize> {
    let needed = dependencies(context.kernel, mask);
    let mut counts = vec![0; numel.div_ceil(CHUNK)];
    let fill = |scratch: &mut Scratch, (block, counts): (usize, &mut [usize])| {
        let len = counts.len();
        for (index, count) in counts.iter_mut().enumerate() {
            let at = block * (BLOCK / CHUNK) + index;
            let segment = grid_segment(at, numel);
            let next = (index + 1 < len).then(|| grid_segment(at + 1, numel));
            *count = match context.flags(segment, next, scratch, &needed, mask) {
                Side::Splat(flag) => usize::from(flag) * segment.len,
                Side::Slice(flags) => count_set(flags),
            };
        }
    };
    if numel > BLOCK {
        counts
            .par_chunks_mut(BLOCK / CHUNK)
            .enumerate()
            .for_each_init(|| Scratch::new(context.kernel), fill);
    } else {
        let mut scratch = Scratch::new(context.kernel);
        counts
            .chunks_mut(BLOCK / CHUNK)
            .enumerate()
            .for_each(|block| fill(&mut scratch, block));
    }
    counts
}

/// How many values of an output of `domain` a row of `length` elements gives.
fn per_row(domain: Domain, length: usize) -> usize {
    if domain == Domain::Row { 1 } else { length }
}

/// Segment `index` of the grid of [`CHUNK`] elements.
fn grid_segment(index: usize, numel: usize) -> Segment {
    let start = index * CHUNK;
    Segment {
        start,
        len: CHUNK.min(numel - start),
    }
}

/// Which instructions the value of `target` depends on (itself included).
fn dependencies(kernel: &FusedKernel, target: usize) -> Vec<bool> {
    let mut needed = vec![false; kernel.body.len()];
    needed[target] = true;
    for index in (0..=target).rev() {
        if needed[index] {
            for operand in kernel.body[index].operands() {
                needed[operand] = true;
            }
        }
    }
    debug_assert!(
        !needed
            .iter()
            .zip(&kernel.body)
            .any(|(needed, instr)| *needed && matches!(instr.kind, InstrKind::Keep(..))),
        "a mask never depends on kept values"
    );
    needed
}

/// Blocks of [`BLOCK`] elements, each writing its kept values after the earlier ones'.
fn element_blocks(counts: &[usize], numel: usize) -> Vec<Stretch> {
    counts
        .chunks(BLOCK / CHUNK)
        .enumerate()
        .map(|(index, counts)| Stretch {
            start: index * BLOCK,
            end: ((index + 1) * BLOCK).min(numel),
            kept_len: counts.iter().sum(),
        })
        .collect()
}

/// Stretches of exactly [`BLOCK`] kept elements (the last may hold fewer), each starting at
/// its first kept element (the first at element 0, the last ending at the end). The segment
/// where a stretch starts is found from the counts, the element in it from its flags.
fn kept_blocks(
    context: &Context<'_>,
    mask: usize,
    counts: &[usize],
    numel: usize,
    count: usize,
) -> Vec<Stretch> {
    let tasks = count.div_ceil(BLOCK).max(1);
    let needed = dependencies(context.kernel, mask);
    let mut wanted = Vec::with_capacity(tasks);
    let mut seen = 0;
    for (index, &here) in counts.iter().enumerate() {
        while wanted.len() + 1 < tasks && seen + here > (wanted.len() + 1) * BLOCK {
            wanted.push((index, (wanted.len() + 1) * BLOCK - seen));
        }
        seen += here;
    }
    let locate = |scratch: &mut Scratch, &(index, rank): &(usize, usize)| {
        let segment = grid_segment(index, numel);
        segment.start
            + match context.flags(segment, None, scratch, &needed, mask) {
                Side::Splat(_) => rank,
                Side::Slice(flags) => nth_set(flags, rank),
            }
    };
    let inner: Vec<usize> = wanted
        .par_iter()
        .map_init(|| Scratch::new(context.kernel), locate)
        .collect();
    let starts: Vec<usize> = std::iter::once(0)
        .chain(inner)
        .chain(std::iter::once(numel))
        .collect();
    starts
        .windows(2)
        .enumerate()
        .map(|(index, bounds)| Stretch {
            start: bounds[0],
            end: bounds[1],
            kept_len: BLOCK.min(count - index * BLOCK),
        })
        .collect()
}

/// The position of the set flag with `rank` set flags before it.
fn nth_set(flags: &[bool], rank: usize) -> usize {
    flags
        .iter()
        .enumerate()
        .filter(|(_, flag)| **flag)
        .nth(rank)
        .map_or(flags.len(), |(position, _)| position)
}

#[cfg(test)]
mod tests;
