//! Multiplication in GF(2^128) = GF(2)\[x\] / (x^128 + x^7 + x^2 + x + 1), with bit `i` of a
//! [`Block`] the coefficient of x^i (the convention of [`Block::gf_double`]). Used by the KOS
//! consistency check (Keller, Orsini, Scholl, CRYPTO 2015). A PCLMULQDQ version and a portable
//! constant-time one, which agree bit for bit.

use crate::Block;

/// Which implementation [`mul`] uses, fixed at first call.
fn has_pclmul() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("pclmulqdq")
            && std::arch::is_x86_feature_detected!("sse2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The product a·b in GF(2^128).
pub fn mul(a: Block, b: Block) -> Block {
    let (lo, hi) = if has_pclmul() {
        clmul_pclmul(a, b)
    } else {
        clmul_portable(a, b)
    };
    reduce(lo, hi)
}

/// The product a·b with the portable implementation (for tests and non-x86 machines).
pub fn mul_portable(a: Block, b: Block) -> Block {
    let (lo, hi) = clmul_portable(a, b);
    reduce(lo, hi)
}

/// Whether VPCLMULQDQ on 256-bit registers is there (Zen 3 on, Ice Lake on).
fn has_vpclmul() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("vpclmulqdq")
            && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Σ a_k·b_k in GF(2^128), reducing once at the end: two products per instruction with
/// VPCLMULQDQ where the CPU has it, one with PCLMULQDQ, else portable.
///
/// # Panics
/// If the slices differ in length.
pub fn inner_product(a: &[Block], b: &[Block]) -> Block {
    assert_eq!(a.len(), b.len(), "inner_product: lengths differ");
    let (lo, hi) = if has_vpclmul() {
        inner_product_vpclmul(a, b)
    } else if has_pclmul() {
        inner_product_pclmul(a, b)
    } else {
        inner_product_portable(a, b)
    };
    reduce(lo, hi)
}

/// The unreduced Σ a_k·b_k, two pairs per 256-bit VPCLMULQDQ step, the odd one out by
/// PCLMULQDQ.
#[cfg(target_arch = "x86_64")]
fn inner_product_vpclmul(a: &[Block], b: &[Block]) -> (u128, u128) {
    #[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq")]
    fn sum(a: &[Block], b: &[Block]) -> (u128, u128) {
        use core::arch::x86_64::*;
        let (mut lo, mut hi, mut mid) = (
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
        );
        let pairs = a.len() / 2;
        for (x, y) in a.chunks_exact(2).zip(b.chunks_exact(2)) {
            // SAFETY: each chunk is two consecutive readable blocks, 32 bytes.
            let (x, y) = unsafe {
                (
                    _mm256_loadu_si256(x.as_ptr().cast()),
                    _mm256_loadu_si256(y.as_ptr().cast()),
                )
            };
            lo = _mm256_xor_si256(lo, _mm256_clmulepi64_epi128::<0x00>(x, y));
            hi = _mm256_xor_si256(hi, _mm256_clmulepi64_epi128::<0x11>(x, y));
            mid = _mm256_xor_si256(mid, _mm256_clmulepi64_epi128::<0x10>(x, y));
            mid = _mm256_xor_si256(mid, _mm256_clmulepi64_epi128::<0x01>(x, y));
        }
        let mut out = [Block::ZERO; 6];
        // SAFETY: `out` holds six 16-byte aligned, writable blocks, two per store.
        unsafe {
            _mm256_storeu_si256(out[0..2].as_mut_ptr().cast(), lo);
            _mm256_storeu_si256(out[2..4].as_mut_ptr().cast(), hi);
            _mm256_storeu_si256(out[4..6].as_mut_ptr().cast(), mid);
        }
        let [l0, l1, h0, h1, m0, m1] = out.map(Block::as_u128);
        let (lo, hi, mid) = (l0 ^ l1, h0 ^ h1, m0 ^ m1);
        let (tail_lo, tail_hi) = inner_product_pclmul(&a[2 * pairs..], &b[2 * pairs..]);
        (lo ^ (mid << 64) ^ tail_lo, hi ^ (mid >> 64) ^ tail_hi)
    }
    // SAFETY: only called when `has_vpclmul` detected the features (and with them PCLMULQDQ).
    unsafe { sum(a, b) }
}

#[cfg(not(target_arch = "x86_64"))]
fn inner_product_vpclmul(a: &[Block], b: &[Block]) -> (u128, u128) {
    inner_product_portable(a, b)
}

/// The unreduced Σ a_k·b_k, whole slices in one PCLMULQDQ loop (the KOS check's hot path:
/// one product per OT).
#[cfg(target_arch = "x86_64")]
fn inner_product_pclmul(a: &[Block], b: &[Block]) -> (u128, u128) {
    #[target_feature(enable = "sse2,pclmulqdq")]
    fn sum(a: &[Block], b: &[Block]) -> (u128, u128) {
        use core::arch::x86_64::*;
        let (mut lo, mut hi, mut mid) = (
            _mm_setzero_si128(),
            _mm_setzero_si128(),
            _mm_setzero_si128(),
        );
        for (x, y) in a.iter().zip(b) {
            // SAFETY: both blocks are 16-byte aligned and readable.
            let (x, y) = unsafe {
                (
                    _mm_load_si128((x as *const Block).cast()),
                    _mm_load_si128((y as *const Block).cast()),
                )
            };
            lo = _mm_xor_si128(lo, _mm_clmulepi64_si128::<0x00>(x, y));
            hi = _mm_xor_si128(hi, _mm_clmulepi64_si128::<0x11>(x, y));
            mid = _mm_xor_si128(mid, _mm_clmulepi64_si128::<0x10>(x, y));
            mid = _mm_xor_si128(mid, _mm_clmulepi64_si128::<0x01>(x, y));
        }
        let mut out = [Block::ZERO; 3];
        // SAFETY: `out` holds three 16-byte aligned, writable blocks.
        unsafe {
            _mm_store_si128((&mut out[0] as *mut Block).cast(), lo);
            _mm_store_si128((&mut out[1] as *mut Block).cast(), hi);
            _mm_store_si128((&mut out[2] as *mut Block).cast(), mid);
        }
        let [lo, hi, mid] = out.map(Block::as_u128);
        (lo ^ (mid << 64), hi ^ (mid >> 64))
    }
    // SAFETY: only called when `has_pclmul` detected the features.
    unsafe { sum(a, b) }
}

#[cfg(not(target_arch = "x86_64"))]
fn inner_product_pclmul(a: &[Block], b: &[Block]) -> (u128, u128) {
    inner_product_portable(a, b)
}

/// The unreduced Σ a_k·b_k, portable and constant-time.
fn inner_product_portable(a: &[Block], b: &[Block]) -> (u128, u128) {
    a.iter().zip(b).fold((0u128, 0u128), |(lo, hi), (&x, &y)| {
        let (l, h) = clmul_portable(x, y);
        (lo ^ l, hi ^ h)
    })
}

/// Reduces hi·x^128 + lo modulo x^128 + x^7 + x^2 + x + 1, branch-free.
#[inline(always)]
fn reduce(lo: u128, hi: u128) -> Block {
    // x^128 ≡ x^7 + x^2 + x + 1: fold hi in, and the ≤ 7 bits that overflow once more.
    let folded = hi ^ (hi << 1) ^ (hi << 2) ^ (hi << 7);
    let overflow = (hi >> 127) ^ (hi >> 126) ^ (hi >> 121);
    Block::new(lo ^ folded ^ overflow ^ (overflow << 1) ^ (overflow << 2) ^ (overflow << 7))
}

/// Carry-less 128×128 → 256-bit product, constant-time shift-and-add with masks.
fn clmul_portable(a: Block, b: Block) -> (u128, u128) {
    let (a, b) = (a.as_u128(), b.as_u128());
    let (mut lo, mut hi) = (0u128, 0u128);
    for i in 0..128 {
        let mask = 0u128.wrapping_sub((b >> i) & 1);
        lo ^= (a << i) & mask;
        // a >> (128 - i) without the out-of-range shift at i = 0.
        hi ^= ((a >> 1) >> (127 - i)) & mask & 0u128.wrapping_sub((i != 0) as u128);
    }
    (lo, hi)
}

#[cfg(target_arch = "x86_64")]
fn clmul_pclmul(a: Block, b: Block) -> (u128, u128) {
    #[target_feature(enable = "sse2,pclmulqdq")]
    fn karatsuba(a: Block, b: Block) -> (u128, u128) {
        use core::arch::x86_64::*;
        let to_u128 = |v: __m128i| {
            let mut out = Block::ZERO;
            // SAFETY: `out` is a 16-byte aligned, writable block.
            unsafe { _mm_store_si128((&mut out as *mut Block).cast(), v) };
            out.as_u128()
        };
        // SAFETY: both blocks are 16-byte aligned and readable.
        let (x, y) = unsafe {
            (
                _mm_load_si128((&a as *const Block).cast()),
                _mm_load_si128((&b as *const Block).cast()),
            )
        };
        let lo = _mm_clmulepi64_si128::<0x00>(x, y);
        let hi = _mm_clmulepi64_si128::<0x11>(x, y);
        let mid = _mm_xor_si128(
            _mm_clmulepi64_si128::<0x10>(x, y),
            _mm_clmulepi64_si128::<0x01>(x, y),
        );
        let (lo, hi, mid) = (to_u128(lo), to_u128(hi), to_u128(mid));
        (lo ^ (mid << 64), hi ^ (mid >> 64))
    }
    // SAFETY: only called when `has_pclmul` detected the features.
    unsafe { karatsuba(a, b) }
}

#[cfg(not(target_arch = "x86_64"))]
fn clmul_pclmul(a: Block, b: Block) -> (u128, u128) {
    clmul_portable(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The one-loop PCLMULQDQ inner product equals the portable one on long slices.
        #[test]
        fn inner_product_kernels_agree(v in proptest::collection::vec((any::<u128>(), any::<u128>()), 0..300)) {
            let (a, b): (Vec<Block>, Vec<Block>) = v.iter().map(|&(x, y)| (Block::new(x), Block::new(y))).unzip();
            let (lo, hi) = inner_product_portable(&a, &b);
            prop_assert_eq!(inner_product(&a, &b), reduce(lo, hi));
            if has_pclmul() {
                let (l, h) = inner_product_pclmul(&a, &b);
                prop_assert_eq!(reduce(l, h), reduce(lo, hi));
            }
            if has_vpclmul() {
                let (l, h) = inner_product_vpclmul(&a, &b);
                prop_assert_eq!(reduce(l, h), reduce(lo, hi));
            }
            let direct = a.iter().zip(&b).fold(Block::ZERO, |acc, (&x, &y)| acc ^ mul_portable(x, y));
            prop_assert_eq!(inner_product(&a, &b), direct);
        }
    }

    #[test]
    fn reduction_of_x128() {
        let x = Block::new(2);
        let x127 = Block::new(1 << 127);
        assert_eq!(mul(x127, x), Block::new(0x87));
        assert_eq!(mul_portable(x127, x), Block::new(0x87));
        // x^127 · x^127 = x^254 = x^126 · x^128 ≡ x^126 (x^7 + x^2 + x + 1).
        let x126 = Block::new(1 << 126);
        let expect = mul_portable(x126, Block::new(0x87));
        assert_eq!(mul(x127, x127), expect);
    }

    proptest! {
        #[test]
        fn pclmul_equals_portable_and_field_laws_hold(a in any::<u128>(), b in any::<u128>(), c in any::<u128>()) {
            let (a, b, c) = (Block::new(a), Block::new(b), Block::new(c));
            prop_assert_eq!(mul(a, b), mul_portable(a, b));
            prop_assert_eq!(mul(a, b), mul(b, a));
            prop_assert_eq!(mul(a, b ^ c), mul(a, b) ^ mul(a, c));
            prop_assert_eq!(mul(mul(a, b), c), mul(a, mul(b, c)));
            prop_assert_eq!(mul(a, Block::new(1)), a);
            prop_assert_eq!(mul(a, Block::new(2)), a.gf_double());
            prop_assert_eq!(inner_product(&[a, b], &[b, c]), mul(a, b) ^ mul(b, c));
        }
    }
}
