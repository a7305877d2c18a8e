//! Where an instruction's values live while a segment is computed, and how a later
//! instruction reads them.

use super::super::tensor::Element;
use super::layout::{Operand, Values};
use crate::dtype::{DType, Scalar};

/// A stretch of the iteration space computed at once: a chunk, or one row. For an
/// instruction over kept elements, `len` counts the kept elements of the stretch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segment {
    pub start: usize,
    pub len: usize,
}

/// One side of an elementwise function: one value for the whole segment, or one per element.
pub(crate) enum Side<'s, T> {
    Splat(T),
    Slice(&'s [T]),
}

/// An instruction's value over the current segment.
#[derive(Clone, Copy)]
pub(crate) enum State {
    Splat(Scalar),
    /// The slice of a full-shape operand.
    Operand(usize),
    /// In the slot's buffer (its first `len` values, `len` the segment's).
    Buffer,
}

/// An instruction's value over the current segment, and the storage it is computed into.
pub(crate) struct Slot {
    pub state: State,
    pub dtype: DType,
    pub storage: Storage,
}

impl Slot {
    pub fn new(dtype: DType) -> Slot {
        Slot {
            state: State::Buffer,
            dtype,
            storage: Storage::default(),
        }
    }
}

/// Where a slot computes its values: [`Vectors`], made on first use. A storage passes from
/// instruction to instruction within a segment: once the last instruction that reads a value
/// has run, the next one computed writes over it, so a kernel's scratch stays as small as
/// the most values alive at once and keeps to the first-level cache. The vectors are boxed
/// so that handing a storage on moves one pointer (moving the three vectors themselves, for
/// every instruction of every segment, stalled on the copies through the stack).
#[derive(Default)]
pub(crate) struct Storage(Option<Box<Vectors>>);

/// Vectors for a segment's values, one per element type.
#[derive(Default)]
pub(crate) struct Vectors {
    pub f32s: Vec<f32>,
    pub i64s: Vec<i64>,
    pub bools: Vec<bool>,
}

impl Storage {
    pub fn holds_memory(&self) -> bool {
        self.0.is_some()
    }

    /// The vectors, made empty on first use.
    pub fn vectors(&mut self) -> &mut Vectors {
        self.0.get_or_insert_default()
    }

    /// How many values its vectors have room for, all types together.
    pub fn values_held(&self) -> usize {
        self.made().map_or(0, |vectors| {
            vectors.f32s.capacity() + vectors.i64s.capacity() + vectors.bools.capacity()
        })
    }

    /// The vectors, if any were made.
    pub fn made(&self) -> Option<&Vectors> {
        self.0.as_deref()
    }
}

/// An element type of the instructions: how to find its values in slots and operands.
pub(crate) trait Lane: Element {
    fn buffer(slot: &mut Slot) -> &mut Vec<Self>;
    fn values(slot: &Slot) -> &[Self];
    fn data<'a>(values: &'a Values<'_>) -> Option<&'a [Self]>;
}

macro_rules! lane {
    ($t:ty, $field:ident, $variant:ident) => {
        impl Lane for $t {
            fn buffer(slot: &mut Slot) -> &mut Vec<$t> {
                &mut slot.storage.vectors().$field
            }
            fn values(slot: &Slot) -> &[$t] {
                slot.storage.made().map_or(&[], |vectors| &vectors.$field)
            }
            fn data<'a>(values: &'a Values<'_>) -> Option<&'a [$t]> {
                match values {
                    Values::$variant(data) => Some(data),
                    _ => None,
                }
            }
        }
    };
}

lane!(f32, f32s, F32);
lane!(i64, i64s, I64);
lane!(bool, bools, Bool);

/// A slot's value seen from a later instruction, over `segment` (the element segment, or
/// the kept elements of it).
pub(crate) struct View<'s> {
    pub slot: &'s Slot,
    pub operands: &'s [Operand<'s>],
    pub segment: Segment,
}

impl<'s> View<'s> {
    pub fn side<T: Lane>(&self) -> Side<'s, T> {
        match self.slot.state {
            State::Splat(value) => Side::Splat(T::from_scalar(value)),
            State::Operand(position) => {
                let data = T::data(self.operands[position].values()).unwrap_or_default();
                let end = (self.segment.start + self.segment.len).min(data.len());
                Side::Slice(&data[self.segment.start.min(end)..end])
            }
            State::Buffer => {
                let values = T::values(self.slot);
                Side::Slice(&values[..self.segment.len.min(values.len())])
            }
        }
    }
}

/// A whole view as a slice (a splat repeated over the segment).
pub(crate) fn materialise<'s, T: Lane>(view: &View<'s>, buffer: &'s mut Vec<T>) -> &'s [T] {
    match view.side::<T>() {
        Side::Slice(values) => values,
        Side::Splat(value) => {
            buffer.clear();
            buffer.extend(std::iter::repeat_n(value, view.segment.len));
            buffer
        }
    }
}

pub(crate) fn zero(dtype: DType) -> Scalar {
    match dtype {
        DType::F32 => Scalar::Float(0.0),
        DType::I64 => Scalar::Int(0),
        DType::Bool => Scalar::Bool(false),
    }
}
