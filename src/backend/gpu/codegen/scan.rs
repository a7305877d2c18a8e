//! Running sums along one dim, in GPU.md's multi-level scheme. A row of up to [`SEGMENT`]
//! elements is one workgroup's, which walks it in tiles of the workgroup size, scanning each
//! tile in shared memory and carrying the total forward. A longer row is cut into segments
//! of [`SEGMENT`], scanned side by side by their own workgroups, each writing its total; the
//! running sums of those totals (a scan of a shorter row) are then added back to every
//! segment after the first ([`add_segments`]).
//!
//! An `f32` carry is compensated (Kahan): the carry grows with the row while each tile adds a
//! small total, so a plain `f32` carry would drop the low bits of every tile's total and drift
//! far from the CPU's running sum, which it keeps in `f64`.

use std::fmt::Write as _;

use super::wgsl::storage_type;
use super::{Binding, Module, Param, Wgsl};
use crate::dtype::DType;

/// Tiles of the workgroup's size scanned in one iteration of the loop over a segment.
const TILES_PER_STEP: u32 = 4;

/// The elements of a row one workgroup scans: sixteen turns of the loop over a segment of
/// four tiles of 256.
pub const SEGMENT: usize = 16 * 1024;

/// Words: `Count` rows × segments, `Value(0)` row length, `Value(1)` row stride and
/// `Value(2)` element stride in the input, `Value(3)` segment length ([`SEGMENT`], or the
/// row length), `Value(4)` segments per row, `Offset(0)` the input's offset.
/// The output is contiguous; `totals` gets each segment's sum (row by row).
pub fn cumsum(input: DType) -> Wgsl {
    let mut module = Module::new();
    module.storage("values", storage_type(input), Binding::Read);
    let (ty, zero, convert) = match input {
        DType::F32 => ("f32", "0.0", "values[at]"),
        DType::I64 => ("i64", "0li", "values[at]"),
        DType::Bool => ("i64", "0li", "i64(values[at])"),
    };
    let compensated = input == DType::F32;
    module.storage("out", ty, Binding::Write);
    module.storage("totals", ty, Binding::Write);
    let count = module.param(Param::Count);
    let length = module.param(Param::Value(0));
    let row_stride = module.param(Param::Value(1));
    let stride = module.param(Param::Value(2));
    let segment_length = module.param(Param::Value(3));
    let segments = module.param(Param::Value(4));
    let offset = module.param(Param::Offset(0));
    let size = super::workgroup_size();
    let last = size - 1;
    // The scan of a tile, unrolled, and several tiles per turn of the loop over a segment:
    // Mesa's llvmpipe (the software driver CI runs on) ends a shader's loops after 65,535
    // iterations in all, which a loop over the steps of every tile of a whole row once
    // reached at 1.6 million elements, leaving the later sums at zero.
    let mut steps = String::new();
    for k in 0..size.trailing_zeros() {
        let step = 1u32 << k;
        let _ = write!(
            steps,
            "\x20       earlier = {zero};\n\
             \x20       if (lid >= {step}u) {{ earlier = tile[lid - {step}u]; }}\n\
             \x20       workgroupBarrier();\n\
             \x20       tile[lid] = tile[lid] + earlier;\n\
             \x20       workgroupBarrier();\n"
        );
    }
    let (sum, carry_forward, total) = if compensated {
        // `lost` holds what the carry's additions rounded away, negated: the running total
        // is `carry - lost`. The new carry is hidden from the compiler (as the elementwise
        // kernels hide float results), which would otherwise see `(t - carry) - y` as zero
        // and drop the compensation. Where the carry is not finite, nothing is lost, so an
        // infinite carry stays infinite instead of turning NaN through `inf - inf`.
        let hide = module.param(Param::Zero);
        (
            "(carry + tile[lid]) - lost".to_string(),
            format!(
                "if (lid == {last}u) {{\n\
                 \x20           let y = tile[{last}] - lost;\n\
                 \x20           let t = bitcast<f32>(bitcast<u32>(carry + y) ^ {hide});\n\
                 \x20           lost = select(0.0, (t - carry) - y, abs(t) <= 3.4028235e38);\n\
                 \x20           carry = t;\n\
                 \x20       }}"
            ),
            "carry - lost",
        )
    } else {
        (
            "carry + tile[lid]".to_string(),
            format!("if (lid == {last}u) {{ carry = carry + tile[{last}]; }}"),
            "carry",
        )
    };
    let mut tiles = String::new();
    for tile in 0..TILES_PER_STEP {
        let _ = write!(
            tiles,
            "\x20       j = start + {first}u + lid;\n\
             \x20       v = {zero};\n\
             \x20       if (j < end) {{\n\
             \x20           let at = {offset} + row * {row_stride} + j * {stride};\n\
             \x20           v = {convert};\n\
             \x20       }}\n\
             \x20       tile[lid] = v;\n\
             \x20       workgroupBarrier();\n\
             {steps}\
             \x20       if (j < end) {{ out[row * {length} + j] = {sum}; }}\n\
             \x20       workgroupBarrier();\n\
             \x20       {carry_forward}\n\
             \x20       workgroupBarrier();\n",
            first = tile * size,
        );
    }
    let body = format!(
        "var<workgroup> tile: array<{ty}, {size}>;\n\
         var<workgroup> carry: {ty};\n\
         {lost_decl}\
         @compute @workgroup_size({size})\n\
         fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{\n\
         \x20   let group = wid.x + wid.y * nwg.x;\n\
         \x20   if (group >= {count}) {{ return; }}\n\
         \x20   let row = group / {segments};\n\
         \x20   if (lid == 0u) {{ carry = {zero};{lost_init} }}\n\
         \x20   workgroupBarrier();\n\
         \x20   var start = (group % {segments}) * {segment_length};\n\
         \x20   let end = min(start + {segment_length}, {length});\n\
         \x20   var j = 0u;\n\
         \x20   var v: {ty} = {zero};\n\
         \x20   var earlier: {ty} = {zero};\n\
         \x20   loop {{\n\
         \x20       if (start >= end) {{ break; }}\n\
         {tiles}\
         \x20       start = start + {stride_of_step}u;\n\
         \x20   }}\n\
         \x20   if (lid == 0u) {{ totals[group] = {total}; }}\n\
         }}\n",
        stride_of_step = TILES_PER_STEP * size,
        lost_decl = if compensated {
            "var<workgroup> lost: f32;\n"
        } else {
            ""
        },
        lost_init = if compensated { " lost = 0.0;" } else { "" },
    );
    module.finish(&format!("cumsum of {input}"), &body)
}

/// Adds to each element of a segment after the first the running sum of the segments before
/// it: `scanned` holds the running sums of the segments' totals, row by row, in `dtype` (the
/// running sums' own: `f32` or `i64`). Words: `Count` elements, `Value(0)` row length,
/// `Value(1)` segment length, `Value(2)` segments per row.
pub fn add_segments(dtype: DType) -> Wgsl {
    let ty = storage_type(dtype);
    let mut module = Module::new();
    module.storage("out", ty, Binding::Write);
    module.storage("scanned", ty, Binding::Read);
    let count = module.param(Param::Count);
    let length = module.param(Param::Value(0));
    let segment_length = module.param(Param::Value(1));
    let segments = module.param(Param::Value(2));
    let mut body = super::entry_point(&count);
    let _ = write!(
        body,
        "    let row = i / {length};\n\
         \x20   let segment = (i % {length}) / {segment_length};\n\
         \x20   if (segment > 0u) {{ out[i] = scanned[row * {segments} + segment - 1u] + out[i]; }}\n\
         }}\n"
    );
    module.finish(
        &format!("cumsum of {ty}: segments' running sums added back"),
        &body,
    )
}
