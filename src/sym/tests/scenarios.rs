//! Scenario scripts for every fact-learning behaviour of spec §6.
//!
//! A scenario starts with `# name` and `symbols …` (see [`Fixture::new`]); each further line is
//! `command => expected`. Commands: `check e`, `check_size e [max e]`, `ask[:mode] e` (modes
//! `oblivious`, `known`, `or_false`, `or_true`), `int e`, `show e`, `range e`, `guards`,
//! `asserts`, `events`, `facts u0`, `suggest e`.

use super::support::Fixture;
use crate::source::Span;
use crate::sym::{CheckOutcome, Decision, Event, IntDecision, Mode, ShapeEnv, SymbolId};

const SCENARIOS: &str = r"
# replacement of an unbacked symbol by a backed expression
symbols s0=5 u0
check u0 == s0 + 1          => learned
show u0 + 1                 => s0 + 2
ask u0 > 3                  => guarded true
guards                      => s0 > 2
asserts                     => u0 == s0 + 1 [s0 u0]
events                      => create_unbacked u0 [-inf, inf]; runtime_assert u0 == s0 + 1; set_replacement u0 = s0 + 1; guard s0 > 2

# unification keeps the earlier symbol and merges ranges
symbols u0:0..10 u1:5..20
check u0 == u1              => learned
show u1 * 2                 => 2*u0
range u0                    => [5, 10]
ask u1 >= 5                 => true

# replacement only by backed or earlier unbacked symbols
symbols u0 u1 u2
check u1 == u0 + u2         => learned
show u2                     => -u0 + u1
show u1                     => u1
check 2*u2 == u0            => learned
show u2                     => -u0 + u1

# range refinement from comparisons with constants
symbols u0
check u0 >= 3               => learned
check u0 < 10               => learned
range u0                    => [3, 9]
ask u0 == 10                => false
ask u0 > 2                  => true
ask u0 > 5                  => data-dependent u0
check u0 > 8                => learned
show u0 + 1                 => 10

# a < b implies a <= b - 1 and a != b
symbols u0 u1
check u0 < u1               => learned
ask u0 <= u1 - 1            => true
ask u0 != u1                => true
ask u0 == u1                => false
ask u0 >= u1                => false
ask u0 + 1 < u1             => data-dependent u0 u1

# negations and remembered disjunctions
symbols u0 u1
check u0 != 1               => learned
ask u0 == 1                 => false
ask not (u0 == 1)           => true
check u0 == 2 or u1 == 2    => learned
ask u0 == 2 or u1 == 2      => true
ask u0 != 2 and u1 != 2     => false
ask u0 == 2 or u1 == 2 or u0 == 7 => true
check u0 != 2               => learned
ask u1 == 2                 => true

# a conjunction is learned as separate facts
symbols s0=5 u0
check u0 >= 0 and u0 <= s0  => learned
ask u0 >= 0                 => true
ask u0 <= s0                => true
ask u0 > s0                 => false
range u0                    => [0, inf]
facts u0                    => u0 <= s0

# linear chains: a <= b and b <= n decide a <= n
symbols s0=8 u0 u1 u2
check u0 <= u1              => learned
check u1 <= u2              => learned
check u2 <= s0              => learned
ask u0 <= s0                => true
ask u0 > s0                 => false
ask u0 <= s0 - 1            => data-dependent u0
check u1 < u2               => learned
ask u0 < s0                 => true

# a fact about a sum decides questions about that sum
symbols u0 u1 u2 u3
check u0 + u1 + u2 > 1      => learned
ask u0 + u1 + u2 == 0       => false
ask u0 + u1 + u2 >= 2       => true
range u0 + u1 + u2          => [2, inf]
range 2*u0 + 2*u1 + 2*u2 - 1 => [3, inf]
check_size u3               => learned
ask u0 + u1 + u2 + u3 >= 2  => true
ask 2*u0 + 2*u1 + 2*u2 > 3  => true

# size-oblivious reasoning without a maximum
symbols u0 u1
check_size u0               => learned
ask u0 == 0                 => data-dependent u0
ask:oblivious u0 == 0       => false
ask:oblivious u0 == 1       => false
ask:oblivious u0 >= 2       => true
ask:oblivious u1 == 0       => data-dependent u1
ask u0 >= 0                 => true

# size-oblivious reasoning below a maximum
symbols s0=6 u0 u1
check_size u0 max s0        => learned
ask u0 == s0                => data-dependent u0
ask:oblivious u0 == s0      => false
ask:oblivious u0 < s0       => true
check_size u1 max 10        => learned
ask:oblivious u1 == 10      => false
ask:oblivious u1 <= 9       => true
ask u1 <= 10                => true

# guard_or_false and guard_or_true fall back without error or guard
symbols s0=5 u0
ask:or_false u0 == 1        => default false
ask:or_true u0 == 1         => default true
guards                      =>
ask:or_false s0 == 5        => guarded true
guards                      => s0 == 5
events                      => create_unbacked u0 [-inf, inf]; fallback u0 == 1 -> false; fallback u0 == 1 -> true; guard s0 == 5; set_replacement s0 = 5

# known_true never guards
symbols s0=5
ask:known s0 > 2            => unknown
ask:known s0 >= 2           => true
guards                      =>

# guards are recorded once, then the fact decides
symbols s0=5 s1=3
ask s0 > 2                  => guarded true
ask s0 >= 3                 => true
ask s0 + s1 > 100           => guarded false
guards                      => s0 > 2; s0 + s1 <= 100
check s1 < 3                => guarded false
check s1 >= 3               => already-true
int s1 * 2                  => guarded 6
guards                      => s0 > 2; s0 + s1 <= 100; s1 > 2; s1 == 3
show s1 + s0                => s0 + 3

# integer questions
symbols s0=5 u0
int s0 + 1                  => guarded 6
show s0 * 2                 => 10
int u0 + 1                  => data-dependent u0
check u0 == 3               => learned
int u0 + 1                  => 4

# checks decided from facts
symbols u0:5..
check u0 >= 0               => already-true
check u0 < 0                => false
check_size u0               => already-true

# min and max are bounded by their arguments
symbols s0=8 u0 u1 u2
ask:known min(u0, s0) <= s0 => true
ask:known min(u0, s0) <= u0 => true
ask min(u0, s0) > s0        => false
ask:known max(u0, s0) >= u0 => true
ask max(u0, s0) < s0        => false
ask min(u0, s0) == s0       => data-dependent u0
ask min(u0, s0) < s0        => data-dependent u0
ask max(u0, s0) > s0        => data-dependent u0
guards                      =>

# min and max take part in linear chains
symbols s0=8 u0 u1 u2
check u1 <= min(u0, s0)     => learned
ask u1 <= s0                => true
ask u1 <= u0                => true
ask u1 < s0                 => data-dependent u1
check max(u0, u2) <= s0     => learned
ask u2 <= s0                => true
ask u1 <= u2                => data-dependent u1 u2

# a narrow clamped with min fits its input
symbols s0=8 u0
check_size u0               => learned
ask:known min(u0, s0) >= 0  => true
ask:known 0 + min(u0, s0) <= s0 => true
ask:known min(u0, s0) == u0 => unknown

# size-oblivious reasoning inside min, max and floor division
symbols s0=6 u0 u1 u2
check_size u0               => learned
check_size u2 max s0        => learned
ask max(u0, 1) == u0        => data-dependent u0
ask:oblivious max(u0, 1) == u0 => true
ask:oblivious min(u0, 1) == 1 => true
ask:oblivious u0 // u0 == 1 => true
ask:oblivious max(u0, 1) // u0 == 1 => true
ask:oblivious u0 % u0 == 0  => true
ask:oblivious u2 * max(u0, 1) == u2 * u0 => true
ask:oblivious max(u1, 1) == u1 => data-dependent u1
ask:oblivious max(u0, 3) == u0 => data-dependent u0
ask:oblivious min(u2, s0) == u2 => true
ask min(u2, s0) == u2       => true
show max(u0, 1)             => max(u0, 1)
guards                      =>

# a known remainder makes the quotient exact
symbols u0 u1
check u0 % 4 == 0           => learned
show (u0 // 4) * 4          => u0
ask (u0 // 4) * 4 == u0     => true
ask u0 % 4 == 0             => true
ask u0 == 8                 => data-dependent u0
ask u0 % 8 == 0             => data-dependent u0
show (u1 // 4) * 4          => 4*(u1 // 4)
check u1 % 3 == 2           => learned
show 3*(u1 // 3) + 2        => u1

# an equality teaches divisibility
symbols s0=6 u0 u1 u2
check u0 == 3*u1            => learned
ask u0 % 3 == 0             => true
show (u0 // 3) * 3          => u0
ask u0 % 6 == 0             => data-dependent u0
check u2 == 4*u0            => learned
show u2 % 4                 => 0
show (u2 // 4) * 4          => 4*u0
check s0 == 2*u1 + 1        => learned
ask s0 % 2 == 1             => true

# a bound on a quotient bounds the dividend
symbols u0 u1 u2
check u0 // 4 == 2          => learned
range u0                    => [8, 11]
ask u0 >= 8 and u0 <= 11    => true
ask u0 == 8                 => data-dependent u0
check (u1 + u2) // 3 <= 5   => learned
ask u1 + u2 <= 17           => true
ask u1 + u2 <= 16           => data-dependent u1 u2
check u1 // 2 > 0           => learned
range u1                    => [2, inf]

# explanations of undecidable questions
symbols u0 u1
ask 2*u0 == 3*u1            => data-dependent u0 u1
suggest 2*u0 == 3*u1        => check 2*u0 == 3*u1; check 2*u0 != 3*u1
suggest u0 >= 0             => check u0 >= 0; check u0 < 0; check_size u0
check u0 + u1 <= 7          => learned
facts u0                    => u0 + u1 <= 7
";

#[test]
fn scenarios() {
    let mut failures = Vec::new();
    for scenario in SCENARIOS
        .split("\n# ")
        .filter(|text| !text.trim().is_empty())
    {
        let mut lines = scenario.lines();
        let name = lines.next().unwrap_or_default().trim_start_matches("# ");
        let mut fixture: Option<Fixture> = None;
        for line in lines.map(str::trim).filter(|line| !line.is_empty()) {
            if let Some(symbols) = line.strip_prefix("symbols ") {
                fixture = Some(Fixture::new(symbols));
                continue;
            }
            let (command, expected) = line.split_once("=>").expect("command => expected");
            let fixture = fixture.as_mut().expect("symbols first");
            let actual = run(fixture, command.trim());
            if actual != expected.trim() {
                failures.push(format!("{name}: {command}=> {actual}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn run(fixture: &mut Fixture, command: &str) -> String {
    let (verb, argument) = command.split_once(' ').unwrap_or((command, ""));
    let span = Span::default();
    match verb {
        "check" => {
            let cond = fixture.expr(argument);
            outcome(&fixture.env.check(cond, span))
        }
        "check_size" => {
            let (size, max) = match argument.split_once(" max ") {
                Some((size, max)) => (fixture.expr(size), Some(fixture.expr(max))),
                None => (fixture.expr(argument), None),
            };
            let result = fixture.env.check_size(size, max, span).expect("check_size");
            outcome(&result)
        }
        "int" => {
            let expr = fixture.expr(argument);
            match fixture.env.evaluate_int(expr, span) {
                IntDecision::Decided(value) => value.to_string(),
                IntDecision::Guarded(value) => format!("guarded {value}"),
                IntDecision::DataDependent { unbacked } => data_dependent(&fixture.env, &unbacked),
                IntDecision::Error(error) => format!("error {error}"),
            }
        }
        "show" => {
            let expr = fixture.expr(argument);
            let resolved = fixture.env.resolve(expr);
            fixture.env.display(resolved)
        }
        "range" => {
            let expr = fixture.expr(argument);
            fixture.env.range(expr).to_string()
        }
        "guards" => join(
            fixture
                .env
                .guards()
                .iter()
                .map(|g| fixture.env.display(g.cond)),
        ),
        "asserts" => join(fixture.env.runtime_asserts().iter().map(|assert| {
            let names = join_with(assert.symbols.iter().map(|&s| name(&fixture.env, s)), " ");
            format!("{} [{names}]", fixture.env.display(assert.cond))
        })),
        "events" => {
            let events = fixture.env.take_events();
            join(events.iter().map(|event| render_event(&fixture.env, event)))
        }
        "facts" => {
            let expr = fixture.expr(argument);
            let report = fixture.env.explain(expr);
            join(report.symbols[0].facts.iter().cloned())
        }
        "suggest" => {
            let expr = fixture.expr(argument);
            join(fixture.env.explain(expr).suggestions.into_iter())
        }
        _ => ask(fixture, verb, argument),
    }
}

fn ask(fixture: &mut Fixture, verb: &str, argument: &str) -> String {
    let mode = match verb {
        "ask" => Mode::Normal,
        "ask:oblivious" => Mode::SizeOblivious,
        "ask:known" => Mode::KnownTrue,
        "ask:or_false" => Mode::GuardOrFalse,
        "ask:or_true" => Mode::GuardOrTrue,
        _ => panic!("unknown command {verb}"),
    };
    let cond = fixture.expr(argument);
    match fixture.env.evaluate_bool(cond, mode, Span::default()) {
        Decision::Decided(value) => value.to_string(),
        Decision::Guarded(value) => format!("guarded {value}"),
        Decision::DataDependent { unbacked } => data_dependent(&fixture.env, &unbacked),
        Decision::Unknown => "unknown".to_string(),
        Decision::Defaulted(value) => format!("default {value}"),
        Decision::Error(error) => format!("error {error}"),
    }
}

fn outcome(outcome: &CheckOutcome) -> String {
    match outcome {
        CheckOutcome::AlreadyTrue => "already-true".to_string(),
        CheckOutcome::False => "false".to_string(),
        CheckOutcome::Learned => "learned".to_string(),
        CheckOutcome::Guarded(value) => format!("guarded {value}"),
        CheckOutcome::Error(error) => format!("error {error}"),
    }
}

fn render_event(env: &ShapeEnv, event: &Event) -> String {
    match event {
        Event::CreateUnbacked { symbol, range, .. } => {
            format!("create_unbacked {} {range}", name(env, *symbol))
        }
        Event::SetReplacement { symbol, expr } => {
            format!(
                "set_replacement {} = {}",
                name(env, *symbol),
                env.display(*expr)
            )
        }
        Event::RuntimeAssert { cond, .. } => format!("runtime_assert {}", env.display(*cond)),
        Event::Guard { cond, .. } => format!("guard {}", env.display(*cond)),
        Event::Fallback { cond, value, .. } => {
            format!("fallback {} -> {value}", env.display(*cond))
        }
    }
}

fn data_dependent(env: &ShapeEnv, unbacked: &[SymbolId]) -> String {
    let names = join_with(unbacked.iter().map(|&s| name(env, s)), " ");
    format!("data-dependent {names}")
}

fn name(env: &ShapeEnv, symbol: SymbolId) -> String {
    env.symbol(symbol).name().to_string()
}

fn join(items: impl Iterator<Item = String>) -> String {
    join_with(items, "; ")
}

fn join_with(items: impl Iterator<Item = String>, separator: &str) -> String {
    items.collect::<Vec<_>>().join(separator)
}
