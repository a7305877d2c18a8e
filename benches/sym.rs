//! Benchmarks of the symbolic engine (see BENCHMARKS.md, section "Symbolic engine"):
//! (a) a synthetic trace of 1,000 and 10,000 operations, one unbacked symbol and one check per
//! ten operations (`SYM_TRACE_FLATNESS=1` also prints the best cost per operation from 1,000 to
//! 30,000 operations); (b) one million mixed queries, decided and undecided; (c) a compiled set of
//! ten guards evaluated against concrete sizes.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tsl::source::Span;
use tsl::sym::{ExprId, GuardSet, Mode, Origin, Range, ShapeEnv};

const BACKED: usize = 8;

fn backed_symbols(env: &mut ShapeEnv) -> Vec<ExprId> {
    (0..BACKED)
        .map(|index| {
            let hint = 16 + index as i64;
            env.backed_symbol(hint, format!("x{index}.size(0)"), Range::DYNAMIC_SIZE)
        })
        .collect()
}

fn item(env: &mut ShapeEnv, index: usize) -> ExprId {
    let span = Span::new(tsl::source::FileId(0), index, index + 6);
    let origin = Origin {
        operation: "item()".to_string(),
        span,
    };
    env.unbacked_symbol(origin, Range::ALL)
}

/// What a tracer does to the environment over `operations` operations: one unbacked symbol
/// and one check in every ten, the others building size expressions and asking questions.
fn synthetic_trace(operations: usize) -> ShapeEnv {
    let mut env = ShapeEnv::new();
    let sizes = backed_symbols(&mut env);
    let span = Span::default();
    let one = env.int(1);
    let two = env.int(2);
    let zero = env.int(0);
    let mut unbacked = vec![item(&mut env, 0)];
    let mut scratch = one;
    for step in 0..operations {
        let round = step / 10;
        let current = unbacked[unbacked.len() - 1];
        let previous = unbacked[unbacked.len().saturating_sub(2)];
        let size = sizes[round % BACKED];
        let other = sizes[(round + 3) % BACKED];
        match step % 10 {
            0 => unbacked.push(item(&mut env, step)),
            1 => learn(&mut env, round, current, previous, size),
            2 => scratch = env.mul(current, size).expect("mul"),
            3 => {
                let sum = env.add(scratch, other).expect("add");
                scratch = env.floor_div(sum, two).expect("floor_div");
            }
            4 => scratch = env.max(scratch, one).expect("max"),
            5 => {
                let cond = env.ge(current, zero).expect("ge");
                black_box(env.evaluate_bool(cond, Mode::Normal, span));
            }
            6 => {
                let cond = env.ne(current, one).expect("ne");
                black_box(env.evaluate_bool(cond, Mode::SizeOblivious, span));
            }
            7 => {
                let bound = env.int(2 + (round % 4) as i64);
                let cond = env.gt(size, bound).expect("gt");
                black_box(env.evaluate_bool(cond, Mode::Normal, span));
            }
            8 => {
                let cond = env.eq(scratch, zero).expect("eq");
                black_box(env.guard_or_false(cond, span));
            }
            _ => {
                let cond = env.le(previous, other).expect("le");
                black_box(env.evaluate_bool(cond, Mode::Normal, span));
            }
        }
    }
    env
}

/// The check of one round: sizes, bounds, sums, replacements and chains in turn.
fn learn(env: &mut ShapeEnv, round: usize, current: ExprId, previous: ExprId, size: ExprId) {
    let span = Span::default();
    let one = env.int(1);
    let cond = match round % 5 {
        0 => {
            black_box(
                env.check_size(current, Some(size), span)
                    .expect("check_size"),
            );
            return;
        }
        1 => env.le(current, size),
        2 => {
            let sum = env.add(current, previous).expect("add");
            env.ge(sum, one)
        }
        3 => {
            let shifted = env.add(size, one).expect("add");
            env.eq(current, shifted)
        }
        _ => env.le(previous, current),
    };
    black_box(env.check(cond.expect("condition"), span));
}

/// With `SYM_TRACE_FLATNESS` set, prints the best time per operation of traces of several
/// lengths run alternately: on a shared machine the minimum is what the code costs, while a
/// median also measures the neighbours.
fn report_flatness() {
    if std::env::var_os("SYM_TRACE_FLATNESS").is_none() {
        return;
    }
    let lengths = [1_000usize, 3_000, 10_000, 30_000];
    let mut best = [f64::MAX; 4];
    for _ in 0..20 {
        for (slot, operations) in lengths.into_iter().enumerate() {
            let start = Instant::now();
            black_box(synthetic_trace(operations));
            let per_operation = start.elapsed().as_secs_f64() * 1e9 / operations as f64;
            best[slot] = best[slot].min(per_operation);
        }
    }
    for (operations, nanoseconds) in lengths.iter().zip(best) {
        let ratio = nanoseconds / best[0];
        eprintln!(
            "trace of {operations} operations: {nanoseconds:.0} ns per operation ({ratio:.2}x)"
        );
    }
}

fn bench_trace(criterion: &mut Criterion) {
    report_flatness();
    let mut group = criterion.benchmark_group("sym/trace");
    group.sample_size(20);
    for operations in [1_000, 10_000] {
        group.throughput(Throughput::Elements(operations as u64));
        group.bench_function(format!("{operations} operations"), |bencher| {
            bencher.iter(|| synthetic_trace(black_box(operations)));
        });
    }
    group.finish();
}

/// An environment with chains, sums and sizes, and 1,000 questions about it: about half
/// decided by ranges or linear reasoning, the others data-dependent.
fn query_pool() -> (ShapeEnv, Vec<ExprId>) {
    let mut env = ShapeEnv::new();
    let sizes = backed_symbols(&mut env);
    let span = Span::default();
    let unbacked: Vec<ExprId> = (0..100).map(|index| item(&mut env, index)).collect();
    for (index, &symbol) in unbacked.iter().enumerate() {
        if index % 2 == 0 {
            env.check_size(symbol, Some(sizes[index % BACKED]), span)
                .expect("check_size");
        }
        if index > 0 {
            let cond = env.le(unbacked[index - 1], symbol).expect("le");
            env.check(cond, span);
        }
    }
    let mut pool = Vec::with_capacity(1_000);
    for index in 0..1_000 {
        let a = unbacked[index % 100];
        let b = unbacked[(index * 7 + 3) % 100];
        let size = sizes[index % BACKED];
        let cond = match index % 5 {
            0 => env.ge(a, b),
            1 => {
                let sum = env.add(a, size).expect("add");
                env.gt(sum, b)
            }
            2 => {
                let zero = env.int(0);
                env.ge(a, zero)
            }
            3 => {
                let twice = env.add(a, a).expect("add");
                env.eq(twice, b)
            }
            _ => {
                let two = env.int(2);
                env.gt(size, two)
            }
        };
        pool.push(cond.expect("condition"));
    }
    for &cond in &pool {
        env.evaluate_bool(cond, Mode::Normal, span);
    }
    (env, pool)
}

/// One million questions: `warm` keeps the facts fixed, so ranges and linear bounds stay
/// cached; `cold` learns a fact every 1,000 questions, so every question recomputes them.
fn bench_queries(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("sym/queries");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(1_000_000));
    for cold in [false, true] {
        let (mut env, pool) = query_pool();
        let name = if cold {
            "1000000 mixed queries, cold"
        } else {
            "1000000 mixed queries, warm"
        };
        group.bench_function(name, |bencher| {
            bencher.iter(|| ask_million(&mut env, &pool, cold));
        });
    }
    group.finish();
}

fn ask_million(env: &mut ShapeEnv, pool: &[ExprId], cold: bool) -> usize {
    let mut decided = 0usize;
    for round in 0..1_000 {
        if cold {
            let fresh = item(env, round);
            let zero = env.int(0);
            let cond = env.ge(fresh, zero).expect("ge");
            env.check(cond, Span::default());
        }
        for &cond in pool {
            let decision = env.evaluate_bool(cond, Mode::Normal, Span::default());
            decided += usize::from(decision.value().is_some());
        }
    }
    decided
}

/// Ten guards of the kinds a trace records, compiled.
fn guard_set() -> (GuardSet, Vec<i64>) {
    let mut env = ShapeEnv::new();
    let hints = [16i64, 24, 32, 48];
    let s: Vec<ExprId> = hints
        .iter()
        .enumerate()
        .map(|(index, &hint)| {
            env.backed_symbol(hint, format!("x.size({index})"), Range::DYNAMIC_SIZE)
        })
        .collect();
    let [zero, two, eight, seventeen, limit, area, big] =
        [0, 2, 8, 17, 1024, 4096, 1 << 20].map(|value| env.int(value));
    let sum = env.add(s[0], s[3]).expect("add");
    let product = env.mul(s[2], s[3]).expect("mul");
    let rest = env.modulo(s[3], eight).expect("modulo");
    let half = env.floor_div(s[3], two).expect("floor_div");
    let twice = env.mul(s[0], two).expect("mul");
    let conditions = [
        env.gt(s[0], two),
        env.le(s[1], limit),
        env.ne(s[2], seventeen),
        env.lt(s[0], s[1]),
        env.le(sum, area),
        env.le(product, big),
        env.eq(rest, zero),
        env.ge(half, s[1]),
        env.ne(s[1], s[2]),
        env.ge(s[2], twice),
    ];
    for cond in conditions {
        env.evaluate_bool(cond.expect("condition"), Mode::Normal, Span::default());
    }
    assert_eq!(env.guards().len(), 10);
    (GuardSet::new(&env), hints.to_vec())
}

fn bench_guards(criterion: &mut Criterion) {
    let (set, hints) = guard_set();
    assert_eq!(set.evaluate(&hints), Ok(()));
    criterion.bench_function("sym/guards/10 guards", |bencher| {
        bencher.iter(|| black_box(&set).evaluate(black_box(&hints)));
    });
}

criterion_group!(benches, bench_trace, bench_queries, bench_guards);
criterion_main!(benches);
