"""The workloads of `benches/workloads.rs`, `benches/sorting.rs` and the row reductions,
`cumsum`, `diff`, `repeat_interleave` and `unique` of `benches/kernels.rs` in NumPy and
PyTorch, for
BENCHMARKS.md.

Run it in the same sitting as `cargo bench --bench workloads`, from a virtual environment
outside the repository that has numpy and torch (pip install numpy torch):

    python bench/peers.py            # every workload, both peers
    python bench/peers.py chain sum  # some of them

Each figure is the median of 9 repeats of the per-call time (each repeat averages a few
calls), in milliseconds. Data: 10M f32 from a standard normal, a 4096x1024 matrix for the row
softmax (and a 2,500,000x4 one for a softmax over short rows), 1024x1024 and 500x500 matrices and a 4096x4096 matrix with a vector of 4096 for
matmul, 10,080,000 f32 as rows of 4, 12 and 24 for the row sums and maxima, `cumsum` and
`diff` of the 10M f32, the 10M f32 repeated by `(abs(x) * 2)` as `i64` counts, and `unique` of the 10M f32 and of `(x * 1000)`
and `(x * 1e9)` as `i64`, and the 10M f32 as `i64` for `sort_i64`, as the Rust
benchmarks use (other random values, the same distribution).
OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE slow a current NumPy down; unset both
when measuring (`env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/peers.py`).
"""

import statistics
import sys
import timeit

import numpy as np
import torch


def numpy_workloads(rng):
    x = rng.standard_normal(10_000_000).astype(np.float32)
    rows = rng.standard_normal((4096, 1024)).astype(np.float32)
    short_rows = rng.standard_normal((2_500_000, 4)).astype(np.float32)
    short_ints = (short_rows * np.float32(3)).astype(np.int64)
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 1024)).astype(np.float32)
    c = rng.standard_normal((500, 500)).astype(np.float32)
    d = rng.standard_normal((500, 500)).astype(np.float32)
    big = rng.standard_normal((4096, 4096)).astype(np.float32)
    vector = rng.standard_normal(4096).astype(np.float32)
    flat = rng.standard_normal(10_080_000).astype(np.float32)
    by_length = {length: flat.reshape(-1, length) for length in (4, 12, 24)}
    two, one, half, zero = np.float32(2), np.float32(1), np.float32(0.5), np.float32(0)
    counts = (np.abs(x) * two).astype(np.int64)
    thousandths = (x * np.float32(1000)).astype(np.int64)
    billionths = (x * np.float32(1e9)).astype(np.int64)
    integers = x.astype(np.int64)
    millionths = (x * np.float32(1e6)).astype(np.int64)

    def softmax(m):
        e = np.exp(m - m.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return {
        "chain": lambda: np.maximum(x * two + one, zero) * x - half,
        "positives": lambda: x[x > 0],
        "pipeline": lambda: (x[np.nonzero(x > 0)[0]] * two).sum(),
        "softmax": lambda: softmax(rows),
        "softmax_short": lambda: softmax(short_rows),
        "flags": lambda: ((short_rows > 2).any(axis=1), (short_rows != 0).all(axis=1)),
        "scaled": lambda: np.where(
            short_ints > 0, short_ints * short_ints.sum(axis=1, keepdims=True), -short_ints
        ),
        "divide": lambda: (millionths % 7, millionths // 1000),
        "sum": lambda: x.sum(),
        "matmul": lambda: a @ b,
        "matmul500": lambda: c @ d,
        "matvec": lambda: big @ vector,
        "vecmat": lambda: vector @ big,
        # NumPy's sort gives values only; its stable argsort gives the indices.
        "cumsum": lambda: np.cumsum(x),
        "diff": lambda: np.diff(x),
        "repeat_interleave": lambda: np.repeat(x, counts),
        "unique_i64": lambda: np.unique(thousandths),
        "unique_i64_wide": lambda: np.unique(billionths),
        "unique_f32": lambda: np.unique(x),
        "sort": lambda: np.argsort(x, kind="stable"),
        "argsort": lambda: np.argsort(-x, kind="stable"),
        "sort_i64": lambda: np.argsort(integers, kind="stable"),
        "topk": lambda: np.argpartition(x, -10)[-10:],
        "sort_rows": lambda: np.argsort(rows, axis=1, kind="stable"),
        **{
            f"{name}_rows{length}": (lambda m=m, f=f: f(m, axis=1))
            for length, m in by_length.items()
            for name, f in (("sum", np.sum), ("max", np.max))
        },
    }


def torch_workloads(generator):
    x = torch.randn(10_000_000, generator=generator)
    rows = torch.randn(4096, 1024, generator=generator)
    short_rows = torch.randn(2_500_000, 4, generator=generator)
    short_ints = (short_rows * 3.0).long()
    a = torch.randn(1024, 1024, generator=generator)
    b = torch.randn(1024, 1024, generator=generator)
    c = torch.randn(500, 500, generator=generator)
    d = torch.randn(500, 500, generator=generator)
    big = torch.randn(4096, 4096, generator=generator)
    vector = torch.randn(4096, generator=generator)
    flat = torch.randn(10_080_000, generator=generator)
    by_length = {length: flat.reshape(-1, length) for length in (4, 12, 24)}
    counts = (x.abs() * 2.0).long()
    thousandths = (x * 1000.0).long()
    billionths = (x * 1e9).long()
    integers = x.long()
    millionths = (x * 1e6).long()
    return {
        "chain": lambda: torch.relu(x * 2.0 + 1.0) * x - 0.5,
        "positives": lambda: x[x > 0],
        "pipeline": lambda: (x.index_select(0, torch.nonzero(x > 0).squeeze(1)) * 2.0).sum(),
        "softmax": lambda: torch.softmax(rows, dim=1),
        "softmax_short": lambda: torch.softmax(short_rows, dim=1),
        "flags": lambda: ((short_rows > 2).any(dim=1), (short_rows != 0).all(dim=1)),
        "scaled": lambda: torch.where(
            short_ints > 0, short_ints * short_ints.sum(dim=1, keepdim=True), -short_ints
        ),
        "divide": lambda: (millionths % 7, millionths // 1000),
        "sum": lambda: x.sum(),
        "matmul": lambda: a @ b,
        "matmul500": lambda: c @ d,
        "matvec": lambda: big @ vector,
        "vecmat": lambda: vector @ big,
        "cumsum": lambda: x.cumsum(0),
        "diff": lambda: x.diff(),
        "repeat_interleave": lambda: x.repeat_interleave(counts),
        "unique_i64": lambda: thousandths.unique(),
        "unique_i64_wide": lambda: billionths.unique(),
        "unique_f32": lambda: x.unique(),
        "sort": lambda: x.sort(),
        "argsort": lambda: x.argsort(descending=True),
        "sort_i64": lambda: integers.sort(),
        "topk": lambda: x.topk(10),
        "sort_rows": lambda: rows.sort(dim=1),
        **{
            f"{name}_rows{length}": (lambda m=m, f=f: f(m, dim=1))
            for length, m in by_length.items()
            for name, f in (("sum", torch.sum), ("max", torch.amax))
        },
    }


def median_ms(function, number=3, repeat=9):
    function()
    times = timeit.repeat(function, number=number, repeat=repeat)
    return statistics.median(times) / number * 1e3


def main():
    wanted = sys.argv[1:]
    torch.set_num_threads(torch.get_num_threads())
    peers = {
        "numpy " + np.__version__: numpy_workloads(np.random.default_rng(0)),
        "torch " + torch.__version__: torch_workloads(torch.Generator().manual_seed(0)),
    }
    for peer, workloads in peers.items():
        for name, function in workloads.items():
            if wanted and name not in wanted:
                continue
            print(f"{peer:14} {name:14} {median_ms(function):9.2f} ms", flush=True)


if __name__ == "__main__":
    main()
