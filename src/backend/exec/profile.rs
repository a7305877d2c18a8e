//! What `tsl run --profile` reports: per compiled function, how often it ran and for how
//! long, and per kernel (each op, each fused group) how it ran (a fused kernel as machine
//! code or interpreted), its calls, time, elements produced and bytes moved (operands read
//! plus results written), the way `torch.profiler` summarises a run.

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
    /// By kernel and how it ran: a fused kernel compiled for its large calls and
    /// interpreted for its small ones has a row for each.
    kernels: BTreeMap<(String, Option<KernelCode>), KernelStats>,
}

/// How a device computed a fused kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum KernelCode {
    /// A loop compiled to machine code for this kernel.
    MachineCode,
    /// The kernel's instructions interpreted, a segment at a time.
    Interpreted,
}

impl KernelCode {
    fn name(self) -> &'static str {
        match self {
            KernelCode::MachineCode => "machine code",
            KernelCode::Interpreted => "interpreted",
        }
    }
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
    /// How the device computed it, where it says (fused kernels on the CPU).
    pub code: Option<KernelCode>,
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
        let stats = function
            .kernels
            .entry((call.kernel, call.code))
            .or_default();
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
                "  {:<40} {:<12} {:>7} {:>11} {:>11} {:>13} {:>11} {:>6}",
                "kernel", "runs as", "calls", "total", "mean", "elements", "bytes", "share"
            );
            let kernel_time: Duration = function.kernels.values().map(|stats| stats.time).sum();
            let mut kernels: Vec<_> = function.kernels.iter().collect();
            kernels.sort_by(|a, b| b.1.time.cmp(&a.1.time).then(a.0.cmp(b.0)));
            for ((kernel, code), stats) in kernels {
                let share = if kernel_time.is_zero() {
                    0.0
                } else {
                    100.0 * stats.time.as_secs_f64() / kernel_time.as_secs_f64()
                };
                let _ = writeln!(
                    text,
                    "  {:<40} {:<12} {:>7} {:>11} {:>11} {:>13} {:>11} {:>5.1}%",
                    shorten(kernel, 40),
                    code.map_or("-", KernelCode::name),
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

    /// A call of `kernel` in function `f`, writing `elements` `f32` and reading as many.
    fn call(
        kernel: &str,
        code: Option<KernelCode>,
        micros: u64,
        elements: usize,
    ) -> KernelCall<'static> {
        KernelCall {
            function: "f",
            kernel: kernel.to_string(),
            code,
            time: Duration::from_micros(micros),
            elements,
            bytes: elements * 8,
        }
    }

    #[test]
    fn the_table_sums_calls_and_orders_kernels_by_time() {
        let mut profile = Profile::default();
        for _ in 0..2 {
            profile.function("f", Duration::from_micros(30));
            let fused = Some(KernelCode::MachineCode);
            for (kernel, code, micros) in [("fused[mul, add]", fused, 20), ("matmul", None, 5)] {
                profile.kernel(call(kernel, code, micros, 1000));
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
        let rows: Vec<Vec<&str>> = (table.lines())
            .map(|line| line.split_whitespace().collect())
            .collect();
        assert!(
            rows.iter()
                .any(|row| row[..5] == ["fused[mul,", "add]", "machine", "code", "2"]),
            "{table}"
        );
        assert!(
            rows.iter().any(|row| row[..3] == ["matmul", "-", "2"]),
            "{table}"
        );
    }

    /// One kernel run both ways has a row for each.
    #[test]
    fn a_kernel_run_two_ways_has_two_rows() {
        let mut profile = Profile::default();
        for code in [KernelCode::MachineCode, KernelCode::Interpreted] {
            profile.kernel(call("fused[exp, mul]", Some(code), 10, 10));
        }
        let table = profile.render();
        assert!(
            table.contains("fused[exp, mul]                          machine code"),
            "{table}"
        );
        assert!(
            table.contains("fused[exp, mul]                          interpreted "),
            "{table}"
        );
    }
}
