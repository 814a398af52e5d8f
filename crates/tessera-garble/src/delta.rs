//! The free-XOR offset (Kolesnikov, Schneider, ICALP 2008) with point-and-permute: every wire w
//! has a zero-label L_w and one-label L_w ⊕ Δ; Δ's least significant bit is 1, so the two labels
//! of a wire differ in their last bit (the "colour" the evaluator selects rows by).

use tessera_core::{Block, Prg};

/// The garbler's global free-XOR offset Δ (least significant bit 1). Secret.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Delta(Block);

impl std::fmt::Debug for Delta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Delta(..)")
    }
}

impl Delta {
    /// A random Δ.
    pub fn random(prg: &mut Prg) -> Self {
        Delta(prg.random_block().with_lsb(true))
    }

    /// Δ from a block; its least significant bit is forced to 1.
    pub fn new(block: Block) -> Self {
        Delta(block.with_lsb(true))
    }

    /// The offset as a block.
    pub fn block(self) -> Block {
        self.0
    }

    /// The label of `bit` on a wire whose 0-label is `zero`: zero ⊕ bit·Δ, selected by a mask.
    pub fn label(self, zero: Block, bit: bool) -> Block {
        zero ^ (Block::mask(bit) & self.0)
    }
}
