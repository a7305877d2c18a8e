//! Renderers for diagnostics: ariadne for people, one JSON object per line for tools.
//!
//! This is the only module that imports ariadne.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::io::{self, Write};

use ariadne::{Cache, Color, Config, IndexType, Label as AriadneLabel, Report, ReportKind, Source};
use serde_json::json;

use super::{Diagnostic, FrameKind, Severity};
use crate::source::{FileId, SourceMap, Span};

/// How diagnostics are written to stderr (`--error-format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Human,
    Json,
}

/// Writes one diagnostic in the chosen format.
pub fn write(
    out: &mut dyn Write,
    sources: &SourceMap,
    diagnostic: &Diagnostic,
    format: Format,
    color: bool,
) -> io::Result<()> {
    match format {
        Format::Human => write_human(out, sources, diagnostic, color),
        Format::Json => writeln!(out, "{}", to_json(sources, diagnostic)),
    }
}

/// Removes ANSI escape sequences (ariadne colours custom report headers even when asked not to).
fn strip_escapes(text: &[u8]) -> Vec<u8> {
    let mut plain = Vec::with_capacity(text.len());
    let mut bytes = text.iter().copied().peekable();
    while let Some(byte) = bytes.next() {
        if byte == 0x1b && bytes.peek() == Some(&b'[') {
            for inner in bytes.by_ref() {
                if inner.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(byte);
        }
    }
    plain
}

/// Renders a diagnostic for people, without colour (what snapshots and tests compare).
pub fn to_text(sources: &SourceMap, diagnostic: &Diagnostic) -> String {
    let mut buffer = Vec::new();
    write_human(&mut buffer, sources, diagnostic, false).expect("writing to a Vec cannot fail");
    String::from_utf8_lossy(&buffer).into_owned()
}

fn write_human(
    out: &mut dyn Write,
    sources: &SourceMap,
    diagnostic: &Diagnostic,
    color: bool,
) -> io::Result<()> {
    let header = format!("{}[{}]", diagnostic.severity.as_str(), diagnostic.code);
    let Some(span) = diagnostic.span else {
        return write_plain(out, &header, diagnostic, None);
    };
    if touches_long_line(sources, diagnostic) {
        return write_plain(out, &header, diagnostic, Some(excerpt(sources, span)));
    }
    let kind_color = match diagnostic.severity {
        Severity::Error => Color::Red,
        Severity::Warning => Color::Yellow,
        Severity::Note => Color::Cyan,
    };
    let config = Config::default()
        .with_color(color)
        .with_index_type(IndexType::Byte);
    let mut report = Report::build(ReportKind::Custom(&header, kind_color), at(span))
        .with_config(config)
        .with_message(&diagnostic.message)
        .with_label(primary_label(diagnostic, span, color));
    for label in &diagnostic.secondary {
        report = report.with_label(AriadneLabel::new(at(label.span)).with_message(&label.message));
    }
    for (depth, frame) in diagnostic.trace.iter().enumerate() {
        let message = match (frame.kind, frame.repeated) {
            (FrameKind::Use, _) => format!("while running `{}`, used here", frame.function),
            (FrameKind::Call, 1) => format!("in this call of `{}`", frame.function),
            (FrameKind::Call, count) => {
                format!("in {count} nested calls of `{}`", frame.function)
            }
        };
        report = report.with_label(
            AriadneLabel::new(at(frame.call_site))
                .with_message(message)
                .with_order(i32::try_from(depth + 1).unwrap_or(i32::MAX)),
        );
    }
    for note in &diagnostic.notes {
        report = report.with_note(note);
    }
    if let Some(help) = &diagnostic.help {
        report = report.with_help(help);
    }
    if color {
        return report.finish().write(SourceCache::new(sources), out);
    }
    let mut buffer = Vec::new();
    report
        .finish()
        .write(SourceCache::new(sources), &mut buffer)?;
    out.write_all(&strip_escapes(&buffer))
}

/// Lines longer than this are not echoed whole; the diagnostic shows an excerpt instead.
const MAX_LINE: usize = 400;

fn touches_long_line(sources: &SourceMap, diagnostic: &Diagnostic) -> bool {
    let spans = diagnostic
        .span
        .into_iter()
        .chain(diagnostic.secondary.iter().map(|label| label.span))
        .chain(diagnostic.trace.iter().map(|frame| frame.call_site));
    spans.into_iter().any(|span| {
        let text = &sources.get(span.file).text;
        let start = text[..span.start as usize]
            .rfind('\n')
            .map_or(0, |at| at + 1);
        let end = text[span.end as usize..]
            .find('\n')
            .map_or(text.len(), |at| span.end as usize + at);
        end - start > MAX_LINE
    })
}

/// `file:line:column` and up to 60 characters of its line from shortly before the start of
/// `span`.
fn excerpt(sources: &SourceMap, span: Span) -> String {
    let text = &sources.get(span.file).text;
    let start = span.start as usize;
    let line_start = text[..start].rfind('\n').map_or(0, |at| at + 1);
    let from = text[line_start..start]
        .char_indices()
        .rev()
        .take(20)
        .last()
        .map_or(start, |(at, _)| line_start + at);
    let shown: String = text[from..]
        .chars()
        .take_while(|c| *c != '\n')
        .take(60)
        .collect();
    format!("{}\n   | …{shown}…", sources.location(span))
}

/// The diagnostic without a source excerpt (no span, or a line too long to echo).
fn write_plain(
    out: &mut dyn Write,
    header: &str,
    diagnostic: &Diagnostic,
    location: Option<String>,
) -> io::Result<()> {
    writeln!(out, "{header}: {}", diagnostic.message)?;
    if let Some(location) = location {
        writeln!(out, "  --> {location}")?;
    }
    for note in &diagnostic.notes {
        writeln!(out, "  = note: {note}")?;
    }
    if let Some(help) = &diagnostic.help {
        writeln!(out, "  = help: {help}")?;
    }
    Ok(())
}

fn primary_label(diagnostic: &Diagnostic, span: Span, color: bool) -> AriadneLabel<AriadneSpan> {
    let label = AriadneLabel::new(at(span)).with_order(0);
    let label = if color {
        label.with_color(Color::Red)
    } else {
        label
    };
    let message = diagnostic
        .label
        .as_deref()
        .unwrap_or_else(|| diagnostic.code.default_label());
    label.with_message(message)
}

type AriadneSpan = (FileId, std::ops::Range<usize>);

fn at(span: Span) -> AriadneSpan {
    (span.file, span.range())
}

/// Serves the session's files to ariadne, converting each only once.
struct SourceCache<'a> {
    sources: &'a SourceMap,
    converted: HashMap<FileId, Source<Cow<'a, str>>>,
}

impl<'a> SourceCache<'a> {
    fn new(sources: &'a SourceMap) -> SourceCache<'a> {
        SourceCache {
            sources,
            converted: HashMap::new(),
        }
    }
}

impl<'a> Cache<FileId> for SourceCache<'a> {
    type Storage = Cow<'a, str>;

    fn fetch(&mut self, id: &FileId) -> Result<&Source<Cow<'a, str>>, impl fmt::Debug> {
        let sources = self.sources;
        Ok::<_, ()>(
            self.converted
                .entry(*id)
                .or_insert_with(|| Source::from(with_tsl_lines(&sources.get(*id).text))),
        )
    }

    fn display<'b>(&self, id: &'b FileId) -> Option<impl fmt::Display + 'b> {
        Some(self.sources.get(*id).name.clone())
    }
}

/// `text` with TSL's line ends only. ariadne also ends lines at a lone `\r`, vertical tab,
/// form feed, U+0085, U+2028 and U+2029, which TSL reads as spaces or as characters of a
/// comment, a string or an error: each becomes a character of the same UTF-8 length that ends
/// no line, so that byte offsets still point at the same places and the line numbers shown
/// are those of the JSON output, the language server and the editor.
fn with_tsl_lines(text: &str) -> Cow<'_, str> {
    let ends_a_line = |c: char| matches!(c, '\x0B' | '\x0C' | '\u{85}' | '\u{2028}' | '\u{2029}');
    let lone_return = |at: usize| text.as_bytes().get(at + 1) != Some(&b'\n');
    let needs_change = text
        .char_indices()
        .any(|(at, c)| ends_a_line(c) || (c == '\r' && lone_return(at)));
    if !needs_change {
        return Cow::Borrowed(text);
    }
    let shown = text.char_indices().map(|(at, c)| match c {
        '\r' if lone_return(at) => ' ',
        '\x0B' | '\x0C' => ' ',
        '\u{85}' => '\u{A0}',
        '\u{2028}' | '\u{2029}' => '\u{2424}',
        other => other,
    });
    Cow::Owned(shown.collect())
}

/// The JSON object of spec §7 for one diagnostic (lines and columns 1-based).
pub fn to_json(sources: &SourceMap, diagnostic: &Diagnostic) -> serde_json::Value {
    let primary = diagnostic.span.map(|span| position(sources, span));
    let labels: Vec<_> = diagnostic
        .secondary
        .iter()
        .map(|label| {
            let mut object = position(sources, label.span);
            object["message"] = json!(label.message);
            object
        })
        .collect();
    let trace: Vec<_> = diagnostic
        .trace
        .iter()
        .map(|frame| {
            let mut object = position(sources, frame.call_site);
            object["function"] = json!(frame.function);
            object["repeated"] = json!(frame.repeated);
            object["kind"] = json!(match frame.kind {
                FrameKind::Call => "call",
                FrameKind::Use => "use",
            });
            object
        })
        .collect();
    let field = |name: &str| primary.as_ref().map_or(json!(null), |p| p[name].clone());
    json!({
        "severity": diagnostic.severity.as_str(),
        "code": diagnostic.code.as_str(),
        "message": diagnostic.message,
        "file": field("file"),
        "line": field("line"),
        "column": field("column"),
        "end_line": field("end_line"),
        "end_column": field("end_column"),
        "label": diagnostic.label,
        "labels": labels,
        "notes": diagnostic.notes,
        "help": diagnostic.help,
        "trace": trace,
    })
}

fn position(sources: &SourceMap, span: Span) -> serde_json::Value {
    let file = sources.get(span.file);
    let (line, column) = file.line_column(span.start as usize);
    let (end_line, end_column) = file.line_column(span.end as usize);
    json!({
        "file": file.name,
        "line": line,
        "column": column,
        "end_line": end_line,
        "end_column": end_column,
    })
}
