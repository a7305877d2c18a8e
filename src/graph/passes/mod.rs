//! Graph passes. Each keeps every node with effects (asserts, device asserts, prints, random
//! numbers, branches holding any of these) and every node binding a symbol that something
//! kept needs, so no pass can drop a check.
//!
//! - `simplify`: operations that do nothing (a cast to the same dtype, a reshape or expand
//!   to the same sizes, an identity permutation, an empty squeeze, a narrow or index covering
//!   everything) are replaced by their input. Together with constant folding at trace time
//!   (an operation whose operands are all constants is computed while tracing, never
//!   recorded) this is TSL's constant folding.
//! - `cse`: a pure node identical to an earlier one (same operation, same arguments) is
//!   replaced by it.
//! - `dce`: nodes whose outputs nothing kept uses are removed, then ids are renumbered;
//!   an operation that can fail on its data, or whose results could be over the element
//!   limit, stays.
//! - `fuse`: groups of elementwise operations, with their reductions and mask compactions,
//!   become one fused node.
//!   It runs when a compiled graph is prepared to run, not in [`optimize`]: the printed graph
//!   (`tsl graph`) shows the operations as written unless `--fused` asks for it.
//!
//! [`PASSES`] names them for filetests (`; passes: simplify cse dce`) and tools; `optimize`
//! is the pipeline, which also runs on the branches of `cond`.

mod cse;
mod dce;
mod fuse;
mod limit;
mod rewrite;
mod simplify;

use super::ir::{Graph, NodeKind};

pub use cse::{Key as NodeKey, eliminate_common_subexpressions};
pub use dce::eliminate_dead_code;
pub use fuse::{FusionPolicy, fuse, single};
pub use limit::all_within_limit;
pub use simplify::simplify;

/// A pass rewrites a graph in place.
pub type Pass = fn(&mut Graph);

/// Every pass by name, in the order they usually run.
pub const PASSES: &[(&str, Pass)] = &[
    ("simplify", simplify),
    ("cse", eliminate_common_subexpressions),
    ("dce", eliminate_dead_code),
    ("optimize", optimize),
    ("fuse", fuse_for_cpu),
];

/// Fusion with the CPU's policy, the form filetests run it in.
fn fuse_for_cpu(graph: &mut Graph) {
    fuse(graph, &FusionPolicy::default());
}

/// The pass called `name`.
pub fn by_name(name: &str) -> Option<Pass> {
    PASSES
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, pass)| *pass)
}

/// The pipeline run on every trace, also on the branches of `cond`.
pub fn optimize(graph: &mut Graph) {
    for node in &mut graph.nodes {
        if let NodeKind::Cond {
            then_branch,
            else_branch,
        } = &mut node.kind
        {
            optimize(then_branch);
            optimize(else_branch);
        }
    }
    simplify(graph);
    eliminate_common_subexpressions(graph);
    eliminate_dead_code(graph);
}
