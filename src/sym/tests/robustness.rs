//! No panics on hostile input: overflow, huge exponents, deep and exponentially shared
//! expressions.

use super::support::Fixture;
use crate::source::Span;
use crate::sym::{Decision, EvalError, GuardSet, Mode, SymError};

#[test]
fn extreme_constants_fold_exactly_or_fail() {
    let mut fixture = Fixture::new("u0");
    let cases: &[(&str, Result<&str, SymError>)] = &[
        ("(-9223372036854775807 - 1) % -1", Ok("0")),
        ("9223372036854775807 * 2", Err(SymError::Overflow)),
        ("-(-9223372036854775807 - 1)", Err(SymError::Overflow)),
        (
            "u0 <= -9223372036854775807 - 1",
            Ok("u0 < -9223372036854775807"),
        ),
        ("u0 > 9223372036854775807", Ok("false")),
        ("u0 < 9223372036854775807", Ok("u0 <= 9223372036854775806")),
        (
            "u0 // (-9223372036854775807 - 1)",
            Ok("u0 // -9223372036854775808"),
        ),
        ("(-1)**1000000001", Ok("-1")),
        ("0**0", Ok("1")),
        ("2**63", Err(SymError::Overflow)),
        (
            "u0 <= -9223372036854775807 - 1 and u0 != -9223372036854775807 - 1",
            Ok("false"),
        ),
        (
            "u0 >= 9223372036854775807 and u0 != 9223372036854775807",
            Ok("false"),
        ),
    ];
    for (text, expected) in cases {
        let built = fixture.parse(text).map(|expr| fixture.env.display(expr));
        assert_eq!(built.as_deref().map_err(|e| *e), *expected, "{text}");
    }
}

#[test]
fn facts_at_the_ends_of_i64() {
    let mut fixture = Fixture::new("u0 u1");
    for text in [
        "u0 <= -9223372036854775807 - 1",
        "u0 != -9223372036854775807 - 1",
    ] {
        let cond = fixture.expr(text);
        fixture.env.check(cond, Span::default());
    }
    for text in ["u1 >= 9223372036854775807", "u1 != 9223372036854775807"] {
        let cond = fixture.expr(text);
        fixture.env.check(cond, Span::default());
    }
    let u0 = fixture.expr("u0");
    assert!(fixture.env.range(u0).is_empty());
}

#[test]
fn huge_exponents_stay_symbolic() {
    let mut fixture = Fixture::new("s0=3 s1=2");
    let power = fixture.expr("s0**4000000000");
    assert_eq!(fixture.env.display(power), "s0**4000000000");
    assert_eq!(fixture.env.range(power).lo, 0x7fff_ffff_ffff_ffff);
    let values = |_| Some(3);
    assert_eq!(
        fixture.env.eval_int(power, &values),
        Err(EvalError::Overflow)
    );
    let wide = fixture.expr("(s0 + s1 + 1)**1000");
    assert_eq!(fixture.env.display(wide), "(s0 + s1 + 1)**1000");
    assert_eq!(
        fixture.parse("s0**4000000000 * s0**4000000000"),
        Err(SymError::Overflow)
    );
}

#[test]
fn deep_expressions_do_not_overflow_the_stack() {
    let mut fixture = Fixture::new("s0=5 u0:0..");
    let mut expr = fixture.expr("u0");
    let one = fixture.env.int(1);
    let two = fixture.env.int(2);
    let seven = fixture.env.int(7);
    for _ in 0..20_000 {
        let sum = fixture.env.add(expr, one).expect("add");
        let divided = fixture.env.floor_div(sum, two).expect("floor_div");
        expr = fixture.env.max(divided, seven).expect("max");
    }
    let printed = fixture.env.display(expr);
    assert!(printed.ends_with('…') || printed.contains('…'));
    assert_eq!(fixture.env.eval_int(expr, &|_| Some(1000)), Ok(7));
    let cond = fixture.expr("u0 == s0 + 1");
    fixture.env.check(cond, Span::default());
    let resolved = fixture.env.resolve(expr);
    assert_eq!(fixture.env.eval_int(resolved, &|_| Some(5)), Ok(7));
    let question = fixture.env.ge(expr, seven).expect("ge");
    let decision = fixture
        .env
        .evaluate_bool(question, Mode::Normal, Span::default());
    assert_eq!(decision, Decision::Decided(true));
    let bigger = fixture.env.int(8);
    let question = fixture.env.ge(resolved, bigger).expect("ge");
    let decision = fixture
        .env
        .evaluate_bool(question, Mode::Normal, Span::default());
    assert_eq!(decision, Decision::Guarded(false));
    let guards = GuardSet::new(&fixture.env);
    assert_eq!(guards.evaluate(&[5]), Ok(()));
}

#[test]
fn shared_subexpressions_are_evaluated_once() {
    let mut fixture = Fixture::new("s0=5 s1=3");
    let mut expr = fixture.expr("s0");
    let s1 = fixture.expr("s1");
    for _ in 0..200 {
        let low = fixture.env.min(expr, s1).expect("min");
        let high = fixture.env.max(expr, s1).expect("max");
        expr = fixture.env.add(low, high).expect("add");
    }
    let values = |symbol: crate::sym::SymbolId| Some([5, 3][symbol.index()]);
    assert_eq!(fixture.env.eval_int(expr, &values), Ok(605));
    assert!(fixture.env.display(expr).len() < 100_000);
    let zero = fixture.env.int(0);
    let cond = fixture.env.gt(expr, zero).expect("gt");
    let decision = fixture
        .env
        .evaluate_bool(cond, Mode::Normal, Span::default());
    assert_eq!(decision, Decision::Decided(true));
}
