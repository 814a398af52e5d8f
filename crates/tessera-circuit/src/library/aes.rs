//! AES-128 (FIPS-197) with its key expansion, on the 32-AND Boyar-Peralta-Calik S-box shared
//! with the portable AES backend ([`tessera_core::aes::sbox`]): 200 S-boxes (160 in the
//! rounds, 40 in the key schedule), so 6400 AND gates; and without it, under round keys given
//! as inputs (5120).

use crate::builder::{Bit, Builder};
use crate::{Circuit, Error};
use tessera_core::aes::sbox::sbox;

/// AES-128 encryption of one block. Inputs: the key, then the plaintext; output: the
/// ciphertext; all in FIPS-197 byte order (byte j of a value is bits 8j..8j+8, least
/// significant first).
pub fn aes128() -> Result<Circuit, Error> {
    let mut g = Builder::new();
    let key = g.input(128);
    let pt = g.input(128);
    let ct = encrypt(&mut g, &key, &pt);
    g.finish(&[ct])
}

/// AES-128 encryption of one block under a pre-expanded key, as ABY's AES circuit takes it
/// (the circuit of VASA's Table 8, seed 000 App. B): the key schedule is left to the key's
/// owner, so only the rounds' 160 S-boxes are in the circuit (5120 AND gates). Inputs: the
/// eleven round keys (FIPS-197 §5.2, round 0 first, 1408 bits), then the plaintext; output:
/// the ciphertext; byte order as [`aes128`].
pub fn aes128_expanded() -> Result<Circuit, Error> {
    let mut g = Builder::new();
    let keys = g.input(128 * 11);
    let pt = g.input(128);
    let round_keys: Vec<Vec<Byte>> = keys.chunks(128).map(bytes).collect();
    let ct = rounds(&mut g, &round_keys, &pt);
    g.finish(&[ct])
}

type Byte = [Bit; 8];

fn bytes(bits: &[Bit]) -> Vec<Byte> {
    bits.chunks(8)
        .map(|c| std::array::from_fn(|i| c[i]))
        .collect()
}

fn xor_byte(g: &mut Builder, a: Byte, b: Byte) -> Byte {
    std::array::from_fn(|i| g.xor(a[i], b[i]))
}

/// Multiplication by x in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1 (three XORs).
fn xtime(g: &mut Builder, a: Byte) -> Byte {
    let h = a[7];
    [
        h,
        g.xor(a[0], h),
        a[1],
        g.xor(a[2], h),
        g.xor(a[3], h),
        a[4],
        a[5],
        a[6],
    ]
}

/// The eleven round keys (FIPS-197 §5.2), each as 16 bytes.
fn expand_key(g: &mut Builder, key: &[Bit]) -> Vec<Vec<Byte>> {
    let mut w: Vec<[Byte; 4]> = bytes(key)
        .chunks(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    let mut rcon = 1u8;
    for i in 4..44 {
        let mut t = w[i - 1];
        if i % 4 == 0 {
            t = [t[1], t[2], t[3], t[0]].map(|b| sbox(g, b));
            t[0] = xor_byte(
                g,
                t[0],
                std::array::from_fn(|k| Bit::Const((rcon >> k) & 1 == 1)),
            );
            rcon = (rcon << 1) ^ if rcon & 0x80 != 0 { 0x1b } else { 0 };
        }
        let prev = w[i - 4];
        w.push(std::array::from_fn(|j| xor_byte(g, prev[j], t[j])));
    }
    w.chunks(4).map(|c| c.concat()).collect()
}

/// AES-128 of `pt` under `key` (bit vectors of 128 bits), as a circuit.
pub(crate) fn encrypt(g: &mut Builder, key: &[Bit], pt: &[Bit]) -> Vec<Bit> {
    let round_keys = expand_key(g, key);
    rounds(g, &round_keys, pt)
}

/// AES-128's ten rounds of `pt` under `round_keys` (eleven of 16 bytes).
fn rounds(g: &mut Builder, round_keys: &[Vec<Byte>], pt: &[Bit]) -> Vec<Bit> {
    let add_round_key = |g: &mut Builder, s: &[Byte], k: &[Byte]| -> Vec<Byte> {
        s.iter().zip(k).map(|(&a, &b)| xor_byte(g, a, b)).collect()
    };
    let mut s = add_round_key(g, &bytes(pt), &round_keys[0]);
    for (round, rk) in round_keys.iter().enumerate().skip(1) {
        let sub: Vec<Byte> = s.iter().map(|&b| sbox(g, b)).collect();
        // ShiftRows: byte r + 4c takes row r of column c + r.
        let shifted: Vec<Byte> = (0..16)
            .map(|j| sub[j % 4 + 4 * ((j / 4 + j % 4) % 4)])
            .collect();
        s = if round == 10 {
            shifted
        } else {
            // MixColumns: b_i = 2a_i ⊕ 3a_{i+1} ⊕ a_{i+2} ⊕ a_{i+3} = 2d_i ⊕ (a_{i+1} ⊕ d_{i+2})
            // with d_i = a_i ⊕ a_{i+1}: 108 XORs a column, three deep.
            shifted
                .chunks(4)
                .flat_map(|a| {
                    let d: Vec<Byte> = (0..4).map(|i| xor_byte(g, a[i], a[(i + 1) % 4])).collect();
                    (0..4)
                        .map(|i| {
                            let d2 = xtime(g, d[i]);
                            let rest = xor_byte(g, a[(i + 1) % 4], d[(i + 2) % 4]);
                            xor_byte(g, d2, rest)
                        })
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        s = add_round_key(g, &s, rk);
    }
    s.concat()
}
