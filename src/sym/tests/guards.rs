//! Compiled guard sets agree with evaluation on a grid of sizes, and name the first failing
//! condition.

use super::support::Fixture;
use crate::source::Span;
use crate::sym::{Decision, GuardSet, Mode};

/// Conditions asked with hints `s0 = 12`, `s1 = 5` (both declared over all integers except
/// where noted), each recording one guard.
const QUESTIONS: &[&str] = &[
    "s0 // 4 >= 2",
    "s0 % 8 == 4",
    "(s0 - 7) // 2 < s1",
    "s1 % -3 == -1",
    "s0 * s1 <= 100",
    "min(s0, s1 + 3) == 8",
    "max(s0 // 3, s1) == 5",
    "s0 > s1 and s1 != 4",
    "s1 == 9 or s0 >= s1 + 7",
    "s1**3 >= 100",
];

fn recorded() -> Fixture {
    let mut fixture = Fixture::new("s0=12:.. s1=5:-50..50");
    for text in QUESTIONS {
        let cond = fixture.expr(text);
        let decision = fixture
            .env
            .evaluate_bool(cond, Mode::Normal, Span::default());
        assert_eq!(decision, Decision::Guarded(true), "{text}");
    }
    fixture
}

#[test]
fn guard_set_agrees_with_evaluation() {
    let fixture = recorded();
    let env = &fixture.env;
    let set = GuardSet::new(env);
    assert_eq!(set.len(), 12);
    for a in -40..40 {
        for b in -60..60 {
            let values = [a, b];
            let lookup = |s: crate::sym::SymbolId| values.get(s.index()).copied();
            let failing_guard = || {
                let mut guards = env.guards().iter();
                guards.position(|g| env.eval_bool(g.cond, &lookup) != Ok(true))
            };
            let expected = if b < -50 {
                Err(0)
            } else if b > 50 {
                Err(1)
            } else {
                failing_guard().map_or(Ok(()), |index| Err(index + 2))
            };
            assert_eq!(set.evaluate(&values), expected, "s0 = {a}, s1 = {b}");
        }
    }
}

#[test]
fn guard_set_describes_its_conditions() {
    let fixture = recorded();
    let set = GuardSet::new(&fixture.env);
    let labels: Vec<&str> = (0..set.len()).filter_map(|i| set.describe(i)).collect();
    assert_eq!(labels[..3], ["s1 >= -50", "s1 <= 50", "s0 // 4 > 1"]);
    assert_eq!(set.evaluate(&[12]), Err(0), "a missing value fails");
    assert_eq!(set.evaluate(&[12, 5]), Ok(()));
}
