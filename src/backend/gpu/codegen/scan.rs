//! Running sums along one dim: one workgroup per row, which walks its row in tiles of the
//! workgroup size, scanning each tile in shared memory and carrying the total forward.

use super::wgsl::storage_type;
use super::{Binding, Module, Param, Wgsl};
use crate::dtype::DType;

/// Words: `Count` rows, `Value(0)` row length, `Value(1)` row stride and `Value(2)` element
/// stride in the input, `Offset(0)` the input's offset. The output is contiguous.
pub fn cumsum(input: DType) -> Wgsl {
    let mut module = Module::new();
    module.storage("values", storage_type(input), Binding::Read);
    let (ty, zero, convert) = match input {
        DType::F32 => ("f32", "0.0", "values[at]"),
        DType::I64 => ("i64", "0li", "values[at]"),
        DType::Bool => ("i64", "0li", "i64(values[at])"),
    };
    module.storage("out", ty, Binding::Write);
    let count = module.param(Param::Count);
    let length = module.param(Param::Value(0));
    let row_stride = module.param(Param::Value(1));
    let stride = module.param(Param::Value(2));
    let offset = module.param(Param::Offset(0));
    let size = super::workgroup_size();
    let body = format!(
        "var<workgroup> tile: array<{ty}, {size}>;\n\
         var<workgroup> carry: {ty};\n\
         @compute @workgroup_size({size})\n\
         fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{\n\
         \x20   let row = wid.x + wid.y * nwg.x;\n\
         \x20   if (row >= {count}) {{ return; }}\n\
         \x20   if (lid == 0u) {{ carry = {zero}; }}\n\
         \x20   workgroupBarrier();\n\
         \x20   var start = 0u;\n\
         \x20   loop {{\n\
         \x20       if (start >= {length}) {{ break; }}\n\
         \x20       let j = start + lid;\n\
         \x20       var v: {ty} = {zero};\n\
         \x20       if (j < {length}) {{\n\
         \x20           let at = {offset} + row * {row_stride} + j * {stride};\n\
         \x20           v = {convert};\n\
         \x20       }}\n\
         \x20       tile[lid] = v;\n\
         \x20       workgroupBarrier();\n\
         \x20       var step = 1u;\n\
         \x20       loop {{\n\
         \x20           if (step >= {size}u) {{ break; }}\n\
         \x20           var earlier: {ty} = {zero};\n\
         \x20           if (lid >= step) {{ earlier = tile[lid - step]; }}\n\
         \x20           workgroupBarrier();\n\
         \x20           tile[lid] = tile[lid] + earlier;\n\
         \x20           workgroupBarrier();\n\
         \x20           step = step * 2u;\n\
         \x20       }}\n\
         \x20       if (j < {length}) {{ out[row * {length} + j] = carry + tile[lid]; }}\n\
         \x20       workgroupBarrier();\n\
         \x20       if (lid == {last}u) {{ carry = carry + tile[{last}]; }}\n\
         \x20       workgroupBarrier();\n\
         \x20       start = start + {size}u;\n\
         \x20   }}\n\
         }}\n",
        last = size - 1,
    );
    module.finish(&format!("cumsum of {input}"), &body)
}
