//! The parameters made ready for use: one transform plan per prime (tfhe-ntt's, chosen over a
//! Harvey-style transform of our own by measurement: `benches/ntt.rs`) and each level's tables.

use tfhe_ntt::prime64::Plan;

use crate::level::Level;
use crate::{Error, ParamSpec, Params};

/// Parameters with their transform plans and per-level tables; shared by everything that
/// computes on its ciphertexts.
#[derive(Clone, Debug)]
pub struct Context {
    params: Params,
    plans: Vec<Plan>,
    /// `levels[j - 1]`: the level of the first j primes.
    levels: Vec<Level>,
}

impl Context {
    /// The context of the parameters `spec` describes.
    pub fn new(spec: &ParamSpec) -> Result<Self, Error> {
        let params = Params::new(spec)?;
        let plans = params
            .moduli()
            .iter()
            .map(|&p| Plan::try_new(params.degree(), p).ok_or(Error::Degree(params.degree())))
            .collect::<Result<Vec<_>, _>>()?;
        let levels = (1..=params.moduli().len())
            .map(|j| Level::new(&params.moduli()[..j], params.plain_bits()))
            .collect();
        Ok(Context {
            params,
            plans,
            levels,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The ring degree N.
    pub fn degree(&self) -> usize {
        self.params.degree()
    }

    /// The number of primes of a fresh ciphertext.
    pub fn top_level(&self) -> usize {
        self.plans.len()
    }

    /// The primes.
    pub fn moduli(&self) -> &[u64] {
        self.params.moduli()
    }

    /// The wire layout of `count` words per prime for the first `primes` primes, each at its
    /// prime's width ([`crate::wire`]).
    pub fn rows(&self, primes: usize, count: usize) -> Vec<crate::wire::Run> {
        self.moduli()[..primes]
            .iter()
            .map(|&p| crate::wire::Run {
                count,
                bits: 64 - p.leading_zeros(),
            })
            .collect()
    }

    pub(crate) fn plan(&self, i: usize) -> &Plan {
        &self.plans[i]
    }

    pub(crate) fn level(&self, primes: usize) -> &Level {
        &self.levels[primes - 1]
    }
}
