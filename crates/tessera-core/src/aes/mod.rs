//! Batched AES-128 (FIPS-197) with run-time backend dispatch: VASA (ACSAC 2021) §2.1 and
//! §4.2. AES units are pipelined, so independent encryptions must be
//! issued together to reach one `aesenc` per cycle (VASA Table 2: batches of 4-16 blocks), and
//! VAES computes 2 or 4 blocks per instruction. Every operation here therefore takes a slice.
//!
//! Backends, chosen once at run time from the CPU's features ([`Backend::active`]):
//! `portable` (constant-time, bitsliced S-box), `aesni`, `vaes256` (AVX2 + VAES) and `vaes512`
//! (AVX-512F/BW + VAES). `TESSERA_AES_BACKEND=portable|aesni|vaes256|vaes512` forces one.

pub(crate) mod kernels;
mod lanes;
pub mod sbox;
mod soft;
#[cfg(target_arch = "x86_64")]
mod x86;

use crate::{Block, Error};
use bytemuck::{Pod, Zeroable};
use core::fmt;
use core::str::FromStr;
use kernels::{Ccr, Cr, Mmo, Prp, Tccr};
use std::sync::OnceLock;

/// The eleven round keys of an expanded AES-128 key (FIPS-197 §5.2).
#[derive(Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[repr(C, align(16))]
pub struct RoundKeys(pub [Block; 11]);

impl fmt::Debug for RoundKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

/// An AES implementation; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Constant-time software: bitsliced Boyar-Peralta-Calik S-box, no tables.
    Portable,
    /// AES-NI on 128-bit registers.
    Aesni,
    /// VAES on 256-bit registers (AVX2): two blocks per instruction.
    Vaes256,
    /// VAES on 512-bit registers (AVX-512F/BW): four blocks per instruction.
    Vaes512,
}

/// The environment variable that forces a backend.
pub const BACKEND_ENV: &str = "TESSERA_AES_BACKEND";

/// A hash kernel: `out[i] = H(x[i], tweaks[i])`.
type HashFn = fn(&RoundKeys, &[Block], &[Block], &mut [Block]);

/// One backend's kernels. Tables exist only for backends whose CPU features were detected
/// ([`Backend::kernels`]); that is what makes calling the `#[target_feature]` code sound.
pub(crate) struct Kernels {
    pub(crate) ecb: fn(&RoundKeys, &mut [Block]),
    pub(crate) ctr: fn(&RoundKeys, Block, &mut [Block]),
    pub(crate) expand: fn(&[Block], &mut [RoundKeys]),
    pub(crate) multi_key: fn(&[Block], &mut [Block]),
    pub(crate) prp: HashFn,
    pub(crate) cr: HashFn,
    pub(crate) ccr: HashFn,
    pub(crate) tccr: HashFn,
    pub(crate) tccr_counter: fn(&RoundKeys, &[Block], Block, Block, &mut [Block]),
    pub(crate) cr_counter: fn(&RoundKeys, Block, Block, &mut [Block]),
    pub(crate) cr_children: fn(&RoundKeys, &mut [Block]) -> [Block; 2],
    /// SoftSpoken's summed leaf streams, by [leaf bits − 1][last leaf missing][masked].
    pub(crate) counter_sums: [[[CounterSumsFn; 2]; 2]; 8],
    pub(crate) roofline: fn(u64) -> Block,
    /// Fused half-gates garbling, by [`crate::hash::GateHash::index`].
    pub(crate) half_gates_garble: [HalfGatesGarbleFn; 3],
    /// Fused half-gates evaluation, by [`crate::hash::GateHash::index`].
    pub(crate) half_gates_eval: [HalfGatesEvalFn; 3],
}

/// A summed-streams kernel: keys, leaves, first counter, (sums, column stride, row stride),
/// totals, the masks and offsets of the masked variant.
type CounterSumsFn =
    fn(&RoundKeys, &[Block], Block, (&mut [Block], usize, usize), &mut [Block], kernels::SumsMask);
/// A fused half-gates garbling kernel: keys, Δ, the batch.
type HalfGatesGarbleFn = fn(&kernels::GateKeys<'_>, Block, &kernels::HalfGatesIo<'_>);
/// A fused half-gates evaluation kernel: keys, the batch.
type HalfGatesEvalFn = fn(&kernels::GateKeys<'_>, &kernels::HalfGatesIo<'_>);

/// Builds a [`Kernels`] table for a register type `$lanes` with batches of `$n` registers. With
/// a `#[target_feature]` attribute, the kernels are compiled for those features, and the table
/// must only be handed out after detecting them.
macro_rules! backend_kernels {
    ($lanes:ty, $n:literal $(, #[$feature:meta])?) => {{
        $(#[$feature])?
        unsafe fn ecb_tf(rk: &RoundKeys, b: &mut [Block]) {
            // SAFETY: features as the attribute (checked before the table is handed out).
            unsafe { kernels::ecb::<$lanes, $n>(rk, b) }
        }
        $(#[$feature])?
        unsafe fn ctr_tf(rk: &RoundKeys, first: Block, out: &mut [Block]) {
            // SAFETY: as above.
            unsafe { kernels::ctr::<$lanes, $n>(rk, first, out) }
        }
        $(#[$feature])?
        unsafe fn expand_tf(keys: &[Block], out: &mut [RoundKeys]) {
            // SAFETY: as above; the public API checked the lengths.
            unsafe { kernels::expand::<$lanes, $n>(keys, out) }
        }
        $(#[$feature])?
        unsafe fn multi_key_tf(keys: &[Block], b: &mut [Block]) {
            // SAFETY: as above; the public API checked the lengths.
            unsafe { kernels::multi_key::<$lanes>(keys, b) }
        }
        $(#[$feature])?
        unsafe fn hash_tf<H: kernels::HashKind>(rk: &RoundKeys, x: &[Block], t: &[Block], out: &mut [Block]) {
            // SAFETY: as above; the public API checked the lengths.
            unsafe { kernels::hash::<$lanes, $n, H>(rk, x, t, out) }
        }
        $(#[$feature])?
        unsafe fn tccr_counter_tf(rk: &RoundKeys, x: &[Block], offset: Block, first: Block, out: &mut [Block]) {
            // SAFETY: as above; the public API checked the lengths.
            unsafe { kernels::tccr_counter::<$lanes, $n>(rk, x, offset, first, out) }
        }
        $(#[$feature])?
        unsafe fn cr_counter_tf(rk: &RoundKeys, offset: Block, first: Block, out: &mut [Block]) {
            // SAFETY: as above.
            unsafe { kernels::cr_counter::<$lanes, $n>(rk, offset, first, out) }
        }
        $(#[$feature])?
        unsafe fn cr_children_tf(rk: &RoundKeys, nodes: &mut [Block]) -> [Block; 2] {
            // SAFETY: as above.
            unsafe { kernels::cr_children::<$lanes, $n>(rk, nodes) }
        }
        $(#[$feature])?
        unsafe fn sums_tf<const N: usize, const R: usize, const M: bool, const K: bool>(
            rk: &RoundKeys,
            leaves: &[Block],
            first: Block,
            sums: (&mut [Block], usize, usize),
            total: &mut [Block],
            mask: kernels::SumsMask,
        ) {
            // SAFETY: as above; the public API checked the lengths.
            unsafe { kernels::counter_sums::<$lanes, N, R, M, K>(rk, leaves, first, sums, total, mask) }
        }
        $(#[$feature])?
        unsafe fn hg_garble_tf<H: kernels::GateHash, const G: usize>(
            keys: &kernels::GateKeys<'_>,
            delta: Block,
            io: &kernels::HalfGatesIo<'_>,
        ) {
            // SAFETY: as above; the public API checked the lengths.
            unsafe { kernels::half_gates_garble::<$lanes, H, G>(keys, delta, io) }
        }
        $(#[$feature])?
        unsafe fn hg_eval_tf<H: kernels::GateHash, const G: usize>(
            keys: &kernels::GateKeys<'_>,
            io: &kernels::HalfGatesIo<'_>,
        ) {
            // SAFETY: as above; the public API checked the lengths.
            unsafe { kernels::half_gates_eval::<$lanes, H, G>(keys, io) }
        }
        $(#[$feature])?
        unsafe fn roofline_tf(iters: u64) -> Block {
            // SAFETY: as above.
            unsafe { kernels::roofline::<$lanes>(iters) }
        }
        // SAFETY (every wrapper below): this table is only returned by `Backend::kernels`
        // after `Backend::is_supported` detected the features the attribute names.
        fn hash<H: kernels::HashKind>(rk: &RoundKeys, x: &[Block], t: &[Block], out: &mut [Block]) {
            unsafe { hash_tf::<H>(rk, x, t, out) }
        }
        fn sums<const N: usize, const R: usize, const M: bool, const K: bool>(
            rk: &RoundKeys,
            leaves: &[Block],
            first: Block,
            sums: (&mut [Block], usize, usize),
            total: &mut [Block],
            mask: kernels::SumsMask,
        ) {
            unsafe { sums_tf::<N, R, M, K>(rk, leaves, first, sums, total, mask) }
        }
        fn hg_garble<H: kernels::GateHash, const G: usize>(
            keys: &kernels::GateKeys<'_>,
            delta: Block,
            io: &kernels::HalfGatesIo<'_>,
        ) {
            unsafe { hg_garble_tf::<H, G>(keys, delta, io) }
        }
        fn hg_eval<H: kernels::GateHash, const G: usize>(
            keys: &kernels::GateKeys<'_>,
            io: &kernels::HalfGatesIo<'_>,
        ) {
            unsafe { hg_eval_tf::<H, G>(keys, io) }
        }
        Kernels {
            ecb: |rk, b| unsafe { ecb_tf(rk, b) },
            ctr: |rk, f, out| unsafe { ctr_tf(rk, f, out) },
            expand: |k, o| unsafe { expand_tf(k, o) },
            multi_key: |k, b| unsafe { multi_key_tf(k, b) },
            prp: hash::<Mmo<Prp>>,
            cr: hash::<Mmo<Cr>>,
            ccr: hash::<Mmo<Ccr>>,
            tccr: hash::<Tccr>,
            tccr_counter: |rk, x, o, f, out| unsafe { tccr_counter_tf(rk, x, o, f, out) },
            cr_counter: |rk, o, f, out| unsafe { cr_counter_tf(rk, o, f, out) },
            cr_children: |rk, nodes| unsafe { cr_children_tf(rk, nodes) },
            // Rows per leaf: enough registers that eight or more are in flight.
            counter_sums: [
                [
                    [sums::<2, 4, false, false>, sums::<2, 4, false, true>],
                    [sums::<2, 4, true, false>, sums::<2, 4, true, true>],
                ],
                [
                    [sums::<4, 2, false, false>, sums::<4, 2, false, true>],
                    [sums::<4, 2, true, false>, sums::<4, 2, true, true>],
                ],
                [
                    [sums::<8, 1, false, false>, sums::<8, 1, false, true>],
                    [sums::<8, 1, true, false>, sums::<8, 1, true, true>],
                ],
                [
                    [sums::<16, 1, false, false>, sums::<16, 1, false, true>],
                    [sums::<16, 1, true, false>, sums::<16, 1, true, true>],
                ],
                [
                    [sums::<32, 1, false, false>, sums::<32, 1, false, true>],
                    [sums::<32, 1, true, false>, sums::<32, 1, true, true>],
                ],
                [
                    [sums::<64, 1, false, false>, sums::<64, 1, false, true>],
                    [sums::<64, 1, true, false>, sums::<64, 1, true, true>],
                ],
                [
                    [sums::<128, 1, false, false>, sums::<128, 1, false, true>],
                    [sums::<128, 1, true, false>, sums::<128, 1, true, true>],
                ],
                [
                    [sums::<256, 1, false, false>, sums::<256, 1, false, true>],
                    [sums::<256, 1, true, false>, sums::<256, 1, true, true>],
                ],
            ],
            roofline: |n| unsafe { roofline_tf(n) },
            // Gates per register group: as many as keep states and keys in registers.
            half_gates_garble: [
                hg_garble::<kernels::PrpGate, 2>,
                hg_garble::<kernels::MiGate, 2>,
                hg_garble::<kernels::CircGate, 1>,
            ],
            half_gates_eval: [
                hg_eval::<kernels::PrpGate, 4>,
                hg_eval::<
                    kernels::MiGate,
                    { kernels::mi_eval_group(<$lanes as lanes::Lanes>::REGISTERS) },
                >,
                hg_eval::<kernels::CircGate, 3>,
            ],
        }
    }};
}

static PORTABLE: Kernels = backend_kernels!(lanes::Soft, 8);
#[cfg(target_arch = "x86_64")]
static AESNI: Kernels = backend_kernels!(x86::Xmm, 8, #[target_feature(enable = "sse2,ssse3,aes")]);
#[cfg(target_arch = "x86_64")]
static VAES256: Kernels =
    backend_kernels!(x86::Ymm, 8, #[target_feature(enable = "sse2,ssse3,aes,avx2,vaes")]);
#[cfg(target_arch = "x86_64")]
static VAES512: Kernels = backend_kernels!(x86::Zmm, 8, #[target_feature(enable = "sse2,ssse3,aes,avx2,vaes,avx512f,avx512bw")]);

impl Backend {
    /// Every backend, slowest first.
    pub const ALL: [Backend; 4] = [
        Backend::Portable,
        Backend::Aesni,
        Backend::Vaes256,
        Backend::Vaes512,
    ];

    /// The name used on the command line and in `TESSERA_AES_BACKEND`.
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Portable => "portable",
            Backend::Aesni => "aesni",
            Backend::Vaes256 => "vaes256",
            Backend::Vaes512 => "vaes512",
        }
    }

    /// The CPU features this backend needs, as `is_x86_feature_detected!` names them.
    pub const fn required_features(self) -> &'static [&'static str] {
        match self {
            Backend::Portable => &[],
            Backend::Aesni => &["sse2", "ssse3", "aes"],
            Backend::Vaes256 => &["sse2", "ssse3", "aes", "avx2", "vaes"],
            Backend::Vaes512 => &[
                "sse2", "ssse3", "aes", "avx2", "vaes", "avx512f", "avx512bw",
            ],
        }
    }

    /// Whether this CPU can run the backend.
    pub fn is_supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let has = |f: &str| match f {
                "sse2" => std::arch::is_x86_feature_detected!("sse2"),
                "ssse3" => std::arch::is_x86_feature_detected!("ssse3"),
                "aes" => std::arch::is_x86_feature_detected!("aes"),
                "avx2" => std::arch::is_x86_feature_detected!("avx2"),
                "vaes" => std::arch::is_x86_feature_detected!("vaes"),
                "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
                "avx512bw" => std::arch::is_x86_feature_detected!("avx512bw"),
                _ => false,
            };
            self.required_features().iter().all(|f| has(f))
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Backend::Portable
        }
    }

    /// The backends this CPU supports, slowest first.
    pub fn available() -> Vec<Backend> {
        Backend::ALL
            .into_iter()
            .filter(|b| b.is_supported())
            .collect()
    }

    /// The fastest backend this CPU supports.
    pub fn best() -> Backend {
        Backend::ALL
            .into_iter()
            .rev()
            .find(|b| b.is_supported())
            .unwrap_or(Backend::Portable)
    }

    /// The backend that `TESSERA_AES_BACKEND` forces, if set; an error if it names no backend or
    /// one this CPU lacks.
    pub fn from_env() -> Result<Option<Backend>, Error> {
        match std::env::var(BACKEND_ENV) {
            Ok(v) if v.is_empty() => Ok(None),
            Ok(v) => {
                let b: Backend = v.parse()?;
                b.kernels()?;
                Ok(Some(b))
            }
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(Error::UnknownBackend(format!(
                "{BACKEND_ENV} is not valid UTF-8"
            ))),
        }
    }

    /// The backend every default constructor uses, fixed at first use: `TESSERA_AES_BACKEND` if
    /// it is set and valid, else [`Backend::best`]. An invalid setting is reported on stderr once
    /// and ignored; programs that want it to be fatal call [`Backend::from_env`] at start-up, as
    /// the `tessera` command does.
    pub fn active() -> Backend {
        static ACTIVE: OnceLock<Backend> = OnceLock::new();
        *ACTIVE.get_or_init(|| match Backend::from_env() {
            Ok(Some(b)) => b,
            Ok(None) => Backend::best(),
            Err(e) => {
                eprintln!("tessera: ignoring {BACKEND_ENV}: {e}");
                Backend::best()
            }
        })
    }

    /// The kernel table, if this CPU supports the backend.
    pub(crate) fn kernels(self) -> Result<&'static Kernels, Error> {
        if !self.is_supported() {
            return Err(Error::UnsupportedBackend {
                backend: self.name(),
                needs: self.required_features().join(","),
            });
        }
        Ok(match self {
            Backend::Portable => &PORTABLE,
            #[cfg(target_arch = "x86_64")]
            Backend::Aesni => &AESNI,
            #[cfg(target_arch = "x86_64")]
            Backend::Vaes256 => &VAES256,
            #[cfg(target_arch = "x86_64")]
            Backend::Vaes512 => &VAES512,
            #[cfg(not(target_arch = "x86_64"))]
            _ => &PORTABLE,
        })
    }

    /// Blocks one register of this backend holds (one AES instruction processes that many).
    pub const fn blocks_per_register(self) -> usize {
        match self {
            Backend::Portable | Backend::Aesni => 1,
            Backend::Vaes256 => 2,
            Backend::Vaes512 => 4,
        }
    }

    /// Blocks the kernels keep in flight: batches of 8 registers.
    pub const fn blocks_in_flight(self) -> usize {
        8 * self.blocks_per_register()
    }

    /// The backend's AES roofline: runs `iters` rounds of [`ROOFLINE_CHAINS`] independent
    /// register-only `aesenc` chains and returns how many AES *blocks* (10 rounds each) that
    /// work amounts to, with a value depending on the result so it cannot be elided.
    pub fn roofline(self, iters: u64) -> Result<(u64, Block), Error> {
        let k = self.kernels()?;
        Ok((
            iters * (ROOFLINE_CHAINS * self.blocks_per_register()) as u64 / 10,
            (k.roofline)(iters),
        ))
    }
}

/// Number of independent chains in [`Backend::roofline`].
pub const ROOFLINE_CHAINS: usize = kernels::ROOFLINE_CHAINS;

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Backend {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                Error::UnknownBackend(format!(
                    "{s:?} is not one of portable, aesni, vaes256, vaes512"
                ))
            })
    }
}

/// A handle on one backend's batched operations that take many keys.
#[derive(Clone, Copy)]
pub struct Aes {
    backend: Backend,
    kernels: &'static Kernels,
}

impl fmt::Debug for Aes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Aes({})", self.backend)
    }
}

impl Default for Aes {
    fn default() -> Self {
        Aes::new()
    }
}

impl Aes {
    /// The handle on [`Backend::active`].
    pub fn new() -> Self {
        let backend = Backend::active();
        // The active backend passed detection, so this cannot fail; fall back to portable
        // rather than panic all the same.
        let kernels = backend.kernels().unwrap_or(&PORTABLE);
        Aes { backend, kernels }
    }

    /// The handle on a given backend; an error if this CPU lacks it.
    pub fn with_backend(backend: Backend) -> Result<Self, Error> {
        Ok(Aes {
            backend,
            kernels: backend.kernels()?,
        })
    }

    /// The backend behind this handle.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Expands one key.
    pub fn expand_key(&self, key: Block) -> RoundKeys {
        let mut out = [RoundKeys::default()];
        (self.kernels.expand)(&[key], &mut out);
        out[0]
    }

    /// Expands every key in `keys` into `out`, batched across keys (VASA §2.1).
    ///
    /// # Panics
    /// If `out.len() != keys.len()`.
    pub fn expand_keys(&self, keys: &[Block], out: &mut [RoundKeys]) {
        assert_eq!(keys.len(), out.len(), "expand_keys: one output per key");
        (self.kernels.expand)(keys, out);
    }

    /// Encrypts `blocks` under many keys at once, key expansion included: with
    /// `m = blocks.len() / keys.len()`, block `i` is encrypted under `keys[i / m]`. This is the
    /// primitive the MI, CIRC and PRF-based garbling schemes need (VASA §4.3.1).
    ///
    /// # Panics
    /// If `keys` is empty while `blocks` is not, or `blocks.len()` is not a multiple of
    /// `keys.len()`.
    pub fn encrypt_multi_key(&self, keys: &[Block], blocks: &mut [Block]) {
        if blocks.is_empty() {
            return;
        }
        assert!(
            !keys.is_empty() && blocks.len().is_multiple_of(keys.len()),
            "encrypt_multi_key: {} blocks cannot be split evenly over {} keys",
            blocks.len(),
            keys.len()
        );
        (self.kernels.multi_key)(keys, blocks);
    }
}

/// AES-128 under one expanded key, encrypting any number of blocks in batches.
#[derive(Clone)]
pub struct FixedKeyAes {
    rk: RoundKeys,
    aes: Aes,
}

impl fmt::Debug for FixedKeyAes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The key may be secret (the PRG seed): never print it.
        write!(f, "FixedKeyAes({})", self.aes.backend)
    }
}

impl FixedKeyAes {
    /// Expands `key` for [`Backend::active`].
    pub fn new(key: Block) -> Self {
        Self::with_aes(Aes::new(), key)
    }

    /// Expands `key` for a given backend; an error if this CPU lacks it.
    pub fn with_backend(key: Block, backend: Backend) -> Result<Self, Error> {
        Ok(Self::with_aes(Aes::with_backend(backend)?, key))
    }

    /// Expands `key` with the backend of `aes`.
    pub fn with_aes(aes: Aes, key: Block) -> Self {
        FixedKeyAes {
            rk: aes.expand_key(key),
            aes,
        }
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        self.aes.backend
    }

    /// The expanded key.
    pub fn round_keys(&self) -> &RoundKeys {
        &self.rk
    }

    /// Encrypts every block in place (ECB). Throughput needs batches: ≥ 8 blocks on AES-NI,
    /// ≥ 32 on VAES.
    pub fn encrypt_blocks(&self, blocks: &mut [Block]) {
        (self.aes.kernels.ecb)(&self.rk, blocks);
    }

    /// Counter mode: `out[k] = E(first + k)`, where `first + k` advances the low 64 bits of
    /// `first` by k modulo 2^64 and keeps its high 64 (no carry between the halves). The
    /// counters are made in registers, with no pass over memory.
    pub fn encrypt_counter(&self, first: Block, out: &mut [Block]) {
        (self.kernels().ctr)(self.round_keys(), first, out);
    }

    /// Encrypts one block (a batch of one: slow; prefer [`Self::encrypt_blocks`]).
    pub fn encrypt_block(&self, block: Block) -> Block {
        let mut b = [block];
        self.encrypt_blocks(&mut b);
        b[0]
    }

    pub(crate) fn kernels(&self) -> &'static Kernels {
        self.aes.kernels
    }
}

#[cfg(test)]
mod tests;
