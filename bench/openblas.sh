#!/usr/bin/env bash
# TSL's 1024 x 1024 f32 product against OpenBLAS's sgemm in one process (bench/openblas), for
# BENCHMARKS.md. PYTHON is the interpreter of a virtual environment that has numpy; its
# bundled OpenBLAS is the library measured (TSL_OPENBLAS=/path/to/libopenblas.so picks
# another). Arguments after the script's name go to the program: SIZE ROUNDS CALLS SETTLE
# (timed calls per block, and milliseconds each block runs untimed first).
#
#     PYTHON=/path/to/venv/bin/python bench/openblas.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${TSL_OPENBLAS:-}" ]; then
    TSL_OPENBLAS="$("${PYTHON:-python3}" - <<'PY'
import glob
import os

import numpy

libs = os.path.join(os.path.dirname(numpy.__file__), os.pardir, "numpy.libs")
found = sorted(glob.glob(os.path.join(libs, "libscipy_openblas*.so")))
print(os.path.realpath(found[0]) if found else "")
PY
)"
fi
if [ -z "$TSL_OPENBLAS" ]; then
    echo "no OpenBLAS found next to numpy; set TSL_OPENBLAS" >&2
    exit 2
fi
# The OpenBLAS NumPy bundles loads its Fortran runtime from the same folder.
export LD_LIBRARY_PATH="$(dirname "$TSL_OPENBLAS")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# As for bench/peers.py: these slow a current OpenBLAS down.
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
# The same target folder as the package, so its dependencies build once.
CARGO_TARGET_DIR="$PWD/target" cargo run --quiet --release \
    --manifest-path bench/openblas/Cargo.toml -- "$TSL_OPENBLAS" "$@"
