//! The distributions of secrets and errors, drawn from a cryptographic PRG in constant time
//! where the value is secret.

use rand_core::RngCore;
use tessera_core::Prg;

/// η of the centred binomial error: the difference of two sums of η fair bits, variance η/2 =
/// 10.5 (σ ≈ 3.24, above the 3.19 of the Homomorphic Encryption Security Standard's tables).
pub const ERROR_ETA: u32 = 21;

/// The largest magnitude of an error coefficient.
pub const ERROR_BOUND: i64 = ERROR_ETA as i64;

/// `n` coefficients uniform in {-1, 0, 1}: two bits per draw, the draw 3 rejected (which
/// depends only on discarded randomness).
pub fn ternary(prg: &mut Prg, n: usize) -> Vec<i64> {
    let mut out = Vec::with_capacity(n);
    let mut word = 0u64;
    let mut left = 0;
    while out.len() < n {
        if left == 0 {
            word = prg.next_u64();
            left = 32;
        }
        let two = (word & 3) as i64;
        word >>= 2;
        left -= 1;
        if two != 3 {
            out.push(two - 1);
        }
    }
    out
}

/// `n` coefficients of the centred binomial distribution with η = [`ERROR_ETA`].
pub fn error(prg: &mut Prg, n: usize) -> Vec<i64> {
    let mask = (1u64 << ERROR_ETA) - 1;
    (0..n)
        .map(|_| {
            let w = prg.next_u64();
            i64::from((w & mask).count_ones()) - i64::from(((w >> 32) & mask).count_ones())
        })
        .collect()
}

/// `n` coefficients uniform in [-2^bits, 2^bits) for `bits <= 120`: noise that floods a
/// smaller one statistically (the distance is at most the smaller's bound over 2^bits per
/// coefficient).
pub fn flooding(prg: &mut Prg, n: usize, bits: u32) -> Vec<i128> {
    debug_assert!(bits <= 120);
    let mask = (1u128 << (bits + 1)) - 1;
    (0..n)
        .map(|_| {
            let w = (u128::from(prg.next_u64()) << 64) | u128::from(prg.next_u64());
            (w & mask) as i128 - (1i128 << bits)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_core::Block;

    #[test]
    fn distributions_have_their_support_and_moments() {
        let mut prg = Prg::from_seed_block(Block::from(7u128));
        let n = 1 << 16;
        let t = ternary(&mut prg, n);
        assert!(t.iter().all(|c| (-1..=1).contains(c)));
        let zeros = t.iter().filter(|&&c| c == 0).count() as f64 / n as f64;
        assert!((zeros - 1.0 / 3.0).abs() < 0.01, "{zeros}");
        let e = error(&mut prg, n);
        assert!(e.iter().all(|c| c.abs() <= ERROR_BOUND));
        let mean = e.iter().sum::<i64>() as f64 / n as f64;
        let var = e.iter().map(|&c| (c as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(
            mean.abs() < 0.05 && (var - 10.5).abs() < 0.3,
            "{mean} {var}"
        );
        let f = flooding(&mut prg, n, 40);
        assert!(
            f.iter()
                .all(|c| (-(1i128 << 40)..(1i128 << 40)).contains(c))
        );
        assert!(f.iter().any(|&c| c < -(1i128 << 39)) && f.iter().any(|&c| c > 1i128 << 39));
    }
}
