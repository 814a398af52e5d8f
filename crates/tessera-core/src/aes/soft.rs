//! Portable, constant-time AES-128 round functions (FIPS-197 §5.1) with the semantics of the
//! `aesenc`/`aesenclast` instructions: no table indexed by secret data, no secret branch.
//! SubBytes is the bitsliced Boyar-Peralta-Calik circuit of [`super::sbox`] on sixteen lanes
//! of `u16` bit planes; ShiftRows moves bytes by public positions; MixColumns uses branch-free
//! `xtime`.

use super::sbox::{BooleanOps, sbox};
use crate::Block;

/// Bit-plane words for the bitsliced S-box: one `u16` holds one bit position of all 16 bytes.
struct Planes;

impl BooleanOps for Planes {
    type Bit = u16;
    #[inline(always)]
    fn xor(&mut self, a: u16, b: u16) -> u16 {
        a ^ b
    }
    #[inline(always)]
    fn and(&mut self, a: u16, b: u16) -> u16 {
        a & b
    }
    #[inline(always)]
    fn xnor(&mut self, a: u16, b: u16) -> u16 {
        !(a ^ b)
    }
}

/// SubBytes on all 16 bytes of a state.
#[inline]
fn sub_bytes(state: [u8; 16]) -> [u8; 16] {
    let mut planes = [0u16; 8];
    for (lane, &byte) in state.iter().enumerate() {
        for (bit, plane) in planes.iter_mut().enumerate() {
            *plane |= u16::from((byte >> bit) & 1) << lane;
        }
    }
    let out = sbox(&mut Planes, planes);
    core::array::from_fn(|lane| {
        out.iter().enumerate().fold(0u8, |acc, (bit, &plane)| {
            acc | ((((plane >> lane) & 1) as u8) << bit)
        })
    })
}

/// ShiftRows: state byte `4c + r` (column c, row r) takes byte `4((c + r) mod 4) + r`.
#[inline]
fn shift_rows(s: [u8; 16]) -> [u8; 16] {
    core::array::from_fn(|i| {
        let (c, r) = (i / 4, i % 4);
        s[4 * ((c + r) % 4) + r]
    })
}

/// Multiplication by x in GF(2^8), branch-free.
#[inline(always)]
fn xtime(b: u8) -> u8 {
    (b << 1) ^ (0x1b & 0u8.wrapping_sub(b >> 7))
}

/// MixColumns on each of the four columns.
#[inline]
fn mix_columns(mut s: [u8; 16]) -> [u8; 16] {
    for col in s.chunks_exact_mut(4) {
        let [a0, a1, a2, a3] = [col[0], col[1], col[2], col[3]];
        let all = a0 ^ a1 ^ a2 ^ a3;
        col[0] = a0 ^ all ^ xtime(a0 ^ a1);
        col[1] = a1 ^ all ^ xtime(a1 ^ a2);
        col[2] = a2 ^ all ^ xtime(a2 ^ a3);
        col[3] = a3 ^ all ^ xtime(a3 ^ a0);
    }
    s
}

/// One full round, as `aesenc`: MixColumns(ShiftRows(SubBytes(state))) ⊕ round key.
#[inline]
pub(crate) fn aesenc(state: Block, rk: Block) -> Block {
    Block::from_bytes(mix_columns(shift_rows(sub_bytes(state.to_bytes())))) ^ rk
}

/// The last round, as `aesenclast`: ShiftRows(SubBytes(state)) ⊕ round key.
#[inline]
pub(crate) fn aesenclast(state: Block, rk: Block) -> Block {
    Block::from_bytes(shift_rows(sub_bytes(state.to_bytes()))) ^ rk
}
