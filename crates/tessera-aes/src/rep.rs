//! One party's share of a MiniMac representation (Damgård, Zakarias, TCC 2013; their "Fast
//! Oblivious AES", §"The MiniMac protocol"): additive shares of a codeword C(x)
//! of the data vector x and of its MAC α ∗ C(x), where α ∈ GF(2^8)^255 is the global MAC key,
//! itself shared additively, and ∗ the coordinate-wise product. Sums of representations and
//! public constants are local; opening sends the codeword share only, and the MACs are
//! checked later, in a batch, before any output ([`crate::online`]).

use crate::code::N;
use tessera_core::gf256;

/// Bytes of one share of a representation: the codeword share, then the MAC share.
pub const REP_BYTES: usize = 2 * N;

/// One party's share of a representation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Rep {
    /// The share of the codeword.
    pub word: [u8; N],
    /// The share of its MAC.
    pub mac: [u8; N],
}

impl std::fmt::Debug for Rep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rep(..)")
    }
}

impl Default for Rep {
    fn default() -> Self {
        Rep::ZERO
    }
}

impl Rep {
    /// The zero share.
    pub const ZERO: Rep = Rep {
        word: [0; N],
        mac: [0; N],
    };

    /// Adds another share.
    pub fn add(&mut self, other: &Rep) {
        xor(&mut self.word, &other.word);
        xor(&mut self.mac, &other.mac);
    }

    /// Adds a share stored as [`REP_BYTES`] bytes.
    ///
    /// # Panics
    /// If `bytes` is shorter.
    pub fn add_bytes(&mut self, bytes: &[u8]) {
        let (w, m) = bytes[..REP_BYTES].split_at(N);
        xor(&mut self.word, w);
        xor(&mut self.mac, m);
    }

    /// Adds the public codeword `c`: party 0 adds it to its codeword share, every party adds
    /// α_i ∗ c to its MAC share.
    pub fn add_public(&mut self, c: &[u8; N], party: usize, alpha: &[u8; N]) {
        if party == 0 {
            xor(&mut self.word, c);
        }
        gf256::fma(&mut self.mac, alpha, c);
    }

    /// The share as bytes.
    pub fn to_bytes(&self, out: &mut [u8]) {
        out[..N].copy_from_slice(&self.word);
        out[N..REP_BYTES].copy_from_slice(&self.mac);
    }
}

/// `a ^= b`, element by element.
pub fn xor(a: &mut [u8], b: &[u8]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x ^= y;
    }
}
