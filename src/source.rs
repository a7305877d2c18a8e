//! Source files, byte spans and line/column lookup.
//!
//! Every span in TSL is a byte range into one file of a [`SourceMap`]. Line and column numbers
//! are computed only when a diagnostic is rendered.

use std::fmt;
use std::path::PathBuf;

/// U+FEFF, which opens some files saved on Windows: the lexer skips it there, and it takes no
/// column.
pub const BYTE_ORDER_MARK: char = '\u{feff}';

/// Identifies one file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A byte range `start..end` in one source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: clamp_offset(start),
            end: clamp_offset(end.max(start)),
        }
    }

    /// The smallest span covering both `self` and `other` (same file assumed).
    #[must_use]
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

fn clamp_offset(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or(u32::MAX)
}

/// One loaded file: its display name, text, and the byte offset where each line starts.
#[derive(Debug)]
pub struct SourceFile {
    pub name: String,
    /// Where the file lives on disk, used to resolve `use "relative.tsl"`; `None` for std and REPL cells.
    pub path: Option<PathBuf>,
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    fn new(name: String, path: Option<PathBuf>, text: String) -> SourceFile {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(at, _)| at + 1))
            .collect();
        SourceFile {
            name,
            path,
            text,
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_column(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let line_start = self.line_starts[line];
        let prefix = self.text.get(line_start..offset);
        // A byte order mark opening the file takes no column, as in editors.
        let prefix = prefix.map(|prefix| match prefix.strip_prefix(BYTE_ORDER_MARK) {
            Some(rest) if line == 0 => rest,
            _ => prefix,
        });
        let column = prefix.map_or(offset - line_start, |prefix| prefix.chars().count());
        (line + 1, column + 1)
    }

    pub fn snippet(&self, span: Span) -> &str {
        self.text.get(span.range()).unwrap_or("")
    }
}

/// All files of one session: the script, the modules it uses, std modules and REPL cells.
#[derive(Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    pub fn add(&mut self, name: impl Into<String>, path: Option<PathBuf>, text: String) -> FileId {
        let id = FileId(u32::try_from(self.files.len()).expect("fewer than 2^32 files"));
        self.files.push(SourceFile::new(name.into(), path, text));
        id
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(index, file)| (FileId(index as u32), file))
    }

    /// `file:line:column` of a span's start, as logs and notes print it.
    pub fn location(&self, span: Span) -> Location<'_> {
        let file = self.get(span.file);
        let (line, column) = file.line_column(span.start as usize);
        Location {
            name: &file.name,
            line,
            column,
        }
    }

    pub fn snippet(&self, span: Span) -> &str {
        self.get(span.file).snippet(span)
    }
}

/// Unsaved text that stands in for files on disk: the buffers an editor has open. Reading a
/// file through an overlay gives its text here when there is one, so a script and the modules
/// it uses are checked as they are being edited.
#[derive(Clone, Debug, Default)]
pub struct Overlay {
    files: std::collections::HashMap<PathBuf, String>,
}

impl Overlay {
    pub fn new() -> Overlay {
        Overlay::default()
    }

    /// Sets the text of the file at `path` (an absolute path).
    pub fn insert(&mut self, path: PathBuf, text: String) {
        let key = Overlay::key(&path);
        self.files.insert(key, text);
    }

    pub fn remove(&mut self, path: &std::path::Path) {
        self.files.remove(&Overlay::key(path));
    }

    /// The overlaid text of `path`, if any.
    pub fn get(&self, path: &std::path::Path) -> Option<&str> {
        if self.files.is_empty() {
            return None;
        }
        self.files.get(&Overlay::key(path)).map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The same key for every spelling of a path: resolved through the file system when the
    /// file exists (symbolic links, `..`), else with `.` and `..` removed lexically.
    fn key(path: &std::path::Path) -> PathBuf {
        std::fs::canonicalize(path).unwrap_or_else(|_| normalize(path))
    }
}

/// A path with `.` and `..` components resolved lexically.
pub fn normalize(path: &std::path::Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir if normal.file_name().is_some() => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal
}

/// A printable `file:line:column`.
pub struct Location<'a> {
    pub name: &'a str,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.name, self.line, self.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based_and_count_characters() {
        let mut map = SourceMap::new();
        let id = map.add("a.tsl", None, "let x = 1\nlet é = 2\n".to_string());
        let file = map.get(id);
        assert_eq!(file.line_column(0), (1, 1));
        assert_eq!(file.line_column(4), (1, 5));
        assert_eq!(file.line_column(10), (2, 1));
        // "é" is two bytes: the '=' after it is the 7th character of line 2.
        let eq = file.text.rfind('=').unwrap();
        assert_eq!(file.line_column(eq), (2, 7));
        assert_eq!(map.location(Span::new(id, 10, 13)).to_string(), "a.tsl:2:1");
    }

    #[test]
    fn an_overlay_matches_every_spelling_of_a_path() {
        let mut overlay = Overlay::new();
        overlay.insert(PathBuf::from("/no/such/dir/a.tsl"), "let x = 1".to_string());
        let spelled = std::path::Path::new("/no/such/./dir/b/../a.tsl");
        assert_eq!(overlay.get(spelled), Some("let x = 1"));
        assert_eq!(
            overlay.get(std::path::Path::new("/no/such/dir/b.tsl")),
            None
        );
        overlay.remove(spelled);
        assert!(overlay.is_empty());
    }

    #[test]
    fn offsets_past_the_end_are_clamped() {
        let mut map = SourceMap::new();
        let id = map.add("b", None, "ab".to_string());
        assert_eq!(map.get(id).line_column(99), (1, 3));
    }

    #[test]
    fn a_byte_order_mark_takes_no_column() {
        let mut map = SourceMap::new();
        let id = map.add("c", None, "\u{feff}let x = 1\n\u{feff}y".to_string());
        let file = map.get(id);
        assert_eq!(file.line_column(3), (1, 1));
        assert_eq!(file.line_column(7), (1, 5));
        // Only the mark that opens the file: one later is a character like any other.
        assert_eq!(file.line_column(file.text.len() - 1), (2, 2));
    }
}
