//! [`Lanes`] for x86-64: `__m128i` (AES-NI, one block), `__m256i` (VAES-256, two blocks) and
//! `__m512i` (VAES-512, four blocks). These are the only places the AES kernels touch
//! intrinsics.
//!
//! # Safety
//! Each method is `#[inline(always)]` and only ever inlined into a `#[target_feature]` entry
//! point of its backend (see `backend_kernels!` in `super`), which is only reachable after
//! run-time detection confirmed the features: `aes,sse2,ssse3` for [`Xmm`], plus
//! `avx2,vaes` for [`Ymm`] and `avx512f,avx512bw,vaes` for [`Zmm`]. Pointer methods rely on the
//! caller for `BLOCKS` valid blocks (strided: at `p + k·stride`).

use super::lanes::Lanes;
use crate::Block;
use core::arch::x86_64::*;

/// pshufb mask that copies RotWord(w3) (bytes 13, 14, 15, 12) into all four words.
const ROT_LAST_WORD: [u8; 16] = [
    13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12,
];
/// Reduction constants for doubling: 0x87 into the low half, the carry bit into the high half.
const DOUBLE_FOLD: Block = Block::from_halves(1, 0x87);
/// Selects the high half of each block (for σ).
const HIGH_HALF: Block = Block::from_halves(u64::MAX, 0);

/// One block in an SSE register (AES-NI).
#[derive(Clone, Copy)]
pub(crate) struct Xmm(__m128i);
/// Two blocks in an AVX2 register (VAES-256).
#[derive(Clone, Copy)]
pub(crate) struct Ymm(__m256i);
/// Four blocks in an AVX-512 register (VAES-512).
#[derive(Clone, Copy)]
pub(crate) struct Zmm(__m512i);

/// The lane-wise integer ops shared by the three register widths, named per width.
macro_rules! lane_ops {
    ($ty:ident, $blocks:literal, $registers:literal, $splat:expr, $xor:ident, $and:ident, $add64:ident, $low64:expr,
     $slli32:ident, $srai32:ident,
     $slli64:ident, $shuf32:ident, $pshufb:ident,
     $aesenc:ident, $aesenclast:ident, $load:expr, $store:expr, $load_strided:expr, $store_strided:expr,
     $store_pairs:expr, $load_pairs:expr, $load_indexed:expr, $store_indexed:expr,
     $load_u32:expr, $high_from_word1:expr) => {
        impl Lanes for $ty {
            const BLOCKS: usize = $blocks;
            const REGISTERS: usize = $registers;
            type Single = Xmm;

            #[inline(always)]
            unsafe fn load(p: *const Block) -> Self {
                // SAFETY: module contract.
                $ty(unsafe { $load(p) })
            }
            #[inline(always)]
            unsafe fn store(self, p: *mut Block) {
                // SAFETY: module contract.
                unsafe { $store(p, self.0) }
            }
            #[inline(always)]
            unsafe fn load_strided(p: *const Block, stride: usize) -> Self {
                // SAFETY: module contract.
                $ty(unsafe { $load_strided(p, stride) })
            }
            #[inline(always)]
            unsafe fn store_strided(self, p: *mut Block, stride: usize) {
                // SAFETY: module contract.
                unsafe { $store_strided(p, stride, self.0) }
            }
            #[inline(always)]
            unsafe fn load_indexed(base: *const Block, idx: *const u32) -> Self {
                // SAFETY: module contract (`BLOCKS` valid indices, each naming a valid block).
                $ty(unsafe { $load_indexed(base, idx) })
            }
            #[inline(always)]
            unsafe fn store_pairs(a: Self, b: Self, p: *mut Block) {
                // SAFETY: module contract (`2 BLOCKS` valid blocks).
                unsafe { $store_pairs(a.0, b.0, p) }
            }
            #[inline(always)]
            unsafe fn load_pairs(p: *const Block) -> (Self, Self) {
                // SAFETY: module contract (`2 BLOCKS` valid blocks).
                let (a, b) = unsafe { $load_pairs(p) };
                ($ty(a), $ty(b))
            }
            #[inline(always)]
            unsafe fn store_indexed(self, base: *mut Block, idx: *const u32) {
                // SAFETY: module contract (`BLOCKS` valid indices, each naming a valid block).
                unsafe { $store_indexed(base, idx, self.0) }
            }
            #[inline(always)]
            unsafe fn load_u32(idx: *const u32) -> Self {
                // SAFETY: module contract (`BLOCKS` valid values).
                $ty(unsafe { $load_u32(idx) })
            }
            #[inline(always)]
            unsafe fn splat(b: Block) -> Self {
                // SAFETY: module contract.
                $ty(unsafe { $splat(b) })
            }
            #[inline(always)]
            unsafe fn xor(self, o: Self) -> Self {
                // SAFETY: module contract.
                $ty(unsafe { $xor(self.0, o.0) })
            }
            #[inline(always)]
            unsafe fn aesenc(self, rk: Self) -> Self {
                // SAFETY: module contract.
                $ty(unsafe { $aesenc(self.0, rk.0) })
            }
            #[inline(always)]
            unsafe fn aesenclast(self, rk: Self) -> Self {
                // SAFETY: module contract.
                $ty(unsafe { $aesenclast(self.0, rk.0) })
            }
            #[inline(always)]
            unsafe fn and(self, o: Self) -> Self {
                // SAFETY: module contract.
                $ty(unsafe { $and(self.0, o.0) })
            }
            #[inline(always)]
            unsafe fn add64(self, o: Self) -> Self {
                // SAFETY: module contract.
                $ty(unsafe { $add64(self.0, o.0) })
            }
            #[inline(always)]
            unsafe fn low64(v: u64) -> Self {
                // SAFETY: module contract.
                $ty(unsafe { $low64(v as i64) })
            }
            #[inline(always)]
            unsafe fn lsb_mask(self) -> Self {
                // SAFETY: module contract.
                unsafe {
                    // Word 0 into every word, its bit 0 to the sign, then spread.
                    $ty($srai32::<31>($slli32::<31>($shuf32::<0>(self.0))))
                }
            }
            #[inline(always)]
            unsafe fn gf_double(self) -> Self {
                // SAFETY: module contract.
                unsafe {
                    // Sign masks of the 32-bit words; word 3 (bit 127) goes to the low half
                    // (fold 0x87 in), word 1 (bit 63) to the high half (carry into bit 64).
                    let masks = $shuf32::<0x5F>($srai32::<31>(self.0));
                    let fold = $and(masks, Self::splat(DOUBLE_FOLD).0);
                    $ty($xor($slli64::<1>(self.0), fold))
                }
            }
            #[inline(always)]
            unsafe fn sigma(self) -> Self {
                // SAFETY: module contract.
                unsafe {
                    // (hi ‖ lo) → swap = (lo ‖ hi); ⊕ (hi ‖ 0) = (hi ⊕ lo ‖ hi).
                    let swapped = $shuf32::<0x4E>(self.0);
                    $ty($xor(swapped, $and(self.0, Self::splat(HIGH_HALF).0)))
                }
            }
            #[inline(always)]
            unsafe fn rot_last_word(self) -> Self {
                // SAFETY: module contract.
                unsafe {
                    $ty($pshufb(
                        self.0,
                        Self::splat(Block::from_bytes(ROT_LAST_WORD)).0,
                    ))
                }
            }
            #[inline(always)]
            unsafe fn prefix_xor_words(self) -> Self {
                // SAFETY: module contract.
                // (w0, w1, w2, w3) → (w0, w0 ⊕ w1, w2, w2 ⊕ w3) by a shift within each 64-bit
                // half (no shuffle), then w0 ⊕ w1 into the upper two words: one shuffle in all.
                unsafe {
                    let y = $xor(self.0, $slli64::<32>(self.0));
                    $ty($xor(y, $high_from_word1(y)))
                }
            }
        }
    };
}

#[inline(always)]
unsafe fn load128(p: *const Block) -> __m128i {
    // SAFETY: the caller guarantees one valid block; `Block` is 16-byte aligned.
    unsafe { _mm_load_si128(p.cast()) }
}
#[inline(always)]
unsafe fn store128(p: *mut Block, v: __m128i) {
    // SAFETY: the caller guarantees one valid block; `Block` is 16-byte aligned.
    unsafe { _mm_store_si128(p.cast(), v) }
}

lane_ops!(
    Xmm,
    1,
    16,
    |b: Block| load128(&b),
    _mm_xor_si128,
    _mm_and_si128,
    _mm_add_epi64,
    |v: i64| _mm_set_epi64x(0, v),
    _mm_slli_epi32,
    _mm_srai_epi32,
    _mm_slli_epi64,
    _mm_shuffle_epi32,
    _mm_shuffle_epi8,
    _mm_aesenc_si128,
    _mm_aesenclast_si128,
    load128,
    store128,
    |p, _stride| load128(p),
    |p, _stride, v| store128(p, v),
    |a, b, p: *mut Block| {
        store128(p, a);
        store128(p.add(1), b);
    },
    |p: *const Block| (load128(p), load128(p.add(1))),
    |base: *const Block, i: *const u32| load128(base.add(*i as usize)),
    |base: *mut Block, i: *const u32, v| store128(base.add(*i as usize), v),
    |i: *const u32| _mm_set_epi64x(0, i64::from(*i)),
    |y| _mm_and_si128(_mm_shuffle_epi32::<0x55>(y), load128(&HIGH_HALF))
);

lane_ops!(
    Ymm,
    2,
    16,
    |b: Block| _mm256_broadcastsi128_si256(load128(&b)),
    _mm256_xor_si256,
    _mm256_and_si256,
    _mm256_add_epi64,
    |v: i64| _mm256_set_epi64x(0, v, 0, v),
    _mm256_slli_epi32,
    _mm256_srai_epi32,
    _mm256_slli_epi64,
    _mm256_shuffle_epi32,
    _mm256_shuffle_epi8,
    _mm256_aesenc_epi128,
    _mm256_aesenclast_epi128,
    |p: *const Block| _mm256_loadu_si256(p.cast()),
    |p: *mut Block, v| _mm256_storeu_si256(p.cast(), v),
    |p: *const Block, stride: usize| _mm256_set_m128i(load128(p.add(stride)), load128(p)),
    |p: *mut Block, stride: usize, v| {
        store128(p, _mm256_castsi256_si128(v));
        store128(p.add(stride), _mm256_extracti128_si256::<1>(v));
    },
    |a, b, p: *mut Block| {
        // (a0, b0) and (a1, b1).
        _mm256_storeu_si256(p.cast(), _mm256_permute2x128_si256::<0x20>(a, b));
        _mm256_storeu_si256(p.add(2).cast(), _mm256_permute2x128_si256::<0x31>(a, b));
    },
    |p: *const Block| {
        let (lo, hi) = (
            _mm256_loadu_si256(p.cast()),
            _mm256_loadu_si256(p.add(2).cast()),
        );
        (
            _mm256_permute2x128_si256::<0x20>(lo, hi),
            _mm256_permute2x128_si256::<0x31>(lo, hi),
        )
    },
    |base: *const Block, i: *const u32| _mm256_set_m128i(
        load128(base.add(*i.add(1) as usize)),
        load128(base.add(*i as usize))
    ),
    |base: *mut Block, i: *const u32, v| {
        store128(base.add(*i as usize), _mm256_castsi256_si128(v));
        store128(
            base.add(*i.add(1) as usize),
            _mm256_extracti128_si256::<1>(v),
        );
    },
    |i: *const u32| _mm256_set_epi64x(0, i64::from(*i.add(1)), 0, i64::from(*i)),
    |y| _mm256_blend_epi32::<0b1100_1100>(_mm256_setzero_si256(), _mm256_shuffle_epi32::<0x55>(y))
);

lane_ops!(
    Zmm,
    4,
    32,
    |b: Block| _mm512_broadcast_i32x4(load128(&b)),
    _mm512_xor_si512,
    _mm512_and_si512,
    _mm512_add_epi64,
    |v: i64| _mm512_set_epi64(0, v, 0, v, 0, v, 0, v),
    _mm512_slli_epi32,
    _mm512_srai_epi32,
    _mm512_slli_epi64,
    _mm512_shuffle_epi32,
    _mm512_shuffle_epi8,
    _mm512_aesenc_epi128,
    _mm512_aesenclast_epi128,
    |p: *const Block| _mm512_loadu_si512(p.cast()),
    |p: *mut Block, v| _mm512_storeu_si512(p.cast(), v),
    |p: *const Block, stride: usize| {
        let v = _mm512_castsi128_si512(load128(p));
        let v = _mm512_inserti32x4::<1>(v, load128(p.add(stride)));
        let v = _mm512_inserti32x4::<2>(v, load128(p.add(2 * stride)));
        _mm512_inserti32x4::<3>(v, load128(p.add(3 * stride)))
    },
    |p: *mut Block, stride: usize, v| {
        store128(p, _mm512_castsi512_si128(v));
        store128(p.add(stride), _mm512_extracti32x4_epi32::<1>(v));
        store128(p.add(2 * stride), _mm512_extracti32x4_epi32::<2>(v));
        store128(p.add(3 * stride), _mm512_extracti32x4_epi32::<3>(v));
    },
    |a, b, p: *mut Block| {
        // Quadword indices: a's block k is 2k, 2k + 1; b's is 8 + 2k, 9 + 2k.
        let lo = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
        let hi = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
        _mm512_storeu_si512(p.cast(), _mm512_permutex2var_epi64(a, lo, b));
        _mm512_storeu_si512(p.add(4).cast(), _mm512_permutex2var_epi64(a, hi, b));
    },
    |p: *const Block| {
        // Blocks 0, 2 (of the first load), 4, 6 (8 + 0, 8 + 2 of the second), and the odd ones.
        let (x, y) = (
            _mm512_loadu_si512(p.cast()),
            _mm512_loadu_si512(p.add(4).cast()),
        );
        let even = _mm512_set_epi64(13, 12, 9, 8, 5, 4, 1, 0);
        let odd = _mm512_set_epi64(15, 14, 11, 10, 7, 6, 3, 2);
        (
            _mm512_permutex2var_epi64(x, even, y),
            _mm512_permutex2var_epi64(x, odd, y),
        )
    },
    |base: *const Block, i: *const u32| {
        let at = |k: usize| base.add(*i.add(k) as usize);
        let v = _mm512_castsi128_si512(load128(at(0)));
        let v = _mm512_inserti32x4::<1>(v, load128(at(1)));
        let v = _mm512_inserti32x4::<2>(v, load128(at(2)));
        _mm512_inserti32x4::<3>(v, load128(at(3)))
    },
    |base: *mut Block, i: *const u32, v| {
        let at = |k: usize| base.add(*i.add(k) as usize);
        store128(at(0), _mm512_castsi512_si128(v));
        store128(at(1), _mm512_extracti32x4_epi32::<1>(v));
        store128(at(2), _mm512_extracti32x4_epi32::<2>(v));
        store128(at(3), _mm512_extracti32x4_epi32::<3>(v));
    },
    |i: *const u32| {
        let v = |k: usize| i64::from(*i.add(k));
        _mm512_set_epi64(0, v(3), 0, v(2), 0, v(1), 0, v(0))
    },
    |y| _mm512_maskz_shuffle_epi32::<0x55>(0xCCCC, y)
);
