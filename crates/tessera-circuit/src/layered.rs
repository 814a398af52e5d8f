//! A circuit ordered by AND layers: the schedule of the secret-sharing protocols (GMW and
//! ABY2.0, MOTION2NX App. A.2), which spend one round per layer of AND gates and none on the
//! free gates (XOR, INV, EQ, EQW) between layers.
//!
//! The gates are stably sorted into `2·D + 1` segments, D the AND-depth: the free gates of
//! depth 0, the AND gates of layer 1, the free gates of depth 1, ..., the AND gates of layer D,
//! the free gates of depth D. An AND gate of layer l reads only wires of depth < l and a free
//! gate of depth d only wires of depth ≤ d, written earlier in its own segment (the sort keeps
//! circuit order within a segment), so running the segments in order is a topological order.

use crate::analysis::and_depths;
use crate::{Circuit, Gate, GateKind};

/// A circuit's gates in layer order; see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layered {
    /// The gates, segment by segment.
    gates: Vec<Gate>,
    /// Segment `s` is `gates[starts[s]..starts[s + 1]]`.
    starts: Vec<usize>,
}

impl Layered {
    /// Sorts `circuit`'s gates into layers (the circuit is assumed valid: [`Circuit::check`]).
    pub fn new(circuit: &Circuit) -> Layered {
        let depths = and_depths(circuit);
        let depth = depths.iter().copied().max().unwrap_or(0) as usize;
        let segment = |g: &Gate, d: u32| {
            let d = d as usize;
            if g.kind == GateKind::And {
                2 * d - 1
            } else {
                2 * d
            }
        };
        let mut starts = vec![0usize; 2 * depth + 2];
        for (g, &d) in circuit.gates.iter().zip(&depths) {
            starts[segment(g, d) + 1] += 1;
        }
        for s in 1..starts.len() {
            starts[s] += starts[s - 1];
        }
        let mut next = starts.clone();
        let mut gates = circuit.gates.clone();
        for (g, &d) in circuit.gates.iter().zip(&depths) {
            let s = segment(g, d);
            gates[next[s]] = *g;
            next[s] += 1;
        }
        Layered { gates, starts }
    }

    /// The AND-depth D: the number of AND layers.
    pub fn depth(&self) -> usize {
        (self.starts.len() - 2) / 2
    }

    /// The free gates of depth `d` (0..=D), to run after AND layer `d` (before layer 1 for
    /// `d = 0`).
    pub fn free(&self, d: usize) -> &[Gate] {
        &self.gates[self.starts[2 * d]..self.starts[2 * d + 1]]
    }

    /// The AND gates of layer `l` (1..=D), independent of each other.
    pub fn ands(&self, l: usize) -> &[Gate] {
        &self.gates[self.starts[2 * l - 1]..self.starts[2 * l]]
    }

    /// The number of AND gates in layers before `l` (1..=D + 1): the index of layer `l`'s first
    /// AND gate among all AND gates in layer order.
    pub fn ands_before(&self, l: usize) -> usize {
        (1..l).map(|k| self.ands(k).len()).sum()
    }

    /// All AND gates.
    pub fn and_count(&self) -> usize {
        self.ands_before(self.depth() + 1)
    }

    /// Every gate, in layer order.
    pub fn gates(&self) -> &[Gate] {
        &self.gates
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::and_gates_per_layer;
    use crate::library;

    #[test]
    fn layer_order_is_topological_and_keeps_every_gate() {
        for name in ["aes128", "sha256", "add32", "mul16", "lt8"] {
            let c = library::builtin(name).unwrap().unwrap();
            let l = Layered::new(&c);
            assert_eq!(l.gates().len(), c.gates.len(), "{name}");
            let per_layer: Vec<usize> = (1..=l.depth()).map(|k| l.ands(k).len()).collect();
            assert_eq!(per_layer, and_gates_per_layer(&c), "{name}");
            // Reordered, it is still a valid circuit computing the same function.
            let reordered = Circuit {
                gates: l.gates().to_vec(),
                ..c.clone()
            };
            reordered.check().unwrap();
            let mut written = vec![false; c.num_wires as usize];
            written[..c.num_input_wires() as usize].fill(true);
            for d in 0..=l.depth() {
                if d > 0 {
                    // An AND layer reads only wires written before it.
                    for g in l.ands(d) {
                        assert!(written[g.a as usize] && written[g.b as usize]);
                    }
                    for g in l.ands(d) {
                        written[g.out as usize] = true;
                    }
                }
                for g in l.free(d) {
                    written[g.out as usize] = true;
                }
            }
            assert_eq!(
                l.and_count(),
                c.gates.iter().filter(|g| g.kind == GateKind::And).count()
            );
        }
    }
}
