//! GGM trees (Goldreich, Goldwasser, Micali, J. ACM 1986) as puncturable PRFs, expanded level
//! by level across many trees at once, so that one batched hash call covers every node of a
//! level (VASA §4.3.2 batches Ferret's trees the same way).
//!
//! A node s has children H(s) and H(s ⊕ 1), with H(x) = π(x) ⊕ x the correlation-robust MMO
//! hash over a fixed-key AES permutation π of its own ([`TREE_KEY`]); correlation robustness
//! (Guo, Katz, Wang, Yu, S&P 2020, §5) makes the two children pseudo-random and independent
//! for a secret s. Leaf y of a tree of depth d is reached by the bits of y from the least
//! significant up: bit i − 1 chooses the side at level i (0 = left child). Levels are laid out
//! in split order, left children first, so each one is expanded in place from the one before
//! it by one batched call ([`FixedKeyHash::cr_children`]) and the leaves end in the order of y.
//!
//! The holder of the root also gets, for each level i = 1..=d, the sums K_i^0 and K_i^1 of the
//! left and of the right children at that level. A party that holds, for each level, the sum on
//! the side off the path to a leaf x rebuilds every leaf but x ([`Ggm::puncture`]): this is the
//! (2^d − 1)-out-of-2^d OT of SoftSpoken's setup (Roy, CRYPTO 2022, §4) and the single-point
//! correlated OT of Ferret (Yang, Weng, Lan, Zhang, Wang, CCS 2020, §4), once each K_i on the
//! side off the path is sent through a 1-out-of-2 OT. Reconstruction is constant-time in the
//! punctured point: every node is touched the same way ([`tessera_core::hazmat::select::write_at`]).

use crate::bits::bit_mask;
use tessera_core::hazmat::select::write_at;
use tessera_core::{Block, FixedKeyHash};

/// The fixed key of the tree permutation: the next 32 hex digits of π after those of the
/// core's default hash key (nothing up the sleeve, and a permutation of its own).
pub const TREE_KEY: Block = Block::new(0xa409_3822_299f_31d0_082e_fa98_ec4e_6c89);

/// Batched GGM expansion over the tree permutation.
#[derive(Debug)]
pub struct Ggm {
    hash: FixedKeyHash,
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
            zero_children,
        }
    }
}

/// How [`Ggm::puncture_with`] finishes the leaves: every leaf but the punctured one ANDed with
/// `mask`, and the punctured one set so that its tree's leaves sum to the tree's entry of
/// `sums` (zero if there are none).
#[derive(Clone, Copy, Debug)]
pub struct Leaves<'a> {
    /// ANDed into every other leaf.
    pub mask: Block,
    /// What each tree's leaves sum to, once the punctured one is set.
    pub sums: Option<&'a [Block]>,
}

impl Leaves<'_> {
    /// The leaves as the tree gives them, the punctured one zero.
    pub const PLAIN: Leaves<'static> = Leaves {
        mask: Block::ONES,
        sums: None,
    };
}

impl Ggm {
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
        for ((tree, &root), sums) in leaves
            .chunks_exact_mut(1 << depth)
            .zip(roots)
            .zip(sums.chunks_exact_mut(depth))
        {
            tree[0] = root;
            for (i, sum) in sums.iter_mut().enumerate() {
                *sum = self.hash.cr_children(&mut tree[..2 << i]);
            }
        }
    }

    /// Rebuilds the trees of `depth` whose leaf `points[t]` is punctured, from the sums off
    /// the path: `known[t * depth + i - 1]` is the sum at level i on the side opposite to bit
    /// `i - 1` of `points[t]`. Leaves go to `leaves[t << depth..]`, the punctured one zero.
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
        self.puncture_with(points, known, depth, leaves, Leaves::PLAIN);
    }

    /// [`Ggm::puncture`], with the leaves finished as `finish` says in the same pass that
    /// writes the last level: Ferret's single-point COT (§4.1, Fig. 6) clears every leaf's
    /// least significant bit and sets w_α = c ⊕ Σ_{y ≠ α} w_y. The sum of the leaves off the
    /// point comes from the level's sums, not from another pass. Constant-time in the points.
    ///
    /// # Panics
    /// As [`Ggm::puncture`], and if `finish` has sums but not one per tree.
    pub fn puncture_with(
        &mut self,
        points: &[u64],
        known: &[Block],
        depth: usize,
        leaves: &mut [Block],
        finish: Leaves<'_>,
    ) {
        assert!((1..=30).contains(&depth), "GGM depth {depth} out of range");
        assert_eq!(leaves.len(), points.len() << depth, "GGM leaves buffer");
        assert_eq!(known.len(), points.len() * depth, "GGM known sums");
        if let Some(sums) = finish.sums {
            assert_eq!(sums.len(), points.len(), "GGM tree sums");
        }
        let [c0, c1] = self.zero_children;
        for (t, ((tree, &point), known)) in leaves
            .chunks_exact_mut(1 << depth)
            .zip(points)
            .zip(known.chunks_exact(depth))
            .enumerate()
        {
            // The path node of each level is kept at zero, so its children come out as the
            // constants H(0), H(1): without them, the sums of each side are those of the other
            // nodes, and the sibling off the path is the known sum minus those.
            tree[0] = Block::ZERO;
            for (i, &known) in known.iter().enumerate() {
                let half = 1usize << i;
                let [l, r] = self.hash.cr_children(&mut tree[..2 * half]);
                let right = bit_mask((point >> i) & 1 == 1);
                let path_side = ((l ^ c0) & !right) ^ ((r ^ c1) & right);
                let sibling = known ^ ((r ^ c1) & !right) ^ ((l ^ c0) & right);
                // The path's parent sits at the path's low i bits; its children become the
                // sibling and the path node (zero inside the tree), in an order set by bit i of
                // the path. At the last level every other leaf is masked and the point set.
                let (node, keep, sibling) = if i + 1 < depth {
                    (Block::ZERO, Block::ONES, sibling)
                } else {
                    let others = (path_side ^ known) & finish.mask;
                    let sum = finish.sums.map_or(Block::ZERO, |sums| sums[t] ^ others);
                    (sum, finish.mask, sibling & finish.mask)
                };
                let parent = point & (half as u64 - 1);
                let (left, rights) = tree[..2 * half].split_at_mut(half);
                write_at(left, parent, (sibling & right) ^ (node & !right), keep);
                write_at(rights, parent, (sibling & !right) ^ (node & right), keep);
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
                        let bit = (x >> (i - 1)) & 1;
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
            // Finished: other leaves masked, the point completing each tree's sum.
            let mask = Block::ONES.with_lsb(false);
            let sums: Vec<Block> = (0..trees).map(|t| Block::new(t as u128 * 77 + 1)).collect();
            let finish = Leaves {
                mask,
                sums: Some(&sums),
            };
            ggm.puncture_with(&points, &known, depth, &mut rebuilt, finish);
            for t in 0..trees {
                let tree = &rebuilt[t << depth..(t + 1) << depth];
                for (y, &got) in tree.iter().enumerate() {
                    if y as u64 != points[t] {
                        assert_eq!(got, full[(t << depth) + y] & mask, "depth {depth} leaf {y}");
                    }
                }
                let total = tree.iter().fold(Block::ZERO, |a, &b| a ^ b);
                assert_eq!(total, sums[t], "depth {depth} tree {t}");
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
