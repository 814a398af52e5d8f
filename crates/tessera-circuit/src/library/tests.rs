//! The circuit library against plaintext implementations (the core's AES, RustCrypto's SHA
//! compression functions, Rust integers) and published vectors.

use super::*;
use crate::analysis::gate_counts;
use crate::eval::{bits_from_bytes, bits_from_hex, bits_to_hex, bytes_from_bits, evaluate};
use crate::simd::simd;
use proptest::prelude::*;
use sha2::digest::generic_array::GenericArray;
use tessera_core::{Backend, Block, FixedKeyAes};

fn eval_bytes(c: &Circuit, inputs: &[&[u8]]) -> Vec<u8> {
    let bits: Vec<Vec<bool>> = inputs.iter().map(|b| bits_from_bytes(b)).collect();
    bytes_from_bits(&evaluate(c, &bits).unwrap()[0])
}

fn be_bytes<const N: usize>(words: &[u32; N]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_be_bytes()).collect()
}

const SHA256_IV_WORDS: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];
use super::sha::SHA1_IV;

/// Chained compressions over the padded message give RustCrypto's digest, for lengths around
/// the block and padding boundaries.
#[test]
fn chained_sha256_compressions_give_the_digest() {
    use sha2::Digest;
    let c = sha256_compress().unwrap();
    assert_eq!(SHA256_IV.to_vec(), be_bytes(&SHA256_IV_WORDS));
    for len in [0usize, 3, 55, 56, 63, 64, 119, 120, 200] {
        let message: Vec<u8> = (0..len).map(|k| (k * 131 + 7) as u8).collect();
        let whole = len / 64 * 64;
        let mut state = SHA256_IV.to_vec();
        let blocks = message[..whole].chunks_exact(64).map(|b| b.to_vec()).chain(
            sha256_final_blocks(&message[whole..], len as u64)
                .into_iter()
                .map(|b| b.to_vec()),
        );
        for block in blocks {
            state = eval_bytes(&c, &[&block, &state]);
        }
        assert_eq!(
            state,
            sha2::Sha256::digest(&message).to_vec(),
            "length {len}"
        );
    }
}

fn abc_block() -> [u8; 64] {
    let mut block = [0u8; 64];
    block[..3].copy_from_slice(b"abc");
    block[3] = 0x80;
    block[63] = 24;
    block
}

#[test]
fn aes128_is_fips197_with_6400_and_gates() {
    let c = builtin("aes128").unwrap().unwrap();
    assert_eq!(gate_counts(&c).and, 6400);
    let out = evaluate(
        &c,
        &[
            bits_from_hex("000102030405060708090a0b0c0d0e0f", 128).unwrap(),
            bits_from_hex("00112233445566778899aabbccddeeff", 128).unwrap(),
        ],
    )
    .unwrap();
    assert_eq!(bits_to_hex(&out[0]), "69c4e0d86a7b0430d8cdb78070b4c55a");
}

/// FIPS-197 Appendix A.1: the expansion of the key 2b7e1516 28aed2a6 abf71588 09cf4f3c, w[0..44].
const FIPS197_A1_WORDS: [u32; 44] = [
    0x2b7e1516, 0x28aed2a6, 0xabf71588, 0x09cf4f3c, 0xa0fafe17, 0x88542cb1, 0x23a33939, 0x2a6c7605,
    0xf2c295f2, 0x7a96b943, 0x5935807a, 0x7359f67f, 0x3d80477d, 0x4716fe3e, 0x1e237e44, 0x6d7a883b,
    0xef44a541, 0xa8525b7f, 0xb671253b, 0xdb0bad00, 0xd4d1c6f8, 0x7c839d87, 0xcaf2b8bc, 0x11f915bc,
    0x6d88a37a, 0x110b3efd, 0xdbf98641, 0xca0093fd, 0x4e54f70e, 0x5f5fc9f3, 0x84a64fb2, 0x4ea6dc4f,
    0xead27321, 0xb58dbad2, 0x312bf560, 0x7f8d292f, 0xac7766f3, 0x19fadc21, 0x28d12941, 0x575c006e,
    0xd014f9a8, 0xc9ee2589, 0xe13f0cc8, 0xb6630ca6,
];

/// The round keys of `key` from the core's key schedule, as the circuit's first input.
fn round_key_bytes(key: Block) -> Vec<u8> {
    let aes = FixedKeyAes::with_backend(key, Backend::Portable).unwrap();
    aes.round_keys()
        .0
        .iter()
        .flat_map(|k| k.to_bytes())
        .collect()
}

/// ABY's AES (VASA Table 8): 5120 AND gates; under FIPS-197 A.1's expanded key (which the
/// core's key schedule also gives) it encrypts Appendix B's plaintext to Appendix B's
/// ciphertext.
#[test]
fn aes128_expanded_is_fips197_with_5120_and_gates() {
    let c = builtin("aes128-expanded").unwrap().unwrap();
    assert_eq!(gate_counts(&c).and, 5120);
    let expanded = be_bytes(&FIPS197_A1_WORDS);
    let key = bits_from_hex("2b7e151628aed2a6abf7158809cf4f3c", 128).unwrap();
    let key = Block::from_bytes(bytes_from_bits(&key).try_into().unwrap());
    assert_eq!(round_key_bytes(key), expanded);
    let pt = bits_from_hex("3243f6a8885a308d313198a2e0370734", 128).unwrap();
    let out = evaluate(&c, &[bits_from_bytes(&expanded), pt]).unwrap();
    assert_eq!(bits_to_hex(&out[0]), "3925841d02dc09fbdc118597196a0b32");
}

/// ABY's SHA-1 (VASA Table 8): the digest of a 64-byte message, half from each input, equals
/// RustCrypto's, for the message of 64 zero bytes, of 64 'a's and of bytes 0..64; its AND
/// gates are counted.
#[test]
fn sha1_512_gives_the_digest_of_its_512_bit_message() {
    use sha1::Digest;
    let c = builtin("sha1-512").unwrap().unwrap();
    // Two compressions of 11 215 less what the constants fold: the first's initial value, the
    // second's message words.
    assert_eq!(gate_counts(&c).and, 19_757);
    let messages: [[u8; 64]; 3] = [[0; 64], [b'a'; 64], std::array::from_fn(|i| i as u8)];
    for m in messages {
        let want = sha1::Sha1::digest(m).to_vec();
        assert_eq!(eval_bytes(&c, &[&m[..32], &m[32..]]), want);
    }
}

#[test]
fn sha_compressions_give_the_abc_digests() {
    for c in [
        sha256_compress().unwrap(),
        sha256_compress_with(Adders::LowDepth).unwrap(),
    ] {
        assert_eq!(
            eval_bytes(&c, &[&abc_block(), &be_bytes(&SHA256_IV_WORDS)]),
            bytes_from_bits(
                &bits_from_hex(
                    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                    256
                )
                .unwrap()
            )
        );
    }
    let c = sha1_compress().unwrap();
    assert_eq!(
        eval_bytes(&c, &[&abc_block(), &be_bytes(&SHA1_IV)]),
        bytes_from_bits(&bits_from_hex("a9993e364706816aba3e25717850c26c9cd0d89d", 160).unwrap())
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]
    #[test]
    fn aes128_matches_the_core(key in any::<u128>(), pt in any::<u128>()) {
        let c = aes128().unwrap();
        let (k, p) = (Block::new(key), Block::new(pt));
        let expect = FixedKeyAes::with_backend(k, Backend::Portable).unwrap().encrypt_block(p);
        prop_assert_eq!(eval_bytes(&c, &[&k.to_bytes(), &p.to_bytes()]), expect.to_bytes().to_vec());
    }

    #[test]
    fn aes128_expanded_matches_the_core(key in any::<u128>(), pt in any::<u128>()) {
        let (k, p) = (Block::new(key), Block::new(pt));
        let expect = FixedKeyAes::with_backend(k, Backend::Portable).unwrap().encrypt_block(p);
        let got = eval_bytes(&aes128_expanded().unwrap(), &[&round_key_bytes(k), &p.to_bytes()]);
        prop_assert_eq!(got, expect.to_bytes().to_vec());
    }

    #[test]
    fn sha1_512_matches_rustcrypto(m in proptest::collection::vec(any::<u8>(), 64)) {
        use sha1::Digest;
        let got = eval_bytes(&sha1_512().unwrap(), &[&m[..32], &m[32..]]);
        prop_assert_eq!(got, sha1::Sha1::digest(&m).to_vec());
    }

    #[test]
    fn sha_compressions_match_rustcrypto(block in proptest::collection::vec(any::<u8>(), 64), h in any::<[u32; 8]>()) {
        let mut state = h;
        sha2::compress256(&mut state, &[GenericArray::clone_from_slice(&block)]);
        prop_assert_eq!(eval_bytes(&sha256_compress().unwrap(), &[&block, &be_bytes(&h)]), be_bytes(&state));
        let mut state: [u32; 5] = std::array::from_fn(|i| h[i]);
        let h1 = state;
        sha1::compress(&mut state, &[GenericArray::clone_from_slice(&block)]);
        prop_assert_eq!(eval_bytes(&sha1_compress().unwrap(), &[&block, &be_bytes(&h1)]), be_bytes(&state));
    }

    #[test]
    fn arithmetic_builtins_match_rust(n in 1u32..=64, a in any::<u64>(), b in any::<u64>()) {
        let m = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let (a, b) = (a & m, b & m);
        let s = |v: u64| ((v << (64 - n)) as i64) >> (64 - n);
        let expect = [
            ("add", a.wrapping_add(b) & m),
            ("sub", a.wrapping_sub(b) & m),
            ("mul", a.wrapping_mul(b) & m),
            ("lt", u64::from(a < b)),
            ("lts", u64::from(s(a) < s(b))),
            ("eq", u64::from(a == b)),
        ];
        let bits = |v: u64| (0..n).map(|i| (v >> i) & 1 == 1).collect::<Vec<_>>();
        for (op, want) in expect {
            let c = builtin(&format!("{op}{n}")).unwrap().unwrap();
            let out = evaluate(&c, &[bits(a), bits(b)]).unwrap();
            let got = out[0].iter().enumerate().fold(0u64, |acc, (i, &x)| acc | (u64::from(x) << i));
            prop_assert_eq!(got, want, "{}{}", op, n);
        }
    }
}

#[test]
fn unknown_names_are_none() {
    for name in ["aes", "add0", "add4097", "foo12", "12", "", "addx"] {
        assert!(builtin(name).is_none(), "{name}");
    }
}

#[test]
fn simd_copies_compute_independently() {
    let c = builtin("add8").unwrap().unwrap();
    let k = 5;
    let wide = simd(&c, k).unwrap();
    assert_eq!(gate_counts(&wide).and, k * gate_counts(&c).and);
    let a: Vec<u8> = (0..k as u8)
        .map(|i| 37u8.wrapping_mul(i).wrapping_add(200))
        .collect();
    let b: Vec<u8> = (0..k as u8)
        .map(|i| 91u8.wrapping_mul(i).wrapping_add(3))
        .collect();
    let out = eval_bytes(&wide, &[&a, &b]);
    for i in 0..k {
        assert_eq!(out[i], a[i].wrapping_add(b[i]), "copy {i}");
    }
    assert!(simd(&c, 0).is_err());
}

/// The low-depth SHA-256 cuts the AND-depth of the ripple-carry one (1607) to 518.
#[test]
fn low_depth_sha256_has_the_depth_it_states() {
    use crate::analysis::and_depth;
    assert_eq!(and_depth(&sha256_compress().unwrap()), 1607);
    let c = builtin("sha256-lowdepth").unwrap().unwrap();
    assert_eq!(and_depth(&c), 518);
    assert_eq!(gate_counts(&c).and, 51720);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// The parallel-prefix adder and the carry-save sum equal ripple-carry addition, at
    /// AND-depth 1 + ⌈log₂(n − 1)⌉ for the adder.
    #[test]
    fn prefix_and_carry_save_adders_add(n in 1usize..70, seed in any::<u64>()) {
        use crate::analysis::and_depth;
        use crate::builder::Builder;
        let mut g = Builder::new();
        let (a, b, c) = (g.input(n as u32), g.input(n as u32), g.input(n as u32));
        let pp = g.add_prefix(&a, &b);
        let ripple = g.add(&a, &b);
        let many = g.add_many(&[&a, &b, &c]);
        let ab = g.add(&a, &b);
        let abc = g.add(&ab, &c);
        let circuit = g.finish(&[pp, ripple, many, abc]).unwrap();
        let mut prg = tessera_core::Prg::from_seed_block(Block::new(u128::from(seed)));
        let x: Vec<Vec<bool>> = (0..3)
            .map(|_| (0..n).map(|_| prg.random_block().lsb()).collect())
            .collect();
        let out = evaluate(&circuit, &x).unwrap();
        prop_assert_eq!(&out[0], &out[1]);
        prop_assert_eq!(&out[2], &out[3]);
        let mut g = Builder::new();
        let (a, b) = (g.input(n as u32), g.input(n as u32));
        let pp = g.add_prefix(&a, &b);
        let depth = and_depth(&g.finish(&[pp]).unwrap());
        let levels = if n <= 2 { 0 } else { usize::BITS - (n - 2).leading_zeros() };
        prop_assert_eq!(depth, u32::from(n > 1) + levels);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// The sum's most significant bit equals the adder's, at the adder's AND-depth and with
    /// fewer than 3n AND gates.
    #[test]
    fn sum_msb_is_the_adders_top_bit(n in 1usize..70, seed in any::<u64>()) {
        use crate::analysis::and_depth;
        let sum = builtin(&format!("addpp{n}")).unwrap().unwrap();
        let msb = builtin(&format!("msbadd{n}")).unwrap().unwrap();
        let mut prg = tessera_core::Prg::from_seed_block(Block::new(u128::from(seed)));
        for _ in 0..8 {
            let x: Vec<Vec<bool>> = (0..2)
                .map(|_| (0..n).map(|_| prg.random_block().lsb()).collect())
                .collect();
            let full = evaluate(&sum, &x).unwrap();
            prop_assert_eq!(evaluate(&msb, &x).unwrap(), vec![vec![full[0][n - 1]]]);
        }
        prop_assert!(and_depth(&msb) <= and_depth(&sum));
        prop_assert!(gate_counts(&msb).and < 3 * n);
    }
}

/// `values` as circuit bits, `b` bits each, least significant first.
fn value_bits(values: &[u64], b: u32) -> Vec<bool> {
    values
        .iter()
        .flat_map(|&v| (0..b).map(move |k| (v >> k) & 1 == 1))
        .collect()
}

/// Circuit bits back to `b`-bit values.
fn bits_values(bits: &[bool], b: u32) -> Vec<u64> {
    bits.chunks(b as usize)
        .map(|c| c.iter().rev().fold(0, |acc, &x| (acc << 1) | u64::from(x)))
        .collect()
}

fn random_values(prg: &mut tessera_core::Prg, n: usize, b: u32) -> Vec<u64> {
    let mask = u64::MAX >> (64 - b);
    (0..n).map(|_| prg.random_block().low() & mask).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]
    /// BioMatch, MExp and MVMul on small parameters against Rust integers.
    #[test]
    fn ultrasfe_benchmarks_match_plaintext(seed in any::<u64>()) {
        let mut prg = tessera_core::Prg::from_seed_block(Block::new(u128::from(seed)));
        // BioMatch: 5 entries of 3 coordinates, 16 and 64 bits.
        for b in [16u32, 64] {
            let (n, d) = (5, 3);
            let c = ultrasfe::biomatch(n, d, b).unwrap();
            let db = random_values(&mut prg, n * d, b);
            let s = random_values(&mut prg, d, b);
            let mask = u64::MAX >> (64 - b);
            let expect = (0..n)
                .map(|e| {
                    (0..d).fold(0u64, |acc, j| {
                        let diff = s[j].wrapping_sub(db[e * d + j]) & mask;
                        acc.wrapping_add(diff.wrapping_mul(diff)) & mask
                    })
                })
                .min()
                .unwrap();
            let out = evaluate(&c, &[value_bits(&db, b), value_bits(&s, b)]).unwrap();
            prop_assert_eq!(bits_values(&out[0], b), vec![expect], "biomatch b = {}", b);
        }
        // MExp: 3 instances of 32-bit values, one with exponent 0 and one with base 0.
        let c = ultrasfe::mexp(3, 32).unwrap();
        let mut bases = random_values(&mut prg, 3, 32);
        let mut exps = random_values(&mut prg, 3, 32);
        (bases[1], exps[2]) = (0, 0);
        let m = ultrasfe::MEXP_MODULUS;
        let modpow = |x: u64, e: u64| (0..32).rev().fold(1u64, |acc, k| {
            let sq = acc * acc % m;
            if (e >> k) & 1 == 1 { sq * (x % m) % m } else { sq }
        });
        let expect: Vec<u64> = bases.iter().zip(&exps).map(|(&x, &e)| modpow(x, e)).collect();
        let out = evaluate(&c, &[value_bits(&bases, 32), value_bits(&exps, 32)]).unwrap();
        prop_assert_eq!(bits_values(&out[0], 32), expect);
        // MVMul: 3 × 4 times 4, 64 bits.
        let c = ultrasfe::mvmul(3, 4, 64).unwrap();
        let mat = random_values(&mut prg, 12, 64);
        let vec = random_values(&mut prg, 4, 64);
        let expect: Vec<u64> = (0..3)
            .map(|r| (0..4).fold(0u64, |acc, k| acc.wrapping_add(mat[r * 4 + k].wrapping_mul(vec[k]))))
            .collect();
        let out = evaluate(&c, &[value_bits(&mat, 64), value_bits(&vec, 64)]).unwrap();
        prop_assert_eq!(bits_values(&out[0], 64), expect);
    }
}

/// BioMatch's exact distance of one entry: Σ (s_j − e_j)² as (the low 128 bits, the bits above).
fn exact_distance(sample: &[u64], entry: &[u64]) -> (u128, u128) {
    sample
        .iter()
        .zip(entry)
        .fold((0, 0), |(low, high), (&s, &e)| {
            let diff = u128::from(s.abs_diff(e));
            let (sum, carry) = low.overflowing_add(diff * diff);
            (sum, high + u128::from(carry))
        })
}

/// Exact BioMatch on n entries of d b-bit coordinates against the smallest exact distance,
/// compared bit for bit at the circuit's 2b + ⌈log₂ d⌉ output bits.
fn check_exact_biomatch(db: &[u64], sample: &[u64], b: u32) -> Result<(), TestCaseError> {
    let d = sample.len();
    let config = ultrasfe::BioMatch {
        entries: db.len() / d,
        degree: d,
        bits: b,
        distance: ultrasfe::Distance::Exact,
    };
    let c = config.circuit().unwrap();
    let width = config.output_bits();
    prop_assert_eq!(c.outputs.clone(), vec![width as u32]);
    let (high, low) = db
        .chunks(d)
        .map(|e| exact_distance(sample, e))
        .map(|(l, h)| (h, l))
        .min()
        .unwrap();
    let expect: Vec<bool> = (0..width)
        .map(|k| {
            if k < 128 {
                (low >> k) & 1 == 1
            } else {
                (high >> (k - 128)) & 1 == 1
            }
        })
        .collect();
    let out = evaluate(&c, &[value_bits(db, b), value_bits(sample, b)]).unwrap();
    prop_assert_eq!(&out[0], &expect, "exact biomatch b = {}, d = {}", b, d);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]
    /// Exact BioMatch on random entries, 16 and 64 bits, against u128 arithmetic.
    #[test]
    fn exact_biomatch_matches_plaintext(seed in any::<u64>()) {
        let mut prg = tessera_core::Prg::from_seed_block(Block::new(u128::from(seed)));
        for (b, d) in [(16u32, 3), (64, 4), (64, 1)] {
            let db = random_values(&mut prg, 5 * d, b);
            let s = random_values(&mut prg, d, b);
            check_exact_biomatch(&db, &s, b)?;
        }
    }
}

/// Exact BioMatch at the extremes: distances near 4 · (2^64 − 1)², which need all 130 bits and
/// differ only above bit 127, differences of both signs, a zero distance.
#[test]
fn exact_biomatch_keeps_the_top_bits() {
    let max = u64::MAX;
    let sample = [0, max, 0, max];
    let farthest = [max, 0, max, 0];
    let second = [max, 0, max, 1];
    check_exact_biomatch(&farthest, &sample, 64).unwrap();
    check_exact_biomatch(&[farthest, second].concat(), &sample, 64).unwrap();
    check_exact_biomatch(&[second, farthest].concat(), &sample, 64).unwrap();
    check_exact_biomatch(&[farthest, sample, second].concat(), &sample, 64).unwrap();
    let wrapped = ultrasfe::biomatch(1, 4, 64).unwrap();
    let out = evaluate(
        &wrapped,
        &[value_bits(&farthest, 64), value_bits(&sample, 64)],
    )
    .unwrap();
    assert_eq!(
        bits_values(&out[0], 64),
        vec![4],
        "4 · (2^64 − 1)² wraps to 4"
    );
}

/// The level-width circuits have `depth` layers of exactly `width` AND gates and nothing else.
#[test]
fn level_width_circuits_are_full_and_layers() {
    use crate::analysis::and_depth;
    for (w, depth) in [(2, 3), (16, 10), (100, 7)] {
        let c = ultrasfe::levels(w, depth, 1).unwrap();
        let counts = gate_counts(&c);
        assert_eq!((counts.and, counts.xor), (w * depth, 0), "width {w}");
        assert_eq!(and_depth(&c), depth as u32);
        assert_eq!(c.outputs, vec![w as u32]);
    }
    assert_eq!(
        builtin("levels16").unwrap().unwrap().gates.len(),
        16 * LEVELS_DEPTH
    );
}
