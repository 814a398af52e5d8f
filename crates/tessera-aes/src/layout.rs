//! AES-128 (FIPS-197) as MiniMac sees it: the state of `B` blocks in the data slots of one
//! codeword (block `b`'s byte `p` in slot 16·b + p, bytes in FIPS-197 order: row p mod 4,
//! column p div 4), the linear maps that the tables apply after the S-box (ShiftRows then
//! MixColumns, or ShiftRows alone in the last round; Damgård and Zakarias, "Fast Oblivious AES" §1,
//! Fig. 5), and the key schedule split into its S-box inputs and a linear map (the seed's
//! matrix KS, §"Advanced Encryption Standard").

use tessera_core::gf256;

/// Bytes in an AES block.
pub const BLOCK: usize = 16;
/// AES-128 rounds.
pub const ROUNDS: usize = 10;
/// The round constants of the key schedule (FIPS-197 §5.2).
pub const RCON: [u8; ROUNDS] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];
/// The key bytes the S-box reads in one key-schedule step: RotWord of the last word, so that
/// S-box output `t` is added to byte `t` of every word of the next round key.
pub const KEY_SBOX_INPUTS: [usize; 4] = [13, 14, 15, 12];

/// The AES S-box (FIPS-197 §5.1.1), constant-time: inversion, then the affine map.
pub const fn sbox(x: u8) -> u8 {
    let b = gf256::inv(x);
    b ^ b.rotate_left(1) ^ b.rotate_left(2) ^ b.rotate_left(3) ^ b.rotate_left(4) ^ 0x63
}

/// Bit-slices of 64 bytes in machine words, for the S-box circuit.
struct Slices;

impl tessera_core::aes::sbox::BooleanOps for Slices {
    type Bit = u64;
    fn xor(&mut self, a: u64, b: u64) -> u64 {
        a ^ b
    }
    fn and(&mut self, a: u64, b: u64) -> u64 {
        a & b
    }
    fn xnor(&mut self, a: u64, b: u64) -> u64 {
        !(a ^ b)
    }
}

/// The S-box rotated by a secret `r`: entry s is S(s + r). Constant-time in `r`: the 256
/// inputs go through the bitsliced Boyar-Peralta S-box circuit 64 at a time, with no
/// table indexed by a secret.
pub fn shifted_sbox(r: u8) -> [u8; 256] {
    let mut out = [0u8; 256];
    for (g, chunk) in out.chunks_exact_mut(64).enumerate() {
        let x: [u64; 8] = core::array::from_fn(|i| {
            // Bit i of s over the 64 values s = 64g..64g+63, then of s + r.
            let pattern = (0..64u64).fold(0u64, |w, lane| {
                w | ((((64 * g as u64 + lane) >> i) & 1) << lane)
            });
            pattern ^ 0u64.wrapping_sub(((r >> i) & 1) as u64)
        });
        let y = tessera_core::aes::sbox::sbox(&mut Slices, x);
        for (lane, o) in chunk.iter_mut().enumerate() {
            *o = (0..8).fold(0u8, |b, i| b | ((((y[i] >> lane) & 1) as u8) << i));
        }
    }
    out
}

/// Where ShiftRows moves byte `p`: row r stays, column c goes to column c − r.
pub const fn shift_rows_target(p: usize) -> usize {
    let (r, c) = (p % 4, p / 4);
    r + 4 * ((c + 4 - r) % 4)
}

/// The image of the unit vector at byte `p` under ShiftRows then MixColumns (`mix`) or
/// ShiftRows alone: what one S-box output contributes to the next state, per unit.
pub fn round_column(p: usize, mix: bool) -> [u8; BLOCK] {
    const MC: [[u8; 4]; 4] = [[2, 3, 1, 1], [1, 2, 3, 1], [1, 1, 2, 3], [3, 1, 1, 2]];
    let q = shift_rows_target(p);
    let mut out = [0u8; BLOCK];
    if mix {
        let (r, c) = (q % 4, q / 4);
        for (r2, row) in MC.iter().enumerate() {
            out[4 * c + r2] = row[r];
        }
    } else {
        out[q] = 1;
    }
    out
}

/// The linear part of one key-schedule step: word w of the next key is the sum of words
/// 0..=w of this one (the S-box outputs and the round constant are added apart).
pub fn key_linear(key: &[u8]) -> [u8; BLOCK] {
    let mut out = [0u8; BLOCK];
    for w in 0..4 {
        for t in 0..4 {
            out[4 * w + t] = (0..=w).fold(0, |s, v| s ^ key[4 * v + t]);
        }
    }
    out
}

/// The positions of the next round key that S-box output `t` of the key schedule reaches:
/// byte t of every word.
pub fn key_sbox_column(t: usize) -> [u8; BLOCK] {
    let mut out = [0u8; BLOCK];
    for w in 0..4 {
        out[4 * w + t] = 1;
    }
    out
}

/// xtime: multiplication by x in GF(2^8), branch-free.
const fn xtime(a: u8) -> u8 {
    (a << 1) ^ (0x1b & 0u8.wrapping_sub(a >> 7))
}

/// ShiftRows then MixColumns (`mix`), or ShiftRows alone, of one state: the same map as
/// [`apply`] with [`round_column`], by FIPS-197's xtime form (a few operations per byte).
pub fn round_map(v: &[u8], mix: bool) -> [u8; BLOCK] {
    let mut s = [0u8; BLOCK];
    for (p, &x) in v.iter().enumerate().take(BLOCK) {
        s[shift_rows_target(p)] = x;
    }
    if mix {
        for c in s.chunks_exact_mut(4) {
            let (a0, a1, a2, a3) = (c[0], c[1], c[2], c[3]);
            let all = a0 ^ a1 ^ a2 ^ a3;
            c[0] = a0 ^ all ^ xtime(a0 ^ a1);
            c[1] = a1 ^ all ^ xtime(a1 ^ a2);
            c[2] = a2 ^ all ^ xtime(a2 ^ a3);
            c[3] = a3 ^ all ^ xtime(a3 ^ a0);
        }
    }
    s
}

/// Σ_p v_p · `column(p)`: the linear map whose unit images are `column`, applied to `v`.
pub fn apply(v: &[u8], column: impl Fn(usize) -> [u8; BLOCK]) -> [u8; BLOCK] {
    let mut out = [0u8; BLOCK];
    for (p, &x) in v.iter().enumerate() {
        gf256::mul_acc(&mut out, &column(p), x);
    }
    out
}

/// A 16-byte vector copied into each of the first `blocks` blocks of a data vector.
pub fn replicate(v: &[u8; BLOCK], blocks: usize, data: &mut [u8]) {
    data.fill(0);
    for b in 0..blocks {
        data[b * BLOCK..(b + 1) * BLOCK].copy_from_slice(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aes::cipher::{BlockCipherEncrypt, KeyInit};

    /// One key-schedule step on a plain key, through the split above (for tests and the dealer's
    /// own checks): linear part, S-box outputs, round constant.
    fn next_round_key(key: &[u8; BLOCK], round: usize) -> [u8; BLOCK] {
        let mut out = key_linear(key);
        for (t, &i) in KEY_SBOX_INPUTS.iter().enumerate() {
            let s = sbox(key[i]);
            for (o, c) in out.iter_mut().zip(key_sbox_column(t)) {
                *o ^= gf256::mul(s, c);
            }
        }
        for w in 0..4 {
            out[4 * w] ^= RCON[round];
        }
        out
    }

    /// AES-128 of one block through the same split as the protocol (S-box, then each byte's
    /// round column): the reference the layout is tested against.
    fn encrypt_by_columns(key: &[u8; BLOCK], plain: &[u8; BLOCK]) -> [u8; BLOCK] {
        let (mut k, mut s) = (*key, *plain);
        for (x, y) in s.iter_mut().zip(&k) {
            *x ^= y;
        }
        for round in 0..ROUNDS {
            k = next_round_key(&k, round);
            let mut next = k;
            for (p, &x) in s.iter().enumerate() {
                let v = sbox(x);
                for (o, c) in next.iter_mut().zip(round_column(p, round + 1 < ROUNDS)) {
                    *o ^= gf256::mul(v, c);
                }
            }
            s = next;
        }
        s
    }

    #[test]
    fn the_split_rounds_are_aes_128() {
        // FIPS-197 Appendix C.1.
        let key: [u8; 16] = core::array::from_fn(|i| i as u8);
        let plain: [u8; 16] = core::array::from_fn(|i| (i as u8) * 0x11);
        let want = [
            0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4,
            0xc5, 0x5a,
        ];
        assert_eq!(encrypt_by_columns(&key, &plain), want);
        let mut x = 0x1234_5678_9abc_def0_u128;
        for _ in 0..50 {
            x = x.wrapping_mul(0x2545_f491_4f6c_dd1d).wrapping_add(77);
            let (k, p) = (x.to_le_bytes(), x.rotate_left(40).to_be_bytes());
            let cipher = aes::Aes128::new(&k.into());
            let mut b = p.into();
            cipher.encrypt_block(&mut b);
            assert_eq!(encrypt_by_columns(&k, &p), <[u8; 16]>::from(b));
        }
    }

    #[test]
    fn the_round_map_is_the_sum_of_its_columns() {
        let mut x = 99u64;
        for _ in 0..100 {
            let v: [u8; 16] = core::array::from_fn(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 56) as u8
            });
            for mix in [false, true] {
                assert_eq!(round_map(&v, mix), apply(&v, |p| round_column(p, mix)));
            }
        }
    }

    #[test]
    fn the_shifted_sbox_is_the_sbox_rotated() {
        for r in [0u8, 1, 0x53, 0xff] {
            let t = shifted_sbox(r);
            for s in 0..=255u8 {
                assert_eq!(t[s as usize], sbox(s ^ r), "r {r:#x} s {s:#x}");
            }
        }
    }

    #[test]
    fn the_sbox_is_fips_197() {
        assert_eq!(sbox(0x00), 0x63);
        assert_eq!(sbox(0x53), 0xed);
        assert_eq!(sbox(0xff), 0x16);
    }
}
