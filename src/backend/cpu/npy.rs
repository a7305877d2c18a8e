//! Reading and writing NumPy `.npy` files.
//!
//! `load` accepts `f32`, `i64` and `bool` files as they are, converts `f64` to `f32` and
//! `i32`, `i16`, `i8`, `u8` to `i64`, in either byte order and either memory order.
//! Anything else, and missing, truncated or corrupt files, are input errors naming the file.

use std::path::Path;

use ndarray::ArrayD;
use ndarray_npy::npy::header::Header;
use ndarray_npy::{ReadNpyExt, ReadableElement, write_npy};

use super::error::{KernelError, Result, checked_numel};
use super::tensor::{Element, Tensor, with_array};
use crate::backend::memory::reserve;

/// The element types `load` understands, and what each becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stored {
    F32,
    F64,
    I64,
    I32,
    I16,
    I8,
    U8,
    Bool,
}

impl Stored {
    /// Reads a NumPy type descriptor such as `<f4` or `|b1`.
    fn from_descriptor(descriptor: &str) -> Option<Stored> {
        let code = descriptor.trim_start_matches(['<', '>', '|']);
        Some(match code {
            "f4" => Stored::F32,
            "f8" => Stored::F64,
            "i8" => Stored::I64,
            "i4" => Stored::I32,
            "i2" => Stored::I16,
            "i1" | "b" => Stored::I8,
            "u1" | "B" => Stored::U8,
            "b1" => Stored::Bool,
            _ => return None,
        })
    }

    fn item_size(self) -> usize {
        match self {
            Stored::F64 | Stored::I64 => 8,
            Stored::F32 | Stored::I32 => 4,
            Stored::I16 => 2,
            Stored::I8 | Stored::U8 | Stored::Bool => 1,
        }
    }
}

/// Reads a tensor from an `.npy` file (see the module documentation for dtypes).
pub fn load(path: &Path) -> Result<Tensor> {
    let fail =
        |reason: String| KernelError::Input(format!("cannot load {}: {reason}", path.display()));
    let bytes = std::fs::read(path).map_err(|error| fail(lowercase(&error.to_string())))?;
    let mut data = bytes.as_slice();
    let header = Header::from_reader(&mut data).map_err(|error| {
        fail(format!(
            "not a valid .npy file ({})",
            lowercase(&error.to_string())
        ))
    })?;
    let descriptor = header.type_descriptor.to_string();
    let stored = header
        .type_descriptor
        .as_string()
        .and_then(|code| Stored::from_descriptor(code))
        .ok_or_else(|| {
            fail(format!(
                "unsupported dtype {descriptor} (supported: f32, f64, i64, i32, i16, i8, u8, bool)"
            ))
        })?;
    let numel = checked_numel(&header.shape)?;
    let expected = numel as u128 * stored.item_size() as u128;
    if data.len() as u128 != expected {
        return Err(fail(format!(
            "the header announces {expected} bytes of data but the file holds {}",
            data.len()
        )));
    }
    // The decoded elements, beside the file's bytes, and their converted copy when TSL keeps
    // the values in another dtype (`f64` as `f32`, narrower ints as `i64`).
    let converted = match stored {
        Stored::F32 | Stored::I64 | Stored::Bool => 0,
        Stored::F64 => numel as u128 * 4,
        Stored::I32 | Stored::I16 | Stored::I8 | Stored::U8 => numel as u128 * 8,
    };
    reserve(u64::try_from(expected + converted).unwrap_or(u64::MAX))?;
    decode(&bytes, stored).map_err(fail)
}

fn decode(bytes: &[u8], stored: Stored) -> std::result::Result<Tensor, String> {
    Ok(match stored {
        Stored::F32 => Tensor::from(read::<f32>(bytes)?),
        Stored::I64 => Tensor::from(read::<i64>(bytes)?),
        Stored::Bool => Tensor::from(read::<bool>(bytes)?),
        Stored::F64 => Tensor::from(read::<f64>(bytes)?.mapv(|x| x as f32)),
        Stored::I32 => Tensor::from(read::<i32>(bytes)?.mapv(i64::from)),
        Stored::I16 => Tensor::from(read::<i16>(bytes)?.mapv(i64::from)),
        Stored::I8 => Tensor::from(read::<i8>(bytes)?.mapv(i64::from)),
        Stored::U8 => Tensor::from(read::<u8>(bytes)?.mapv(i64::from)),
    })
}

fn read<T: ReadableElement>(bytes: &[u8]) -> std::result::Result<ArrayD<T>, String> {
    ArrayD::<T>::read_npy(bytes).map_err(|error| lowercase(&error.to_string()))
}

/// Writes a tensor to an `.npy` file (`<f4`, `<i8` or `|b1`), replacing any file there.
pub fn save(tensor: &Tensor, path: &Path) -> Result<()> {
    with_array!(tensor, array => write(array, path))
}

fn write<T: Element + ndarray_npy::WritableElement>(
    array: &ndarray::ArcArray<T, ndarray::IxDyn>,
    path: &Path,
) -> Result<()> {
    write_npy(path, array).map_err(|error| {
        KernelError::Input(format!(
            "cannot save {}: {}",
            path.display(),
            lowercase(&error.to_string())
        ))
    })
}

/// Messages from the standard library and ndarray-npy start with a capital letter.
fn lowercase(message: &str) -> String {
    let mut characters = message.chars();
    characters.next().map_or_else(String::new, |first| {
        first.to_lowercase().chain(characters).collect()
    })
}

#[cfg(test)]
mod tests;
