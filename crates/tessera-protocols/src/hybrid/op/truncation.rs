//! Truncation of A values by a public power of two: SecureML's local truncation, and an exact
//! variant for values known to be non-negative (the top bits of the shares, one B·A product).

use super::{Op, Operation, Program, bad};
use crate::Error;
use crate::boolean::bits::words;
use crate::hybrid::online::Run;
use crate::hybrid::{Kind, Sharing, Type, Value, linear, ring};

/// Local truncation of an A value by `f` bits: SecureML's (party 1 shifts its negated
/// share), or each party shifting its share as an unsigned number (`unsigned`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Truncate {
    a: usize,
    f: u32,
    unsigned: bool,
    out: usize,
}

/// The top bit of each party's A share: party 1's as a one-wire B value, and each party's as
/// an A value (the other's share zero).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct TopBits {
    a: usize,
    out: [usize; 3],
}

impl Program {
    /// ⌊a / 2^f⌋ of an A value, by SecureML's local truncation: off by one in the last place,
    /// and wrong with probability at most 2^(ℓₐ + 1 − ℓ) where |a| < 2^ℓₐ. Local.
    pub fn truncate(&mut self, a: Value, f: u32) -> Result<Value, Error> {
        let t = self.truncated(a, f)?;
        Ok(self.shift(a, t, f, false))
    }

    /// ⌊a / 2^f⌋ or one more of an A value known to lie in [0, 2^(ℓ−1)) (a ReLU's output, a
    /// maximum of such), never a large error, and never negative: each party shifts its share
    /// as an unsigned number, which gives ⌊a/2^f⌋ − c + w·2^(ℓ−f) for the low bits' carry c and
    /// the wrap w of the shares' sum; w = m₀ ∨ m₁ for the shares' top bits m₀, m₁ (a's own top
    /// bit being 0) is taken off, with m₀·m₁ by one random OT ([`Program::cross_select`]:
    /// setup one correlated OT; online 1 round, 1 bit from party 1 and ℓ from party 0), and 1
    /// added. The exact variant of
    /// [`Program::truncate`] (Mohassel and Zhang's local truncation errs with probability about
    /// |a|/2^(ℓ−1), which matters at ℓ = 32).
    pub fn truncate_nonnegative(&mut self, a: Value, f: u32) -> Result<Value, Error> {
        let t = self.truncated(a, f)?;
        let bit = self.value(Type {
            kind: Kind::Bits(1),
            sharing: Sharing::B,
            n: t.n,
        });
        let out = [bit, self.value(t), self.value(t)];
        self.ops.push(Op::TopBits(TopBits { a: a.0, out }));
        let (m1, a0, a1) = (Value(out[0]), Value(out[1]), Value(out[2]));
        let both = self.cross_select(m1, a0)?;
        let either = self.add(a0, a1)?;
        let wrap = self.sub(either, both)?;
        let wrap = self.mul_const(wrap, 1u64 << (t.ring_bits() - f))?;
        let low = self.shift(a, t, f, true);
        let exact_or_less = self.sub(low, wrap)?;
        self.add_const(exact_or_less, 1)
    }

    /// ⌊a / 2^f⌋ or one more of an A value of either sign known to lie in
    /// [−2^(ℓ−2), 2^(ℓ−2)) (a sum of branches, a clipped or pooled value at ℓ = 32): the public
    /// offset 2^(ℓ−2) added makes it non-negative, [`Program::truncate_nonnegative`] truncates
    /// it exactly, and the offset's 2^(ℓ−2−f) is taken off again. Same cost as that one; never
    /// the large error of [`Program::truncate`].
    pub fn truncate_bounded(&mut self, a: Value, f: u32) -> Result<Value, Error> {
        let bits = self.truncated(a, f)?.ring_bits();
        if f + 2 > bits {
            return Err(bad(format!(
                "truncating by {f} bits with an offset; it takes at most ℓ − 2 = {}",
                bits - 2
            )));
        }
        let offset = 1u64 << (bits - 2);
        let shifted = self.add_const(a, offset)?;
        let t = self.truncate_nonnegative(shifted, f)?;
        let back = (offset >> f).wrapping_neg() & ring::mask(bits);
        self.add_const(t, back)
    }

    /// The type of `a`, checked to be A with more than `f` bits.
    fn truncated(&self, a: Value, f: u32) -> Result<Type, Error> {
        let t = self.ty(a)?;
        if t.sharing != Sharing::A || f >= t.ring_bits() {
            return Err(bad(format!(
                "truncating a {} value by {f} bits; it takes A and fewer bits than the ring",
                t.sharing.name()
            )));
        }
        Ok(t)
    }

    fn shift(&mut self, a: Value, t: Type, f: u32, unsigned: bool) -> Value {
        let a = a.0;
        self.push(t, |out| {
            Op::Truncate(Truncate {
                a,
                f,
                unsigned,
                out,
            })
        })
    }
}

impl Operation for Truncate {
    fn uses(&self) -> Vec<usize> {
        vec![self.a, self.out]
    }

    fn name(&self) -> &'static str {
        "truncate"
    }

    fn online(&self, run: &mut Run<'_, '_>, _: Vec<Vec<u64>>) -> Result<(), Error> {
        let bits = run.ty(self.a).ring_bits();
        let (mask, side) = (ring::mask(bits), run.side);
        run.data[self.out] = run.data[self.a]
            .iter()
            .map(|&s| {
                if self.unsigned {
                    (s & mask) >> self.f
                } else {
                    linear::truncate_share(s, bits, self.f, side)
                }
            })
            .collect();
        Ok(())
    }
}

impl Operation for TopBits {
    fn uses(&self) -> Vec<usize> {
        [&[self.a][..], &self.out[..]].concat()
    }

    fn name(&self) -> &'static str {
        "top bits of the shares"
    }

    fn online(&self, run: &mut Run<'_, '_>, _: Vec<Vec<u64>>) -> Result<(), Error> {
        let t = run.ty(self.a);
        let (top, n, first) = (t.ring_bits() - 1, t.n, run.first());
        let mine: Vec<u64> = run.data[self.a].iter().map(|&s| (s >> top) & 1).collect();
        let zero = vec![0u64; n];
        let mut bit = vec![0u64; words(n)];
        if !first {
            for (k, &m) in mine.iter().enumerate() {
                bit[k / 64] |= m << (k % 64);
            }
        }
        run.data[self.out[0]] = bit;
        let (a0, a1) = if first { (mine, zero) } else { (zero, mine) };
        run.data[self.out[1]] = a0;
        run.data[self.out[2]] = a1;
        Ok(())
    }
}
