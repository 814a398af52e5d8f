//! Three-halves garbling (Rosulek, Roy, "Three halves make a whole? Beating the half-gates lower
//! bound for garbled circuits", CRYPTO 2021): free XOR, and AND gates of 1.5κ + 5 bits (three
//! half-label ciphertexts and five control bits) against half-gates' 2κ, for six hashes to
//! garble and three to evaluate.
//!
//! **Slicing.** A label X is cut into halves X_L (low 64 bits) and X_R (high 64 bits), and so is
//! Δ, whose colour bit (bit 0 of Δ_L) is 1. For an AND gate g, let A, B be its inputs'
//! colour-0 labels, so A_i = A ⊕ iΔ has colour i, and let ā, b̄ be the colours of the labels
//! that mean 1 (known to the garbler only). Holding A_i and B_j, the evaluator hashes
//! H_A = H(A_i, 3g), H_B = H(B_j, 3g + 1), H_X = H(A_i ⊕ B_j, 3g + 2) with the tweakable
//! fixed-key hash of the PRP scheme ([`FixedKeyHash::tweakable`]), h(·) its low 64 bits, and
//! computes the output label half by half:
//!
//! C_L = h(H_A) ⊕ h(H_X) ⊕ i·G_0 ⊕ (i⊕j)·G_2 ⊕ R_ij[0]·(A_i, B_j),
//! C_R = h(H_B) ⊕ h(H_X) ⊕ j·G_1 ⊕ (i⊕j)·G_2 ⊕ R_ij[1]·(A_i, B_j),
//!
//! with G_0, G_1, G_2 the gate's ciphertexts and R_ij a 2×4 matrix over GF(2) that selects
//! halves among (A_L, A_R, B_L, B_R).
//!
//! **Dicing.** No single R works for all four (i, j) (that is the half-gates lower bound), and
//! R_ij depends on ā, b̄, so it must not reveal them: R_ij = R_p(i, j) ⊕ r1·S_1 ⊕ r2·S_2 with
//! (r1, r2) = ρ ⊕ (i·ā ⊕ (i⊕j)(ā⊕b̄), j·b̄ ⊕ (i⊕j)(ā⊕b̄)) for two fresh random bits ρ per gate,
//! so the one R_ij the evaluator learns is uniform on a coset, whatever ā, b̄ are. It decodes
//! (r1, r2) from the five control bits z with the same linear map as the labels, masked by bit
//! 64 of each hash, t(·): r1 = t(H_A) ⊕ t(H_X) ⊕ z_0 ⊕ i·z_2 ⊕ (i⊕j)·z_4 and
//! r2 = t(H_B) ⊕ t(H_X) ⊕ z_1 ⊕ j·z_3 ⊕ (i⊕j)·z_4.
//!
//! **The garbler's system.** The output label C must satisfy C ⊕ (i⊕ā⊕1)(j⊕b̄⊕1)·Δ = C_ij for
//! all four (i, j). Over the halves w = (A_L, A_R, B_L, B_R, Δ_L, Δ_R) this is linear in the
//! coefficients of C and of G_0..G_2: with E_ij the coefficients that the R_ij term plus the
//! output's Δ must supply at (i, j) (see [`needed`]), C = E_00, G_0, G_1 = the rows of
//! E_11 ⊕ E_00 and G_2 = the first row of E_01 ⊕ E_00, plus the hashes the evaluator's
//! combination cancels. It has a solution only if the E_ij meet three identities; R_p and S_1,
//! S_2 below are the sparsest choice that meets them for every ā, b̄, ρ (the unit tests check
//! every case). The garbler's coefficients are derived from them at compile time.
//!
//! Rosulek and Roy prove the scheme secure for a hash that is circular correlation robust in
//! the presence of such linear leakage. All selection on ā, b̄, ρ is by masks.
//!
//! **Table layout.** A batch of n AND gates writes 3n halves (G_0, G_1, G_2 of each gate), then
//! 5n control bits packed into 64-bit words, two words per block: 1.5κ + 5 bits a gate plus
//! less than a block per batch.

use super::coins::GateCoins;
use super::{GateCost, Offset, Scheme, SchemeCost, wires};
use crate::delta::Delta;
use crate::plan::XorGates;
use std::ops::Range;
use tessera_core::hazmat::{Labels, SlotGates, SlotSteps};
use tessera_core::{Backend, Block, FixedKeyHash, Prg};

/// Coefficients over the halves: bit k selects half k of w = (A_L, A_R, B_L, B_R, Δ_L, Δ_R).
type Row = u8;

/// The dicing directions S_1, S_2, rows over (A_L, A_R, B_L, B_R).
const S1: [Row; 2] = [0b0111, 0b1001];
const S2: [Row; 2] = [0b1001, 0b1110];

/// R_ij for dicing bits (r1, r2): R_p(i, j) puts ¬i·B_L in the first row and ¬j·A_R in the
/// second. Bits are 0 or 1.
const fn dice(i: u8, j: u8, r1: u8, r2: u8) -> [Row; 2] {
    [
        ((1 ^ i) * 0b0100) ^ (r1 * S1[0]) ^ (r2 * S2[0]),
        ((1 ^ j) * 0b0010) ^ (r1 * S1[1]) ^ (r2 * S2[1]),
    ]
}

/// The garbler's coins: the colours ā, b̄ of the inputs' 1-labels and the dicing bits ρ.
#[derive(Clone, Copy)]
struct Coins {
    a: u8,
    b: u8,
    rho: [u8; 2],
}

/// The dicing bits (r1, r2) the evaluator decodes at colours (i, j).
const fn decoded(i: u8, j: u8, c: Coins) -> [u8; 2] {
    let both = (i ^ j) & (c.a ^ c.b);
    [c.rho[0] ^ (i & c.a) ^ both, c.rho[1] ^ (j & c.b) ^ both]
}

/// E_ij: the coefficients over w of R_ij·(A ⊕ iΔ, B ⊕ jΔ), plus Δ where (i, j) = (ā, b̄): what
/// the evaluator's R_ij term and the output's Δ add at colours (i, j).
const fn needed(i: u8, j: u8, c: Coins) -> [Row; 2] {
    let [r1, r2] = decoded(i, j, c);
    let r = dice(i, j, r1, r2);
    let one = (i ^ c.a ^ 1) & (j ^ c.b ^ 1);
    let mut e = [0; 2];
    let mut row = 0;
    while row < 2 {
        // A_i contributes i·Δ through its halves' coefficients, B_j likewise.
        let delta = (i * (r[row] & 3)) ^ (j * (r[row] >> 2)) ^ (one << row);
        e[row] = r[row] | (delta << 4);
        row += 1;
    }
    e
}

/// The garbler's coefficient rows over w: C_L, C_R, G_0, G_1, G_2, six bits each, packed.
const fn rows(c: Coins) -> u32 {
    let e00 = needed(0, 0, c);
    let e01 = needed(0, 1, c);
    let e11 = needed(1, 1, c);
    let r = [
        e00[0],
        e00[1],
        e11[0] ^ e00[0],
        e11[1] ^ e00[1],
        e01[0] ^ e00[0],
    ];
    let mut packed = 0;
    let mut k = 0;
    while k < 5 {
        packed |= (r[k] as u32) << (6 * k);
        k += 1;
    }
    packed
}

const fn coins(a: u8, b: u8, rho0: u8, rho1: u8) -> Coins {
    Coins {
        a,
        b,
        rho: [rho0, rho1],
    }
}

/// [`rows`] is affine in ā, b̄, ρ but for one āb̄ term (where the output's Δ lands):
/// rows = BASE ⊕ ā·BY_A ⊕ b̄·BY_B ⊕ āb̄·BY_AB ⊕ ρ0·BY_R0 ⊕ ρ1·BY_R1, evaluated with masks.
const BASE: u32 = rows(coins(0, 0, 0, 0));
const BY_A: u32 = rows(coins(1, 0, 0, 0)) ^ BASE;
const BY_B: u32 = rows(coins(0, 1, 0, 0)) ^ BASE;
const BY_AB: u32 = rows(coins(1, 1, 0, 0)) ^ BASE ^ BY_A ^ BY_B;
const BY_R0: u32 = rows(coins(0, 0, 1, 0)) ^ BASE;
const BY_R1: u32 = rows(coins(0, 0, 0, 1)) ^ BASE;

/// All ones if `bit` is 1.
#[inline(always)]
fn mask32(bit: u64) -> u32 {
    0u32.wrapping_sub(bit as u32)
}

/// XOR of the halves `w[k]` whose bit k is set in `row`, by masks.
#[inline(always)]
fn combine<const N: usize>(row: u32, w: [u64; N]) -> u64 {
    let mut acc = 0;
    for (k, &x) in w.iter().enumerate() {
        acc ^= 0u64.wrapping_sub(u64::from((row >> k) & 1)) & x;
    }
    acc
}

/// Bit 64 of a hash: the mask of a control bit.
#[inline(always)]
fn t(h: Block) -> u64 {
    h.high() & 1
}

/// 64-bit words of a batch of `n` gates' tables: 3n halves, then 5n bits.
fn words(n: usize) -> usize {
    3 * n + (5 * n).div_ceil(64)
}

/// Writes gate `k`'s five control bits `z` into the bit words of its batch.
#[inline(always)]
fn put_bits(words: &mut [u64], k: usize, z: u64) {
    let (w, o) = (5 * k / 64, 5 * k % 64);
    words[w] |= z << o;
    if o > 59 {
        words[w + 1] |= z >> (64 - o);
    }
}

/// Reads gate `k`'s five control bits.
#[inline(always)]
fn get_bits(words: &[u64], k: usize) -> u64 {
    let (w, o) = (5 * k / 64, 5 * k % 64);
    let mut z = words[w] >> o;
    if o > 59 {
        z |= words[w + 1] << (64 - o);
    }
    z & 31
}

/// The garbler's secret: Δ and the key of the dicing coins ρ (a PRF of the gate index).
#[derive(Clone, Debug)]
pub struct ThreeHalvesSecret {
    delta: Delta,
    coins: GateCoins,
}

impl ThreeHalvesSecret {
    /// Δ with a coin key drawn from `prg`.
    pub fn new(delta: Delta, prg: &mut Prg) -> Self {
        ThreeHalvesSecret {
            delta,
            coins: GateCoins::new(prg),
        }
    }

    /// The free-XOR offset.
    pub fn delta(&self) -> Delta {
        self.delta
    }
}

/// The three-halves scheme; see the module documentation.
#[derive(Clone, Debug)]
pub struct ThreeHalves {
    hash: FixedKeyHash,
    x: Vec<Block>,
    tweaks: Vec<Block>,
    h: Vec<Block>,
    words: Vec<u64>,
    coins: Vec<Block>,
}

impl ThreeHalves {
    /// The scheme over `hash`'s permutation (and so its AES backend).
    pub fn new(hash: FixedKeyHash) -> Self {
        ThreeHalves {
            hash,
            x: Vec::new(),
            tweaks: Vec::new(),
            h: Vec::new(),
            words: Vec::new(),
            coins: Vec::new(),
        }
    }

    /// Hashes `m` inputs per gate; `fill(id, x, tweaks)` writes a gate's inputs and tweaks.
    fn hash<G>(
        &mut self,
        gates: impl ExactSizeIterator<Item = G>,
        m: usize,
        mut fill: impl FnMut(G, &mut [Block], &mut [Block]),
    ) {
        let n = gates.len() * m;
        self.x.resize(n, Block::ZERO);
        self.tweaks.resize(n, Block::ZERO);
        self.h.resize(n, Block::ZERO);
        let slots = self
            .x
            .chunks_exact_mut(m)
            .zip(self.tweaks.chunks_exact_mut(m));
        for (g, (x, tw)) in gates.zip(slots) {
            fill(g, x, tw);
        }
        self.hash.tweakable(&self.x, &self.tweaks, &mut self.h);
    }
}

/// Gate `id`'s tweaks: 3g for the first input, 3g + 1 for the second, 3g + 2 for their XOR,
/// with the batch's `domain` in the high 64 bits.
fn tweaks(domain: u64, id: u32) -> [Block; 3] {
    let g = (3 * u128::from(id)) | (u128::from(domain) << 64);
    [Block::new(g), Block::new(g + 1), Block::new(g + 2)]
}

impl Scheme for ThreeHalves {
    const NAME: &'static str = "3h";
    const CODE: u8 = 5;
    const SUMMARY: &'static str =
        "three-halves garbling: AND tables of 1.5 blocks plus 5 bits, free XOR (Rosulek, Roy)";
    const XOR_GATES: XorGates = XorGates::Free;
    const COST: SchemeCost = SchemeCost::free_xor(GateCost::new(6.0, 0.0), GateCost::new(3.0, 0.0));
    // A batch's tables hold all its gates' halves, then all their control bits.
    const TABLE_GRAIN: usize = crate::plan::CHUNK;
    type Wire = Block;
    type Secret = ThreeHalvesSecret;

    fn with_backend(backend: Backend, _session: Block) -> Result<Self, tessera_core::Error> {
        Ok(ThreeHalves::new(FixedKeyHash::with_backend(
            tessera_core::hash::DEFAULT_FIXED_KEY,
            backend,
        )?))
    }

    fn random_secret(prg: &mut Prg) -> ThreeHalvesSecret {
        let delta = Delta::random(prg);
        ThreeHalvesSecret::new(delta, prg)
    }

    fn with_offset(delta: Block, prg: &mut Prg) -> Option<Offset<Self>> {
        Some(Offset {
            secret: ThreeHalvesSecret::new(Delta::new(delta), prg),
            wire: |zero| zero,
        })
    }

    fn random_wire(_secret: &ThreeHalvesSecret, prg: &mut Prg) -> Block {
        prg.random_block()
    }

    fn encode(secret: &ThreeHalvesSecret, w: &Block, bit: bool) -> Block {
        secret.delta.label(*w, bit)
    }

    fn decoding_bit(w: &Block) -> bool {
        w.lsb()
    }

    fn free_xor(a: Block, b: Block) -> Block {
        a ^ b
    }

    fn xor_steps(steps: &SlotSteps, range: Range<usize>, labels: &mut [Block]) {
        steps.xor(range, labels);
    }

    fn not(secret: &ThreeHalvesSecret, a: Block) -> Block {
        a ^ secret.delta.block()
    }

    fn constant(secret: &ThreeHalvesSecret, value: bool) -> Block {
        secret.delta.label(Block::ZERO, value)
    }

    fn and_table_blocks(gates: usize) -> usize {
        words(gates).div_ceil(2)
    }

    fn garble_and(
        &mut self,
        secret: &ThreeHalvesSecret,
        labels: Labels<'_, Block>,
        gates: SlotGates<'_>,
        table: &mut [Block],
    ) {
        let delta = secret.delta.block();
        let (ids, domain) = (gates.ids, gates.domain);
        let n = ids.len();
        // The colour-0 labels: A = A0 ⊕ pa·Δ.
        let zero = |l: Block| l ^ (Block::mask(l.lsb()) & delta);
        let (read, mut write) = labels.split(gates.out);
        let inputs = wires(read, gates);
        self.hash(inputs.clone().zip(ids), 6, |((a, b), &id), x, tw| {
            let (a, b) = (zero(a), zero(b));
            x.copy_from_slice(&[a, a ^ delta, b, b ^ delta, a ^ b, a ^ b ^ delta]);
            let [ta, tb, tx] = tweaks(domain, id);
            tw.copy_from_slice(&[ta, ta, tb, tb, tx, tx]);
        });
        secret.coins.fill(gates.domain, ids, &mut self.coins);
        self.words.clear();
        self.words.resize(2 * Self::and_table_blocks(n), 0);
        let (halves, bits) = self.words.split_at_mut(3 * n);
        let (dl, dr) = (delta.low(), delta.high());
        let per_gate = inputs.zip(self.h.chunks_exact(6)).zip(&self.coins);
        for (k, ((((a0, b0), h), coins), g)) in per_gate.zip(halves.chunks_exact_mut(3)).enumerate()
        {
            // The 1-labels' colours: ā = ¬pa, b̄ = ¬pb.
            let (ca, cb) = (u64::from(!a0.lsb()), u64::from(!b0.lsb()));
            let (a, b) = (zero(a0), zero(b0));
            let rho = coins.low() & 3;
            let (r0, r1) = (rho & 1, rho >> 1);
            let m = BASE
                ^ (mask32(ca) & BY_A)
                ^ (mask32(cb) & BY_B)
                ^ (mask32(ca & cb) & BY_AB)
                ^ (mask32(r0) & BY_R0)
                ^ (mask32(r1) & BY_R1);
            let w = [a.low(), a.high(), b.low(), b.high(), dl, dr];
            let hl = |k: usize| h[k].low();
            let cl = combine(m, w) ^ hl(0) ^ hl(4);
            let cr = combine(m >> 6, w) ^ hl(2) ^ hl(4);
            write.put(k, Block::from_halves(cr, cl));
            g[0] = combine(m >> 12, w) ^ hl(0) ^ hl(1);
            g[1] = combine(m >> 18, w) ^ hl(2) ^ hl(3);
            g[2] = combine(m >> 24, w) ^ hl(4) ^ hl(5);
            let z = (r0 ^ t(h[0]) ^ t(h[4]))
                | (r1 ^ t(h[2]) ^ t(h[4])) << 1
                | (ca ^ t(h[0]) ^ t(h[1])) << 2
                | (cb ^ t(h[2]) ^ t(h[3])) << 3
                | (ca ^ cb ^ t(h[4]) ^ t(h[5])) << 4;
            put_bits(bits, k, z);
        }
        for (blk, w) in table.iter_mut().zip(self.words.chunks_exact(2)) {
            *blk = Block::from_halves(w[1], w[0]);
        }
    }

    fn evaluate_and(&mut self, labels: Labels<'_, Block>, gates: SlotGates<'_>, table: &[Block]) {
        let (ids, domain) = (gates.ids, gates.domain);
        let (read, mut write) = labels.split(gates.out);
        let inputs = wires(read, gates);
        self.hash(inputs.clone().zip(ids), 3, |((a, b), &id), x, tw| {
            x.copy_from_slice(&[a, b, a ^ b]);
            tw.copy_from_slice(&tweaks(domain, id));
        });
        let n = ids.len();
        self.words.clear();
        self.words
            .extend(table.iter().flat_map(|blk| [blk.low(), blk.high()]));
        let (halves, bits) = self.words.split_at(3 * n);
        let per_gate = inputs
            .zip(self.h.chunks_exact(3))
            .zip(halves.chunks_exact(3));
        for (k, (((a, b), h), g)) in per_gate.enumerate() {
            let (i, j) = (u64::from(a.lsb()), u64::from(b.lsb()));
            let z = get_bits(bits, k);
            let zb = |q: u32| (z >> q) & 1;
            let both = (i ^ j) & zb(4);
            let r1 = t(h[0]) ^ t(h[2]) ^ zb(0) ^ (i & zb(2)) ^ both;
            let r2 = t(h[1]) ^ t(h[2]) ^ zb(1) ^ (j & zb(3)) ^ both;
            let [d0, d1] = dice(i as u8, j as u8, r1 as u8, r2 as u8);
            let w = [a.low(), a.high(), b.low(), b.high()];
            let (mi, mj, mij) = (
                0u64.wrapping_sub(i),
                0u64.wrapping_sub(j),
                0u64.wrapping_sub(i ^ j),
            );
            let hx = h[2].low();
            let cl = h[0].low() ^ hx ^ (mi & g[0]) ^ (mij & g[2]) ^ combine(d0.into(), w);
            let cr = h[1].low() ^ hx ^ (mj & g[1]) ^ (mij & g[2]) ^ combine(d1.into(), w);
            write.put(k, Block::from_halves(cr, cl));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every coin combination.
    fn all_coins() -> impl Iterator<Item = Coins> {
        (0..16u8).map(|v| coins(v & 1, (v >> 1) & 1, (v >> 2) & 1, v >> 3))
    }

    fn row(packed: u32, k: usize) -> Row {
        ((packed >> (6 * k)) & 63) as Row
    }

    #[test]
    fn the_garblers_system_is_solved_at_every_colour_pair() {
        // E_ij must equal C ⊕ V_ij·G, V_ij = [[i, 0, i⊕j], [0, j, i⊕j]], for every (i, j).
        for c in all_coins() {
            let r = rows(c);
            let (cc, g) = ([row(r, 0), row(r, 1)], [row(r, 2), row(r, 3), row(r, 4)]);
            for (i, j) in [(0u8, 0u8), (0, 1), (1, 0), (1, 1)] {
                let (si, sj, sij) = (i * 63, j * 63, (i ^ j) * 63);
                let v = [
                    cc[0] ^ (si & g[0]) ^ (sij & g[2]),
                    cc[1] ^ (sj & g[1]) ^ (sij & g[2]),
                ];
                assert_eq!(
                    needed(i, j, c),
                    v,
                    "(ā, b̄, ρ) = ({}, {}, {:?}), (i, j) = ({i}, {j})",
                    c.a,
                    c.b,
                    c.rho
                );
            }
        }
    }

    #[test]
    fn the_masked_form_equals_the_derivation() {
        for c in all_coins() {
            let m = |bit: u8| 0u32.wrapping_sub(u32::from(bit));
            let masked = BASE
                ^ (m(c.a) & BY_A)
                ^ (m(c.b) & BY_B)
                ^ (m(c.a & c.b) & BY_AB)
                ^ (m(c.rho[0]) & BY_R0)
                ^ (m(c.rho[1]) & BY_R1);
            assert_eq!(masked, rows(c));
        }
    }

    #[test]
    fn the_evaluators_matrix_hides_the_garblers_colours() {
        // At every (i, j), the R_ij the evaluator sees takes each of its four values for exactly
        // one ρ, whatever ā and b̄ are.
        for (i, j) in [(0u8, 0u8), (0, 1), (1, 0), (1, 1)] {
            let seen = |a: u8, b: u8| {
                let mut v: Vec<[Row; 2]> = (0..4u8)
                    .map(|r| {
                        let [r1, r2] = decoded(i, j, coins(a, b, r & 1, r >> 1));
                        dice(i, j, r1, r2)
                    })
                    .collect();
                v.sort();
                v
            };
            let reference = seen(0, 0);
            assert_eq!(reference.windows(2).filter(|p| p[0] == p[1]).count(), 0);
            for (a, b) in [(0, 1), (1, 0), (1, 1)] {
                assert_eq!(seen(a, b), reference);
            }
        }
    }

    #[test]
    fn control_bits_pack_across_word_boundaries() {
        let n = 70;
        let mut w = vec![0u64; words(n)];
        let z = |k: usize| ((k * 7 + 3) % 32) as u64;
        for k in 0..n {
            put_bits(&mut w[3 * n..], k, z(k));
        }
        for k in 0..n {
            assert_eq!(get_bits(&w[3 * n..], k), z(k));
        }
        assert_eq!(ThreeHalves::and_table_blocks(128), 197);
        assert_eq!(ThreeHalves::and_table_blocks(1), 2);
    }
}
