//! Parameters: the ring degree, the RNS primes of the ciphertext modulus, the plaintext modulus
//! 2^ℓ, and the bound that keeps them at 128-bit security.

use crate::Error;
use crate::arith::is_prime;

/// The largest ciphertext modulus, in bits, for 128-bit classical security at each ring degree
/// with a ternary secret and error of standard deviation about 3.2: the Homomorphic Encryption
/// Security Standard (Albrecht et al., 2018, §5.4, Table 1, the row for 128 bits; the same bounds
/// SEAL and Cheetah use).
pub const SECURE_128: [(usize, u32); 6] = [
    (1024, 27),
    (2048, 54),
    (4096, 109),
    (8192, 218),
    (16384, 438),
    (32768, 881),
];

/// What parameters to make: the ring Z[X]/(X^N + 1) of `degree` N, one NTT-friendly prime of
/// each of `prime_bits` (the largest below 2^bits that is 1 modulo 2N, distinct), and the
/// plaintext modulus 2^`plain_bits`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSpec {
    /// The ring degree N.
    pub degree: usize,
    /// The size of each prime of the ciphertext modulus, in the order they are dropped last
    /// to first.
    pub prime_bits: Vec<u32>,
    /// ℓ: the plaintext modulus is 2^ℓ, the ring of the secret sharing (Cheetah §2.3: no
    /// conversion between a prime plaintext modulus and Z_2^ℓ).
    pub plain_bits: u32,
}

impl ParamSpec {
    /// The parameters for shares in Z_2^ℓ: N = 4096 with a 109-bit modulus (primes of 49 and
    /// 60 bits) up to ℓ = 32, as Cheetah's for its ℓ = 37; N = 8192 with 200 bits (40, 40, 60,
    /// 60) above, where a product's error and its flooding need about 2ℓ + 70 bits. The small
    /// primes come first: they are the ones an answer keeps when the others are dropped.
    pub fn for_ring(plain_bits: u32) -> Self {
        if plain_bits <= 32 {
            ParamSpec {
                degree: 4096,
                prime_bits: vec![49, 60],
                plain_bits,
            }
        } else {
            ParamSpec {
                degree: 8192,
                prime_bits: vec![40, 40, 60, 60],
                plain_bits,
            }
        }
    }
}

/// Checked parameters: every prime found and the whole modulus within [`SECURE_128`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    degree: usize,
    moduli: Vec<u64>,
    plain_bits: u32,
}

impl Params {
    /// The parameters `spec` describes, or why they cannot be made.
    pub fn new(spec: &ParamSpec) -> Result<Self, Error> {
        let max = SECURE_128
            .iter()
            .find(|&&(n, _)| n == spec.degree)
            .map(|&(_, bits)| bits)
            .ok_or(Error::Degree(spec.degree))?;
        if !(1..=64).contains(&spec.plain_bits) {
            return Err(Error::PlainBits(spec.plain_bits));
        }
        if spec.prime_bits.is_empty() {
            return Err(Error::Length {
                what: "primes",
                expected: 1,
                got: 0,
            });
        }
        let mut moduli: Vec<u64> = Vec::with_capacity(spec.prime_bits.len());
        for &bits in &spec.prime_bits {
            moduli.push(ntt_prime(spec.degree, bits, &moduli)?);
        }
        let bits = crate::arith::Wide::product(&moduli).bits();
        if bits > max {
            return Err(Error::Insecure {
                degree: spec.degree,
                bits,
                max,
            });
        }
        Ok(Params {
            degree: spec.degree,
            moduli,
            plain_bits: spec.plain_bits,
        })
    }

    /// The ring degree N.
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// The primes of the ciphertext modulus.
    pub fn moduli(&self) -> &[u64] {
        &self.moduli
    }

    /// ℓ, where the plaintext modulus is 2^ℓ.
    pub fn plain_bits(&self) -> u32 {
        self.plain_bits
    }

    /// The bits of the product of the first `level` primes.
    pub fn modulus_bits(&self, level: usize) -> u32 {
        crate::arith::Wide::product(&self.moduli[..level.min(self.moduli.len())]).bits()
    }
}

/// The largest prime below 2^`bits` that is 1 modulo 2N and not among `taken`.
fn ntt_prime(degree: usize, bits: u32, taken: &[u64]) -> Result<u64, Error> {
    if !(20..=62).contains(&bits) {
        return Err(Error::PrimeBits(bits));
    }
    let order = 2 * degree as u64;
    let top = (1u64 << bits) - 1;
    let floor = 1u64 << (bits - 1);
    let mut candidate = top - (top - 1) % order;
    while candidate > floor {
        if is_prime(candidate) && !taken.contains(&candidate) {
            return Ok(candidate);
        }
        candidate -= order;
    }
    Err(Error::NoPrime { bits, order })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_are_ntt_friendly_distinct_and_of_their_size() {
        for plain_bits in [32, 64] {
            let params = Params::new(&ParamSpec::for_ring(plain_bits)).unwrap();
            let order = 2 * params.degree() as u64;
            let spec = ParamSpec::for_ring(plain_bits);
            for (p, bits) in params.moduli().iter().zip(&spec.prime_bits) {
                assert!(is_prime(*p));
                assert_eq!(p % order, 1);
                assert_eq!(64 - p.leading_zeros(), *bits);
                assert_eq!(params.moduli().iter().filter(|&q| q == p).count(), 1);
            }
        }
    }

    #[test]
    fn parameters_beyond_the_standard_are_refused() {
        let spec = ParamSpec {
            degree: 4096,
            prime_bits: vec![60, 50],
            plain_bits: 32,
        };
        assert_eq!(
            Params::new(&spec),
            Err(Error::Insecure {
                degree: 4096,
                bits: 110,
                max: 109
            })
        );
        let spec = ParamSpec {
            degree: 3000,
            prime_bits: vec![40],
            plain_bits: 32,
        };
        assert_eq!(Params::new(&spec), Err(Error::Degree(3000)));
        let spec = ParamSpec {
            degree: 4096,
            prime_bits: vec![63],
            plain_bits: 32,
        };
        assert_eq!(Params::new(&spec), Err(Error::PrimeBits(63)));
        let spec = ParamSpec {
            degree: 4096,
            prime_bits: vec![40],
            plain_bits: 65,
        };
        assert_eq!(Params::new(&spec), Err(Error::PlainBits(65)));
    }
}
