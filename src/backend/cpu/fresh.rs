//! Vectors written in pieces straight into fresh memory.
//!
//! A kernel's output is written once. Zero-filling it first would cost a whole extra pass
//! over memory (the allocator fills reused memory it hands out zeroed); collecting pieces
//! by value through rayon costs two copies of each piece (out of the worker's scratch, then
//! into place). Here the output is a [`Fresh`] vector: its reserved capacity is cut into
//! [`Piece`]s, each written by one worker that can only append values, and a piece
//! completes whatever its writer left out with the default when it is dropped. The vector
//! takes its length once the pieces of its last cut have all completed; if some never
//! did (a piece leaked with `mem::forget`), every value is first overwritten with the
//! default, so no value is ever read unwritten. A vector whose length is learnt as it is
//! written (kept values, [`super::fused`]) reserves room for the most it can hold and hands
//! out pieces from its start one at a time ([`Tail`]); it takes the length its pieces
//! covered.
//!
//! `Vec::set_len` is the one `unsafe` call, and [`Fresh::finish_first`] is its only caller: the
//! standard library offers no safe way to take the length of capacity written through
//! `MaybeUninit`.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::error::{Result, scratch_vec};

/// A vector of a known length, or of a known most, whose values are written through
/// [`Piece`]s.
pub(crate) struct Fresh<T> {
    values: Vec<T>,
    len: usize,
    /// How many values the pieces of the last cut have completed.
    completed: AtomicUsize,
    /// How many slots from the start the pieces of the last cut cover.
    cut: AtomicUsize,
}

impl<T: Copy + Default> Fresh<T> {
    /// Room for `len` values, or `OutOfMemory` when the machine cannot provide it now.
    pub fn new(len: usize) -> Result<Fresh<T>> {
        Ok(Fresh {
            values: scratch_vec(len)?,
            len,
            completed: AtomicUsize::new(0),
            cut: AtomicUsize::new(0),
        })
    }

    /// Room for `len` values, for kernels whose results were reserved before they ran.
    fn reserved(len: usize) -> Fresh<T> {
        Fresh {
            values: Vec::with_capacity(len),
            len,
            completed: AtomicUsize::new(0),
            cut: AtomicUsize::new(0),
        }
    }

    /// The vector's slots, forgetting what earlier pieces completed and covered (their
    /// borrows have ended, and slots they wrote stay written).
    fn slots(&mut self) -> (&mut [MaybeUninit<T>], &AtomicUsize) {
        let (slots, completed, _) = self.cut_anew();
        (slots, completed)
    }

    /// [`Fresh::slots`], with the count of slots the new cut covers.
    fn cut_anew(&mut self) -> (&mut [MaybeUninit<T>], &AtomicUsize, &AtomicUsize) {
        self.completed = AtomicUsize::new(0);
        self.cut = AtomicUsize::new(0);
        (
            &mut self.values.spare_capacity_mut()[..self.len],
            &self.completed,
            &self.cut,
        )
    }

    /// The vector cut into consecutive pieces of `lens` values (each as many as are left
    /// past the ones before it).
    pub fn pieces(&mut self, lens: &[usize]) -> Vec<Piece<'_, T>> {
        let mut tail = self.tail();
        lens.iter().map(|&len| tail.next(len)).collect()
    }

    /// The vector's slots, to be cut into consecutive pieces one at a time, each as long as
    /// its writer learns it must be: for a vector whose length is known only once it is
    /// written ([`Fresh::finish_first`]).
    pub fn tail(&mut self) -> Tail<'_, T> {
        let (rest, completed, cut) = self.cut_anew();
        Tail {
            rest,
            completed,
            cut,
        }
    }

    /// The written vector.
    pub fn finish(self) -> Vec<T> {
        let len = self.len;
        self.finish_first(len)
    }

    /// The vector of its first `len` values (at most its length), which the pieces of the
    /// last cut must have written; its capacity stays as it was.
    pub fn finish_first(mut self, len: usize) -> Vec<T> {
        let len = len.min(self.len);
        if *self.completed.get_mut() != len || *self.cut.get_mut() > len {
            for slot in &mut self.values.spare_capacity_mut()[..len] {
                slot.write(T::default());
            }
        }
        // SAFETY: the first `len` slots of the capacity are written: either the pieces of
        // the last cut, disjoint parts of the first `len` slots (they cover no more than
        // `len` from the start), completed `len` values between them (each counts its own
        // values once, when it is dropped, after writing every one), or every slot was
        // written just above.
        #[allow(unsafe_code)]
        unsafe {
            self.values.set_len(len);
        }
        self.values
    }
}

/// The slots of a [`Fresh`] vector not yet handed out in pieces.
pub(crate) struct Tail<'p, T> {
    rest: &'p mut [MaybeUninit<T>],
    completed: &'p AtomicUsize,
    cut: &'p AtomicUsize,
}

impl<'p, T: Copy + Default> Tail<'p, T> {
    /// The next `len` slots (or as many as are left) as a piece.
    pub fn next(&mut self, len: usize) -> Piece<'p, T> {
        let len = len.min(self.rest.len());
        let (slots, rest) = std::mem::take(&mut self.rest).split_at_mut(len);
        self.rest = rest;
        self.cut.fetch_add(len, Ordering::Relaxed);
        Piece::new(slots, self.completed)
    }
}

/// Where one piece of a [`Fresh`] vector is written: appended to from its start, and
/// completed with `T::default()` where its writer stopped short when it is dropped.
pub(crate) struct Piece<'p, T: Copy + Default> {
    slots: &'p mut [MaybeUninit<T>],
    written: usize,
    completed: &'p AtomicUsize,
}

impl<'p, T: Copy + Default> Piece<'p, T> {
    fn new(slots: &'p mut [MaybeUninit<T>], completed: &'p AtomicUsize) -> Piece<'p, T> {
        Piece {
            slots,
            written: 0,
            completed,
        }
    }

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
}

impl<T: Copy + Default> Drop for Piece<'_, T> {
    fn drop(&mut self) {
        self.repeat(T::default(), self.slots.len() - self.written);
        self.completed
            .fetch_add(self.slots.len(), Ordering::Relaxed);
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
    let mut out = Fresh::reserved(len);
    let (slots, completed) = out.slots();
    slots
        .par_chunks_mut(piece.max(1))
        .with_min_len(min_pieces.max(1))
        .enumerate()
        .for_each_init(init, |state, (index, slots)| {
            write(state, index, &mut Piece::new(slots, completed));
        });
    out.finish()
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

    #[test]
    fn pieces_are_consecutive_and_complete_themselves_when_dropped() {
        let mut fresh = Fresh::<i64>::new(10).expect("ten values");
        {
            let mut pieces = fresh.pieces(&[3, 4, 100]);
            assert_eq!(pieces.iter().map(Piece::len).collect::<Vec<_>>(), [3, 4, 3]);
            pieces[0].extend(&[1, 2, 3, 4]);
            pieces[1].repeat(7, 2);
            pieces[2].extend(&[9]);
        }
        assert_eq!(fresh.finish(), [1, 2, 3, 7, 7, 0, 0, 9, 0, 0]);
    }

    #[test]
    fn a_vector_whose_pieces_did_not_all_complete_is_all_defaults() {
        // A leaked piece never completes: its slots may be unwritten.
        let mut fresh = Fresh::<f32>::new(6).expect("six values");
        let mut pieces = fresh.pieces(&[2, 4]);
        pieces[0].extend(&[1.0, 2.0]);
        let second = pieces.pop().expect("two pieces");
        std::mem::forget(second);
        drop(pieces);
        assert_eq!(fresh.finish(), [0.0; 6]);
        // Pieces that cover only part of the vector leave the rest unwritten too.
        let mut fresh = Fresh::<bool>::new(4).expect("four values");
        fresh.pieces(&[1])[0].extend(&[true]);
        assert_eq!(fresh.finish(), [false; 4]);
        // A later cut counts alone: an earlier one's completions are forgotten.
        let mut fresh = Fresh::<i64>::new(4).expect("four values");
        drop(fresh.pieces(&[2]));
        std::mem::forget(fresh.pieces(&[2, 2]).pop());
        assert_eq!(fresh.finish(), [0; 4]);
    }

    #[test]
    fn a_tail_hands_out_pieces_in_turn_and_the_vector_takes_their_length() {
        let mut fresh = Fresh::<i64>::new(10).expect("ten values");
        {
            let mut tail = fresh.tail();
            let mut first = tail.next(2);
            let mut second = tail.next(3);
            let mut third = tail.next(0);
            // Written in any order, even after later pieces were handed out.
            second.extend(&[3, 4, 5, 6]);
            first.extend(&[1, 2]);
            third.extend(&[9]);
        }
        let values = fresh.finish_first(5);
        assert_eq!(values, [1, 2, 3, 4, 5]);
        assert_eq!(values.capacity(), 10, "the room reserved stays");
        // A tail never hands out more than the vector holds.
        let mut fresh = Fresh::<f32>::new(3).expect("three values");
        assert_eq!(fresh.tail().next(7).len(), 3);
    }

    #[test]
    fn a_vector_finished_short_of_its_pieces_or_past_them_is_all_defaults() {
        // Pieces covering more than the length asked for could leave it partly unwritten.
        let mut fresh = Fresh::<i64>::new(6).expect("six values");
        {
            let mut tail = fresh.tail();
            std::mem::forget(tail.next(2));
            tail.next(2).extend(&[7, 7]);
        }
        assert_eq!(fresh.finish_first(2), [0, 0]);
        // A length past the pieces covers unwritten slots.
        let mut fresh = Fresh::<i64>::new(6).expect("six values");
        fresh.tail().next(2).extend(&[5, 5]);
        assert_eq!(fresh.finish_first(4), [0; 4]);
    }
}
