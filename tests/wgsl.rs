//! The generated WGSL, without a GPU: every kernel family's source is validated by naga (as
//! wgpu will validate it), a representative of each is an insta snapshot, and every
//! elementwise operation on every dtype it accepts generates valid code.

#![cfg(feature = "gpu")]

use tsl::backend::gpu::codegen::compact;
use tsl::backend::gpu::codegen::elementwise::{ElementwiseSpec, Layout, elementwise};
use tsl::backend::gpu::codegen::gather::{TakeSpec, take};
use tsl::backend::gpu::codegen::reduce::{ReduceSpec, reduce};
use tsl::backend::gpu::codegen::{Wgsl, assert, matmul, scan};
use tsl::dtype::DType;
use tsl::graph::fused::FusedKernel;
use tsl::graph::op::{BinaryOp, Op, ReduceOp, UnaryOp};
use tsl::graph::passes;
use tsl::graph::shape::{self, Concrete, Dim, Meta};

/// Parses and validates a module as wgpu does (with 64-bit integers), failing with naga's
/// message and the source.
fn validate(wgsl: &Wgsl) {
    let module = naga::front::wgsl::parse_str(&wgsl.source)
        .unwrap_or_else(|error| panic!("{}\n{}", error.emit_to_string(&wgsl.source), wgsl.source));
    let mut validator = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::SHADER_INT64,
    );
    if let Err(error) = validator.validate(&module) {
        panic!("{}\n{}", error.emit_to_string(&wgsl.source), wgsl.source);
    }
    assert_eq!(
        wgsl.bindings.len(),
        wgsl.source.matches("@binding(").count(),
        "every binding is declared once"
    );
}

fn meta(dtype: DType, shape: &[i64]) -> Meta {
    Meta::new(dtype, shape.iter().map(|&size| Dim::Known(size)).collect())
}

/// The one-member kernel of `op` on operands of these dtypes and shapes.
fn kernel_of(op: &Op, inputs: &[Meta]) -> Option<FusedKernel> {
    let outputs = shape::infer(&mut op.clone(), inputs, &mut Concrete).ok()?;
    passes::single(op, inputs, &outputs[0])
}

fn generate(kernel: &FusedKernel, inputs: Vec<Layout>, rank: usize) -> Wgsl {
    let outputs = vec![Layout::Contiguous; kernel.outputs.len()];
    let aliased = vec![None; outputs.len()];
    elementwise(&ElementwiseSpec {
        kernel,
        rank,
        inputs,
        outputs,
        aliased,
    })
    .expect("an elementwise kernel generates")
}

#[test]
fn every_elementwise_op_on_every_dtype_generates_valid_wgsl() {
    let dtypes = [DType::F32, DType::I64, DType::Bool];
    let mut generated = 0;
    for op in BinaryOp::ALL {
        for a in dtypes {
            for b in dtypes {
                let inputs = [meta(a, &[4]), meta(b, &[4])];
                if let Some(kernel) = kernel_of(&Op::Binary(op), &inputs) {
                    validate(&generate(&kernel, vec![Layout::Contiguous; 2], 1));
                    validate(&generate(&kernel, vec![Layout::Strided, Layout::Scalar], 2));
                    generated += 1;
                }
            }
        }
    }
    for op in UnaryOp::ALL {
        for a in dtypes {
            if let Some(kernel) = kernel_of(&Op::Unary(op), &[meta(a, &[4])]) {
                validate(&generate(&kernel, vec![Layout::Contiguous], 1));
                generated += 1;
            }
        }
    }
    for from in dtypes {
        for to in dtypes {
            let kernel = kernel_of(&Op::Cast(to), &[meta(from, &[3])]).expect("every cast");
            validate(&generate(&kernel, vec![Layout::Strided], 3));
            generated += 1;
        }
    }
    let clamp = Op::Clamp {
        min: true,
        max: true,
    };
    let inputs = [
        meta(DType::F32, &[2]),
        meta(DType::F32, &[]),
        meta(DType::I64, &[]),
    ];
    let kernel = kernel_of(&clamp, &inputs).expect("clamp");
    validate(&generate(
        &kernel,
        vec![Layout::Contiguous, Layout::Scalar, Layout::Scalar],
        1,
    ));
    let inputs = [
        meta(DType::Bool, &[2]),
        meta(DType::I64, &[2]),
        meta(DType::F32, &[]),
    ];
    let kernel = kernel_of(&Op::Where, &inputs).expect("where");
    validate(&generate(
        &kernel,
        vec![Layout::Contiguous, Layout::Strided, Layout::Scalar],
        1,
    ));
    assert!(generated > 150, "only {generated} kernels were generated");
}

#[test]
fn an_integer_division_reports_into_the_status_buffer() {
    let inputs = [meta(DType::I64, &[5]), meta(DType::I64, &[5])];
    let kernel = kernel_of(&Op::Binary(BinaryOp::FloorDiv), &inputs).expect("floor_div");
    let wgsl = generate(&kernel, vec![Layout::Contiguous, Layout::Strided], 2);
    validate(&wgsl);
    assert!(wgsl.source.contains("fail("), "{}", wgsl.source);
    insta::assert_snapshot!("elementwise_floor_div_i64", wgsl.source);
}

#[test]
fn a_fused_chain_is_one_kernel_with_nan_kept_as_the_cpu_keeps_it() {
    // `where(x > 0, relu(x * 2.0 + y).exp(), clamp(x, min = -1.0)) - 0.5` over x: f32[s0, 3]
    // and y: f32[3], fused by the pass as it fuses a traced graph.
    let text = "graph f {
  %0 = input x @0 : f32[s0, 3]
  %1 = input y @1 : f32[3]
  %2 = gt(%0, 0.0) : bool[s0, 3]
  %3 = mul(%0, 2.0) : f32[s0, 3]
  %4 = add(%3, %1) : f32[s0, 3]
  %5 = relu(%4) : f32[s0, 3]
  %6 = exp(%5) : f32[s0, 3]
  %7 = clamp(%0, min=-1.0) : f32[s0, 3]
  %8 = where(%2, %6, %7) : f32[s0, 3]
  %9 = sub(%8, 0.5) : f32[s0, 3]
  return %9
}
symbols:
  s0 = n from @0.size(0), range [2, inf]
guards: none
asserts: 0
";
    let mut graph = tsl::graph::parse::parse_graph(text).expect("the graph parses");
    passes::fuse(&mut graph, &passes::FusionPolicy::default());
    let kernel = graph
        .nodes
        .iter()
        .find_map(|node| match &node.kind {
            tsl::graph::ir::NodeKind::Op(Op::Fused(kernel)) => Some(kernel.clone()),
            _ => None,
        })
        .expect("one fused kernel");
    let wgsl = generate(&kernel, vec![Layout::Contiguous, Layout::Strided], 2);
    validate(&wgsl);
    // Literals are combined with the always-zero word, so drivers cannot fold arithmetic on
    // them as if infinities and NaN did not exist.
    let literals = wgsl.source.matches("bitcast<f32>(0x").count();
    assert_eq!(literals, 4);
    assert_eq!(wgsl.source.matches("u ^ p.w[").count(), literals);
    insta::assert_snapshot!("elementwise_fused_chain", wgsl.source);
}

#[test]
fn an_operation_on_one_value_twice_hides_that_its_operands_are_equal() {
    // `x - x` is NaN for infinite x; a driver that sees both operands are one value folds it
    // to 0 unless one of them passes through the always-zero word.
    let text = "graph f {
  %0 = input x @0 : f32[s0]
  %1 = sub(%0, %0) : f32[s0]
  %2 = mul(%1, 2.0) : f32[s0]
  return %2
}
symbols:
  s0 = n from @0.size(0), range [2, inf]
guards: none
asserts: 0
";
    let mut graph = tsl::graph::parse::parse_graph(text).expect("the graph parses");
    passes::fuse(&mut graph, &passes::FusionPolicy::default());
    let kernel = graph
        .nodes
        .iter()
        .find_map(|node| match &node.kind {
            tsl::graph::ir::NodeKind::Op(Op::Fused(kernel)) => Some(kernel.clone()),
            _ => None,
        })
        .expect("one fused kernel");
    assert_eq!(kernel.inputs.len(), 1, "x is read once");
    let wgsl = generate(&kernel, vec![Layout::Contiguous], 1);
    validate(&wgsl);
    assert!(
        wgsl.source.contains("bitcast<f32>(bitcast<u32>("),
        "{}",
        wgsl.source
    );
}

#[test]
fn reductions_generate_valid_wgsl_for_every_op_and_dtype() {
    let ops = [
        ReduceOp::Sum,
        ReduceOp::Mean,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::Prod,
        ReduceOp::Argmax,
        ReduceOp::Argmin,
        ReduceOp::All,
        ReduceOp::Any,
    ];
    for op in ops {
        for input in [DType::F32, DType::I64, DType::Bool] {
            if op == ReduceOp::Mean && input != DType::F32 {
                continue;
            }
            for (indexed, last) in [(false, true), (false, false), (true, true)] {
                let arg = matches!(op, ReduceOp::Argmax | ReduceOp::Argmin);
                if indexed && !arg {
                    continue;
                }
                validate(&reduce(&ReduceSpec {
                    op,
                    input,
                    indexed,
                    last,
                }));
            }
        }
    }
    let sum = reduce(&ReduceSpec {
        op: ReduceOp::Sum,
        input: DType::F32,
        indexed: false,
        last: true,
    });
    insta::assert_snapshot!("reduce_sum_f32", sum.source);
    let argmax = reduce(&ReduceSpec {
        op: ReduceOp::Argmax,
        input: DType::F32,
        indexed: true,
        last: true,
    });
    insta::assert_snapshot!("reduce_argmax_f32_second_pass", argmax.source);
}

#[test]
fn scans_takes_compactions_matmuls_and_asserts_are_valid() {
    for dtype in [DType::F32, DType::I64, DType::Bool] {
        validate(&scan::cumsum(dtype));
        validate(&scan::add_segments(dtype));
        for wrap in [false, true] {
            validate(&take(&TakeSpec {
                dtype,
                rank: 3,
                wrap,
            }));
        }
    }
    for wgsl in [
        compact::count(),
        compact::scatter(),
        compact::repeat_positions(),
        compact::negative_counts(),
        matmul::matmul(DType::F32),
        matmul::matmul(DType::I64),
        assert::device_assert(),
    ] {
        validate(&wgsl);
    }
    insta::assert_snapshot!("scan_cumsum_f32", scan::cumsum(DType::F32).source);
    insta::assert_snapshot!(
        "scan_add_segments_f32",
        scan::add_segments(DType::F32).source
    );
    let take_source = take(&TakeSpec {
        dtype: DType::Bool,
        rank: 2,
        wrap: true,
    })
    .source;
    insta::assert_snapshot!("take_bool_wrapping", take_source);
    insta::assert_snapshot!("compact_scatter", compact::scatter().source);
    insta::assert_snapshot!("matmul_f32", matmul::matmul(DType::F32).source);
    insta::assert_snapshot!("device_assert", assert::device_assert().source);
}

#[test]
fn an_in_place_kernel_binds_the_overwritten_input_once() {
    let inputs = [meta(DType::F32, &[4]), meta(DType::F32, &[4])];
    let kernel = kernel_of(&Op::Binary(BinaryOp::Gt), &inputs).expect("gt");
    let wgsl = elementwise(&ElementwiseSpec {
        kernel: &kernel,
        rank: 1,
        inputs: vec![Layout::Contiguous; 2],
        outputs: vec![Layout::Contiguous],
        aliased: vec![Some(1)],
    })
    .expect("generates");
    validate(&wgsl);
    assert_eq!(
        wgsl.bindings.len(),
        3,
        "parameters and two inputs, no output binding"
    );
    insta::assert_snapshot!("elementwise_in_place", wgsl.source);
}

#[test]
fn sizes_never_appear_in_the_source() {
    // One pipeline serves every size: two kernels for different sizes are the same module.
    let small = kernel_of(
        &Op::Binary(BinaryOp::Add),
        &[meta(DType::F32, &[3]), meta(DType::F32, &[3])],
    )
    .expect("add");
    let large = kernel_of(
        &Op::Binary(BinaryOp::Add),
        &[meta(DType::F32, &[70_000]), meta(DType::F32, &[70_000])],
    )
    .expect("add");
    let layouts = vec![Layout::Contiguous; 2];
    assert_eq!(
        generate(&small, layouts.clone(), 1).source,
        generate(&large, layouts, 1).source
    );
}
