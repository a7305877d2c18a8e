//! The documents the client has open: their text as the client last sent it (full sync),
//! its version, and a line index over it.

use std::collections::HashMap;
use std::path::PathBuf;

use super::lines::LineIndex;
use super::uri;
use crate::source::Overlay;

/// One open document.
pub struct Document {
    pub text: String,
    pub version: i32,
    pub index: LineIndex,
    /// Where it lives on disk, for a `file:` URI.
    pub path: Option<PathBuf>,
}

impl Document {
    pub fn new(uri: &str, text: String, version: i32) -> Document {
        Document {
            index: LineIndex::new(&text),
            path: uri::to_path(uri).map(|path| crate::source::normalize(&path)),
            text,
            version,
        }
    }

    /// Replaces the text (a full-sync change).
    pub fn replace(&mut self, text: String, version: i32) {
        self.index = LineIndex::new(&text);
        self.text = text;
        self.version = version;
    }

    /// The name diagnostics show for the document: its path, or its URI when it has none.
    pub fn name(&self, uri: &str) -> String {
        self.path
            .as_ref()
            .map_or_else(|| uri.to_string(), |path| path.display().to_string())
    }
}

/// The open documents by the client's URI string.
#[derive(Default)]
pub struct Documents {
    open: HashMap<String, Document>,
}

impl Documents {
    pub fn get(&self, uri: &str) -> Option<&Document> {
        self.open.get(uri)
    }

    pub fn get_mut(&mut self, uri: &str) -> Option<&mut Document> {
        self.open.get_mut(uri)
    }

    pub fn open(&mut self, uri: String, document: Document) {
        self.open.insert(uri, document);
    }

    pub fn close(&mut self, uri: &str) -> Option<Document> {
        self.open.remove(uri)
    }

    /// The unsaved text of every open document that is a file: what analyses read instead of
    /// the disk.
    pub fn overlay(&self) -> Overlay {
        let mut overlay = Overlay::new();
        for document in self.open.values() {
            if let Some(path) = &document.path {
                overlay.insert(path.clone(), document.text.clone());
            }
        }
        overlay
    }
}
