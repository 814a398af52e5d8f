//! The register abstraction the batched AES kernels are written against, once for every
//! backend (VASA §4.2.1, register-oriented batch computation): a [`Lanes`] value holds
//! `BLOCKS` independent 128-bit blocks (1 for `portable` and `aesni`, 2 for `vaes256`, 4 for
//! `vaes512`), and every kernel in [`super::kernels`] keeps `N` such registers in flight so the
//! pipelined AES units never wait on a dependency.

use super::soft;
use crate::Block;

/// One SIMD register's worth of blocks, with the AES round instructions and the few linear
/// maps the hashes need, each applied to every 128-bit lane independently.
///
/// # Safety
/// Implementations for x86 wrap intrinsics that need CPU features. Every method is `unsafe`:
/// the caller guarantees that the features named by the implementing backend are present (the
/// kernels are only reached through a [`super::Kernels`] table that is handed out after run-time
/// detection) and, for the pointer methods, that the memory is valid for `BLOCKS` blocks.
pub(crate) trait Lanes: Copy {
    /// Blocks per register.
    const BLOCKS: usize;
    /// Vector registers of the instruction set: 32 with AVX-512, 16 without. With 32 the
    /// half-gates kernels hold a group's input labels through the AES rounds; with 16 they
    /// reload them afterwards, since holding them would spill.
    const REGISTERS: usize;
    /// The one-block register type of the same backend, used for tails.
    type Single: Lanes;

    /// Loads `BLOCKS` consecutive blocks.
    unsafe fn load(p: *const Block) -> Self;
    /// Stores `BLOCKS` consecutive blocks.
    unsafe fn store(self, p: *mut Block);
    /// Loads blocks `p[0], p[stride], p[2 stride], ...`.
    unsafe fn load_strided(p: *const Block, stride: usize) -> Self;
    /// Stores to `p[0], p[stride], p[2 stride], ...`.
    unsafe fn store_strided(self, p: *mut Block, stride: usize);
    /// Loads blocks `base[idx[0]], base[idx[1]], ...`: a gather by slot index (VASA §4.2.1's
    /// register-oriented gather), no pass through a staging buffer.
    unsafe fn load_indexed(base: *const Block, idx: *const u32) -> Self;
    /// Stores `a` and `b` interleaved: `p[0] = a[0], p[1] = b[0], p[2] = a[1], ...` (a gate's
    /// two table blocks side by side).
    unsafe fn store_pairs(a: Self, b: Self, p: *mut Block);
    /// Loads `2 BLOCKS` blocks as [`Lanes::store_pairs`] stored them: `(p[0], p[2], ...)` and
    /// `(p[1], p[3], ...)`.
    unsafe fn load_pairs(p: *const Block) -> (Self, Self);
    /// Stores to `base[idx[0]], base[idx[1]], ...`: a scatter by slot index, lane 0 first.
    unsafe fn store_indexed(self, base: *mut Block, idx: *const u32);
    /// `idx[0], idx[1], ...` as the low 32 bits of each block, the rest zero (gate indices
    /// turned into tweaks in registers).
    unsafe fn load_u32(idx: *const u32) -> Self;
    /// `b` in every lane.
    unsafe fn splat(b: Block) -> Self;
    /// Lane-wise XOR.
    unsafe fn xor(self, o: Self) -> Self;
    /// One AES round with round key `rk` (the `aesenc` instruction).
    unsafe fn aesenc(self, rk: Self) -> Self;
    /// The last AES round (the `aesenclast` instruction).
    unsafe fn aesenclast(self, rk: Self) -> Self;
    /// Lane-wise AND.
    unsafe fn and(self, o: Self) -> Self;
    /// Lane-wise addition of 64-bit words modulo 2^64 (no carry between a block's halves).
    unsafe fn add64(self, o: Self) -> Self;
    /// `v` as the low half of every block, the high half zero, built in registers (a value
    /// stored in halves and reloaded whole would miss store forwarding).
    unsafe fn low64(v: u64) -> Self;
    /// All ones in each block whose least significant bit is 1, zero elsewhere
    /// ([`Block::mask`] of [`Block::lsb`]): branch-free label selection.
    unsafe fn lsb_mask(self) -> Self;
    /// Doubling in GF(2^128), as [`Block::gf_double`].
    unsafe fn gf_double(self) -> Self;
    /// The orthomorphism σ, as [`Block::sigma`].
    unsafe fn sigma(self) -> Self;
    /// RotWord of the last 32-bit word, copied into all four words (key expansion input).
    unsafe fn rot_last_word(self) -> Self;
    /// Prefix XOR over the four words: w_i ← w_0 ⊕ … ⊕ w_i (key expansion's chaining).
    unsafe fn prefix_xor_words(self) -> Self;

    /// The next AES-128 round key from the previous one, for every lane at once, with the
    /// `aesenclast` technique (Gueron, "Intel AES New Instructions", §5.2; cited by VASA §2.1):
    /// when all four columns equal RotWord(w3), ShiftRows is the identity, so `aesenclast`
    /// against the round constant yields SubWord(RotWord(w3)) ⊕ rcon in every word. That
    /// replaces the slow `aeskeygenassist` and widens to VAES.
    #[inline(always)]
    unsafe fn next_round_key(self, rcon: u8) -> Self {
        // SAFETY: same contract as the caller's.
        unsafe {
            let rcon = Self::splat(Block::new(rcon as u128 * RCON_WORDS));
            self.prefix_xor_words()
                .xor(self.rot_last_word().aesenclast(rcon))
        }
    }
}

/// Multiplier that copies a byte into byte 0 of each of the four 32-bit words.
const RCON_WORDS: u128 = 1 | (1 << 32) | (1 << 64) | (1 << 96);

/// The AES-128 round constants for rounds 1..=10.
pub(crate) const RCON: [u8; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];

/// The portable backend's register: one block, rounds from [`soft`].
#[derive(Clone, Copy)]
pub(crate) struct Soft(Block);

impl Lanes for Soft {
    const BLOCKS: usize = 1;
    const REGISTERS: usize = 16;
    type Single = Soft;

    #[inline(always)]
    unsafe fn load(p: *const Block) -> Self {
        // SAFETY: the caller guarantees `p` is valid for one block.
        Soft(unsafe { p.read() })
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut Block) {
        // SAFETY: the caller guarantees `p` is valid for one block.
        unsafe { p.write(self.0) }
    }
    #[inline(always)]
    unsafe fn load_strided(p: *const Block, _stride: usize) -> Self {
        // SAFETY: one lane: the stride is never applied.
        unsafe { Self::load(p) }
    }
    #[inline(always)]
    unsafe fn store_strided(self, p: *mut Block, _stride: usize) {
        // SAFETY: one lane: the stride is never applied.
        unsafe { self.store(p) }
    }
    #[inline(always)]
    unsafe fn load_indexed(base: *const Block, idx: *const u32) -> Self {
        // SAFETY: the caller guarantees `idx` is valid and `base[idx[0]]` is a valid block.
        unsafe { Self::load(base.add(idx.read() as usize)) }
    }
    #[inline(always)]
    unsafe fn store_pairs(a: Self, b: Self, p: *mut Block) {
        // SAFETY: the caller guarantees two valid blocks at `p`.
        unsafe {
            a.store(p);
            b.store(p.add(1));
        }
    }
    #[inline(always)]
    unsafe fn load_pairs(p: *const Block) -> (Self, Self) {
        // SAFETY: the caller guarantees two valid blocks at `p`.
        unsafe { (Self::load(p), Self::load(p.add(1))) }
    }
    #[inline(always)]
    unsafe fn store_indexed(self, base: *mut Block, idx: *const u32) {
        // SAFETY: the caller guarantees `idx` is valid and `base[idx[0]]` is a valid block.
        unsafe { self.store(base.add(idx.read() as usize)) }
    }
    #[inline(always)]
    unsafe fn load_u32(idx: *const u32) -> Self {
        // SAFETY: the caller guarantees `idx` is valid for one value.
        Soft(Block::from(u64::from(unsafe { idx.read() })))
    }
    #[inline(always)]
    unsafe fn splat(b: Block) -> Self {
        Soft(b)
    }
    #[inline(always)]
    unsafe fn xor(self, o: Self) -> Self {
        Soft(self.0 ^ o.0)
    }
    #[inline(always)]
    unsafe fn aesenc(self, rk: Self) -> Self {
        Soft(soft::aesenc(self.0, rk.0))
    }
    #[inline(always)]
    unsafe fn aesenclast(self, rk: Self) -> Self {
        Soft(soft::aesenclast(self.0, rk.0))
    }
    #[inline(always)]
    unsafe fn and(self, o: Self) -> Self {
        Soft(self.0 & o.0)
    }
    #[inline(always)]
    unsafe fn add64(self, o: Self) -> Self {
        let (a, b) = (self.0, o.0);
        Soft(Block::from_halves(
            a.high().wrapping_add(b.high()),
            a.low().wrapping_add(b.low()),
        ))
    }
    #[inline(always)]
    unsafe fn low64(v: u64) -> Self {
        Soft(Block::from(v))
    }
    #[inline(always)]
    unsafe fn lsb_mask(self) -> Self {
        Soft(Block::mask(self.0.lsb()))
    }
    #[inline(always)]
    unsafe fn gf_double(self) -> Self {
        Soft(self.0.gf_double())
    }
    #[inline(always)]
    unsafe fn sigma(self) -> Self {
        Soft(self.0.sigma())
    }
    #[inline(always)]
    unsafe fn rot_last_word(self) -> Self {
        let w3 = (self.0.as_u128() >> 96) as u32;
        Soft(Block::new(w3.rotate_right(8) as u128 * RCON_WORDS))
    }
    #[inline(always)]
    unsafe fn prefix_xor_words(self) -> Self {
        let x = self.0.as_u128();
        let x = x ^ (x << 32);
        Soft(Block::new(x ^ (x << 64)))
    }
}
