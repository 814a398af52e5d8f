//! How much noise an answer carries, how much flooding hides it, and how many primes it needs
//! when it goes back: the bounds behind [`Ciphertext::rerandomize`] and
//! [`Ciphertext::drop_to`] for a sum of products by plaintexts of a given ℓ1 norm.
//!
//! [`Ciphertext::rerandomize`]: crate::Ciphertext::rerandomize
//! [`Ciphertext::drop_to`]: crate::Ciphertext::drop_to

use crate::sample::ERROR_BOUND;
use crate::{Context, Error};

/// The statistical security of flooding, per coefficient: the answer's noise is uniform over
/// a range 2^40 times the largest error it hides, so the two are within 2^-40 of each other.
pub const FLOOD_SECURITY: u32 = 40;

/// How an answer is made: flooding noise of `flood_bits` and `primes` primes sent back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnswerPlan {
    /// The flooding range's bits ([`crate::Ciphertext::rerandomize`]).
    pub flood_bits: u32,
    /// The primes left when it is sent.
    pub primes: usize,
}

impl AnswerPlan {
    /// The plan for a sum of products of fresh ciphertexts by plaintexts whose coefficients'
    /// absolute values sum to at most `l1` per output coefficient (a kernel's ℓ1 norm), or why
    /// the parameters cannot hold it. The error before flooding is at most
    /// l1·(E + 1/2) (each fresh error E and the encoding's rounding, times the plaintext)
    /// plus 2N·E + E (re-randomisation: e·u, e₁·s, e₀); flooding adds 2^F with F that error's bits
    /// plus [`FLOOD_SECURITY`]; dropping a prime divides what there is and adds (N + 1)/2
    /// (rounding c₀ and c₁·s) and 1 (the scale's fraction). Decryption holds while the error
    /// stays below q/(2t).
    pub fn new(ctx: &Context, l1: u128) -> Result<Self, Error> {
        let n = ctx.degree() as f64;
        let e = ERROR_BOUND as f64;
        let before = l1 as f64 * (e + 0.5) + 2.0 * n * e + e;
        let flood_bits = before.log2().ceil() as u32 + FLOOD_SECURITY;
        let plain_bits = f64::from(ctx.params().plain_bits());
        let budget =
            |primes: usize| f64::from(ctx.params().modulus_bits(primes)) - plain_bits - 1.0;
        let mut error = (f64::from(flood_bits) + 1.0).exp2();
        if error.log2() >= budget(ctx.top_level()) {
            return Err(Error::Budget {
                flood_bits,
                budget: budget(ctx.top_level()) as u32,
            });
        }
        let mut primes = ctx.top_level();
        while primes > 1 {
            let dropped = error / ctx.moduli()[primes - 1] as f64 + (n + 1.0) / 2.0 + 1.0;
            // Keep a bit of margin below q/(2t) at the level sent.
            if dropped.log2() + 1.0 >= budget(primes - 1) {
                break;
            }
            error = dropped;
            primes -= 1;
        }
        Ok(AnswerPlan { flood_bits, primes })
    }
}

/// How far beyond the standard deviation of c1's rounding error (times the secret) an
/// answer's error bound reaches: a Gaussian tail of 7.5σ, about 2^-43 per coefficient.
const ROUNDING_TAIL: f64 = 7.5;

/// The low bits an answer of one prime leaves out of its words, rounding them (Cheetah §5
/// drops them likewise): the bits of c1 and of c0. Decryption reads the phase c0 + c1·s to
/// within q/(2t); an answer plan leaves the error below half of that
/// ([`AnswerPlan::new`] keeps a bit of margin), and the rounding takes at most a quarter more
/// for each part: c0's error at most 2^(d0−1), c1's (uniform in ±2^(d1−1), times the ternary
/// secret over N coefficients: σ = 2^d1·√(N/18)) within [`ROUNDING_TAIL`] standard deviations.
/// Beyond that tail an output is off by one in the ring's last place, never more. Answers of
/// several primes (residues, not one integer) keep their words whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rounding {
    /// Bits dropped from each word of c1.
    pub c1: u32,
    /// Bits dropped from each word of c0.
    pub c0: u32,
}

impl Rounding {
    /// The rounding of an answer that keeps `primes` primes under `ctx`: what both sides
    /// derive from the parameters alone.
    pub fn of(ctx: &Context, primes: usize) -> Rounding {
        let none = Rounding { c1: 0, c0: 0 };
        if primes != 1 {
            return none;
        }
        let modulus = ctx.params().modulus_bits(1);
        let budget = modulus.saturating_sub(ctx.params().plain_bits() + 1);
        if budget < 3 {
            return none;
        }
        let quarter = f64::from(budget - 2).exp2();
        let sigma_per_unit = (ctx.degree() as f64 / 18.0).sqrt();
        let c1 = (quarter / (ROUNDING_TAIL * sigma_per_unit)).log2().floor();
        Rounding {
            c1: (c1.max(0.0) as u32).min(modulus - 1),
            c0: (budget - 1).min(modulus - 1),
        }
    }

    /// The runs an answer's words travel in ([`crate::Ciphertext::answer_words`]' order): c1's
    /// N words per prime, then c0's `kept` per prime, each at its prime's width less the bits
    /// dropped.
    pub fn runs(&self, ctx: &Context, primes: usize, kept: usize) -> Vec<crate::wire::Run> {
        let narrower = |mut runs: Vec<crate::wire::Run>, bits: u32| {
            runs.iter_mut().for_each(|r| r.bits -= bits);
            runs
        };
        let c1 = narrower(ctx.rows(primes, ctx.degree()), self.c1);
        [c1, narrower(ctx.rows(primes, kept), self.c0)].concat()
    }

    /// An answer's words (one prime: c1's N, then c0's) rounded to what is sent: each word w
    /// of a part that drops d bits becomes ⌊w/2^d⌉, wrapping to 0 past the narrower width.
    pub fn shrink(&self, ctx: &Context, words: &mut [u64]) {
        let bits = ctx.params().modulus_bits(1);
        self.each_part(ctx, words, |w, d| {
            ((w + (1 << (d - 1))) >> d) & ((1u64 << (bits - d)) - 1)
        });
    }

    /// Words as received back to residues modulo the prime: w·2^d, reduced once.
    pub fn restore(&self, ctx: &Context, words: &mut [u64]) {
        let p = ctx.moduli()[0];
        self.each_part(ctx, words, |w, d| {
            let v = w << d;
            if v >= p { v - p } else { v }
        });
    }

    /// `f(word, d)` for every word of a part that drops d > 0 bits: c1's N words, then c0's.
    fn each_part(&self, ctx: &Context, words: &mut [u64], f: impl Fn(u64, u32) -> u64) {
        let (c1, c0) = words.split_at_mut(ctx.degree().min(words.len()));
        for (part, d) in [(c1, self.c1), (c0, self.c0)] {
            if d > 0 {
                part.iter_mut().for_each(|w| *w = f(*w, d));
            }
        }
    }
}
