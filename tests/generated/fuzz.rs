//! The fuzz harness: mutants of the suite and the examples, and generated programs (some
//! mutated too), run every way TSL runs code. Nothing may panic, abort, run out of time or
//! report an internal error, and compiled and eager runs must agree on what they print and on
//! their first error: code, line and message, values included.
//!
//! `cargo test` runs a few thousand cases in the test process (mutants keep sizes small there)
//! and a few dozen through the `tsl` binary under a memory limit and a timeout (`run`,
//! `--eager`, `check`, `graph`, the piped REPL; mutants there may use sizes past the element
//! limit and the machine's memory). Long offline campaigns use the same harness, with a
//! release build and environment variables:
//!
//! ```sh
//! TSL_FUZZ_CASES=200000 TSL_FUZZ_CHILDREN=5000 TSL_FUZZ_SEED=7 TSL_FUZZ_OUT=/tmp/tsl-fuzz \
//!     cargo test --release --test generated fuzz -- --nocapture
//! ```
//!
//! `TSL_FUZZ_CASES` and `TSL_FUZZ_CHILDREN` set the number of cases of each kind,
//! `TSL_FUZZ_SEED` the campaign (cases are reproducible from seed and index),
//! `TSL_FUZZ_FIRST` the index of the first case (to run part of a campaign again),
//! `TSL_FUZZ_WORKERS` the threads, `TSL_FUZZ_TIME` the seconds one run may take,
//! `TSL_FUZZ_MEMORY_MB` the address-space limit of a child, and `TSL_FUZZ_OUT` a directory
//! that receives every failing case with its problems (and, while a worker runs a case, the
//! case as `running-KIND-WORKER.tsl`, so one that aborts the process is left behind). Every
//! failure a campaign finds becomes a suite case once fixed.

#[path = "fuzz/mutate.rs"]
mod mutate;
#[path = "fuzz/run.rs"]
mod run;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::common::{root, tsl_files};
use mutate::Scale;

/// The knobs of a campaign, from the environment (see the module doc).
#[derive(Clone, Debug)]
struct Settings {
    cases: usize,
    children: usize,
    seed: u64,
    first: usize,
    workers: usize,
    time: Duration,
    memory_kib: u64,
    out: Option<PathBuf>,
}

impl Settings {
    fn from_env() -> Settings {
        let number = |name: &str, default: u64| {
            std::env::var(name)
                .ok()
                .and_then(|value| value.parse().ok())
                .unwrap_or(default)
        };
        Settings {
            cases: number("TSL_FUZZ_CASES", 1500) as usize,
            children: number("TSL_FUZZ_CHILDREN", 40) as usize,
            seed: number("TSL_FUZZ_SEED", 0),
            first: number("TSL_FUZZ_FIRST", 0) as usize,
            workers: number("TSL_FUZZ_WORKERS", 2).max(1) as usize,
            time: Duration::from_secs(number("TSL_FUZZ_TIME", 20)),
            memory_kib: number("TSL_FUZZ_MEMORY_MB", 3072) * 1024,
            out: std::env::var_os("TSL_FUZZ_OUT").map(PathBuf::from),
        }
    }
}

/// A program of the corpus: where it lives (relative to the repository) and its text.
#[derive(Clone)]
struct Source {
    relative: PathBuf,
    text: String,
}

/// Files not mutated: most of their mutants are one edit away from a documented difference,
/// and a campaign found little else in them while they buried its other findings. The first
/// is arithmetic on a float read from data near the limits of `f32` (`t - 1e30`), which the
/// graph computes in `f32` and eager code in `f64` (docs/language.md, "When a trace fails"):
/// the comparison forgives a result past `f32`'s range (an infinity compiled), not the digits
/// a difference loses; the others, arithmetic on a size from data that overflows, which the graph
/// computes where the value is used, so a mutant that moves or drops the use moves or drops
/// the error, and a comparison the reasoner decides without computing it (`u ** 64 > -1`)
/// does not fail at all (docs/language.md, "Numbers").
const NOT_MUTATED: [&str; 4] = [
    "tests/suite/tracing/float_from_data_compared_exactly.tsl",
    "tests/suite/compiled/returned_size_overflows_when_run.tsl",
    "tests/suite/compiled/printed_data_size_overflows.tsl",
    "tests/suite/compiled/checked_data_size_overflows.tsl",
];

/// The suite (with the modules its files use) and the examples.
fn corpus() -> Vec<Source> {
    let mut files = tsl_files(&root().join("tests/suite"));
    files.extend(tsl_files(&root().join("examples")));
    files
        .into_iter()
        .filter(|path| !NOT_MUTATED.iter().any(|skipped| path.ends_with(skipped)))
        .map(|path| Source {
            relative: path.strip_prefix(root()).unwrap_or(&path).to_path_buf(),
            text: std::fs::read_to_string(&path).expect("corpus files are UTF-8"),
        })
        .collect()
}

/// A temporary copy of the suite and the examples, where cases are written next to the file
/// they came from (so `use "…"` and `load("…")` find what they name) and may save files.
fn workspace(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("tsl-fuzz-{name}-{}", std::process::id()));
    for part in ["tests/suite", "examples"] {
        copy_tree(&root().join(part), &directory.join(part));
    }
    directory
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("creating the fuzz workspace");
    for entry in std::fs::read_dir(from)
        .expect("reading the corpus")
        .flatten()
    {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copying the corpus");
        }
    }
}

/// One case: where it came from, and its text.
struct Case {
    origin: String,
    relative_dir: PathBuf,
    text: String,
}

/// Case `index` of the campaign `seed`: a mutant of a corpus file, or a generated program
/// (mutated half of the time).
fn case(corpus: &[Source], donors: &[String], seed: u64, index: usize, scale: Scale) -> Case {
    let mut rng =
        ChaCha8Rng::seed_from_u64(seed.wrapping_mul(1_000_003).wrapping_add(index as u64));
    if rng.random_bool(0.25) {
        let program_seed = rng.random::<u64>() % 1_000_000;
        let program = crate::Generator::new(program_seed).program();
        let mutated = rng.random_bool(0.5);
        let text = if mutated {
            mutate::mutate(&program, donors, scale, &mut rng)
        } else {
            program
        };
        let kind = if mutated { "mutated " } else { "" };
        return Case {
            origin: format!("{kind}generated program {program_seed}"),
            relative_dir: PathBuf::from("tests/suite"),
            text,
        };
    }
    let source = &corpus[rng.random_range(0..corpus.len())];
    let mut text = mutate::mutate(&source.text, donors, scale, &mut rng);
    // A mutant of a program whose compiled run differs by design may have lost the words
    // that say so; it differs all the same.
    if !run::comparable(&source.text) && run::comparable(&text) {
        text.push_str("\n# eager-differs: a mutant of a program that differs by design\n");
    }
    Case {
        origin: format!("mutant of {}", source.relative.display()),
        relative_dir: source
            .relative
            .parent()
            .map_or_else(PathBuf::new, Path::to_path_buf),
        text,
    }
}

/// Runs `count` cases on the settings' workers; `check` runs one case written at a path.
fn campaign(
    name: &str,
    count: usize,
    scale: Scale,
    check: impl Fn(&Path, &str) -> run::Problems + Sync,
) -> Vec<String> {
    let settings = Settings::from_env();
    let corpus = corpus();
    let donors: Vec<String> = corpus.iter().map(|source| source.text.clone()).collect();
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for worker in 0..settings.workers {
            let (corpus, donors, failures, settings, check) =
                (&corpus, &donors, &failures, &settings, &check);
            std::thread::Builder::new()
                .stack_size(tsl::eval::limits::STACK_BYTES)
                .spawn_scoped(scope, move || {
                    // Each worker has its own copy: cases save and load files.
                    let workspace = workspace(&format!("{name}-{worker}"));
                    let indices = settings.first + worker..settings.first + count;
                    for index in indices.step_by(settings.workers) {
                        if failures.lock().map_or(true, |found| found.len() >= 10) {
                            break;
                        }
                        let case = case(corpus, donors, settings.seed, index, scale);
                        let directory = workspace.join(&case.relative_dir);
                        let path = directory.join(format!("fuzz_{name}.tsl"));
                        std::fs::write(&path, &case.text).expect("writing a case");
                        // A case that aborts the process (memory exhausted) leaves its
                        // index and text behind.
                        if let Some(out) = &settings.out {
                            let running = out.join(format!("running-{name}-{worker}.tsl"));
                            let header = format!("# case {index} of seed {}\n", settings.seed);
                            let _ = std::fs::create_dir_all(out);
                            let _ = std::fs::write(running, header + &case.text);
                        }
                        let problems = check(&path, &case.text);
                        if !problems.is_empty() {
                            let report = report(settings, name, index, &case, &problems);
                            if let Ok(mut found) = failures.lock() {
                                found.push(report);
                            }
                        }
                    }
                    let _ = std::fs::remove_dir_all(&workspace);
                    if let Some(out) = &settings.out {
                        let _ =
                            std::fs::remove_file(out.join(format!("running-{name}-{worker}.tsl")));
                    }
                })
                .expect("starting a fuzz worker");
        }
    });
    failures.into_inner().unwrap_or_default()
}

/// A failure as the test prints it (and, with `TSL_FUZZ_OUT`, saves it).
fn report(
    settings: &Settings,
    name: &str,
    index: usize,
    case: &Case,
    problems: &[String],
) -> String {
    let text = format!(
        "{name} case {index} of seed {} ({}):\n{}\n--- problems:\n{}",
        settings.seed,
        case.origin,
        case.text,
        problems.join("\n")
    );
    if let Some(out) = &settings.out {
        let _ = std::fs::create_dir_all(out);
        let mut commented = String::new();
        for line in problems.join("\n").lines() {
            let _ = writeln!(commented, "# {line}");
        }
        let file = out.join(format!("{name}-{}-{index}.tsl", settings.seed));
        let _ = std::fs::write(file, format!("# {}\n{commented}{}", case.origin, case.text));
    }
    text
}

#[test]
fn fuzz_mutants_and_generated_programs_in_process() {
    let settings = Settings::from_env();
    let time = settings.time;
    let failures = campaign("inproc", settings.cases, Scale::Small, move |path, text| {
        run::in_process(path, text, time)
    });
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n\n"));
}

#[test]
fn fuzz_mutants_through_the_binary_under_limits() {
    let settings = Settings::from_env();
    let limits = run::Limits {
        time: settings.time,
        memory_kib: settings.memory_kib,
    };
    let failures = campaign(
        "child",
        settings.children,
        Scale::Huge,
        move |path, text| run::in_children(path, text, limits),
    );
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n\n"));
}
