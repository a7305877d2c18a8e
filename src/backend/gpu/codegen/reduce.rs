//! Reductions: a lane is folded by `width` invocations of one workgroup (a power of two, up to
//! the workgroup size; a workgroup folds `256 / width` lanes side by side). Each invocation
//! folds the lane's elements it owns (strided by `width`, in increasing order), then the
//! lane's invocations combine their partial results in a fixed tree, so results do not vary
//! from run to run. The width is a parameter, chosen per call from the lane length: short
//! lanes take few invocations each, without a pipeline per size.
//!
//! A lane may be cut into chunks, each reduced by its own workgroup into a partial result
//! (for `argmax`/`argmin`, with the index of its best element); a second pass reduces the
//! partials. `max`/`min` keep NaN as the CPU does, and `argmax`/`argmin` return the first
//! best index (the first NaN, if any).

use super::wgsl::storage_type;
use super::{Binding, Module, Param, Wgsl};
use crate::dtype::DType;
use crate::graph::op::ReduceOp;
use std::fmt::Write as _;

/// A reduction pass to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReduceSpec {
    pub op: ReduceOp,
    /// The dtype of the elements read (the input, or a first pass's partial results).
    pub input: DType,
    /// A second pass of `argmax`/`argmin`: the best elements' indices come from an index
    /// input instead of their positions.
    pub indexed: bool,
    /// The last pass: writes the reduction's result (for `argmax`/`argmin`, only indices;
    /// for `mean`, the sum divided by the lane length).
    pub last: bool,
}

/// Words: `Count` lanes × chunks, `Value(0)` lane length, `Value(1)` chunks per lane,
/// `Value(2)` chunk length, `Value(3)` lane stride in the input, `Value(4)` element stride,
/// `Value(5)` the divisor of `mean` (f32 bits), `Value(6)` invocations per lane (a power of
/// two dividing the workgroup size).
pub fn reduce(spec: &ReduceSpec) -> Wgsl {
    let fold = Fold::of(spec.op, spec.input);
    let mut module = Module::new();
    module.storage("values", storage_type(spec.input), Binding::Read);
    if spec.indexed {
        module.storage("indices", "i64", Binding::Read);
    }
    let arg = fold.arg;
    let write_values = !(arg && spec.last);
    if write_values {
        let dtype = if spec.last {
            fold.result
        } else {
            fold.accumulator
        };
        module.storage("out_values", storage_type(dtype), Binding::Write);
    }
    if arg {
        module.storage("out_indices", "i64", Binding::Write);
    }
    for helper in fold.helpers {
        module.helper(helper);
    }
    let count = module.param(Param::Count);
    let length = module.param(Param::Value(0));
    let chunks = module.param(Param::Value(1));
    let chunk = module.param(Param::Value(2));
    let lane_stride = module.param(Param::Value(3));
    let stride = module.param(Param::Value(4));
    let offset = module.param(Param::Offset(0));
    let index_offset = if spec.indexed {
        module.param(Param::Offset(1))
    } else {
        String::new()
    };
    let out_offset = module.param(Param::Offset(2));
    let width = module.param(Param::Value(6));
    let size = super::workgroup_size();
    let ty = fold.ty;
    let value = fold.convert.replace("{}", "values[at]");
    let position = if spec.indexed {
        format!("u32(indices[{index_offset} + lane * {chunks} * {chunk} + j])")
    } else {
        "j".to_string()
    };
    let combine = fold.combine;
    let mut body = format!(
        "var<workgroup> shared_values: array<{ty}, {size}>;\n\
         var<workgroup> shared_indices: array<u32, {size}>;\n\
         fn combine(a: {ty}, a_index: u32, b: {ty}, b_index: u32) -> {ty} {{ {combine} }}\n\
         fn pick(a: {ty}, a_index: u32, b: {ty}, b_index: u32) -> u32 {{ {pick} }}\n\
         @compute @workgroup_size({size})\n\
         fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{\n\
         \x20   let k = lid % {width};\n\
         \x20   let row = (wid.x + wid.y * nwg.x) * ({size}u / {width}) + lid / {width};\n\
         \x20   let valid = row < {count};\n\
         \x20   let lane = row / {chunks};\n\
         \x20   let first = (row % {chunks}) * {chunk};\n\
         \x20   let last = select(first, min(first + {chunk}, {length}), valid);\n\
         \x20   var best: {ty} = {identity};\n\
         \x20   var best_index = 0xffffffffu;\n\
         \x20   var j = first + k;\n\
         \x20   loop {{\n\
         \x20       if (j >= last) {{ break; }}\n\
         \x20       let at = {offset} + lane * {lane_stride} + j * {stride};\n\
         \x20       let v: {ty} = {value};\n\
         \x20       let place = {position};\n\
         \x20       let chosen = pick(best, best_index, v, place);\n\
         \x20       best = combine(best, best_index, v, place);\n\
         \x20       best_index = chosen;\n\
         \x20       j = j + {width};\n\
         \x20   }}\n\
         \x20   shared_values[lid] = best;\n\
         \x20   shared_indices[lid] = best_index;\n\
         \x20   workgroupBarrier();\n\
         \x20   var half = {width} / 2u;\n\
         \x20   loop {{\n\
         \x20       if (half == 0u) {{ break; }}\n\
         \x20       if (k < half) {{\n\
         \x20           let a = shared_values[lid];\n\
         \x20           let a_index = shared_indices[lid];\n\
         \x20           let b = shared_values[lid + half];\n\
         \x20           let b_index = shared_indices[lid + half];\n\
         \x20           shared_values[lid] = combine(a, a_index, b, b_index);\n\
         \x20           shared_indices[lid] = pick(a, a_index, b, b_index);\n\
         \x20       }}\n\
         \x20       workgroupBarrier();\n\
         \x20       half = half / 2u;\n\
         \x20   }}\n\
         \x20   if (valid && k == 0u) {{\n",
        pick = fold.pick,
        identity = fold.identity,
    );
    if write_values {
        let result = if spec.last && spec.op == ReduceOp::Mean {
            let divisor = module.param(Param::Value(5));
            format!("shared_values[lid] / bitcast<f32>({divisor})")
        } else {
            "shared_values[lid]".to_string()
        };
        let stored = if spec.last && fold.result == DType::Bool {
            format!("select(0u, 1u, {result} != 0u)")
        } else {
            result
        };
        let _ = writeln!(body, "        out_values[{out_offset} + row] = {stored};");
    }
    if arg {
        let _ = writeln!(
            body,
            "        out_indices[{out_offset} + row] = i64(shared_indices[lid]);"
        );
    }
    body.push_str("    }\n}\n");
    let comment = format!(
        "reduce: {} of {}{}{}",
        spec.op.name(),
        spec.input,
        if spec.indexed { ", indexed" } else { "" },
        if spec.last { ", last pass" } else { "" }
    );
    module.finish(&comment, &body)
}

/// How one reduction folds elements of one dtype.
struct Fold {
    /// The WGSL type folded (bools as `u32`).
    ty: &'static str,
    accumulator: DType,
    result: DType,
    arg: bool,
    /// An element read (`{}`) as the folded type.
    convert: &'static str,
    identity: &'static str,
    /// The body of `combine(a, a_index, b, b_index)`: the folded value.
    combine: String,
    /// The body of `pick(...)`: the index kept (arg reductions).
    pick: String,
    helpers: Vec<&'static str>,
}

impl Fold {
    fn of(op: ReduceOp, input: DType) -> Fold {
        let arithmetic = if input == DType::F32 {
            DType::F32
        } else {
            DType::I64
        };
        let (ty, convert) = match (op, input) {
            (ReduceOp::All | ReduceOp::Any, DType::F32) => ("u32", "select(0u, 1u, !({} == 0.0))"),
            (ReduceOp::All | ReduceOp::Any, DType::I64) => ("u32", "select(0u, 1u, {} != 0li)"),
            (ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Mean, DType::Bool) => ("i64", "i64({})"),
            (_, dtype) => (storage_type(dtype), "{}"),
        };
        let accumulator = match op {
            ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Mean => arithmetic,
            ReduceOp::All | ReduceOp::Any => DType::Bool,
            _ => input,
        };
        let result = match op {
            ReduceOp::Argmax | ReduceOp::Argmin => DType::I64,
            _ => accumulator,
        };
        let keep_first = "return select(b_index, a_index, a_index < b_index);".to_string();
        let simple =
            |identity, combine: &str| (identity, combine.to_string(), keep_first.clone(), vec![]);
        let (identity, combine, pick, helpers) = match (op, ty) {
            (ReduceOp::Sum | ReduceOp::Mean, "f32") => simple("0.0", "return a + b;"),
            (ReduceOp::Sum | ReduceOp::Mean, _) => simple("0li", "return a + b;"),
            (ReduceOp::Prod, "f32") => simple("1.0", "return a * b;"),
            (ReduceOp::Prod, _) => simple("1li", "return a * b;"),
            (ReduceOp::All, _) => simple("1u", "return a & b;"),
            (ReduceOp::Any, _) => simple("0u", "return a | b;"),
            (ReduceOp::Max | ReduceOp::Argmax, ty) => extremum(ty, true),
            (ReduceOp::Min | ReduceOp::Argmin, ty) => extremum(ty, false),
        };
        Fold {
            ty,
            accumulator,
            result,
            arg: matches!(op, ReduceOp::Argmax | ReduceOp::Argmin),
            convert,
            identity,
            combine,
            pick,
            helpers,
        }
    }
}

/// Keeping the best of two candidates (`a` first unless `b` wins): a missing candidate
/// (index `0xffffffff`) always loses, NaN wins, ties go to the smaller index.
fn extremum(ty: &str, largest: bool) -> (&'static str, String, String, Vec<&'static str>) {
    let better = if largest { ">" } else { "<" };
    let (identity, nan_a, nan_b, helpers) = match (ty, largest) {
        ("f32", true) => (
            "bitcast<f32>(0xff800000u)",
            "is_nan(a)",
            "is_nan(b)",
            vec!["is_nan"],
        ),
        ("f32", false) => (
            "bitcast<f32>(0x7f800000u)",
            "is_nan(a)",
            "is_nan(b)",
            vec!["is_nan"],
        ),
        ("i64", true) => ("(-9223372036854775807li - 1li)", "false", "false", vec![]),
        ("i64", false) => ("9223372036854775807li", "false", "false", vec![]),
        (_, true) => ("0u", "false", "false", vec![]),
        (_, false) => ("1u", "false", "false", vec![]),
    };
    let pick = format!(
        "if (b_index == 0xffffffffu) {{ return a_index; }}\n\
         \x20   if (a_index == 0xffffffffu) {{ return b_index; }}\n\
         \x20   let a_nan = {nan_a};\n\
         \x20   let b_nan = {nan_b};\n\
         \x20   if (a_nan && b_nan) {{ return min(a_index, b_index); }}\n\
         \x20   if (a_nan) {{ return a_index; }}\n\
         \x20   if (b_nan) {{ return b_index; }}\n\
         \x20   if (b {better} a) {{ return b_index; }}\n\
         \x20   if (a {better} b) {{ return a_index; }}\n\
         \x20   return min(a_index, b_index);"
    );
    let wins = if ty == "f32" {
        format!("is_nan(b) || (!is_nan(a) && b {better} a)")
    } else {
        format!("b {better} a")
    };
    let combine = format!(
        "if (b_index == 0xffffffffu) {{ return a; }}\n\
         \x20   if (a_index == 0xffffffffu || {wins}) {{ return b; }}\n\
         \x20   return a;"
    );
    (identity, combine, pick, helpers)
}
