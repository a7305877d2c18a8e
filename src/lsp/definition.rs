//! Go to definition: locals, parameters and annotation sizes, globals, functions, `use`
//! names, and members of used files and std modules. Std modules are embedded in the binary;
//! to open one, the server writes a copy under the user's cache directory
//! (`tsl/std-VERSION/NAME.tsl`) and points there.

use std::ops::Range;
use std::path::PathBuf;

use lsp_types::{GotoDefinitionResponse, Location, Position};

use super::lines::Encoding;
use super::snapshot::{Context, Snapshot};
use crate::check::facts::Definition;

/// Where each name used in the document is defined, by the byte range of the use.
pub fn locations(context: &Context<'_>) -> Vec<(Range<u32>, Location)> {
    context
        .analysis
        .names
        .references
        .iter()
        .filter_map(|reference| {
            let Definition::Source { span, .. } = reference.definition else {
                return None;
            };
            let location = context.location(span)?;
            Some((reference.span.start..reference.span.end, location))
        })
        .collect()
}

/// The definition of the name at `position`.
pub fn at(
    snapshot: &Snapshot,
    position: Position,
    encoding: Encoding,
) -> Option<GotoDefinitionResponse> {
    let offset = snapshot.index.offset(position, encoding);
    let location = Snapshot::innermost(&snapshot.definitions, offset)?;
    Some(GotoDefinitionResponse::Scalar(location.clone()))
}

/// The `file:` URI of a copy of the std module shown as `name` (`<std>/nn.tsl`) with `text`,
/// written to the cache directory when it is not there yet. `None` for any other file, or
/// when there is no cache directory to write to.
pub fn std_file(name: &str, text: &str) -> Option<String> {
    let module = name.strip_prefix("<std>/")?;
    let directory = std_directory()?;
    let path = directory.join(module);
    let current = std::fs::read_to_string(&path).is_ok_and(|existing| existing == text);
    if !current {
        std::fs::create_dir_all(&directory).ok()?;
        // Another server may write the same file at the same time: write a temporary file
        // and rename it, so no reader sees half a module.
        let temporary = directory.join(format!(".{module}.{}", std::process::id()));
        std::fs::write(&temporary, text).ok()?;
        std::fs::rename(&temporary, &path).ok()?;
    }
    Some(super::uri::from_path(&path))
}

fn std_directory() -> Option<PathBuf> {
    let cache = dirs::cache_dir()?;
    Some(
        cache
            .join("tsl")
            .join(format!("std-{}", env!("CARGO_PKG_VERSION"))),
    )
}
