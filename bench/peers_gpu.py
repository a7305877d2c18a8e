"""The workloads of `benches/gpu.rs` in PyTorch on a CUDA GPU, for BENCHMARKS.md's GPU section.

Run it on the machine that runs `cargo bench --bench gpu`, in the same sitting:

    python bench/peers_gpu.py            # 16,777,216 elements, matmul 4096 x 4096
    python bench/peers_gpu.py 1000000 1024

Each figure is the median of 9 repeats of the per-call time; each repeat queues calls for
about 50 ms and ends with `torch.cuda.synchronize()`, as the TSL benchmark ends its calls with
a one-element read. Eager PyTorch launches one kernel per operation; the `torch.compile`
rows fuse the chain into one Triton kernel (they are skipped where compiling fails). The
call overheads use four elements, the way the TSL benchmark's `affine(x)` does.
"""

import statistics
import sys
import time

import torch


def per_call_ms(function, repeat=9):
    function()
    torch.cuda.synchronize()
    start = time.perf_counter()
    function()
    torch.cuda.synchronize()
    once = max(time.perf_counter() - start, 1e-6)
    number = max(1, min(10_000, int(0.05 / once)))
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            function()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times) * 1e3


def read_back_ms(function, repeat=9, number=2000):
    function().cpu()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            function().cpu()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times) * 1e3


def main():
    elements = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24
    side = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    device = torch.device("cuda")
    generator = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(elements, device=device, generator=generator)
    a = torch.randn(side, side, device=device, generator=generator)
    b = torch.randn(side, side, device=device, generator=generator)
    small = torch.tensor([1.0, -2.0, 3.0, 4.0], device=device)
    # Full fp32 products, as the TSL kernel computes (no TF32).
    torch.backends.cuda.matmul.allow_tf32 = False

    def chain(v):
        return torch.relu(v * 2.0 + 1.0) * v - 0.5

    def affine(v):
        return v * 2.0 + 1.0

    rows = [
        ("chain", lambda: chain(x), 2 * 4 * elements),
        ("sum", lambda: x.sum(), 4 * elements),
        ("matmul", lambda: a @ b, None),
        ("positives", lambda: x[x > 0], 4 * elements),
        ("affine queued", lambda: affine(small), None),
    ]
    try:
        compiled_chain = torch.compile(chain)
        compiled_affine = torch.compile(affine)
        compiled_chain(x)
        compiled_affine(small)
        rows.append(("chain compiled", lambda: compiled_chain(x), 2 * 4 * elements))
        rows.append(("affine compiled", lambda: compiled_affine(small), None))
    except Exception as why:  # noqa: BLE001 - any compile failure only skips those rows
        print(f"torch.compile unavailable: {type(why).__name__}: {why}", flush=True)

    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(device)}: "
          f"{elements} elements, matmul {side}x{side}", flush=True)
    for name, function, moved in rows:
        ms = per_call_ms(function)
        extra = ""
        if moved is not None:
            extra = f"  {moved / ms / 1e6:8.1f} GB/s"
        if name == "matmul":
            extra = f"  {2 * side**3 / ms / 1e9:8.2f} TFLOP/s"
        print(f"{name:18} {ms * 1e3:12.2f} us{extra}", flush=True)
    print(f"{'affine read back':18} {read_back_ms(lambda: affine(small)) * 1e3:12.2f} us",
          flush=True)


if __name__ == "__main__":
    main()
