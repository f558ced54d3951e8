//! Paging of the lists: [`Paged`] items of one kind with a fingerprint of their keys, and
//! opaque cursors ([`page_of`]) that a change of the list (or of what the catalog enables, or of
//! the caller's scopes) makes stale.

use std::hash::{DefaultHasher, Hash, Hasher};

use base64::Engine as _;

use super::items::Listed;

/// Items of one kind, sorted, with a fingerprint of their keys that makes stale cursors invalid.
pub(crate) struct Paged<T> {
    pub(crate) items: Vec<T>,
    fingerprint: u64,
}

impl<T> Paged<T> {
    pub(super) fn new(items: Vec<T>, key: impl Fn(&T) -> &str) -> Self {
        let mut hasher = DefaultHasher::new();
        items.iter().for_each(|t| key(t).hash(&mut hasher));
        Paged {
            items,
            fingerprint: hasher.finish(),
        }
    }

    /// The page starting at `cursor`, and the cursor of the next one; `None` for a bad cursor.
    pub(crate) fn page(
        &self,
        cursor: Option<&str>,
        page_size: usize,
    ) -> Option<(&[T], Option<String>)> {
        page_of(&self.items, self.fingerprint, cursor, page_size)
    }
}

impl<T: Listed> Paged<T> {
    /// Like [`page`](Self::page), over the items `catalog` has not disabled and, for a
    /// caller whose lists hide what it may not use, those whose scopes it has.
    pub(crate) fn page_enabled(
        &self,
        catalog: &crate::catalog::Catalog,
        caller: Option<&crate::auth::Principal>,
        cursor: Option<&str>,
        page_size: usize,
    ) -> Option<(Vec<&T>, Option<String>)> {
        let generation = catalog.generation();
        let hiding = caller.filter(|p| p.hides_unauthorized());
        if generation == 0 && hiding.is_none() {
            let (items, next) = self.page(cursor, page_size)?;
            return Some((items.iter().collect(), next));
        }
        let visible: Vec<&T> = self
            .items
            .iter()
            .filter(|t| t.enabled(catalog))
            .filter(|t| hiding.is_none_or(|p| p.missing(t.scopes()).is_empty()))
            .collect();
        // Cursors from before an enable/disable, or of a caller with other scopes, are stale.
        let mut fingerprint = self.fingerprint ^ generation.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        if let Some(p) = hiding {
            fingerprint ^= p.scopes_fingerprint();
        }
        let (items, next) = page_of(&visible, fingerprint, cursor, page_size)?;
        Some((items.to_vec(), next))
    }
}

/// Opaque-cursor pagination over any slice: a cursor is an offset tied to a fingerprint.
pub(crate) fn page_of<'a, T>(
    items: &'a [T],
    fingerprint: u64,
    cursor: Option<&str>,
    page_size: usize,
) -> Option<(&'a [T], Option<String>)> {
    let start = match cursor {
        None | Some("") => 0,
        Some(c) => decode_cursor(c, fingerprint, items.len())?,
    };
    let end = start.saturating_add(page_size.max(1)).min(items.len());
    let next = (end < items.len()).then(|| encode_cursor(end, fingerprint));
    Some((&items[start..end], next))
}

fn encode_cursor(offset: usize, fingerprint: u64) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{offset}:{fingerprint:016x}"))
}

fn decode_cursor(cursor: &str, fingerprint: u64, len: usize) -> Option<usize> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let (offset, print) = text.split_once(':')?;
    let offset: usize = offset.parse().ok()?;
    (u64::from_str_radix(print, 16).ok()? == fingerprint && offset < len).then_some(offset)
}

#[cfg(test)]
mod tests {
    use super::page_of;

    #[test]
    fn cursors_are_opaque_checked_and_bounded() {
        let items: Vec<u32> = (0..5).collect();
        let (page, next) = page_of(&items, 7, None, 2).unwrap();
        assert_eq!(page, [0, 1]);
        let next = next.unwrap();
        assert_eq!(page_of(&items, 7, Some(&next), 2).unwrap().0, [2, 3]);
        assert!(
            page_of(&items, 8, Some(&next), 2).is_none(),
            "another list's cursor"
        );
        assert!(page_of(&items, 7, Some("bogus"), 2).is_none());
        assert_eq!(
            page_of(&items, 7, Some(&next), usize::MAX).unwrap().0,
            [2, 3, 4]
        );
    }
}
