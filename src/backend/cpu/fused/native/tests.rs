//! Compiled loops against the interpreter, bit for bit, on the values where element
//! functions differ most: NaN, infinities, signed zeros, subnormals, ties.

use std::sync::Arc;

use super::super::layout::Operand;
use super::super::{Native, run};
use crate::backend::cpu::Tensor;
use crate::backend::cpu::testing::floats;
use crate::graph::fused::FusedKernel;
use crate::graph::ir::NodeKind;
use crate::graph::op::Op;
use crate::graph::parse::parse_graph;
use crate::graph::passes::{FusionPolicy, fuse};
use crate::graph::shape::Dim;

/// Values of every class, more than one vector iteration's worth so that both loops run.
const SPECIAL: [f32; 23] = [
    f32::NAN,
    -f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    0.0,
    -0.0,
    1.0,
    -1.0,
    1e-40,
    -1e-40,
    2.5,
    -2.5,
    0.5,
    -0.5,
    3.0,
    f32::MAX,
    f32::MIN,
    f32::MIN_POSITIVE,
    7.0,
    -7.0,
    1.0,
    0.0,
    f32::NAN,
];

/// Elements of the kernels: every pairing of two `SPECIAL` values.
const PAIRS: usize = SPECIAL.len() * SPECIAL.len();

/// `x` and `y` pairing every two values of `SPECIAL`.
fn pairs() -> (Tensor, Tensor) {
    let n = SPECIAL.len();
    let x: Vec<f32> = (0..PAIRS).map(|i| SPECIAL[i / n]).collect();
    let y: Vec<f32> = (0..PAIRS).map(|i| SPECIAL[i % n]).collect();
    (floats(&[PAIRS], &x), floats(&[PAIRS], &y))
}

/// The one fused kernel of a graph over `x` and `y` (`f32[529]`) written as `body`.
fn kernel(body: &str, result: &str) -> Arc<FusedKernel> {
    let text = format!(
        "graph f {{\n  %0 = input x @0 : f32[529]\n  %1 = input y @1 : f32[529]\n{body}  \
         return {result}\n}}\nsymbols:\nguards: none\nasserts: 0\n"
    );
    let mut graph = parse_graph(&text).unwrap_or_else(|error| panic!("{error:?}\n{text}"));
    fuse(&mut graph, &FusionPolicy::default());
    let fused = graph.nodes.iter().find_map(|node| match &node.kind {
        NodeKind::Op(Op::Fused(kernel)) => Some(kernel.clone()),
        _ => None,
    });
    fused.unwrap_or_else(|| panic!("nothing fused in\n{text}"))
}

/// Runs the kernel compiled and interpreted and compares every output bit for bit; then the
/// same on each value pairing alone, which the loop over single elements computes.
#[track_caller]
fn agree(kernel: &FusedKernel, inputs: &[Tensor]) {
    agree_over(kernel, inputs);
    let mut alone = kernel.clone();
    alone.shape = vec![Dim::Known(1)];
    for input in &mut alone.inputs {
        input.shape = vec![Dim::Known(1)];
    }
    for output in &mut alone.outputs {
        output.meta.shape = vec![Dim::Known(1)];
    }
    for at in 0..PAIRS {
        let inputs: Vec<Tensor> = (inputs.iter())
            .map(|input| crate::backend::cpu::narrow(input, 0, at.min(input.shape()[0] - 1), 1))
            .collect::<Result<_, _>>()
            .expect("one element");
        agree_over(&alone, &inputs);
    }
}

#[track_caller]
fn agree_over(kernel: &FusedKernel, inputs: &[Tensor]) {
    // Cranelift compiles for x86-64, AArch64, s390x and RISC-V; `exp` needs fused
    // multiply-adds. Elsewhere the interpreter computes, as `lower` says.
    let Some(fma) = super::code::fma() else {
        return;
    };
    let exponential = |instr: &crate::graph::fused::Instr| {
        use crate::graph::fused::InstrKind;
        use crate::graph::op::UnaryOp;
        matches!(
            instr.kind,
            InstrKind::Unary(UnaryOp::Exp | UnaryOp::Sigmoid, _)
        )
    };
    if !fma && kernel.body.iter().any(exponential) {
        return;
    }
    let Some(&Dim::Known(numel)) = kernel.shape.first() else {
        panic!("a kernel over {:?}", kernel.shape)
    };
    let shape = [usize::try_from(numel).expect("a size")];
    let operands: Vec<Operand<'_>> = (inputs.iter())
        .map(|tensor| Operand::new(tensor, &shape).expect("operand"))
        .collect();
    let compiled = super::run(kernel, &operands, shape[0], Native::Always)
        .expect("the kernel is compiled")
        .expect("the compiled kernel runs");
    let interpreted = run(kernel, inputs, Native::Never).expect("the kernel is interpreted");
    assert_eq!(compiled.len(), interpreted.len());
    for (compiled, interpreted) in compiled.iter().zip(&interpreted) {
        assert_eq!(compiled.shape(), interpreted.shape());
        match (compiled, interpreted) {
            (Tensor::F32(compiled), Tensor::F32(interpreted)) => {
                let bits = |array: &ndarray::ArcArray<f32, _>| -> Vec<u32> {
                    array.iter().map(|value| value.to_bits()).collect()
                };
                assert_eq!(bits(compiled), bits(interpreted), "{:?}", kernel.body);
            }
            (Tensor::Bool(compiled), Tensor::Bool(interpreted)) => {
                assert_eq!(compiled, interpreted, "{:?}", kernel.body);
            }
            _ => panic!("outputs of different dtypes: {compiled:?}, {interpreted:?}"),
        }
    }
}

#[test]
fn every_arithmetic_step_computes_the_interpreters_bits() {
    let (x, y) = pairs();
    for op in ["add", "sub", "mul", "div", "maximum", "minimum"] {
        // A second step, so that the pair is a kernel.
        let kernel = kernel(
            &format!("  %2 = {op}(%0, %1) : f32[529]\n  %3 = neg(%2) : f32[529]\n"),
            "%3",
        );
        agree(&kernel, &[x.clone(), y.clone()]);
    }
    for op in [
        "neg", "abs", "relu", "sqrt", "exp", "sigmoid", "log", "tanh",
    ] {
        let kernel = kernel(
            &format!("  %2 = {op}(%0) : f32[529]\n  %3 = add(%2, %1) : f32[529]\n"),
            "%3",
        );
        agree(&kernel, &[x.clone(), y.clone()]);
    }
}

#[test]
fn comparisons_tests_and_casts_select_the_interpreters_values() {
    let (x, y) = pairs();
    for op in ["eq", "ne", "lt", "le", "gt", "ge"] {
        let kernel = kernel(
            &format!(
                "  %2 = {op}(%0, %1) : bool[529]\n  %3 = where(%2, %0, %1) : f32[529]\n  \
                 %4 = cast(%2, f32) : f32[529]\n  %5 = add(%3, %4) : f32[529]\n"
            ),
            "%5",
        );
        agree(&kernel, &[x.clone(), y.clone()]);
    }
    let tests = "  %2 = isnan(%0) : bool[529]\n  %3 = isinf(%1) : bool[529]\n  \
                 %4 = not(%0) : bool[529]\n  %5 = cast(%1, bool) : bool[529]\n  \
                 %6 = and(%2, %3) : bool[529]\n  %7 = or(%4, %5) : bool[529]\n  \
                 %8 = not(%7) : bool[529]\n  %9 = or(%6, %8) : bool[529]\n  \
                 %10 = where(%9, %0, -1.5) : f32[529]\n";
    agree(&kernel(tests, "%10"), &[x, y]);
}

/// `exp` and `sigmoid` spelled out in machine code, and `log` and `tanh` called, over the
/// whole range where their results change: from below where `exp` underflows through its
/// subnormal results to past where it overflows, and every value class.
#[test]
fn transcendental_steps_match_over_their_whole_range() {
    let steps = PAIRS - SPECIAL.len();
    let x: Vec<f32> = (0..steps)
        .map(|i| -110.0 + 200.0 * (i as f32) / (steps as f32))
        .chain(SPECIAL)
        .collect();
    let x = floats(&[PAIRS], &x);
    let y = floats(&[PAIRS], &[1.0; PAIRS]);
    for op in ["exp", "sigmoid", "log", "tanh"] {
        let body = format!("  %2 = {op}(%0) : f32[529]\n  %3 = mul(%2, %1) : f32[529]\n");
        agree(&kernel(&body, "%3"), &[x.clone(), y.clone()]);
    }
}

#[test]
fn masks_are_written_as_bools() {
    let (x, y) = pairs();
    let body = "  %2 = gt(%0, %1) : bool[529]\n  %3 = isnan(%0) : bool[529]\n  \
                %4 = or(%2, %3) : bool[529]\n  %5 = not(%4) : bool[529]\n  \
                %6 = where(%5, %0, %1) : f32[529]\n";
    agree(&kernel(body, "[%4, %6, %5]"), &[x, y]);
}

#[test]
fn single_values_and_constants_are_computed_once_for_every_element() {
    let (x, _) = pairs();
    let body = "  %2 = mul(%1, 2.0) : f32[529]\n  %3 = gt(%1, 0) : bool[529]\n  \
                %4 = where(%3, %0, %2) : f32[529]\n  %5 = sub(%4, %2) : f32[529]\n";
    let text_kernel = kernel(body, "[%4, %5]");
    for value in [f32::NAN, -0.0, 3.0, -2.0] {
        agree(&text_kernel, &[x.clone(), floats(&[1], &[value])]);
    }
}
