//! The vector instruction sets of the kernels that need no AES instructions ([`crate::sparse`],
//! [`crate::select`], [`crate::steps`]): one registry, which follows the AES backend so that
//! `TESSERA_AES_BACKEND=portable` makes them portable too, and which their tests walk to check
//! every kernel against the portable one.

use crate::Backend;
use std::sync::OnceLock;

/// A vector instruction set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Simd {
    /// Plain Rust.
    Portable,
    /// 256-bit registers.
    Avx2,
    /// 512-bit registers (AVX-512F).
    Avx512,
}

impl Simd {
    /// Every instruction set, slowest first.
    pub const ALL: [Simd; 3] = [Simd::Portable, Simd::Avx2, Simd::Avx512];

    /// Its name in benchmarks.
    pub const fn name(self) -> &'static str {
        match self {
            Simd::Portable => "portable",
            Simd::Avx2 => "avx2",
            Simd::Avx512 => "avx512",
        }
    }

    /// Whether this CPU has it.
    pub fn is_supported(self) -> bool {
        match self {
            Simd::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The instruction sets this CPU has, slowest first.
    pub fn available() -> Vec<Simd> {
        Self::ALL.into_iter().filter(|k| k.is_supported()).collect()
    }

    /// The one that goes with the active AES backend: AVX-512 with `vaes512`, AVX2 with the
    /// other hardware backends where the CPU has it, portable otherwise.
    pub fn active() -> Simd {
        static ACTIVE: OnceLock<Simd> = OnceLock::new();
        *ACTIVE.get_or_init(|| {
            let wanted: &[Simd] = match Backend::active() {
                Backend::Vaes512 => &[Simd::Avx512, Simd::Avx2],
                Backend::Vaes256 | Backend::Aesni => &[Simd::Avx2],
                Backend::Portable => &[],
            };
            wanted
                .iter()
                .copied()
                .find(|k| k.is_supported())
                .unwrap_or(Simd::Portable)
        })
    }

    /// `self`, or portable where this CPU lacks it.
    pub(crate) fn usable(self) -> Simd {
        if self.is_supported() {
            self
        } else {
            Simd::Portable
        }
    }
}
