//! Matrix products. `f32`: each workgroup computes a 64×64 tile of the result, 16×16
//! invocations each holding a 4×4 block, with 64×16 and 16×64 tiles of the operands staged
//! in shared memory (zero beyond the edges). `i64` (wrapping): one invocation per result
//! element, a plain loop, since exactness matters more than speed there.
//!
//! Operands are read through strides (a transposed operand is not copied); batches are
//! walked with one stride per operand and tiles of all batches share one grid.

use super::{Binding, Module, Param, Wgsl, entry_point, workgroup_size};
use crate::dtype::DType;
use std::fmt::Write as _;

/// Words: `Count` work items (tiles for `f32`, elements for `i64`), `Value(0..3)` the rows
/// `n`, inner size `k` and columns `m`, `Value(3)` tiles across the columns, `Stride(0, d)`
/// and `Stride(1, d)` the batch, row and column strides of the operands, `Offset(0..2)`.
pub fn matmul(dtype: DType) -> Wgsl {
    match dtype {
        DType::I64 => integer(),
        _ => tiled(),
    }
}

fn words(module: &mut Module) -> [String; 12] {
    [
        module.param(Param::Count),
        module.param(Param::Value(0)),
        module.param(Param::Value(1)),
        module.param(Param::Value(2)),
        module.param(Param::Value(3)),
        module.param(Param::Stride(0, 0)),
        module.param(Param::Stride(0, 1)),
        module.param(Param::Stride(0, 2)),
        module.param(Param::Stride(1, 0)),
        module.param(Param::Stride(1, 1)),
        module.param(Param::Stride(1, 2)),
        module.param(Param::Offset(0)),
    ]
}

fn tiled() -> Wgsl {
    let mut module = Module::new();
    module.storage("left", "f32", Binding::Read);
    module.storage("right", "f32", Binding::Read);
    module.storage("out", "f32", Binding::Write);
    let [count, n, k, m, across, lb, lr, lc, rb, rr, rc, left_offset] = words(&mut module);
    let right_offset = module.param(Param::Offset(1));
    let size = workgroup_size();
    let body = format!(
        "var<workgroup> left_tile: array<f32, 1024>;\n\
         var<workgroup> right_tile: array<f32, 1024>;\n\
         @compute @workgroup_size({size})\n\
         fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{\n\
         \x20   let tile = wid.x + wid.y * nwg.x;\n\
         \x20   if (tile >= {count}) {{ return; }}\n\
         \x20   let down = ({n} + 63u) / 64u;\n\
         \x20   let per_batch = down * {across};\n\
         \x20   let batch = tile / per_batch;\n\
         \x20   let within = tile % per_batch;\n\
         \x20   let row0 = (within / {across}) * 64u;\n\
         \x20   let column0 = (within % {across}) * 64u;\n\
         \x20   let tx = lid % 16u;\n\
         \x20   let ty = lid / 16u;\n\
         \x20   let left_base = {left_offset} + batch * {lb};\n\
         \x20   let right_base = {right_offset} + batch * {rb};\n\
         \x20   var sums: array<f32, 16>;\n\
         \x20   for (var e = 0u; e < 16u; e = e + 1u) {{ sums[e] = 0.0; }}\n\
         \x20   var k0 = 0u;\n\
         \x20   loop {{\n\
         \x20       if (k0 >= {k}) {{ break; }}\n\
         \x20       for (var e = 0u; e < 4u; e = e + 1u) {{\n\
         \x20           let slot = lid + e * 256u;\n\
         \x20           let r = row0 + slot / 16u;\n\
         \x20           let kk = k0 + slot % 16u;\n\
         \x20           var a = 0.0;\n\
         \x20           if (r < {n} && kk < {k}) {{ a = left[left_base + r * {lr} + kk * {lc}]; }}\n\
         \x20           left_tile[slot] = a;\n\
         \x20           let kr = k0 + slot / 64u;\n\
         \x20           let c = column0 + slot % 64u;\n\
         \x20           var b = 0.0;\n\
         \x20           if (kr < {k} && c < {m}) {{ b = right[right_base + kr * {rr} + c * {rc}]; }}\n\
         \x20           right_tile[slot] = b;\n\
         \x20       }}\n\
         \x20       workgroupBarrier();\n\
         \x20       for (var kk = 0u; kk < 16u; kk = kk + 1u) {{\n\
         \x20           var a: array<f32, 4>;\n\
         \x20           var b: array<f32, 4>;\n\
         \x20           for (var e = 0u; e < 4u; e = e + 1u) {{\n\
         \x20               a[e] = left_tile[(ty * 4u + e) * 16u + kk];\n\
         \x20               b[e] = right_tile[kk * 64u + tx * 4u + e];\n\
         \x20           }}\n\
         \x20           for (var i = 0u; i < 4u; i = i + 1u) {{\n\
         \x20               for (var j = 0u; j < 4u; j = j + 1u) {{\n\
         \x20                   sums[i * 4u + j] = sums[i * 4u + j] + a[i] * b[j];\n\
         \x20               }}\n\
         \x20           }}\n\
         \x20       }}\n\
         \x20       workgroupBarrier();\n\
         \x20       k0 = k0 + 16u;\n\
         \x20   }}\n\
         \x20   for (var i = 0u; i < 4u; i = i + 1u) {{\n\
         \x20       for (var j = 0u; j < 4u; j = j + 1u) {{\n\
         \x20           let r = row0 + ty * 4u + i;\n\
         \x20           let c = column0 + tx * 4u + j;\n\
         \x20           if (r < {n} && c < {m}) {{ out[(batch * {n} + r) * {m} + c] = sums[i * 4u + j]; }}\n\
         \x20       }}\n\
         \x20   }}\n\
         }}\n"
    );
    module.finish("matmul: f32, 64x64 tiles", &body)
}

fn integer() -> Wgsl {
    let mut module = Module::new();
    module.storage("left", "i64", Binding::Read);
    module.storage("right", "i64", Binding::Read);
    module.storage("out", "i64", Binding::Write);
    let [count, n, k, m, _, lb, lr, lc, rb, rr, rc, left_offset] = words(&mut module);
    let right_offset = module.param(Param::Offset(1));
    let mut body = entry_point(&count);
    let _ = write!(
        body,
        "    let c = i % {m};\n\
         \x20   let r = (i / {m}) % {n};\n\
         \x20   let batch = i / ({m} * {n});\n\
         \x20   var sum = 0li;\n\
         \x20   for (var kk = 0u; kk < {k}; kk = kk + 1u) {{\n\
         \x20       let a = left[{left_offset} + batch * {lb} + r * {lr} + kk * {lc}];\n\
         \x20       let b = right[{right_offset} + batch * {rb} + kk * {rr} + c * {rc}];\n\
         \x20       sum = sum + a * b;\n\
         \x20   }}\n\
         \x20   out[i] = sum;\n\
         }}\n"
    );
    module.finish("matmul: i64, one element per invocation", &body)
}
