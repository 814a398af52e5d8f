//! Batched arithmetic in GF(2^8) = GF(2)\[x\] / (x^8 + x^4 + x^3 + x + 1), the field of AES
//! (FIPS-197 §4), with bit `i` of a byte the coefficient of x^i. The MiniMac protocol and its
//! Reed-Solomon codes compute in it (Damgård and Zakarias, "Fast Oblivious AES").
//!
//! Every function is constant-time in the values: no secret-indexed tables, no secret branches.
//! Two implementations agree bit for bit ([`Gf256Kernel`]): `portable` (eight bytes per `u64`,
//! shift-and-add with masks) and `gfni256`/`gfni512` (`gf2p8mulb`, which multiplies in exactly
//! this field, on 256- or 512-bit registers). The kernel follows the AES backend
//! ([`Gf256Kernel::active`]), so `TESSERA_AES_BACKEND=portable` makes this module portable too.

use crate::Backend;
use std::sync::OnceLock;

/// The reduction polynomial's low byte: x^8 = x^4 + x^3 + x + 1.
pub const POLY: u8 = 0x1b;

const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The product a·b, constant-time.
pub const fn mul(a: u8, b: u8) -> u8 {
    let (mut a, mut r, mut k) = (a, 0u8, 0);
    while k < 8 {
        r ^= a & 0u8.wrapping_sub((b >> k) & 1);
        a = (a << 1) ^ (POLY & 0u8.wrapping_sub(a >> 7));
        k += 1;
    }
    r
}

/// a^e, constant-time in `a` (square and multiply over all 8 bits of `e`).
pub const fn pow(a: u8, e: u8) -> u8 {
    let (mut r, mut k) = (1u8, 8);
    while k > 0 {
        k -= 1;
        r = mul(r, r);
        let m = mul(r, a);
        let take = 0u8.wrapping_sub((e >> k) & 1);
        r = (m & take) | (r & !take);
    }
    r
}

/// The inverse of `a` (a^254), and 0 for 0.
pub const fn inv(a: u8) -> u8 {
    pow(a, 254)
}

/// Eight products at once: byte lanes of `a` times byte lanes of `b`.
#[inline(always)]
fn mul_word(mut a: u64, b: u64) -> u64 {
    let mut r = 0;
    for k in 0..8 {
        r ^= a & (((b >> k) & LOW) * 0xff);
        a = ((a & !HIGH) << 1) ^ (((a & HIGH) >> 7) * POLY as u64);
    }
    r
}

/// Eight products by one scalar `c`: byte lanes of `a` times `c`.
#[inline(always)]
fn scale_word(mut a: u64, c: u8) -> u64 {
    let mut r = 0;
    for k in 0..8 {
        r ^= a & 0u64.wrapping_sub(((c >> k) & 1) as u64);
        a = ((a & !HIGH) << 1) ^ (((a & HIGH) >> 7) * POLY as u64);
    }
    r
}

fn word(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(w)
}

fn mul_portable(a: &[u8], b: &[u8], out: &mut [u8]) {
    for ((a, b), o) in a.chunks(8).zip(b.chunks(8)).zip(out.chunks_mut(8)) {
        let p = mul_word(word(a), word(b)).to_le_bytes();
        o.copy_from_slice(&p[..o.len()]);
    }
}

fn mul_acc_portable(acc: &mut [u8], x: &[u8], c: u8) {
    for (o, x) in acc.chunks_mut(8).zip(x.chunks(8)) {
        let p = (scale_word(word(x), c) ^ word(o)).to_le_bytes();
        o.copy_from_slice(&p[..o.len()]);
    }
}

fn fma_portable(acc: &mut [u8], a: &[u8], b: &[u8]) {
    for ((o, a), b) in acc.chunks_mut(8).zip(a.chunks(8)).zip(b.chunks(8)) {
        let p = (mul_word(word(a), word(b)) ^ word(o)).to_le_bytes();
        o.copy_from_slice(&p[..o.len()]);
    }
}

/// An implementation of the batched operations; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gf256Kernel {
    /// Eight bytes per `u64`, constant-time shift-and-add.
    Portable,
    /// GFNI `vgf2p8mulb` on 256-bit registers (AVX2).
    Gfni256,
    /// GFNI `vgf2p8mulb` on 512-bit registers (AVX-512BW).
    Gfni512,
}

impl Gf256Kernel {
    /// Every kernel, slowest first.
    pub const ALL: [Gf256Kernel; 3] = [
        Gf256Kernel::Portable,
        Gf256Kernel::Gfni256,
        Gf256Kernel::Gfni512,
    ];

    /// The kernel's name.
    pub const fn name(self) -> &'static str {
        match self {
            Gf256Kernel::Portable => "portable",
            Gf256Kernel::Gfni256 => "gfni256",
            Gf256Kernel::Gfni512 => "gfni512",
        }
    }

    /// Whether this CPU can run the kernel.
    pub fn is_supported(self) -> bool {
        match self {
            Gf256Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Gf256Kernel::Gfni256 => {
                std::arch::is_x86_feature_detected!("gfni")
                    && std::arch::is_x86_feature_detected!("avx2")
            }
            #[cfg(target_arch = "x86_64")]
            Gf256Kernel::Gfni512 => {
                std::arch::is_x86_feature_detected!("gfni")
                    && std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The kernels this CPU supports, slowest first.
    pub fn available() -> Vec<Gf256Kernel> {
        Self::ALL.into_iter().filter(|k| k.is_supported()).collect()
    }

    /// The kernel that goes with the active AES backend: GFNI on the register width of a VAES
    /// backend where the CPU has GFNI, the portable one otherwise.
    pub fn active() -> Gf256Kernel {
        static ACTIVE: OnceLock<Gf256Kernel> = OnceLock::new();
        *ACTIVE.get_or_init(|| {
            let wanted: &[Gf256Kernel] = match Backend::active() {
                Backend::Vaes512 => &[Gf256Kernel::Gfni512, Gf256Kernel::Gfni256],
                Backend::Vaes256 => &[Gf256Kernel::Gfni256],
                Backend::Portable | Backend::Aesni => &[],
            };
            wanted
                .iter()
                .copied()
                .find(|k| k.is_supported())
                .unwrap_or(Gf256Kernel::Portable)
        })
    }

    /// A kernel this CPU runs: `self`, or the portable one where it cannot.
    fn usable(self) -> Gf256Kernel {
        if self == Gf256Kernel::Portable || self.is_supported() {
            self
        } else {
            Gf256Kernel::Portable
        }
    }

    /// `out[i] = a[i]·b[i]`.
    ///
    /// # Panics
    /// If the lengths differ.
    pub fn mul(self, a: &[u8], b: &[u8], out: &mut [u8]) {
        assert!(a.len() == b.len() && b.len() == out.len(), "lengths differ");
        match self.usable() {
            Gf256Kernel::Portable => mul_portable(a, b, out),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `usable` checked the CPU features.
            Gf256Kernel::Gfni256 => unsafe { x86::mul256(a, b, out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Gf256Kernel::Gfni512 => unsafe { x86::mul512(a, b, out) },
            #[cfg(not(target_arch = "x86_64"))]
            _ => mul_portable(a, b, out),
        }
    }

    /// `acc[i] ^= c·x[i]`.
    ///
    /// # Panics
    /// If the lengths differ.
    pub fn mul_acc(self, acc: &mut [u8], x: &[u8], c: u8) {
        assert_eq!(acc.len(), x.len(), "lengths differ");
        match self.usable() {
            Gf256Kernel::Portable => mul_acc_portable(acc, x, c),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `usable` checked the CPU features.
            Gf256Kernel::Gfni256 => unsafe { x86::mul_acc256(acc, x, c) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Gf256Kernel::Gfni512 => unsafe { x86::mul_acc512(acc, x, c) },
            #[cfg(not(target_arch = "x86_64"))]
            _ => mul_acc_portable(acc, x, c),
        }
    }

    /// `acc[i] ^= a[i]·b[i]`.
    ///
    /// # Panics
    /// If the lengths differ.
    pub fn fma(self, acc: &mut [u8], a: &[u8], b: &[u8]) {
        assert!(a.len() == b.len() && b.len() == acc.len(), "lengths differ");
        match self.usable() {
            Gf256Kernel::Portable => fma_portable(acc, a, b),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `usable` checked the CPU features.
            Gf256Kernel::Gfni256 => unsafe { x86::fma256(acc, a, b) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Gf256Kernel::Gfni512 => unsafe { x86::fma512(acc, a, b) },
            #[cfg(not(target_arch = "x86_64"))]
            _ => fma_portable(acc, a, b),
        }
    }
}

/// `out[i] = a[i]·b[i]` with the active kernel.
pub fn mul_slices(a: &[u8], b: &[u8], out: &mut [u8]) {
    Gf256Kernel::active().mul(a, b, out)
}

/// `acc[i] ^= c·x[i]` with the active kernel.
pub fn mul_acc(acc: &mut [u8], x: &[u8], c: u8) {
    Gf256Kernel::active().mul_acc(acc, x, c)
}

/// `acc[i] ^= a[i]·b[i]` with the active kernel.
pub fn fma(acc: &mut [u8], a: &[u8], b: &[u8]) {
    Gf256Kernel::active().fma(acc, a, b)
}

/// A matrix over GF(2^8) laid out for fast products with vectors: constant-time in the vector.
/// The portable kernel keeps, for every column, its multiples by x^0..x^7 (eight bit planes),
/// so a product is masked XORs; the GFNI kernels keep the columns and multiply them by the
/// vector's entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matrix {
    rows: usize,
    cols: usize,
    /// Column stride in bytes: `rows` rounded up to a multiple of 64.
    stride: usize,
    kernel: Gf256Kernel,
    /// Portable: `[col][bit][stride / 8]`; GFNI: `[col][stride / 8]`.
    words: Vec<u64>,
    /// For public vectors: `[col][nibble table: 16 low, 16 high][rows / 8 rounded up]`, the
    /// column's multiples by every value of a low and of a high nibble.
    nibbles: Vec<u64>,
}

impl Matrix {
    /// The `rows × cols` matrix with entries `entry(r, c)`, for the active kernel.
    pub fn new(rows: usize, cols: usize, entry: impl Fn(usize, usize) -> u8) -> Matrix {
        Matrix::with_kernel(Gf256Kernel::active(), rows, cols, entry)
    }

    /// As [`Matrix::new`] for the given kernel (the portable one where the CPU lacks it).
    pub fn with_kernel(
        kernel: Gf256Kernel,
        rows: usize,
        cols: usize,
        entry: impl Fn(usize, usize) -> u8,
    ) -> Matrix {
        let kernel = kernel.usable();
        let stride = rows.div_ceil(64) * 64;
        let planes = if kernel == Gf256Kernel::Portable {
            8
        } else {
            1
        };
        let mut bytes = vec![0u8; cols * planes * stride];
        for c in 0..cols {
            for p in 0..planes {
                let at = (c * planes + p) * stride;
                for (r, b) in bytes[at..at + rows].iter_mut().enumerate() {
                    *b = mul(entry(r, c), 1 << p);
                }
            }
        }
        let mut words = vec![0u64; bytes.len() / 8];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words).copy_from_slice(&bytes);
        let w = rows.div_ceil(8);
        let mut nibbles = vec![0u64; cols * 32 * w];
        {
            let nb: &mut [u8] = bytemuck::cast_slice_mut(&mut nibbles);
            for c in 0..cols {
                for v in 0..32 {
                    let factor = if v < 16 {
                        v as u8
                    } else {
                        ((v - 16) as u8) << 4
                    };
                    let at = (c * 32 + v) * w * 8;
                    for (r, b) in nb[at..at + rows].iter_mut().enumerate() {
                        *b = mul(entry(r, c), factor);
                    }
                }
            }
        }
        Matrix {
            rows,
            cols,
            stride,
            kernel,
            words,
            nibbles,
        }
    }

    /// The number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The kernel its products use.
    pub fn kernel(&self) -> Gf256Kernel {
        self.kernel
    }

    /// The entry in row `r`, column `c`.
    ///
    /// # Panics
    /// If out of range.
    pub fn get(&self, r: usize, c: usize) -> u8 {
        assert!(r < self.rows && c < self.cols, "entry out of range");
        let planes = if self.kernel == Gf256Kernel::Portable {
            8
        } else {
            1
        };
        bytemuck::cast_slice::<u64, u8>(&self.words)[c * planes * self.stride + r]
    }

    /// `out ^= M·x`.
    ///
    /// # Panics
    /// If `x` does not have `cols` entries or `out` `rows`.
    pub fn apply_acc(&self, x: &[u8], out: &mut [u8]) {
        assert_eq!(x.len(), self.cols, "vector length");
        assert_eq!(out.len(), self.rows, "output length");
        let w = self.stride / 8;
        // Rows in chunks of 512, accumulated in registers or on the stack.
        for (chunk, out) in out.chunks_mut(512).enumerate() {
            let (from, len) = (chunk * 64, out.len().div_ceil(8));
            let mut acc = [0u64; 64];
            let acc = &mut acc[..len];
            match self.kernel {
                Gf256Kernel::Portable => {
                    for (c, &xc) in x.iter().enumerate() {
                        for p in 0..8 {
                            let at = (c * 8 + p) * w + from;
                            let plane = &self.words[at..at + len];
                            let m = 0u64.wrapping_sub(((xc >> p) & 1) as u64);
                            for (a, &v) in acc.iter_mut().zip(plane) {
                                *a ^= v & m;
                            }
                        }
                    }
                }
                kernel => {
                    let acc: &mut [u8] = bytemuck::cast_slice_mut(acc);
                    for (c, &xc) in x.iter().enumerate() {
                        let at = c * w + from;
                        let col: &[u8] = bytemuck::cast_slice(&self.words[at..at + len]);
                        kernel.mul_acc(acc, col, xc);
                    }
                }
            }
            for (o, a) in out.iter_mut().zip(bytemuck::cast_slice::<u64, u8>(acc)) {
                *o ^= a;
            }
        }
    }

    /// `out ^= M·x` for a **public** `x`: two table look-ups per entry of `x`, indexed by its
    /// nibbles, so the time and the memory touched depend on `x`. Never for secrets.
    ///
    /// # Panics
    /// As [`Matrix::apply_acc`].
    pub fn apply_public_acc(&self, x: &[u8], out: &mut [u8]) {
        assert_eq!(x.len(), self.cols, "vector length");
        assert_eq!(out.len(), self.rows, "output length");
        let w = self.rows.div_ceil(8);
        for (chunk, out) in out.chunks_mut(512).enumerate() {
            let (from, len) = (chunk * 64, out.len().div_ceil(8));
            let mut acc = [0u64; 64];
            let acc = &mut acc[..len];
            for (c, &xc) in x.iter().enumerate() {
                let lo = (c * 32 + (xc & 15) as usize) * w + from;
                let hi = (c * 32 + 16 + (xc >> 4) as usize) * w + from;
                let (lo, hi) = (&self.nibbles[lo..lo + len], &self.nibbles[hi..hi + len]);
                for ((a, &l), &h) in acc.iter_mut().zip(lo).zip(hi) {
                    *a ^= l ^ h;
                }
            }
            for (o, a) in out.iter_mut().zip(bytemuck::cast_slice::<u64, u8>(acc)) {
                *o ^= a;
            }
        }
    }

    /// `out = M·x` for a public `x` ([`Matrix::apply_public_acc`]).
    ///
    /// # Panics
    /// As [`Matrix::apply_acc`].
    pub fn apply_public(&self, x: &[u8], out: &mut [u8]) {
        out.fill(0);
        self.apply_public_acc(x, out)
    }

    /// `out = M·x`.
    ///
    /// # Panics
    /// As [`Matrix::apply_acc`].
    pub fn apply(&self, x: &[u8], out: &mut [u8]) {
        out.fill(0);
        self.apply_acc(x, out)
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The GFNI kernels. Each entry point is `unsafe`: its caller checked the CPU features.
    use core::arch::x86_64::*;

    macro_rules! gfni_kernels {
        ($mul:ident, $mul_acc:ident, $fma:ident, $feature:literal, $reg:ty, $n:literal,
         $load:ident, $store:ident, $gfmul:ident, $xor:ident, $set1:ident) => {
            /// `out = a·b`, lane by lane.
            #[target_feature(enable = $feature)]
            pub(super) unsafe fn $mul(a: &[u8], b: &[u8], out: &mut [u8]) {
                let n = out.len() / $n * $n;
                for i in (0..n).step_by($n) {
                    // SAFETY: i + $n <= len of all three (checked by the caller); unaligned
                    // loads and stores.
                    unsafe {
                        let x = $load(a.as_ptr().add(i) as *const $reg);
                        let y = $load(b.as_ptr().add(i) as *const $reg);
                        $store(out.as_mut_ptr().add(i) as *mut $reg, $gfmul(x, y));
                    }
                }
                super::mul_portable(&a[n..], &b[n..], &mut out[n..]);
            }

            /// `acc ^= c·x`, lane by lane.
            #[target_feature(enable = $feature)]
            pub(super) unsafe fn $mul_acc(acc: &mut [u8], x: &[u8], c: u8) {
                let n = acc.len() / $n * $n;
                let cv = $set1(c as i8);
                for i in (0..n).step_by($n) {
                    // SAFETY: i + $n <= len of both (checked by the caller).
                    unsafe {
                        let v = $load(x.as_ptr().add(i) as *const $reg);
                        let o = $load(acc.as_ptr().add(i) as *const $reg);
                        $store(acc.as_mut_ptr().add(i) as *mut $reg, $xor(o, $gfmul(v, cv)));
                    }
                }
                super::mul_acc_portable(&mut acc[n..], &x[n..], c);
            }

            /// `acc ^= a·b`, lane by lane.
            #[target_feature(enable = $feature)]
            pub(super) unsafe fn $fma(acc: &mut [u8], a: &[u8], b: &[u8]) {
                let n = acc.len() / $n * $n;
                for i in (0..n).step_by($n) {
                    // SAFETY: i + $n <= len of all three (checked by the caller).
                    unsafe {
                        let x = $load(a.as_ptr().add(i) as *const $reg);
                        let y = $load(b.as_ptr().add(i) as *const $reg);
                        let o = $load(acc.as_ptr().add(i) as *const $reg);
                        $store(acc.as_mut_ptr().add(i) as *mut $reg, $xor(o, $gfmul(x, y)));
                    }
                }
                super::fma_portable(&mut acc[n..], &a[n..], &b[n..]);
            }
        };
    }

    gfni_kernels!(
        mul256,
        mul_acc256,
        fma256,
        "gfni,avx2",
        __m256i,
        32,
        _mm256_loadu_si256,
        _mm256_storeu_si256,
        _mm256_gf2p8mul_epi8,
        _mm256_xor_si256,
        _mm256_set1_epi8
    );
    gfni_kernels!(
        mul512,
        mul_acc512,
        fma512,
        "gfni,avx512f,avx512bw",
        __m512i,
        64,
        _mm512_loadu_si512,
        _mm512_storeu_si512,
        _mm512_gf2p8mul_epi8,
        _mm512_xor_si512,
        _mm512_set1_epi8
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Prg;
    use rand_core::RngCore;

    /// Multiplication from the definition: polynomial product, then reduction.
    fn mul_reference(a: u8, b: u8) -> u8 {
        let mut p: u16 = 0;
        for i in 0..8 {
            if (b >> i) & 1 == 1 {
                p ^= (a as u16) << i;
            }
        }
        for i in (8..16).rev() {
            if (p >> i) & 1 == 1 {
                p ^= 0x11b << (i - 8);
            }
        }
        p as u8
    }

    #[test]
    fn scalar_products_match_the_definition_and_fips_197() {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                assert_eq!(mul(a, b), mul_reference(a, b), "{a:#x}·{b:#x}");
            }
        }
        // FIPS-197 §4.2: {57}·{83} = {c1}, {57}·{13} = {fe}.
        assert_eq!(mul(0x57, 0x83), 0xc1);
        assert_eq!(mul(0x57, 0x13), 0xfe);
        assert_eq!(inv(0), 0);
        for a in 1..=255u8 {
            assert_eq!(mul(a, inv(a)), 1, "{a:#x}");
        }
    }

    #[test]
    fn every_kernel_agrees_with_the_portable_one() {
        let mut prg = Prg::from_seed_block(crate::Block::from(7u128));
        for kernel in Gf256Kernel::available() {
            for len in [0usize, 1, 7, 8, 31, 32, 33, 64, 255, 1000] {
                let (mut a, mut b, mut acc) = (vec![0u8; len], vec![0u8; len], vec![0u8; len]);
                prg.fill_bytes(&mut a);
                prg.fill_bytes(&mut b);
                prg.fill_bytes(&mut acc);
                let mut out = vec![0u8; len];
                kernel.mul(&a, &b, &mut out);
                let want: Vec<u8> = a.iter().zip(&b).map(|(&x, &y)| mul(x, y)).collect();
                assert_eq!(out, want, "{} mul, length {len}", kernel.name());
                let mut got = acc.clone();
                kernel.fma(&mut got, &a, &b);
                let want: Vec<u8> = acc.iter().zip(&want).map(|(x, y)| x ^ y).collect();
                assert_eq!(got, want, "{} fma, length {len}", kernel.name());
                let c = b.first().copied().unwrap_or(0x53);
                let mut got = acc.clone();
                kernel.mul_acc(&mut got, &a, c);
                let want: Vec<u8> = acc.iter().zip(&a).map(|(&o, &x)| o ^ mul(x, c)).collect();
                assert_eq!(got, want, "{} mul_acc, length {len}", kernel.name());
            }
        }
    }

    #[test]
    fn matrix_products_agree_for_every_kernel_and_shape() {
        let mut prg = Prg::from_seed_block(crate::Block::from(8u128));
        for (rows, cols) in [(1, 1), (170, 85), (15, 240), (255, 255), (600, 3), (16, 16)] {
            let mut m = vec![0u8; rows * cols];
            prg.fill_bytes(&mut m);
            let mut x = vec![0u8; cols];
            prg.fill_bytes(&mut x);
            let want: Vec<u8> = (0..rows)
                .map(|r| (0..cols).fold(0, |s, c| s ^ mul(m[r * cols + c], x[c])))
                .collect();
            for kernel in Gf256Kernel::available() {
                let matrix = Matrix::with_kernel(kernel, rows, cols, |r, c| m[r * cols + c]);
                assert_eq!(matrix.get(rows - 1, cols - 1), m[rows * cols - 1]);
                let mut out = vec![0u8; rows];
                matrix.apply(&x, &mut out);
                assert_eq!(out, want, "{} {rows}×{cols}", kernel.name());
                matrix.apply_public(&x, &mut out);
                assert_eq!(out, want, "public, {} {rows}×{cols}", kernel.name());
            }
        }
    }
}
