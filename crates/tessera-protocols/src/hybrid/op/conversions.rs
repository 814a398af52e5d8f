//! Conversions among the five sharings (MOTION2NX §2 and App. A.2): the direct hops and, for
//! A → B, the shares split into two B values for the library's adders.

use super::{OnlineCost, Op, Operation, Program, bad};
use crate::Error;
use crate::boolean::bits::words;
use crate::hybrid::algebra::{Field, wire_bytes};
use crate::hybrid::online::{Garbling, Run, bit_of, zip_map};
use crate::hybrid::prepare::{Slot, Walk, random};
use crate::hybrid::{Kind, Sharing, Type, Value, ring};

/// A primitive step between two sharings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(in crate::hybrid) enum Hop {
    /// B → β: open x ⊕ δ with a fresh mask. 1 round.
    BToBeta,
    /// β → B: local.
    BetaToB,
    /// A → α: open x + δ. 1 round.
    AToAlpha,
    /// α → A: local.
    AlphaToA,
    /// B → A with daBits: open x ⊕ r per bit. 1 round.
    BToA,
    /// β → A with the arithmetic sharing of each mask bit from the setup: local.
    BetaToA,
    /// Y → B: the labels' permutation bits (least significant bits) are XOR shares: local.
    YToB,
    /// B → Y: random correlated OTs of the setup, derandomised by the evaluator's share ⊕ its
    /// choice bit, the garbler folding its own share into the zero-label. 1 message, 1 bit per
    /// bit.
    BToY,
}

/// One hop of a conversion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Convert {
    hop: Hop,
    a: usize,
    out: usize,
}

/// A's shares as two B values, each held by one party (the other's share zero).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Split {
    a: usize,
    out: [usize; 2],
}

/// The route of a conversion: the sharings it passes through after the first. Direct hops:
/// Y ↔ B, B ↔ β, A ↔ α, B → A, β → A and A → B; the others go through B and A.
///
/// | hop | setup | online |
/// |---|---|---|
/// | Y → B, β → B, α → A | none | local |
/// | β → A | the arithmetic sharing of each mask bit (one Beaver product per bit) | local |
/// | B → β, A → α | a fresh mask | 1 round, 1 bit (element) per party |
/// | B → A | a daBit per bit (one Beaver product) | 1 round, 1 bit per bit and party |
/// | B → Y | a random correlated OT per bit | 1 message: the evaluator's bit ⊕ its OT choice |
/// | A → B | the triples of an ℓ-bit parallel-prefix adder | its AND-depth, log₂ ℓ + 1 rounds |
pub fn route(from: Sharing, to: Sharing) -> &'static [Sharing] {
    use Sharing::*;
    match (from, to) {
        (Y, B) | (Beta, B) | (A, B) => &[B],
        (B, Y) => &[Y],
        (B, Beta) => &[Beta],
        (A, Alpha) => &[Alpha],
        (Alpha, A) | (B, A) | (Beta, A) => &[A],
        (Y, Beta) | (A, Beta) => &[B, Beta],
        (Y, A) => &[B, A],
        (Y, Alpha) => &[B, A, Alpha],
        (Beta, Y) | (A, Y) => &[B, Y],
        (B, Alpha) | (Beta, Alpha) => &[A, Alpha],
        (Alpha, B) => &[A, B],
        (Alpha, Beta) => &[A, B, Beta],
        (Alpha, Y) => &[A, B, Y],
        _ => &[],
    }
}

impl Program {
    /// `a` in sharing `to`, along [`route`]. Boolean values of `w` wires become elements of
    /// Z_2^w (w ∈ {8, 16, 32, 64}; [`Program::convert_to_ring`] picks ℓ), ring elements
    /// become their ℓ bits (least significant first).
    pub fn convert(&mut self, a: Value, to: Sharing) -> Result<Value, Error> {
        let t = self.ty(a)?;
        self.convert_to_ring(a, to, t.ring_bits())
    }

    /// [`Program::convert`], a Boolean value of w ≤ `bits` wires becoming Σ 2^j·x_j in
    /// Z_2^`bits` (a single bit: 0 or 1).
    pub fn convert_to_ring(&mut self, a: Value, to: Sharing, bits: u32) -> Result<Value, Error> {
        let t = self.ty(a)?;
        if t.sharing.is_boolean() && !to.is_boolean() {
            let w = t.width() as u32;
            if !ring::RING_BITS.contains(&bits) || w > bits {
                return Err(bad(format!(
                    "a {w}-wire value into Z_2^{bits}: ℓ must be 8, 16, 32 or 64 and at least the width"
                )));
            }
        }
        let mut at = a;
        for &next in route(t.sharing, to) {
            at = self.hop(at, next, bits)?;
        }
        Ok(at)
    }

    fn hop(&mut self, a: Value, to: Sharing, bits: u32) -> Result<Value, Error> {
        use Sharing::*;
        let t = self.ty(a)?;
        let hop = match (t.sharing, to) {
            (B, Beta) => Hop::BToBeta,
            (Beta, B) => Hop::BetaToB,
            (A, Alpha) => Hop::AToAlpha,
            (Alpha, A) => Hop::AlphaToA,
            (B, A) => Hop::BToA,
            (Beta, A) => Hop::BetaToA,
            (Y, B) => Hop::YToB,
            (B, Y) => Hop::BToY,
            (A, B) => return self.split_into("addpp", a, Sharing::B),
            _ => return Err(bad(format!("no hop {} → {}", t.sharing.name(), to.name()))),
        };
        let kind = match hop {
            Hop::BToA | Hop::BetaToA => Kind::Ring(bits),
            _ => t.kind,
        };
        let t = Type {
            sharing: to,
            kind,
            n: t.n,
        };
        let a = a.0;
        Ok(self.push(t, |out| Op::Convert(Convert { hop, a, out })))
    }

    /// The most significant bit of an A value (its sign in two's complement) as a one-wire
    /// value of the Boolean sharing `to` (B, β or Y): the two shares as B values (converted to
    /// `to`: β 1 round, Y a random correlated OT per bit) into the library's `msbadd` circuit,
    /// which forms only the carry into the top bit (181 AND gates at ℓ = 64 where the whole
    /// A → B adder takes 373, at the same AND-depth 1 + ⌈log₂(ℓ − 1)⌉).
    pub fn sign(&mut self, a: Value, to: Sharing) -> Result<Value, Error> {
        let t = self.ty(a)?;
        if t.sharing != Sharing::A || !to.is_boolean() {
            return Err(bad(format!(
                "the sign of a value in {} into {}: an A value into B, β or Y",
                t.sharing.name(),
                to.name()
            )));
        }
        self.split_into("msbadd", a, to)
    }

    /// The circuit `name<ℓ>` of the library on the two shares of an A value, each a B value
    /// converted to `sharing`.
    fn split_into(&mut self, name: &str, a: Value, sharing: Sharing) -> Result<Value, Error> {
        let t = self.ty(a)?;
        let bits = t.ring_bits();
        let half = Type {
            sharing: Sharing::B,
            kind: Kind::Bits(bits),
            n: t.n,
        };
        let out = [self.value(half), self.value(half)];
        self.ops.push(Op::Split(Split { a: a.0, out }));
        let mut halves = [Value(out[0]), Value(out[1])];
        if sharing != Sharing::B {
            for h in &mut halves {
                *h = self.convert(*h, sharing)?;
            }
        }
        let circuit = tessera_circuit::library::builtin(&format!("{name}{bits}"))
            .ok_or_else(|| bad(format!("no circuit {name}{bits}")))??;
        let sum = self.circuit(&circuit, &halves)?;
        Ok(sum[0])
    }
}

impl Operation for Convert {
    fn uses(&self) -> Vec<usize> {
        vec![self.a, self.out]
    }

    fn name(&self) -> &'static str {
        match self.hop {
            Hop::BToBeta => "b → beta",
            Hop::BetaToB => "beta → b",
            Hop::AToAlpha => "a → alpha",
            Hop::AlphaToA => "alpha → a",
            Hop::BToA => "b → a",
            Hop::BetaToA => "beta → a",
            Hop::YToB => "y → b",
            Hop::BToY => "b → y",
        }
    }

    fn traffic(&self, p: &Program) -> OnlineCost {
        let (ta, to) = (p.types[self.a], p.types[self.out]);
        match self.hop {
            Hop::BToBeta | Hop::AToAlpha => OnlineCost::swap(wire_bytes(to.field())),
            Hop::BToA => OnlineCost::swap(wire_bytes(ta.field())),
            Hop::BToY => OnlineCost::share_y(to),
            Hop::BetaToB | Hop::AlphaToA | Hop::YToB | Hop::BetaToA => OnlineCost::default(),
        }
    }

    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        let (ta, to) = (walk.ty(self.a), walk.ty(self.out));
        let (width, n) = (ta.width(), ta.n);
        match self.hop {
            Hop::BToBeta | Hop::AToAlpha => {
                walk.masks[self.out] = walk.fresh(self.out);
                Vec::new()
            }
            Hop::BetaToB | Hop::AlphaToA | Hop::YToB => Vec::new(),
            Hop::BToY => walk.y_labels(self.out),
            Hop::BToA => {
                let field = Field::Bits { width, n };
                let r = random(&mut walk.prg, field);
                let ra = walk.lift(&r, width, n, to.ring_bits());
                let r = walk.algebra.known(field, r);
                vec![Slot::Vector(r), Slot::Vector(ra)]
            }
            Hop::BetaToA => {
                let m = walk.masks[self.a].clone();
                vec![Slot::Vector(walk.lift(&m, width, n, to.ring_bits()))]
            }
        }
    }

    fn online(&self, run: &mut Run<'_, '_>, m: Vec<Vec<u64>>) -> Result<(), Error> {
        let (ta, to) = (run.ty(self.a), run.ty(self.out));
        let first = run.first();
        let x = &run.data[self.a];
        run.data[self.out] = match self.hop {
            Hop::BToBeta => {
                let mut d = zip_map(x, &run.masks[self.out], |x, d| x ^ d);
                run.link.swap(&mut [(&mut d, to.field())])?;
                d
            }
            Hop::AToAlpha => {
                let mut d = zip_map(x, &run.masks[self.out], u64::wrapping_add);
                run.link.swap(&mut [(&mut d, to.field())])?;
                d
            }
            // Party 0: Δ ⊕ δ₀ (Δ − δ₀); party 1: δ₁ (−δ₁).
            Hop::BetaToB if first => zip_map(x, &run.masks[self.a], |x, d| x ^ d),
            Hop::BetaToB => run.masks[self.a].clone(),
            Hop::AlphaToA if first => zip_map(x, &run.masks[self.a], u64::wrapping_sub),
            Hop::AlphaToA => run.masks[self.a].iter().map(|d| d.wrapping_neg()).collect(),
            Hop::YToB => Garbling::new(run.delta, ta.n).colours(x, ta.width()),
            Hop::BToY => {
                let x = x.clone();
                run.share_y(self.out, &m[0], &x)?
            }
            Hop::BToA => {
                let mut c = zip_map(x, &m[0], |u, v| u ^ v);
                run.link.swap(&mut [(&mut c, ta.field())])?;
                compose(first, ta, &c, &m[1])
            }
            Hop::BetaToA => compose(first, ta, x, &m[0]),
        };
        Ok(())
    }
}

/// Per bit, [x] = c + (1 − 2c)·[r] with c public (B: x ⊕ r opened against a daBit; β: Δ
/// against the lifted mask) and `lifted` this party's arithmetic share of r; then Σ 2^j x_j.
fn compose(first: bool, ta: Type, c: &[u64], lifted: &[u64]) -> Vec<u64> {
    let (n, w) = (ta.n, words(ta.n));
    (0..n)
        .map(|k| {
            (0..ta.width()).fold(0u64, |acc, j| {
                let cj = bit_of(&c[j * w..(j + 1) * w], k);
                let bit = (if first { cj } else { 0 })
                    .wrapping_add(1u64.wrapping_sub(2 * cj).wrapping_mul(lifted[j * n + k]));
                acc.wrapping_add(bit << j)
            })
        })
        .collect()
}

impl Operation for Split {
    fn uses(&self) -> Vec<usize> {
        vec![self.a, self.out[0], self.out[1]]
    }

    fn name(&self) -> &'static str {
        "a → b: split shares"
    }

    fn online(&self, run: &mut Run<'_, '_>, _: Vec<Vec<u64>>) -> Result<(), Error> {
        let t = run.ty(self.out[0]);
        let w = words(t.n);
        let mut own = vec![0u64; t.field().words()];
        for (k, x) in run.data[self.a].iter().enumerate() {
            for j in 0..t.width() {
                own[j * w + k / 64] |= ((x >> j) & 1) << (k % 64);
            }
        }
        let zero = vec![0u64; own.len()];
        let (o0, o1) = if run.first() {
            (own, zero)
        } else {
            (zero, own)
        };
        run.data[self.out[0]] = o0;
        run.data[self.out[1]] = o1;
        Ok(())
    }
}
