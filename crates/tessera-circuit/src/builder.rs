//! Writing circuits in Rust: bits with constant folding, bit vectors, and integers of any width.
//!
//! A [`Bit`] is a wire or a known constant; gates on constants are folded away, so a constant
//! operand never costs an AND gate. Bit vectors are `Vec<Bit>` (and `&[Bit]`), least significant
//! bit first. Integers are bit vectors read as unsigned or two's-complement signed numbers
//! ([`Signedness`]); arithmetic wraps modulo 2^width like Rust's `wrapping_*` operations.
//!
//! Costs in AND gates (the gates garbling pays for), n the width: addition and subtraction
//! n − 1 (one AND per full adder, Kolesnikov-Sadeghi-Schneider, CANS 2009), comparison n,
//! equality n − 1, multiplexer n, multiplication about n², shift by a variable amount
//! n·⌈log₂ n⌉, shift by a constant 0.
//!
//! [`Builder::finish`] removes gates no output depends on and lays the circuit out as Bristol
//! Fashion requires (inputs first, outputs last).

use crate::{Circuit, Error, Gate, GateKind, Wire};

/// One bit of a circuit under construction: a constant or a wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bit {
    /// A value known when the circuit is built.
    Const(bool),
    /// A wire of the builder (an internal number, renumbered by [`Builder::finish`]).
    Wire(Wire),
}

/// How a bit vector is read as an integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signedness {
    /// 0 ..= 2^n − 1.
    Unsigned,
    /// Two's complement, −2^(n−1) ..= 2^(n−1) − 1.
    Signed,
}

/// Builds a [`Circuit`] gate by gate.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    /// Width of each input value, in declaration order.
    inputs: Vec<u32>,
    /// The internal wire number of each input bit, value after value.
    input_wires: Vec<Wire>,
    gates: Vec<Gate>,
    next_wire: Wire,
}

impl Builder {
    /// An empty circuit.
    pub fn new() -> Self {
        Self::default()
    }

    fn fresh(&mut self) -> Wire {
        let w = self.next_wire;
        self.next_wire += 1;
        w
    }

    fn gate(&mut self, kind: GateKind, a: Wire, b: Wire) -> Bit {
        let out = self.fresh();
        self.gates.push(Gate { kind, a, b, out });
        Bit::Wire(out)
    }

    /// Declares the next input value, `width` bits wide, and returns its bits.
    pub fn input(&mut self, width: u32) -> Vec<Bit> {
        self.inputs.push(width);
        (0..width)
            .map(|_| {
                let w = self.fresh();
                self.input_wires.push(w);
                Bit::Wire(w)
            })
            .collect()
    }

    /// Number of AND gates so far (before dead-gate removal).
    pub fn and_gates(&self) -> usize {
        self.gates
            .iter()
            .filter(|g| g.kind == GateKind::And)
            .count()
    }

    // ---- bits -------------------------------------------------------------------------------

    /// a ⊕ b.
    pub fn xor(&mut self, a: Bit, b: Bit) -> Bit {
        match (a, b) {
            (Bit::Const(x), Bit::Const(y)) => Bit::Const(x ^ y),
            (Bit::Const(false), w) | (w, Bit::Const(false)) => w,
            (Bit::Const(true), w) | (w, Bit::Const(true)) => self.not(w),
            (Bit::Wire(x), Bit::Wire(y)) if x == y => Bit::Const(false),
            (Bit::Wire(x), Bit::Wire(y)) => self.gate(GateKind::Xor, x, y),
        }
    }

    /// a ∧ b.
    pub fn and(&mut self, a: Bit, b: Bit) -> Bit {
        match (a, b) {
            (Bit::Const(x), Bit::Const(y)) => Bit::Const(x & y),
            (Bit::Const(false), _) | (_, Bit::Const(false)) => Bit::Const(false),
            (Bit::Const(true), w) | (w, Bit::Const(true)) => w,
            (Bit::Wire(x), Bit::Wire(y)) if x == y => a,
            (Bit::Wire(x), Bit::Wire(y)) => self.gate(GateKind::And, x, y),
        }
    }

    /// ¬a.
    pub fn not(&mut self, a: Bit) -> Bit {
        match a {
            Bit::Const(x) => Bit::Const(!x),
            Bit::Wire(x) => self.gate(GateKind::Inv, x, 0),
        }
    }

    /// a ∨ b = (a ⊕ b) ⊕ (a ∧ b): one AND.
    pub fn or(&mut self, a: Bit, b: Bit) -> Bit {
        let x = self.xor(a, b);
        let y = self.and(a, b);
        self.xor(x, y)
    }

    /// ¬(a ⊕ b).
    pub fn xnor(&mut self, a: Bit, b: Bit) -> Bit {
        let x = self.xor(a, b);
        self.not(x)
    }

    /// `if s { t } else { f }` = f ⊕ s ∧ (t ⊕ f): one AND.
    pub fn mux(&mut self, s: Bit, t: Bit, f: Bit) -> Bit {
        let d = self.xor(t, f);
        let d = self.and(s, d);
        self.xor(f, d)
    }

    /// Majority of three bits, a ⊕ ((a ⊕ b) ∧ (a ⊕ c)): one AND.
    pub fn majority(&mut self, a: Bit, b: Bit, c: Bit) -> Bit {
        let x = self.xor(a, b);
        let y = self.xor(a, c);
        let m = self.and(x, y);
        self.xor(a, m)
    }

    // ---- bit vectors ------------------------------------------------------------------------

    /// `width` constant bits of `value` (bits above 128 are zero).
    pub fn constant(value: u128, width: usize) -> Vec<Bit> {
        (0..width)
            .map(|i| Bit::Const(i < 128 && (value >> i) & 1 == 1))
            .collect()
    }

    /// Bitwise a ⊕ b (widths must match).
    pub fn xor_bits(&mut self, a: &[Bit], b: &[Bit]) -> Vec<Bit> {
        same_width(a, b);
        a.iter().zip(b).map(|(&x, &y)| self.xor(x, y)).collect()
    }

    /// Bitwise a ∧ b (widths must match).
    pub fn and_bits(&mut self, a: &[Bit], b: &[Bit]) -> Vec<Bit> {
        same_width(a, b);
        a.iter().zip(b).map(|(&x, &y)| self.and(x, y)).collect()
    }

    /// Bitwise a ∨ b (widths must match).
    pub fn or_bits(&mut self, a: &[Bit], b: &[Bit]) -> Vec<Bit> {
        same_width(a, b);
        a.iter().zip(b).map(|(&x, &y)| self.or(x, y)).collect()
    }

    /// Bitwise ¬a.
    pub fn not_bits(&mut self, a: &[Bit]) -> Vec<Bit> {
        a.iter().map(|&x| self.not(x)).collect()
    }

    /// `if s { t } else { f }`, bit by bit (widths must match).
    pub fn mux_bits(&mut self, s: Bit, t: &[Bit], f: &[Bit]) -> Vec<Bit> {
        same_width(t, f);
        t.iter().zip(f).map(|(&x, &y)| self.mux(s, x, y)).collect()
    }

    // ---- integers ---------------------------------------------------------------------------

    /// a + b + carry_in: the sum (width of a) and the carry out. One AND per bit.
    pub fn add_with_carry(&mut self, a: &[Bit], b: &[Bit], carry_in: Bit) -> (Vec<Bit>, Bit) {
        same_width(a, b);
        let mut c = carry_in;
        let sum = a
            .iter()
            .zip(b)
            .map(|(&x, &y)| {
                let xc = self.xor(x, c);
                let yc = self.xor(y, c);
                let s = self.xor(xc, y);
                let t = self.and(xc, yc);
                c = self.xor(c, t);
                s
            })
            .collect();
        (sum, c)
    }

    /// a + b mod 2^n (the last carry is not computed, so n − 1 AND gates).
    pub fn add(&mut self, a: &[Bit], b: &[Bit]) -> Vec<Bit> {
        self.add_wrapping(a, b, Bit::Const(false))
    }

    /// a + b mod 2^n by a parallel-prefix (Sklansky) adder: AND-depth 1 + ⌈log₂(n − 1)⌉
    /// instead of the ripple-carry adder's n − 1, for about (n/2)·log₂ n more AND gates. The
    /// carries are the prefix "generate" of (g, p) pairs g = a ∧ b, p = a ⊕ b combined as
    /// (g, p) ∘ (g', p') = (g ⊕ p ∧ g', p ∧ p') (g and p ∧ g' are never both set); a
    /// propagate is only formed where a later level reads it.
    pub fn add_prefix(&mut self, a: &[Bit], b: &[Bit]) -> Vec<Bit> {
        same_width(a, b);
        let n = a.len();
        let p: Vec<Bit> = (0..n).map(|i| self.xor(a[i], b[i])).collect();
        // Carries out of bits 0..i for i < n − 1 (the top carry leaves the word).
        let top = n.saturating_sub(1);
        let mut generate: Vec<Bit> = (0..top).map(|i| self.and(a[i], b[i])).collect();
        let mut prop: Vec<Bit> = p[..top].to_vec();
        let mut d = 0;
        while (1 << d) < top {
            for i in 0..top {
                if (i >> d) & 1 == 0 {
                    continue;
                }
                let j = ((i >> d) << d) - 1;
                let t = self.and(prop[i], generate[j]);
                generate[i] = self.xor(generate[i], t);
                if i >> (d + 1) != 0 {
                    prop[i] = self.and(prop[i], prop[j]);
                }
            }
            d += 1;
        }
        (0..n)
            .map(|i| {
                if i == 0 {
                    p[0]
                } else {
                    self.xor(p[i], generate[i - 1])
                }
            })
            .collect()
    }

    /// The most significant bit of a + b mod 2^n (the sign of a sum of two's-complement
    /// shares) without the other sum bits: the carry into bit n − 1 from a balanced tree of
    /// the (g, p) pairs of bits 0..n − 1, as in [`Builder::add_prefix`] but only the root is
    /// formed. AND-depth 1 + ⌈log₂(n − 1)⌉, fewer than 3n AND gates (the adder needs about
    /// (n/2)·log₂ n more).
    pub fn sum_msb(&mut self, a: &[Bit], b: &[Bit]) -> Bit {
        same_width(a, b);
        let n = a.len();
        let Some(top) = n.checked_sub(1) else {
            return Bit::Const(false);
        };
        let p_top = self.xor(a[top], b[top]);
        if top == 0 {
            return p_top;
        }
        let (carry, _) = self.carry_tree(a, b, 0, top, false);
        self.xor(p_top, carry)
    }

    /// The (generate, propagate) pair of bits `lo..hi` of a + b; the propagate only if `need_p`
    /// (a group's propagate is read only where it is the high part of a larger group).
    fn carry_tree(
        &mut self,
        a: &[Bit],
        b: &[Bit],
        lo: usize,
        hi: usize,
        need_p: bool,
    ) -> (Bit, Option<Bit>) {
        if hi - lo == 1 {
            let g = self.and(a[lo], b[lo]);
            let p = need_p.then(|| self.xor(a[lo], b[lo]));
            return (g, p);
        }
        let mid = lo + (hi - lo).div_ceil(2);
        let (g_lo, p_lo) = self.carry_tree(a, b, lo, mid, need_p);
        let (g_hi, p_hi) = self.carry_tree(a, b, mid, hi, true);
        let p_hi = p_hi.unwrap_or(Bit::Const(false));
        let t = self.and(p_hi, g_lo);
        let g = self.xor(g_hi, t);
        let p = match p_lo {
            Some(p_lo) if need_p => Some(self.and(p_hi, p_lo)),
            _ => None,
        };
        (g, p)
    }

    /// The sum of several words mod 2^n: carry-save (3:2) compressors, one majority (one AND)
    /// per bit and level, take three words to two until two are left, then one
    /// [`Builder::add_prefix`]. Words listed first are compressed first: list the ones that
    /// are ready early first.
    pub fn add_many(&mut self, terms: &[&[Bit]]) -> Vec<Bit> {
        let mut queue: std::collections::VecDeque<Vec<Bit>> =
            terms.iter().map(|t| t.to_vec()).collect();
        while queue.len() > 2 {
            let (x, y, z) = match (queue.pop_front(), queue.pop_front(), queue.pop_front()) {
                (Some(x), Some(y), Some(z)) => (x, y, z),
                _ => break,
            };
            same_width(&x, &y);
            same_width(&x, &z);
            let xy = self.xor_bits(&x, &y);
            let sum = self.xor_bits(&xy, &z);
            let mut carry = vec![Bit::Const(false)];
            for i in 0..x.len().saturating_sub(1) {
                let m = self.majority(x[i], y[i], z[i]);
                carry.push(m);
            }
            queue.push_back(sum);
            queue.push_back(carry);
        }
        match (queue.pop_front(), queue.pop_front()) {
            (Some(x), Some(y)) => self.add_prefix(&x, &y),
            (Some(x), None) => x,
            _ => Vec::new(),
        }
    }

    /// a − b mod 2^n = a + ¬b + 1 (n − 1 AND gates).
    pub fn sub(&mut self, a: &[Bit], b: &[Bit]) -> Vec<Bit> {
        let nb = self.not_bits(b);
        self.add_wrapping(a, &nb, Bit::Const(true))
    }

    /// a + b + carry_in mod 2^n, without the last carry.
    fn add_wrapping(&mut self, a: &[Bit], b: &[Bit], carry_in: Bit) -> Vec<Bit> {
        same_width(a, b);
        let Some(last) = a.len().checked_sub(1) else {
            return Vec::new();
        };
        let (mut sum, c) = self.add_with_carry(&a[..last], &b[..last], carry_in);
        let top = self.xor(a[last], b[last]);
        sum.push(self.xor(top, c));
        sum
    }

    /// −a mod 2^n.
    pub fn neg(&mut self, a: &[Bit]) -> Vec<Bit> {
        let zero = Self::constant(0, a.len());
        self.sub(&zero, a)
    }

    /// a · b mod 2^n (schoolbook; partial product i only needs its low n − i bits).
    pub fn mul(&mut self, a: &[Bit], b: &[Bit]) -> Vec<Bit> {
        same_width(a, b);
        let n = a.len();
        let mut acc = Self::constant(0, n);
        for (i, &bi) in b.iter().enumerate() {
            let partial: Vec<Bit> = a[..n - i].iter().map(|&x| self.and(x, bi)).collect();
            let high = self.add(&acc[i..], &partial);
            acc.splice(i.., high);
        }
        acc
    }

    /// The full 2n-bit product a · b, reading both as `signedness` integers.
    pub fn mul_wide(&mut self, a: &[Bit], b: &[Bit], signedness: Signedness) -> Vec<Bit> {
        same_width(a, b);
        let a2 = extend(a, 2 * a.len(), signedness);
        let b2 = extend(b, 2 * b.len(), signedness);
        self.mul(&a2, &b2)
    }

    /// a < b. Unsigned: the borrow of a − b, one AND per bit. Signed: the same after flipping
    /// both sign bits.
    pub fn lt(&mut self, a: &[Bit], b: &[Bit], signedness: Signedness) -> Bit {
        same_width(a, b);
        let (mut a, mut b) = (a.to_vec(), b.to_vec());
        if let (Signedness::Signed, Some(sa), Some(sb)) = (signedness, a.last_mut(), b.last_mut()) {
            (*sa, *sb) = (*sb, *sa);
        }
        // borrow' = majority(¬a, b, borrow): a − b borrows iff a < b.
        let mut borrow = Bit::Const(false);
        for (&x, &y) in a.iter().zip(&b) {
            let nx = self.not(x);
            borrow = self.majority(borrow, nx, y);
        }
        borrow
    }

    /// a ≤ b.
    pub fn le(&mut self, a: &[Bit], b: &[Bit], signedness: Signedness) -> Bit {
        let gt = self.lt(b, a, signedness);
        self.not(gt)
    }

    /// a = b: n − 1 AND gates.
    pub fn eq(&mut self, a: &[Bit], b: &[Bit]) -> Bit {
        same_width(a, b);
        let mut acc = Bit::Const(true);
        for (&x, &y) in a.iter().zip(b) {
            let same = self.xnor(x, y);
            acc = self.and(acc, same);
        }
        acc
    }

    /// `if lt(a, b) { a } else { b }`.
    pub fn min(&mut self, a: &[Bit], b: &[Bit], signedness: Signedness) -> Vec<Bit> {
        let s = self.lt(a, b, signedness);
        self.mux_bits(s, a, b)
    }

    /// a << k (free: wiring only).
    pub fn shl_const(a: &[Bit], k: usize) -> Vec<Bit> {
        let n = a.len();
        (0..n)
            .map(|i| if i >= k { a[i - k] } else { Bit::Const(false) })
            .collect()
    }

    /// a >> k, logical (unsigned) or arithmetic (signed). Free.
    pub fn shr_const(a: &[Bit], k: usize, signedness: Signedness) -> Vec<Bit> {
        let fill = fill_bit(a, signedness);
        (0..a.len())
            .map(|i| a.get(i + k).copied().unwrap_or(fill))
            .collect()
    }

    /// Rotation left by k (free).
    pub fn rotl(a: &[Bit], k: usize) -> Vec<Bit> {
        let n = a.len();
        (0..n).map(|i| a[(i + n - k % n) % n]).collect()
    }

    /// Rotation right by k (free).
    pub fn rotr(a: &[Bit], k: usize) -> Vec<Bit> {
        let n = a.len();
        (0..n).map(|i| a[(i + k) % n]).collect()
    }

    /// a << amount, for an unsigned amount held in wires; amounts ≥ n give 0. A barrel shifter:
    /// one row of multiplexers per bit of the amount.
    pub fn shl(&mut self, a: &[Bit], amount: &[Bit]) -> Vec<Bit> {
        self.barrel(a, amount, Self::shl_const, Bit::Const(false))
    }

    /// a >> amount, logical or arithmetic; amounts ≥ n give 0 (or all sign bits).
    pub fn shr(&mut self, a: &[Bit], amount: &[Bit], signedness: Signedness) -> Vec<Bit> {
        let fill = fill_bit(a, signedness);
        self.barrel(a, amount, |x, k| Self::shr_const(x, k, signedness), fill)
    }

    fn barrel(
        &mut self,
        a: &[Bit],
        amount: &[Bit],
        shift: impl Fn(&[Bit], usize) -> Vec<Bit>,
        fill: Bit,
    ) -> Vec<Bit> {
        let n = a.len();
        let mut x = a.to_vec();
        let mut too_far = Bit::Const(false);
        for (j, &s) in amount.iter().enumerate() {
            if j >= usize::BITS as usize || (1usize << j) >= n.max(1) {
                too_far = self.or(too_far, s);
            } else {
                let shifted = shift(&x, 1 << j);
                x = self.mux_bits(s, &shifted, &x);
            }
        }
        let filled = vec![fill; n];
        self.mux_bits(too_far, &filled, &x)
    }

    // ---- finishing --------------------------------------------------------------------------

    /// The circuit computing `outputs` (one bit vector per output value). Gates that no output
    /// depends on are dropped; constant or repeated output bits get an `EQ`/`EQW` gate so that
    /// every output has its own wire, last, as Bristol Fashion requires.
    pub fn finish(&self, outputs: &[Vec<Bit>]) -> Result<Circuit, Error> {
        let n = self.next_wire as usize;
        // Backward liveness from the outputs.
        let mut live = vec![false; n];
        for b in outputs.iter().flatten() {
            if let Bit::Wire(w) = *b {
                live[w as usize] = true;
            }
        }
        let mut keep = vec![false; self.gates.len()];
        for (i, g) in self.gates.iter().enumerate().rev() {
            if live[g.out as usize] {
                keep[i] = true;
                for &k in g.inputs() {
                    live[g.input(k) as usize] = true;
                }
            }
        }
        // Renumber: inputs first, then kept gates; the first appearance of a gate's output
        // among the outputs takes its place at the end.
        const NONE: Wire = Wire::MAX;
        let mut map = vec![NONE; n];
        for (i, &w) in self.input_wires.iter().enumerate() {
            map[w as usize] = i as Wire;
        }
        let num_in = self.input_wires.len();
        let num_out: usize = outputs.iter().map(Vec::len).sum();
        let mut is_gate_out = vec![false; n];
        for (g, _) in self.gates.iter().zip(&keep).filter(|(_, k)| **k) {
            is_gate_out[g.out as usize] = true;
        }
        let internal = keep.iter().filter(|&&k| k).count();
        let mut copies = Vec::new();
        let mut out_wire = Vec::with_capacity(num_out);
        let mut claimed = vec![false; n];
        for b in outputs.iter().flatten() {
            out_wire.push(match *b {
                Bit::Wire(w) if is_gate_out[w as usize] && !claimed[w as usize] => {
                    claimed[w as usize] = true;
                    Some(w)
                }
                _ => None,
            });
        }
        let total = num_in + internal + out_wire.iter().filter(|o| o.is_none()).count();
        let wire_limit = usize::try_from(Wire::MAX).unwrap_or(usize::MAX);
        if total >= wire_limit {
            return Err(Error::Invalid(format!("{total} wires is too many")));
        }
        let out_start = total - num_out;
        for (k, o) in out_wire.iter().enumerate() {
            if let Some(w) = o {
                map[*w as usize] = (out_start + k) as Wire;
            }
        }
        let mut next = num_in as Wire;
        let mut gates = Vec::with_capacity(internal + num_out);
        for (g, _) in self.gates.iter().zip(&keep).filter(|(_, k)| **k) {
            let out = if map[g.out as usize] == NONE {
                map[g.out as usize] = next;
                next += 1;
                map[g.out as usize]
            } else {
                map[g.out as usize]
            };
            let a = if g.kind == GateKind::Eq {
                g.a
            } else {
                map[g.a as usize]
            };
            let b = if matches!(g.kind, GateKind::Xor | GateKind::And) {
                map[g.b as usize]
            } else {
                0
            };
            gates.push(Gate {
                kind: g.kind,
                a,
                b,
                out,
            });
        }
        for (k, (b, o)) in outputs.iter().flatten().zip(&out_wire).enumerate() {
            if o.is_none() {
                let out = (out_start + k) as Wire;
                copies.push(match *b {
                    Bit::Const(v) => Gate {
                        kind: GateKind::Eq,
                        a: u32::from(v),
                        b: 0,
                        out,
                    },
                    Bit::Wire(w) => Gate {
                        kind: GateKind::Eqw,
                        a: map[w as usize],
                        b: 0,
                        out,
                    },
                });
            }
        }
        gates.extend(copies);
        let c = Circuit {
            num_wires: total as Wire,
            inputs: self.inputs.clone(),
            outputs: outputs.iter().map(|o| o.len() as u32).collect(),
            gates,
        };
        c.check()?;
        Ok(c)
    }
}

impl tessera_core::aes::sbox::BooleanOps for Builder {
    type Bit = Bit;
    fn xor(&mut self, a: Bit, b: Bit) -> Bit {
        Builder::xor(self, a, b)
    }
    fn and(&mut self, a: Bit, b: Bit) -> Bit {
        Builder::and(self, a, b)
    }
    fn xnor(&mut self, a: Bit, b: Bit) -> Bit {
        Builder::xnor(self, a, b)
    }
}

/// The bit that fills vacated positions on a right shift.
fn fill_bit(a: &[Bit], signedness: Signedness) -> Bit {
    match (signedness, a.last()) {
        (Signedness::Signed, Some(&s)) => s,
        _ => Bit::Const(false),
    }
}

/// `a` zero- or sign-extended to `width` bits.
pub fn extend(a: &[Bit], width: usize, signedness: Signedness) -> Vec<Bit> {
    let fill = fill_bit(a, signedness);
    let mut v = a.to_vec();
    v.resize(width.max(a.len()), fill);
    v
}

#[track_caller]
fn same_width(a: &[Bit], b: &[Bit]) {
    assert_eq!(a.len(), b.len(), "operands of different widths");
}

#[cfg(test)]
mod tests;
