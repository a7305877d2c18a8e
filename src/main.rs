//! The `tsl` command line.

fn main() {
    println!("tsl {}", env!("CARGO_PKG_VERSION"));
}
