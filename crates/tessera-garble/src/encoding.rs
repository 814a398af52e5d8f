//! Free-XOR wire labels (Kolesnikov, Schneider, ICALP 2008) with point-and-permute: every wire
//! w has a zero-label L_w and one-label L_w ⊕ Δ; Δ's least significant bit is 1, so the two
//! labels of a wire differ in their last bit (the "colour" the evaluator selects rows by).

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
}

/// The garbler's secret input encoding: Δ and the zero-label of every input wire.
#[derive(Clone, Debug)]
pub struct InputEncoding {
    /// The free-XOR offset.
    pub delta: Delta,
    /// Zero-labels of the circuit's input wires, in wire order.
    pub zero_labels: Vec<Block>,
}

impl InputEncoding {
    /// Fresh random labels for `num_input_wires` wires.
    pub fn random(prg: &mut Prg, num_input_wires: usize) -> Self {
        let delta = Delta::random(prg);
        let mut zero_labels = vec![Block::ZERO; num_input_wires];
        prg.fill_blocks(&mut zero_labels);
        InputEncoding { delta, zero_labels }
    }

    /// The labels for input bits `bits` on the wires starting at `first_wire`.
    ///
    /// # Panics
    /// If the wires run past the encoding's input wires (the garbler's own bookkeeping).
    pub fn encode(&self, first_wire: usize, bits: &[bool]) -> Vec<Block> {
        encode(
            &self.zero_labels[first_wire..first_wire + bits.len()],
            self.delta,
            bits,
        )
    }
}

/// The label of each bit: `zero[k] ⊕ bits[k]·Δ`, selected by masking, not branching.
pub fn encode(zero: &[Block], delta: Delta, bits: &[bool]) -> Vec<Block> {
    zero.iter()
        .zip(bits)
        .map(|(&z, &b)| z ^ (Block::mask(b) & delta.0))
        .collect()
}

/// The output decoding information: the colour bit of each output zero-label.
pub fn decoding_bits(output_zero_labels: &[Block]) -> Vec<bool> {
    output_zero_labels.iter().map(|l| l.lsb()).collect()
}

/// Output bits from the evaluator's output labels and the garbler's decoding bits.
pub fn decode(labels: &[Block], decoding: &[bool]) -> Vec<bool> {
    labels
        .iter()
        .zip(decoding)
        .map(|(l, &d)| l.lsb() ^ d)
        .collect()
}
