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
