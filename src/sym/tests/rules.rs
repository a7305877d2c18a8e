//! Every rewrite and range rule as a row `(rule, symbols, expr, lo, hi, "rendered")`; facts to
//! check first follow the symbols after `;` (`"u0; u0 % 4 == 0"`).

use super::support::Fixture;
use crate::source::Span;
use crate::sym::rules::{EXTREMUM_RULES, FLOOR_DIV_RULES, MODULO_RULES, TERM_RULES};
use crate::sym::{NEG_INF, POS_INF, SymError};

const INF: i64 = POS_INF;
const NINF: i64 = NEG_INF;

type Row = (
    &'static str,
    &'static str,
    &'static str,
    i64,
    i64,
    &'static str,
);

/// Canonical sums, products, powers.
#[rustfmt::skip]
const ARITHMETIC: &[Row] = &[
    ("c1 + c2 -> c", "", "2 + 3", 5, 5, "5"),
    ("x + 0 -> x", "u0", "u0 + 0", NINF, INF, "u0"),
    ("like terms combine", "u0", "2*u0 - u0", NINF, INF, "u0"),
    ("x - x -> 0", "u0", "u0 - u0", 0, 0, "0"),
    ("terms sorted, backed first", "s0=5 u0:0..", "u0 + s0", 2, INF, "s0 + u0"),
    ("constant last", "s0=5", "1 + s0", 3, INF, "s0 + 1"),
    ("subtraction", "s0=5", "s0 - 1", 1, INF, "s0 - 1"),
    ("negation", "u0:0..5", "-u0", -5, 0, "-u0"),
    ("leading negative term", "u0:0..5", "1 - u0", -4, 1, "-u0 + 1"),
    ("x*0 -> 0", "u0", "u0*0", 0, 0, "0"),
    ("x*1 -> x", "u0", "1*u0", NINF, INF, "u0"),
    ("x*x -> x**2", "s0=5", "s0*s0", 4, INF, "s0**2"),
    ("c*(a + b) distributes", "u0:0..1 u1:0..2", "2*(u0 + u1)", 0, 6, "2*u0 + 2*u1"),
    ("(a + b)*(a - b) expands", "s0=5 s1=3", "(s0 + s1)*(s0 - s1)", NINF, INF, "s0**2 - s1**2"),
    ("products merge", "s0=5 u0:1..3", "s0*u0*s0", 4, INF, "s0**2*u0"),
    ("x**0 -> 1", "u0", "u0**0", 1, 1, "1"),
    ("x**1 -> x", "u0", "u0**1", NINF, INF, "u0"),
    ("c**k folds", "", "2**10", 1024, 1024, "1024"),
    ("(c*x)**k -> c**k * x**k", "u0:1..2", "(2*u0)**2", 4, 16, "4*u0**2"),
    ("(x + 1)**2 expands", "s0=5", "(s0 + 1)**2", 9, INF, "s0**2 + 2*s0 + 1"),
    ("wide powers stay factored", "s0=5 s1=5 s2=5", "(s0 + s1 + s2 + 1)**3", 343, INF, "(s0 + s1 + s2 + 1)**3"),
];

/// The tables of rules.rs, one or more rows per rule.
#[rustfmt::skip]
const ATOMS: &[Row] = &[
    ("c1 // c2 -> c", "", "-7 // 2", -4, -4, "-4"),
    ("c1 // c2 -> c", "", "7 // -2", -4, -4, "-4"),
    ("x // 1 -> x", "u0", "u0 // 1", NINF, INF, "u0"),
    ("x // -c -> (-x) // c", "u0:0..9", "u0 // -2", -5, 0, "-u0 // 2"),
    ("(g*x) // (g*c) -> x // c", "u0:0..9", "(4*u0 + 2) // 8", 0, 4, "(2*u0 + 1) // 4"),
    ("(g*x) // (g*c) -> x // c", "u0", "(4*u0) // 4", NINF, INF, "u0"),
    ("(c*y + r) // c -> y + r // c", "u0 u1:0..2", "(3*u0 + u1) // 3", NINF, INF, "u0"),
    ("(c*y + r) // c -> y + r // c", "u0 u1:0..5", "(3*u0 + u1 + 7) // 3", NINF, INF, "u0 + (u1 + 1) // 3 + 2"),
    ("x // c -> q when q*c <= x < (q+1)*c", "u0:0..9", "u0 // 10", 0, 0, "0"),
    ("x // c -> q when q*c <= x < (q+1)*c", "u0:10..19", "u0 // 10", 1, 1, "1"),
    ("(x // a) // b -> x // (a*b)", "u0:0..100", "u0 // 2 // 3", 0, 16, "u0 // 6"),
    ("(k*y) // y -> k when y != 0", "s0=5", "(3*s0) // s0", 3, 3, "3"),
    ("c1 % c2 -> c", "", "-7 % 3", 2, 2, "2"),
    ("c1 % c2 -> c", "", "7 % -3", -2, -2, "-2"),
    ("x % 1 -> 0 and x % -1 -> 0", "u0", "u0 % 1", 0, 0, "0"),
    ("x % 1 -> 0 and x % -1 -> 0", "u0", "u0 % -1", 0, 0, "0"),
    ("x % -c -> -((-x) % c)", "u0", "u0 % -3", -2, 0, "-(-u0 % 3)"),
    ("(g*x) % (g*c) -> g*(x % c)", "u0", "(2*u0) % 4", 0, 2, "2*(u0 % 2)"),
    ("(c*y + r) % c -> r' % c with coefficients reduced mod c", "u0 u1", "(3*u0 + u1 + 4) % 3", 0, 2, "(u1 + 1) % 3"),
    ("(c*y + r) % c -> r' % c with coefficients reduced mod c", "u0", "(5*u0) % 3", 0, 2, "-u0 % 3"),
    ("x % c -> x - q*c when q*c <= x < (q+1)*c", "u0:0..9", "u0 % 10", 0, 9, "u0"),
    ("x % c -> x - q*c when q*c <= x < (q+1)*c", "u0:10..19", "u0 % 10", 0, 9, "u0 - 10"),
    ("(x % a) % b -> x % b when b divides a", "u0", "u0 % 6 % 3", 0, 2, "u0 % 3"),
    ("(k*y) % y -> 0 when y != 0", "s0=5", "(3*s0) % s0", 0, 0, "0"),
    ("min(min(x, y), z) -> min(x, y, z)", "u0 u1 u2", "min(min(u0, u1), u2)", NINF, INF, "min(u0, min(u1, u2))"),
    ("min(c1, c2) -> c", "", "min(3, 5)", 3, 3, "3"),
    ("min(c1, c2) -> c", "", "max(3, 5)", 5, 5, "5"),
    ("min(x, x) -> x", "u0", "max(u0, u0)", NINF, INF, "u0"),
    ("min(x, y) -> x when x <= y is known (max(x, c) -> x when x >= c)", "u0:2..", "max(u0, 1)", 2, INF, "u0"),
    ("min(x, y) -> x when x <= y is known (max(x, c) -> x when x >= c)", "u0", "min(u0, u0 + 1)", NINF, INF, "u0"),
    ("min(x, y) -> x when x <= y is known (max(x, c) -> x when x >= c)", "u0", "max(u0, 1)", 1, INF, "max(u0, 1)"),
    ("min(x, y) -> x when x <= y is known (max(x, c) -> x when x >= c)", "s0=5 u0; u0 <= s0", "min(u0, s0)", NINF, INF, "u0"),
    ("min(x, y) -> x when x <= y is known (max(x, c) -> x when x >= c)", "s0=5 u0 u1; u0 <= u1; u1 <= s0", "max(s0, u0)", 2, INF, "s0"),
    ("c*(x // k) -> (c/k)*(x - r) when x % k == r is known", "u0; u0 % 4 == 0", "(u0 // 4) * 4", NINF, INF, "u0"),
    ("c*(x // k) -> (c/k)*(x - r) when x % k == r is known", "u0:0..; u0 % 3 == 0", "6*(u0 // 3) + 1", 1, INF, "2*u0 + 1"),
    ("c*(x // k) -> (c/k)*(x - r) when x % k == r is known", "u0; u0 % 4 == 1", "8*(u0 // 4) + 1", NINF, INF, "2*u0 - 1"),
    ("c*(x // k) -> (c/k)*(x - r) when x % k == r is known", "u0 u1; u0 + u1 == 4*u1 + 2", "3*(u0 // 3)", NINF, INF, "u0 - 2"),
    ("c*(x // k) -> (c/k)*(x - r) when x % k == r is known", "u0", "(u0 // 4) * 4", NINF, INF, "4*(u0 // 4)"),
    ("c*(x // k) -> (c/k)*(x - r) when x % k == r is known", "u0; u0 % 4 == 0", "(u0 // 4) * 2", NINF, INF, "2*(u0 // 4)"),
];

/// Comparisons and connectives.
#[rustfmt::skip]
const LOGIC: &[Row] = &[
    ("a < b -> b - a >= 1", "u0 u1", "u0 < u1", 0, 1, "u0 < u1"),
    ("gcd divided out", "u0 u1", "2*u0 < 2*u1", 0, 1, "u0 < u1"),
    ("gcd divided out, bound rounded", "u0", "2*u0 <= 5", 0, 1, "u0 <= 2"),
    ("positive terms left", "u0 u1", "u0*2 == u1*3", 0, 1, "2*u0 == 3*u1"),
    ("equality with a constant right", "s0=5 u0", "u0 == s0 + 1", 0, 1, "u0 == s0 + 1"),
    ("indivisible equality folds", "u0", "2*u0 == 1", 0, 0, "false"),
    ("comparison folds by range", "s0=5", "s0 >= 2", 1, 1, "true"),
    ("comparison folds by range", "u0:0..3", "u0 > 3", 0, 0, "false"),
    ("smaller constant picks strictness", "s0=5", "s0 >= 3", 0, 1, "s0 > 2"),
    ("smaller constant picks strictness", "u0", "u0 >= 0", 0, 1, "u0 >= 0"),
    ("sum compared with a constant", "u0 u1 u2", "u0 + u1 + u2 > 1", 0, 1, "u0 + u1 + u2 > 1"),
    ("terms on both sides read as <=", "s0=5 u0", "s0 >= u0", 0, 1, "u0 <= s0"),
    ("terms on both sides read as <=", "s0=5 u0 u1", "s0 - u0 - u1 >= 3", 0, 1, "u0 + u1 < s0 - 2"),
    ("not pushed into ==", "u0", "not (u0 == 1)", 0, 1, "u0 != 1"),
    ("not pushed into <=", "u0", "not (u0 <= 3)", 0, 1, "u0 > 3"),
    ("not pushed through and", "u0 u1", "not (u0 == 1 and u1 == 2)", 0, 1, "u0 != 1 or u1 != 2"),
    ("and merges bounds on a form", "u0", "u0 >= 0 and u0 >= 2", 0, 1, "u0 > 1"),
    ("and of opposite bounds -> ==", "u0", "u0 >= 3 and u0 <= 3", 0, 1, "u0 == 3"),
    ("and of disjoint bounds -> false", "u0", "u0 > 3 and u0 < 2", 0, 0, "false"),
    ("or covering everything -> true", "u0", "u0 >= 3 or u0 < 5", 1, 1, "true"),
    ("or of two sides -> !=", "u0", "u0 > 3 or u0 < 3", 0, 1, "u0 != 3"),
    ("x and not x -> false", "u0 u1", "u0 == u1 and not (u0 == u1)", 0, 0, "false"),
    ("and keeps other forms", "s0=5 u0", "u0 >= 0 and u0 <= s0", 0, 1, "u0 <= s0 and u0 >= 0"),
    ("integer truth is != 0", "u0", "not u0", 0, 1, "u0 == 0"),
    ("booleans compare by equivalence", "u0", "(u0 > 0) == (u0 > 0)", 1, 1, "true"),
];

/// Interval arithmetic of every operation.
#[rustfmt::skip]
const RANGES: &[Row] = &[
    ("range: a + b", "u0:0..3 u1:1..2", "u0 + u1", 1, 5, "u0 + u1"),
    ("range: c * a", "u0:-1..3", "-2*u0", -6, 2, "-2*u0"),
    ("range: a * b", "u0:-1..3 u1:2..4", "u0*u1", -4, 12, "u0*u1"),
    ("range: a * inf", "u0:0.. u1:1..2", "u0*u1", 0, INF, "u0*u1"),
    ("range: even power", "u0:-3..2", "u0**2", 0, 9, "u0**2"),
    ("range: odd power", "u0:-3..2", "u0**3", -27, 8, "u0**3"),
    ("range: a // c", "u0:-5..9", "u0 // 2", -3, 4, "u0 // 2"),
    ("range: a // b with b > 0", "u0:0..12 u1:2..3", "u0 // u1", 0, 6, "u0 // u1"),
    ("range: a // b with b spanning 0", "u0:0..12 u1:-1..3", "u0 // u1", NINF, INF, "u0 // u1"),
    ("range: a // b with b < 0", "u0:0..12 u1:-3..-2", "u0 // u1", -6, 0, "u0 // u1"),
    ("range: a % c", "u0", "u0 % 5", 0, 4, "u0 % 5"),
    ("range: a % c with small a", "u0:0..30 u1:1..100", "u0 % u1", 0, 30, "u0 % u1"),
    ("range: a % b with b < 0", "u0:-10..0 u1:-3..-2", "u0 % u1", -2, 0, "u0 % u1"),
    ("range: a % b with b spanning 0", "u0 u1:-3..4", "u0 % u1", -2, 3, "u0 % u1"),
    ("range: negation", "u0:-1..3", "-u0", -3, 1, "-u0"),
    ("range: min", "u0:0..10 u1:3..5", "min(u0, u1)", 0, 5, "min(u0, u1)"),
    ("range: max", "u0:0..10 u1:3..5", "max(u0, u1)", 3, 10, "max(u0, u1)"),
    ("range: min below one argument", "u0:0..10 u1:3..", "min(u0, u1)", 0, 10, "min(u0, u1)"),
    ("range: min of an unbounded argument", "s0=5 u0", "min(u0, s0)", NINF, INF, "min(s0, u0)"),
    ("range: max above one argument", "u0:..10 u1:3..5", "max(u0, u1)", 3, 10, "max(u0, u1)"),
    ("range: max of a size and 1", "u0:0..", "max(u0, 1)", 1, INF, "max(u0, 1)"),
    ("range: min of a sum", "u0:0..4 u1:1..2", "min(u0 + u1, 3)", 1, 3, "min(u0 + u1, 3)"),
    ("range: a // c after a % c == 0", "u0:0..9; u0 % 4 == 0", "u0 // 4", 0, 2, "u0 // 4"),
    ("range: a after a // c == q", "u0; u0 // 4 == 2", "u0", 8, 11, "u0"),
    ("range: a after a // c <= q", "u0:0..; u0 // 4 <= 2", "u0", 0, 11, "u0"),
    ("range: a after a // c > q", "u0; u0 // 4 > -2", "u0", -4, INF, "u0"),
    ("range: overflow widens to infinity", "u0:0..", "u0 + 9_223_372_036_854_775_000", 9_223_372_036_854_775_000, INF, "u0 + 9223372036854775000"),
    ("range: comparison undecided", "u0:0..10", "u0 < 5", 0, 1, "u0 <= 4"),
];

fn check_rows(rows: &[Row]) {
    for &(rule, declarations, text, lo, hi, rendered) in rows {
        let mut parts = declarations.split(';');
        let mut fixture = Fixture::new(parts.next().unwrap_or_default());
        for fact in parts {
            let fact = fixture.expr(fact);
            fixture.env.check(fact, Span::default());
        }
        let expr = fixture.expr(text);
        let env = &mut fixture.env;
        assert_eq!(env.display(expr), rendered, "{rule}: {text}");
        let range = env.range(expr);
        assert_eq!((range.lo, range.hi), (lo, hi), "{rule}: range of {text}");
    }
}

#[test]
fn arithmetic_rules() {
    check_rows(ARITHMETIC);
}

#[test]
fn atom_rules() {
    check_rows(ATOMS);
}

#[test]
fn logic_rules() {
    check_rows(LOGIC);
}

#[test]
fn range_rules() {
    check_rows(RANGES);
}

#[test]
fn every_table_rule_has_a_row() {
    let names = FLOOR_DIV_RULES
        .iter()
        .map(|rule| rule.0)
        .chain(MODULO_RULES.iter().map(|rule| rule.0))
        .chain(EXTREMUM_RULES.iter().map(|rule| rule.0))
        .chain(TERM_RULES.iter().map(|rule| rule.0));
    for name in names {
        assert!(
            ATOMS.iter().any(|row| row.0 == name),
            "no row for rule {name}"
        );
    }
}

/// Construction errors: `(symbols, expr, error)`.
#[rustfmt::skip]
const ERRORS: &[(&str, &str, SymError)] = &[
    ("u0", "u0 // 0", SymError::DivisionByZero),
    ("u0", "u0 % (u0 - u0)", SymError::DivisionByZero),
    ("", "9223372036854775807 + 1", SymError::Overflow),
    ("", "2**64", SymError::Overflow),
    ("", "(-9223372036854775807 - 1) // -1", SymError::Overflow),
    ("u0", "u0**u0", SymError::BadExponent),
    ("u0", "u0**(0 - 1)", SymError::BadExponent),
    ("u0", "(u0 > 1) + 1", SymError::NotInteger),
    ("u0", "(u0 > 1) < 1", SymError::NotInteger),
];

#[test]
fn construction_errors() {
    for &(symbols, text, error) in ERRORS {
        let mut fixture = Fixture::new(symbols);
        assert_eq!(fixture.parse(text), Err(error), "{text}");
    }
}

#[test]
fn printing_round_trips_through_the_parser() {
    let mut fixture = Fixture::new("s0=5 s1=3 u0 u1 u2");
    for text in [
        "-(u0 // 2) + 1",
        "2*(u0 % 3) - u1",
        "(s0 + 1)**2*u0",
        "u0 // (2*s0)",
        "min(u0, max(u1, 3)) // 2",
        "u0 - u1 // 3 > s0",
        "(u0 == 1 or u1 < 2) and u2 != 0",
        "u0*(u1 + u2 + s0 + s1 + 1)",
    ] {
        let expr = fixture.expr(text);
        let printed = fixture.env.display(expr);
        let reparsed = fixture.expr(&printed);
        assert_eq!(expr, reparsed, "{text} printed as {printed}");
    }
}
