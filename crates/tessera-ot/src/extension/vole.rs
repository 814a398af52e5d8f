//! SoftSpoken's small-field VOLE (Roy, CRYPTO 2022, §3 and §4): the matrix columns of OT
//! extension for any k, with IKNP as k = 1.
//!
//! Column 0 is fixed: Δ's bit 0 is 1, the sender's column is q^0 = 0 and the receiver's is
//! t^0 = r, so every row's least significant bit is 0 for the sender and the choice bit for
//! the receiver (a random correlated OT carries its choice in that bit). Columns 1..128 are
//! split into groups of k (the last one smaller where k does not divide 127). For a group with
//! bits x ∈ F_2^k of Δ:
//!
//! - Setup (a (2^k − 1)-out-of-2^k OT): the receiver of the extension expands a GGM tree of
//!   depth k from a random root into leaves L_0..L_{2^k−1}; for each level it sends both sums
//!   of children masked with the two keys of one base OT, in which the sender chose the side
//!   off the path to x. The sender rebuilds every leaf but L_x ([`crate::ggm`]).
//! - Per row block j, each leaf gives a stream block G_y = H(L_y ⊕ j) (the correlation-robust
//!   MMO hash over a fixed-key permutation of its own). The receiver computes u = Σ_y G_y and
//!   v_b = Σ_{y: bit b of y} G_y, and sends the correction c = u ⊕ r; its columns are the v_b.
//!   The sender, holding M_y = L_{x⊕y} for y ≠ 0, computes w_b = Σ_{y: bit b of y} G(M_y)
//!   = v_b ⊕ x_b·u and adds x_b·c: w_b = v_b ⊕ x_b·r. Hence q_j = t_j ⊕ r_j·Δ row by row,
//!   the IKNP correlation, for 128/k bits sent per OT and about 2^k/k hashes.
//!
//! Both sides sum the 2^k streams into the k columns by halving (Roy §5.2): at each level the
//! upper half adds into the next column and folds onto the lower half, 2·2^k block XORs in
//! all, in registers as the streams come out of AES ([`FixedKeyHash::cr_counter_sums`]); the
//! sender sums the lower halves and adds x_b·c before the columns leave registers
//! ([`FixedKeyHash::cr_counter_sums_masked`]). Columns are written 128 per row block, so that
//! each 128 OTs' columns are one 2 KiB square, transposed in place.
//! Secrets never index memory: the sender's relabelling by x is a sequence of masked swaps.

use super::{CHUNK, KAPPA, check_len};
use crate::Error;
use crate::bits::bit_mask;
use crate::ggm::Ggm;
use tessera_core::{Block, FixedKeyHash, Prg};

/// The largest k: 2^8 streams per group.
pub const MAX_K: usize = 8;

/// The fixed key of the leaves' stream hash: the 32 hex digits of π after [`crate::ggm::TREE_KEY`].
const STREAM_KEY: Block = Block::new(0x4528_21e6_38d0_1377_be54_66cf_34e9_0c6c);

/// The columns 1..128 in groups: (first column, bits) for each.
pub(crate) fn groups(k: usize) -> Vec<(usize, usize)> {
    (1..KAPPA)
        .step_by(k)
        .map(|first| (first, k.min(KAPPA - first)))
        .collect()
}

/// The leaves' stream hash and a group's Σ_y G_y for one chunk.
#[derive(Debug)]
struct Streams {
    hash: FixedKeyHash,
    total: Vec<Block>,
}

impl Streams {
    fn new() -> Self {
        Streams {
            hash: FixedKeyHash::new(STREAM_KEY),
            total: vec![Block::ZERO; CHUNK / KAPPA],
        }
    }
}

/// Blocks as 64-bit words, so that loops of XORs over them vectorise.
fn words(blocks: &[Block]) -> &[u64] {
    bytemuck::cast_slice(blocks)
}

/// [`words`], mutably.
fn words_mut(blocks: &mut [Block]) -> &mut [u64] {
    bytemuck::cast_slice_mut(blocks)
}

/// The extension receiver's side: every leaf of every group.
#[derive(Debug)]
pub struct ReceiverColumns {
    groups: Vec<(usize, usize)>,
    /// Group g's 2^bits leaves.
    leaves: Vec<Vec<Block>>,
    streams: Streams,
}

impl ReceiverColumns {
    /// Expands a random tree per group and masks its level sums with the base OTs' key pairs
    /// (one per group level, in order): the columns and the tree message for the sender.
    pub fn setup(
        k: usize,
        pairs: &[(Block, Block)],
        prg: &mut Prg,
    ) -> Result<(Self, Vec<Block>), Error> {
        let groups = groups(k);
        check_len("SoftSpoken receiver", "base OTs", pairs.len(), KAPPA - 1)?;
        let mut ggm = Ggm::default();
        let mut leaves = Vec::with_capacity(groups.len());
        let mut tree = Vec::with_capacity(2 * (KAPPA - 1));
        let mut keys = pairs.iter();
        for &(_, bits) in &groups {
            let mut l = vec![Block::ZERO; 1 << bits];
            let mut sums = vec![[Block::ZERO; 2]; bits];
            ggm.expand(&[prg.random_block()], bits, &mut l, &mut sums);
            for (sum, &(k0, k1)) in sums.iter().zip(keys.by_ref()) {
                tree.extend_from_slice(&[sum[0] ^ k0, sum[1] ^ k1]);
            }
            leaves.push(l);
        }
        Ok((
            ReceiverColumns {
                groups,
                leaves,
                streams: Streams::new(),
            },
            tree,
        ))
    }

    /// The number of correction columns per chunk: one per group.
    pub fn corrections(&self) -> usize {
        self.groups.len()
    }

    /// One chunk of `width` row blocks from block `counter` on, with the choices `r` (packed,
    /// `width` blocks): the 128 columns t into `t` by row block (column i of row block j at
    /// `t[128 j + i]`, the layout of [`tessera_core::transpose::transpose_squares`]) and one
    /// correction column per group into `correction`.
    pub fn chunk(&mut self, counter: u64, r: &[Block], t: &mut [Block], correction: &mut [Block]) {
        let width = r.len();
        for (row, &r) in t.chunks_exact_mut(KAPPA).zip(r) {
            row[0] = r;
        }
        let streams = &mut self.streams;
        if streams.total.len() < width {
            streams.total.resize(width, Block::ZERO);
        }
        let u = &mut streams.total[..width];
        for (g, (&(first, _), leaves)) in self.groups.iter().zip(&self.leaves).enumerate() {
            // Column b of the group gets v_b = Σ_{y: bit b of y} G_y, and u = Σ_y G_y; the
            // correction is u ⊕ r.
            let at = (&mut t[first..], 1, KAPPA);
            streams
                .hash
                .cr_counter_sums(leaves, Block::from(counter), at, u);
            let c = &mut correction[g * width..][..width];
            for ((c, &u), &r) in words_mut(c).iter_mut().zip(words(u)).zip(words(r)) {
                *c = u ^ r;
            }
        }
    }
}

/// The extension sender's side: Δ's bits per group and the leaves relabelled by them.
#[derive(Debug)]
pub struct SenderColumns {
    groups: Vec<(usize, usize)>,
    /// Group g's bits of Δ as masks (all ones or zero), one per column.
    masks: Vec<Vec<Block>>,
    /// Group g's leaves M_y = L_{x⊕¬y} for y < 2^k − 1 (the last, L_x, is the punctured one).
    leaves: Vec<Vec<Block>>,
    streams: Streams,
}

/// Bits `first..first + bits` of `delta`, as a number.
fn bits_of(delta: Block, first: usize, bits: usize) -> u64 {
    ((delta.as_u128() >> first) as u64) & ((1 << bits) - 1)
}

impl SenderColumns {
    /// The sender's choices for the base OTs, group by group and level by level: the side off
    /// the path to its bits of Δ (Δ's bit 0 taken as 1).
    pub fn base_choices(k: usize, delta: Block) -> Vec<bool> {
        groups(k)
            .into_iter()
            .flat_map(|(first, bits)| {
                let x = bits_of(delta, first, bits);
                (1..=bits).map(move |i| (x >> (i - 1)) & 1 == 0)
            })
            .collect()
    }

    /// Rebuilds every leaf but the one at Δ's bits, group by group, from the base OT keys
    /// (chosen by [`SenderColumns::base_choices`]) and the receiver's tree message.
    pub fn setup(k: usize, delta: Block, keys: &[Block], tree: &[Block]) -> Result<Self, Error> {
        let groups = groups(k);
        check_len("SoftSpoken sender", "base OTs", keys.len(), KAPPA - 1)?;
        check_len(
            "SoftSpoken sender",
            "tree blocks",
            tree.len(),
            2 * keys.len(),
        )?;
        let choices = Self::base_choices(k, delta);
        let mut ggm = Ggm::default();
        let (mut leaves, mut masks) = (Vec::new(), Vec::new());
        let mut level = 0;
        for &(first, bits) in &groups {
            let x = bits_of(delta, first, bits);
            let known: Vec<Block> = (level..level + bits)
                .map(|j| {
                    let side = bit_mask(choices[j]);
                    keys[j] ^ (tree[2 * j + 1] & side) ^ (tree[2 * j] & !side)
                })
                .collect();
            level += bits;
            let mut l = vec![Block::ZERO; 1 << bits];
            ggm.puncture(&[x], &known, bits, &mut l);
            // M_y = L_{x ⊕ ¬y}: one masked swap per bit of x ⊕ ¬0.
            for b in 0..bits {
                let swap = bit_mask((x >> b) & 1 == 0);
                for z in (0..1usize << bits).filter(|z| z & (1 << b) == 0) {
                    let t = (l[z] ^ l[z | 1 << b]) & swap;
                    l[z] ^= t;
                    l[z | 1 << b] ^= t;
                }
            }
            l.pop();
            leaves.push(l);
            masks.push((0..bits).map(|b| bit_mask((x >> b) & 1 == 1)).collect());
        }
        Ok(SenderColumns {
            groups,
            masks,
            leaves,
            streams: Streams::new(),
        })
    }

    /// The number of correction columns per chunk: one per group.
    pub fn corrections(&self) -> usize {
        self.groups.len()
    }

    /// One chunk of `width` row blocks from block `counter` on: the 128 columns q into `q` by
    /// row block (column i of row block j at `q[128 j + i]`) from the receiver's corrections.
    ///
    /// With z = x ⊕ ¬y, w_b = Σ_{z ≠ x: bit b of x ⊕ z} G(L_z) = Σ_{y: bit b of y is 0} G(M_y),
    /// then w_b ⊕ x_b·c = t_b ⊕ x_b·r: both in registers, by
    /// [`FixedKeyHash::cr_counter_sums_masked`] with the masks x_b and the offset c.
    pub fn chunk(&mut self, counter: u64, correction: &[Block], q: &mut [Block]) {
        let width = correction.len() / self.groups.len();
        for row in q.chunks_exact_mut(KAPPA) {
            row[0] = Block::ZERO;
        }
        let streams = &mut self.streams;
        if streams.total.len() < width {
            streams.total.resize(width, Block::ZERO);
        }
        let total = &mut streams.total[..width];
        for (g, ((&(first, _), leaves), masks)) in self
            .groups
            .iter()
            .zip(&self.leaves)
            .zip(&self.masks)
            .enumerate()
        {
            let c = &correction[g * width..][..width];
            streams.hash.cr_counter_sums_masked(
                leaves,
                Block::from(counter),
                (&mut q[first..], 1, KAPPA),
                total,
                (masks, c),
            );
        }
    }
}
