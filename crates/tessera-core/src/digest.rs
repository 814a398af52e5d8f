//! Domain-separated SHA-256 of lists of byte strings: the one commitment and transcript hash
//! of the protocols above (oblivious AES, authenticated garbling, KOS's coin), so that no two
//! uses hash alike and no two lists of parts do (each part is prefixed by its length).

use sha2::{Digest, Sha256};

/// SHA-256 of `domain` and `parts`, each prefixed by its length as a little-endian `u64`.
pub fn tagged(domain: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for part in std::iter::once(&domain).chain(parts) {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.finalize().into()
}

/// A commitment to `parts` in `domain`, hiding them behind `nonce` (at least 128 uniformly
/// random bits, never reused; a random value among the parts may serve) and binding under
/// SHA-256's collision resistance: [`tagged`] of the nonce, then the parts.
pub fn commit(domain: &[u8], nonce: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let all: Vec<&[u8]> = std::iter::once(nonce)
        .chain(parts.iter().copied())
        .collect();
    tagged(domain, &all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_and_part_boundaries_are_kept_apart() {
        assert_ne!(tagged(b"a", &[b"b"]), tagged(b"b", &[b"b"]));
        assert_ne!(tagged(b"d", &[b"ab", b"c"]), tagged(b"d", &[b"a", b"bc"]));
        assert_ne!(tagged(b"d", &[b"ab"]), tagged(b"dab", &[]));
        assert_eq!(commit(b"d", b"n", &[b"x"]), tagged(b"d", &[b"n", b"x"]));
    }
}
