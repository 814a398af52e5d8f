//! Arithmetic modulo one word-sized prime, and the few multi-word integers the parameters need
//! (the product of the primes, its quotient by the plaintext modulus).

/// `a · b mod p` through a 128-bit product (set-up and tests; the hot loops use [`Shoup`]).
pub(crate) fn mul_mod(a: u64, b: u64, p: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) % u128::from(p)) as u64
}

/// `b^e mod p` by squaring.
pub(crate) fn pow_mod(mut b: u64, mut e: u64, p: u64) -> u64 {
    let mut r = 1 % p;
    b %= p;
    while e > 0 {
        if e & 1 == 1 {
            r = mul_mod(r, b, p);
        }
        b = mul_mod(b, b, p);
        e >>= 1;
    }
    r
}

/// The inverse of `a` modulo the prime `p` (Fermat).
pub(crate) fn inv_mod(a: u64, p: u64) -> u64 {
    pow_mod(a, p - 2, p)
}

/// Miller-Rabin with the first twelve primes as bases: deterministic below 3.3·10^24, so for
/// every 64-bit `n`.
pub(crate) fn is_prime(n: u64) -> bool {
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    if n < 2 {
        return false;
    }
    if let Some(&b) = BASES.iter().find(|&&b| n.is_multiple_of(b)) {
        return n == b;
    }
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    BASES.iter().all(|&a| {
        let mut x = pow_mod(a, d, n);
        if x == 1 || x == n - 1 {
            return true;
        }
        (1..s).any(|_| {
            x = mul_mod(x, x, n);
            x == n - 1
        })
    })
}

/// Multiplication by a constant known ahead (Shoup's method, as in Harvey's NTT): one
/// high-half product gives the quotient, the result lies in `[0, p)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shoup {
    value: u64,
    quotient: u64,
}

impl Shoup {
    /// The constant `value < p` prepared for multiplications modulo `p`.
    pub(crate) fn new(value: u64, p: u64) -> Self {
        debug_assert!(value < p);
        let quotient = ((u128::from(value) << 64) / u128::from(p)) as u64;
        Shoup { value, quotient }
    }

    /// `x · value mod p` for any word `x`.
    #[inline(always)]
    pub(crate) fn mul(self, x: u64, p: u64) -> u64 {
        let q = ((u128::from(x) * u128::from(self.quotient)) >> 64) as u64;
        let r = x.wrapping_mul(self.value).wrapping_sub(q.wrapping_mul(p));
        if r >= p { r - p } else { r }
    }
}

/// `(a + b) mod p` for `a, b < p`.
#[inline(always)]
pub(crate) fn add_mod(a: u64, b: u64, p: u64) -> u64 {
    let s = a + b;
    if s >= p { s - p } else { s }
}

/// `(a - b) mod p` for `a, b < p`.
#[inline(always)]
pub(crate) fn sub_mod(a: u64, b: u64, p: u64) -> u64 {
    if a >= b { a - b } else { a + p - b }
}

/// A signed word reduced into `[0, p)`: no division for one below p in magnitude (errors,
/// weights, ternary keys), one word division otherwise.
#[inline(always)]
pub(crate) fn reduce_signed(x: i64, p: u64) -> u64 {
    let m = x.unsigned_abs();
    let r = if m < p { m } else { m % p };
    if x < 0 && r != 0 { p - r } else { r }
}

/// Reduction of wide values modulo one prime without division: a word by Shoup's product with
/// 1, and the high word's 2^64 by the prepared 2^64 mod p.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reducer {
    one: Shoup,
    two_64: Shoup,
}

impl Reducer {
    /// The reducer modulo `p`.
    pub(crate) fn new(p: u64) -> Self {
        let two_64 = ((1u128 << 64) % u128::from(p)) as u64;
        Reducer {
            one: Shoup::new(1, p),
            two_64: Shoup::new(two_64, p),
        }
    }

    /// `x mod p` for any word.
    #[inline(always)]
    pub(crate) fn word(self, x: u64, p: u64) -> u64 {
        self.one.mul(x, p)
    }

    /// `x mod p` for any 128-bit value.
    #[inline(always)]
    pub(crate) fn wide(self, x: u128, p: u64) -> u64 {
        add_mod(
            self.two_64.mul((x >> 64) as u64, p),
            self.one.mul(x as u64, p),
            p,
        )
    }

    /// `x mod p` for a signed value below 2^127 in magnitude.
    #[inline(always)]
    pub(crate) fn signed_wide(self, x: i128, p: u64) -> u64 {
        let r = self.wide(x.unsigned_abs(), p);
        if x < 0 { sub_mod(0, r, p) } else { r }
    }
}

/// A non-negative integer of several 64-bit words, least significant first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Wide(Vec<u64>);

impl Wide {
    /// The product of the words.
    pub(crate) fn product(factors: &[u64]) -> Self {
        let mut words = vec![1u64];
        for &f in factors {
            let mut carry = 0u128;
            for w in &mut words {
                let v = u128::from(*w) * u128::from(f) + carry;
                *w = v as u64;
                carry = v >> 64;
            }
            if carry > 0 {
                words.push(carry as u64);
            }
        }
        Wide(words)
    }

    /// The integer shifted right by `bits < 64 · words`.
    pub(crate) fn shr(&self, bits: u32) -> Self {
        let (skip, shift) = ((bits / 64) as usize, bits % 64);
        let words = &self.0[skip.min(self.0.len())..];
        let shifted = (0..words.len())
            .map(|i| {
                let hi = words.get(i + 1).copied().unwrap_or(0);
                if shift == 0 {
                    words[i]
                } else {
                    (words[i] >> shift) | (hi << (64 - shift))
                }
            })
            .collect();
        Wide(shifted)
    }

    /// The integer modulo `2^bits` for `bits <= 64`, as a word.
    pub(crate) fn low_bits(&self, bits: u32) -> u64 {
        let w = self.0.first().copied().unwrap_or(0);
        if bits >= 64 {
            w
        } else {
            w & ((1u64 << bits) - 1)
        }
    }

    /// The integer modulo the word `p`.
    pub(crate) fn rem(&self, p: u64) -> u64 {
        self.0
            .iter()
            .rev()
            .fold(0u128, |r, &w| ((r << 64) | u128::from(w)) % u128::from(p)) as u64
    }

    /// The number of significant bits.
    pub(crate) fn bits(&self) -> u32 {
        let top = self.0.iter().rposition(|&w| w != 0);
        top.map_or(0, |i| 64 * i as u32 + 64 - self.0[i].leading_zeros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_and_inverses() {
        let p = (1u64 << 61) - 1;
        assert!(is_prime(p));
        assert!(!is_prime(p - 2));
        assert!(!is_prime(3_215_031_751)); // a strong pseudoprime to bases 2, 3, 5, 7
        assert_eq!(mul_mod(inv_mod(12345, p), 12345, p), 1);
        let q = (1u64 << 49) - 81;
        let r = Reducer::new(q);
        for x in [
            0i128,
            1,
            -1,
            i128::from(u64::MAX),
            -(1i128 << 100) + 12345,
            (1i128 << 120) - 1,
        ] {
            assert_eq!(
                r.signed_wide(x, q),
                x.rem_euclid(i128::from(q)) as u64,
                "{x}"
            );
        }
        for x in [0i64, 5, -5, i64::MIN, i64::MAX] {
            assert_eq!(
                reduce_signed(x, q),
                i128::from(x).rem_euclid(i128::from(q)) as u64
            );
            assert_eq!(r.word(x as u64, q), (x as u64) % q);
        }
        let c = Shoup::new(987_654_321_987, p);
        for x in [0u64, 1, p - 1, u64::MAX, 0x1234_5678_9abc_def0] {
            assert_eq!(c.mul(x, p), mul_mod(x % p, 987_654_321_987, p));
        }
    }

    #[test]
    fn wide_integers() {
        let w = Wide::product(&[u64::MAX, u64::MAX, 3]);
        // (2^64 - 1)^2 * 3 = 3 * 2^128 - 6 * 2^64 + 3
        assert_eq!(w.0, vec![3, u64::MAX - 5, 2]);
        assert_eq!(w.bits(), 130);
        assert_eq!(w.shr(64).0, vec![u64::MAX - 5, 2]);
        assert_eq!(w.shr(1).low_bits(64), (u64::MAX - 5) << 63 | 1);
        assert_eq!(w.low_bits(2), 3);
        assert_eq!(w.rem(1_000_003), {
            let m = 1_000_003u128;
            let a = u128::from(u64::MAX) % m;
            ((a * a % m) * 3 % m) as u64
        });
    }
}
