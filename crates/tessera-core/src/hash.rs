//! Hashes built from a fixed-key permutation π (AES-128 under a public key), batched over
//! slices. One AES call per hash, except TCCR's two.
//!
//! | hash | definition | source |
//! |---|---|---|
//! | [`FixedKeyHash::tweakable`] | H(x, i) = π(2x ⊕ i) ⊕ 2x | Bellare, Hoang, Keelveedhi, Rogaway (S&P 2013); the "PRP" half-gates hash of VASA §4.3.1, JustGarble and ABY |
//! | [`FixedKeyHash::cr`] | H(x) = π(x) ⊕ x (MMO) | Matyas-Meyer-Oseas; Guo, Katz, Wang, Yu (S&P 2020) |
//! | [`FixedKeyHash::ccr`] | H(x) = π(σ(x)) ⊕ σ(x), σ(xL ‖ xR) = (xL ⊕ xR ‖ xL) | Guo, Katz, Wang, Yu (S&P 2020) §7 |
//! | [`FixedKeyHash::tccr`] | H(x, i) = π(π(x) ⊕ i) ⊕ π(x) | Guo, Katz, Wang, Yu (S&P 2020) §7: tweakable circular correlation robust |
//!
//! 2x is doubling in GF(2^128) ([`Block::gf_double`]).

use crate::aes::kernels::{GateKeys, HalfGatesIo, SumsMask};
use crate::aes::{Aes, Backend, FixedKeyAes};
use crate::slots::{Labels, SlotGates};
use crate::{Block, Error};

/// The public key of the default fixed-key permutation: the first 32 hex digits of π's
/// fractional part (a nothing-up-my-sleeve number).
pub const DEFAULT_FIXED_KEY: Block = Block::new(0x243f_6a88_85a3_08d3_1319_8a2e_0370_7344);

/// Batched hashes over π = AES-128 under a fixed public key.
#[derive(Clone, Debug)]
pub struct FixedKeyHash {
    aes: FixedKeyAes,
}

impl Default for FixedKeyHash {
    fn default() -> Self {
        FixedKeyHash::new(DEFAULT_FIXED_KEY)
    }
}

impl FixedKeyHash {
    /// π under `key` on [`Backend::active`].
    pub fn new(key: Block) -> Self {
        FixedKeyHash {
            aes: FixedKeyAes::new(key),
        }
    }

    /// π under `key` on a given backend.
    pub fn with_backend(key: Block, backend: Backend) -> Result<Self, Error> {
        Ok(FixedKeyHash {
            aes: FixedKeyAes::with_aes(Aes::with_backend(backend)?, key),
        })
    }

    /// The permutation π.
    pub fn permutation(&self) -> &FixedKeyAes {
        &self.aes
    }

    /// `out[k] = π(2 x[k] ⊕ tweaks[k]) ⊕ 2 x[k]`.
    ///
    /// # Panics
    /// If the three slices differ in length.
    pub fn tweakable(&self, x: &[Block], tweaks: &[Block], out: &mut [Block]) {
        assert!(
            x.len() == tweaks.len() && x.len() == out.len(),
            "tweakable hash: lengths differ"
        );
        (self.aes.kernels().prp)(self.aes.round_keys(), x, tweaks, out);
    }

    /// `out[k] = π(x[k]) ⊕ x[k]`.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn cr(&self, x: &[Block], out: &mut [Block]) {
        assert_eq!(x.len(), out.len(), "cr hash: lengths differ");
        (self.aes.kernels().cr)(self.aes.round_keys(), x, &[], out);
    }

    /// `out[k] = π(y) ⊕ y` for y = `offset ⊕ (first + k)`, where `first + k` advances the low
    /// 64 bits of `first` by k modulo 2^64 and keeps its high 64: [`Self::cr`] of a counter
    /// run under an offset, with no input in memory (a stream per key, as SoftSpoken's leaves).
    pub fn cr_counter(&self, offset: Block, first: Block, out: &mut [Block]) {
        (self.aes.kernels().cr_counter)(self.aes.round_keys(), offset, first, out);
    }

    /// One level of GGM trees (Goldreich, Goldwasser, Micali, J. ACM 1986) in split order, in
    /// place: the parents p_q in the first half of `nodes` give children
    /// `nodes[q] = H(p_q)` and `nodes[m + q] = H(p_q ⊕ 1)` (m = half the length, H(x) =
    /// π(x) ⊕ x as [`Self::cr`]). Returns the sums of the left children and of the right
    /// ones, computed as they leave AES. A node's position in the last level is then its path
    /// read from the least significant bit (bit i − 1 chooses the side at level i), and no
    /// level needs a copy of its inputs.
    ///
    /// # Panics
    /// If `nodes` has odd length.
    pub fn cr_children(&self, nodes: &mut [Block]) -> [Block; 2] {
        assert!(
            nodes.len().is_multiple_of(2),
            "GGM level of {} nodes",
            nodes.len()
        );
        (self.aes.kernels().cr_children)(self.aes.round_keys(), nodes)
    }

    /// SoftSpoken's leaf streams summed by subsets (Roy, CRYPTO 2022, §5.2), in registers
    /// with no stream in memory. For 2^b leaves L_y, of which `leaves` holds all or all but
    /// the last (whose stream is then zero), and each row block t < `total.len()`, let
    /// G_y = π(x) ⊕ x with x = L_y ⊕ (`first` + t) ([`Self::cr_counter`]'s counting). Writes
    /// Σ_{y: bit i of y} G_y to `sums[i · column + t · row]` for i < b, and Σ_y G_y to
    /// `total[t]`. The sums are laid out by column (`row` = 1, `column` ≥ `total.len()`) or by
    /// row block (`column` = 1, `row` ≥ b: the layout of [`crate::transpose::transpose_squares`]
    /// when `row` is 128), or any other way that gives each sum its own block.
    ///
    /// # Panics
    /// If `leaves` holds neither 2^b nor 2^b − 1 blocks for some 1 ≤ b ≤ 8, if two sums would
    /// share a block (neither `row` ≥ b · `column` nor `column` ≥ `total.len()` · `row`), or if
    /// `sums` is too short for the last one.
    pub fn cr_counter_sums(
        &self,
        leaves: &[Block],
        first: Block,
        sums: (&mut [Block], usize, usize),
        total: &mut [Block],
    ) {
        self.summed_streams(leaves, first, sums, total, None);
    }

    /// [`Self::cr_counter_sums`] with each column summing the other streams and a masked
    /// offset added: Σ_{y: bit i of y is 0} G_y ⊕ (`masks[i]` & `offset[t]`) to
    /// `sums[i · column + t · row]`, Σ_y G_y to `total[t]`. This is the sender's side of
    /// SoftSpoken's small-field VOLE (Roy, CRYPTO 2022, §4), where the masks are its bits of
    /// Δ and the offset the receiver's correction; with them added as the sums leave
    /// registers, the columns need no second pass.
    ///
    /// # Panics
    /// As [`Self::cr_counter_sums`], and if there is not one mask per column and one offset
    /// per row block.
    pub fn cr_counter_sums_masked(
        &self,
        leaves: &[Block],
        first: Block,
        sums: (&mut [Block], usize, usize),
        total: &mut [Block],
        (masks, offset): (&[Block], &[Block]),
    ) {
        self.summed_streams(leaves, first, sums, total, Some((masks, offset)));
    }

    /// Both [`Self::cr_counter_sums`] and [`Self::cr_counter_sums_masked`].
    fn summed_streams(
        &self,
        leaves: &[Block],
        first: Block,
        (sums, column, row): (&mut [Block], usize, usize),
        total: &mut [Block],
        masked: Option<(&[Block], &[Block])>,
    ) {
        let n = leaves.len();
        let missing = (n + 1).is_power_of_two();
        let bits = if missing {
            (n + 1).trailing_zeros()
        } else {
            n.trailing_zeros()
        } as usize;
        assert!(
            (missing || n.is_power_of_two()) && (1..=8).contains(&bits),
            "summed streams: {n} leaves is not 2^b or 2^b - 1 for 1 <= b <= 8"
        );
        let len = total.len();
        let apart = len == 0
            || (row > 0
                && (bits == 1 || (column > 0 && (row >= bits * column || column >= len * row))));
        let last = (bits - 1)
            .checked_mul(column)
            .zip(len.saturating_sub(1).checked_mul(row))
            .and_then(|(c, r)| c.checked_add(r));
        assert!(
            apart && (len == 0 || last.is_some_and(|last| last < sums.len())),
            "summed streams: {} sums at column stride {column} and row stride {row} cannot \
             hold {bits} columns of {len}",
            sums.len()
        );
        let mask = match masked {
            Some((masks, offset)) => {
                assert!(
                    masks.len() == bits && offset.len() == len,
                    "summed streams: {} masks and {} offsets for {bits} columns of {len}",
                    masks.len(),
                    offset.len()
                );
                SumsMask {
                    masks: masks.as_ptr(),
                    offset: offset.as_ptr(),
                }
            }
            None => SumsMask {
                masks: core::ptr::null(),
                offset: core::ptr::null(),
            },
        };
        let kernel = self.aes.kernels().counter_sums[bits - 1][usize::from(missing)]
            [usize::from(masked.is_some())];
        kernel(
            self.aes.round_keys(),
            leaves,
            first,
            (sums, column, row),
            total,
            mask,
        );
    }

    /// `out[k] = π(σ(x[k])) ⊕ σ(x[k])`.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn ccr(&self, x: &[Block], out: &mut [Block]) {
        assert_eq!(x.len(), out.len(), "ccr hash: lengths differ");
        (self.aes.kernels().ccr)(self.aes.round_keys(), x, &[], out);
    }

    /// `out[k] = π(π(x[k]) ⊕ tweaks[k]) ⊕ π(x[k])`.
    ///
    /// # Panics
    /// If the three slices differ in length.
    pub fn tccr(&self, x: &[Block], tweaks: &[Block], out: &mut [Block]) {
        assert!(
            x.len() == tweaks.len() && x.len() == out.len(),
            "tccr hash: lengths differ"
        );
        (self.aes.kernels().tccr)(self.aes.round_keys(), x, tweaks, out);
    }

    /// `out[k] = π(π(y) ⊕ (first + k)) ⊕ π(y)` for y = `x[k] ⊕ offset`: [`Self::tccr`] with
    /// tweaks counting up from `first` (its low 64 bits advanced by k modulo 2^64, its high 64
    /// kept) and an offset XORed into every input, neither taking a pass over memory (the
    /// random-OT hashes H(q_j, j) and H(q_j ⊕ Δ, j)).
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn tccr_counter(&self, x: &[Block], offset: Block, first: Block, out: &mut [Block]) {
        assert_eq!(x.len(), out.len(), "tccr hash: lengths differ");
        (self.aes.kernels().tccr_counter)(self.aes.round_keys(), x, offset, first, out);
    }
}

/// The tweakable hash H(x, j) of the fused half-gates kernels (VASA §4.3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateHash {
    /// H(x, j) = π(2x ⊕ j) ⊕ 2x over the fixed-key permutation π ("PRP"): no key schedule.
    Prp,
    /// H(x, j) = AES_{S ⊕ j}(σ(x)) ⊕ σ(x) for a public random offset S ("MI"; Guo, Katz, Wang,
    /// Weng, Yu, CRYPTO 2020): one key schedule per tweak.
    Mi(Block),
    /// H(x, j) = AES_x(j), the label as key ("CIRC"): one key schedule per label.
    Circ,
}

impl GateHash {
    /// Its place in the kernel tables.
    fn index(self) -> usize {
        match self {
            GateHash::Prp => 0,
            GateHash::Mi(_) => 1,
            GateHash::Circ => 2,
        }
    }

    fn offset(self) -> Block {
        match self {
            GateHash::Mi(s) => s,
            _ => Block::ZERO,
        }
    }
}

impl FixedKeyHash {
    /// Half-gates garbling (Zahur, Rosulek, Evans, EUROCRYPT 2015, Fig. 2) of n AND gates with
    /// the tweakable hash `hash` (π is this hash's permutation), fused into one
    /// register-oriented kernel (VASA §4.2.1) that gathers its inputs straight from the slot
    /// array of `labels`: gate k has input zero-labels A0 = slot `a[k]`, B0 = slot `b[k]`
    /// and tweaks j = 2·`ids[k]` + 2^64·`domain`, j' = j + 1; with pa, pb their colour bits,
    /// T_G = H(A0, j) ⊕ H(A0 ⊕ Δ, j) ⊕ pb·Δ, T_E = H(B0, j') ⊕ H(B0 ⊕ Δ, j') ⊕ A0,
    /// out0 = H(A0, j) ⊕ pa·T_G ⊕ H(B0, j') ⊕ pb·(T_E ⊕ A0).
    /// Writes out0 where `labels` says (slot `out[k]`, or place k of its buffer) and
    /// `table[2k] = T_G`, `table[2k + 1] = T_E`. Four hashes per gate, key schedules (MI, CIRC)
    /// expanded round by round beside the rounds; selection by masks, no branch on a label bit.
    ///
    /// # Panics
    /// If the lengths do not match n (2n for `table`) or a slot index is out of bounds.
    pub fn half_gates_garble(
        &self,
        hash: GateHash,
        delta: Block,
        labels: Labels<'_, Block>,
        gates: SlotGates<'_>,
        table: &mut [Block],
    ) {
        let io = HalfGatesIo::new(labels, gates, table.len(), table.as_mut_ptr());
        let keys = GateKeys {
            rk: self.aes.round_keys(),
            offset: hash.offset(),
        };
        (self.aes.kernels().half_gates_garble[hash.index()])(&keys, delta, &io);
    }

    /// Half-gates evaluation of n AND gates from the active labels A = slot `a[k]`,
    /// B = slot `b[k]` (colour bits sa, sb) and the garbler's `table`:
    /// out = H(A, j) ⊕ sa·T_G ⊕ H(B, j') ⊕ sb·(T_E ⊕ A), written where `labels` says. Two
    /// hashes per gate.
    ///
    /// # Panics
    /// As [`Self::half_gates_garble`].
    pub fn half_gates_eval(
        &self,
        hash: GateHash,
        labels: Labels<'_, Block>,
        gates: SlotGates<'_>,
        table: &[Block],
    ) {
        // The evaluation kernel only reads the table.
        let io = HalfGatesIo::new(labels, gates, table.len(), table.as_ptr().cast_mut());
        let keys = GateKeys {
            rk: self.aes.round_keys(),
            offset: hash.offset(),
        };
        (self.aes.kernels().half_gates_eval[hash.index()])(&keys, &io);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One-block reference definitions, on the portable backend's single-block call.
    fn pi(h: &FixedKeyHash, x: Block) -> Block {
        h.permutation().encrypt_block(x)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn every_hash_matches_its_definition_on_every_backend(
            key in any::<u128>(),
            xs in proptest::collection::vec(any::<u128>(), 0..70),
            seed in any::<u128>(),
        ) {
            let x: Vec<Block> = xs.iter().map(|&v| Block::new(v)).collect();
            let t: Vec<Block> = (0..x.len() as u128).map(|i| Block::new(seed.wrapping_add(i))).collect();
            let reference = FixedKeyHash::with_backend(Block::new(key), Backend::Portable).unwrap();
            for backend in Backend::available() {
                let h = FixedKeyHash::with_backend(Block::new(key), backend).unwrap();
                let mut out = vec![Block::ZERO; x.len()];
                h.tweakable(&x, &t, &mut out);
                for k in 0..x.len() {
                    let kk = x[k].gf_double() ^ t[k];
                    prop_assert_eq!(out[k], pi(&reference, kk) ^ kk, "prp {} k={}", backend, k);
                }
                h.cr(&x, &mut out);
                for k in 0..x.len() {
                    prop_assert_eq!(out[k], pi(&reference, x[k]) ^ x[k], "cr {}", backend);
                }
                h.ccr(&x, &mut out);
                for k in 0..x.len() {
                    let s = x[k].sigma();
                    prop_assert_eq!(out[k], pi(&reference, s) ^ s, "ccr {}", backend);
                }
                h.tccr(&x, &t, &mut out);
                for k in 0..x.len() {
                    let y = pi(&reference, x[k]);
                    prop_assert_eq!(out[k], pi(&reference, y ^ t[k]) ^ y, "tccr {}", backend);
                }
                let offset = Block::new(key.rotate_left(64));
                // Near the wrap of the low half, which must not carry.
                let first = match seed & 1 {
                    1 => Block::from_halves((seed >> 64) as u64, u64::MAX - 40),
                    _ => Block::new(seed),
                };
                let count = |k: usize| Block::from_halves(first.high(), first.low().wrapping_add(k as u64));
                h.tccr_counter(&x, offset, first, &mut out);
                for k in 0..x.len() {
                    let y = pi(&reference, x[k] ^ offset);
                    prop_assert_eq!(out[k], pi(&reference, y ^ count(k)) ^ y, "tccr counter {}", backend);
                }
                h.cr_counter(offset, first, &mut out);
                for (k, &o) in out.iter().enumerate() {
                    let y = offset ^ count(k);
                    prop_assert_eq!(o, pi(&reference, y) ^ y, "cr counter {}", backend);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn summed_streams_match_their_definition_on_every_backend(
            key in any::<u128>(),
            leaves in proptest::collection::vec(any::<u128>(), 256),
            len in 0usize..40,
            slack in 0usize..5,
            near_wrap in any::<bool>(),
            seed in any::<u128>(),
        ) {
            let first = if near_wrap { Block::from_halves(seed as u64, u64::MAX - 9) } else { Block::new(seed) };
            let reference = FixedKeyHash::with_backend(Block::new(key), Backend::Portable).unwrap();
            let leaves: Vec<Block> = leaves.iter().map(|&v| Block::new(v)).collect();
            for bits in 1..=8usize {
                for n in [(1 << bits) - 1, 1 << bits] {
                    // The definition: each leaf's stream by the counter hash, summed by subset.
                    let mut want_sums = vec![vec![Block::ZERO; len]; bits];
                    let mut want_total = vec![Block::ZERO; len];
                    let mut g = vec![Block::ZERO; len];
                    for (y, &leaf) in leaves[..n].iter().enumerate() {
                        reference.cr_counter(leaf, first, &mut g);
                        for t in 0..len {
                            want_total[t] ^= g[t];
                            for b in (0..bits).filter(|b| y >> b & 1 == 1) {
                                want_sums[b][t] ^= g[t];
                            }
                        }
                    }
                    // The masked variant: the other streams' sum plus a masked offset.
                    let masks: Vec<Block> = (0..bits).map(|b| Block::new(key.rotate_left(b as u32))).collect();
                    let offset: Vec<Block> = (0..len).map(|t| Block::new(seed.rotate_right(t as u32))).collect();
                    let want_masked: Vec<Vec<Block>> = want_sums
                        .iter()
                        .zip(&masks)
                        .map(|(sums, &m)| {
                            sums.iter().zip(&want_total).zip(&offset).map(|((&v, &u), &o)| v ^ u ^ (m & o)).collect()
                        })
                        .collect();
                    // By column, and by row block; the slack between sums is left alone.
                    for (column, row) in [(len + slack, 1), (1, bits + slack)] {
                        let size = (bits - 1) * column + len.saturating_sub(1) * row + 1;
                        for masked in [false, true] {
                            let mut want = vec![Block::ONES; size];
                            let columns = if masked { &want_masked } else { &want_sums };
                            for (b, sums) in columns.iter().enumerate() {
                                for (t, &v) in sums.iter().enumerate() {
                                    want[b * column + t * row] = v;
                                }
                            }
                            for backend in Backend::available() {
                                let h = FixedKeyHash::with_backend(Block::new(key), backend).unwrap();
                                let mut sums = vec![Block::ONES; size];
                                let mut total = vec![Block::ONES; len];
                                let layout = (&mut sums[..], column, row);
                                if masked {
                                    h.cr_counter_sums_masked(&leaves[..n], first, layout, &mut total, (&masks, &offset));
                                } else {
                                    h.cr_counter_sums(&leaves[..n], first, layout, &mut total);
                                }
                                prop_assert_eq!(&total, &want_total, "{} {} leaves", backend, n);
                                prop_assert_eq!(&sums, &want, "{} {} leaves, strides {} {}, masked {}", backend, n, column, row, masked);
                            }
                        }
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn tree_levels_match_their_definition_on_every_backend(
            key in any::<u128>(),
            parents in proptest::collection::vec(any::<u128>(), 0..80),
        ) {
            let reference = FixedKeyHash::with_backend(Block::new(key), Backend::Portable).unwrap();
            let parents: Vec<Block> = parents.iter().map(|&v| Block::new(v)).collect();
            // The definition: H(p) then H(p ⊕ 1) by the plain hash, and the sums of each half.
            let flipped: Vec<Block> = parents.iter().map(|&p| p ^ Block::new(1)).collect();
            let mut want = vec![Block::ZERO; 2 * parents.len()];
            let (left, right) = want.split_at_mut(parents.len());
            reference.cr(&parents, left);
            reference.cr(&flipped, right);
            let want_sums = [left, right].map(|half| half.iter().fold(Block::ZERO, |a, &b| a ^ b));
            for backend in Backend::available() {
                let h = FixedKeyHash::with_backend(Block::new(key), backend).unwrap();
                let mut nodes = parents.clone();
                nodes.resize(2 * parents.len(), Block::ONES);
                let sums = h.cr_children(&mut nodes);
                prop_assert_eq!(&nodes, &want, "{}", backend);
                prop_assert_eq!(sums, want_sums, "{}", backend);
            }
        }
    }

    #[test]
    #[should_panic(expected = "GGM level of 3 nodes")]
    fn tree_levels_refuse_an_odd_length() {
        FixedKeyHash::new(Block::ZERO).cr_children(&mut [Block::ZERO; 3]);
    }

    #[test]
    #[should_panic(expected = "not 2^b")]
    fn summed_streams_refuse_a_leaf_count_that_is_no_tree() {
        let h = FixedKeyHash::new(Block::ZERO);
        h.cr_counter_sums(
            &[Block::ZERO; 5],
            Block::ZERO,
            (&mut [Block::ZERO; 8], 2, 1),
            &mut [Block::ZERO; 2],
        );
    }

    #[test]
    #[should_panic(expected = "cannot hold")]
    fn summed_streams_refuse_sums_that_share_blocks() {
        // 4 leaves: 2 columns of 3 rows, by row block with a row stride of 1 < 2.
        let h = FixedKeyHash::new(Block::ZERO);
        h.cr_counter_sums(
            &[Block::ZERO; 4],
            Block::ZERO,
            (&mut [Block::ZERO; 16], 1, 1),
            &mut [Block::ZERO; 3],
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn fused_half_gates_match_their_definition_on_every_backend(
            labels in proptest::collection::vec((any::<u128>(), any::<u128>(), any::<u32>(), any::<bool>(), any::<bool>()), 0..40),
            picks in proptest::collection::vec((any::<u32>(), any::<u32>()), 40),
            delta in any::<u128>(),
            offset in any::<u128>(),
            domain in any::<u64>(),
            runs in any::<bool>(),
        ) {
            let d = Block::new(delta).with_lsb(true);
            let n = labels.len();
            // The labels sit in a slot array of 2n slots, gate k reading slots a[k] and b[k]
            // (repeats allowed), or, with `runs`, slots k and n + k (consecutive: plain loads).
            let slots = 2 * n.max(1) as u32;
            let mut slot_labels = vec![Block::ZERO; slots as usize];
            let slot_of = |k: usize, p: u32, run: usize| if runs { (run + k) as u32 } else { p % slots };
            let a_idx: Vec<u32> = picks[..n].iter().enumerate().map(|(k, p)| slot_of(k, p.0, 0)).collect();
            let b_idx: Vec<u32> = picks[..n].iter().enumerate().map(|(k, p)| slot_of(k, p.1, n)).collect();
            let ids: Vec<u32> = labels.iter().map(|l| l.2 >> 1).collect();
            for k in 0..n {
                slot_labels[a_idx[k] as usize] = Block::new(labels[k].0);
                slot_labels[b_idx[k] as usize] = Block::new(labels[k].1);
            }
            let a0: Vec<Block> = a_idx.iter().map(|&i| slot_labels[i as usize]).collect();
            let b0: Vec<Block> = b_idx.iter().map(|&i| slot_labels[i as usize]).collect();
            let t: Vec<Block> = ids.iter().map(|&id| Block::from_halves(domain, 2 * u64::from(id))).collect();
            // In place, gate k writes slot 2n + k (after the slots it reads), or, for odd
            // domains, slot 3n - 1 - k (not consecutive: stored lane by lane).
            let reversed = domain & 1 == 1;
            let place = |k: usize| if reversed { n - 1 - k } else { k };
            let out_idx: Vec<u32> = (0..n).map(|k| slots + place(k) as u32).collect();
            let gates = SlotGates { a: &a_idx, b: &b_idx, out: &out_idx, ids: &ids, domain };
            let in_order = |o: &[Block]| -> Vec<Block> { (0..n).map(|k| o[place(k)]).collect() };
            let reference = FixedKeyHash::with_backend(DEFAULT_FIXED_KEY, Backend::Portable).unwrap();
            let aes = |key: Block, x: Block| {
                FixedKeyAes::with_aes(Aes::with_backend(Backend::Portable).unwrap(), key).encrypt_block(x)
            };
            let s = Block::new(offset);
            for gate_hash in [GateHash::Prp, GateHash::Mi(s), GateHash::Circ] {
                let h = |x: Block, j: Block| match gate_hash {
                    GateHash::Prp => pi(&reference, x.gf_double() ^ j) ^ x.gf_double(),
                    GateHash::Mi(s) => aes(s ^ j, x.sigma()) ^ x.sigma(),
                    GateHash::Circ => aes(x, j),
                };
                for backend in Backend::available() {
                    let hash = FixedKeyHash::with_backend(DEFAULT_FIXED_KEY, backend).unwrap();
                    let (mut out0, mut table) = (vec![Block::ZERO; n], vec![Block::ZERO; 2 * n]);
                    let buffered = Labels::Buffered { slots: &slot_labels, out: &mut out0 };
                    hash.half_gates_garble(gate_hash, d, buffered, gates, &mut table);
                    let mut in_place = slot_labels.clone();
                    in_place.resize(slots as usize + n, Block::ZERO);
                    let mut table_in_place = vec![Block::ZERO; 2 * n];
                    hash.half_gates_garble(gate_hash, d, Labels::in_place(&mut in_place), gates, &mut table_in_place);
                    prop_assert_eq!(in_order(&in_place[slots as usize..]), out0.clone(), "{:?} {} in place", gate_hash, backend);
                    prop_assert_eq!(&in_place[..slots as usize], &slot_labels[..]);
                    prop_assert_eq!(&table_in_place, &table);
                    for k in 0..n {
                        let (j0, j1) = (t[k], t[k] ^ Block::new(1));
                        let (pa, pb) = (Block::mask(a0[k].lsb()), Block::mask(b0[k].lsb()));
                        let tg = h(a0[k], j0) ^ h(a0[k] ^ d, j0) ^ (pb & d);
                        let te = h(b0[k], j1) ^ h(b0[k] ^ d, j1) ^ a0[k];
                        let w = h(a0[k], j0) ^ (pa & tg) ^ h(b0[k], j1) ^ (pb & (te ^ a0[k]));
                        prop_assert_eq!((table[2 * k], table[2 * k + 1], out0[k]), (tg, te, w), "{:?} {} gate {}", gate_hash, backend, k);
                    }
                    // Evaluating on the labels of bits (x, y) gives the label of x ∧ y.
                    let pick = |z: Block, bit: bool| z ^ (Block::mask(bit) & d);
                    // One bit per slot, so gates sharing a slot see the same value.
                    let bit = |s: u32| labels.get(s as usize % n.max(1)).is_some_and(|l| l.3) ^ (s & 1 == 1);
                    let active: Vec<Block> = (0..slots).map(|s| pick(slot_labels[s as usize], bit(s))).collect();
                    let mut out = vec![Block::ZERO; n];
                    hash.half_gates_eval(gate_hash, Labels::Buffered { slots: &active, out: &mut out }, gates, &table);
                    let mut in_place = active.clone();
                    in_place.resize(slots as usize + n, Block::ZERO);
                    hash.half_gates_eval(gate_hash, Labels::in_place(&mut in_place), gates, &table);
                    prop_assert_eq!(in_order(&in_place[slots as usize..]), out.clone(), "{:?} {} in place", gate_hash, backend);
                    for k in 0..n {
                        let v = bit(a_idx[k]) & bit(b_idx[k]);
                        prop_assert_eq!(out[k], pick(out0[k], v), "{:?} {} gate {}", gate_hash, backend, k);
                    }
                }
            }
        }
    }
}
