//! Elementwise kernels: a fused kernel's instructions computed per element of its iteration
//! shape. Every elementwise op runs this way (a single op is a one-member kernel), and so do
//! copies, fills and the writes of `cat`.

use super::wgsl::{self, f32_literal, i64_literal, load, scalar_from_words, store, value_type};
use super::{Binding, Module, Param, Wgsl, entry_point};
use crate::dtype::DType;
use crate::graph::fused::{FusedKernel, Instr, InstrKind, OutputKind};
use crate::graph::op::{BinaryOp, UnaryOp};
use std::fmt::Write as _;

/// How a kernel addresses one of its tensors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Element `i` of the iteration is at `offset + i`.
    Contiguous,
    /// Element `i` is at `offset + Σ coordinate_d · stride_d` (strides may be 0: broadcast).
    Strided,
    /// A host scalar passed in the parameters (operands only).
    Scalar,
}

/// An elementwise kernel to generate.
#[derive(Clone, Debug)]
pub struct ElementwiseSpec<'k> {
    pub kernel: &'k FusedKernel,
    /// The iteration rank after merging dimensions every tensor walks contiguously.
    pub rank: usize,
    /// Per kernel input.
    pub inputs: Vec<Layout>,
    /// Per kernel output (`Contiguous` or `Strided`).
    pub outputs: Vec<Layout>,
    /// Per kernel output: the input whose buffer it overwrites (in place: the input is
    /// contiguous over the iteration shape and nothing else holds it), bound once, read and
    /// written through the same binding as WebGPU requires.
    pub aliased: Vec<Option<usize>>,
}

/// The WGSL of an elementwise kernel; an error names what the generator cannot express (a
/// kernel that reduces, which devices without fused reductions never receive).
pub fn elementwise(spec: &ElementwiseSpec) -> Result<Wgsl, String> {
    let kernel = spec.kernel;
    let elementwise = !kernel.rows
        && kernel
            .outputs
            .iter()
            .all(|output| matches!(output.kind, OutputKind::Values(_)));
    if !elementwise {
        return Err("an elementwise kernel cannot reduce or compact".into());
    }
    let mut module = Module::new();
    let count = module.param(Param::Count);
    let mut body = entry_point(&count);
    let strided = spec
        .inputs
        .iter()
        .chain(&spec.outputs)
        .any(|layout| *layout == Layout::Strided);
    if strided {
        body.push_str(&coordinates(&mut module, spec.rank));
    }
    let mut names = Vec::with_capacity(kernel.inputs.len());
    for (position, (meta, layout)) in kernel.inputs.iter().zip(&spec.inputs).enumerate() {
        let tensor = position as u8;
        if *layout == Layout::Scalar {
            let low = module.param(Param::ScalarLow(tensor));
            let high = module.param(Param::ScalarHigh(tensor));
            names.push(scalar_from_words(meta.dtype, &low, &high));
            continue;
        }
        let name = format!("in{position}");
        let overwritten = spec.aliased.contains(&Some(position));
        let binding = if overwritten {
            Binding::Write
        } else {
            Binding::Read
        };
        let stored = if overwritten {
            // The buffer holds the output's elements afterwards: one storage type for both.
            let output = spec
                .aliased
                .iter()
                .position(|a| *a == Some(position))
                .unwrap_or(0);
            kernel
                .outputs
                .get(output)
                .map_or(meta.dtype, |o| o.meta.dtype)
        } else {
            meta.dtype
        };
        module.storage(&name, wgsl::storage_type(stored), binding);
        let index = address(&mut module, *layout, tensor, spec.rank);
        names.push(if stored == meta.dtype {
            load(meta.dtype, &name, &index)
        } else {
            reinterpret(meta.dtype, &format!("{name}[{index}]"))
        });
    }
    let mut fallible = 0u8;
    for (index, instr) in kernel.body.iter().enumerate() {
        let operand_type = |a: usize| kernel.body[a].dtype;
        let expression = match &instr.kind {
            InstrKind::Input(position) => names
                .get(*position)
                .cloned()
                .ok_or("an instruction reads a missing input")?,
            InstrKind::Int(dim) => {
                // Sizes become floats in `x.sum(1) / n`: hidden like float literals, so
                // `0.0 / 0` stays NaN.
                let value = dim
                    .known()
                    .ok_or("a size was not resolved before running")?;
                let zero = module.param(Param::Zero);
                format!("({} ^ i64({zero}))", i64_literal(value))
            }
            InstrKind::Float(value) => {
                let zero = module.param(Param::Zero);
                f32_literal(*value, &zero)
            }
            InstrKind::Bool(value) => value.to_string(),
            InstrKind::Unary(op, a) => unary(&mut module, *op, instr.dtype, &format!("v{a}"))?,
            InstrKind::Binary(op, a, b) => {
                // `x - x` is folded to 0 by drivers that assume no infinities or NaN;
                // hiding that the operands are one value keeps `inf - inf = NaN`. Related
                // operands made by arithmetic (`x + (-x)`) are hidden from each other
                // already (see below).
                let right = if a == b && operand_type(*a) == DType::F32 {
                    let zero = module.param(Param::Zero);
                    format!("bitcast<f32>(bitcast<u32>(v{b}) ^ {zero})")
                } else {
                    format!("v{b}")
                };
                binary(&mut module, *op, operand_type(*a), &format!("v{a}"), &right)?
            }
            InstrKind::Cast(a) => {
                cast(&mut module, operand_type(*a), instr.dtype, &format!("v{a}"))?
            }
            InstrKind::Where(c, a, b) => format!("select(v{b}, v{a}, v{c})"),
            InstrKind::Reduce(..) | InstrKind::Keep(..) | InstrKind::Position(_) => {
                return Err("an elementwise kernel cannot reduce or compact".into());
            }
        };
        // Float arithmetic is hidden from the instructions that use it, as literals are:
        // drivers that assume no infinities, NaN or rounding rewrite `(x + 1.0) - x` to
        // `1.0` and `x - (x - x)` minus `x` to `-(x - x)` when they see through the chain.
        let expression = if hidden(instr) {
            let zero = module.param(Param::Zero);
            format!("bitcast<f32>(bitcast<u32>({expression}) ^ {zero})")
        } else {
            expression
        };
        let _ = writeln!(
            body,
            "    let v{index}: {} = {expression};",
            value_type(instr.dtype)
        );
        if let Some(check) = fault_check(&instr.kind, instr.dtype) {
            module.status();
            let slot = module.param(Param::Slot(fallible));
            fallible += 1;
            let _ = writeln!(body, "    if ({check}) {{ fail({slot}, i); }}");
        }
    }
    for (position, (output, layout)) in kernel.outputs.iter().zip(&spec.outputs).enumerate() {
        let tensor = (kernel.inputs.len() + position) as u8;
        let name = match spec.aliased.get(position).copied().flatten() {
            Some(input) => format!("in{input}"),
            None => {
                let name = format!("out{position}");
                module.storage(&name, wgsl::storage_type(output.meta.dtype), Binding::Write);
                name
            }
        };
        let index = address(&mut module, *layout, tensor, spec.rank);
        let OutputKind::Values(instr) = output.kind else {
            return Err("an elementwise kernel writes values only".into());
        };
        let value = store(output.meta.dtype, &format!("v{instr}"));
        let _ = writeln!(body, "    {name}[{index}] = {value};");
    }
    body.push_str("}\n");
    let comment = format!("elementwise: {}", kernel.member_names().join(" "));
    Ok(module.finish(&comment, &body))
}

/// A stored word of one 4-byte dtype read as another (an input overwritten in place by an
/// output of another dtype): `bool` words and `f32` bits.
fn reinterpret(dtype: DType, word: &str) -> String {
    match dtype {
        DType::Bool => format!("(bitcast<u32>({word}) != 0u)"),
        DType::F32 => format!("bitcast<f32>({word})"),
        DType::I64 => word.to_string(),
    }
}

/// The coordinates `c0..c{rank-1}` of invocation `i` in the iteration shape.
pub(crate) fn coordinates(module: &mut Module, rank: usize) -> String {
    if rank == 0 {
        return String::new();
    }
    let mut text = String::from("    var rest = i;\n");
    for dim in (1..rank).rev() {
        let size = module.param(Param::Size(dim as u8));
        let _ = write!(
            text,
            "    let c{dim} = rest % {size};\n    rest = rest / {size};\n"
        );
    }
    text.push_str("    let c0 = rest;\n");
    text
}

/// The element index of tensor `tensor` for invocation `i`.
pub(crate) fn address(module: &mut Module, layout: Layout, tensor: u8, rank: usize) -> String {
    let offset = module.param(Param::Offset(tensor));
    match layout {
        Layout::Contiguous | Layout::Scalar => format!("{offset} + i"),
        Layout::Strided => {
            let mut text = offset;
            for dim in 0..rank {
                let stride = module.param(Param::Stride(tensor, dim as u8));
                let _ = write!(text, " + c{dim} * {stride}");
            }
            text
        }
    }
}

/// The condition under which an instruction's element fails (integer `//` and `%` by zero,
/// an integer to a negative power), as `graph::semantics::Fault` defines it.
fn fault_check(kind: &InstrKind, dtype: DType) -> Option<String> {
    match kind {
        InstrKind::Binary(BinaryOp::FloorDiv | BinaryOp::Rem, _, b) if dtype == DType::I64 => {
            Some(format!("v{b} == 0li"))
        }
        InstrKind::Binary(BinaryOp::Pow, _, b) if dtype == DType::I64 => {
            Some(format!("v{b} < 0li"))
        }
        _ => None,
    }
}

fn unary(module: &mut Module, op: UnaryOp, dtype: DType, a: &str) -> Result<String, String> {
    let call = |module: &mut Module, name: &'static str| {
        module.helper(name);
        format!("{name}({a})")
    };
    Ok(match (dtype, op) {
        (DType::F32 | DType::I64, UnaryOp::Neg) => format!("-{a}"),
        (DType::F32 | DType::I64, UnaryOp::Abs) => format!("abs({a})"),
        (DType::F32, UnaryOp::Exp) => format!("exp({a})"),
        (DType::F32, UnaryOp::Log) => call(module, "log_f32"),
        (DType::F32, UnaryOp::Sqrt) => call(module, "sqrt_f32"),
        (DType::F32, UnaryOp::Relu) => call(module, "relu_f32"),
        (DType::F32, UnaryOp::Sigmoid) => call(module, "sigmoid_f32"),
        (DType::F32, UnaryOp::Tanh) => call(module, "tanh_f32"),
        (DType::I64, UnaryOp::Relu) => format!("max({a}, 0li)"),
        (DType::Bool, UnaryOp::Not) => format!("!{a}"),
        // The predicates read an `f32` operand (the fusion builder casts to it).
        (DType::Bool, UnaryOp::IsNan) => call(module, "is_nan"),
        (DType::Bool, UnaryOp::IsInf) => {
            format!("((bitcast<u32>({a}) & 0x7fffffffu) == 0x7f800000u)")
        }
        (dtype, op) => return Err(format!("no {} on {dtype}", op.name())),
    })
}

/// `a op b` with operands of dtype `operands` (the result dtype follows from the op).
fn binary(
    module: &mut Module,
    op: BinaryOp,
    operands: DType,
    a: &str,
    b: &str,
) -> Result<String, String> {
    let mut call = |name: &'static str| {
        module.helper(name);
        format!("{name}({a}, {b})")
    };
    Ok(match (operands, op) {
        (DType::F32 | DType::I64, BinaryOp::Add) => format!("{a} + {b}"),
        (DType::F32 | DType::I64, BinaryOp::Sub) => format!("{a} - {b}"),
        (DType::F32 | DType::I64, BinaryOp::Mul) => format!("{a} * {b}"),
        (DType::F32, BinaryOp::Div) => format!("{a} / {b}"),
        (DType::F32, BinaryOp::FloorDiv) => call("floor_div_f32"),
        (DType::F32, BinaryOp::Rem) => call("remainder_f32"),
        (DType::F32, BinaryOp::Pow) => call("pow_f32"),
        (DType::F32, BinaryOp::Maximum) => call("maximum_f32"),
        (DType::F32, BinaryOp::Minimum) => call("minimum_f32"),
        (DType::I64, BinaryOp::FloorDiv) => call("floor_div_i64"),
        (DType::I64, BinaryOp::Rem) => call("remainder_i64"),
        (DType::I64, BinaryOp::Pow) => call("pow_i64"),
        (DType::I64, BinaryOp::Maximum) => format!("max({a}, {b})"),
        (DType::I64, BinaryOp::Minimum) => format!("min({a}, {b})"),
        (DType::I64, BinaryOp::And) => format!("{a} & {b}"),
        (DType::I64, BinaryOp::Or) => format!("{a} | {b}"),
        (DType::Bool, BinaryOp::And | BinaryOp::Minimum) => format!("{a} && {b}"),
        (DType::Bool, BinaryOp::Or | BinaryOp::Maximum) => format!("{a} || {b}"),
        // Lavapipe's float `!=` is ordered (NaN != x is false): negate `==` instead.
        (DType::F32, BinaryOp::Ne) => format!("!({a} == {b})"),
        (DType::Bool, op) if let Some(symbol) = comparison(op) => {
            format!("select(0u, 1u, {a}) {symbol} select(0u, 1u, {b})")
        }
        (_, op) if let Some(symbol) = comparison(op) => format!("{a} {symbol} {b}"),
        (dtype, op) => return Err(format!("no {} on {dtype}", op.name())),
    })
}

/// The WGSL operator of a comparison (written as in TSL); `None` for the other operations.
fn comparison(op: BinaryOp) -> Option<&'static str> {
    op.is_comparison().then(|| op.symbol())
}

fn cast(module: &mut Module, from: DType, to: DType, a: &str) -> Result<String, String> {
    Ok(match (from, to) {
        (from, to) if from == to => a.to_string(),
        (DType::F32, DType::I64) => {
            module.helper("f32_to_i64");
            format!("f32_to_i64({a})")
        }
        // NaN is true, as every non-zero value.
        (DType::F32, DType::Bool) => format!("!({a} == 0.0)"),
        (DType::I64, DType::F32) => format!("f32({a})"),
        (DType::I64, DType::Bool) => format!("{a} != 0li"),
        (DType::Bool, DType::F32) => format!("select(0.0, 1.0, {a})"),
        (DType::Bool, DType::I64) => format!("select(0li, 1li, {a})"),
        (from, to) => return Err(format!("no cast from {from} to {to}")),
    })
}

/// Whether a float instruction's value is hidden from the instructions that use it (its
/// arithmetic combined with the always-zero parameter word).
fn hidden(instr: &Instr) -> bool {
    instr.dtype == DType::F32 && matches!(instr.kind, InstrKind::Unary(..) | InstrKind::Binary(..))
}
