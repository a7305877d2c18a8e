//! `file://` URIs and paths. lsp-types' `Uri` cannot turn itself into a path, so this does
//! it: percent-decoding on the way in, percent-encoding on the way out. A document is keyed
//! by the client's own URI string everywhere else, so a URI that is not a file (an unsaved
//! `untitled:` buffer) still works, only without a path to resolve `use`s against.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The path a `file:` URI names, or `None` for any other URI.
pub fn to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // An authority other than the local host cannot be opened as a local path.
    let (host, path) = rest.split_at(rest.find('/')?);
    if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
        return None;
    }
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let bytes = decode(path)?;
    let text = String::from_utf8(bytes).ok()?;
    // `file:///C:/x` is the Windows path `C:/x`.
    let text = match text.as_bytes() {
        [b'/', drive, b':', ..] if drive.is_ascii_alphabetic() && cfg!(windows) => {
            text[1..].to_string()
        }
        _ => text,
    };
    Some(PathBuf::from(text))
}

/// The `file:` URI of an absolute path.
pub fn from_path(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut uri = String::from("file://");
    if !text.starts_with('/') {
        uri.push('/');
    }
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~:".contains(&byte) {
            uri.push(byte as char);
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri
}

fn decode(text: &str) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut input = text.bytes();
    while let Some(byte) = input.next() {
        if byte == b'%' {
            let high = (input.next()? as char).to_digit(16)?;
            let low = (input.next()? as char).to_digit(16)?;
            bytes.push((high * 16 + low) as u8);
        } else {
            bytes.push(byte);
        }
    }
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::{from_path, to_path};
    use std::path::Path;

    #[test]
    fn file_uris_decode_to_paths() {
        assert_eq!(
            to_path("file:///home/me/a%20b/caf%C3%A9.tsl"),
            Some(Path::new("/home/me/a b/café.tsl").to_path_buf())
        );
        assert_eq!(
            to_path("file://localhost/tmp/x.tsl"),
            Some(Path::new("/tmp/x.tsl").to_path_buf())
        );
        assert_eq!(to_path("untitled:Untitled-1"), None);
        assert_eq!(to_path("file://server/share/x.tsl"), None);
        assert_eq!(to_path("file:///bad%zz"), None);
    }

    #[test]
    fn paths_encode_to_uris_that_decode_back() {
        let path = Path::new("/home/me/a b/café #1.tsl");
        let uri = from_path(path);
        assert_eq!(uri, "file:///home/me/a%20b/caf%C3%A9%20%231.tsl");
        assert_eq!(to_path(&uri).as_deref(), Some(path));
    }
}
