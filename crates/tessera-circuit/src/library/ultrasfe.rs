//! The parallel-garbling benchmarks of UltraSFE (Buescher, Katzenbeisser, USENIX Security 2015,
//! §6.2 and Table 2; Figure 5), built with
//! [`crate::builder`]. Integers are unsigned and wrap like Rust's `wrapping_*` operations;
//! values are concatenated least significant bit first.
//!
//! | circuit | input 0 (garbler) | input 1 (evaluator) | output | seed's parameters |
//! |---|---|---|---|---|
//! | [`BioMatch`], [`biomatch`] | database: n entries of d b-bit coordinates | sample: d coordinates | min over entries of Σ (s_j − e_j)², wrapping at b bits or exact | n = 512, d = 4, b = 64 |
//! | [`mexp`] | k bases | k exponents | each base^exponent mod [`MEXP_MODULUS`] | k = 32, b = 32 |
//! | [`mvmul`] | m × k matrix, row after row | k-vector | the m-vector M·v | 16 × 16, b = 64 |
//! | [`levels`] | w bits | w bits | w bits: `depth` layers of w AND gates on random wiring | depth 1000, w = 16 .. 1024 |

use crate::builder::{Bit, Builder, Signedness, extend};
use crate::{Circuit, Error};
use tessera_core::{Block, Prg};

/// The public modulus of [`mexp`]: the Mersenne prime 2^31 − 1.
pub const MEXP_MODULUS: u64 = (1 << 31) - 1;

/// How [`BioMatch`] forms its distances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distance {
    /// Modulo 2^b, as C's b-bit integers wrap: b-bit differences, squares and sums
    /// (`biomatch`: 8.5 M AND gates at the paper's parameters).
    Wrapping,
    /// Exact: |s − e| at b bits, its square at 2b bits, the sums and the minimum at
    /// 2b + ⌈log₂ d⌉ bits, so no distance wraps (`biomatch-exact`: 17.1 M AND gates, UltraSFE
    /// Table 2's size; see [`BioMatch::TABLE2`]).
    Exact,
}

/// BioMatch: the squared Euclidean distance from the evaluator's sample (`degree` coordinates
/// of `bits` bits) to each of the garbler's `entries` database entries, and the smallest of
/// them (UltraSFE §6.2), taken as a balanced tree of pairwise minima (the same n − 1
/// comparisons as a running minimum, in depth log n rather than n, so subtrees are independent
/// work for parallel garbling).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BioMatch {
    /// n, the database entries.
    pub entries: usize,
    /// d, the coordinates of an entry and of the sample.
    pub degree: usize,
    /// b, the width of a coordinate.
    pub bits: u32,
    /// Wrapping or exact distances.
    pub distance: Distance,
}

impl BioMatch {
    /// UltraSFE Table 2's BioMatch: n = 512, d = 4, b = 64 with exact distances. The paper's
    /// CBMC-GC circuit has 66 M gates of which 25 % are non-linear: about 16.5 M, 32.2 K per
    /// database entry. Four wrapped 64-bit squares cost 4 × 4.0 K AND gates, four full
    /// 64 × 64 → 128-bit ones 4 × 8.1 K: the paper's circuit squares at full width, and so
    /// does this one (17.1 M AND gates, 4 % above the paper's rounded figure: 33.4 K per entry).
    pub const TABLE2: BioMatch = BioMatch {
        entries: 512,
        degree: 4,
        bits: 64,
        distance: Distance::Exact,
    };

    /// The width of a distance and of the output.
    pub fn output_bits(&self) -> usize {
        let b = self.bits as usize;
        match self.distance {
            Distance::Wrapping => b,
            Distance::Exact => 2 * b + ceil_log2(self.degree),
        }
    }

    /// The circuit: input 0 the database (entry after entry), input 1 the sample.
    pub fn circuit(&self) -> Result<Circuit, Error> {
        let mut g = Builder::new();
        let (bits, width) = (self.bits as usize, self.output_bits());
        let db = g.input(self.entries as u32 * self.degree as u32 * self.bits);
        let sample = g.input(self.degree as u32 * self.bits);
        let mut level: Vec<Vec<Bit>> = db
            .chunks(self.degree * bits)
            .map(|entry| {
                let mut dist = Builder::constant(0, width);
                for (s, e) in sample.chunks(bits).zip(entry.chunks(bits)) {
                    let sq = self.square_of_difference(&mut g, s, e);
                    dist = g.add(&dist, &extend(&sq, width, Signedness::Unsigned));
                }
                dist
            })
            .collect();
        while level.len() > 1 {
            level = level
                .chunks(2)
                .filter_map(|pair| {
                    let min = |x: Vec<Bit>, y: Vec<Bit>| g.min(&x, &y, Signedness::Unsigned);
                    pair.iter().cloned().reduce(min)
                })
                .collect();
        }
        let best = level.pop().unwrap_or_else(|| Builder::constant(0, width));
        g.finish(&[best])
    }

    /// (s − e)²: wrapped to b bits, or exactly as |s − e| squared at 2b bits. |s − e| is the
    /// (b + 1)-bit difference, whose top bit is the borrow of s < e, conditionally negated by
    /// that borrow (its bits flipped and the borrow added): 2b AND gates.
    fn square_of_difference(&self, g: &mut Builder, s: &[Bit], e: &[Bit]) -> Vec<Bit> {
        match self.distance {
            Distance::Wrapping => {
                let diff = g.sub(s, e);
                g.mul(&diff, &diff)
            }
            Distance::Exact => {
                let bits = s.len();
                let wide = |x: &[Bit]| extend(x, bits + 1, Signedness::Unsigned);
                let diff = g.sub(&wide(s), &wide(e));
                let borrow = diff[bits];
                let flipped: Vec<Bit> = diff[..bits].iter().map(|&x| g.xor(x, borrow)).collect();
                let (abs, _) = g.add_with_carry(&flipped, &Builder::constant(0, bits), borrow);
                g.mul_wide(&abs, &abs, Signedness::Unsigned)
            }
        }
    }
}

/// ⌈log₂ n⌉ (0 for n ≤ 1): the bits a sum of n terms needs beyond a term's.
fn ceil_log2(n: usize) -> usize {
    (usize::BITS - n.saturating_sub(1).leading_zeros()) as usize
}

/// BioMatch with wrapping distances: [`BioMatch`] { n, d, b, [`Distance::Wrapping`] }.
pub fn biomatch(n: usize, d: usize, b: u32) -> Result<Circuit, Error> {
    BioMatch {
        entries: n,
        degree: d,
        bits: b,
        distance: Distance::Wrapping,
    }
    .circuit()
}

/// x mod `m` for a public m ≥ 1 by restoring division, one quotient bit per bit of x: the
/// remainder (one bit wider than m) is shifted, m subtracted, and the difference kept unless
/// it borrowed.
fn reduce(g: &mut Builder, x: &[Bit], m: u64) -> Vec<Bit> {
    let width = 64 - m.leading_zeros() as usize;
    let m_wide = Builder::constant(u128::from(m), width + 2);
    let mut r = Builder::constant(0, width + 1);
    for &bit in x.iter().rev() {
        // r < m before the shift, so 2r + bit < 2^(width + 1).
        r.pop();
        r.insert(0, bit);
        let mut r_wide = r.clone();
        r_wide.push(Bit::Const(false));
        let diff = g.sub(&r_wide, &m_wide);
        let borrow = diff[width + 1];
        r = g.mux_bits(borrow, &r, &diff[..width + 1]);
    }
    r.truncate(width);
    r
}

/// MExp: k modular exponentiations base_i^exp_i mod [`MEXP_MODULUS`] of b-bit bases (the
/// garbler's) and exponents (the evaluator's), by square-and-multiply from the top exponent
/// bit; each product is the full 2b-bit one, reduced by restoring division. Outputs k values
/// of b bits.
pub fn mexp(k: usize, b: u32) -> Result<Circuit, Error> {
    let mut g = Builder::new();
    let bits = b as usize;
    let bases = g.input(k as u32 * b);
    let exps = g.input(k as u32 * b);
    let m = MEXP_MODULUS;
    let mulmod = |g: &mut Builder, x: &[Bit], y: &[Bit]| {
        let p = g.mul_wide(x, y, Signedness::Unsigned);
        let mut r = reduce(g, &p, m);
        r.resize(bits, Bit::Const(false));
        r
    };
    let mut out = Vec::with_capacity(k);
    for (base, exp) in bases.chunks(bits).zip(exps.chunks(bits)) {
        let mut acc = Builder::constant(1, bits);
        for &e in exp.iter().rev() {
            let sq = mulmod(&mut g, &acc, &acc);
            let times = mulmod(&mut g, &sq, base);
            acc = g.mux_bits(e, &times, &sq);
        }
        out.push(acc);
    }
    g.finish(&[out.concat()])
}

/// MVMul: the garbler's m × k matrix (row after row) times the evaluator's k-vector, b-bit
/// entries, modulo 2^b.
pub fn mvmul(m: usize, k: usize, b: u32) -> Result<Circuit, Error> {
    let mut g = Builder::new();
    let bits = b as usize;
    let matrix = g.input(m as u32 * k as u32 * b);
    let vector = g.input(k as u32 * b);
    let mut out = Vec::with_capacity(m * bits);
    for row in matrix.chunks(k * bits) {
        let mut acc = Builder::constant(0, bits);
        for (x, y) in row.chunks(bits).zip(vector.chunks(bits)) {
            let p = g.mul(x, y);
            acc = g.add(&acc, &p);
        }
        out.extend(acc);
    }
    g.finish(&[out])
}

/// The level-width experiment (UltraSFE Figure 5): `depth` layers of `width` AND gates, each
/// gate reading two distinct wires of the layer before (the inputs for the first) through a
/// random permutation drawn from `seed`: wires π(j) and π(j + n/2) of the n before, so every
/// wire is read (twice in the inner layers) and no gate is dead. A width below 2 is taken as 2.
pub fn levels(width: usize, depth: usize, seed: u64) -> Result<Circuit, Error> {
    let mut g = Builder::new();
    let w = width.max(2);
    let mut layer = g.input(w as u32);
    layer.extend(g.input(w as u32));
    let mut prg = Prg::from_seed_block(Block::from(seed));
    for _ in 0..depth {
        let perm = permutation(&mut prg, layer.len());
        let n = layer.len();
        layer = (0..w)
            .map(|j| g.and(layer[perm[j % n]], layer[perm[(j + n / 2) % n]]))
            .collect();
    }
    g.finish(&[layer])
}

/// A uniformly random permutation of 0..n (Fisher-Yates on 64-bit draws; the modulo bias is
/// irrelevant for a benchmark's wiring).
fn permutation(prg: &mut Prg, n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (prg.random_block().low() % (i as u64 + 1)) as usize;
        p.swap(i, j);
    }
    p
}
