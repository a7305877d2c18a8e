//! Positions as editors count them. TSL spans are byte offsets; an LSP position is a line and
//! a column counted in UTF-16 code units (VS Code, and the default) or in bytes (when both
//! sides agree on UTF-8). A [`LineIndex`] keeps where each line starts and, for the lines
//! that have any, where their non-ASCII characters are, so converting either way costs a
//! binary search and a walk over that line's wide characters only.
//!
//! Rules: a column past the end of its line means the end of the line; a line past the end
//! of the text means the end of the text; a position inside a character (between the two
//! halves of a surrogate pair, or inside a UTF-8 sequence) means the start of that character.
//! Lines end at `\n` only; a `\r` before it belongs to its line, as in the lexer.

use std::collections::HashMap;

use lsp_types::{Position, Range};

/// How columns are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

/// A character wider in UTF-8 than in UTF-16 (everything but ASCII), within its line.
#[derive(Clone, Copy, Debug)]
struct Wide {
    /// Byte offset from the start of the line.
    byte: u32,
    /// UTF-16 offset from the start of the line.
    utf16: u32,
    len8: u32,
    len16: u32,
}

/// Line starts and wide characters of one text.
#[derive(Clone, Debug)]
pub struct LineIndex {
    /// The byte offset where each line starts.
    starts: Vec<u32>,
    /// The wide characters of each line that has any, in order.
    wide: HashMap<u32, Vec<Wide>>,
    len: u32,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        let mut wide: HashMap<u32, Vec<Wide>> = HashMap::new();
        let mut utf16 = 0;
        for (at, c) in text.char_indices() {
            let at = offset(at);
            let line_start = *starts.last().expect("a first line");
            if c == '\n' {
                starts.push(at + 1);
                utf16 = 0;
                continue;
            }
            let (len8, len16) = (c.len_utf8() as u32, c.len_utf16() as u32);
            if len8 > 1 {
                let line = (starts.len() - 1) as u32;
                wide.entry(line).or_default().push(Wide {
                    byte: at - line_start,
                    utf16,
                    len8,
                    len16,
                });
            }
            utf16 += len16;
        }
        LineIndex {
            starts,
            wide,
            len: offset(text.len()),
        }
    }

    /// The position of a byte offset (clamped to the text).
    pub fn position(&self, byte: u32, encoding: Encoding) -> Position {
        let byte = byte.min(self.len);
        let line = self.starts.partition_point(|&start| start <= byte) - 1;
        let mut column = byte - self.starts[line];
        let wides = self.wide.get(&(line as u32)).map_or(&[][..], Vec::as_slice);
        for wide in wides {
            if wide.byte >= column {
                break;
            }
            if column < wide.byte + wide.len8 {
                // Inside a character: its start.
                column = wide.byte;
                break;
            }
        }
        if encoding == Encoding::Utf16 {
            let narrower: u32 = wides
                .iter()
                .take_while(|wide| wide.byte < column)
                .map(|wide| wide.len8 - wide.len16)
                .sum();
            column -= narrower;
        }
        Position::new(line as u32, column)
    }

    /// The byte offset of a position (clamped to its line, and to the text).
    pub fn offset(&self, position: Position, encoding: Encoding) -> u32 {
        let line = position.line as usize;
        if line >= self.starts.len() {
            return self.len;
        }
        let start = self.starts[line];
        let end = self
            .starts
            .get(line + 1)
            .map_or(self.len, |next| next - 1)
            .max(start);
        let wides = self.wide.get(&position.line).map_or(&[][..], Vec::as_slice);
        let mut column = position.character;
        match encoding {
            Encoding::Utf8 => {
                if let Some(wide) = wides
                    .iter()
                    .find(|wide| wide.byte < column && column < wide.byte + wide.len8)
                {
                    column = wide.byte;
                }
            }
            Encoding::Utf16 => {
                let mut byte = column;
                for wide in wides {
                    if wide.utf16 >= column {
                        break;
                    }
                    if column < wide.utf16 + wide.len16 {
                        byte = wide.byte;
                        break;
                    }
                    byte = column + (wide.byte - wide.utf16) + (wide.len8 - wide.len16);
                }
                column = byte;
            }
        }
        start.saturating_add(column).min(end)
    }

    /// The range of a byte range.
    pub fn range(&self, bytes: std::ops::Range<u32>, encoding: Encoding) -> Range {
        Range::new(
            self.position(bytes.start, encoding),
            self.position(bytes.end.max(bytes.start), encoding),
        )
    }
}

fn offset(at: usize) -> u32 {
    u32::try_from(at).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::{Encoding, LineIndex};
    use lsp_types::Position;
    use proptest::prelude::*;

    #[test]
    fn columns_after_non_ascii_text() {
        let text = "let é = 1\nprint(\"😀\", x)\n";
        let index = LineIndex::new(text);
        let x = text.find("x)").expect("x") as u32;
        // "print(\"" is 7 units, the emoji 2 UTF-16 units (4 bytes), then `", ` 3.
        assert_eq!(index.position(x, Encoding::Utf16), Position::new(1, 12));
        assert_eq!(index.position(x, Encoding::Utf8), Position::new(1, 14));
        assert_eq!(index.offset(Position::new(1, 12), Encoding::Utf16), x);
        let equals = text.find('=').expect("=") as u32;
        assert_eq!(index.position(equals, Encoding::Utf16), Position::new(0, 6));
        assert_eq!(index.position(equals, Encoding::Utf8), Position::new(0, 7));
    }

    #[test]
    fn positions_clamp_and_round_down() {
        let text = "a😀b\r\nsecond";
        let index = LineIndex::new(text);
        // Past the end of a line: the end of the line (the `\r` belongs to it).
        assert_eq!(index.offset(Position::new(0, 99), Encoding::Utf16), 7);
        // Past the last line: the end of the text.
        assert_eq!(index.offset(Position::new(9, 0), Encoding::Utf16), 14);
        // Between the halves of the surrogate pair: the emoji's start.
        assert_eq!(index.offset(Position::new(0, 2), Encoding::Utf16), 1);
        // Inside the emoji's UTF-8 bytes: its start.
        assert_eq!(index.position(3, Encoding::Utf16), Position::new(0, 1));
        assert_eq!(index.offset(Position::new(0, 3), Encoding::Utf8), 1);
        assert_eq!(index.position(99, Encoding::Utf8), Position::new(1, 6));
    }

    fn texts() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("a"),
            Just("xyz "),
            Just("é"),
            Just("e\u{301}"),
            Just("😀"),
            Just("中文"),
            Just("\n"),
            Just("\r\n"),
            Just("\t"),
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #[test]
        fn offsets_round_trip_at_character_boundaries(text in texts()) {
            let index = LineIndex::new(&text);
            for (at, _) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
                let at = at as u32;
                for encoding in [Encoding::Utf8, Encoding::Utf16] {
                    let position = index.position(at, encoding);
                    prop_assert_eq!(index.offset(position, encoding), at);
                }
                // The UTF-16 column is the length of the line's prefix in UTF-16.
                let line_start = text[..at as usize].rfind('\n').map_or(0, |n| n + 1);
                let prefix = &text[line_start..at as usize];
                let position = index.position(at, Encoding::Utf16);
                prop_assert_eq!(position.character as usize, prefix.encode_utf16().count());
                prop_assert_eq!(
                    position.line as usize,
                    text[..at as usize].matches('\n').count()
                );
            }
        }
    }
}
