//! Helpers shared by the garbling tests.

use proptest::prelude::*;
use tessera_circuit::{Circuit, Gate, GateKind};

/// Random valid circuits of one or two input values and up to `max_gates` gates (with a seed
/// for the inputs): each gate reads any earlier wire, or with `window` one of the `window`
/// latest (so components form and meet).
pub fn random_circuit(
    max_gates: usize,
    window: Option<u32>,
) -> impl Strategy<Value = (Circuit, u64)> {
    (1u32..12, 0u32..12, 1usize..max_gates, any::<u64>()).prop_flat_map(move |(w0, w1, g, seed)| {
        let num_in = w0 + w1;
        // At least one gate per two input wires (the circuit shape rule).
        let g = g.max(num_in.div_ceil(2) as usize);
        proptest::collection::vec((0u8..10, any::<u32>(), any::<u32>()), g).prop_flat_map(
            move |spec| {
                let gates: Vec<Gate> = spec
                    .iter()
                    .enumerate()
                    .map(|(i, &(k, x, y))| {
                        let out = num_in + i as u32;
                        let kind = match k {
                            0..=3 => GateKind::And,
                            4..=6 => GateKind::Xor,
                            7 => GateKind::Inv,
                            8 => GateKind::Eqw,
                            _ => GateKind::Eq,
                        };
                        let read = |v: u32| match window {
                            Some(w) => out - 1 - v % out.min(w),
                            None => v % out,
                        };
                        let a = if kind == GateKind::Eq { x & 1 } else { read(x) };
                        let b = if matches!(kind, GateKind::And | GateKind::Xor) {
                            read(y)
                        } else {
                            0
                        };
                        Gate { kind, a, b, out }
                    })
                    .collect();
                let n = gates.len() as u32;
                (1u32..=n.min(16)).prop_map(move |outs| {
                    let c = Circuit {
                        num_wires: num_in + n,
                        inputs: if w1 == 0 { vec![w0] } else { vec![w0, w1] },
                        outputs: vec![outs],
                        gates: gates.clone(),
                    };
                    (c, seed)
                })
            },
        )
    })
}
