//! Sorting lines (`sort`, `topk`): each element becomes an order-preserving unsigned key
//! with its position beside it, every line is padded to a power of two with keys that sort
//! last, and a bitonic network of compare-and-swap passes orders (key, position) pairs. The
//! pairs are distinct, so the order is the CPU's stable one (ties keep their positions);
//! NaN sorts above every number and `-0.0` equals `0.0`, as `graph::semantics` defines.

use std::fmt::Write as _;

use super::wgsl::storage_type;
use super::{Binding, Module, Param, Wgsl, entry_point};
use crate::dtype::DType;

/// The keys and positions of padded lines. Words: `Count` padded elements, `Value(0)` the
/// line length, `Value(1)` the padded length, `Offset(0)` the (contiguous) input's offset.
pub fn keys(dtype: DType, descending: bool) -> Wgsl {
    let mut module = Module::new();
    module.storage("values", storage_type(dtype), Binding::Read);
    module.storage("keys", "u64", Binding::Write);
    module.storage("positions", "u32", Binding::Write);
    let count = module.param(Param::Count);
    let length = module.param(Param::Value(0));
    let padded = module.param(Param::Value(1));
    let offset = module.param(Param::Offset(0));
    let key = match dtype {
        DType::F32 => {
            "let x = values[at];\n\
             \x20       var bits = bitcast<u32>(x);\n\
             \x20       if (x == 0.0) { bits = 0u; }\n\
             \x20       var key32 = select(~bits, bits | 0x80000000u, (bits & 0x80000000u) == 0u);\n\
             \x20       if ((bits & 0x7fffffffu) > 0x7f800000u) { key32 = 0xffffffffu; }\n"
        }
        DType::I64 => "let key64 = bitcast<u64>(values[at]) ^ 0x8000000000000000lu;\n",
        DType::Bool => "let key32 = values[at];\n",
    };
    let key = if descending {
        match dtype {
            DType::F32 => format!("{key}        let key = u64(~key32);\n"),
            DType::I64 => format!("{key}        let key = ~key64;\n"),
            DType::Bool => format!("{key}        let key = u64(1u - key32);\n"),
        }
    } else {
        match dtype {
            DType::I64 => format!("{key}        let key = key64;\n"),
            _ => format!("{key}        let key = u64(key32);\n"),
        }
    };
    let mut body = entry_point(&count);
    let _ = write!(
        body,
        "    let line = i / {padded};\n\
         \x20   let j = i % {padded};\n\
         \x20   if (j < {length}) {{\n\
         \x20       let at = {offset} + line * {length} + j;\n\
         \x20       {key}\
         \x20       keys[i] = key;\n\
         \x20       positions[i] = j;\n\
         \x20   }} else {{\n\
         \x20       keys[i] = 0xfffffffffffffffflu;\n\
         \x20       positions[i] = 0xffffffffu;\n\
         \x20   }}\n\
         }}\n"
    );
    let order = if descending {
        "descending"
    } else {
        "ascending"
    };
    module.finish(&format!("sort: keys of {dtype}, {order}"), &body)
}

/// One pass of the bitonic network. Words: `Count` padded elements, `Value(0)` the block
/// size being merged, `Value(1)` the compare distance, `Value(2)` the padded length.
pub fn bitonic_pass() -> Wgsl {
    let mut module = Module::new();
    module.storage("keys", "u64", Binding::Write);
    module.storage("positions", "u32", Binding::Write);
    let count = module.param(Param::Count);
    let block = module.param(Param::Value(0));
    let distance = module.param(Param::Value(1));
    let padded = module.param(Param::Value(2));
    let mut body = entry_point(&count);
    let _ = write!(
        body,
        "    let j = i % {padded};\n\
         \x20   let partner = j ^ {distance};\n\
         \x20   if (partner <= j) {{ return; }}\n\
         \x20   let a = i;\n\
         \x20   let b = i - j + partner;\n\
         \x20   let ascending = (j & {block}) == 0u;\n\
         \x20   let ka = keys[a];\n\
         \x20   let kb = keys[b];\n\
         \x20   let pa = positions[a];\n\
         \x20   let pb = positions[b];\n\
         \x20   let greater = ka > kb || (ka == kb && pa > pb);\n\
         \x20   if (greater == ascending) {{\n\
         \x20       keys[a] = kb;\n\
         \x20       keys[b] = ka;\n\
         \x20       positions[a] = pb;\n\
         \x20       positions[b] = pa;\n\
         \x20   }}\n\
         }}\n"
    );
    module.finish("sort: one bitonic pass", &body)
}

/// The first `keep` positions of each sorted line as `i64` indices. Words: `Count` outputs,
/// `Value(0)` the padded length, `Value(1)` how many each line keeps.
pub fn indices() -> Wgsl {
    let mut module = Module::new();
    module.storage("positions", "u32", Binding::Read);
    module.storage("out", "i64", Binding::Write);
    let count = module.param(Param::Count);
    let padded = module.param(Param::Value(0));
    let keep = module.param(Param::Value(1));
    let mut body = entry_point(&count);
    let _ = write!(
        body,
        "    out[i] = i64(positions[(i / {keep}) * {padded} + i % {keep}]);\n}}\n"
    );
    module.finish("sort: the kept positions", &body)
}
