//! What the tests share: keys from a seed, products in the clear.

use tessera_core::{Block, Prg};
use tessera_he::linear::Encoding;
use tessera_he::{Context, ParamSpec, PublicKey, SecretKey};

/// The parameters for ℓ, a key pair, and the PRG that made them.
pub struct Keys {
    pub ctx: Context,
    pub sk: SecretKey,
    pub pk: PublicKey,
    pub prg: Prg,
}

/// [`Keys`] for ℓ = `plain_bits` from `seed`.
pub fn keys(plain_bits: u32, seed: u128) -> Keys {
    let ctx = Context::new(&ParamSpec::for_ring(plain_bits)).unwrap();
    let mut prg = Prg::from_seed_block(Block::new(seed));
    let sk = SecretKey::generate(&ctx, &mut prg);
    let pk = PublicKey::generate(&ctx, &sk, &mut prg);
    Keys { ctx, sk, pk, prg }
}

/// `a · b` in Z_2^64[X]/(X^N + 1).
pub fn negacyclic(a: &[u64], b: &[i64]) -> Vec<u64> {
    let n = a.len();
    let mut c = vec![0u64; n];
    for (j, &bj) in b.iter().enumerate().filter(|(_, b)| **b != 0) {
        for (i, &ai) in a.iter().enumerate() {
            let t = ai.wrapping_mul(bj as u64);
            if i + j < n {
                c[i + j] = c[i + j].wrapping_add(t)
            } else {
                c[i + j - n] = c[i + j - n].wrapping_sub(t)
            }
        }
    }
    c
}

/// W·x in the clear mod 2^64 through the encoding's own blocks: each output polynomial the sum
/// of its terms' negacyclic products, each output read where `output_places` says, every
/// output read exactly once.
pub fn through_blocks<E: Encoding>(e: &E, x: &[u64], w: &[i64]) -> Vec<u64> {
    let mut y = vec![None; e.outputs()];
    let n = e.input(x, 0).len();
    for block in 0..e.output_blocks() {
        let mut sum = vec![0u64; n];
        for (i, k) in e.output_terms(block) {
            let product = negacyclic(&e.input(x, i), &e.weight(w, k));
            sum.iter_mut()
                .zip(product)
                .for_each(|(s, p)| *s = s.wrapping_add(p));
        }
        for (c, out) in e.output_places(block) {
            assert!(y[out].is_none(), "output {out} read twice");
            y[out] = Some(sum[c]);
        }
    }
    y.into_iter()
        .map(|v| v.expect("every output read"))
        .collect()
}
