//! Opaque cursors over deterministically ordered lists.
//!
//! A cursor encodes the last key of the previous page (Base64 of
//! `v1:<key>`), not an index, so a page stays correct when items are added or
//! removed between requests: the next page starts after that key.

use base64::Engine;

use crate::error::ProtocolError;

const TAG: &str = "v1:";

/// Encodes the cursor that resumes after `last_key`.
pub fn encode_cursor(last_key: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{TAG}{last_key}"))
}

/// Decodes a cursor into the key it resumes after.
pub fn decode_cursor(cursor: &str) -> Result<String, ProtocolError> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| ProtocolError::InvalidCursor(cursor.to_owned()))?;
    String::from_utf8(bytes)
        .ok()
        .and_then(|s| s.strip_prefix(TAG).map(str::to_owned))
        .ok_or_else(|| ProtocolError::InvalidCursor(cursor.to_owned()))
}

/// One page of an ordered list.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    /// The items of this page.
    pub items: Vec<T>,
    /// The cursor of the next page, if there is one.
    pub next_cursor: Option<String>,
}

/// Takes the page after `cursor` from items sorted by `key`.
pub fn paginate<T: Clone>(
    sorted: &[T],
    key: impl Fn(&T) -> &str,
    cursor: Option<&str>,
    page_size: usize,
) -> Result<Page<T>, ProtocolError> {
    let start = match cursor {
        None => 0,
        Some(c) => {
            let after = decode_cursor(c)?;
            sorted.partition_point(|item| key(item) <= after.as_str())
        }
    };
    let page_size = page_size.max(1);
    let end = (start + page_size).min(sorted.len());
    let items = sorted[start..end].to_vec();
    let next_cursor = (end < sorted.len()).then(|| encode_cursor(key(&sorted[end - 1])));
    Ok(Page { items, next_cursor })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_all_pages_in_order() {
        let items: Vec<String> = (0..25).map(|i| format!("item{i:02}")).collect();
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let page = paginate(&items, |s| s.as_str(), cursor.as_deref(), 10).unwrap();
            seen.extend(page.items);
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(seen, items);
    }

    #[test]
    fn bad_cursor_is_invalid_params() {
        let items = vec!["a".to_string()];
        assert!(matches!(paginate(&items, |s| s.as_str(), Some("%%%"), 10), Err(ProtocolError::InvalidCursor(_))));
        let not_ours = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("hello");
        assert!(paginate(&items, |s| s.as_str(), Some(&not_ours), 10).is_err());
    }
}
