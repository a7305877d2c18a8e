//! The CPU tensor value: one ndarray array per dtype, shared and immutable.

use ndarray::{ArcArray, ArrayD, IxDyn};

use super::elementwise::map;
use super::error::{KernelError, Result, checked_numel, format_shape};
use crate::dtype::{DType, Scalar, format_f32};
use crate::graph::semantics as element;

/// A CPU tensor. Cloning shares the data, and no operation changes data that another
/// holder can see (the `*_owned` kernels write only into buffers nobody else holds), so
/// views produced by slicing, transposing or reshaping may alias their source safely.
/// Equality compares shape and elements (`NaN != NaN`, as for floats).
#[derive(Clone, Debug, PartialEq)]
pub enum Tensor {
    F32(ArcArray<f32, IxDyn>),
    I64(ArcArray<i64, IxDyn>),
    Bool(ArcArray<bool, IxDyn>),
}

/// Matches every variant of a tensor, binds its array to `$array`, and wraps the value of
/// `$body` in the same variant.
macro_rules! map_variant {
    ($tensor:expr, $array:ident => $body:expr) => {
        match $tensor {
            $crate::backend::cpu::Tensor::F32($array) => $crate::backend::cpu::Tensor::F32($body),
            $crate::backend::cpu::Tensor::I64($array) => $crate::backend::cpu::Tensor::I64($body),
            $crate::backend::cpu::Tensor::Bool($array) => $crate::backend::cpu::Tensor::Bool($body),
        }
    };
}

/// Matches every variant of a tensor, binds its array to `$array`, and returns `$body`.
macro_rules! with_array {
    ($tensor:expr, $array:ident => $body:expr) => {
        match $tensor {
            $crate::backend::cpu::Tensor::F32($array) => $body,
            $crate::backend::cpu::Tensor::I64($array) => $body,
            $crate::backend::cpu::Tensor::Bool($array) => $body,
        }
    };
}

pub(crate) use {map_variant, with_array};

/// An element type a tensor can hold: `f32`, `i64` or `bool`.
pub trait Element:
    Copy + Default + PartialEq + PartialOrd + Send + Sync + std::fmt::Debug + 'static
{
    const DTYPE: DType;
    fn from_scalar(value: Scalar) -> Self;
    fn to_scalar(self) -> Scalar;
    /// Conversions as casts do them: floats truncate toward zero (saturating, NaN to 0),
    /// anything non-zero (NaN included) is `true`.
    fn to_f32(self) -> f32;
    fn to_i64(self) -> i64;
    fn to_bool(self) -> bool;
    fn wrap(array: ArcArray<Self, IxDyn>) -> Tensor;
    fn array(tensor: &Tensor) -> Option<&ArcArray<Self, IxDyn>>;
    fn into_array(tensor: Tensor) -> Option<ArcArray<Self, IxDyn>>;
    /// `NaN` for floats; ordering kernels let it win every comparison, as PyTorch does.
    fn is_nan(self) -> bool;
    /// The largest (or smallest) of `values` as a sequential scan would pick it: the first
    /// `NaN` if there is one, else the first occurrence of the extreme value; `None` when
    /// empty. Types may answer faster than the scan, never differently.
    fn extremum(values: &[Self], largest: bool) -> Option<Self> {
        scan_extremum(values, largest)
    }
    /// The element as spec §8 prints it inside a tensor.
    fn format(self) -> String;
}

impl Element for f32 {
    const DTYPE: DType = DType::F32;
    #[inline]
    fn from_scalar(value: Scalar) -> Self {
        value.as_f64() as f32
    }
    #[inline]
    fn to_scalar(self) -> Scalar {
        Scalar::Float(f64::from(self))
    }
    #[inline]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline]
    fn to_i64(self) -> i64 {
        element::f32_to_i64(self)
    }
    #[inline]
    fn to_bool(self) -> bool {
        element::f32_to_bool(self)
    }
    fn wrap(array: ArcArray<Self, IxDyn>) -> Tensor {
        Tensor::F32(array)
    }
    fn array(tensor: &Tensor) -> Option<&ArcArray<Self, IxDyn>> {
        tensor.as_f32()
    }
    fn into_array(tensor: Tensor) -> Option<ArcArray<Self, IxDyn>> {
        match tensor {
            Tensor::F32(array) => Some(array),
            _ => None,
        }
    }
    #[inline]
    fn is_nan(self) -> bool {
        self.is_nan()
    }
    /// Thirty-two running extremes, which vectorise into four independent chains of
    /// comparisons (eight lanes made one chain, whose latency bounded a row maximum), then
    /// their extreme, halving the lanes (one chain of 32 comparisons took a quarter of a
    /// row maximum's time); eight for 8 to 31 values (which were scanned: a row maximum
    /// that took this path over rows of 16 ran 2.7 times slower). The scan's answer
    /// differs only when a `NaN` is present or the extreme is a zero (the first of `-0.0`
    /// and `0.0` wins): those lanes are scanned in order instead; otherwise the extreme's
    /// value does not depend on the order. Fewer than eight values are scanned: setting up
    /// and combining the lanes cost more (a row maximum over rows of two took most of a
    /// softmax's time).
    fn extremum(values: &[f32], largest: bool) -> Option<f32> {
        let fast = match values.len() {
            0..8 => None,
            8..32 => lanes_extremum::<8>(values, largest),
            _ => lanes_extremum::<32>(values, largest),
        };
        fast.or_else(|| scan_extremum(values, largest))
    }
    fn format(self) -> String {
        format_f32(self)
    }
}

impl Element for i64 {
    const DTYPE: DType = DType::I64;
    #[inline]
    fn from_scalar(value: Scalar) -> Self {
        value.as_i64()
    }
    #[inline]
    fn to_scalar(self) -> Scalar {
        Scalar::Int(self)
    }
    #[inline]
    fn to_f32(self) -> f32 {
        element::i64_to_f32(self)
    }
    #[inline]
    fn to_i64(self) -> i64 {
        self
    }
    #[inline]
    fn to_bool(self) -> bool {
        self != 0
    }
    fn wrap(array: ArcArray<Self, IxDyn>) -> Tensor {
        Tensor::I64(array)
    }
    fn array(tensor: &Tensor) -> Option<&ArcArray<Self, IxDyn>> {
        tensor.as_i64()
    }
    fn into_array(tensor: Tensor) -> Option<ArcArray<Self, IxDyn>> {
        match tensor {
            Tensor::I64(array) => Some(array),
            _ => None,
        }
    }
    #[inline]
    fn is_nan(self) -> bool {
        false
    }
    fn format(self) -> String {
        self.to_string()
    }
}

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    #[inline]
    fn from_scalar(value: Scalar) -> Self {
        value.as_bool()
    }
    #[inline]
    fn to_scalar(self) -> Scalar {
        Scalar::Bool(self)
    }
    #[inline]
    fn to_f32(self) -> f32 {
        element::bool_to_f32(self)
    }
    #[inline]
    fn to_i64(self) -> i64 {
        i64::from(self)
    }
    #[inline]
    fn to_bool(self) -> bool {
        self
    }
    fn wrap(array: ArcArray<Self, IxDyn>) -> Tensor {
        Tensor::Bool(array)
    }
    fn array(tensor: &Tensor) -> Option<&ArcArray<Self, IxDyn>> {
        tensor.as_bool()
    }
    fn into_array(tensor: Tensor) -> Option<ArcArray<Self, IxDyn>> {
        match tensor {
            Tensor::Bool(array) => Some(array),
            _ => None,
        }
    }
    #[inline]
    fn is_nan(self) -> bool {
        false
    }
    fn format(self) -> String {
        self.to_string()
    }
}

impl<T: Element> From<ArrayD<T>> for Tensor {
    fn from(array: ArrayD<T>) -> Tensor {
        T::wrap(array.into_shared())
    }
}

impl<T: Element> From<ArcArray<T, IxDyn>> for Tensor {
    fn from(array: ArcArray<T, IxDyn>) -> Tensor {
        T::wrap(array)
    }
}

impl Tensor {
    /// A 0-d tensor holding `value` in the scalar's own dtype (`float` becomes `f32`).
    pub fn scalar(value: Scalar) -> Tensor {
        match value {
            Scalar::Bool(b) => Tensor::from(ArrayD::from_elem(IxDyn(&[]), b)),
            Scalar::Int(i) => Tensor::from(ArrayD::from_elem(IxDyn(&[]), i)),
            Scalar::Float(x) => Tensor::from(ArrayD::from_elem(IxDyn(&[]), x as f32)),
        }
    }

    /// A tensor of `shape` from its elements in row-major order.
    pub fn from_vec<T: Element>(shape: &[usize], elements: Vec<T>) -> Result<Tensor> {
        let numel = checked_numel(shape)?;
        if numel != elements.len() {
            return Err(KernelError::Shape(format!(
                "{} elements do not fill shape {} ({numel} elements)",
                elements.len(),
                format_shape(shape)
            )));
        }
        ArrayD::from_shape_vec(IxDyn(shape), elements)
            .map(Tensor::from)
            .map_err(|error| KernelError::Shape(error.to_string()))
    }

    /// Whether no other tensor shares this one's buffer (a kernel may then write into it).
    pub fn is_unique(&self) -> bool {
        with_array!(self, array => array.is_unique())
    }

    /// Whether the elements lie in row-major order without gaps (reshapes are then views).
    pub fn is_standard_layout(&self) -> bool {
        with_array!(self, array => array.is_standard_layout())
    }

    pub fn dtype(&self) -> DType {
        match self {
            Tensor::F32(_) => DType::F32,
            Tensor::I64(_) => DType::I64,
            Tensor::Bool(_) => DType::Bool,
        }
    }

    pub fn shape(&self) -> &[usize] {
        with_array!(self, array => array.shape())
    }

    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    pub fn numel(&self) -> usize {
        with_array!(self, array => array.len())
    }

    pub fn as_f32(&self) -> Option<&ArcArray<f32, IxDyn>> {
        match self {
            Tensor::F32(array) => Some(array),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<&ArcArray<i64, IxDyn>> {
        match self {
            Tensor::I64(array) => Some(array),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<&ArcArray<bool, IxDyn>> {
        match self {
            Tensor::Bool(array) => Some(array),
            _ => None,
        }
    }

    /// The single element of a one-element tensor (any shape), as for `item()`.
    pub fn to_scalar(&self) -> Option<Scalar> {
        if self.numel() != 1 {
            return None;
        }
        self.elements().next()
    }

    /// The elements in row-major order, as for `tolist()`.
    pub fn elements(&self) -> Elements<'_> {
        match self {
            Tensor::F32(array) => Elements::F32(array.iter()),
            Tensor::I64(array) => Elements::I64(array.iter()),
            Tensor::Bool(array) => Elements::Bool(array.iter()),
        }
    }

    /// The tensor converted to `dtype` (shared, not copied, when it already has it).
    /// Floats truncate toward zero when cast to `i64`; non-zero is `true`.
    #[must_use]
    pub fn cast(&self, dtype: DType) -> Tensor {
        if self.dtype() == dtype {
            return self.clone();
        }
        with_array!(self, array => cast_array(array, dtype))
    }

    /// The tensor cast to `T`'s dtype, as an array, moved out without sharing when the
    /// dtype already matches (so that kernels may reuse an unshared buffer).
    pub(crate) fn into_array<T: Element>(self) -> Result<ArcArray<T, IxDyn>> {
        if self.dtype() == T::DTYPE {
            return T::into_array(self)
                .ok_or_else(|| KernelError::Type(format!("expected a {} tensor", T::DTYPE)));
        }
        self.to_array::<T>()
    }

    /// The tensor cast to `T`'s dtype, as an array.
    pub(crate) fn to_array<T: Element>(&self) -> Result<ArcArray<T, IxDyn>> {
        let cast = self.cast(T::DTYPE);
        T::array(&cast)
            .cloned()
            .ok_or_else(|| KernelError::Type(format!("expected a {} tensor", T::DTYPE)))
    }
}

fn cast_array<T: Element>(array: &ArcArray<T, IxDyn>, dtype: DType) -> Tensor {
    let view = array.view();
    match dtype {
        DType::F32 => Tensor::from(map(&view, T::to_f32)),
        DType::I64 => Tensor::from(map(&view, T::to_i64)),
        DType::Bool => Tensor::from(map(&view, T::to_bool)),
    }
}

/// Row-major iterator over a tensor's elements as host scalars.
pub enum Elements<'a> {
    F32(ndarray::iter::Iter<'a, f32, IxDyn>),
    I64(ndarray::iter::Iter<'a, i64, IxDyn>),
    Bool(ndarray::iter::Iter<'a, bool, IxDyn>),
}

impl Iterator for Elements<'_> {
    type Item = Scalar;

    fn next(&mut self) -> Option<Scalar> {
        match self {
            Elements::F32(iter) => iter.next().map(|&x| x.to_scalar()),
            Elements::I64(iter) => iter.next().map(|&x| x.to_scalar()),
            Elements::Bool(iter) => iter.next().map(|&x| x.to_scalar()),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Elements::F32(iter) => iter.size_hint(),
            Elements::I64(iter) => iter.size_hint(),
            Elements::Bool(iter) => iter.size_hint(),
        }
    }
}

/// The extreme of at least `N` values by `N` running extremes, or `None` where the answer
/// may differ from [`scan_extremum`]'s: a `NaN` among the values, or a zero extreme.
fn lanes_extremum<const N: usize>(values: &[f32], largest: bool) -> Option<f32> {
    let pick = |best: f32, value: f32| {
        let better = if largest { value > best } else { value < best };
        if better { value } else { best }
    };
    let first = *values.first()?;
    let mut lanes = [first; N];
    // Per lane, whether it met a `NaN`: kept in vector registers (one flag folded into a
    // scalar after every vector made a chain that bounded the scan). 32 bits wide, as wide as
    // the values: `bool` flags are bytes, which the vectorised loop packed and unpacked on
    // every vector (a row maximum over rows of 1,024 took 1.35 times as long).
    let mut unordered = [0u32; N];
    let chunks = values.chunks_exact(N);
    let rest = chunks.remainder();
    for chunk in chunks {
        for ((lane, flag), &value) in lanes.iter_mut().zip(&mut unordered).zip(chunk) {
            *lane = pick(*lane, value);
            *flag |= u32::from(value.is_nan());
        }
    }
    let mut nan = unordered.iter().fold(0, |nan, &flag| nan | flag) != 0;
    // What is left, a row of eight at a time into the first eight lanes, then one at a time.
    let eights = rest.chunks_exact(8);
    let rest = eights.remainder();
    for eight in eights {
        for (lane, &value) in lanes.iter_mut().zip(eight) {
            nan |= value.is_nan();
            *lane = pick(*lane, value);
        }
    }
    for &value in rest {
        nan |= value.is_nan();
        lanes[0] = pick(lanes[0], value);
    }
    let mut width = N;
    while width > 1 {
        width /= 2;
        for i in 0..width {
            lanes[i] = pick(lanes[i], lanes[i + width]);
        }
    }
    let best = lanes[0];
    (!nan && best != 0.0).then_some(best)
}

/// The scan [`Element::extremum`] describes.
#[inline]
pub(crate) fn scan_extremum<T: Element>(values: &[T], largest: bool) -> Option<T> {
    let mut best: Option<T> = None;
    for &value in values {
        match best {
            None => best = Some(value),
            Some(current) if current.is_nan() => break,
            Some(current) => {
                let better = if largest {
                    value > current
                } else {
                    value < current
                };
                if value.is_nan() || better {
                    best = Some(value);
                }
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::testing::{bools, floats, ints};

    #[test]
    fn accessors_describe_the_tensor() {
        let t = floats(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(
            (t.dtype(), t.shape(), t.ndim(), t.numel()),
            (DType::F32, &[2, 3][..], 2, 6)
        );
        let scalar = Tensor::scalar(Scalar::Int(3));
        assert_eq!(
            (scalar.dtype(), scalar.ndim(), scalar.numel()),
            (DType::I64, 0, 1)
        );
        assert_eq!(scalar.to_scalar(), Some(Scalar::Int(3)));
        let empty = ints(&[0, 3], &[]);
        assert_eq!((empty.numel(), empty.to_scalar()), (0, None));
        assert_eq!(t.to_scalar(), None);
        assert_eq!(
            floats(&[1, 1], &[2.5]).to_scalar(),
            Some(Scalar::Float(2.5))
        );
    }

    #[test]
    fn elements_come_in_row_major_order() {
        let t = ints(&[2, 2], &[1, 2, 3, 4]);
        let transposed = Tensor::I64(t.as_i64().unwrap().clone().reversed_axes());
        let listed: Vec<Scalar> = transposed.elements().collect();
        let expected = [1, 3, 2, 4].map(Scalar::Int);
        assert_eq!(listed, expected);
        assert_eq!(transposed.elements().size_hint(), (4, Some(4)));
    }

    #[test]
    fn casts_truncate_and_test_non_zero() {
        let t = floats(&[5], &[-1.7, 0.0, 2.9, f32::NAN, 1e30]);
        assert_eq!(t.cast(DType::I64), ints(&[5], &[-1, 0, 2, 0, i64::MAX]));
        assert_eq!(
            t.cast(DType::Bool),
            bools(&[5], &[true, false, true, true, true])
        );
        let b = bools(&[2], &[true, false]);
        assert_eq!(b.cast(DType::F32), floats(&[2], &[1.0, 0.0]));
        assert_eq!(b.cast(DType::I64), ints(&[2], &[1, 0]));
        assert_eq!(
            ints(&[2], &[0, -3]).cast(DType::F32),
            floats(&[2], &[0.0, -3.0])
        );
        assert_eq!(b.cast(DType::Bool), b);
    }

    #[test]
    fn from_vec_checks_the_element_count() {
        assert!(Tensor::from_vec(&[2, 2], vec![1i64, 2, 3]).is_err());
        assert!(matches!(
            Tensor::from_vec::<f32>(&[1 << 20, 1 << 20], vec![]),
            Err(KernelError::TooLarge { .. })
        ));
        assert_eq!(
            Tensor::from_vec(&[0], Vec::<bool>::new()).unwrap().shape(),
            &[0]
        );
    }

    #[test]
    fn float_extremes_are_those_of_a_scan_with_a_nan_or_a_zero_anywhere() {
        let same = |a: Option<f32>, b: Option<f32>| a.map(f32::to_bits) == b.map(f32::to_bits);
        for length in 1..=80 {
            let base: Vec<f32> = (0..length).map(|i| ((i * 37 % 23) as f32) - 11.5).collect();
            let mut cases = vec![base.clone()];
            for position in 0..length {
                for special in [f32::NAN, 0.0, -0.0, 100.0, -100.0] {
                    let mut values = base.clone();
                    values[position] = special;
                    cases.push(values);
                }
            }
            for values in &cases {
                for largest in [true, false] {
                    assert!(
                        same(
                            f32::extremum(values, largest),
                            scan_extremum(values, largest)
                        ),
                        "{values:?}, largest {largest}"
                    );
                }
            }
        }
    }
}
