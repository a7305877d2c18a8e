//! Taking elements at positions read from an index tensor (`index_select`, `gather`,
//! indexing with an `i64` tensor): each output element reads its index, checks it against
//! the size of the indexed dim, and copies the element there. An index out of range
//! reports its output position in the status buffer (the host reads the index back to
//! write the CPU's message) and writes 0.

use super::elementwise::coordinates;
use super::wgsl::storage_type;
use super::{Binding, Module, Param, Wgsl, entry_point};
use crate::dtype::DType;
use std::fmt::Write as _;

/// A take to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TakeSpec {
    pub dtype: DType,
    /// The output's rank.
    pub rank: usize,
    /// Whether negative indices count from the end (Python indexing) or are errors
    /// (`index_select`, `gather`).
    pub wrap: bool,
}

/// Words: `Count` outputs, `Size(d)` the output's sizes, `Stride(0, d)` and `Offset(0)`
/// the source's walk (0 along the indexed dims), `Stride(1, d)` and `Offset(1)` the
/// index tensor's walk, `Value(0)` the source stride along the indexed dim, `Value(1)` its
/// size, `Slot(0)` the status slot.
pub fn take(spec: &TakeSpec) -> Wgsl {
    let mut module = Module::new();
    let stored = storage_type(spec.dtype);
    module.storage("values", stored, Binding::Read);
    module.storage("indices", "i64", Binding::Read);
    module.storage("out", stored, Binding::Write);
    module.status();
    let count = module.param(Param::Count);
    let mut body = entry_point(&count);
    body.push_str(&coordinates(&mut module, spec.rank));
    let mut source = module.param(Param::Offset(0));
    let mut index = module.param(Param::Offset(1));
    for dim in 0..spec.rank {
        let source_stride = module.param(Param::Stride(0, dim as u8));
        let index_stride = module.param(Param::Stride(1, dim as u8));
        let _ = write!(source, " + c{dim} * {source_stride}");
        let _ = write!(index, " + c{dim} * {index_stride}");
    }
    let stride = module.param(Param::Value(0));
    let size = module.param(Param::Value(1));
    let slot = module.param(Param::Slot(0));
    let wrap = if spec.wrap {
        format!("    if (k < 0li) {{ k = k + i64({size}); }}\n")
    } else {
        String::new()
    };
    let zero = if spec.dtype == DType::I64 {
        "0li"
    } else if spec.dtype == DType::F32 {
        "0.0"
    } else {
        "0u"
    };
    let _ = write!(
        body,
        "    var k = indices[{index}];\n\
         {wrap}\
         \x20   if (k < 0li || k >= i64({size})) {{\n\
         \x20       fail({slot}, i);\n\
         \x20       out[i] = {zero};\n\
         \x20       return;\n\
         \x20   }}\n\
         \x20   out[i] = values[{source} + u32(k) * {stride}];\n\
         }}\n"
    );
    let comment = format!(
        "take: {}, rank {}{}",
        spec.dtype,
        spec.rank,
        if spec.wrap {
            ", negative indices wrap"
        } else {
            ""
        }
    );
    module.finish(&comment, &body)
}
