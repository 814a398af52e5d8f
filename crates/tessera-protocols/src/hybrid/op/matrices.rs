//! Products of two shared matrices (attention's Q·Kᵀ and softmax·V): on A by Beaver's method
//! on matrix triples, one per product of the batch rather than one per scalar (Mohassel and
//! Zhang, SecureML, S&P 2017, §4.1: X·Y = C + D·B + A·E + D·E once D = X − A and E = Y − B are
//! open); on α by ABY2.0's product (§3.3) with the setup's γ = δX·δY + δZ a matrix product of
//! the masks, by the same method there.

use super::{OnlineCost, Op, Operation, Program, bad};
use crate::Error;
use crate::hybrid::algebra::wire_bytes;
use crate::hybrid::matrix::{self, MatShape};
use crate::hybrid::online::{Run, zip_map};
use crate::hybrid::prepare::{Slot, Walk};
use crate::hybrid::{Kind, Type, Value};

/// The batch of products `a·b` of `shape`, into `out`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct MatProduct {
    a: usize,
    b: usize,
    out: usize,
    shape: MatShape,
}

impl Program {
    /// The batch of matrix products `a·b` of `shape` ([`MatShape`]: `a` holds the batch's
    /// left matrices one after another, `b` the right ones) of two ring values of one sharing
    /// (A or α) and ring: a value of `batch·rows·cols` copies. On A: setup one matrix triple
    /// per product (`inner·cols` vector products of `rows` elements each way); online both
    /// operands opened, `rows·inner + inner·cols` elements per product per party, 1 round. On
    /// α: setup the masks' product by the same triples; online `rows·cols` elements per
    /// product per party, 1 round.
    pub fn matmul(&mut self, a: Value, b: Value, shape: MatShape) -> Result<Value, Error> {
        let (ta, tb) = (self.ty(a)?, self.ty(b)?);
        let bits = match (ta.kind, tb.kind) {
            (Kind::Ring(x), Kind::Ring(y)) if x == y && ta.sharing == tb.sharing => x,
            _ => return Err(bad(format!("a matrix product of {ta:?} and {tb:?}"))),
        };
        let sizes = (shape.left(), shape.right(), shape.out());
        let out = match sizes {
            (Some(l), Some(r), Some(out)) if l == ta.n && r == tb.n && out > 0 => out,
            _ => {
                return Err(bad(format!(
                    "a matrix product of {shape:?} on {} and {} copies",
                    ta.n, tb.n
                )));
            }
        };
        let t = Type {
            sharing: ta.sharing,
            kind: Kind::Ring(bits),
            n: out,
        };
        let (a, b) = (a.0, b.0);
        Ok(self.push(t, |out| Op::MatProduct(MatProduct { a, b, out, shape })))
    }
}

impl Operation for MatProduct {
    fn name(&self) -> &'static str {
        "matmul"
    }

    fn uses(&self) -> Vec<usize> {
        vec![self.a, self.b, self.out]
    }

    fn traffic(&self, p: &Program) -> OnlineCost {
        let (ta, tb, t) = (p.types[self.a], p.types[self.b], p.types[self.out]);
        // ABY2.0: this party's share of Δz; Beaver: D and E.
        OnlineCost::swap(if t.sharing.is_masked() {
            wire_bytes(t.field())
        } else {
            wire_bytes(ta.field()) + wire_bytes(tb.field())
        })
    }

    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        let t = walk.ty(self.out);
        let bits = t.ring_bits();
        if !t.sharing.is_masked() {
            let shape = self.shape;
            return vec![Slot::MatrixTriples { bits, shape }];
        }
        let dz = walk.fresh(self.out);
        walk.masks[self.out] = dz.clone();
        let (da, db) = (walk.masks[self.a].clone(), walk.masks[self.b].clone());
        vec![Slot::Vector(
            walk.matrix_gamma((bits, self.shape), [da, db, dz]),
        )]
    }

    fn online(&self, run: &mut Run<'_, '_>, m: Vec<Vec<u64>>) -> Result<(), Error> {
        let (t, first, shape) = (run.ty(self.out), run.first(), self.shape);
        let (ta, tb) = (run.ty(self.a).field(), run.ty(self.b).field());
        let (x, y) = (&run.data[self.a], &run.data[self.b]);
        run.data[self.out] = if t.sharing.is_masked() {
            // This party's share of ΔZ = ΔX·ΔY − ΔX·δY − δX·ΔY + γ, opened; as
            // ΔX·(ΔY − δY) − δX·ΔY + γ at the first party, ΔX·(−δY) − δX·ΔY + γ at the other.
            let (dx, dy) = (&run.masks[self.a], &run.masks[self.b]);
            let right = zip_map(y, dy, |y, d| if first { y } else { 0 }.wrapping_sub(d));
            let (xy, dxy) = (
                matrix::product(x, &right, shape),
                matrix::product(dx, y, shape),
            );
            let mut z: Vec<u64> = (xy.iter().zip(&dxy).zip(&m[0]))
                .map(|((u, v), g)| u.wrapping_sub(*v).wrapping_add(*g))
                .collect();
            run.link.swap(&mut [(&mut z, t.field())])?;
            z
        } else {
            // Beaver: open D = X − A and E = Y − B.
            let triple: [Vec<u64>; 3] = m.try_into().map_err(|_| missing())?;
            let minus = |u: u64, v: u64| u.wrapping_sub(v);
            let (mut d, mut e) = (zip_map(x, &triple[0], minus), zip_map(y, &triple[1], minus));
            run.link.swap(&mut [(&mut d, ta), (&mut e, tb)])?;
            matrix::beaver(first, (&d, &e), &triple, shape)
        };
        Ok(())
    }
}

/// A setup that gave a matrix product other than its triple: the program's own fault.
fn missing() -> Error {
    Error::Input("a matrix product's setup lacks its triple".into())
}
