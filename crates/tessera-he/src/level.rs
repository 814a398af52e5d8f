//! What each level of the modulus chain needs: a level is the product q of the first j primes.
//! Encoding m ∈ Z_t as ⌊q·m/t⌉, decoding by ⌊t·x/q⌉ mod t from the RNS words alone (Halevi,
//! Polyakov and Shoup, CT-RSA 2019, §3: the fractions t·[(q/q_i)^-1]_{q_i}/q_i kept to 128
//! bits), and dropping the last prime by rounding (the RNS modulus switch of Gentry, Halevi and
//! Smart, 2012, §3.1).

use crate::arith::{Reducer, Shoup, Wide, add_mod, inv_mod, mul_mod, sub_mod};

/// `t · v / q_i` for one prime as an integer part modulo 2^64 and a 128-bit fraction.
#[derive(Clone, Copy, Debug)]
struct Theta {
    integer: u64,
    fraction_hi: u64,
    fraction_lo: u64,
}

impl Theta {
    /// 2^`plain_bits` · `v` / `p` for `v < p < 2^62`, `plain_bits <= 64`.
    fn new(v: u64, p: u64, plain_bits: u32) -> Self {
        let p = u128::from(p);
        let numerator = u128::from(v) << plain_bits;
        let rem = numerator % p;
        let fraction_hi = (rem << 64) / p;
        let rem = (rem << 64) % p;
        let fraction_lo = (rem << 64) / p;
        Theta {
            integer: (numerator / p) as u64,
            fraction_hi: fraction_hi as u64,
            fraction_lo: fraction_lo as u64,
        }
    }
}

/// The tables of one level.
#[derive(Clone, Debug)]
pub(crate) struct Level {
    /// ⌊q/t⌋ mod q_i, prepared for multiplication.
    delta: Vec<Shoup>,
    /// q mod t.
    q_mod_t: u64,
    /// t·[(q/q_i)^-1]_{q_i}/q_i per prime.
    theta: Vec<Theta>,
    /// The last prime's inverse modulo each other prime: dropping it divides by it.
    last_inverse: Vec<Shoup>,
    /// Reduction modulo each prime.
    reducers: Vec<Reducer>,
    /// t - 1.
    plain_mask: u64,
    plain_bits: u32,
}

impl Level {
    /// The tables of the level of the primes `moduli` for the plaintext modulus 2^`plain_bits`.
    pub(crate) fn new(moduli: &[u64], plain_bits: u32) -> Self {
        let q = Wide::product(moduli);
        let delta_wide = q.shr(plain_bits);
        let delta = moduli
            .iter()
            .map(|&p| Shoup::new(delta_wide.rem(p), p))
            .collect();
        let theta = moduli
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let others = moduli.iter().enumerate().filter(|&(j, _)| j != i);
                let q_hat = others.fold(1u64, |acc, (_, &pj)| mul_mod(acc, pj % p, p));
                Theta::new(inv_mod(q_hat, p), p, plain_bits)
            })
            .collect();
        let last = moduli[moduli.len() - 1];
        let last_inverse = moduli[..moduli.len() - 1]
            .iter()
            .map(|&p| Shoup::new(inv_mod(last % p, p), p))
            .collect();
        let plain_mask = if plain_bits == 64 {
            u64::MAX
        } else {
            (1u64 << plain_bits) - 1
        };
        Level {
            delta,
            reducers: moduli.iter().map(|&p| Reducer::new(p)).collect(),
            q_mod_t: q.low_bits(plain_bits),
            theta,
            last_inverse,
            plain_mask,
            plain_bits,
        }
    }

    /// The number of primes.
    pub(crate) fn primes(&self) -> usize {
        self.theta.len()
    }

    /// Reduction modulo prime `i`.
    pub(crate) fn reducer(&self, i: usize) -> Reducer {
        self.reducers[i]
    }

    /// ⌊q·m/t⌉ for `m < t` as its residue modulo prime `i` of `moduli`: ⌊q/t⌋·m plus
    /// ⌊(q mod t)·m/t⌉, which is exact (a 128-bit product).
    #[inline(always)]
    pub(crate) fn encode(&self, m: u64, i: usize, p: u64) -> u64 {
        let carry = (u128::from(self.q_mod_t) * u128::from(m) + (1u128 << (self.plain_bits - 1)))
            >> self.plain_bits;
        let scaled = self.delta[i].mul(m, p);
        // carry < t <= 2^64.
        add_mod(scaled, self.reducers[i].word(carry as u64, p), p)
    }

    /// ⌊t·x/q⌉ mod t for the integer x in [0, q) whose residues are `residues`.
    #[inline(always)]
    pub(crate) fn decode(&self, residues: impl Iterator<Item = u64>) -> u64 {
        let mut integer = 0u64;
        let mut fraction = 0u128;
        for (x, th) in residues.zip(&self.theta) {
            integer = integer.wrapping_add(x.wrapping_mul(th.integer));
            let x = u128::from(x);
            // 64 fraction bits kept; the integer part beyond 2^64 is 0 modulo t <= 2^64.
            fraction = fraction
                .wrapping_add(x * u128::from(th.fraction_hi))
                .wrapping_add((x * u128::from(th.fraction_lo)) >> 64);
        }
        let rounded = (fraction.wrapping_add(1u128 << 63) >> 64) as u64;
        integer.wrapping_add(rounded) & self.plain_mask
    }

    /// The residues of ⌊x/q_last⌉ modulo the other primes, from those of x: `words` holds one
    /// residue per prime of this level, the last one's last.
    #[inline(always)]
    pub(crate) fn drop_last(&self, words: &mut [u64], moduli: &[u64]) {
        let k = self.primes() - 1;
        let last = moduli[k];
        let r = words[k];
        // Centred, so that the quotient is rounded to the nearest.
        let negative = r > last / 2;
        for i in 0..k {
            let p = moduli[i];
            let reduce = self.reducers[i];
            let shifted = if negative {
                add_mod(words[i], reduce.word(last - r, p), p)
            } else {
                sub_mod(words[i], reduce.word(r, p), p)
            };
            words[i] = self.last_inverse[i].mul(shifted, p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ParamSpec, Params};

    /// Two primes of 40 bits, so that q < 2^80 and the exact values fit 128 bits.
    fn small_level(plain_bits: u32) -> (Level, Vec<u64>, u128) {
        let spec = ParamSpec {
            degree: 4096,
            prime_bits: vec![40, 39],
            plain_bits,
        };
        let moduli = Params::new(&spec).unwrap().moduli().to_vec();
        let q = u128::from(moduli[0]) * u128::from(moduli[1]);
        (Level::new(&moduli, plain_bits), moduli, q)
    }

    fn samples(q: u128) -> impl Iterator<Item = u128> {
        let mut x = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834u128;
        (0..2000).map(move |_| {
            x = x
                .wrapping_mul(0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645)
                .wrapping_add(1);
            (x >> 7) % q
        })
    }

    #[test]
    fn encoding_is_q_m_over_t_rounded() {
        for plain_bits in [1, 20, 40] {
            let (level, moduli, q) = small_level(plain_bits);
            for m in samples(1 << plain_bits) {
                let exact = (q * m + (1 << (plain_bits - 1))) >> plain_bits;
                for (i, &p) in moduli.iter().enumerate() {
                    assert_eq!(
                        u128::from(level.encode(m as u64, i, p)),
                        exact % u128::from(p)
                    );
                }
            }
        }
    }

    #[test]
    fn decoding_is_t_x_over_q_rounded_and_dropping_divides_by_the_last_prime() {
        for plain_bits in [1, 20, 40] {
            let (level, moduli, q) = small_level(plain_bits);
            let t = 1u128 << plain_bits;
            let last = u128::from(moduli[1]);
            for x in samples(q) {
                let residues = moduli.iter().map(|&p| (x % u128::from(p)) as u64);
                let exact = ((x * t + q / 2) / q) % t;
                assert_eq!(u128::from(level.decode(residues)), exact, "x = {x}");
                let mut words: Vec<u64> =
                    moduli.iter().map(|&p| (x % u128::from(p)) as u64).collect();
                level.drop_last(&mut words, &moduli);
                let rounded = (x + last / 2) / last;
                assert_eq!(
                    u128::from(words[0]),
                    rounded % u128::from(moduli[0]),
                    "x = {x}"
                );
            }
        }
    }
}
