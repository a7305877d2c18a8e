//! Stable compaction: the row-major positions of the `true` words of a flag buffer, in
//! three passes (count per block, scan of the counts, scatter), so the order is the CPU's.
//! The host reads the total back once: it is the size of a data-dependent result.

use super::{Binding, Module, Param, Wgsl, workgroup_size};
use std::fmt::Write as _;

/// Flags each workgroup handles: four per invocation.
pub const BLOCK: u32 = 4 * 256;

/// Counts the set flags of each block. Words: `Count` flags, `Offset(0)` of the flags.
pub fn count() -> Wgsl {
    let mut module = Module::new();
    module.storage("flags", "u32", Binding::Read);
    module.storage("counts", "i64", Binding::Write);
    let count = module.param(Param::Count);
    let offset = module.param(Param::Offset(0));
    let size = workgroup_size();
    let body = format!(
        "var<workgroup> partial: array<u32, {size}>;\n\
         @compute @workgroup_size({size})\n\
         fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{\n\
         \x20   let block = wid.x + wid.y * nwg.x;\n\
         \x20   let first = block * {BLOCK}u + lid * 4u;\n\
         \x20   var hits = 0u;\n\
         \x20   for (var k = 0u; k < 4u; k = k + 1u) {{\n\
         \x20       if (first + k < {count} && flags[{offset} + first + k] != 0u) {{ hits = hits + 1u; }}\n\
         \x20   }}\n\
         \x20   partial[lid] = hits;\n\
         \x20   workgroupBarrier();\n\
         \x20   var half = {half}u;\n\
         \x20   loop {{\n\
         \x20       if (half == 0u) {{ break; }}\n\
         \x20       if (lid < half) {{ partial[lid] = partial[lid] + partial[lid + half]; }}\n\
         \x20       workgroupBarrier();\n\
         \x20       half = half / 2u;\n\
         \x20   }}\n\
         \x20   if (lid == 0u) {{ counts[block] = i64(partial[0]); }}\n\
         }}\n",
        half = size / 2,
    );
    module.finish("compact: count set flags per block", &body)
}

/// Writes the position of every set flag at its rank among them: the block's start (the
/// running count before it) plus the rank within the block. Words: `Count` flags,
/// `Offset(0)` of the flags; `totals` holds the inclusive running counts of the blocks.
pub fn scatter() -> Wgsl {
    let mut module = Module::new();
    module.storage("flags", "u32", Binding::Read);
    module.storage("totals", "i64", Binding::Read);
    module.storage("positions", "i64", Binding::Write);
    let count = module.param(Param::Count);
    let offset = module.param(Param::Offset(0));
    let size = workgroup_size();
    let body = format!(
        "var<workgroup> ranks: array<u32, {size}>;\n\
         @compute @workgroup_size({size})\n\
         fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{\n\
         \x20   let block = wid.x + wid.y * nwg.x;\n\
         \x20   let first = block * {BLOCK}u + lid * 4u;\n\
         \x20   var hits = 0u;\n\
         \x20   for (var k = 0u; k < 4u; k = k + 1u) {{\n\
         \x20       if (first + k < {count} && flags[{offset} + first + k] != 0u) {{ hits = hits + 1u; }}\n\
         \x20   }}\n\
         \x20   ranks[lid] = hits;\n\
         \x20   workgroupBarrier();\n\
         \x20   var step = 1u;\n\
         \x20   loop {{\n\
         \x20       if (step >= {size}u) {{ break; }}\n\
         \x20       var earlier = 0u;\n\
         \x20       if (lid >= step) {{ earlier = ranks[lid - step]; }}\n\
         \x20       workgroupBarrier();\n\
         \x20       ranks[lid] = ranks[lid] + earlier;\n\
         \x20       workgroupBarrier();\n\
         \x20       step = step * 2u;\n\
         \x20   }}\n\
         \x20   var start = 0u;\n\
         \x20   if (block > 0u) {{ start = u32(totals[block - 1u]); }}\n\
         \x20   var rank = start + ranks[lid] - hits;\n\
         \x20   for (var k = 0u; k < 4u; k = k + 1u) {{\n\
         \x20       if (first + k < {count} && flags[{offset} + first + k] != 0u) {{\n\
         \x20           positions[rank] = i64(first + k);\n\
         \x20           rank = rank + 1u;\n\
         \x20       }}\n\
         \x20   }}\n\
         }}\n"
    );
    module.finish("compact: scatter the positions of set flags", &body)
}

/// For each output `k`, the first position `i` whose inclusive running count exceeds `k`
/// (the element `repeat_interleave` repeats there). Words: `Count` outputs, `Value(0)` the
/// number of counts.
pub fn repeat_positions() -> Wgsl {
    let mut module = Module::new();
    module.storage("totals", "i64", Binding::Read);
    module.storage("positions", "i64", Binding::Write);
    let count = module.param(Param::Count);
    let length = module.param(Param::Value(0));
    let mut body = super::entry_point(&count);
    let _ = write!(
        body,
        "    var low = 0u;\n\
         \x20   var high = {length};\n\
         \x20   loop {{\n\
         \x20       if (low >= high) {{ break; }}\n\
         \x20       let middle = low + (high - low) / 2u;\n\
         \x20       if (totals[middle] <= i64(i)) {{ low = middle + 1u; }} else {{ high = middle; }}\n\
         \x20   }}\n\
         \x20   positions[i] = i64(low);\n\
         }}\n"
    );
    module.finish("repeat_interleave: the element each output repeats", &body)
}

/// Reports the first negative count. Words: `Count` counts, `Offset(0)`, `Stride(0, 0)`,
/// `Slot(0)`.
pub fn negative_counts() -> Wgsl {
    let mut module = Module::new();
    module.storage("counts", "i64", Binding::Read);
    module.status();
    let count = module.param(Param::Count);
    let offset = module.param(Param::Offset(0));
    let stride = module.param(Param::Stride(0, 0));
    let slot = module.param(Param::Slot(0));
    let mut body = super::entry_point(&count);
    let _ = write!(
        body,
        "    if (counts[{offset} + i * {stride}] < 0li) {{ fail({slot}, i); }}\n}}\n"
    );
    module.finish("repeat_interleave: negative counts", &body)
}
