//! Boolean gates on Y, B and β: XOR (local, [`super::arithmetic::Combine`]), AND (a
//! [`super::products::Product`] on B and β, a garbled gate on Y), NOT, wire selection and
//! MUX.

use super::arithmetic::How;
use super::products::Product;
use super::{Op, Operation, Program, bad};
use crate::Error;
use crate::hybrid::online::{Garbling, Run, clear_tails, wire_words};
use crate::hybrid::prepare::{Slot, Walk};
use crate::hybrid::{Kind, Sharing, Type, Value, select_wires};
use tessera_circuit::{Circuit, Gate, GateKind};

/// ¬a.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Not {
    a: usize,
    out: usize,
}

/// Wires `start..start + len` of a Boolean value; `repeat`: wire `start` `len` times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Wires {
    a: usize,
    start: usize,
    len: usize,
    repeat: bool,
    out: usize,
}

impl Program {
    /// a ⊕ b on Y, B or β: local.
    pub fn xor(&mut self, a: Value, b: Value) -> Result<Value, Error> {
        self.combine((a, b), true, How::Xor)
    }

    /// a ∧ b on B (one triple per bit; online 2 bits per party, 1 round), β (setup: δa·δb
    /// by Beaver; online 1 bit per party, 1 round) or Y (a garbled circuit of one AND gate
    /// per wire).
    pub fn and(&mut self, a: Value, b: Value) -> Result<Value, Error> {
        let t = self.same(a, b, true)?;
        if t.sharing == Sharing::Y {
            let w = t.width() as u32;
            let c = Circuit {
                num_wires: 3 * w,
                inputs: vec![w, w],
                outputs: vec![w],
                gates: (0..w)
                    .map(|i| Gate {
                        kind: GateKind::And,
                        a: i,
                        b: w + i,
                        out: 2 * w + i,
                    })
                    .collect(),
            };
            return Ok(self.circuit(&c, &[a, b])?[0]);
        }
        Ok(Product::add(self, t, (a, b)))
    }

    /// ¬a on Y, B or β: local.
    pub fn not(&mut self, a: Value) -> Result<Value, Error> {
        let t = self.same(a, a, true)?;
        let a = a.0;
        Ok(self.push(t, |out| Op::Not(Not { a, out })))
    }

    /// Wires `start..start + len` of a Boolean value: local.
    pub fn wires(&mut self, a: Value, start: usize, len: usize) -> Result<Value, Error> {
        self.wire_op(a, start, len, false)
    }

    /// Wire `at` of a Boolean value, `times` times: local.
    pub fn repeat(&mut self, a: Value, at: usize, times: usize) -> Result<Value, Error> {
        self.wire_op(a, at, times, true)
    }

    fn wire_op(
        &mut self,
        a: Value,
        start: usize,
        len: usize,
        repeat: bool,
    ) -> Result<Value, Error> {
        let t = self.same(a, a, true)?;
        let end = if repeat { start + 1 } else { start + len };
        if len == 0 || end > t.width() || len > u32::MAX as usize {
            return Err(bad(format!(
                "wires {start}..{end} of a {}-wire value",
                t.width()
            )));
        }
        let t = Type {
            kind: Kind::Bits(len as u32),
            ..t
        };
        let a = a.0;
        Ok(self.push(t, |out| {
            Op::Wires(Wires {
                a,
                start,
                len,
                repeat,
                out,
            })
        }))
    }

    /// s ? a : b, as b ⊕ s·(a ⊕ b), with `s` one wire (repeated over the width): one AND.
    pub fn mux(&mut self, s: Value, a: Value, b: Value) -> Result<Value, Error> {
        let width = self.same(a, b, true)?.width();
        let s = self.repeat(s, 0, width)?;
        let d = self.xor(a, b)?;
        let m = self.and(s, d)?;
        self.xor(b, m)
    }
}

impl Operation for Not {
    fn uses(&self) -> Vec<usize> {
        vec![self.a, self.out]
    }

    fn name(&self) -> &'static str {
        "not"
    }

    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        let t = walk.ty(self.a);
        let m = &walk.masks[self.a];
        // Y: the garbler's zero-labels become the one-labels; β keeps its mask.
        walk.masks[self.out] = if t.sharing == Sharing::Y {
            Garbling::new(walk.delta, t.n).flip_all(m)
        } else {
            m.clone()
        };
        Vec::new()
    }

    fn online(&self, run: &mut Run<'_, '_>, _: Vec<Vec<u64>>) -> Result<(), Error> {
        let t = run.ty(self.a);
        let mut v = run.data[self.a].clone();
        if t.sharing == Sharing::Y {
            // The garbler's zero-labels become the one-labels.
            if run.first() {
                v = Garbling::new(run.delta, t.n).flip_all(&v);
            }
        } else if run.first() || t.sharing == Sharing::Beta {
            // B: party 0 flips its share; β: both flip the public Δ.
            v.iter_mut().for_each(|x| *x = !*x);
            clear_tails(&mut v, t.n);
        }
        run.data[self.out] = v;
        Ok(())
    }
}

impl Operation for Wires {
    fn uses(&self) -> Vec<usize> {
        vec![self.a, self.out]
    }

    fn name(&self) -> &'static str {
        "wires"
    }

    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        // β's masks, or the garbler's Y labels.
        if !walk.masks[self.a].is_empty() {
            let w = wire_words(walk.ty(self.a));
            walk.masks[self.out] =
                select_wires(&walk.masks[self.a], w, self.start, self.len, self.repeat);
        }
        Vec::new()
    }

    fn online(&self, run: &mut Run<'_, '_>, _: Vec<Vec<u64>>) -> Result<(), Error> {
        let w = wire_words(run.ty(self.a));
        run.data[self.out] = select_wires(&run.data[self.a], w, self.start, self.len, self.repeat);
        Ok(())
    }
}
