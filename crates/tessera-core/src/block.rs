//! The 128-bit value every protocol in Tessera is built from: an AES block, a wire label, a
//! correlation offset, an element of GF(2^128).
//!
//! Memory layout is 16 little-endian bytes, 16-byte aligned, so a `&[Block]` can be handed to
//! SIMD kernels as-is and byte `k` of [`Block::to_bytes`] is byte `k` of the AES state in
//! FIPS-197 order.

use crate::Error;
use bytemuck::{Pod, Zeroable};
use core::fmt;
use core::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not, Shl, Shr};

/// A 128-bit block: 16 bytes, 16-byte aligned, `Pod`.
///
/// Bit `i` of the block is bit `i % 8` of byte `i / 8` (least significant first), which is
/// also bit `i` of [`Block::as_u128`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Pod, Zeroable)]
#[repr(C, align(16))]
pub struct Block(u128);

impl Block {
    /// The all-zero block.
    pub const ZERO: Block = Block(0);
    /// The all-one block.
    pub const ONES: Block = Block(u128::MAX);

    /// The block whose little-endian integer value is `v`.
    #[inline(always)]
    pub const fn new(v: u128) -> Self {
        Block(v)
    }

    /// The block made of two 64-bit halves, `high` in bytes 8..16 and `low` in bytes 0..8.
    #[inline(always)]
    pub const fn from_halves(high: u64, low: u64) -> Self {
        Block(((high as u128) << 64) | low as u128)
    }

    /// The block with these 16 bytes (byte 0 is AES state byte 0).
    #[inline(always)]
    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        Block(u128::from_le_bytes(bytes))
    }

    /// The 16 bytes of the block.
    #[inline(always)]
    pub const fn to_bytes(self) -> [u8; 16] {
        self.0.to_le_bytes()
    }

    /// The block's value as a little-endian 128-bit integer.
    #[inline(always)]
    pub const fn as_u128(self) -> u128 {
        self.0
    }

    /// The high 64 bits (bytes 8..16).
    #[inline(always)]
    pub const fn high(self) -> u64 {
        (self.0 >> 64) as u64
    }

    /// The low 64 bits (bytes 0..8).
    #[inline(always)]
    pub const fn low(self) -> u64 {
        self.0 as u64
    }

    /// The point-and-permute bit: bit 0 of byte 0 (free-XOR labels keep it in Δ set to 1).
    #[inline(always)]
    pub const fn lsb(self) -> bool {
        self.0 & 1 == 1
    }

    /// The block with its point-and-permute bit set to `bit`.
    #[inline(always)]
    pub const fn with_lsb(self, bit: bool) -> Self {
        Block((self.0 & !1) | bit as u128)
    }

    /// All ones if `bit`, else all zeros, without a branch: for masking label selection.
    #[inline(always)]
    pub const fn mask(bit: bool) -> Self {
        Block(0u128.wrapping_sub(bit as u128))
    }

    /// Doubling in GF(2^128) modulo x^128 + x^7 + x^2 + x + 1 (bit `i` is the coefficient of
    /// x^i): the "2x" of the fixed-key tweakable hash of Bellare, Hoang, Keelveedhi and Rogaway
    /// (S&P 2013). Branch-free.
    #[inline(always)]
    pub const fn gf_double(self) -> Self {
        let carry = self.0 >> 127;
        Block((self.0 << 1) ^ (0u128.wrapping_sub(carry) & 0x87))
    }

    /// The linear orthomorphism σ(xL ‖ xR) = (xL ⊕ xR ‖ xL) of Guo, Katz, Wang and Yu
    /// (S&P 2020), with xL the high and xR the low 64 bits.
    #[inline(always)]
    pub const fn sigma(self) -> Self {
        let (high, low) = (self.high(), self.low());
        Block::from_halves(high ^ low, high)
    }

    /// Parses 32 hex digits as the 16 bytes in order (byte 0 first), the way FIPS-197 writes
    /// blocks.
    pub fn from_hex(s: &str) -> Result<Self, Error> {
        let s = s.trim();
        let digits = s.as_bytes();
        if digits.len() != 32 {
            return Err(Error::Hex(format!(
                "a block needs 32 hex digits, got {} in {s:?}",
                digits.len()
            )));
        }
        let mut bytes = [0u8; 16];
        for (k, pair) in digits.chunks_exact(2).enumerate() {
            let nibble = |c: u8, at: usize| {
                (c as char).to_digit(16).map(|d| d as u8).ok_or_else(|| {
                    Error::Hex(format!(
                        "{:?} at position {at} of {s:?} is not a hex digit",
                        c as char
                    ))
                })
            };
            bytes[k] = (nibble(pair[0], 2 * k)? << 4) | nibble(pair[1], 2 * k + 1)?;
        }
        Ok(Block::from_bytes(bytes))
    }
}

impl fmt::Display for Block {
    /// 32 lowercase hex digits, byte 0 first (FIPS-197 order).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.to_bytes() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Block({self})")
    }
}

impl From<u128> for Block {
    fn from(v: u128) -> Self {
        Block(v)
    }
}

impl From<u64> for Block {
    fn from(v: u64) -> Self {
        Block(v as u128)
    }
}

impl From<[u8; 16]> for Block {
    fn from(bytes: [u8; 16]) -> Self {
        Block::from_bytes(bytes)
    }
}

impl From<Block> for [u8; 16] {
    fn from(b: Block) -> Self {
        b.to_bytes()
    }
}

impl From<Block> for u128 {
    fn from(b: Block) -> Self {
        b.0
    }
}

macro_rules! bitwise_ops {
    ($($tr:ident $method:ident $assign_tr:ident $assign_method:ident $op:tt),*) => {$(
        impl $tr for Block {
            type Output = Block;
            #[inline(always)]
            fn $method(self, rhs: Block) -> Block {
                Block(self.0 $op rhs.0)
            }
        }
        impl $assign_tr for Block {
            #[inline(always)]
            fn $assign_method(&mut self, rhs: Block) {
                self.0 = self.0 $op rhs.0;
            }
        }
    )*};
}
bitwise_ops!(
    BitXor bitxor BitXorAssign bitxor_assign ^,
    BitAnd bitand BitAndAssign bitand_assign &,
    BitOr bitor BitOrAssign bitor_assign |
);

impl Not for Block {
    type Output = Block;
    #[inline(always)]
    fn not(self) -> Block {
        Block(!self.0)
    }
}

impl Shl<u32> for Block {
    type Output = Block;
    /// Shift of the whole 128-bit value towards higher bits.
    #[inline(always)]
    fn shl(self, n: u32) -> Block {
        Block(self.0 << n)
    }
}

impl Shr<u32> for Block {
    type Output = Block;
    /// Shift of the whole 128-bit value towards lower bits.
    #[inline(always)]
    fn shr(self, n: u32) -> Block {
        Block(self.0 >> n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_16_aligned_bytes() {
        assert_eq!(core::mem::size_of::<Block>(), 16);
        assert_eq!(core::mem::align_of::<Block>(), 16);
        let b = Block::from_bytes(*b"0123456789abcdef");
        assert_eq!(bytemuck::bytes_of(&b), b"0123456789abcdef");
    }

    #[test]
    fn hex_round_trip_and_errors() {
        let s = "000102030405060708090a0b0c0d0e0f";
        let b = Block::from_hex(s).unwrap();
        assert_eq!(b.to_bytes()[1], 1);
        assert_eq!(b.to_string(), s);
        assert_eq!(format!("{b:?}"), format!("Block({s})"));
        assert!(Block::from_hex("00").is_err());
        let err = Block::from_hex("g00102030405060708090a0b0c0d0e0f")
            .unwrap_err()
            .to_string();
        assert!(err.contains("position 0"), "{err}");
    }

    #[test]
    fn lsb_mask_and_halves() {
        let b = Block::new(0xfe);
        assert!(!b.lsb());
        assert!(b.with_lsb(true).lsb());
        assert_eq!(Block::mask(true), Block::ONES);
        assert_eq!(Block::mask(false), Block::ZERO);
        let h = Block::from_halves(7, 9);
        assert_eq!((h.high(), h.low()), (7, 9));
    }

    #[test]
    fn doubling_reduces_by_0x87() {
        assert_eq!(Block::new(1).gf_double(), Block::new(2));
        assert_eq!(Block::new(1 << 127).gf_double(), Block::new(0x87));
        assert_eq!(Block::new((1 << 127) | 1).gf_double(), Block::new(0x85));
    }

    #[test]
    fn sigma_is_an_orthomorphism_on_samples() {
        let x = Block::from_halves(0x1111, 0x2222);
        assert_eq!(x.sigma(), Block::from_halves(0x1111 ^ 0x2222, 0x1111));
        // σ(x) ⊕ x is also a permutation: (xR ‖ xL ⊕ xR).
        assert_eq!(x.sigma() ^ x, Block::from_halves(0x2222, 0x1111 ^ 0x2222));
    }
}
