//! The garbler's input encoding and the output decoding, the same for every scheme: the
//! evaluator's label of a wire carries the wire's colour in its least significant bit.

use crate::scheme::Scheme;
use tessera_core::{Block, Prg};

/// The garbler's secret input encoding: the circuit's secret and what it knows of every input
/// wire.
pub struct InputEncoding<S: Scheme> {
    /// The scheme's secret for this circuit (Δ for free-XOR schemes).
    pub secret: S::Secret,
    /// The input wires, in wire order.
    pub wires: Vec<S::Wire>,
}

impl<S: Scheme> InputEncoding<S> {
    /// A fresh secret and fresh labels for `num_input_wires` wires.
    pub fn random(prg: &mut Prg, num_input_wires: usize) -> Self {
        let secret = S::random_secret(prg);
        let wires = (0..num_input_wires)
            .map(|_| S::random_wire(&secret, prg))
            .collect();
        InputEncoding { secret, wires }
    }

    /// The labels for input bits `bits` on the wires starting at `first_wire`.
    ///
    /// # Panics
    /// If the wires run past the encoding's input wires (the garbler's own bookkeeping).
    pub fn encode(&self, first_wire: usize, bits: &[bool]) -> Vec<Block> {
        let mut labels = Vec::with_capacity(bits.len());
        self.encode_into(first_wire, bits, &mut labels);
        labels
    }

    /// [`InputEncoding::encode`] into `labels` (cleared first), reusing its memory.
    ///
    /// # Panics
    /// As [`InputEncoding::encode`].
    pub fn encode_into(&self, first_wire: usize, bits: &[bool], labels: &mut Vec<Block>) {
        labels.clear();
        let wires = &self.wires[first_wire..first_wire + bits.len()];
        labels.extend(
            wires
                .iter()
                .zip(bits)
                .map(|(w, &b)| S::encode(&self.secret, w, b)),
        );
    }
}

/// The output decoding information: the colour of each output wire's label for 0.
pub fn decoding_bits<S: Scheme>(outputs: &[S::Wire]) -> Vec<bool> {
    outputs.iter().map(S::decoding_bit).collect()
}

/// Output bits from the evaluator's output labels and the garbler's decoding bits.
pub fn decode(labels: &[Block], decoding: &[bool]) -> Vec<bool> {
    labels
        .iter()
        .zip(decoding)
        .map(|(l, &d)| l.lsb() ^ d)
        .collect()
}
