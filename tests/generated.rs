//! Random well-typed programs, run eagerly and compiled: 2,000 per run, zero mismatches.
//!
//! Each program is a `@compile` function over `a: f32[n], b: f32[n], c: f32[n, m]` and a count
//! `k: i64[1]`, built from elementwise ops, comparisons and `where`, reductions and scans,
//! shape ops, matmul, boolean masks, `masked_select`, `nonzero`, `unique`,
//! `repeat_interleave`, `index_select` with indices from data, masks and takes at the
//! positions they keep followed by elementwise work and reductions (one fused kernel when
//! compiled), `narrow`, `split`, slices and indexing at positions read from data, `cond` on
//! data (branches that may disagree on sizes), `sort`/`argsort`/`topk` (with `k` read from
//! data), `masked_fill`, `isnan`/`isinf`, `var`/`std`, reductions over several dims,
//! `*_like`, `clone` and `~`, float `/ // % **` with zero divisors and negative bases, `exp`,
//! `log` and `sqrt` that make infinities and NaN, casts (saturating, NaN to zero), `i64`
//! arithmetic that floors, wraps and fails on a zero divisor or a negative power, `permute`,
//! `transpose`, `flatten`, `expand` and `stack`, reductions, scans, slices and `gather` along
//! dim 1, `prod`/`argmax`/`argmin`, `minimum`/`maximum` and comparisons of two values, prints,
//! and `check`s on sizes, scalars and data. It is called three times with inputs of random sizes
//! and values, so cached graphs are reused with other data, sizes change (automatic dynamic)
//! and checks fail on some calls. Compiled and eager runs must print the same lines and stop
//! at the same error with the same message; the compiled run must print exactly what a run
//! without fusion prints. Every other program's compiled run compiles each fused kernel it can
//! to machine code, whatever its size. A program the comparison rejects is printed with its
//! seed; it becomes a suite case once fixed.
//!
//! The first `GPU_PROGRAMS` of them (`TSL_GPU_PROGRAMS` to change) also run eagerly and
//! compiled on the GPU, against the eager CPU run. `TSL_PROGRAMS` programs from seed
//! `TSL_PROGRAMS_FIRST` make a longer campaign, which prints how the compiled runs ended (the
//! GPU's runs start from that seed too).
//!
//! `LARGE_PROGRAMS` more (`LARGE_GPU_PROGRAMS` of them on the GPU) are called with inputs of
//! up to 2,049 x 129 halves, at sizes around the GPU's workgroups and past a CPU block, and
//! print their results in full; `TSL_PROGRAMS_LARGE` runs a campaign's programs that way. On
//! the GPU their floats need only agree within `LARGE_GPU_TOLERANCE`, and a campaign still
//! meets results that depend on the order of operations or on rounding: an `argmin` among
//! values equal but for rounding, a product that is `inf` or `0.0` in one order and `nan`
//! (`inf * 0`) in another (docs/language.md, the GPU's tolerances), and a mask such as
//! `t[t > 0.0]` over a softmax whose `exp` underflows to a subnormal on the CPU and to `0.0`
//! on a device that flushes subnormals, which keeps one more element on the CPU.

#[path = "generated/arithmetic.rs"]
mod arithmetic;
mod common;
#[path = "generated/day_one.rs"]
mod day_one;
#[path = "generated/fuzz.rs"]
mod fuzz;
#[path = "generated/layout.rs"]
mod layout;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use common::{
    Tolerance, differences, differences_within, exact_differences, gpu_available, on_big_stack,
    run_source,
};
use rand::seq::IndexedRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tsl::backend::DeviceKind;
use tsl::backend::Native;
use tsl::eval::Options;

const PROGRAMS: u64 = 2000;

/// How many programs run at large sizes by default (`TSL_PROGRAMS_LARGE` asks every program
/// of a campaign to).
const LARGE_PROGRAMS: u64 = 100;

/// How many of those also run on the GPU by default.
const LARGE_GPU_PROGRAMS: u64 = 10;

/// How far the GPU's floats may be from the CPU's at large sizes: its reductions add
/// thousands of elements in another order, which moves a total whose terms cancel by many
/// units in its last place (an element computed wrongly is off by a half or more).
const LARGE_GPU_TOLERANCE: Tolerance = Tolerance {
    relative: 1e-3,
    absolute: 1e-4,
};

/// The sizes of `n` and `m` at large sizes: empty, around the GPU's workgroups of 64 and
/// 256, and past one CPU block (`c @ c.T` has 4.2 million elements at most, so an `i64`
/// result fits the 128 MiB buffers of the software GPU).
const LARGE_ROWS: [usize; 8] = [0, 63, 64, 65, 255, 257, 1000, 2049];
const LARGE_COLUMNS: [usize; 5] = [1, 3, 17, 64, 129];

/// Prints a result in full (the printer elides all but the edges of a tensor of more than
/// 1,000 elements), or its shape and every 1,009th element when it is too large to print (a
/// sum would differ by its order of additions).
const SHOW: &str = "fn show(t) {
    if t.numel() > 200000 {
        print(t.shape, t.flatten()[::1009].tolist())
    } else {
        print(t.tolist())
    }
}
";

/// How many of the generated programs also run on the GPU by default: every distinct kernel
/// costs a shader compile, which keeps the software driver CI uses at a few per second.
const GPU_PROGRAMS: u64 = 150;

/// Functions the programs pass to `cond`.
const BRANCHES: &str = "fn double(t) { return t * 2.0 }
fn negate(t) { return -t }
fn keep_positive(t) { return t[t > 0.0] }
fn first_two(t) { return t[:2] }
";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DType {
    F32,
    I64,
    Bool,
}

/// A size as the generator tracks it: equal sizes may be combined elementwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Size {
    N,
    M,
    One,
    /// A size no other value is known to share (data-dependent, or computed).
    Own(u32),
}

#[derive(Clone, Debug)]
struct Var {
    name: String,
    dtype: DType,
    shape: Vec<Size>,
}

struct Generator {
    rng: ChaCha8Rng,
    lines: Vec<String>,
    vars: Vec<Var>,
    ints: Vec<String>,
    next_size: u32,
    /// `k.item()` is bound to `u` (at most `a.size(0)`) once asked for.
    count: bool,
    /// Whether the program is called with inputs of large sizes.
    large: bool,
}

impl Generator {
    fn new(seed: u64) -> Generator {
        let inputs = [
            ("a", DType::F32, vec![Size::N]),
            ("b", DType::F32, vec![Size::N]),
            ("c", DType::F32, vec![Size::N, Size::M]),
        ];
        Generator {
            rng: ChaCha8Rng::seed_from_u64(seed),
            lines: Vec::new(),
            vars: inputs
                .into_iter()
                .map(|(name, dtype, shape)| Var {
                    name: name.to_string(),
                    dtype,
                    shape,
                })
                .collect(),
            ints: Vec::new(),
            next_size: 0,
            count: false,
            large: false,
        }
    }

    /// The generator of the program of `seed`, called with inputs of large sizes if `large`.
    fn at(seed: u64, large: bool) -> Generator {
        Generator {
            large,
            ..Generator::new(seed)
        }
    }

    fn own_size(&mut self) -> Size {
        self.next_size += 1;
        Size::Own(self.next_size)
    }

    fn constant(&mut self) -> String {
        let halves: i32 = self.rng.random_range(-4..=4);
        format!("{:.1}", f64::from(halves) / 2.0)
    }

    fn pick(&mut self, wanted: impl Fn(&Var) -> bool) -> Option<Var> {
        let candidates: Vec<&Var> = self.vars.iter().filter(|var| wanted(var)).collect();
        candidates.choose(&mut self.rng).map(|var| (*var).clone())
    }

    fn bind(&mut self, expr: String, dtype: DType, shape: Vec<Size>) {
        let name = format!("t{}", self.vars.len());
        self.lines.push(format!("    let {name} = {expr}"));
        self.vars.push(Var { name, dtype, shape });
    }

    /// The count `u`, read from data, with the fact that makes it usable as a length of `a`.
    fn count(&mut self) -> String {
        if !self.count {
            self.count = true;
            self.lines.push("    let u = k.item()".to_string());
            self.lines
                .push("    check_size u, max = a.size(0)".to_string());
            self.ints.push("u".to_string());
        }
        "u".to_string()
    }

    /// Adds one statement; false when the chosen kind had nothing to work on.
    fn step(&mut self) -> bool {
        let float = |var: &Var| var.dtype == DType::F32;
        match self.rng.random_range(0..40) {
            0 | 1 => {
                let Some(x) = self.pick(float) else {
                    return false;
                };
                let same = |var: &Var| var.dtype == DType::F32 && var.shape == x.shape;
                let y = self.pick(same).expect("x itself fits");
                let op = ["+", "-", "*"]
                    .choose(&mut self.rng)
                    .copied()
                    .unwrap_or("+");
                let expr = if self.rng.random_bool(0.3) {
                    let c = self.constant();
                    format!("{} {op} {c}", x.name)
                } else {
                    format!("{} {op} {}", x.name, y.name)
                };
                self.bind(expr, DType::F32, x.shape);
            }
            2 => {
                let Some(x) = self.pick(float) else {
                    return false;
                };
                let forms = [
                    "relu({})",
                    "{}.abs()",
                    "-{}",
                    "tanh({})",
                    "maximum({}, 0.5)",
                    "{}.clamp(-1.0, 1.0)",
                ];
                let form = forms.choose(&mut self.rng).copied().unwrap_or("-{}");
                self.bind(form.replace("{}", &x.name), DType::F32, x.shape);
            }
            3 | 4 => {
                let Some(x) = self.pick(float) else {
                    return false;
                };
                let c = self.constant();
                let op = [">", "<", ">=", "!="]
                    .choose(&mut self.rng)
                    .copied()
                    .unwrap_or(">");
                self.bind(format!("{} {op} {c}", x.name), DType::Bool, x.shape);
            }
            5 => {
                let Some(p) = self.pick(|var| var.dtype == DType::Bool) else {
                    return false;
                };
                let same = |var: &Var| var.dtype == DType::F32 && var.shape == p.shape;
                let Some(x) = self.pick(same) else {
                    return false;
                };
                let other = match self.pick(same) {
                    Some(y) if self.rng.random_bool(0.5) => y.name,
                    _ => self.constant(),
                };
                self.bind(
                    format!("where({}, {}, {other})", p.name, x.name),
                    DType::F32,
                    x.shape,
                );
            }
            6 => {
                let Some(p) = self.pick(|var| var.dtype == DType::Bool) else {
                    return false;
                };
                let same = |var: &Var| var.dtype == DType::Bool && var.shape == p.shape;
                let q = self.pick(same).expect("p itself fits");
                let op = ["&", "|"].choose(&mut self.rng).copied().unwrap_or("&");
                self.bind(format!("{} {op} {}", p.name, q.name), DType::Bool, p.shape);
            }
            7 | 8 => {
                let Some(x) = self.pick(|var| var.dtype != DType::Bool && !var.shape.is_empty())
                else {
                    return false;
                };
                let reductions = ["sum", "mean", "max", "min"];
                let op = reductions.choose(&mut self.rng).copied().unwrap_or("sum");
                let op = if x.dtype == DType::I64 && op == "mean" {
                    "sum"
                } else {
                    op
                };
                if self.rng.random_bool(0.5) {
                    self.bind(format!("{}.{op}()", x.name), x.dtype, Vec::new());
                } else {
                    let keep = self.rng.random_bool(0.3);
                    let mut shape = x.shape.clone();
                    if keep {
                        shape[0] = Size::One;
                    } else {
                        shape.remove(0);
                    }
                    self.bind(
                        format!("{}.{op}(dim = 0, keepdim = {keep})", x.name),
                        x.dtype,
                        shape,
                    );
                }
            }
            9 => {
                let Some(p) = self.pick(|var| var.dtype == DType::Bool) else {
                    return false;
                };
                let reduction = ["any", "all"]
                    .choose(&mut self.rng)
                    .copied()
                    .unwrap_or("any");
                if self.rng.random_bool(0.5) {
                    self.bind(format!("{}.{reduction}()", p.name), DType::Bool, Vec::new());
                } else {
                    self.bind(format!("{}.sum()", p.name), DType::I64, Vec::new());
                }
            }
            10 => {
                let op = ["cumsum(0)", "diff(0)"]
                    .choose(&mut self.rng)
                    .copied()
                    .unwrap_or("cumsum(0)");
                let differences = op.starts_with("diff");
                let Some(x) = self.pick(|var| {
                    var.dtype != DType::Bool
                        && !var.shape.is_empty()
                        && (!differences || exact_everywhere(var))
                }) else {
                    return false;
                };
                let mut shape = x.shape.clone();
                if op.starts_with("diff") {
                    shape[0] = self.own_size();
                }
                self.bind(format!("{}.{op}", x.name), x.dtype, shape);
            }
            11 | 12 => {
                let Some(x) = self.pick(|var| var.dtype != DType::Bool && !var.shape.is_empty())
                else {
                    return false;
                };
                let size = self.own_size();
                let same = |var: &Var| var.dtype == DType::Bool && var.shape == x.shape;
                let expr = match self.pick(same) {
                    Some(p) if self.rng.random_bool(0.5) => {
                        if self.rng.random_bool(0.5) {
                            format!("{}[{}]", x.name, p.name)
                        } else {
                            format!("{}.masked_select({})", x.name, p.name)
                        }
                    }
                    _ => {
                        let c = self.constant();
                        format!("{}[{} > {c}]", x.name, x.name)
                    }
                };
                self.bind(expr, x.dtype, vec![size]);
            }
            13 => {
                let Some(x) = self.pick(|var| !var.shape.is_empty()) else {
                    return false;
                };
                let shape = vec![self.own_size(), fixed(x.shape.len())];
                self.bind(format!("{}.nonzero()", x.name), DType::I64, shape);
            }
            14 => {
                let Some(x) = self.pick(|var| var.shape.len() == 1) else {
                    return false;
                };
                let length = if x.shape[0] == Size::N && self.rng.random_bool(0.6) {
                    self.count()
                } else {
                    let name = format!("{}.size(0)", x.name);
                    let u = self.count();
                    self.lines.push(format!(
                        "    check {u} <= {name}, \"want {{{u}}} of {{{name}}}\""
                    ));
                    u
                };
                let size = self.own_size();
                let expr = match self.rng.random_range(0..3) {
                    0 => format!("{}.narrow(0, 0, {length})", x.name),
                    1 => format!("{}[:{length}]", x.name),
                    _ => format!("{}[{length}:]", x.name),
                };
                self.bind(expr, x.dtype, vec![size]);
            }
            15 => {
                let Some(x) = self.pick(|var| !var.shape.is_empty()) else {
                    return false;
                };
                match self.rng.random_range(0..4) {
                    0 => {
                        let mut shape = x.shape.clone();
                        shape.insert(0, Size::One);
                        self.bind(format!("{}.unsqueeze(0)", x.name), x.dtype, shape);
                    }
                    1 if x.shape.len() == 2 => {
                        let shape = vec![x.shape[1], x.shape[0]];
                        self.bind(format!("{}.T", x.name), x.dtype, shape);
                    }
                    2 => {
                        let size = if x.shape.len() == 1 {
                            x.shape[0]
                        } else {
                            self.own_size()
                        };
                        self.bind(format!("{}.reshape(-1)", x.name), x.dtype, vec![size]);
                    }
                    _ => {
                        let same = |var: &Var| {
                            var.dtype == x.dtype
                                && var.shape.len() == x.shape.len()
                                && var.shape[1..] == x.shape[1..]
                        };
                        let y = self.pick(same).expect("x itself fits");
                        let mut shape = x.shape.clone();
                        shape[0] = self.own_size();
                        self.bind(format!("cat([{}, {}], 0)", x.name, y.name), x.dtype, shape);
                    }
                }
            }
            16 => {
                let Some(x) =
                    self.pick(|var| var.shape.first().is_some_and(|s| matches!(s, Size::Own(_))))
                else {
                    return false;
                };
                let least = self.rng.random_range(0..=2);
                self.lines.push(format!(
                    "    check {}.size(0) >= {least}, \"{} has {{{}.size(0)}} rows\"",
                    x.name, x.name, x.name
                ));
            }
            17 => {
                let Some(x) = self.pick(float) else {
                    return false;
                };
                let c = self.constant();
                if self.rng.random_bool(0.5) {
                    self.lines.push(format!(
                        "    check all({} > {c} - 1.5), \"{} is too small\"",
                        x.name, x.name
                    ));
                } else {
                    self.lines.push(format!(
                        "    check {}.sum().item() < 6.0, \"{} sums to {{{}.sum().item()}}\"",
                        x.name, x.name, x.name
                    ));
                }
            }
            18 => {
                let Some(x) = self.pick(|var| !var.shape.is_empty()) else {
                    return false;
                };
                let Some(y) = self.pick(|var| !var.shape.is_empty()) else {
                    return false;
                };
                let name = format!("s{}", self.ints.len());
                let op = ["+", "*", "-"]
                    .choose(&mut self.rng)
                    .copied()
                    .unwrap_or("+");
                self.lines.push(format!(
                    "    let {name} = {}.size(0) {op} {}.size(0)",
                    x.name, y.name
                ));
                self.ints.push(name);
            }
            19 => return self.data_ops(),
            20 => {
                // Split a tensor of the input length at a count read from data.
                let Some(x) = self.pick(|var| var.shape.first() == Some(&Size::N)) else {
                    return false;
                };
                let u = self.count();
                let (left, right) = (self.own_size(), self.own_size());
                let name = format!("t{}", self.vars.len());
                self.lines.push(format!(
                    "    let [{name}, {name}_rest] = split({}, [{u}, {}.size(0) - {u}], 0)",
                    x.name, x.name
                ));
                let mut shape = x.shape.clone();
                shape[0] = left;
                self.vars.push(Var {
                    name: name.clone(),
                    dtype: x.dtype,
                    shape: shape.clone(),
                });
                shape[0] = right;
                self.vars.push(Var {
                    name: format!("{name}_rest"),
                    dtype: x.dtype,
                    shape,
                });
            }
            21 => {
                // cond on data: the branches may disagree on the output size.
                let Some(x) = self.pick(|var| var.dtype == DType::F32 && var.shape.len() == 1)
                else {
                    return false;
                };
                let branches = [
                    "double, keep_positive",
                    "double, negate",
                    "keep_positive, first_two",
                ];
                let pair = branches
                    .choose(&mut self.rng)
                    .copied()
                    .unwrap_or("double, negate");
                let size = if pair == "double, negate" {
                    x.shape[0]
                } else {
                    self.own_size()
                };
                let c = self.constant();
                self.bind(
                    format!("cond({}.sum() > {c}, {pair}, [{}])", x.name, x.name),
                    DType::F32,
                    vec![size],
                );
            }
            22 => {
                let Some(x) = self.pick(|var| var.dtype == DType::F32 && var.shape.len() == 2)
                else {
                    return false;
                };
                let (expr, shape) = if self.rng.random_bool(0.5) {
                    (
                        format!("{}.T @ {}", x.name, x.name),
                        vec![x.shape[1], x.shape[1]],
                    )
                } else {
                    (
                        format!("{} @ {}.T", x.name, x.name),
                        vec![x.shape[0], x.shape[0]],
                    )
                };
                self.bind(expr, DType::F32, shape);
            }
            23 => {
                // An element read at a position from data: out of range is an error both ways.
                let Some(x) = self.pick(|var| var.shape.first() == Some(&Size::N)) else {
                    return false;
                };
                let u = self.count();
                let shape = x.shape[1..].to_vec();
                self.bind(format!("{}[{u}]", x.name), x.dtype, shape);
            }
            24 => return self.gather_pipeline(),
            25 => {
                // A mask from the program, its kept elements reduced, and its count.
                let Some(p) = self.pick(|var| var.dtype == DType::Bool) else {
                    return false;
                };
                let same = |var: &Var| var.dtype == DType::F32 && var.shape == p.shape;
                let Some(x) = self.pick(same) else {
                    return false;
                };
                let kept = if self.rng.random_bool(0.5) {
                    format!("{}[{}]", x.name, p.name)
                } else {
                    format!("{}.masked_select({})", x.name, p.name)
                };
                let c = self.constant();
                let reduction = ["sum()", "mean()", "max()", "sum(0)"]
                    .choose(&mut self.rng)
                    .copied()
                    .unwrap_or("sum()");
                self.bind(
                    format!("(relu({kept} - {c}) * {kept}).{reduction}"),
                    DType::F32,
                    Vec::new(),
                );
                self.bind(
                    format!("{kept}.size(0) + {}.sum()", p.name),
                    DType::I64,
                    Vec::new(),
                );
            }
            26 => {
                // A long elementwise chain: one fused kernel when compiled. Both terms of the
                // last addition are non-negative: a signed `tanh` could cancel the product
                // (at x = -0.5, c1 = 0, c2 = 1, c3 = -2 the sum is 2.8e-4 from terms of 0.46),
                // and a GPU's `sigmoid` or `tanh` a unit in the last place away would then
                // differ by more than any tolerance for one operation.
                let Some(x) = self.pick(float) else {
                    return false;
                };
                let (c1, c2, c3) = (self.constant(), self.constant(), self.constant());
                let expr = format!(
                    "(relu({x} * {c1} + {c2}) * {x} - {c3}).abs().sqrt() * sigmoid({x}) + tanh({x} - {c1}).abs()",
                    x = x.name
                );
                self.bind(expr, DType::F32, x.shape);
            }
            27 => {
                // A mask followed by elementwise work and a reduction.
                let Some(x) = self.pick(|var| var.dtype == DType::F32 && !var.shape.is_empty())
                else {
                    return false;
                };
                let c = self.constant();
                let reduction = ["sum()", "mean()", "max()", "abs().min()"]
                    .choose(&mut self.rng)
                    .copied()
                    .unwrap_or("sum()");
                let expr = format!("({x}[{x} > {c}] * 2.0 + 1.0).{reduction}", x = x.name);
                self.bind(expr, DType::F32, Vec::new());
            }
            28 | 29 => {
                // Row reductions and what uses them: a row softmax, a normalisation. The
                // normalisation takes values that are the same on every device: a row of
                // nearly equal computed values (running sums) less their mean keeps only the
                // last bits, which a GPU's order of addition changes.
                let softmax = self.rng.random_bool(0.5);
                let Some(x) = self.pick(|var| {
                    var.dtype == DType::F32
                        && var.shape.len() == 2
                        && (softmax || exact_everywhere(var))
                }) else {
                    return false;
                };
                let expr = if softmax {
                    let e = format!("({x} - {x}.max(1, keepdim = true)).exp()", x = x.name);
                    format!("{e} / {e}.sum(1, keepdim = true)")
                } else {
                    // The distance from the row's mean, scaled by the row's spread: distances
                    // rather than signed differences, whose sums cancel to rounding noise
                    // that devices adding in another order do not share.
                    let centered = format!("({x} - {x}.mean(1, keepdim = true))", x = x.name);
                    format!(
                        "{centered}.abs() * ({centered} * {centered}).sum(1, keepdim = true).sqrt()"
                    )
                };
                self.bind(expr, DType::F32, x.shape);
            }
            30 => return self.sorting(),
            31 | 32 => return self.day_one_elementwise(),
            33 | 34 => return self.statistics(),
            35 => {
                let Some(x) = self.pick(|var| !var.shape.is_empty()) else {
                    return false;
                };
                let forms = [
                    ("zeros_like({})", x.dtype),
                    ("ones_like({}, dtype = f32) * 2.0", DType::F32),
                    ("full_like({}, 3, dtype = i64)", DType::I64),
                    ("{}.clone()", x.dtype),
                ];
                let (form, dtype) = forms.choose(&mut self.rng).copied().unwrap_or(forms[0]);
                self.bind(form.replace("{}", &x.name), dtype, x.shape);
            }
            36 | 37 => return self.arithmetic(),
            38 | 39 => return self.layout(),
            _ => {
                let Some(x) = self.pick(|var| !var.shape.is_empty()) else {
                    return false;
                };
                self.lines.push(format!(
                    "    print(\"{}\", {}.shape, {})",
                    x.name, x.name, x.name
                ));
            }
        }
        true
    }

    /// The positions where a mask holds, a take there (`index_select`, indexing, `gather`)
    /// of the tensor the mask came from or of another of its length, elementwise work and
    /// a reduction: one kernel when compiled.
    fn gather_pipeline(&mut self) -> bool {
        let Some(x) = self.pick(|var| var.dtype == DType::F32 && var.shape.len() == 1) else {
            return false;
        };
        let same = |var: &Var| var.dtype == DType::F32 && var.shape == x.shape;
        let y = self.pick(same).expect("x itself fits");
        let c = self.constant();
        let positions = format!("({} > {c}).nonzero().squeeze(1)", x.name);
        let taken = match self.rng.random_range(0..3) {
            0 => format!("{}.index_select(0, {positions})", y.name),
            1 => format!("{}[{positions}]", y.name),
            _ => format!("{}.gather(0, {positions})", y.name),
        };
        let reduction = ["sum()", "max()", "mean()", "abs().min()"]
            .choose(&mut self.rng)
            .copied()
            .unwrap_or("sum()");
        let c2 = self.constant();
        self.bind(
            format!("({taken} * {c2} - 1.0).{reduction}"),
            DType::F32,
            Vec::new(),
        );
        true
    }

    /// Operations whose output size depends on data: `unique`, `repeat_interleave`, and
    /// indices from `nonzero` used to gather.
    fn data_ops(&mut self) -> bool {
        let Some(x) = self.pick(|var| var.dtype == DType::F32 && var.shape.len() == 1) else {
            return false;
        };
        let c = self.constant();
        let (expr, dtype) = match self.rng.random_range(0..3) {
            0 => (
                format!("({}.abs() > {c}).long().unique()", x.name),
                DType::I64,
            ),
            1 => (
                format!("{}.repeat_interleave(({} > {c}).long())", x.name, x.name),
                DType::F32,
            ),
            _ => (
                format!(
                    "{}.index_select(0, ({} > {c}).nonzero().squeeze(1))",
                    x.name, x.name
                ),
                DType::F32,
            ),
        };
        let size = self.own_size();
        self.bind(expr, dtype, vec![size]);
        true
    }

    fn program(mut self) -> String {
        let decorator = [
            "@compile",
            "@compile",
            "@compile(dynamic = true)",
            "@compile(dynamic = false)",
        ]
        .choose(&mut self.rng)
        .copied()
        .unwrap_or("@compile");
        let steps = self.rng.random_range(2..=9);
        let mut made = 0;
        while made < steps {
            if self.step() {
                made += 1;
            }
        }
        let mut results: Vec<String> = self.vars[3..]
            .iter()
            .rev()
            .take(3)
            .map(|var| var.name.clone())
            .collect();
        let tensors = results.len();
        results.extend(self.ints.iter().cloned());
        let mut text = format!(
            "{BRANCHES}{decorator}\nfn f(a: f32[n], b: f32[n], c: f32[n, m], k: i64[1]) {{\n{}\n    return [{}]\n}}\n",
            self.lines.join("\n"),
            results.join(", ")
        );
        if self.large {
            self.large_calls(&mut text, tensors, results.len());
            return text;
        }
        for _ in 0..3 {
            let n = if self.rng.random_bool(0.1) {
                0
            } else {
                self.rng.random_range(1..=5)
            };
            let m = self.rng.random_range(1..=3);
            let a = self.values(n);
            let b = self.values(n);
            let rows: Vec<String> = (0..n).map(|_| self.row(m)).collect();
            let c = if n == 0 {
                format!("zeros(0, {m})")
            } else {
                format!("tensor([{}])", rows.join(", "))
            };
            let k = self.rng.random_range(0..=n);
            let _ = writeln!(text, "print(f({a}, {b}, {c}, tensor([{k}])))");
        }
        text
    }

    /// Three calls with inputs of `LARGE_ROWS` by `LARGE_COLUMNS` halves from `randn`, each
    /// result shown in full by `SHOW`.
    fn large_calls(&mut self, text: &mut String, tensors: usize, results: usize) {
        text.push_str(SHOW);
        for call in 0..3 {
            let n = LARGE_ROWS.choose(&mut self.rng).copied().unwrap_or(64);
            let m = LARGE_COLUMNS.choose(&mut self.rng).copied().unwrap_or(3);
            let k = self.rng.random_range(0..=n);
            let halves = |shape: String| format!("(randn({shape}) * 2.0).long().float() / 2.0");
            let _ = writeln!(
                text,
                "seed({call})\nlet r = f({}, {}, {}, tensor([{k}]))",
                halves(n.to_string()),
                halves(n.to_string()),
                halves(format!("{n}, {m}"))
            );
            for index in 0..results {
                let show = if index < tensors { "show" } else { "print" };
                let _ = writeln!(text, "{show}(r[{index}])");
            }
        }
    }

    fn values(&mut self, count: usize) -> String {
        if count == 0 {
            return "zeros(0)".to_string();
        }
        format!("tensor({})", self.row(count))
    }

    fn row(&mut self, count: usize) -> String {
        let values: Vec<String> = (0..count).map(|_| self.constant()).collect();
        format!("[{}]", values.join(", "))
    }
}

/// Whether a variable's values are the same on every device: ints, bools and the float
/// inputs. `diff` and the row normalisation take only such values: differences of nearly
/// equal floats (a running sum's neighbours) keep only their last bits, which a GPU's order
/// of addition changes. So do positions (`argmax`, `argsort`, `topk`'s indices): equal
/// computed values on one device may be a unit in the last place apart on another, and
/// their order then differs.
fn exact_everywhere(var: &Var) -> bool {
    var.dtype != DType::F32 || arithmetic::is_float_input(var)
}

fn fixed(n: usize) -> Size {
    match n {
        1 => Size::One,
        n => Size::Own(u32::MAX - n as u32),
    }
}

/// Adds a failing program to `failures`: in full for the first five, then its seed and the
/// first line of its first problem, so a campaign runs on and lists every failing seed.
fn report(failures: &mut Vec<String>, seed: u64, text: &str, problems: &[String]) {
    if failures.len() < 5 {
        failures.push(format!("seed {seed}:\n{text}\n  {}", problems.join("\n  ")));
    } else {
        let first = problems.first().and_then(|problem| problem.lines().next());
        failures.push(format!("seed {seed}: {}", first.unwrap_or_default()));
    }
}

/// Whether a campaign runs its programs at large sizes (`TSL_PROGRAMS_LARGE` set).
fn large_campaign() -> bool {
    std::env::var_os("TSL_PROGRAMS_LARGE").is_some()
}

/// The seeds of the programs to run: `PROGRAMS` from 0, or `TSL_PROGRAMS` from
/// `TSL_PROGRAMS_FIRST` for a longer campaign.
fn program_range() -> (u64, u64) {
    let number = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|value| value.parse().ok())
    };
    (
        number("TSL_PROGRAMS_FIRST").unwrap_or(0),
        number("TSL_PROGRAMS").unwrap_or(PROGRAMS),
    )
}

#[test]
fn random_programs_agree_compiled_and_eager() {
    let (first, programs) = program_range();
    agree_compiled_and_eager(first, programs, large_campaign());
}

#[test]
fn random_programs_at_large_sizes_agree_compiled_and_eager() {
    agree_compiled_and_eager(0, LARGE_PROGRAMS, true);
}

/// Runs `programs` programs from seed `first` eagerly, compiled and compiled unfused, and
/// asserts that they agree and end in each way often enough.
fn agree_compiled_and_eager(first: u64, programs: u64, large: bool) {
    let failures = on_big_stack(move || {
        let mut failures = Vec::new();
        // How the compiled runs ended, so the generator cannot quietly stop exercising checks.
        let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
        for seed in first..first + programs {
            let text = Generator::at(seed, large).program();
            let compare = || {
                let eager = run_source(
                    "generated.tsl",
                    &text,
                    Options {
                        eager: true,
                        ..Options::default()
                    },
                );
                // Half the programs compile every fused kernel they can to machine code.
                let native = if seed % 2 == 0 {
                    Native::Always
                } else {
                    Native::Large
                };
                let compiled = run_source(
                    "generated.tsl",
                    &text,
                    Options {
                        native,
                        ..Options::default()
                    },
                );
                let outcome = compiled
                    .diagnostics
                    .iter()
                    .find(|d| d.severity == tsl::diag::Severity::Error)
                    .map_or("ok".to_string(), |d| {
                        // A shape rule's assumption that failed at run time names the values
                        // it computed from data.
                        let assumed = d.message.starts_with("assumed by a shape rule");
                        if assumed || d.notes.iter().any(|note| note.starts_with("in this run ")) {
                            "assumption".to_string()
                        } else {
                            d.code.clone()
                        }
                    });
                *outcomes.entry(outcome).or_insert(0) += 1;
                let unfused = run_source(
                    "generated.tsl",
                    &text,
                    Options {
                        unfused: true,
                        ..Options::default()
                    },
                );
                let mut problems = differences("generated.tsl", &eager, &compiled);
                problems.extend(exact_differences("generated.tsl", &unfused, &compiled));
                problems
            };
            let problems = std::panic::catch_unwind(std::panic::AssertUnwindSafe(compare))
                .unwrap_or_else(|_| vec!["the interpreter panicked".to_string()]);
            if !problems.is_empty() {
                report(&mut failures, seed, &text, &problems);
            }
        }
        let count = |outcome: &str| outcomes.get(outcome).copied().unwrap_or(0);
        let enough = [
            ("ok", programs / 2),
            ("check-failed", programs / 40),
            ("device-check-failed", programs / 40),
            ("assumption", programs / 200),
        ];
        if std::env::var_os("TSL_PROGRAMS").is_some() {
            eprintln!("outcomes of the compiled runs: {outcomes:?}");
        }
        for (outcome, least) in enough {
            if failures.is_empty() && count(outcome) < least {
                failures.push(format!(
                    "only {} programs ended {outcome}: {outcomes:?}",
                    count(outcome)
                ));
            }
        }
        failures
    });
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n\n"));
}

#[test]
fn random_programs_agree_on_the_gpu() {
    let programs = std::env::var("TSL_GPU_PROGRAMS")
        .ok()
        .and_then(|count| count.parse().ok())
        .unwrap_or(GPU_PROGRAMS);
    agree_on_the_gpu(program_range().0, programs, large_campaign());
}

#[test]
fn random_programs_at_large_sizes_agree_on_the_gpu() {
    agree_on_the_gpu(0, LARGE_GPU_PROGRAMS, true);
}

/// Runs `programs` programs from seed `first` eagerly and compiled on the GPU, and asserts
/// that both agree with the eager CPU run.
fn agree_on_the_gpu(first: u64, programs: u64, large: bool) {
    if !gpu_available() {
        return;
    }
    let failures = on_big_stack(move || {
        let mut failures = Vec::new();
        for seed in first..first + programs {
            let text = Generator::at(seed, large).program();
            let compare = || {
                let cpu = run_source(
                    "generated.tsl",
                    &text,
                    Options {
                        eager: true,
                        ..Options::default()
                    },
                );
                let mut problems = Vec::new();
                for eager in [true, false] {
                    let gpu = run_source(
                        "generated.tsl",
                        &text,
                        Options {
                            eager,
                            device: DeviceKind::Gpu,
                            ..Options::default()
                        },
                    );
                    let how = if eager { "eager" } else { "compiled" };
                    let tolerance = if large {
                        LARGE_GPU_TOLERANCE
                    } else {
                        Tolerance::RESULTS
                    };
                    problems.extend(
                        differences_within("generated.tsl", &cpu, &gpu, tolerance)
                            .into_iter()
                            .map(|problem| format!("{how} on the GPU: {problem}")),
                    );
                }
                problems
            };
            let problems = std::panic::catch_unwind(std::panic::AssertUnwindSafe(compare))
                .unwrap_or_else(|_| vec!["the interpreter panicked".to_string()]);
            if !problems.is_empty() {
                report(&mut failures, seed, &text, &problems);
            }
        }
        failures
    });
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n\n"));
}
