//! Mixed products (ABY2.0 §4, MOTION2NX App. A.2): bit × number (B·A → A with a daBit, β·α → α
//! with the lifted mask) and bit × bit → number (β·β → α).

use super::{OnlineCost, Op, Operation, Program, bad};
use crate::Error;
use crate::hybrid::algebra::{Field, wire_bytes};
use crate::hybrid::online::{Run, bit_of, zip_map};
use crate::hybrid::prepare::{Slot, Walk, random};
use crate::hybrid::{Kind, Sharing, Type, Value, ring};

/// bit × number: a one-wire B (β) `bit` times an A (α) value `x`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct BitMul {
    bit: usize,
    x: usize,
    out: usize,
}

/// bit × bit of two one-wire β values, as an α element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct BitProduct {
    a: usize,
    b: usize,
    out: usize,
}

impl Program {
    /// bit × number: B·A → A (setup: a daBit r and a random a with r·a; online the bit ⊕ r and
    /// x − a, 1 round) or β·α → α (setup: the arithmetic sharing of the bit's mask and its
    /// product with x's mask; online 1 element per party, 1 round). `bit` is one wire.
    pub fn bit_mul(&mut self, bit: Value, x: Value) -> Result<Value, Error> {
        let (tb, tx) = (self.ty(bit)?, self.ty(x)?);
        let pair = matches!(
            (tb.sharing, tx.sharing),
            (Sharing::B, Sharing::A) | (Sharing::Beta, Sharing::Alpha)
        );
        if !pair || tb.kind != Kind::Bits(1) || tb.n != tx.n {
            return Err(bad(format!(
                "bit × number takes a one-wire B (β) bit and an A (α) number of as many copies, got {tb:?} and {tx:?}"
            )));
        }
        let (bit, x) = (bit.0, x.0);
        Ok(self.push(tx, |out| Op::BitMul(BitMul { bit, x, out })))
    }

    /// bit × bit as an element of Z_2^`bits`: β·β → α (setup: both masks' arithmetic sharings
    /// and their product; online 1 element per party, 1 round).
    pub fn bit_product(&mut self, a: Value, b: Value, bits: u32) -> Result<Value, Error> {
        let t = self.same(a, b, true)?;
        if t.sharing != Sharing::Beta || t.kind != Kind::Bits(1) || !ring::RING_BITS.contains(&bits)
        {
            return Err(bad(format!(
                "bit × bit takes two one-wire β bits and ℓ in 8, 16, 32, 64, got {t:?} and ℓ = {bits}"
            )));
        }
        let t = Type {
            sharing: Sharing::Alpha,
            kind: Kind::Ring(bits),
            n: t.n,
        };
        let (a, b) = (a.0, b.0);
        Ok(self.push(t, |out| Op::BitProduct(BitProduct { a, b, out })))
    }
}

impl Operation for BitMul {
    fn uses(&self) -> Vec<usize> {
        vec![self.bit, self.x, self.out]
    }

    fn name(&self) -> &'static str {
        "bit × number"
    }

    fn traffic(&self, p: &Program) -> OnlineCost {
        let t = p.types[self.x];
        let number = wire_bytes(t.field());
        // B·A: c = b ⊕ r and d = x − a; β·α: this party's share of Δz.
        OnlineCost::swap(if t.sharing == Sharing::A {
            wire_bytes(p.types[self.bit].field()) + number
        } else {
            number
        })
    }

    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        let t = walk.ty(self.x);
        let ring = t.ring_bits();
        if t.sharing == Sharing::A {
            // A daBit r (B share, A share), a random a and r·a.
            let r = random(&mut walk.prg, Field::Bits { width: 1, n: t.n });
            let a = walk.fresh(self.x);
            let ra = walk.lift(&r, 1, t.n, ring);
            let product = walk.bit_times(&r, &a, ring);
            let r = walk.algebra.known(Field::Bits { width: 1, n: t.n }, r);
            let a = walk.algebra.known(t.field(), a);
            return [r, ra, a, product].into_iter().map(Slot::Vector).collect();
        }
        let mb = walk.masks[self.bit].clone();
        let lifted = walk.lift(&mb, 1, t.n, ring);
        let dx = walk.masks[self.x].clone();
        let product = walk.bit_times(&mb, &dx, ring);
        let dz = walk.fresh(self.out);
        walk.masks[self.out] = dz.clone();
        let dz = walk.algebra.known(t.field(), dz);
        [lifted, product, dz]
            .into_iter()
            .map(Slot::Vector)
            .collect()
    }

    fn online(&self, run: &mut Run<'_, '_>, m: Vec<Vec<u64>>) -> Result<(), Error> {
        let t = run.ty(self.x);
        let first = run.first();
        let (b, xv) = (&run.data[self.bit], &run.data[self.x]);
        run.data[self.out] = if t.sharing == Sharing::A {
            // Open c = b ⊕ r and d = x − a; z = c·x + (1 − 2c)·(d·r + r·a).
            let (rb, ra, av, rav) = (&m[0], &m[1], &m[2], &m[3]);
            let mut c = zip_map(b, rb, |u, v| u ^ v);
            let mut d = zip_map(xv, av, u64::wrapping_sub);
            let bf = run.ty(self.bit).field();
            run.link.swap(&mut [(&mut c, bf), (&mut d, t.field())])?;
            (0..t.n)
                .map(|k| {
                    let c = bit_of(&c, k);
                    let rx = d[k].wrapping_mul(ra[k]).wrapping_add(rav[k]);
                    c.wrapping_mul(xv[k])
                        .wrapping_add(1u64.wrapping_sub(2 * c).wrapping_mul(rx))
                })
                .collect()
        } else {
            // [z] = Δb·Δx − Δb·[δx] + (1 − 2Δb)(Δx·[δb] − [δb·δx]), plus [δz].
            let (lifted, product, dz) = (&m[0], &m[1], &m[2]);
            let dx = &run.masks[self.x];
            let mut z: Vec<u64> =
                (0..t.n)
                    .map(|k| {
                        let db = bit_of(b, k);
                        let both = if first { db.wrapping_mul(xv[k]) } else { 0 };
                        both.wrapping_sub(db.wrapping_mul(dx[k]))
                            .wrapping_add(1u64.wrapping_sub(2 * db).wrapping_mul(
                                xv[k].wrapping_mul(lifted[k]).wrapping_sub(product[k]),
                            ))
                            .wrapping_add(dz[k])
                    })
                    .collect();
            run.link.swap(&mut [(&mut z, t.field())])?;
            z
        };
        Ok(())
    }
}

impl Operation for BitProduct {
    fn uses(&self) -> Vec<usize> {
        vec![self.a, self.b, self.out]
    }

    fn name(&self) -> &'static str {
        "bit × bit"
    }

    fn traffic(&self, p: &Program) -> OnlineCost {
        OnlineCost::swap(wire_bytes(p.types[self.out].field()))
    }

    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        let t = walk.ty(self.out);
        let (ma, mb) = (walk.masks[self.a].clone(), walk.masks[self.b].clone());
        let la = walk.lift(&ma, 1, t.n, t.ring_bits());
        let lb = walk.lift(&mb, 1, t.n, t.ring_bits());
        let product = walk.algebra.product(la, lb);
        let dz = walk.fresh(self.out);
        walk.masks[self.out] = dz.clone();
        let dz = walk.algebra.known(t.field(), dz);
        [la, lb, product, dz]
            .into_iter()
            .map(Slot::Vector)
            .collect()
    }

    fn online(&self, run: &mut Run<'_, '_>, m: Vec<Vec<u64>>) -> Result<(), Error> {
        // b_i = Δi + (1 − 2Δi)·δi: the product expanded, plus [δz].
        let t = run.ty(self.out);
        let first = run.first();
        let (la, lb, product, dz) = (&m[0], &m[1], &m[2], &m[3]);
        let (a, b) = (&run.data[self.a], &run.data[self.b]);
        let mut z: Vec<u64> = (0..t.n)
            .map(|k| {
                let (d1, d2) = (bit_of(a, k), bit_of(b, k));
                let (s1, s2) = (1u64.wrapping_sub(2 * d1), 1u64.wrapping_sub(2 * d2));
                let both = if first { d1 * d2 } else { 0 };
                both.wrapping_add(d1.wrapping_mul(s2).wrapping_mul(lb[k]))
                    .wrapping_add(d2.wrapping_mul(s1).wrapping_mul(la[k]))
                    .wrapping_add(s1.wrapping_mul(s2).wrapping_mul(product[k]))
                    .wrapping_add(dz[k])
            })
            .collect();
        run.link.swap(&mut [(&mut z, t.field())])?;
        run.data[self.out] = z;
        Ok(())
    }
}
