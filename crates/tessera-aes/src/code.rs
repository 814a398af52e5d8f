//! Reed-Solomon codes of length 255 over GF(2^8): a vector of `k` field elements is the
//! polynomial of degree below `k` that it defines, evaluated at the 255 non-zero elements
//! g^0, ..., g^254 (g = 0x03, a generator of the multiplicative group). The code is MDS: two
//! codewords differ in at least 256 − k positions, which is what makes MiniMac's MACs sound
//! (Damgård, Zakarias, TCC 2013; their "Fast Oblivious AES", §2).
//!
//! Two encodings of the same code ([`Encoding`]): systematic (the data are the values at the
//! first `k` points; MiniMac's choice where it multiplies, Protocol 1) and by coefficients
//! (the data are the polynomial's coefficients; the seed's choice for Protocol 2). Both encode
//! and decode by precomputed matrices ([`tessera_core::gf256::Matrix`]): constant-time for
//! secret data (the dealer), by faster table products for public data (openings, public
//! constants). Systematic encoding costs (255 − k)·k products and decoding the same (re-encoding the
//! data part and comparing); coefficient encoding costs 255·k and decoding 255² (an inverse
//! transform), so with matrices the systematic form is the faster one: `tessera oaes bench
//! --codes` measures both. An FFT over the 255 points (255 = 3·5·17) is not implemented:
//! with k = 240 the systematic matrices need only 15·240 products per codeword.

use std::sync::OnceLock;
use tessera_core::gf256::{self, Matrix};

/// The code length: the number of non-zero elements of GF(2^8).
pub const N: usize = 255;
/// The generator of GF(2^8)* whose powers are the evaluation points.
pub const GENERATOR: u8 = 0x03;

/// How data map to codewords.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// The data are the codeword's first `k` entries.
    Systematic,
    /// The data are the coefficients of the polynomial that the codeword evaluates.
    Coefficients,
}

/// A Reed-Solomon code of length [`N`] and dimension `k`, with one encoding.
#[derive(Debug)]
pub struct ReedSolomon {
    k: usize,
    encoding: Encoding,
    /// Systematic: the (N − k)×k parity map. Coefficients: the N×k evaluation map.
    encode: Matrix,
    /// Coefficients only: the N×N inverse transform (rows k.. must vanish on codewords).
    decode: Option<Matrix>,
}

/// The evaluation point g^j.
pub fn point(j: usize) -> u8 {
    gf256::pow(GENERATOR, (j % N) as u8)
}

impl ReedSolomon {
    /// The code of dimension `k` (1 ≤ k < N) with the given encoding, built once per process.
    ///
    /// # Panics
    /// If `k` is out of range.
    pub fn get(k: usize, encoding: Encoding) -> &'static ReedSolomon {
        assert!((1..N).contains(&k), "dimension {k} out of range");
        static CODES: OnceLock<std::sync::Mutex<Vec<&'static ReedSolomon>>> = OnceLock::new();
        let codes = CODES.get_or_init(Default::default);
        let mut codes = codes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = codes.iter().find(|c| c.k == k && c.encoding == encoding) {
            return c;
        }
        let code: &'static ReedSolomon = Box::leak(Box::new(ReedSolomon::build(k, encoding)));
        codes.push(code);
        code
    }

    fn build(k: usize, encoding: Encoding) -> ReedSolomon {
        match encoding {
            Encoding::Systematic => {
                // Lagrange basis at x_0..x_{k-1}, barycentric form:
                // L_i(x) = w_i · ℓ(x) / (x − x_i), ℓ(x) = Π_m (x − x_m), w_i = 1/Π_{m≠i}(x_i − x_m).
                let xs: Vec<u8> = (0..k).map(point).collect();
                let w: Vec<u8> = (0..k)
                    .map(|i| {
                        let p = (0..k)
                            .filter(|&m| m != i)
                            .fold(1, |p, m| gf256::mul(p, xs[i] ^ xs[m]));
                        gf256::inv(p)
                    })
                    .collect();
                let ell: Vec<u8> = (k..N)
                    .map(|j| xs.iter().fold(1, |p, &x| gf256::mul(p, point(j) ^ x)))
                    .collect();
                let encode = Matrix::new(N - k, k, |r, i| {
                    let x = point(k + r);
                    gf256::mul(gf256::mul(w[i], ell[r]), gf256::inv(x ^ xs[i]))
                });
                ReedSolomon {
                    k,
                    encoding,
                    encode,
                    decode: None,
                }
            }
            Encoding::Coefficients => {
                let encode = Matrix::new(N, k, |j, i| gf256::pow(point(j), (i % N) as u8));
                // Σ_j c_j x_j^{-i}: the inverse transform (255 is odd, so 1/255 = 1).
                let decode = Matrix::new(N, N, |i, j| gf256::inv(gf256::pow(point(j), i as u8)));
                ReedSolomon {
                    k,
                    encoding,
                    encode,
                    decode: Some(decode),
                }
            }
        }
    }

    /// The dimension: data entries per codeword.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The encoding.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The minimum distance, N − k + 1.
    pub fn distance(&self) -> usize {
        N - self.k + 1
    }

    /// The codeword of `data` (`k` entries), constant-time in `data`.
    ///
    /// # Panics
    /// If `data` does not have `k` entries.
    pub fn encode(&self, data: &[u8], out: &mut [u8; N]) {
        self.encode_with(data, out, Matrix::apply)
    }

    /// The codeword of **public** `data`: faster, by table look-ups that depend on `data`
    /// ([`Matrix::apply_public`]).
    ///
    /// # Panics
    /// If `data` does not have `k` entries.
    pub fn encode_public(&self, data: &[u8], out: &mut [u8; N]) {
        self.encode_with(data, out, Matrix::apply_public)
    }

    fn encode_with(&self, data: &[u8], out: &mut [u8; N], apply: fn(&Matrix, &[u8], &mut [u8])) {
        match self.encoding {
            Encoding::Systematic => {
                out[..self.k].copy_from_slice(data);
                let (d, p) = out.split_at_mut(self.k);
                apply(&self.encode, d, p);
            }
            Encoding::Coefficients => apply(&self.encode, data, out),
        }
    }

    /// The data of the **public** `word` (`k` entries into `out`), or `None` where `word` is
    /// not a codeword. Decoding is only ever done on opened values, so it uses the faster
    /// look-up products ([`Matrix::apply_public`]).
    ///
    /// # Panics
    /// If `out` does not have `k` entries.
    pub fn decode(&self, word: &[u8; N], out: &mut [u8]) -> Option<()> {
        match (&self.decode, self.encoding) {
            (None, _) | (_, Encoding::Systematic) => {
                let mut parity = [0u8; N];
                let parity = &mut parity[..N - self.k];
                self.encode.apply_public(&word[..self.k], parity);
                out.copy_from_slice(&word[..self.k]);
                (parity[..] == word[self.k..]).then_some(())
            }
            (Some(decode), Encoding::Coefficients) => {
                let mut coefficients = [0u8; N];
                decode.apply_public(word, &mut coefficients);
                out.copy_from_slice(&coefficients[..self.k]);
                coefficients[self.k..].iter().all(|&c| c == 0).then_some(())
            }
        }
    }

    /// Whether `word` is a codeword.
    pub fn contains(&self, word: &[u8; N]) -> bool {
        let mut data = [0u8; N];
        self.decode(word, &mut data[..self.k]).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::RngCore;
    use tessera_core::{Block, Prg};

    #[test]
    fn both_encodings_give_one_mds_code() {
        let mut prg = Prg::from_seed_block(Block::from(1u128));
        for k in [1, 85, 239, 240] {
            let sys = ReedSolomon::get(k, Encoding::Systematic);
            let coef = ReedSolomon::get(k, Encoding::Coefficients);
            for _ in 0..20 {
                let mut d = vec![0u8; k];
                prg.fill_bytes(&mut d);
                for code in [sys, coef] {
                    let mut c = [0u8; N];
                    code.encode(&d, &mut c);
                    let mut back = vec![0u8; k];
                    assert!(code.decode(&c, &mut back).is_some(), "k {k}");
                    assert_eq!(back, d);
                    // The same code: the other encoding accepts it.
                    assert!(sys.contains(&c) && coef.contains(&c));
                    // Fewer than d changed positions leave the code.
                    let mut bad = c;
                    bad[(d[0] as usize) % N] ^= 1 + (d[k - 1] % 255);
                    assert!(!sys.contains(&bad) && !coef.contains(&bad));
                }
            }
            // A non-zero codeword has weight at least N − k + 1.
            let mut d = vec![0u8; k];
            d[0] = 1;
            let mut c = [0u8; N];
            coef.encode(&d, &mut c);
            assert!(c.iter().filter(|&&x| x != 0).count() >= sys.distance());
        }
    }

    #[test]
    fn coefficient_encoding_is_polynomial_evaluation() {
        let code = ReedSolomon::get(3, Encoding::Coefficients);
        let mut c = [0u8; N];
        code.encode(&[5, 7, 9], &mut c);
        for (j, &cj) in c.iter().enumerate() {
            let x = point(j);
            assert_eq!(cj, 5 ^ gf256::mul(7, x) ^ gf256::mul(9, gf256::mul(x, x)));
        }
    }
}
