//! k copies of a circuit side by side (VASA §4.1.2, SIMD gates): one circuit applied to k
//! independent inputs, with copy i of gate g placed right after copy i − 1, so every gate's k
//! copies are adjacent and independent and a batching garbler sees them as one wide gate.

use crate::{Circuit, Error, Gate, GateKind, Wire};

/// The circuit computing `c` on `k` independent inputs. Input value v of the result is `k`
/// times as wide as in `c`: copy i holds bits `i·w .. (i+1)·w` (w the width in `c`); outputs
/// alike.
pub fn simd(c: &Circuit, k: usize) -> Result<Circuit, Error> {
    c.check()?;
    let (num_in, num_out) = (c.num_input_wires() as u64, c.num_output_wires() as u64);
    let n = u64::from(c.num_wires);
    if k == 0 {
        return Err(Error::Invalid("SIMD needs at least one copy".into()));
    }
    if num_in + num_out > n {
        return Err(Error::Invalid(
            "SIMD needs input and output wires to be distinct".into(),
        ));
    }
    let kk = k as u64;
    let total = n
        .checked_mul(kk)
        .filter(|&t| t < u64::from(Wire::MAX))
        .ok_or_else(|| Error::Invalid(format!("{k} copies of {n} wires is too many")))?;
    let out_start = n - num_out;
    // (start in the original, width) of each value, inputs then outputs.
    let spans = |widths: &[u32], base: u64| {
        let mut at = base;
        widths
            .iter()
            .map(|&w| {
                let s = (at, u64::from(w));
                at += u64::from(w);
                s
            })
            .collect::<Vec<_>>()
    };
    let (in_spans, out_spans) = (spans(&c.inputs, 0), spans(&c.outputs, out_start));
    // Where wire w of copy i goes.
    let place = |w: u64, i: u64| -> Wire {
        let in_value = |spans: &[(u64, u64)], new_base: u64| {
            spans
                .iter()
                .find(|(s, width)| w >= *s && w < s + width)
                .map(|&(s, width)| (new_base + (s - spans[0].0) * kk + i * width + (w - s)) as Wire)
        };
        if w < num_in {
            in_value(&in_spans, 0).unwrap_or(0)
        } else if w >= out_start {
            in_value(&out_spans, total - num_out * kk).unwrap_or(0)
        } else {
            (num_in * kk + (w - num_in) * kk + i) as Wire
        }
    };
    let mut gates = Vec::with_capacity(c.gates.len() * k);
    for g in &c.gates {
        for i in 0..kk {
            let map = |w: Wire| place(u64::from(w), i);
            gates.push(Gate {
                kind: g.kind,
                a: if g.kind == GateKind::Eq {
                    g.a
                } else {
                    map(g.a)
                },
                b: if matches!(g.kind, GateKind::Xor | GateKind::And) {
                    map(g.b)
                } else {
                    0
                },
                out: map(g.out),
            });
        }
    }
    let widen = |v: &[u32]| v.iter().map(|&w| w * k as u32).collect();
    let out = Circuit {
        num_wires: total as Wire,
        inputs: widen(&c.inputs),
        outputs: widen(&c.outputs),
        gates,
    };
    out.check()?;
    Ok(out)
}
