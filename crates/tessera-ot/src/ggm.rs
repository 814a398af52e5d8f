//! GGM trees (Goldreich, Goldwasser, Micali, J. ACM 1986) as puncturable PRFs, expanded level
//! by level across many trees at once, so that one batched hash call covers every node of a
//! level (VASA §4.3.2 batches Ferret's trees the same way).
//!
//! A node s has children H(s) and H(s ⊕ 1), with H(x) = π(x) ⊕ x the correlation-robust MMO
//! hash over a fixed-key AES permutation π of its own ([`TREE_KEY`]); correlation robustness
//! (Guo, Katz, Wang, Yu, S&P 2020, §5) makes the two children pseudo-random and independent
//! for a secret s. Leaf y of a tree of depth d is reached by the bits of y from the most
//! significant down (0 = left child).
//!
//! The holder of the root also gets, for each level i = 1..=d, the sums K_i^0 and K_i^1 of the
//! left and of the right children at that level. A party that holds, for each level, the sum on
//! the side off the path to a leaf x rebuilds every leaf but x ([`Ggm::puncture`]): this is the
//! (2^d − 1)-out-of-2^d OT of SoftSpoken's setup (Roy, CRYPTO 2022, §4) and the single-point
//! correlated OT of Ferret (Yang, Weng, Lan, Zhang, Wang, CCS 2020, §4), once each K_i on the
//! side off the path is sent through a 1-out-of-2 OT. Reconstruction is constant-time in the
//! punctured point: every node is touched the same way, selected by masks.

use crate::bits::{bit_mask, eq_mask};
use tessera_core::{Block, FixedKeyHash};

/// The fixed key of the tree permutation: the next 32 hex digits of π after those of the
/// core's default hash key (nothing up the sleeve, and a permutation of its own).
pub const TREE_KEY: Block = Block::new(0xa409_3822_299f_31d0_082e_fa98_ec4e_6c89);

/// Batched GGM expansion over the tree permutation, with its scratch space.
#[derive(Debug)]
pub struct Ggm {
    hash: FixedKeyHash,
    inputs: Vec<Block>,
    /// The children of a zero node, H(0) and H(1): what a punctured tree's path node expands
    /// to.
    zero_children: [Block; 2],
}

impl Default for Ggm {
    fn default() -> Self {
        let hash = FixedKeyHash::new(TREE_KEY);
        let mut zero_children = [Block::ZERO; 2];
        hash.cr(&[Block::ZERO, Block::new(1)], &mut zero_children);
        Ggm {
            hash,
            inputs: Vec::new(),
            zero_children,
        }
    }
}

impl Ggm {
    /// Expands one level in place for every tree: tree t's 2^(i-1) nodes at the start of its
    /// slot `leaves[t << depth..]` become their 2^i children.
    fn expand_level(&mut self, leaves: &mut [Block], depth: usize, i: usize) {
        let parents = 1usize << (i - 1);
        self.inputs.clear();
        for tree in leaves.chunks_exact(1 << depth) {
            for &p in &tree[..parents] {
                self.inputs.extend_from_slice(&[p, p ^ Block::new(1)]);
            }
        }
        for (tree, inputs) in leaves
            .chunks_exact_mut(1 << depth)
            .zip(self.inputs.chunks_exact(2 * parents))
        {
            self.hash.cr(inputs, &mut tree[..2 * parents]);
        }
    }

    /// Expands one tree of `depth` per root: tree t's leaves go to `leaves[t << depth..][..1 <<
    /// depth]` and its level sums to `sums[t * depth + i - 1]` = [K_i^0, K_i^1] for levels
    /// i = 1..=depth.
    ///
    /// # Panics
    /// If the output lengths do not match the roots and depth, or `depth` is 0 or over 30.
    pub fn expand(
        &mut self,
        roots: &[Block],
        depth: usize,
        leaves: &mut [Block],
        sums: &mut [[Block; 2]],
    ) {
        assert!((1..=30).contains(&depth), "GGM depth {depth} out of range");
        assert_eq!(leaves.len(), roots.len() << depth, "GGM leaves buffer");
        assert_eq!(sums.len(), roots.len() * depth, "GGM sums buffer");
        for (tree, &root) in leaves.chunks_exact_mut(1 << depth).zip(roots) {
            tree[0] = root;
        }
        for i in 1..=depth {
            self.expand_level(leaves, depth, i);
            for (tree, sums) in leaves
                .chunks_exact(1 << depth)
                .zip(sums.chunks_exact_mut(depth))
            {
                sums[i - 1] = tree[..1 << i]
                    .chunks_exact(2)
                    .fold([Block::ZERO; 2], |[l, r], pair| [l ^ pair[0], r ^ pair[1]]);
            }
        }
    }

    /// Rebuilds the trees of `depth` whose leaf `points[t]` is punctured, from the sums off
    /// the path: `known[t * depth + i - 1]` is the sum at level i on the side opposite to bit
    /// `depth - i` of `points[t]`. Leaves go to `leaves[t << depth..]`, the punctured one zero.
    /// Constant-time in the points.
    ///
    /// # Panics
    /// If the lengths do not match, or `depth` is 0 or over 30.
    pub fn puncture(
        &mut self,
        points: &[u64],
        known: &[Block],
        depth: usize,
        leaves: &mut [Block],
    ) {
        assert!((1..=30).contains(&depth), "GGM depth {depth} out of range");
        assert_eq!(leaves.len(), points.len() << depth, "GGM leaves buffer");
        assert_eq!(known.len(), points.len() * depth, "GGM known sums");
        // Each level overwrites the first 2^i nodes of every tree: only the roots need
        // clearing.
        for tree in leaves.chunks_exact_mut(1 << depth) {
            tree[0] = Block::ZERO;
        }
        for i in 1..=depth {
            // The parents' level is right except at the path node, which is zero: its children
            // come out as the constants H(0), H(1). Without them, the sums of each side are
            // those of the other nodes; the sibling off the path is the known sum minus the
            // others on its side, and the path node becomes zero again.
            self.expand_level(leaves, depth, i);
            let [c0, c1] = self.zero_children;
            for ((tree, &point), known) in leaves
                .chunks_exact_mut(1 << depth)
                .zip(points)
                .zip(known.chunks_exact(depth))
            {
                let path = point >> (depth - i);
                let nodes = &mut tree[..1 << i];
                let sums = nodes
                    .chunks_exact(2)
                    .fold([c0, c1], |[l, r], pair| [l ^ pair[0], r ^ pair[1]]);
                // The new values of the path's parent's children, [left, right]: the sibling's
                // and zero, in an order set by the path's last bit without a branch.
                let right = bit_mask(path & 1 == 1);
                let value = known[i - 1] ^ (sums[1] & !right) ^ (sums[0] & right);
                let children = [value & right, value & !right];
                for (p, pair) in nodes.chunks_exact_mut(2).enumerate() {
                    let m = eq_mask(p as u64, path >> 1);
                    pair[0] = (pair[0] & !m) ^ (children[0] & m);
                    pair[1] = (pair[1] & !m) ^ (children[1] & m);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_core::Prg;

    #[test]
    fn punctured_trees_agree_with_full_ones_but_at_the_point() {
        let mut prg = Prg::from_seed_block(Block::new(7));
        let mut ggm = Ggm::default();
        for depth in [1, 2, 5, 8] {
            let trees = 3;
            let roots = prg.random_blocks(trees);
            let mut full = vec![Block::ZERO; trees << depth];
            let mut sums = vec![[Block::ZERO; 2]; trees * depth];
            ggm.expand(&roots, depth, &mut full, &mut sums);
            let points: Vec<u64> = (0..trees as u64)
                .map(|t| (t * 0x9e37 + 5) % (1 << depth))
                .collect();
            let known: Vec<Block> = points
                .iter()
                .enumerate()
                .flat_map(|(t, &x)| {
                    let sums = &sums;
                    (1..=depth).map(move |i| {
                        let bit = (x >> (depth - i)) & 1;
                        sums[t * depth + i - 1][1 - bit as usize]
                    })
                })
                .collect();
            let mut rebuilt = vec![Block::ONES; trees << depth];
            ggm.puncture(&points, &known, depth, &mut rebuilt);
            for t in 0..trees {
                for y in 0..1usize << depth {
                    let (got, want) = (rebuilt[(t << depth) + y], full[(t << depth) + y]);
                    if y as u64 == points[t] {
                        assert_eq!(got, Block::ZERO);
                    } else {
                        assert_eq!(got, want, "depth {depth} tree {t} leaf {y}");
                    }
                }
            }
            // Leaves differ from each other and from the roots.
            let mut all = full.clone();
            all.extend_from_slice(&roots);
            all.sort_by_key(|b| b.as_u128());
            all.dedup();
            assert_eq!(all.len(), (trees << depth) + trees);
        }
    }
}
