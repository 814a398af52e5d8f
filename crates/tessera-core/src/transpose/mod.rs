//! Bit-matrix transposition, the bottleneck of IKNP-style OT extension (VASA §4.3.2): the
//! receiver holds 128 columns of m bits and needs m rows of 128 bits, and back.
//!
//! A matrix of `rows × cols` bits is stored row-major, `cols / 8` bytes per row, bit `j` of a
//! row being bit `j % 8` of byte `j / 8`. [`transpose`] writes the `cols × rows` transpose in the
//! same layout. Both dimensions must be multiples of 8.
//!
//! Backends: `portable` (8×8 blocks in a `u64`), and SSE2, AVX2, AVX-512BW, which widen EMP's
//! SSE `movemask` transposition to 32 and 64 rows per instruction (VASA §4.3.2), and
//! AVX-512 with GFNI, which transposes eight 8×8 bit blocks per `gf2p8affineqb`.

#[cfg(target_arch = "x86_64")]
mod x86;

use crate::{Block, Error};
use core::fmt;

/// A transposition implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransposeBackend {
    /// 8×8 bit blocks transposed inside a `u64`.
    Portable,
    /// 16 rows per `movemask`.
    Sse2,
    /// 32 rows per `movemask`.
    Avx2,
    /// 64 rows per `movepi8_mask` (AVX-512BW).
    Avx512,
    /// Eight 8×8 bit blocks per `gf2p8affineqb` (AVX-512BW, AVX-512 VBMI and GFNI).
    Gfni,
}

impl TransposeBackend {
    /// Every backend, slowest first.
    pub const ALL: [TransposeBackend; 5] = [
        TransposeBackend::Portable,
        TransposeBackend::Sse2,
        TransposeBackend::Avx2,
        TransposeBackend::Avx512,
        TransposeBackend::Gfni,
    ];

    /// Its name in benchmarks.
    pub const fn name(self) -> &'static str {
        match self {
            TransposeBackend::Portable => "portable",
            TransposeBackend::Sse2 => "sse2",
            TransposeBackend::Avx2 => "avx2",
            TransposeBackend::Avx512 => "avx512",
            TransposeBackend::Gfni => "gfni",
        }
    }

    /// Whether this CPU can run it.
    pub fn is_supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            match self {
                TransposeBackend::Portable => true,
                TransposeBackend::Sse2 => has!("sse2"),
                TransposeBackend::Avx2 => has!("avx2"),
                TransposeBackend::Avx512 => has!("avx512f") && has!("avx512bw"),
                TransposeBackend::Gfni => {
                    has!("avx512f") && has!("avx512bw") && has!("avx512vbmi") && has!("gfni")
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == TransposeBackend::Portable
        }
    }

    /// The backends this CPU supports, slowest first.
    pub fn available() -> Vec<TransposeBackend> {
        Self::ALL.into_iter().filter(|b| b.is_supported()).collect()
    }

    /// The fastest supported backend.
    pub fn best() -> TransposeBackend {
        Self::ALL
            .into_iter()
            .rev()
            .find(|b| b.is_supported())
            .unwrap_or(TransposeBackend::Portable)
    }
}

impl fmt::Display for TransposeBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Checks that both dimensions are multiples of 8 and both buffers hold `rows × cols` bits.
fn check_shape(input: &[u8], rows: usize, cols: usize, out: &[u8]) -> Result<(), Error> {
    if !rows.is_multiple_of(8) || !cols.is_multiple_of(8) {
        return Err(Error::Shape(format!(
            "{rows} × {cols}: both dimensions must be multiples of 8"
        )));
    }
    let bytes = rows / 8 * cols;
    if input.len() != bytes || out.len() != bytes {
        return Err(Error::Shape(format!(
            "{rows} × {cols} bits need {bytes} bytes; input has {}, output {}",
            input.len(),
            out.len()
        )));
    }
    Ok(())
}

/// Transposes the `rows × cols` bit matrix `input` into `out` on the fastest backend.
pub fn transpose(input: &[u8], rows: usize, cols: usize, out: &mut [u8]) -> Result<(), Error> {
    transpose_with(TransposeBackend::best(), input, rows, cols, out)
}

/// Transposes on a given backend; an error if this CPU lacks it or the shape is wrong.
pub fn transpose_with(
    backend: TransposeBackend,
    input: &[u8],
    rows: usize,
    cols: usize,
    out: &mut [u8],
) -> Result<(), Error> {
    check_shape(input, rows, cols, out)?;
    if !backend.is_supported() {
        return Err(Error::UnsupportedTranspose(backend.name()));
    }
    // The vector kernels cover whole tiles of `tile_rows` × 128; the rest is portable.
    let (tile_rows, (rows_full, cols_full)) = match backend {
        TransposeBackend::Portable => (0, (0, 0)),
        #[cfg(target_arch = "x86_64")]
        _ => {
            let tile_rows = x86::rows_per_tile(backend);
            (tile_rows, x86::tiles(backend, input, rows, cols, out))
        }
        #[cfg(not(target_arch = "x86_64"))]
        _ => (0, (0, 0)),
    };
    debug_assert!(tile_rows == 0 || rows_full % tile_rows == 0);
    portable_region(input, rows, cols, out, rows_full..rows, 0..cols / 8);
    portable_region(
        input,
        rows,
        cols,
        out,
        0..rows_full,
        cols_full / 8..cols / 8,
    );
    Ok(())
}

/// m rows of 128 bits (one [`Block`] each) from 128 rows of m bits (`m / 8` bytes each), as
/// the IKNP receiver needs. `m` must be a multiple of 8.
pub fn transpose_128xm_to_blocks(input: &[u8], m: usize, out: &mut [Block]) -> Result<(), Error> {
    if out.len() != m {
        return Err(Error::Shape(format!(
            "{m} output rows need {m} blocks, got {}",
            out.len()
        )));
    }
    transpose(input, 128, m, bytemuck::cast_slice_mut(out))
}

/// 128 rows of m bits from m rows of 128 bits (one [`Block`] each): the inverse of
/// [`transpose_128xm_to_blocks`].
pub fn transpose_blocks_to_128xm(input: &[Block], out: &mut [u8]) -> Result<(), Error> {
    transpose(bytemuck::cast_slice(input), input.len(), 128, out)
}

/// Transposes in place each 128 × 128 bit matrix of `squares` on the fastest backend: square
/// `i` is blocks `128 i..128 i + 128`, one row each, and afterwards bit `c` of its block `r` is
/// what bit `r` of its block `c` was. This is the OT extension's transposition when the 128
/// columns of each 128 OTs are laid out together (SoftSpoken's column sums are written so):
/// every square is 2 KiB of contiguous memory, transposed in registers where GFNI is present.
///
/// An error if `squares` is not a whole number of squares.
pub fn transpose_squares(squares: &mut [Block]) -> Result<(), Error> {
    transpose_squares_with(TransposeBackend::best(), squares)
}

/// [`transpose_squares`] on a given backend; an error if this CPU lacks it or the length is
/// not a multiple of 128.
pub fn transpose_squares_with(
    backend: TransposeBackend,
    squares: &mut [Block],
) -> Result<(), Error> {
    if !squares.len().is_multiple_of(128) {
        return Err(Error::Shape(format!(
            "{} blocks are not a whole number of 128 × 128 bit squares",
            squares.len()
        )));
    }
    if !backend.is_supported() {
        return Err(Error::UnsupportedTranspose(backend.name()));
    }
    #[cfg(target_arch = "x86_64")]
    if backend == TransposeBackend::Gfni {
        // SAFETY: the backend is supported, which is the kernel's contract.
        unsafe { x86::squares_gfni(bytemuck::cast_slice_mut(squares)) };
        return Ok(());
    }
    // The other backends transpose a copy of each square back into its place.
    for square in squares.chunks_exact_mut(128) {
        let copy: [Block; 128] = square.try_into().expect("a square is 128 blocks");
        transpose_with(
            backend,
            bytemuck::cast_slice(&copy),
            128,
            128,
            bytemuck::cast_slice_mut(square),
        )?;
    }
    Ok(())
}

/// Transposes the 8×8 bit matrix held in `x` (bit 8r + c is entry (r, c)).
#[inline(always)]
fn transpose8x8(mut x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^ t ^ (t << 28)
}

/// Transposes the rows `row_range` × column bytes `col_bytes` of the matrix, 8 × 8 at a time.
/// Both row bounds are multiples of 8.
fn portable_region(
    input: &[u8],
    rows: usize,
    cols: usize,
    out: &mut [u8],
    row_range: core::ops::Range<usize>,
    col_bytes: core::ops::Range<usize>,
) {
    let (in_stride, out_stride) = (cols / 8, rows / 8);
    for r in row_range.step_by(8) {
        for cb in col_bytes.clone() {
            let gathered = (0..8).fold(0u64, |acc, k| {
                acc | (u64::from(input[(r + k) * in_stride + cb]) << (8 * k))
            });
            let t = transpose8x8(gathered).to_le_bytes();
            for (b, &byte) in t.iter().enumerate() {
                out[(8 * cb + b) * out_stride + r / 8] = byte;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bit(m: &[u8], stride_bits: usize, r: usize, c: usize) -> bool {
        let i = r * stride_bits + c;
        (m[i / 8] >> (i % 8)) & 1 == 1
    }

    fn naive(input: &[u8], rows: usize, cols: usize) -> Vec<u8> {
        let mut out = vec![0u8; input.len()];
        for r in 0..rows {
            for c in 0..cols {
                if bit(input, cols, r, c) {
                    let i = c * rows + r;
                    out[i / 8] |= 1 << (i % 8);
                }
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn every_backend_matches_the_bit_by_bit_transpose_and_round_trips(
            rows8 in 1usize..40, cols8 in 1usize..40, seed in any::<u64>()
        ) {
            let (rows, cols) = (rows8 * 8, cols8 * 8);
            let mut prg = crate::Prg::with_backend(Block::new(seed as u128), crate::Backend::Portable).unwrap();
            let mut input = vec![0u8; rows * cols / 8];
            rand_core::RngCore::fill_bytes(&mut prg, &mut input);
            let expect = naive(&input, rows, cols);
            for backend in TransposeBackend::available() {
                let mut out = vec![0u8; input.len()];
                transpose_with(backend, &input, rows, cols, &mut out).unwrap();
                prop_assert_eq!(&out, &expect, "{} {}x{}", backend, rows, cols);
                let mut back = vec![0u8; input.len()];
                transpose_with(backend, &out, cols, rows, &mut back).unwrap();
                prop_assert_eq!(&back, &input);
            }
        }
    }

    #[test]
    fn ot_shapes_round_trip_through_blocks() {
        for m in [8usize, 128, 1000, 4096 + 24] {
            let mut prg =
                crate::Prg::with_backend(Block::new(m as u128), crate::Backend::Portable).unwrap();
            let mut cols = vec![0u8; 16 * m];
            rand_core::RngCore::fill_bytes(&mut prg, &mut cols);
            let mut rows = vec![Block::ZERO; m];
            transpose_128xm_to_blocks(&cols, m, &mut rows).unwrap();
            for (j, row) in rows.iter().enumerate().step_by(97) {
                for i in 0..128 {
                    assert_eq!((row.as_u128() >> i) & 1 == 1, bit(&cols, m, i, j));
                }
            }
            let mut back = vec![0u8; 16 * m];
            transpose_blocks_to_128xm(&rows, &mut back).unwrap();
            assert_eq!(back, cols);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn squares_transpose_in_place_on_every_backend(squares in 0usize..5, seed in any::<u64>()) {
            let mut prg = crate::Prg::with_backend(Block::new(seed as u128), crate::Backend::Portable).unwrap();
            let input = prg.random_blocks(128 * squares);
            for backend in TransposeBackend::available() {
                let mut got = input.clone();
                transpose_squares_with(backend, &mut got).unwrap();
                for (s, (got, input)) in got.chunks(128).zip(input.chunks(128)).enumerate() {
                    for (c, row) in got.iter().enumerate() {
                        let want = (0..128).fold(0u128, |acc, r| {
                            acc | (((input[r].as_u128() >> c) & 1) << r)
                        });
                        prop_assert_eq!(row.as_u128(), want, "{} square {} row {}", backend, s, c);
                    }
                }
                transpose_squares_with(backend, &mut got).unwrap();
                prop_assert_eq!(&got, &input, "{} round trip", backend);
            }
        }
    }

    #[test]
    fn bad_shapes_are_errors() {
        let mut out = [0u8; 16];
        assert!(transpose(&[0u8; 16], 12, 8, &mut out).is_err());
        assert!(transpose(&[0u8; 15], 8, 16, &mut out).is_err());
        assert!(transpose_128xm_to_blocks(&[0u8; 16], 8, &mut [Block::ZERO; 3]).is_err());
        assert!(transpose_squares(&mut [Block::ZERO; 129]).is_err());
        for b in TransposeBackend::ALL {
            if !b.is_supported() {
                println!("SKIPPED: {b} transposition (this CPU lacks it)");
                assert!(transpose_with(b, &[0u8; 8], 8, 8, &mut [0u8; 8]).is_err());
            }
        }
    }
}
