//! Vectors of Z_2^ℓ (ℓ = 8, 16, 32, 64) held in `u64`s and computed on modulo 2^64, which
//! reduces to the right value modulo 2^ℓ; reduced where they leave the party.

/// The ring sizes a value may have.
pub const RING_BITS: [u32; 4] = [8, 16, 32, 64];

/// The mask of the low `bits` bits.
pub(crate) fn mask(bits: u32) -> u64 {
    if bits >= 64 { !0 } else { (1 << bits) - 1 }
}

/// Bytes per element on the wire.
pub(crate) fn bytes_per(bits: u32) -> usize {
    bits as usize / 8
}

/// Appends the elements, `bits / 8` little-endian bytes each.
pub(crate) fn put(v: &[u64], bits: u32, out: &mut Vec<u8>) {
    let per = bytes_per(bits);
    for x in v {
        out.extend_from_slice(&x.to_le_bytes()[..per]);
    }
}

/// Reads `out.len()` elements of `bits / 8` bytes each.
pub(crate) fn get(bytes: &[u8], bits: u32, out: &mut [u64]) {
    let per = bytes_per(bits);
    for (x, b) in out.iter_mut().zip(bytes.chunks_exact(per)) {
        let mut w = [0u8; 8];
        w[..per].copy_from_slice(b);
        *x = u64::from_le_bytes(w);
    }
}

/// The index of `bits` in [`RING_BITS`].
pub(crate) fn index(bits: u32) -> usize {
    RING_BITS.iter().position(|&b| b == bits).unwrap_or(3)
}
