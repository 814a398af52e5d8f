//! Encryption, the server's products by plaintext polynomials and what is sent back, checked
//! against the negacyclic product modulo 2^ℓ computed in the clear.

use rand_core::RngCore;
use tessera_core::{Block, Failure, Fault, Prg};
use tessera_he::{
    Ciphertext, Context, Error, Form, ParamSpec, Plain, PublicKey, RnsPoly, SecretKey,
    SeededCiphertext, decrypt, decrypt_answer, encrypt,
};

/// A kernel: `(position, weight)` pairs, the rest zero.
type Sparse = Vec<(usize, i64)>;

fn mask(bits: u32) -> u64 {
    if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

fn random_message(prg: &mut Prg, n: usize, bits: u32) -> Vec<u64> {
    (0..n).map(|_| prg.next_u64() & mask(bits)).collect()
}

fn random_kernel(prg: &mut Prg, n: usize, taps: usize, weight_bits: u32) -> Sparse {
    (0..taps)
        .map(|_| {
            let position = (prg.next_u64() % n as u64) as usize;
            let magnitude = (prg.next_u64() % (1 << weight_bits)) as i64;
            (
                position,
                if prg.next_u64() & 1 == 1 {
                    -magnitude
                } else {
                    magnitude
                },
            )
        })
        .collect()
}

/// `acc += m · w` in Z_2^bits[X]/(X^N + 1).
fn negacyclic_accumulate(acc: &mut [u64], m: &[u64], w: &Sparse) {
    let n = m.len();
    for &(k, weight) in w {
        for (i, &mi) in m.iter().enumerate() {
            let term = mi.wrapping_mul(weight as u64);
            let j = i + k;
            if j < n {
                acc[j] = acc[j].wrapping_add(term);
            } else {
                acc[j - n] = acc[j - n].wrapping_sub(term);
            }
        }
    }
}

fn dense(ctx: &Context, w: &Sparse) -> RnsPoly {
    let mut coefficients = vec![0i64; ctx.degree()];
    for &(k, weight) in w {
        coefficients[k] += weight;
    }
    let mut poly = RnsPoly::from_signed(ctx, ctx.top_level(), &coefficients);
    poly.to_evaluations(ctx);
    poly
}

struct Case {
    plain_bits: u32,
    inputs: usize,
    taps: usize,
    weight_bits: u32,
    flood_bits: u32,
    primes_sent: usize,
}

/// Runs Cheetah's exchange once: the client encrypts `inputs` messages, the server multiplies
/// each by a kernel, sums, subtracts its share r, re-randomises, drops primes; returns what the
/// client decrypts and what it should be.
fn exchange(case: &Case, seed: u128) -> (Vec<u64>, Vec<u64>) {
    let ctx = Context::new(&ParamSpec::for_ring(case.plain_bits)).unwrap();
    let n = ctx.degree();
    let mut prg = Prg::from_seed_block(Block::new(seed));
    let sk = SecretKey::generate(&ctx, &mut prg);
    let pk = PublicKey::generate(&ctx, &sk, &mut prg);
    let mut want = vec![0u64; n];
    let mut acc = Ciphertext::zero(&ctx, ctx.top_level(), Form::Evaluations);
    for _ in 0..case.inputs {
        let m = random_message(&mut prg, n, case.plain_bits);
        let w = random_kernel(&mut prg, n, case.taps, case.weight_bits);
        negacyclic_accumulate(&mut want, &m, &w);
        let sent = encrypt(&ctx, &sk, &m, &mut prg).unwrap();
        let received =
            SeededCiphertext::from_parts(&ctx, sent.body().to_vec(), sent.seed()).unwrap();
        acc.mul_plain_accumulate(&ctx, &received.expand(&ctx), &dense(&ctx, &w));
    }
    let r = random_message(&mut prg, n, case.plain_bits);
    let minus_r: Vec<u64> = r
        .iter()
        .map(|&x| x.wrapping_neg() & mask(case.plain_bits))
        .collect();
    let all: Vec<usize> = (0..n).collect();
    let minus_r: Vec<(usize, u64)> = minus_r.into_iter().enumerate().collect();
    acc.add_plain(&ctx, &minus_r).unwrap();
    acc.rerandomize(&ctx, &pk, &mut prg, (case.flood_bits, &all));
    acc.drop_to(&ctx, case.primes_sent);
    let all: Vec<usize> = (0..n).collect();
    let words = acc.answer_words(&ctx, &all);
    let got = decrypt_answer(&ctx, &sk, case.primes_sent, words, &all).unwrap();
    for (w, r) in want.iter_mut().zip(&r) {
        *w = w.wrapping_sub(*r) & mask(case.plain_bits);
    }
    (got, want)
}

#[test]
fn products_by_plaintexts_decrypt_to_the_product_modulo_two_to_the_l() {
    let cases = [
        // ℓ = 32, N = 4096: primes of 49 and 60 bits, the 49-bit one sent back.
        Case {
            plain_bits: 32,
            inputs: 3,
            taps: 64,
            weight_bits: 12,
            flood_bits: 70,
            primes_sent: 1,
        },
        Case {
            plain_bits: 20,
            inputs: 2,
            taps: 16,
            weight_bits: 8,
            flood_bits: 60,
            primes_sent: 2,
        },
        // ℓ = 64, N = 8192: 200 bits, two 40-bit primes sent back.
        Case {
            plain_bits: 64,
            inputs: 2,
            taps: 48,
            weight_bits: 17,
            flood_bits: 100,
            primes_sent: 2,
        },
        Case {
            plain_bits: 48,
            inputs: 1,
            taps: 8,
            weight_bits: 4,
            flood_bits: 80,
            primes_sent: 3,
        },
    ];
    for (i, case) in cases.iter().enumerate() {
        let (got, want) = exchange(case, 100 + i as u128);
        let wrong = got.iter().zip(&want).filter(|(a, b)| a != b).count();
        assert_eq!(wrong, 0, "case {i}: {wrong} coefficients wrong");
    }
}

#[test]
fn flooding_beyond_the_noise_budget_breaks_decryption() {
    // q/(2t) is about 2^76 at ℓ = 32 before primes are dropped: noise of 2^80 swamps it.
    let case = Case {
        plain_bits: 32,
        inputs: 1,
        taps: 4,
        weight_bits: 4,
        flood_bits: 80,
        primes_sent: 2,
    };
    let (got, want) = exchange(&case, 7);
    let wrong = got.iter().zip(&want).filter(|(a, b)| a != b).count();
    assert!(wrong > want.len() / 2, "only {wrong} wrong");
}

#[test]
fn a_wrong_key_decrypts_to_noise() {
    let ctx = Context::new(&ParamSpec::for_ring(32)).unwrap();
    let mut prg = Prg::from_seed_block(Block::new(11));
    let sk = SecretKey::generate(&ctx, &mut prg);
    let other = SecretKey::generate(&ctx, &mut prg);
    let m = random_message(&mut prg, ctx.degree(), 32);
    let ct = encrypt(&ctx, &sk, &m, &mut prg).unwrap().expand(&ctx);
    assert_eq!(decrypt(&ctx, &sk, &ct), m);
    let wrong = decrypt(&ctx, &other, &ct)
        .iter()
        .zip(&m)
        .filter(|(a, b)| a != b)
        .count();
    assert!(wrong > ctx.degree() * 99 / 100);
}

#[test]
fn words_from_a_peer_are_checked_for_length_and_range() {
    let ctx = Context::new(&ParamSpec::for_ring(32)).unwrap();
    let mut prg = Prg::from_seed_block(Block::new(12));
    let sk = SecretKey::generate(&ctx, &mut prg);
    let sent = encrypt(&ctx, &sk, &[1, 2, 3], &mut prg).unwrap();
    let n = ctx.degree();
    let fault = |e: Error| {
        assert!(matches!(e, Error::Malformed { .. }), "{e}");
        e.fault()
    };
    let mut short = sent.body().to_vec();
    short.pop();
    assert_eq!(
        fault(SeededCiphertext::from_parts(&ctx, short, sent.seed()).unwrap_err()),
        Fault::PeerMisbehaved
    );
    for position in [0, n - 1, n, 2 * n - 1] {
        let mut high = sent.body().to_vec();
        high[position] = ctx.moduli()[position / n];
        assert_eq!(
            fault(SeededCiphertext::from_parts(&ctx, high, sent.seed()).unwrap_err()),
            Fault::PeerMisbehaved
        );
    }
    // An answer of the whole ciphertext: c1's rows, then c0's at every coefficient.
    let all: Vec<usize> = (0..n).collect();
    let words = sent.expand(&ctx).answer_words(&ctx, &all);
    assert_eq!(words.len(), 4 * n);
    for (primes, len) in [
        (2, 4 * n - 1),
        (2, 4 * n + 1),
        (1, 4 * n),
        (0, 0),
        (3, 6 * n),
    ] {
        let e = decrypt_answer(&ctx, &sk, primes, vec![0; len], &all).unwrap_err();
        assert_eq!(fault(e), Fault::PeerMisbehaved);
    }
    let mut high = words.clone();
    high[3 * n] = u64::MAX;
    assert_eq!(
        fault(decrypt_answer(&ctx, &sk, 2, high, &all).unwrap_err()),
        Fault::PeerMisbehaved
    );
    let opened = decrypt_answer(&ctx, &sk, 2, words, &all).unwrap();
    assert_eq!(&opened[..4], &[1, 2, 3, 0]);
}

#[test]
fn plaintexts_beyond_the_ring_are_refused() {
    let ctx = Context::new(&ParamSpec::for_ring(20)).unwrap();
    let mut prg = Prg::from_seed_block(Block::new(13));
    let sk = SecretKey::generate(&ctx, &mut prg);
    assert!(matches!(
        encrypt(&ctx, &sk, &[1 << 20], &mut prg),
        Err(Error::Length { .. })
    ));
    let too_long = vec![0; ctx.degree() + 1];
    assert!(matches!(
        encrypt(&ctx, &sk, &too_long, &mut prg),
        Err(Error::Length { .. })
    ));
}

/// The answer plan for the worst kernel of its norm: every weight at the largest magnitude,
/// all of one sign, on every input; decryption holds with the flooding it says, and a norm
/// beyond the modulus' room is refused.
#[test]
fn answer_plans_hold_for_the_worst_kernel_of_their_norm() {
    use tessera_he::{AnswerPlan, FLOOD_SECURITY};
    for (plain_bits, taps, weight_bits, primes_sent) in
        [(32u32, 512usize, 14u32, 1usize), (64, 256, 18, 2)]
    {
        let ctx = Context::new(&ParamSpec::for_ring(plain_bits)).unwrap();
        let n = ctx.degree();
        let l1 = (taps as u128) << weight_bits;
        let plan = AnswerPlan::new(&ctx, l1).unwrap();
        assert_eq!(plan.primes, primes_sent, "ℓ = {plain_bits}: {plan:?}");
        assert!(plan.flood_bits >= FLOOD_SECURITY + weight_bits + taps.ilog2());
        let mut prg = Prg::from_seed_block(Block::new(u128::from(plain_bits)));
        let sk = SecretKey::generate(&ctx, &mut prg);
        let pk = PublicKey::generate(&ctx, &sk, &mut prg);
        let m = random_message(&mut prg, n, plain_bits);
        let w: Sparse = (0..taps).map(|k| (k, (1i64 << weight_bits) - 1)).collect();
        let mut want = vec![0u64; n];
        negacyclic_accumulate(&mut want, &m, &w);
        let ct = encrypt(&ctx, &sk, &m, &mut prg).unwrap().expand(&ctx);
        let mut acc = Ciphertext::zero(&ctx, ctx.top_level(), Form::Evaluations);
        acc.mul_plain_accumulate(&ctx, &ct, &dense(&ctx, &w));
        let all: Vec<usize> = (0..n).collect();
        acc.rerandomize(&ctx, &pk, &mut prg, (plan.flood_bits, &all));
        acc.drop_to(&ctx, plan.primes);
        let kept: Vec<usize> = (0..n).step_by(3).collect();
        let got =
            decrypt_answer(&ctx, &sk, plan.primes, acc.answer_words(&ctx, &kept), &kept).unwrap();
        for (g, &j) in got.iter().zip(&kept) {
            assert_eq!(
                *g,
                want[j] & mask(plain_bits),
                "ℓ = {plain_bits}, coefficient {j}"
            );
        }
        let mut words = acc.answer_words(&ctx, &kept);
        words.pop();
        assert!(matches!(
            decrypt_answer(&ctx, &sk, plan.primes, words, &kept),
            Err(Error::Malformed { .. })
        ));
    }
    let ctx = Context::new(&ParamSpec::for_ring(32)).unwrap();
    assert!(matches!(
        AnswerPlan::new(&ctx, 1 << 40),
        Err(Error::Budget { .. })
    ));
}

/// The lazily reduced sum of products equals one product accumulated after another, word for
/// word, over more terms than one 128-bit run holds (N = 4096 with its 60-bit prime, and N =
/// 8192 with four primes).
#[test]
fn a_sum_of_products_equals_products_accumulated_one_by_one() {
    for plain_bits in [32, 64] {
        let ctx = Context::new(&ParamSpec::for_ring(plain_bits)).unwrap();
        let mut prg = Prg::from_seed_block(Block::new(77));
        let sk = SecretKey::generate(&ctx, &mut prg);
        let n = ctx.degree();
        let terms = 300;
        let cts: Vec<Ciphertext> = (0..terms)
            .map(|_| {
                let m = random_message(&mut prg, n, plain_bits);
                encrypt(&ctx, &sk, &m, &mut prg).unwrap().expand(&ctx)
            })
            .collect();
        let plains: Vec<RnsPoly> = (0..terms)
            .map(|_| RnsPoly::uniform(&ctx, ctx.top_level(), &mut prg, Form::Evaluations))
            .collect();
        let mut want = Ciphertext::zero(&ctx, ctx.top_level(), Form::Evaluations);
        for (ct, plain) in cts.iter().zip(&plains) {
            want.mul_plain_accumulate(&ctx, ct, plain);
        }
        let pairs: Vec<(&Ciphertext, Plain<'_>)> = cts
            .iter()
            .zip(&plains)
            .map(|(ct, p)| (ct, Plain::Poly(p)))
            .collect();
        let got = Ciphertext::sum_of_products(&ctx, ctx.top_level(), &pairs);
        assert_eq!(got, want, "ℓ = {plain_bits}");
        // Constants, as they are, equal their polynomials transformed.
        let constants: Vec<i64> = (0..terms as i64).map(|k| (k - 150) * 7919).collect();
        let polys: Vec<RnsPoly> = constants
            .iter()
            .map(|&v| {
                let mut p = RnsPoly::from_signed(&ctx, ctx.top_level(), &[v]);
                p.to_evaluations(&ctx);
                p
            })
            .collect();
        let as_polys: Vec<(&Ciphertext, Plain<'_>)> = cts
            .iter()
            .zip(&polys)
            .map(|(ct, p)| (ct, Plain::Poly(p)))
            .collect();
        let as_constants: Vec<(&Ciphertext, Plain<'_>)> = cts
            .iter()
            .zip(&constants)
            .map(|(ct, &v)| (ct, Plain::Constant(v)))
            .collect();
        assert_eq!(
            Ciphertext::sum_of_products(&ctx, ctx.top_level(), &as_constants),
            Ciphertext::sum_of_products(&ctx, ctx.top_level(), &as_polys),
            "ℓ = {plain_bits}"
        );
    }
}

/// Signed coefficients reduce to their residues modulo each prime, small ones (the
/// branch-free path) and any beyond a prime alike, and the polynomial is zero past them.
#[test]
fn signed_coefficients_reduce_to_their_residues() {
    let ctx = Context::new(&ParamSpec::for_ring(32)).unwrap();
    let small = [-1i64, 0, 5, -2000, 1 << 40];
    let large = [-1i64, 0, i64::MIN, i64::MAX, -(1 << 62), 1 << 61];
    for coefficients in [&small[..], &large[..]] {
        let poly = RnsPoly::from_signed(&ctx, ctx.top_level(), coefficients);
        for (i, &p) in ctx.moduli().iter().enumerate() {
            let row = poly.row(i);
            for (j, &c) in coefficients.iter().enumerate() {
                assert_eq!(
                    row[j],
                    i128::from(c).rem_euclid(i128::from(p)) as u64,
                    "{c} mod {p}"
                );
            }
            assert!(row[coefficients.len()..].iter().all(|&w| w == 0));
            assert_eq!(row.len(), ctx.degree());
        }
    }
}
