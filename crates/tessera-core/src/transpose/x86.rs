//! SIMD bit-matrix transposition: tiles of `ROWS` rows × 128 columns.
//!
//! Per tile: load 16 registers, register `i` holding row `16 l + i` of the tile in 128-bit lane
//! `l`; transpose the 16 × 16 bytes of every lane with four identical rounds of byte
//! interleaving (`y[2j] = unpacklo(x[j], x[j + 8])`, `y[2j + 1] = unpackhi(..)`: each round
//! rotates the 8-bit (register, byte) index left by one, so four rounds swap its halves); then
//! register `c` holds column byte `c` of all `ROWS` rows, and 8 `movemask`s (with a 1-bit shift
//! between them) peel off its 8 bit columns, `ROWS` bits each.
//!
//! # Safety
//! The [`ByteVec`] methods are only inlined into the `#[target_feature]` tile functions below,
//! which [`tiles`] calls only after detection; loads stay inside the tile, whose bounds
//! `tiles` computes from the checked shape.

use super::TransposeBackend;
use core::arch::x86_64::*;

/// A register of `ROWS / 16` lanes of 16 bytes.
trait ByteVec: Copy {
    const ROWS: usize;
    /// Lane `l` from `p + 16 l · stride`.
    unsafe fn load_rows(p: *const u8, stride: usize) -> Self;
    unsafe fn unpacklo(self, o: Self) -> Self;
    unsafe fn unpackhi(self, o: Self) -> Self;
    /// The most significant bit of each byte, byte `k` → bit `k`.
    unsafe fn movemask(self) -> u64;
    /// Shift each 64-bit word left by one.
    unsafe fn shl1(self) -> Self;
}

#[derive(Clone, Copy)]
struct V128(__m128i);
#[derive(Clone, Copy)]
struct V256(__m256i);
#[derive(Clone, Copy)]
struct V512(__m512i);

#[inline(always)]
unsafe fn lane(p: *const u8) -> __m128i {
    // SAFETY: module contract: 16 readable bytes at `p`.
    unsafe { _mm_loadu_si128(p.cast()) }
}

impl ByteVec for V128 {
    const ROWS: usize = 16;
    #[inline(always)]
    unsafe fn load_rows(p: *const u8, _stride: usize) -> Self {
        // SAFETY: module contract.
        V128(unsafe { lane(p) })
    }
    #[inline(always)]
    unsafe fn unpacklo(self, o: Self) -> Self {
        // SAFETY: module contract (SSE2).
        V128(unsafe { _mm_unpacklo_epi8(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn unpackhi(self, o: Self) -> Self {
        // SAFETY: module contract (SSE2).
        V128(unsafe { _mm_unpackhi_epi8(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn movemask(self) -> u64 {
        // SAFETY: module contract (SSE2).
        unsafe { _mm_movemask_epi8(self.0) as u16 as u64 }
    }
    #[inline(always)]
    unsafe fn shl1(self) -> Self {
        // SAFETY: module contract (SSE2).
        V128(unsafe { _mm_slli_epi64::<1>(self.0) })
    }
}

impl ByteVec for V256 {
    const ROWS: usize = 32;
    #[inline(always)]
    unsafe fn load_rows(p: *const u8, stride: usize) -> Self {
        // SAFETY: module contract (AVX2).
        V256(unsafe { _mm256_set_m128i(lane(p.add(16 * stride)), lane(p)) })
    }
    #[inline(always)]
    unsafe fn unpacklo(self, o: Self) -> Self {
        // SAFETY: module contract (AVX2).
        V256(unsafe { _mm256_unpacklo_epi8(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn unpackhi(self, o: Self) -> Self {
        // SAFETY: module contract (AVX2).
        V256(unsafe { _mm256_unpackhi_epi8(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn movemask(self) -> u64 {
        // SAFETY: module contract (AVX2).
        unsafe { _mm256_movemask_epi8(self.0) as u32 as u64 }
    }
    #[inline(always)]
    unsafe fn shl1(self) -> Self {
        // SAFETY: module contract (AVX2).
        V256(unsafe { _mm256_slli_epi64::<1>(self.0) })
    }
}

impl ByteVec for V512 {
    const ROWS: usize = 64;
    #[inline(always)]
    unsafe fn load_rows(p: *const u8, stride: usize) -> Self {
        // SAFETY: module contract (AVX-512F).
        unsafe {
            let v = _mm512_castsi128_si512(lane(p));
            let v = _mm512_inserti32x4::<1>(v, lane(p.add(16 * stride)));
            let v = _mm512_inserti32x4::<2>(v, lane(p.add(32 * stride)));
            V512(_mm512_inserti32x4::<3>(v, lane(p.add(48 * stride))))
        }
    }
    #[inline(always)]
    unsafe fn unpacklo(self, o: Self) -> Self {
        // SAFETY: module contract (AVX-512BW).
        V512(unsafe { _mm512_unpacklo_epi8(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn unpackhi(self, o: Self) -> Self {
        // SAFETY: module contract (AVX-512BW).
        V512(unsafe { _mm512_unpackhi_epi8(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn movemask(self) -> u64 {
        // SAFETY: module contract (AVX-512BW).
        unsafe { _mm512_movepi8_mask(self.0) }
    }
    #[inline(always)]
    unsafe fn shl1(self) -> Self {
        // SAFETY: module contract (AVX-512F).
        V512(unsafe { _mm512_slli_epi64::<1>(self.0) })
    }
}

/// Rows per tile of a vector backend.
pub(super) fn rows_per_tile(backend: TransposeBackend) -> usize {
    match backend {
        TransposeBackend::Portable => 8,
        TransposeBackend::Sse2 => V128::ROWS,
        TransposeBackend::Avx2 => V256::ROWS,
        TransposeBackend::Avx512 => V512::ROWS,
    }
}

/// Transposes every whole tile with `backend` (which the caller checked is supported) and
/// returns how many rows and columns that covered.
pub(super) fn tiles(
    backend: TransposeBackend,
    input: &[u8],
    rows: usize,
    cols: usize,
    out: &mut [u8],
) -> (usize, usize) {
    let covered = (rows - rows % rows_per_tile(backend), cols - cols % 128);
    // SAFETY: the caller checked the features; the shape was checked, and the kernels only
    // touch `covered` rows and columns.
    unsafe {
        match backend {
            TransposeBackend::Portable => return (0, 0),
            TransposeBackend::Sse2 => tiles_sse2(input, rows, cols, out, covered),
            TransposeBackend::Avx2 => tiles_avx2(input, rows, cols, out, covered),
            TransposeBackend::Avx512 => tiles_avx512(input, rows, cols, out, covered),
        }
    }
    covered
}

#[target_feature(enable = "sse2")]
unsafe fn tiles_sse2(
    input: &[u8],
    rows: usize,
    cols: usize,
    out: &mut [u8],
    covered: (usize, usize),
) {
    // SAFETY: as `tiles`.
    unsafe { tile_kernel::<V128>(input, rows, cols, out, covered) }
}

#[target_feature(enable = "sse2,avx2")]
unsafe fn tiles_avx2(
    input: &[u8],
    rows: usize,
    cols: usize,
    out: &mut [u8],
    covered: (usize, usize),
) {
    // SAFETY: as `tiles`.
    unsafe { tile_kernel::<V256>(input, rows, cols, out, covered) }
}

#[target_feature(enable = "sse2,avx2,avx512f,avx512bw")]
unsafe fn tiles_avx512(
    input: &[u8],
    rows: usize,
    cols: usize,
    out: &mut [u8],
    covered: (usize, usize),
) {
    // SAFETY: as `tiles`.
    unsafe { tile_kernel::<V512>(input, rows, cols, out, covered) }
}

/// Input rows per strip: the strip's output (128 rows × `STRIP_ROWS / 8` bytes) is staged in
/// 8 KiB, then written out a cache line per output row. Writing each tile's 2-8 bytes straight
/// into rows that lie `rows / 8` bytes apart would thrash the cache when that stride is a
/// multiple of 4 KiB (the m × 128 direction).
const STRIP_ROWS: usize = 512;

#[inline(always)]
unsafe fn tile_kernel<V: ByteVec>(
    input: &[u8],
    rows: usize,
    cols: usize,
    out: &mut [u8],
    covered: (usize, usize),
) {
    let (in_stride, out_stride) = (cols / 8, rows / 8);
    let (src, dst) = (input.as_ptr(), out.as_mut_ptr());
    let mut stage = [0u8; 128 * STRIP_ROWS / 8];
    // Short output rows (the 128 × m direction) are written in place.
    let staged = rows > STRIP_ROWS;
    for strip in (0..covered.0).step_by(STRIP_ROWS) {
        let strip_rows = STRIP_ROWS.min(covered.0 - strip);
        let stage_stride = if staged { strip_rows / 8 } else { out_stride };
        for cb in (0..covered.1 / 8).step_by(16) {
            for r0 in (strip..strip + strip_rows).step_by(V::ROWS) {
                // SAFETY: rows r0..r0 + ROWS and column bytes cb..cb + 16 lie inside
                // `covered`; the staged bytes lie inside `stage`.
                unsafe {
                    let row = src.add(r0 * in_stride + cb);
                    let mut x = [V::load_rows(row, in_stride); 16];
                    for (i, v) in x.iter_mut().enumerate().skip(1) {
                        *v = V::load_rows(row.add(i * in_stride), in_stride);
                    }
                    for _ in 0..4 {
                        let y = x;
                        for j in 0..8 {
                            x[2 * j] = y[j].unpacklo(y[j + 8]);
                            x[2 * j + 1] = y[j].unpackhi(y[j + 8]);
                        }
                    }
                    let at = if staged {
                        stage.as_mut_ptr().add((r0 - strip) / 8)
                    } else {
                        dst.add(8 * cb * out_stride + r0 / 8)
                    };
                    for (c, &column) in x.iter().enumerate() {
                        let mut v = column;
                        for b in (0..8).rev() {
                            let bits = v.movemask().to_le_bytes();
                            core::ptr::copy_nonoverlapping(
                                bits.as_ptr(),
                                at.add((8 * c + b) * stage_stride),
                                V::ROWS / 8,
                            );
                            v = v.shl1();
                        }
                    }
                }
            }
            if staged {
                for k in 0..128 {
                    // SAFETY: output row 8 cb + k has bytes strip / 8 .. (strip + strip_rows) / 8.
                    unsafe {
                        core::ptr::copy_nonoverlapping(
                            stage.as_ptr().add(k * stage_stride),
                            dst.add((8 * cb + k) * out_stride + strip / 8),
                            stage_stride,
                        );
                    }
                }
            }
        }
    }
}
