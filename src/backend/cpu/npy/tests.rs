//! Tests of .npy files: round trips, conversions and bad files.

use std::path::PathBuf;

use ndarray::{ArrayD, IxDyn};

use super::*;
use crate::backend::cpu::testing::{assert_same, bools, floats, int, ints};

/// A fresh path in the system's temporary directory, unique to this process and test.
fn scratch(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("tsl-npy-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("temporary directory");
    directory.join(name)
}

#[test]
fn each_dtype_round_trips() {
    let transposed = ints(&[2, 3], &[1, 2, 3, 4, 5, 6])
        .as_i64()
        .unwrap()
        .clone()
        .reversed_axes();
    let cases: Vec<(&str, Tensor)> = vec![
        (
            "f32.npy",
            floats(&[2, 2], &[1.5, -0.0, f32::NAN, f32::INFINITY]),
        ),
        ("i64.npy", ints(&[3], &[i64::MIN, 0, i64::MAX])),
        ("bool.npy", bools(&[2, 1], &[true, false])),
        ("scalar.npy", int(7)),
        ("empty.npy", floats(&[0, 4], &[])),
        ("transposed.npy", Tensor::I64(transposed)),
    ];
    for (name, tensor) in cases {
        let path = scratch(name);
        save(&tensor, &path).unwrap();
        assert_same(&load(&path).unwrap(), &tensor);
    }
}

#[test]
fn other_numpy_dtypes_convert() {
    let shape = IxDyn(&[3]);
    let path = scratch("f64.npy");
    ndarray_npy::write_npy(
        &path,
        &ArrayD::from_shape_vec(shape.clone(), vec![0.1f64, 2.0, -3.5]).unwrap(),
    )
    .unwrap();
    assert_same(&load(&path).unwrap(), &floats(&[3], &[0.1, 2.0, -3.5]));
    let path = scratch("i32.npy");
    ndarray_npy::write_npy(
        &path,
        &ArrayD::from_shape_vec(shape.clone(), vec![-1i32, 0, i32::MAX]).unwrap(),
    )
    .unwrap();
    assert_same(
        &load(&path).unwrap(),
        &ints(&[3], &[-1, 0, i64::from(i32::MAX)]),
    );
    let path = scratch("i16.npy");
    ndarray_npy::write_npy(
        &path,
        &ArrayD::from_shape_vec(shape.clone(), vec![-2i16, 0, 9]).unwrap(),
    )
    .unwrap();
    assert_same(&load(&path).unwrap(), &ints(&[3], &[-2, 0, 9]));
    let path = scratch("i8.npy");
    ndarray_npy::write_npy(
        &path,
        &ArrayD::from_shape_vec(shape.clone(), vec![-128i8, 0, 127]).unwrap(),
    )
    .unwrap();
    assert_same(&load(&path).unwrap(), &ints(&[3], &[-128, 0, 127]));
    let path = scratch("u8.npy");
    ndarray_npy::write_npy(
        &path,
        &ArrayD::from_shape_vec(shape, vec![0u8, 128, 255]).unwrap(),
    )
    .unwrap();
    assert_same(&load(&path).unwrap(), &ints(&[3], &[0, 128, 255]));
}

fn input_error(path: &Path) -> String {
    match load(path) {
        Err(KernelError::Input(message)) => message,
        other => panic!("expected an input error, got {other:?}"),
    }
}

#[test]
fn bad_files_are_input_errors_naming_the_file() {
    let missing = scratch("missing.npy");
    let message = input_error(&missing);
    assert!(
        message.starts_with(&format!("cannot load {}: ", missing.display())),
        "{message}"
    );
    let garbage = scratch("garbage.npy");
    std::fs::write(&garbage, b"definitely not numpy").unwrap();
    assert!(input_error(&garbage).contains("not a valid .npy file"));
    let truncated = scratch("truncated.npy");
    save(&ints(&[4], &[1, 2, 3, 4]), &truncated).unwrap();
    let bytes = std::fs::read(&truncated).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 3]).unwrap();
    assert!(input_error(&truncated).contains("announces 32 bytes of data but the file holds 29"));
    let unsigned = scratch("u32.npy");
    ndarray_npy::write_npy(
        &unsigned,
        &ArrayD::from_shape_vec(IxDyn(&[1]), vec![1u32]).unwrap(),
    )
    .unwrap();
    let message = input_error(&unsigned);
    assert!(message.contains("unsupported dtype '<u4'"), "{message}");
    let bad_bool = scratch("bad_bool.npy");
    save(&bools(&[2], &[true, false]), &bad_bool).unwrap();
    let mut bytes = std::fs::read(&bad_bool).unwrap();
    let last = bytes.len() - 1;
    bytes[last] = 7;
    std::fs::write(&bad_bool, &bytes).unwrap();
    assert!(input_error(&bad_bool).contains("0x07"));
}

#[test]
fn huge_headers_are_refused_before_allocating() {
    let path = scratch("huge.npy");
    let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000, 1000000), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let padded = format!("{header:<117}\n");
    bytes.extend((padded.len() as u16).to_le_bytes());
    bytes.extend(padded.as_bytes());
    std::fs::write(&path, &bytes).unwrap();
    assert!(matches!(load(&path), Err(KernelError::TooLarge { .. })));
}

#[test]
fn saving_to_a_bad_path_is_an_input_error() {
    let path = scratch("no-such-directory").join("x.npy");
    let error = save(&int(1), &path).unwrap_err();
    assert!(matches!(error, KernelError::Input(ref message) if message.starts_with("cannot save")));
}
