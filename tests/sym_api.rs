//! The symbolic engine through its public API, as the tracer uses it on the examples of spec §11.

use tsl::source::{FileId, Span};
use tsl::sym::{
    CheckOutcome, Decision, Event, GuardSet, IntDecision, Mode, Origin, Range, ShapeEnv,
};

fn span(start: usize) -> Span {
    Span::new(FileId(0), start, start + 1)
}

fn item(env: &mut ShapeEnv, at: usize) -> tsl::sym::ExprId {
    let origin = Origin {
        operation: "item()".to_string(),
        span: span(at),
    };
    env.unbacked_symbol(origin, Range::ALL)
}

/// `fn head(x: f32[n], y: f32[m])`: `u0 = x.sum().long().item()`, `check_size u0`,
/// `check u0 <= y.size(0)`, `y.narrow(0, 0, u0)`.
#[test]
fn head_learns_what_narrow_needs() {
    let mut env = ShapeEnv::new();
    let n = env.backed_symbol(3, "x.size(0)", Range::DYNAMIC_SIZE);
    let m = env.backed_symbol(10, "y.size(0)", Range::DYNAMIC_SIZE);
    let u0 = item(&mut env, 40);
    assert_eq!(
        env.check_size(u0, None, span(60)),
        Ok(CheckOutcome::Learned)
    );
    let fits = env.le(u0, m).expect("le");
    assert_eq!(env.check(fits, span(80)), CheckOutcome::Learned);
    // narrow(0, 0, u0) asks 0 <= u0 and 0 + u0 <= m: both decided without a guard.
    let zero = env.int(0);
    let start_ok = env.le(zero, u0).expect("le");
    let end = env.add(zero, u0).expect("add");
    let end_ok = env.le(end, m).expect("le");
    for cond in [start_ok, end_ok] {
        assert_eq!(
            env.evaluate_bool(cond, Mode::Normal, span(100)),
            Decision::Decided(true)
        );
    }
    assert!(env.guards().is_empty());
    let asserts: Vec<String> = env
        .runtime_asserts()
        .iter()
        .map(|a| env.display(a.cond))
        .collect();
    assert_eq!(asserts, ["u0 >= 0", "u0 <= s1"]);
    assert_eq!(env.free_symbols(n).len(), 1);
    let events = env.take_events();
    assert!(matches!(events[0], Event::CreateUnbacked { .. }));
    let set = GuardSet::new(&env);
    assert_eq!(set.evaluate(&[3, 10]), Ok(()));
    assert_eq!(set.evaluate(&[1, 10]), Err(0));
}

/// `fn bad(x: i64[2])`: `if u0 * 2 == u1 * 3` is a data-dependent guard, and the explanation
/// suggests the check that would decide it.
#[test]
fn bad_explains_the_data_dependent_guard() {
    let mut env = ShapeEnv::new();
    let u0 = item(&mut env, 10);
    let u1 = item(&mut env, 14);
    let two = env.int(2);
    let three = env.int(3);
    let left = env.mul(u0, two).expect("mul");
    let right = env.mul(u1, three).expect("mul");
    let cond = env.eq(left, right).expect("eq");
    let decision = env.evaluate_bool(cond, Mode::Normal, span(30));
    let Decision::DataDependent { unbacked } = decision else {
        panic!("expected a data-dependent guard, got {decision:?}");
    };
    assert_eq!(unbacked.len(), 2);
    let explanation = env.explain(cond);
    assert_eq!(explanation.condition, "2*u0 == 3*u1");
    assert_eq!(explanation.suggestions[0], "check 2*u0 == 3*u1");
    assert_eq!(explanation.symbols[0].name, "u0");
    assert_eq!(
        explanation.symbols[0].origin.as_ref().map(|o| o.span),
        Some(span(10))
    );
    assert_eq!(env.check(cond, span(20)), CheckOutcome::Learned);
    assert_eq!(
        env.evaluate_bool(cond, Mode::Normal, span(30)),
        Decision::Decided(true)
    );
    assert_eq!(
        env.evaluate_int(u0, span(40)),
        IntDecision::DataDependent {
            unbacked: vec![unbacked[0]]
        }
    );
}

/// Concrete evaluation for the executor: Python floor semantics, errors instead of panics.
#[test]
fn evaluation_follows_python() {
    let mut env = ShapeEnv::new();
    let s0 = env.backed_symbol(7, "x.size(0)", Range::DYNAMIC_SIZE);
    let minus_two = env.int(-2);
    let zero = env.int(0);
    let quotient = env.floor_div(s0, minus_two).expect("floor_div");
    let remainder = env.modulo(s0, minus_two).expect("modulo");
    let values = |_| Some(7);
    assert_eq!(env.eval_int(quotient, &values), Ok(-4));
    assert_eq!(env.eval_int(remainder, &values), Ok(-1));
    assert!(env.floor_div(s0, zero).is_err());
    let s1 = env.backed_symbol(3, "x.size(1)", Range::DYNAMIC_SIZE);
    let three = env.int(3);
    let shifted = env.sub(s1, three).expect("sub");
    let ratio = env.floor_div(s0, shifted).expect("floor_div");
    assert!(env.eval_int(ratio, &|s| Some([7, 3][s.index()])).is_err());
}
