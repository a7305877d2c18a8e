//! What `tsl run --profile` reports: per compiled function, how often it ran and for how
//! long, and per kernel (each op, each fused group) its calls, time, elements produced and
//! bytes moved (operands read plus results written), the way `torch.profiler` summarises a
//! run.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// Times collected over a run.
#[derive(Debug, Default)]
pub struct Profile {
    functions: BTreeMap<String, FunctionStats>,
}

#[derive(Debug, Default)]
struct FunctionStats {
    calls: u64,
    time: Duration,
    kernels: BTreeMap<String, KernelStats>,
}

#[derive(Debug, Default)]
struct KernelStats {
    calls: u64,
    time: Duration,
    elements: u128,
    bytes: u128,
}

/// One kernel call, as the executor measured it.
pub struct KernelCall<'a> {
    pub function: &'a str,
    pub kernel: String,
    pub time: Duration,
    pub elements: usize,
    pub bytes: usize,
}

impl Profile {
    /// Records one run of a compiled function.
    pub fn function(&mut self, name: &str, time: Duration) {
        let stats = self.functions.entry(name.to_string()).or_default();
        stats.calls += 1;
        stats.time += time;
    }

    pub fn kernel(&mut self, call: KernelCall<'_>) {
        let function = self.functions.entry(call.function.to_string()).or_default();
        let stats = function.kernels.entry(call.kernel).or_default();
        stats.calls += 1;
        stats.time += call.time;
        stats.elements += call.elements as u128;
        stats.bytes += call.bytes as u128;
    }

    pub fn is_empty(&self) -> bool {
        self.functions.is_empty()
    }

    /// The table: functions by name; kernels by time spent, largest first.
    pub fn render(&self) -> String {
        let mut text = String::new();
        for (name, function) in &self.functions {
            let _ = writeln!(
                text,
                "compiled function `{name}`: {} calls, {} total, {} per call",
                function.calls,
                duration(function.time),
                duration(mean(function.time, function.calls)),
            );
            let _ = writeln!(
                text,
                "  {:<40} {:>7} {:>11} {:>11} {:>13} {:>11} {:>6}",
                "kernel", "calls", "total", "mean", "elements", "bytes", "share"
            );
            let kernel_time: Duration = function.kernels.values().map(|stats| stats.time).sum();
            let mut kernels: Vec<(&String, &KernelStats)> = function.kernels.iter().collect();
            kernels.sort_by(|a, b| b.1.time.cmp(&a.1.time).then(a.0.cmp(b.0)));
            for (kernel, stats) in kernels {
                let share = if kernel_time.is_zero() {
                    0.0
                } else {
                    100.0 * stats.time.as_secs_f64() / kernel_time.as_secs_f64()
                };
                let _ = writeln!(
                    text,
                    "  {:<40} {:>7} {:>11} {:>11} {:>13} {:>11} {:>5.1}%",
                    shorten(kernel, 40),
                    stats.calls,
                    duration(stats.time),
                    duration(mean(stats.time, stats.calls)),
                    stats.elements,
                    bytes(stats.bytes),
                    share
                );
            }
        }
        text
    }
}

fn mean(total: Duration, calls: u64) -> Duration {
    if calls == 0 {
        Duration::ZERO
    } else {
        total / u32::try_from(calls).unwrap_or(u32::MAX)
    }
}

fn duration(time: Duration) -> String {
    let micros = time.as_secs_f64() * 1e6;
    if micros >= 1e6 {
        format!("{:.3} s", micros / 1e6)
    } else if micros >= 1e3 {
        format!("{:.3} ms", micros / 1e3)
    } else {
        format!("{micros:.1} µs")
    }
}

fn bytes(count: u128) -> String {
    let count = count as f64;
    if count >= 1e9 {
        format!("{:.2} GB", count / 1e9)
    } else if count >= 1e6 {
        format!("{:.2} MB", count / 1e6)
    } else if count >= 1e3 {
        format!("{:.1} kB", count / 1e3)
    } else {
        format!("{count} B")
    }
}

fn shorten(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let kept: String = text.chars().take(width - 1).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_sums_calls_and_orders_kernels_by_time() {
        let mut profile = Profile::default();
        for _ in 0..2 {
            profile.function("f", Duration::from_micros(30));
            for (kernel, micros) in [("fused[mul, add]", 20), ("matmul", 5)] {
                profile.kernel(KernelCall {
                    function: "f",
                    kernel: kernel.to_string(),
                    time: Duration::from_micros(micros),
                    elements: 1000,
                    bytes: 8000,
                });
            }
        }
        let table = profile.render();
        assert!(
            table.starts_with("compiled function `f`: 2 calls, 60.0 µs total, 30.0 µs per call"),
            "{table}"
        );
        let fused = table
            .find("fused[mul, add]")
            .expect("the fused kernel is listed");
        let matmul = table.find("matmul").expect("matmul is listed");
        assert!(fused < matmul, "{table}");
        assert!(
            table.contains("80.0%") && table.contains("20.0%"),
            "{table}"
        );
        assert!(table.contains("16.0 kB"), "{table}");
    }
}
