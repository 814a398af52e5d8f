//! Circuits built with [`crate::builder`], by name: what `tessera circuit info|eval` and the
//! garbling benchmark accept besides a file.
//!
//! | name | inputs (value 0 ; value 1) | output | AND gates |
//! |---|---|---|---|
//! | `aes128` | key 128 ; plaintext 128 | ciphertext 128 | 6400 |
//! | `aes128-expanded` | round keys 1408 (FIPS-197 §5.2, round 0 first) ; plaintext 128 | ciphertext 128 | 5120 |
//! | `sha256` | message block 512 ; chaining value 256 | new chaining value 256 | 22 573 |
//! | `sha256-lowdepth` | as `sha256`, carry-save and parallel-prefix adders | as `sha256` | more, at a fraction of the depth |
//! | `sha1` | message block 512 ; chaining value 160 | new chaining value 160 | 11 215 |
//! | `sha1-512` | the message's first 256 bits ; its last 256 | SHA-1 digest 160 of the 512-bit message (two compressions, the padding block constant) | 19 757 |
//! | `add<n>`, `sub<n>` | a n ; b n | a ± b mod 2^n | n − 1 |
//! | `addpp<n>` | a n ; b n | a + b mod 2^n, parallel prefix: AND-depth 1 + ⌈log₂(n − 1)⌉ | about (n/2)·log₂ n |
//! | `msbadd<n>` | a n ; b n | the most significant bit of a + b mod 2^n (1 bit): AND-depth 1 + ⌈log₂(n − 1)⌉ | fewer than 3n |
//! | `mul<n>` | a n ; b n | a · b mod 2^n | about n² |
//! | `lt<n>`, `lts<n>` | a n ; b n | a < b, unsigned / signed (1 bit) | n |
//! | `eq<n>` | a n ; b n | a = b (1 bit) | n − 1 |
//! | `biomatch` | [`ultrasfe::biomatch`] with n = 512, d = 4, b = 64, distances wrapping at 64 bits | | | |
//! | `biomatch-exact` | [`ultrasfe::BioMatch::TABLE2`]: the same with exact 130-bit distances (UltraSFE Table 2's size) | | | |
//! | `mexp` | [`ultrasfe::mexp`] with k = 32, b = 32 | | | |
//! | `mvmul` | [`ultrasfe::mvmul`] with 16 × 16, b = 64 | | | |
//! | `levels<w>` | [`ultrasfe::levels`]: depth 1000, width w | | | 1000·w |
//!
//! Integers are least significant bit first; `n` is 1 to 4096. The byte-oriented circuits take
//! and give bytes in their standard's order, bit k of a value being bit (k mod 8) of byte
//! (k div 8): the hex strings of `tessera circuit eval` are then the standard's own hex.

mod aes;
pub mod psi;
mod sha;
pub mod ultrasfe;
pub mod vasa;

pub use aes::{aes128, aes128_expanded};
pub use sha::{
    Adders, SHA256_IV, sha1_512, sha1_compress, sha256_compress, sha256_compress_with,
    sha256_final_blocks,
};

use crate::builder::{Builder, Signedness};
use crate::{Circuit, Error};

/// The names [`builtin`] knows, for help texts (`<n>`: a width).
pub const NAMES: &str = "aes128, aes128-expanded, sha256, sha256-lowdepth, sha1, sha1-512, biomatch, biomatch-exact, mexp, mvmul, add<n>, addpp<n>, msbadd<n>, sub<n>, mul<n>, lt<n>, lts<n>, eq<n>, levels<w>";

/// Depth of the `levels<w>` circuits (UltraSFE Figure 5).
pub const LEVELS_DEPTH: usize = 1000;

/// The built-in circuit called `name`, or `None` if there is none by that name.
pub fn builtin(name: &str) -> Option<Result<Circuit, Error>> {
    match name {
        "aes128" => return Some(aes128()),
        "aes128-expanded" => return Some(aes128_expanded()),
        "sha256" => return Some(sha256_compress()),
        "sha256-lowdepth" => return Some(sha256_compress_with(Adders::LowDepth)),
        "sha1" => return Some(sha1_compress()),
        "sha1-512" => return Some(sha1_512()),
        "biomatch" => return Some(ultrasfe::biomatch(512, 4, 64)),
        "biomatch-exact" => return Some(ultrasfe::BioMatch::TABLE2.circuit()),
        "mexp" => return Some(ultrasfe::mexp(32, 32)),
        "mvmul" => return Some(ultrasfe::mvmul(16, 16, 64)),
        _ => {}
    }
    let split = name.find(|c: char| c.is_ascii_digit())?;
    let (op, width) = name.split_at(split);
    let n: u32 = width.parse().ok().filter(|n| (1..=4096).contains(n))?;
    if op == "levels" {
        return Some(ultrasfe::levels(n as usize, LEVELS_DEPTH, 0x5eed));
    }
    let mut g = Builder::new();
    let (a, b) = (g.input(n), g.input(n));
    let out = match op {
        "add" => g.add(&a, &b),
        "addpp" => g.add_prefix(&a, &b),
        "msbadd" => vec![g.sum_msb(&a, &b)],
        "sub" => g.sub(&a, &b),
        "mul" => g.mul(&a, &b),
        "lt" => vec![g.lt(&a, &b, Signedness::Unsigned)],
        "lts" => vec![g.lt(&a, &b, Signedness::Signed)],
        "eq" => vec![g.eq(&a, &b)],
        _ => return None,
    };
    Some(g.finish(&[out]))
}

/// A byte string's bits as circuit bits (byte j bit k at 8j + k) grouped into big-endian
/// 32-bit words, each least significant bit first.
fn be_words(bytes: &[crate::builder::Bit]) -> Vec<Vec<crate::builder::Bit>> {
    bytes
        .chunks(32)
        .map(|w| (0..32).map(|i| w[8 * (3 - i / 8) + i % 8]).collect())
        .collect()
}

/// The inverse of [`be_words`].
fn from_be_words(words: &[Vec<crate::builder::Bit>]) -> Vec<crate::builder::Bit> {
    words
        .iter()
        .flat_map(|w| (0..32).map(move |j| w[8 * (3 - j / 8) + j % 8]))
        .collect()
}

#[cfg(test)]
mod tests;
