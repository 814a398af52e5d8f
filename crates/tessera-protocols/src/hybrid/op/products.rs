//! AND on B and β, multiplication on A and α: Beaver's triples for B and A (GMW), ABY2.0's
//! one-message products for β and α (ABY2.0 §3.3: the setup forms γ = δa·δb + δz).

use super::{OnlineCost, Op, Operation, Program};
use crate::Error;
use crate::hybrid::algebra;
use crate::hybrid::online::{Run, zip_map};
use crate::hybrid::prepare::{Slot, Walk};
use crate::hybrid::{Type, Value};

/// a ∧ b (Boolean) or a·b (ring) of two values of one type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Product {
    a: usize,
    b: usize,
    out: usize,
    /// AND, or a ring product.
    boolean: bool,
}

impl Product {
    /// Adds the product of `a` and `b`, both of type `t`, to `p`.
    pub(super) fn add(p: &mut Program, t: Type, (a, b): (Value, Value)) -> Value {
        let (a, b, boolean) = (a.0, b.0, t.sharing.is_boolean());
        p.push(t, |out| Op::Product(Product { a, b, out, boolean }))
    }
}

impl Program {
    /// a·b on A (one triple per element; online 2 elements per party, 1 round) or α (setup:
    /// δa·δb by Beaver; online 1 element per party, 1 round).
    pub fn mul(&mut self, a: Value, b: Value) -> Result<Value, Error> {
        let t = self.same(a, b, false)?;
        Ok(Product::add(self, t, (a, b)))
    }
}

/// x·y in Z_2^64 or x ∧ y on words of bits.
fn times(boolean: bool, x: u64, y: u64) -> u64 {
    if boolean { x & y } else { x.wrapping_mul(y) }
}

/// x + y or x ⊕ y.
fn plus(boolean: bool, x: u64, y: u64) -> u64 {
    if boolean { x ^ y } else { x.wrapping_add(y) }
}

/// x − y or x ⊕ y.
fn minus(boolean: bool, x: u64, y: u64) -> u64 {
    if boolean { x ^ y } else { x.wrapping_sub(y) }
}

impl Operation for Product {
    fn uses(&self) -> Vec<usize> {
        vec![self.a, self.b, self.out]
    }

    fn name(&self) -> &'static str {
        if self.boolean { "and" } else { "mul" }
    }

    fn traffic(&self, p: &Program) -> OnlineCost {
        let t = p.types[self.out];
        let vector = algebra::wire_bytes(t.field());
        // ABY2.0: this party's share of Δz; Beaver: d and e.
        OnlineCost::swap(if t.sharing.is_masked() {
            vector
        } else {
            2 * vector
        })
    }

    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        let t = walk.ty(self.out);
        let field = t.field();
        if !t.sharing.is_masked() {
            return vec![Slot::Triple(field)];
        }
        let dz = walk.fresh(self.out);
        walk.masks[self.out] = dz.clone();
        let (da, db) = (walk.masks[self.a].clone(), walk.masks[self.b].clone());
        vec![Slot::Vector(walk.gamma(field, da, db, dz))]
    }

    fn online(&self, run: &mut Run<'_, '_>, m: Vec<Vec<u64>>) -> Result<(), Error> {
        let t = run.ty(self.out);
        let (f, first) = (t.field(), run.first());
        let boolean = self.boolean;
        let (x, y) = (&run.data[self.a], &run.data[self.b]);
        run.data[self.out] = if t.sharing.is_masked() {
            // This party's share of Δz = Δa·Δb − Δa·δb − Δb·δa + γ, opened.
            let (da, db, gamma) = (&run.masks[self.a], &run.masks[self.b], &m[0]);
            let mut z: Vec<u64> = (0..x.len())
                .map(|i| {
                    let xy = if first { times(boolean, x[i], y[i]) } else { 0 };
                    let cross = plus(
                        boolean,
                        times(boolean, x[i], db[i]),
                        times(boolean, y[i], da[i]),
                    );
                    plus(boolean, minus(boolean, xy, cross), gamma[i])
                })
                .collect();
            run.link.swap(&mut [(&mut z, f)])?;
            z
        } else {
            // Beaver: open d = x − a, e = y − b; z = c + d·b + e·a + d·e.
            let triple: [Vec<u64>; 3] = m.try_into().map_err(|_| missing())?;
            let mut d = zip_map(x, &triple[0], |u, v| minus(boolean, u, v));
            let mut e = zip_map(y, &triple[1], |u, v| minus(boolean, u, v));
            run.link.swap(&mut [(&mut d, f), (&mut e, f)])?;
            algebra::elementwise_beaver(f, first, (&d, &e), &triple)
        };
        Ok(())
    }
}

/// A setup that gave a product other than its triple: the program's own fault.
fn missing() -> Error {
    Error::Input("a product's setup lacks its triple".into())
}
