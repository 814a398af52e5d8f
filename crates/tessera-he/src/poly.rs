//! Polynomials of Z_q[X]/(X^N + 1) in RNS form: one row of N words per prime, each either the
//! coefficients or the transform's evaluations.

use tessera_core::Prg;

use crate::Context;
use crate::arith::{add_mod, reduce_signed, sub_mod};

/// Which representation a polynomial's rows hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// The coefficients modulo each prime.
    Coefficients,
    /// The negacyclic NTT of each row (products are pointwise).
    Evaluations,
}

/// A polynomial modulo the first `level` primes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RnsPoly {
    degree: usize,
    form: Form,
    words: Vec<u64>,
}

impl RnsPoly {
    /// The zero polynomial over `primes` primes.
    pub fn zero(ctx: &Context, primes: usize, form: Form) -> Self {
        RnsPoly {
            degree: ctx.degree(),
            form,
            words: vec![0; primes * ctx.degree()],
        }
    }

    /// A polynomial with small signed coefficients (a secret, an error, a kernel), reduced
    /// modulo each of `primes` primes.
    pub fn from_signed(ctx: &Context, primes: usize, coefficients: &[i64]) -> Self {
        debug_assert!(coefficients.len() <= ctx.degree());
        let n = ctx.degree();
        let largest = coefficients.iter().map(|c| c.unsigned_abs()).max();
        let mut words = Vec::with_capacity(primes * n);
        for &p in &ctx.moduli()[..primes] {
            if largest.is_some_and(|m| m < p) {
                // Below the prime in magnitude: a negative one plus p, without a branch (the
                // loop vectorises; a kernel's coefficients are mostly zeros).
                words.extend(
                    coefficients
                        .iter()
                        .map(|&c| c.wrapping_add((c >> 63) & p as i64) as u64),
                );
            } else {
                words.extend(coefficients.iter().map(|&c| reduce_signed(c, p)));
            }
            words.resize(words.len() + n - coefficients.len(), 0);
        }
        RnsPoly {
            degree: n,
            form: Form::Coefficients,
            words,
        }
    }

    /// A polynomial uniform modulo each of `primes` primes, from `prg` (rejection sampling:
    /// a word is kept when it lies below the largest multiple of its prime).
    pub fn uniform(ctx: &Context, primes: usize, prg: &mut Prg, form: Form) -> Self {
        use rand_core::RngCore;
        let mut poly = RnsPoly::zero(ctx, primes, form);
        for (row, &p) in poly.words.chunks_exact_mut(ctx.degree()).zip(ctx.moduli()) {
            let bound = u64::MAX - u64::MAX % p;
            for w in row.iter_mut() {
                *w = loop {
                    let x = prg.next_u64();
                    if x < bound {
                        break x % p;
                    }
                };
            }
        }
        poly
    }

    /// Rows of words as received, one row of N words per prime: `None` unless there are `primes`
    /// full rows and every word lies below its prime.
    pub(crate) fn from_words(ctx: &Context, form: Form, words: Vec<u64>) -> Option<Self> {
        let n = ctx.degree();
        if words.is_empty() || !words.len().is_multiple_of(n) || words.len() / n > ctx.top_level() {
            return None;
        }
        let in_range = words
            .chunks_exact(n)
            .zip(ctx.moduli())
            .all(|(row, &p)| row.iter().all(|&w| w < p));
        in_range.then_some(RnsPoly {
            degree: n,
            form,
            words,
        })
    }

    /// The number of primes.
    pub fn primes(&self) -> usize {
        self.words.len() / self.degree
    }

    /// The representation held.
    pub fn form(&self) -> Form {
        self.form
    }

    /// The row of prime `i`.
    pub fn row(&self, i: usize) -> &[u64] {
        &self.words[i * self.degree..(i + 1) * self.degree]
    }

    /// All rows, prime after prime.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Into the evaluation form (nothing when it is there).
    pub fn to_evaluations(&mut self, ctx: &Context) {
        if self.form == Form::Coefficients {
            for (i, row) in self.words.chunks_exact_mut(self.degree).enumerate() {
                ctx.plan(i).fwd(row);
            }
            self.form = Form::Evaluations;
        }
    }

    /// Into the coefficient form (nothing when it is there).
    pub fn to_coefficients(&mut self, ctx: &Context) {
        if self.form == Form::Evaluations {
            for (i, row) in self.words.chunks_exact_mut(self.degree).enumerate() {
                ctx.plan(i).inv(row);
                ctx.plan(i).normalize(row);
            }
            self.form = Form::Coefficients;
        }
    }

    /// `self += other`, both in one form, over the primes of `self`.
    pub fn add_assign(&mut self, ctx: &Context, other: &RnsPoly) {
        self.zip_rows(ctx, other, add_mod);
    }

    /// `self -= other`, both in one form, over the primes of `self`.
    pub fn sub_assign(&mut self, ctx: &Context, other: &RnsPoly) {
        self.zip_rows(ctx, other, sub_mod);
    }

    /// `self += a · b`, all three in the evaluation form.
    pub fn mul_accumulate(&mut self, ctx: &Context, a: &RnsPoly, b: &RnsPoly) {
        debug_assert!(self.form == Form::Evaluations && a.form == self.form && b.form == a.form);
        let n = self.degree;
        for (i, acc) in self.words.chunks_exact_mut(n).enumerate() {
            ctx.plan(i).mul_accumulate(acc, a.row(i), b.row(i));
        }
    }

    /// `self · b`, both in the evaluation form.
    pub fn product(&self, ctx: &Context, b: &RnsPoly) -> RnsPoly {
        let mut out = RnsPoly::zero(ctx, self.primes(), Form::Evaluations);
        out.mul_accumulate(ctx, self, b);
        out
    }

    /// Keeps the first `primes` rows.
    pub(crate) fn truncate(&mut self, primes: usize) {
        self.words.truncate(primes * self.degree);
    }

    pub(crate) fn rows_mut(&mut self) -> std::slice::ChunksExactMut<'_, u64> {
        self.words.chunks_exact_mut(self.degree)
    }

    fn zip_rows(&mut self, ctx: &Context, other: &RnsPoly, op: fn(u64, u64, u64) -> u64) {
        debug_assert!(self.form == other.form && other.primes() >= self.primes());
        let n = self.degree;
        for (i, row) in self.words.chunks_exact_mut(n).enumerate() {
            let p = ctx.moduli()[i];
            for (a, &b) in row.iter_mut().zip(other.row(i)) {
                *a = op(*a, b, p);
            }
        }
    }
}
