//! What the interpreter benchmarks share.

use tsl::diag::Diagnostic;
use tsl::eval::Output;
use tsl::source::SourceMap;

/// An output that discards prints and logs and stops the benchmark on any diagnostic.
pub struct Silent;

impl Output for Silent {
    fn print(&mut self, _: &str) {}
    fn log(&mut self, _: &str) {}
    fn diagnostic(&mut self, _: &SourceMap, diagnostic: &Diagnostic) {
        panic!("the benchmark program failed: {}", diagnostic.message);
    }
}
