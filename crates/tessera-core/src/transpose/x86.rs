//! SIMD bit-matrix transposition: tiles of `ROWS` rows × 128 columns.
//!
//! Per tile: load 16 registers, register `i` holding row `16 l + (i ⊕ ROW_XOR)` of the tile in
//! 128-bit lane `l`; transpose the 16 × 16 bytes of every lane with four identical rounds of
//! byte interleaving (`y[2j] = unpacklo(x[j], x[j + 8])`, `y[2j + 1] = unpackhi(..)`: each
//! round rotates the 8-bit (register, byte) index left by one, so four rounds swap its halves);
//! then register `c` holds column byte `c` of all `ROWS` rows, and [`ByteVec::peel`] turns it
//! into 8 output rows of `ROWS` bits: 8 `movemask`s with a 1-bit shift between them, or (GFNI)
//! one `gf2p8affineqb` that transposes the eight 8 × 8 bit blocks of the register and one byte
//! permutation that gathers each output row's bytes.
//!
//! Input rows longer than a cache line are first copied a panel of 64 bytes at a time into a
//! contiguous buffer: rows of the OT matrix lie a power of two apart, and loading 16 bytes
//! from each of 64 such rows would map every line to the same few cache sets.
//!
//! # Safety
//! The [`ByteVec`] methods are only inlined into the `#[target_feature]` tile functions below,
//! which [`tiles`] calls only after detection; loads stay inside the tile, whose bounds
//! `tiles` computes from the checked shape.

use super::TransposeBackend;
use core::arch::x86_64::*;
use core::mem::MaybeUninit;

/// A register of `ROWS / 16` lanes of 16 bytes.
trait ByteVec: Copy {
    const ROWS: usize;
    /// Register `i` is loaded from row `i ⊕ ROW_XOR` of each group of 16.
    const ROW_XOR: usize;
    /// Lane `l` from `p + 16 l · stride`.
    unsafe fn load_rows(p: *const u8, stride: usize) -> Self;
    unsafe fn unpacklo(self, o: Self) -> Self;
    unsafe fn unpackhi(self, o: Self) -> Self;
    /// Writes the 8 bit columns of this register of column bytes (byte `k` from row `k`) as
    /// 8 rows of `ROWS / 8` bytes, `stride` bytes apart from `at`.
    unsafe fn peel(self, at: *mut u8, stride: usize);
}

/// A register whose bit columns come out by `movemask`.
trait MaskPeel: Copy {
    /// The most significant bit of each byte, byte `k` → bit `k`.
    unsafe fn movemask(self) -> u64;
    /// Shift each 64-bit word left by one.
    unsafe fn shl1(self) -> Self;
}

/// [`ByteVec::peel`] by 8 `movemask`s, most significant bit column first.
#[inline(always)]
unsafe fn peel_by_movemask<V: MaskPeel>(mut v: V, rows: usize, at: *mut u8, stride: usize) {
    for b in (0..8).rev() {
        // SAFETY: module contract: the caller's 8 output rows hold `rows / 8` bytes each.
        unsafe {
            let bits = v.movemask().to_le_bytes();
            core::ptr::copy_nonoverlapping(bits.as_ptr(), at.add(b * stride), rows / 8);
            v = v.shl1();
        }
    }
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
    const ROW_XOR: usize = 0;
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
    unsafe fn peel(self, at: *mut u8, stride: usize) {
        // SAFETY: module contract.
        unsafe { peel_by_movemask(self, Self::ROWS, at, stride) }
    }
}

impl MaskPeel for V128 {
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
    const ROW_XOR: usize = 0;
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
    unsafe fn peel(self, at: *mut u8, stride: usize) {
        // SAFETY: module contract.
        unsafe { peel_by_movemask(self, Self::ROWS, at, stride) }
    }
}

impl MaskPeel for V256 {
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
    const ROW_XOR: usize = 0;
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
    unsafe fn peel(self, at: *mut u8, stride: usize) {
        // SAFETY: module contract.
        unsafe { peel_by_movemask(self, Self::ROWS, at, stride) }
    }
}

impl MaskPeel for V512 {
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

/// A 512-bit register whose bit columns come out by GFNI. Rows are loaded in reverse order
/// within each group of 8, so that every 64-bit word of a column register holds its 8 rows
/// last first, the row order `gf2p8affineqb` reads a matrix in.
#[derive(Clone, Copy)]
struct G512(__m512i);

/// Byte `j` of each word is `1 << j`: `gf2p8affineqb(UNIT, A)` has bit `i` of its byte `j`
/// equal to bit `j` of A's byte `7 − i`, the transpose of A's rows taken last first.
const UNIT: i64 = 0x8040_2010_0804_0201_u64 as i64;

/// Byte indices gathering output rows `first..first + 4` (byte `j` of every word of the
/// transposed register) into the even words of a register, the odd words left zero-indexed.
const fn gather_rows(first: usize) -> [u8; 64] {
    let mut idx = [0u8; 64];
    let mut w = 0;
    while w < 4 {
        let mut k = 0;
        while k < 8 {
            idx[16 * w + k] = (8 * k + first + w) as u8;
            k += 1;
        }
        w += 1;
    }
    idx
}

/// Byte indices putting output row `j`'s bytes (byte `j` of every word) into word `j`.
const fn gather_words() -> [u8; 64] {
    let mut idx = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        idx[i] = (8 * (i % 8) + i / 8) as u8;
        i += 1;
    }
    idx
}

const ROWS_LOW: [u8; 64] = gather_rows(0);
const ROWS_HIGH: [u8; 64] = gather_rows(4);
const WORDS: [u8; 64] = gather_words();

impl ByteVec for G512 {
    const ROWS: usize = 64;
    const ROW_XOR: usize = 7;
    #[inline(always)]
    unsafe fn load_rows(p: *const u8, stride: usize) -> Self {
        // SAFETY: module contract (AVX-512F).
        G512(unsafe { V512::load_rows(p, stride).0 })
    }
    #[inline(always)]
    unsafe fn unpacklo(self, o: Self) -> Self {
        // SAFETY: module contract (AVX-512BW).
        G512(unsafe { V512(self.0).unpacklo(V512(o.0)).0 })
    }
    #[inline(always)]
    unsafe fn unpackhi(self, o: Self) -> Self {
        // SAFETY: module contract (AVX-512BW).
        G512(unsafe { V512(self.0).unpackhi(V512(o.0)).0 })
    }
    #[inline(always)]
    unsafe fn peel(self, at: *mut u8, stride: usize) {
        // SAFETY: module contract (AVX-512F/BW/VBMI, GFNI): the 8 output rows of 8 bytes lie
        // `stride` apart from `at`; the index tables are 64 bytes each.
        unsafe {
            let t = _mm512_gf2p8affine_epi64_epi8::<0>(_mm512_set1_epi64(UNIT), self.0);
            if stride == 16 {
                // Output rows are contiguous: rows 0..4 go to the even words of the first 64
                // bytes, rows 4..8 to those of the next 64.
                let low = _mm512_permutexvar_epi8(_mm512_loadu_si512(ROWS_LOW.as_ptr().cast()), t);
                let high =
                    _mm512_permutexvar_epi8(_mm512_loadu_si512(ROWS_HIGH.as_ptr().cast()), t);
                _mm512_mask_storeu_epi64(at.cast(), 0x55, low);
                _mm512_mask_storeu_epi64(at.add(64).cast(), 0x55, high);
            } else {
                let words = _mm512_permutexvar_epi8(_mm512_loadu_si512(WORDS.as_ptr().cast()), t);
                let mut out = [0u64; 8];
                _mm512_storeu_si512(out.as_mut_ptr().cast(), words);
                for (b, w) in out.iter().enumerate() {
                    core::ptr::copy_nonoverlapping(w.to_le_bytes().as_ptr(), at.add(b * stride), 8);
                }
            }
        }
    }
}

/// Byte indices taking, from the 8 rows of 16 bytes of a row group (two registers), the 8×8
/// bit blocks of column bytes `8 h..8 h + 8`: word `w` holds byte `8 h + w` of the 8 rows, the
/// last row first, as `gf2p8affineqb` reads a matrix.
const fn square_blocks(h: usize) -> [u8; 64] {
    let mut idx = [0u8; 64];
    let mut w = 0;
    while w < 8 {
        let mut m = 0;
        while m < 8 {
            idx[8 * w + m] = (16 * (7 - m) + 8 * h + w) as u8;
            m += 1;
        }
        w += 1;
    }
    idx
}

/// Byte indices taking, from 16 words (two registers) whose word `q` holds byte `q` of 8
/// output rows (byte `j` of the word for row `j`), output rows `4 part..4 part + 4` of 16
/// bytes each.
const fn square_rows(part: usize) -> [u8; 64] {
    let mut idx = [0u8; 64];
    let mut j = 0;
    while j < 4 {
        let mut q = 0;
        while q < 16 {
            idx[16 * j + q] = (8 * q + 4 * part + j) as u8;
            q += 1;
        }
        j += 1;
    }
    idx
}

const SQUARE_BLOCKS: [[u8; 64]; 2] = [square_blocks(0), square_blocks(1)];
const SQUARE_ROWS: [[u8; 64]; 2] = [square_rows(0), square_rows(1)];

/// Transposes the 8 × 8 matrix of 64-bit words held in `r` (word `i` of register `k` is entry
/// (k, i)) by three butterfly stages, each exchanging one bit of the register index with the
/// same bit of the word index: 256-bit halves, 128-bit lanes, words.
///
/// # Safety
/// AVX-512F is present.
#[inline(always)]
unsafe fn transpose_words(r: &mut [__m512i]) {
    // SAFETY: AVX-512F, the caller's contract.
    unsafe {
        for i in 0..4 {
            let (x, y) = (r[i], r[i + 4]);
            r[i] = _mm512_shuffle_i64x2::<0x44>(x, y);
            r[i + 4] = _mm512_shuffle_i64x2::<0xee>(x, y);
        }
        let low = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
        let high = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
        for i in [0, 1, 4, 5] {
            let (x, y) = (r[i], r[i + 2]);
            r[i] = _mm512_permutex2var_epi64(x, low, y);
            r[i + 2] = _mm512_permutex2var_epi64(x, high, y);
        }
        for i in [0, 2, 4, 6] {
            let (x, y) = (r[i], r[i + 1]);
            r[i] = _mm512_unpacklo_epi64(x, y);
            r[i + 1] = _mm512_unpackhi_epi64(x, y);
        }
    }
}

/// Transposes in place every 128 × 128 bit square of `squares` (a multiple of 2048 bytes) in
/// registers: per group of 8 rows, one two-register byte permutation per 8 column bytes lays
/// out the 8 × 8 bit blocks as words and `gf2p8affineqb` transposes them; two 8 × 8
/// transpositions of words per half bring each column byte's 16 blocks together, and one more
/// byte permutation per 4 output rows writes them out. Every load of a square precedes its
/// first store.
///
/// # Safety
/// AVX-512F/BW/VBMI and GFNI are present.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
pub(super) unsafe fn squares_gfni(squares: &mut [u8]) {
    // SAFETY: the features are the caller's contract; every pointer stays inside one square
    // of 2048 bytes, the index tables are 64 bytes each.
    unsafe {
        let unit = _mm512_set1_epi64(UNIT);
        let blocks = SQUARE_BLOCKS.map(|t| _mm512_loadu_si512(t.as_ptr().cast()));
        let rows = SQUARE_ROWS.map(|t| _mm512_loadu_si512(t.as_ptr().cast()));
        for square in squares.chunks_exact_mut(2048) {
            let p = square.as_mut_ptr();
            let g = blocks.map(|idx| {
                core::array::from_fn::<_, 16, _>(|group| {
                    let low = _mm512_loadu_si512(p.add(128 * group).cast());
                    let high = _mm512_loadu_si512(p.add(128 * group + 64).cast());
                    let b = _mm512_permutex2var_epi8(low, idx, high);
                    _mm512_gf2p8affine_epi64_epi8::<0>(unit, b)
                })
            });
            for (h, mut g) in g.into_iter().enumerate() {
                transpose_words(&mut g[..8]);
                transpose_words(&mut g[8..]);
                for w in 0..8 {
                    let first = 8 * (8 * h + w);
                    for (part, &idx) in rows.iter().enumerate() {
                        let o = _mm512_permutex2var_epi8(g[w], idx, g[8 + w]);
                        _mm512_storeu_si512(p.add(16 * (first + 4 * part)).cast(), o);
                    }
                }
            }
        }
    }
}

/// Rows per tile of a vector backend.
pub(super) fn rows_per_tile(backend: TransposeBackend) -> usize {
    match backend {
        TransposeBackend::Portable => 8,
        TransposeBackend::Sse2 => V128::ROWS,
        TransposeBackend::Avx2 => V256::ROWS,
        TransposeBackend::Avx512 => V512::ROWS,
        TransposeBackend::Gfni => G512::ROWS,
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
            TransposeBackend::Gfni => tiles_gfni(input, rows, cols, out, covered),
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

#[target_feature(enable = "sse2,avx2,avx512f,avx512bw,avx512vbmi,gfni")]
unsafe fn tiles_gfni(
    input: &[u8],
    rows: usize,
    cols: usize,
    out: &mut [u8],
    covered: (usize, usize),
) {
    // SAFETY: as `tiles`.
    unsafe { tile_kernel::<G512>(input, rows, cols, out, covered) }
}

/// Input rows per strip: the strip's output (128 rows × `STRIP_ROWS / 8` bytes, for each 16
/// column bytes) is staged in 8 KiB, then written out whole lines at a time. Writing each
/// tile's 8-byte pieces straight into rows that lie `rows / 8` bytes apart would thrash the
/// cache when that stride is a multiple of 4 KiB (the m × 128 direction), and into a large
/// cold output it would leave every line half written between two tiles (the 128 × m one).
const STRIP_ROWS: usize = 512;

/// Bytes per input row of a panel: one cache line.
const PANEL_BYTES: usize = 64;

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
    let mut stage = MaybeUninit::<[u8; 128 * STRIP_ROWS / 8]>::uninit();
    let mut panel = MaybeUninit::<[u8; STRIP_ROWS * PANEL_BYTES]>::uninit();
    let (stage, panel) = (
        stage.as_mut_ptr().cast::<u8>(),
        panel.as_mut_ptr().cast::<u8>(),
    );
    let paneled = in_stride > PANEL_BYTES;
    for strip in (0..covered.0).step_by(STRIP_ROWS) {
        let strip_rows = STRIP_ROWS.min(covered.0 - strip);
        let stage_stride = strip_rows / 8;
        for pb in (0..covered.1 / 8).step_by(PANEL_BYTES) {
            let width = PANEL_BYTES.min(covered.1 / 8 - pb);
            // SAFETY: rows strip..strip + strip_rows and column bytes pb..pb + width lie
            // inside `covered`; the panel holds STRIP_ROWS rows of PANEL_BYTES.
            let (base, stride) = unsafe {
                let first = src.add(strip * in_stride + pb);
                if paneled {
                    for r in 0..strip_rows {
                        let (from, to) = (first.add(r * in_stride), panel.add(r * PANEL_BYTES));
                        if width == PANEL_BYTES {
                            core::ptr::copy_nonoverlapping(from, to, PANEL_BYTES);
                        } else {
                            core::ptr::copy_nonoverlapping(from, to, width);
                        }
                    }
                    (panel.cast_const(), PANEL_BYTES)
                } else {
                    (first, in_stride)
                }
            };
            for cb in (pb..pb + width).step_by(16) {
                for r0 in (0..strip_rows).step_by(V::ROWS) {
                    // SAFETY: tile rows r0..r0 + ROWS of the strip and column bytes
                    // cb..cb + 16 lie inside `covered` (read from the panel when paneled,
                    // where they were copied); the staged bytes lie inside `stage`.
                    unsafe {
                        let row = base.add(r0 * stride + cb - pb);
                        let mut x = [V::load_rows(row.add(V::ROW_XOR * stride), stride); 16];
                        for (i, v) in x.iter_mut().enumerate().skip(1) {
                            *v = V::load_rows(row.add((i ^ V::ROW_XOR) * stride), stride);
                        }
                        for _ in 0..4 {
                            let y = x;
                            for j in 0..8 {
                                x[2 * j] = y[j].unpacklo(y[j + 8]);
                                x[2 * j + 1] = y[j].unpackhi(y[j + 8]);
                            }
                        }
                        let at = stage.add(r0 / 8);
                        for (c, &column) in x.iter().enumerate() {
                            column.peel(at.add(8 * c * stage_stride), stage_stride);
                        }
                    }
                }
                // SAFETY: output rows 8 cb..8 cb + 128 have bytes strip / 8 .. (strip +
                // strip_rows) / 8, which the stage's rows hold; when the strip is whole rows,
                // those are one contiguous run.
                unsafe {
                    let to = dst.add(8 * cb * out_stride + strip / 8);
                    if stage_stride == out_stride {
                        core::ptr::copy_nonoverlapping(stage, to, 128 * out_stride);
                    } else {
                        for k in 0..128 {
                            core::ptr::copy_nonoverlapping(
                                stage.add(k * stage_stride),
                                to.add(k * out_stride),
                                stage_stride,
                            );
                        }
                    }
                }
            }
        }
    }
}
