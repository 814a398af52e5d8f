//! The SHA-256 and SHA-1 compression functions (FIPS 180-4 §6.2.2 and §6.1.2): one 512-bit
//! message block folded into a chaining value. Ch is g ⊕ e ∧ (f ⊕ g) and Maj
//! a ⊕ (a ⊕ b) ∧ (a ⊕ c): one AND per bit each. Additions are ripple-carry with one AND per bit
//! ([`Adders::Ripple`], fewest AND gates), or carry-save compressors and a parallel-prefix adder
//! ([`Adders::LowDepth`], for protocols that pay a round per AND layer): SHA-256's AND-depth
//! falls from 1607 to the figure its test states.

use super::{be_words, from_be_words};
use crate::builder::{Bit, Builder};
use crate::{Circuit, Error};

type Word = Vec<Bit>;

/// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first
/// 64 primes.
const K256: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// FIPS 180-4 §4.2.1.
const K1: [u32; 4] = [0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xca62c1d6];

fn konst(v: u32) -> Word {
    Builder::constant(u128::from(v), 32)
}

fn xor3(g: &mut Builder, a: &[Bit], b: &[Bit], c: &[Bit]) -> Word {
    let ab = g.xor_bits(a, b);
    g.xor_bits(&ab, c)
}

/// How a circuit adds words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adders {
    /// One ripple-carry adder per pair: n − 1 AND gates and AND-depth per addition.
    Ripple,
    /// Carry-save compressors into one parallel-prefix adder per sum
    /// ([`Builder::add_many`]).
    LowDepth,
}

fn sum(g: &mut Builder, terms: &[&[Bit]], adders: Adders) -> Word {
    match adders {
        Adders::Ripple => terms[1..]
            .iter()
            .fold(terms[0].to_vec(), |acc, t| g.add(&acc, t)),
        Adders::LowDepth => g.add_many(terms),
    }
}

/// Ch(e, f, g) = (e ∧ f) ⊕ (¬e ∧ g) = g ⊕ e ∧ (f ⊕ g).
fn ch(b: &mut Builder, e: &[Bit], f: &[Bit], g: &[Bit]) -> Word {
    let fg = b.xor_bits(f, g);
    let t = b.and_bits(e, &fg);
    b.xor_bits(g, &t)
}

fn maj(g: &mut Builder, a: &[Bit], b: &[Bit], c: &[Bit]) -> Word {
    (0..32).map(|i| g.majority(a[i], b[i], c[i])).collect()
}

/// One SHA-256 block: `h` (eight words) updated with `block` (sixteen words).
pub(crate) fn sha256_words(
    g: &mut Builder,
    block: &[Word],
    h: &[Word],
    adders: Adders,
) -> Vec<Word> {
    let rotr = Builder::rotr;
    let shr = |x: &[Bit], k| Builder::shr_const(x, k, crate::builder::Signedness::Unsigned);
    let mut w: Vec<Word> = block.to_vec();
    for t in 16..64 {
        let x = &w[t - 15];
        let s0 = xor3(g, &rotr(x, 7), &rotr(x, 18), &shr(x, 3));
        let y = &w[t - 2];
        let s1 = xor3(g, &rotr(y, 17), &rotr(y, 19), &shr(y, 10));
        let next = sum(g, &[&w[t - 16], &w[t - 7], &s0, &s1], adders);
        w.push(next);
    }
    let mut v: Vec<Word> = h.to_vec();
    for (t, wt) in w.iter().enumerate() {
        let [a, b, c, d, e, f, gg, hh] = std::array::from_fn(|i| v[i].clone());
        let big_s1 = xor3(g, &rotr(&e, 6), &rotr(&e, 11), &rotr(&e, 25));
        let ch = ch(g, &e, &f, &gg);
        let k = konst(K256[t]);
        let big_s0 = xor3(g, &rotr(&a, 2), &rotr(&a, 13), &rotr(&a, 22));
        let maj = maj(g, &a, &b, &c);
        let (new_a, new_e) = match adders {
            Adders::Ripple => {
                let kw = g.add(&k, wt);
                let t1 = sum(g, &[&hh, &big_s1, &ch, &kw], adders);
                let t2 = g.add(&big_s0, &maj);
                (g.add(&t1, &t2), g.add(&d, &t1))
            }
            // Each new word as one sum, the early terms first.
            Adders::LowDepth => (
                g.add_many(&[&k, wt, &hh, &big_s1, &ch, &big_s0, &maj]),
                g.add_many(&[&k, wt, &hh, &d, &big_s1, &ch]),
            ),
        };
        v = vec![new_a, a, b, c, new_e, e, f, gg];
    }
    h.iter()
        .zip(&v)
        .map(|(x, y)| sum(g, &[x, y], adders))
        .collect()
}

/// The SHA-256 compression function. Inputs: the 64-byte message block, then the 32-byte
/// chaining value (H0..H7, big-endian, as in the digest); output: the new chaining value, the
/// digest itself after the last block.
pub fn sha256_compress() -> Result<Circuit, Error> {
    sha256_compress_with(Adders::Ripple)
}

/// [`sha256_compress`] with the given adders.
pub fn sha256_compress_with(adders: Adders) -> Result<Circuit, Error> {
    let mut g = Builder::new();
    let block = be_words(&g.input(512));
    let h = be_words(&g.input(256));
    let out = sha256_words(&mut g, &block, &h, adders);
    g.finish(&[from_be_words(&out)])
}

/// SHA-256's initial chaining value H(0) (FIPS 180-4 §5.3.3), as the 32 bytes the chaining
/// input of [`sha256_compress`] reads.
pub const SHA256_IV: [u8; 32] = [
    0x6a, 0x09, 0xe6, 0x67, 0xbb, 0x67, 0xae, 0x85, 0x3c, 0x6e, 0xf3, 0x72, 0xa5, 0x4f, 0xf5, 0x3a,
    0x51, 0x0e, 0x52, 0x7f, 0x9b, 0x05, 0x68, 0x8c, 0x1f, 0x83, 0xd9, 0xab, 0x5b, 0xe0, 0xcd, 0x19,
];

/// The last one or two 64-byte blocks SHA-256 compresses for a message of `len` bytes whose
/// final `tail` (`len` mod 64 bytes) is given: the tail, the byte 0x80, zeros and the bit
/// length (FIPS 180-4 §5.1.1). With [`sha256_compress`] run over the message's whole blocks
/// and then these, starting from [`SHA256_IV`], the chaining value is the digest: the
/// generator of a streamed SHA-256 circuit, one compression after another.
///
/// # Panics
/// If `tail` is not `len` mod 64 bytes long (the caller's bookkeeping).
pub fn sha256_final_blocks(tail: &[u8], len: u64) -> Vec<[u8; 64]> {
    assert_eq!(tail.len() as u64, len % 64, "sha256 padding: tail length");
    let mut bytes = tail.to_vec();
    bytes.push(0x80);
    while bytes.len() % 64 != 56 {
        bytes.push(0);
    }
    bytes.extend_from_slice(&len.wrapping_mul(8).to_be_bytes());
    bytes
        .chunks_exact(64)
        .map(|c| c.try_into().unwrap_or([0; 64]))
        .collect()
}

/// One SHA-1 block: `h` (five words) updated with `block` (sixteen words).
pub(crate) fn sha1_words(g: &mut Builder, block: &[Word], h: &[Word]) -> Vec<Word> {
    let rotl = Builder::rotl;
    let mut w: Vec<Word> = block.to_vec();
    for t in 16..80 {
        let x = xor3(g, &w[t - 3], &w[t - 8], &w[t - 14]);
        let x = g.xor_bits(&x, &w[t - 16]);
        w.push(rotl(&x, 1));
    }
    let mut v: Vec<Word> = h.to_vec();
    for (t, wt) in w.iter().enumerate() {
        let [a, b, c, d, e] = std::array::from_fn(|i| v[i].clone());
        let f = match t / 20 {
            0 => ch(g, &b, &c, &d),
            2 => maj(g, &b, &c, &d),
            _ => xor3(g, &b, &c, &d),
        };
        let k = konst(K1[t / 20]);
        let kw = g.add(&k, wt);
        let tmp = sum(g, &[&rotl(&a, 5), &f, &e, &kw], Adders::Ripple);
        v = vec![tmp, a, rotl(&b, 30), c, d];
    }
    h.iter().zip(&v).map(|(x, y)| g.add(x, y)).collect()
}

/// The SHA-1 compression function. Inputs: the 64-byte message block, then the 20-byte
/// chaining value (H0..H4, big-endian); output: the new chaining value.
pub fn sha1_compress() -> Result<Circuit, Error> {
    let mut g = Builder::new();
    let block = be_words(&g.input(512));
    let h = be_words(&g.input(160));
    let out = sha1_words(&mut g, &block, &h);
    g.finish(&[from_be_words(&out)])
}

/// SHA-1's initial value H0..H4 (FIPS 180-4 §5.3.1).
pub(crate) const SHA1_IV: [u32; 5] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];

/// SHA-1 of one 64-byte message, as ABY hashes its 512-bit input in the circuit of VASA's
/// Table 8 (seed 000, App. B; each party gives half of the message): the message's block from
/// the initial value, then its padding block (0x80, zeros and the bit length 512: FIPS 180-4
/// §5.1.1, constant; SHA-256's padding, [`sha256_final_blocks`]). Inputs: the message's first 32 bytes, then its last 32; output: the
/// 20-byte digest.
pub fn sha1_512() -> Result<Circuit, Error> {
    let mut g = Builder::new();
    let mut message = g.input(256);
    message.extend(g.input(256));
    let iv: Vec<Word> = SHA1_IV.iter().map(|&w| konst(w)).collect();
    let h = sha1_words(&mut g, &be_words(&message), &iv);
    let padding: Vec<Word> = sha256_final_blocks(&[], 64)[0]
        .chunks_exact(4)
        .map(|w| konst(u32::from_be_bytes([w[0], w[1], w[2], w[3]])))
        .collect();
    let digest = sha1_words(&mut g, &padding, &h);
    g.finish(&[from_be_words(&digest)])
}
