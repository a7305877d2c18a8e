//! TSL's `f32` matrix product against OpenBLAS's `sgemm`, in one process, on the same
//! operands: blocks of calls of one alternate with blocks of the other, and the report is the
//! median of each block's median time and of the ratios of neighbouring blocks.
//!
//! Calls alternate in blocks rather than one by one because OpenBLAS's threads keep spinning
//! for tens of milliseconds after a call, and a product that starts meanwhile shares the cores
//! with them: each block first calls its product for `SETTLE` milliseconds untimed, then
//! times `CALLS` calls. A count of calls to drop would not do: 25 calls of a 500 x 500
//! product last 15 ms, less than the spinning, and such blocks ran at half speed.
//!
//! Usage: `openblas-pair LIBRARY [SIZE [ROUNDS [CALLS [SETTLE]]]]`, where LIBRARY is the path
//! of an OpenBLAS shared library built with 64-bit integers, as NumPy bundles one
//! (`bench/openblas.sh` finds it) and distributions ship as `libopenblas64`.

use std::time::{Duration, Instant};

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;
use tsl::backend::cpu::{Tensor, matmul, randn};

/// `cblas_sgemm` with 64-bit integers (named with a `64_` suffix in such builds).
type Sgemm = unsafe extern "C" fn(
    i32,
    i32,
    i32,
    i64,
    i64,
    i64,
    f32,
    *const f32,
    i64,
    *const f32,
    i64,
    f32,
    *mut f32,
    i64,
);

const ROW_MAJOR: i32 = 101;
const NO_TRANSPOSE: i32 = 111;

/// A loaded OpenBLAS: its `sgemm` behind a safe product of square row-major matrices.
struct OpenBlas {
    sgemm: Sgemm,
    /// Keeps the library mapped while `sgemm` may be called.
    _library: libloading::Library,
}

impl OpenBlas {
    fn load(path: &str) -> Result<Self, String> {
        // SAFETY: loading runs the library's initialisers; OpenBLAS's only start its threads.
        let library = unsafe { libloading::Library::new(path) }
            .map_err(|error| format!("cannot load {path}: {error}"))?;
        let sgemm = ["scipy_cblas_sgemm64_", "cblas_sgemm64_"]
            .iter()
            // SAFETY: these names are `cblas_sgemm` with 64-bit integers, the type of `Sgemm`.
            .find_map(|name| unsafe { library.get::<Sgemm>(name.as_bytes()) }.ok())
            .map(|symbol| *symbol)
            .ok_or_else(|| format!("no cblas_sgemm64_ in {path}"))?;
        Ok(Self {
            sgemm,
            _library: library,
        })
    }

    /// `left · right` for `size x size` row-major matrices, into a new output the library
    /// writes whole (beta = 0), as NumPy's `@` does.
    fn product(&self, left: &[f32], right: &[f32], size: usize) -> Vec<f32> {
        let count = size * size;
        assert!(
            left.len() == count && right.len() == count,
            "operands of {size} x {size}"
        );
        let mut out = Vec::with_capacity(count);
        let data = out.spare_capacity_mut().as_mut_ptr().cast::<f32>();
        let n = i64::try_from(size).expect("size fits i64");
        // SAFETY: the three buffers hold `n * n` values; `data` is written, not read.
        unsafe {
            (self.sgemm)(
                ROW_MAJOR,
                NO_TRANSPOSE,
                NO_TRANSPOSE,
                n,
                n,
                n,
                1.0,
                left.as_ptr(),
                n,
                right.as_ptr(),
                n,
                0.0,
                data,
                n,
            );
        }
        // SAFETY: with beta = 0, sgemm wrote every one of the `count` values.
        unsafe { out.set_len(count) };
        out
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn values(tensor: &Tensor) -> Vec<f32> {
    tensor
        .as_f32()
        .expect("an f32 tensor")
        .iter()
        .copied()
        .collect()
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let library = args
        .first()
        .ok_or("usage: openblas-pair LIBRARY [SIZE [ROUNDS [CALLS [SETTLE]]]]")?;
    let number = |index: usize, default: usize| -> Result<usize, String> {
        args.get(index).map_or(Ok(default), |text| {
            text.parse().map_err(|_| format!("not a count: {text}"))
        })
    };
    let (size, rounds, calls, settle) = (
        number(1, 1024)?,
        number(2, 10)?,
        number(3, 50)?,
        number(4, 100)?,
    );
    if rounds == 0 || calls == 0 {
        return Err("ROUNDS and CALLS must be at least 1".into());
    }
    let settle = Duration::from_millis(settle as u64);
    let blas = OpenBlas::load(library)?;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let left = randn(&[size, size], &mut rng).map_err(|error| error.to_string())?;
    let right = randn(&[size, size], &mut rng).map_err(|error| error.to_string())?;
    let (left_values, right_values) = (values(&left), values(&right));

    let ours = values(&matmul(&left, &right).map_err(|error| error.to_string())?);
    let theirs = blas.product(&left_values, &right_values, size);
    let largest = ours.iter().map(|x| x.abs()).fold(0.0, f32::max);
    let difference = ours
        .iter()
        .zip(&theirs)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max);
    println!(
        "{size} x {size}: {} rayon threads; largest difference {difference:.2e} (largest value {largest:.1})",
        rayon::current_num_threads()
    );
    if difference > largest * 1e-5 {
        return Err("the two products differ".into());
    }

    let call = |which: usize| {
        if which == 0 {
            drop(std::hint::black_box(matmul(&left, &right)));
        } else {
            drop(std::hint::black_box(blas.product(
                &left_values,
                &right_values,
                size,
            )));
        }
    };
    let time_block = |which: usize| -> f64 {
        let begin = Instant::now();
        while begin.elapsed() < settle {
            call(which);
        }
        let mut times: Vec<f64> = (0..calls)
            .map(|_| {
                let start = Instant::now();
                call(which);
                start.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        median(&mut times)
    };
    let (mut tsl, mut openblas, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        let mut times = [0.0; 2];
        for which in order {
            times[which] = time_block(which);
        }
        println!(
            "round {round}: TSL {:.3} ms, OpenBLAS {:.3} ms",
            times[0], times[1]
        );
        tsl.push(times[0]);
        openblas.push(times[1]);
        ratios.push(times[0] / times[1]);
    }
    let (lowest, highest) = ratios
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(low, high), &ratio| {
            (low.min(ratio), high.max(ratio))
        });
    println!(
        "medians: TSL {:.3} ms, OpenBLAS {:.3} ms, TSL / OpenBLAS {:.3} (rounds {lowest:.3} to {highest:.3})",
        median(&mut tsl),
        median(&mut openblas),
        median(&mut ratios),
    );
    Ok(())
}
