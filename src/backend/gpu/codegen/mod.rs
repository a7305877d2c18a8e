//! WGSL code generation: pure functions from a kernel description to WGSL text and the
//! layout of its bindings and parameters. Nothing here touches wgpu, so every generator is
//! tested (snapshots, naga validation) on machines without a GPU.
//!
//! Sizes never appear in the source: shapes, strides, offsets, element counts, host scalars
//! and status slots travel in a per-dispatch block of 32-bit parameter words, whose meaning
//! the generator lists ([`Param`]). One pipeline therefore serves every size a cached graph
//! accepts, and pipelines are cached by their source.

use std::fmt::Write as _;
pub mod assert;
pub mod compact;
pub mod elementwise;
pub mod gather;
pub mod matmul;
pub mod reduce;
pub mod scan;
pub mod sort;
mod wgsl;

pub use wgsl::{storage_type, workgroup_size};

/// A generated compute shader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wgsl {
    /// The whole module; the entry point is `main`.
    pub source: String,
    /// Binding `k` of group 0 is `bindings[k]`.
    pub bindings: Vec<Binding>,
    /// What each parameter word holds (binding 0 is the parameter block).
    pub params: Vec<Param>,
}

/// What a binding holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binding {
    /// The parameter block (uniform).
    Params,
    /// A tensor the kernel reads.
    Read,
    /// A tensor the kernel writes (or reads and writes).
    Write,
    /// The run's status buffer (atomic words), for checks and data errors.
    Status,
}

/// The meaning of one parameter word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Param {
    /// How many invocations do work (elements, rows, outputs...).
    Count,
    /// Size `d` of the iteration shape.
    Size(u8),
    /// The element offset of tensor `t` (inputs first, then outputs).
    Offset(u8),
    /// The element stride of tensor `t` along iteration dim `d`.
    Stride(u8, u8),
    /// The low and high 32 bits of host scalar `k` (an `f32`'s bits, a `bool` as 0 or 1, or
    /// an `i64`).
    ScalarLow(u8),
    ScalarHigh(u8),
    /// The status slot a fallible operation `k` of the kernel reports failures in.
    Slot(u8),
    /// A word specific to the kernel family (a row length, a dimension size...).
    Value(u8),
    /// A word that is always 0. Literals are combined with it, so the shader compiler sees
    /// them as runtime values: Vulkan drivers may fold arithmetic on constants as if
    /// infinities and NaN did not exist (Mesa lavapipe turns `(x * 2.0) / 0.0` into `x` and
    /// `x * 0.0` into `0.0`), while the same arithmetic on runtime values keeps IEEE results.
    Zero,
}

impl Wgsl {
    /// The number of `vec4<u32>` the parameter block holds (at least one).
    pub fn param_vectors(&self) -> usize {
        self.params.len().div_ceil(4).max(1)
    }
}

/// Writes parameter word `index` as WGSL (`p.w[1].z`).
pub(crate) fn word(index: usize) -> String {
    let lane = ["x", "y", "z", "w"][index % 4];
    format!("p.w[{}].{lane}", index / 4)
}

/// A module under construction: bindings, parameters, helper functions and the body.
pub(crate) struct Module {
    pub bindings: Vec<Binding>,
    pub params: Vec<Param>,
    declarations: Vec<String>,
    helpers: wgsl::Helpers,
}

impl Module {
    pub fn new() -> Module {
        Module {
            bindings: vec![Binding::Params],
            params: Vec::new(),
            declarations: Vec::new(),
            helpers: wgsl::Helpers::default(),
        }
    }

    /// The WGSL expression of a parameter word, adding it when new.
    pub fn param(&mut self, param: Param) -> String {
        let index = match self.params.iter().position(|known| *known == param) {
            Some(index) => index,
            None => {
                self.params.push(param);
                self.params.len() - 1
            }
        };
        word(index)
    }

    /// Declares a storage binding named `name` holding `element`s; returns its number.
    pub fn storage(&mut self, name: &str, element: &str, binding: Binding) -> usize {
        let number = self.bindings.len();
        let access = match binding {
            Binding::Read => "read",
            _ => "read_write",
        };
        self.declarations.push(format!(
            "@group(0) @binding({number}) var<storage, {access}> {name}: array<{element}>;"
        ));
        self.bindings.push(binding);
        number
    }

    /// Declares the status buffer (once) and the `fail` function that reports into it.
    pub fn status(&mut self) {
        if self.bindings.contains(&Binding::Status) {
            return;
        }
        let number = self.bindings.len();
        self.declarations.push(format!(
            "@group(0) @binding({number}) var<storage, read_write> status: array<atomic<u32>>;"
        ));
        self.bindings.push(Binding::Status);
        self.helpers.need("fail");
    }

    /// Marks a helper function of `wgsl.rs` as used.
    pub fn helper(&mut self, name: &'static str) {
        self.helpers.need(name);
    }

    /// The finished module: header comment, parameter block, bindings, helpers, then
    /// `body` (the entry point and anything it needs).
    pub fn finish(self, comment: &str, body: &str) -> Wgsl {
        let vectors = self.params.len().div_ceil(4).max(1);
        let mut source = String::new();
        let _ = writeln!(source, "// {comment}");
        let _ = write!(
            source,
            "struct Params {{ w: array<vec4<u32>, {vectors}> }}\n\
             @group(0) @binding(0) var<uniform> p: Params;\n"
        );
        for declaration in &self.declarations {
            source.push_str(declaration);
            source.push('\n');
        }
        source.push_str(&self.helpers.source());
        source.push_str(body);
        Wgsl {
            source,
            bindings: self.bindings,
            params: self.params,
        }
    }
}

/// The entry point of one-dimensional work: `i` is the flat invocation index of a 2-D
/// dispatch (grids wider than 65,535 workgroups wrap into rows of workgroups), and
/// invocations past `count` return at once.
pub(crate) fn entry_point(count: &str) -> String {
    let size = workgroup_size();
    format!(
        "@compute @workgroup_size({size})\n\
         fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{\n\
         \x20   let i = gid.x + gid.y * nwg.x * {size}u;\n\
         \x20   if (i >= {count}) {{ return; }}\n"
    )
}
