//! A vector written in parallel pieces straight into fresh memory.
//!
//! A kernel's output is written once. Zero-filling it first would cost a whole extra pass
//! over memory; collecting pieces by value through rayon costs two copies of each piece
//! (out of the worker's scratch, then into place). Here each worker writes its piece's
//! values straight into the vector's reserved capacity, through a [`Piece`] that can only
//! append values and fills whatever its writer left out with the default, so every element
//! is written exactly once before the vector takes its length.
//!
//! `Vec::set_len` is the one `unsafe` call, and this wrapper is its only caller: the
//! standard library offers no safe way to take the length of capacity written through
//! `MaybeUninit`.

use std::mem::MaybeUninit;

use rayon::prelude::*;

/// Where one piece of the output is written: appended to from its start, and completed
/// with `T::default()` where its writer stopped short.
pub(crate) struct Piece<'p, T> {
    slots: &'p mut [MaybeUninit<T>],
    written: usize,
}

impl<T: Copy + Default> Piece<'_, T> {
    /// How many values the piece holds.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// The address of the piece's first value (a hint for the cache, never read through).
    pub fn address(&self) -> usize {
        self.slots.as_ptr().addr()
    }

    /// Appends as many of `values` as there is room for.
    pub fn extend(&mut self, values: &[T]) {
        let room = &mut self.slots[self.written..];
        let take = room.len().min(values.len());
        for (slot, value) in room[..take].iter_mut().zip(values) {
            slot.write(*value);
        }
        self.written += take;
    }

    /// Appends `count` copies of `value`, or as many as there is room for.
    pub fn repeat(&mut self, value: T, count: usize) {
        let room = &mut self.slots[self.written..];
        let take = room.len().min(count);
        for slot in &mut room[..take] {
            slot.write(value);
        }
        self.written += take;
    }

    /// Fills what was not written with the default.
    fn complete(&mut self) {
        self.repeat(T::default(), self.slots.len() - self.written);
    }
}

/// A vector of `len` values written in pieces of `piece` values (the last may be shorter),
/// in parallel with at least `min_pieces` pieces per rayon job; each worker's state comes
/// from `init`, and `write(state, index, piece)` writes piece `index`.
pub(crate) fn par_pieces<T, W>(
    len: usize,
    piece: usize,
    min_pieces: usize,
    init: impl Fn() -> W + Sync + Send,
    write: impl Fn(&mut W, usize, &mut Piece<'_, T>) + Sync + Send,
) -> Vec<T>
where
    T: Copy + Default + Send + Sync,
{
    let mut out: Vec<T> = Vec::with_capacity(len);
    out.spare_capacity_mut()[..len]
        .par_chunks_mut(piece.max(1))
        .with_min_len(min_pieces.max(1))
        .enumerate()
        .for_each_init(init, |state, (index, slots)| {
            let mut piece = Piece { slots, written: 0 };
            write(state, index, &mut piece);
            piece.complete();
        });
    // SAFETY: the first `len` elements of the capacity were split into pieces, every piece
    // was handed to exactly one worker, and `Piece::complete` wrote each value its writer
    // did not. A panicking writer propagates out of `for_each_init` before this line, with
    // the vector still empty.
    #[allow(unsafe_code)]
    unsafe {
        out.set_len(len);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_is_written_once_and_short_pieces_are_completed_with_the_default() {
        let values = par_pieces::<i64, ()>(
            10_000,
            64,
            4,
            || (),
            |(), index, piece| {
                let start = index as i64 * 64;
                // Odd pieces write half their values, then -1 until they are full: nothing
                // is written past a piece's end.
                let count = if index % 2 == 1 {
                    piece.len() / 2
                } else {
                    piece.len()
                };
                let values: Vec<i64> = (start..start + count as i64).collect();
                piece.extend(&values);
                piece.extend(&[-1; 100]);
            },
        );
        assert_eq!(values.len(), 10_000);
        for (position, value) in values.iter().enumerate() {
            let index = position / 64;
            let offset = position % 64;
            let len = 64.min(10_000 - index * 64);
            let expected = if index % 2 == 1 && offset >= len / 2 {
                -1
            } else {
                position as i64
            };
            assert_eq!(*value, expected, "at {position}");
        }
        let nothing = par_pieces::<f32, ()>(0, 64, 1, || (), |(), _, _| {});
        assert!(nothing.is_empty());
        let repeated = par_pieces::<f32, ()>(100, 30, 1, || (), |(), _, p| p.repeat(2.5, 7));
        let expected: Vec<f32> = (0..100)
            .map(|i| if i % 30 < 7 { 2.5 } else { 0.0 })
            .collect();
        assert_eq!(repeated, expected);
    }
}
