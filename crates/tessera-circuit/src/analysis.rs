//! Analyses over a circuit, each returning plain data: gate counts, AND-depth and AND gates per
//! layer (static layering for batched garbling, VASA §4.1), and wire liveness (so labels can live
//! in reused slots, VASA §4.2).

use crate::{Circuit, GateKind};

/// Gate counts by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GateCounts {
    /// AND gates.
    pub and: usize,
    /// XOR gates.
    pub xor: usize,
    /// INV gates.
    pub inv: usize,
    /// EQ and EQW gates (constants and copies).
    pub eq: usize,
}

/// Counts the gates of each kind.
pub fn gate_counts(c: &Circuit) -> GateCounts {
    let mut n = GateCounts::default();
    for g in &c.gates {
        match g.kind {
            GateKind::And => n.and += 1,
            GateKind::Xor => n.xor += 1,
            GateKind::Inv => n.inv += 1,
            GateKind::Eq | GateKind::Eqw => n.eq += 1,
        }
    }
    n
}

/// The AND-depth of every gate's output: the number of AND gates on the longest path from an
/// input to it (an AND gate at depth d reads only wires of depth < d).
pub fn and_depths(c: &Circuit) -> Vec<u32> {
    depths(c, |k| k == GateKind::And)
}

/// The depth of every gate's output counting only the gates for which `counts` holds (AND
/// gates for [`and_depths`]; AND and XOR gates for a garbling scheme without free XOR).
pub fn depths(c: &Circuit, counts: impl Fn(GateKind) -> bool) -> Vec<u32> {
    let mut wire_depth = vec![0u32; c.num_wires as usize];
    c.gates
        .iter()
        .map(|g| {
            let d = g
                .inputs()
                .iter()
                .map(|&k| wire_depth[g.input(k) as usize])
                .max()
                .unwrap_or(0)
                + u32::from(counts(g.kind));
            wire_depth[g.out as usize] = d;
            d
        })
        .collect()
}

/// The circuit's AND-depth (the depth of its deepest gate).
pub fn and_depth(c: &Circuit) -> u32 {
    and_depths(c).into_iter().max().unwrap_or(0)
}

/// How many AND gates lie in each AND layer 1..=depth (index 0 is layer 1): AND gates of one
/// layer are independent of each other and can be garbled in one batch.
pub fn and_gates_per_layer(c: &Circuit) -> Vec<usize> {
    let depths = and_depths(c);
    let mut layers = vec![0usize; depths.iter().copied().max().unwrap_or(0) as usize];
    for (g, d) in c.gates.iter().zip(depths) {
        if g.kind == GateKind::And {
            layers[d as usize - 1] += 1;
        }
    }
    layers
}

/// For every wire, the index of the last gate that reads it; `None` for wires no gate reads.
/// Output wires are live to the end (`Some(gates.len())`).
pub fn last_use(c: &Circuit) -> Vec<Option<usize>> {
    let mut last = vec![None; c.num_wires as usize];
    for (i, g) in c.gates.iter().enumerate() {
        for &k in g.inputs() {
            last[g.input(k) as usize] = Some(i);
        }
    }
    for w in c.output_start()..c.num_wires {
        last[w as usize] = Some(c.gates.len());
    }
    last
}

/// The largest number of wires live at once (inputs included), i.e. how many label slots an
/// evaluation with slot reuse needs.
pub fn max_live_wires(c: &Circuit) -> usize {
    let last = last_use(c);
    let mut live = (0..c.num_input_wires() as usize)
        .filter(|&w| last[w].is_some())
        .count();
    let mut peak = live;
    for (i, g) in c.gates.iter().enumerate() {
        if last[g.out as usize].is_some() {
            live += 1;
        }
        peak = peak.max(live);
        for &k in g.inputs() {
            let w = g.input(k) as usize;
            // A wire dies after its last reader; count it once even if read twice by this gate.
            if last[w] == Some(i) && (k == 0 || g.input(0) != g.input(1)) {
                live -= 1;
            }
        }
    }
    peak
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bristol::parse;

    #[test]
    fn depth_layers_and_liveness_of_a_small_circuit() {
        // w4 = w0 & w1 (depth 1); w5 = w4 ^ w2; w6 = w5 & w3 (depth 2); w7 = w0 & w3 (depth 1).
        let text =
            "4 8\n2 2 2\n2 1 1\n2 1 0 1 4 AND\n2 1 4 2 5 XOR\n2 1 5 3 6 AND\n2 1 0 3 7 AND\n";
        let (c, _) = parse(text).unwrap();
        assert_eq!(
            gate_counts(&c),
            GateCounts {
                and: 3,
                xor: 1,
                inv: 0,
                eq: 0
            }
        );
        assert_eq!(and_depths(&c), vec![1, 1, 2, 1]);
        assert_eq!(and_depth(&c), 2);
        assert_eq!(and_gates_per_layer(&c), vec![2, 1]);
        let last = last_use(&c);
        assert_eq!(
            (last[0], last[4], last[6], last[7]),
            (Some(3), Some(1), Some(4), Some(4))
        );
        assert!(max_live_wires(&c) <= 6);
    }
}
