//! The executor's ordering rules, checked with a device that defers every failure (as a GPU
//! does): device asserts are only reported at a sync, data errors in kernels too, and the
//! earliest site wins, so a run reports what an immediate device would have reported.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{Deferred, Device, Failure, KernelCode, Plan, RunValue, Site, execute};
use crate::backend::{cpu, error::KernelError, host};
use crate::diag::Diagnostic;
use crate::dtype::{DType, Scalar};
use crate::graph::op::Op;
use crate::graph::parse::parse_graph;

/// The CPU, but deferring: device asserts are queued, and an op that fails on its data
/// records the failure and returns zeros of its output's shape.
struct Deferring {
    rng: ChaCha8Rng,
    site: Site,
    earliest: Option<Deferred>,
    /// Every sync, in order, for tests that count them.
    syncs: usize,
}

impl Deferring {
    fn new() -> Deferring {
        Deferring {
            rng: ChaCha8Rng::seed_from_u64(0),
            site: Site(0),
            earliest: None,
            syncs: 0,
        }
    }

    fn defer(&mut self, failure: Failure) {
        if self
            .earliest
            .as_ref()
            .is_none_or(|earliest| self.site < earliest.site)
        {
            self.earliest = Some(Deferred {
                site: self.site,
                failure,
            });
        }
    }
}

impl Device for Deferring {
    type Tensor = host::Tensor;

    fn upload(&mut self, tensor: &host::Tensor) -> Result<host::Tensor, KernelError> {
        Ok(tensor.clone())
    }

    fn download(&mut self, tensor: &host::Tensor) -> Result<host::Tensor, KernelError> {
        Ok(tensor.clone())
    }

    fn shape<'t>(&self, tensor: &'t host::Tensor) -> &'t [usize] {
        tensor.shape()
    }

    fn dtype(&self, tensor: &host::Tensor) -> DType {
        tensor.dtype()
    }

    fn scalar(&mut self, value: Scalar) -> Result<host::Tensor, KernelError> {
        Ok(host::Tensor::scalar(value))
    }

    fn run_telling(
        &mut self,
        op: &Op,
        inputs: Vec<host::Tensor>,
    ) -> Result<(Vec<host::Tensor>, Option<KernelCode>), KernelError> {
        let shapes: Vec<Vec<usize>> = inputs.iter().map(|t| t.shape().to_vec()).collect();
        let outputs = match cpu::run(op, inputs, &mut self.rng) {
            Err(error @ (KernelError::DivisionByZero | KernelError::IndexOutOfRange { .. })) => {
                self.defer(Failure::Kernel(error));
                let shape = cpu::broadcast_shapes(&shapes[0], &shapes[1])?;
                vec![cpu::zeros(DType::I64, &shape)?]
            }
            result => result?,
        };
        Ok((outputs, None))
    }

    fn element(&mut self, tensor: &host::Tensor) -> Result<Scalar, KernelError> {
        tensor
            .to_scalar()
            .ok_or_else(|| KernelError::Shape("not one element".into()))
    }

    fn set_site(&mut self, site: Site) {
        self.site = site;
    }

    fn device_assert(&mut self, condition: &host::Tensor) -> Result<Option<bool>, KernelError> {
        if !self.element(condition)?.as_bool() {
            self.defer(Failure::Assert);
        }
        Ok(None)
    }

    fn sync(&mut self) -> Result<Option<Deferred>, KernelError> {
        self.syncs += 1;
        Ok(self.earliest.take())
    }
}

/// Runs a graph written as text on `x`, with the deferring device and with the CPU; both
/// must print the same and fail the same way. Returns the printed text and the error.
fn run_both(text: &str, x: &[i64]) -> (String, Option<String>) {
    let deferred = run_on(&mut Deferring::new(), text, x);
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let immediate = run_on(
        &mut cpu::Cpu {
            rng: &mut rng,
            native: cpu::Native::default(),
        },
        text,
        x,
    );
    assert_eq!(
        deferred, immediate,
        "the deferring device differs from the CPU"
    );
    deferred
}

fn run_on<D: Device>(device: &mut D, text: &str, x: &[i64]) -> (String, Option<String>) {
    let graph = parse_graph(text).expect("the test graph parses");
    let plan = Plan::new(graph);
    let input = cpu::from_elements(
        &[x.len()],
        &x.iter().map(|v| Scalar::Int(*v)).collect::<Vec<_>>(),
        None,
    )
    .expect("a small tensor");
    let input = device.upload(&input).expect("upload");
    let mut printed = String::new();
    let mut symbols = vec![0; plan.symbol_count()];
    if let Some(first) = symbols.first_mut() {
        *first = x.len() as i64;
    }
    let result = execute(
        &plan,
        device,
        &[],
        vec![input],
        symbols,
        &mut |line| printed.push_str(line),
        None,
    );
    (printed, result.err().map(|d: Box<Diagnostic>| d.message))
}

const TWO_CHECKS: &str = r#"graph f {
  %0 = input x @0 : i64[s0]
  %1 = gt(%0, 0) : bool[s0]
  %2 = all(%1) : bool[]
  %3 = device_assert %2, "not positive: {%0}"
  %4 = lt(%0, 10) : bool[s0]
  %5 = all(%4) : bool[]
  %6 = device_assert %5, "too large"
  %7 = print "after\n"
  return %0
}
symbols:
  s0 = n from @0.size(0), range [2, inf]
guards: none
asserts: 2
"#;

#[test]
fn the_first_of_two_failing_device_asserts_is_reported() {
    let (printed, error) = run_both(TWO_CHECKS, &[-1, 20]);
    assert_eq!(printed, "");
    assert_eq!(
        error.as_deref(),
        Some("not positive: tensor([-1, 20], dtype=i64)")
    );
}

#[test]
fn a_later_failing_device_assert_is_reported_when_the_first_holds() {
    let (printed, error) = run_both(TWO_CHECKS, &[1, 20]);
    assert_eq!(printed, "");
    assert_eq!(error.as_deref(), Some("too large"));
}

#[test]
fn nothing_prints_after_a_failed_device_assert() {
    let (printed, error) = run_both(TWO_CHECKS, &[1, 2]);
    assert_eq!((printed.as_str(), error), ("after\n", None));
}

#[test]
fn a_queued_failure_wins_over_a_later_host_assert() {
    let text = r#"graph f {
  %0 = input x @0 : i64[s0]
  %1 = gt(%0, 0) : bool[s0]
  %2 = all(%1) : bool[]
  %3 = device_assert %2, "not positive"
  %4 = assert s0 <= 1, "too long"
  return %0
}
symbols:
  s0 = n from @0.size(0), range [2, inf]
guards: none
asserts: 2
"#;
    assert_eq!(run_both(text, &[-1, 2]).1.as_deref(), Some("not positive"));
    assert_eq!(run_both(text, &[1, 2]).1.as_deref(), Some("too long"));
}

#[test]
fn a_division_by_zero_before_a_failing_check_is_reported_first() {
    let text = r#"graph f {
  %0 = input x @0 : i64[s0]
  %1 = floor_div(10, %0) : i64[s0]
  %2 = gt(%0, 5) : bool[s0]
  %3 = all(%2) : bool[]
  %4 = device_assert %3, "small"
  %5 = print "quotient {%1}\n"
  return %1
}
symbols:
  s0 = n from @0.size(0), range [2, inf]
guards: none
asserts: 1
"#;
    let (printed, error) = run_both(text, &[0, 1]);
    assert_eq!(printed, "");
    assert_eq!(error.as_deref(), Some("integer division by zero"));
    assert_eq!(run_both(text, &[2, 1]).1.as_deref(), Some("small"));
}

#[test]
fn a_failure_inside_a_branch_precedes_the_nodes_after_the_cond() {
    let text = r#"graph f {
  %0 = input x @0 : i64[s0]
  %1 = sum(%0) : i64[]
  %2 = gt(%1, 0) : bool[]
  %3 = cond(%2, %0) : i64[s0]
    then {
      %0 = input arg0 @0 : i64[s0]
      %1 = lt(%0, 3) : bool[s0]
      %2 = all(%1) : bool[]
      %3 = device_assert %2, "in the branch"
      return %0
    }
    else {
      %0 = input arg0 @0 : i64[s0]
      return %0
    }
  %4 = gt(%0, 4) : bool[s0]
  %5 = all(%4) : bool[]
  %6 = device_assert %5, "after the cond"
  return %3
}
symbols:
  s0 = n from @0.size(0), range [2, inf]
guards: none
asserts: 2
"#;
    assert_eq!(run_both(text, &[1, 3]).1.as_deref(), Some("in the branch"));
    assert_eq!(run_both(text, &[1, 2]).1.as_deref(), Some("after the cond"));
}

#[test]
fn sites_number_branches_in_program_order() {
    let text = r"graph f {
  %0 = input x @0 : i64[s0]
  %1 = sum(%0) : i64[]
  %2 = gt(%1, 0) : bool[]
  %3 = cond(%2, %0) : i64[s0]
    then {
      %0 = input arg0 @0 : i64[s0]
      %1 = neg(%0) : i64[s0]
      return %1
    }
    else {
      %0 = input arg0 @0 : i64[s0]
      return %0
    }
  %4 = abs(%0) : i64[s0]
  return %4
}
symbols:
  s0 = n from @0.size(0), range [2, inf]
guards: none
asserts: 0
";
    let plan = Plan::new(parse_graph(text).expect("parses"));
    let name = |site: u32| {
        plan.node_at(Site(site)).map(|(_, node)| {
            format!("{:?}", node.kind)
                .chars()
                .take(12)
                .collect::<String>()
        })
    };
    // 0 input, 1 sum, 2 gt, 3 cond, 4-5 then branch, 6 else branch, 7 abs.
    assert!(name(4).is_some_and(|kind| kind.starts_with("Input")));
    assert!(name(5).is_some_and(|kind| kind.contains("Unary")));
    assert!(name(6).is_some_and(|kind| kind.starts_with("Input")));
    assert!(name(7).is_some_and(|kind| kind.contains("Unary")));
    assert!(name(8).is_none());
}

#[test]
fn a_run_without_failures_returns_its_output_after_one_final_sync() {
    let mut device = Deferring::new();
    let graph = parse_graph(TWO_CHECKS).expect("parses");
    let plan = Plan::new(graph);
    let input = cpu::from_elements(&[2], &[Scalar::Int(1), Scalar::Int(2)], None).expect("small");
    let mut printed = String::new();
    let result = execute(
        &plan,
        &mut device,
        &[],
        vec![input.clone()],
        vec![2],
        &mut |line| printed.push_str(line),
        None,
    );
    assert_eq!(result.ok(), Some(RunValue::Tensor(input)));
    // One sync before the print, one before the output is returned.
    assert_eq!(device.syncs, 2);
}
