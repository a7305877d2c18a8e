//! What the server knows about one version of one document, as plain data built on the
//! analysis thread from a `check::Analysis`: the diagnostics to publish and everything the
//! requests read. Byte ranges index the analyzed text; LSP ranges are already converted
//! with the negotiated encoding.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;

use lsp_types::{CompletionItemKind, DocumentSymbol, InlayHint, Location, TextEdit, Uri};

use super::Client;
use super::lines::LineIndex;
use crate::check::Analysis;
use crate::source::{FileId, Span};

/// A name completion can offer, and where it is visible (the whole file for globals).
#[derive(Clone, Debug)]
pub struct Named {
    pub name: String,
    pub kind: CompletionItemKind,
    pub detail: Option<String>,
    pub visible: Range<u32>,
}

/// A quick fix: the diagnostic it fixes and the edit.
#[derive(Clone, Debug)]
pub struct Fix {
    pub diagnostic: lsp_types::Diagnostic,
    pub title: String,
    pub edit: TextEdit,
}

/// Everything the server knows about one version of a document.
pub struct Snapshot {
    pub uri: String,
    pub version: i32,
    /// The analyzed text's line index.
    pub index: LineIndex,
    pub diagnostics: Vec<lsp_types::Diagnostic>,
    /// Hover text (Markdown or plain) by the byte range it covers.
    pub hovers: Vec<(Range<u32>, String)>,
    /// Where the name at a byte range is defined.
    pub definitions: Vec<(Range<u32>, Location)>,
    /// Locals and top-level variables.
    pub locals: Vec<Named>,
    /// Functions, modules and top-level variables, visible in every function.
    pub globals: Vec<Named>,
    /// Each module name with the members completion offers after `name.`.
    pub modules: Vec<(String, Vec<Named>)>,
    pub symbols: Vec<DocumentSymbol>,
    pub hints: Vec<InlayHint>,
    pub fixes: Vec<Fix>,
    /// The files the analysis read besides the document itself (`.` and `..` resolved).
    pub dependencies: Vec<PathBuf>,
    /// Lines of the `TSL_LOG` channels.
    pub log: Vec<String>,
}

impl Snapshot {
    pub fn build(
        client: Client,
        uri: &str,
        version: i32,
        text: &str,
        analysis: &Analysis,
    ) -> Snapshot {
        let context = Context::new(client, uri, text, analysis);
        let (diagnostics, fixes) = super::convert::diagnostics(&context);
        let (locals, globals, modules) = super::completion::names(&context);
        let dependencies = analysis
            .sources
            .files()
            .filter(|(id, _)| *id != analysis.file)
            .filter_map(|(_, file)| file.path.as_deref().map(crate::source::normalize))
            .collect();
        Snapshot {
            uri: uri.to_string(),
            version,
            hovers: super::hover::entries(&context),
            definitions: super::definition::locations(&context),
            symbols: super::symbols::document(&context),
            hints: super::inlay::hints(&context),
            index: context.index,
            diagnostics,
            locals,
            globals,
            modules,
            fixes,
            dependencies,
            log: analysis.log.clone(),
        }
    }

    /// The entry of `entries` whose range holds `offset` most tightly.
    pub fn innermost<T>(entries: &[(Range<u32>, T)], offset: u32) -> Option<&T> {
        entries
            .iter()
            .filter(|(range, _)| range.start <= offset && offset <= range.end)
            .min_by_key(|(range, _)| range.end - range.start)
            .map(|(_, value)| value)
    }
}

/// What the builders share: the analysis, the document's line index, and line indexes of
/// the other files spans point into.
pub struct Context<'a> {
    pub client: Client,
    pub uri: &'a str,
    pub text: &'a str,
    pub analysis: &'a Analysis,
    pub index: LineIndex,
    other_files: RefCell<HashMap<FileId, LineIndex>>,
}

impl<'a> Context<'a> {
    fn new(client: Client, uri: &'a str, text: &'a str, analysis: &'a Analysis) -> Context<'a> {
        Context {
            client,
            uri,
            text,
            analysis,
            index: LineIndex::new(text),
            other_files: RefCell::new(HashMap::new()),
        }
    }

    /// Whether a span is in the analyzed document.
    pub fn in_document(&self, span: Span) -> bool {
        span.file == self.analysis.file
    }

    /// The LSP range of a span in the document.
    pub fn range(&self, span: Span) -> lsp_types::Range {
        self.index.range(span.start..span.end, self.client.encoding)
    }

    /// Where a span is, as a location a client can open: the document, a file on disk, or
    /// the copy of a std module in the cache directory. `None` for text that is no file.
    pub fn location(&self, span: Span) -> Option<Location> {
        if self.in_document(span) {
            return Some(Location::new(self.document_uri()?, self.range(span)));
        }
        let file = self.analysis.sources.get(span.file);
        let uri = match &file.path {
            Some(path) => {
                let absolute = std::path::absolute(path).unwrap_or_else(|_| path.clone());
                super::uri::from_path(&absolute)
            }
            None => super::definition::std_file(&file.name, &file.text)?,
        };
        let mut indexes = self.other_files.borrow_mut();
        let index = indexes
            .entry(span.file)
            .or_insert_with(|| LineIndex::new(&file.text));
        let range = index.range(span.start..span.end, self.client.encoding);
        Some(Location::new(uri.parse().ok()?, range))
    }

    pub fn document_uri(&self) -> Option<Uri> {
        self.uri.parse().ok()
    }

    /// The text of a span in any file of the analysis.
    pub fn snippet(&self, span: Span) -> &str {
        self.analysis.sources.snippet(span)
    }
}
