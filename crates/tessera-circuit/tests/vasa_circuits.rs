//! The VASA benchmark circuits against plaintext implementations of the same functions: AES
//! and SHA-1 per SIMD instance against the core's AES and RustCrypto's SHA-1, the PSI circuits
//! against their plaintext functions and against the true set intersection.

use proptest::prelude::*;
use std::collections::BTreeSet;
use tessera_circuit::eval::evaluate;
use tessera_circuit::library::psi::{
    PhasingHashing, phasing_psi, phasing_psi_plain, scs_psi, scs_psi_plain, waksman,
    waksman_switches,
};
use tessera_circuit::library::vasa::{self, PSI_BITS, PSI_ELEMENTS, benchmark};
use tessera_core::{Backend, Block, FixedKeyAes, Prg};

fn bytes(bits: &[bool]) -> Vec<u8> {
    bits.chunks(8)
        .map(|c| c.iter().rev().fold(0u8, |a, &x| (a << 1) | u8::from(x)))
        .collect()
}

fn values(bits: &[bool], w: usize) -> Vec<u64> {
    bits.chunks(w)
        .map(|c| c.iter().rev().fold(0u64, |a, &x| (a << 1) | u64::from(x)))
        .collect()
}

fn bits(values: &[u64], w: u32) -> Vec<bool> {
    values
        .iter()
        .flat_map(|&v| (0..w).map(move |k| (v >> k) & 1 == 1))
        .collect()
}

/// ABY's AES as VASA ran it: 65 encryptions under keys the garbler expanded (5120 AND gates
/// each), every one equal to the core's AES under the key whose schedule the garbler input.
#[test]
fn aes128x65_is_65_aes_encryptions_under_expanded_keys() {
    let mut prg = Prg::from_seed_block(Block::new(1));
    let b = benchmark("aes128x65", &mut prg).unwrap().unwrap();
    assert_eq!(
        tessera_circuit::analysis::gate_counts(&b.circuit).and,
        65 * 5120
    );
    let out = evaluate(&b.circuit, &b.inputs).unwrap();
    let (keys, plains, ciphers) = (bytes(&b.inputs[0]), bytes(&b.inputs[1]), bytes(&out[0]));
    for i in 0..65 {
        let at = |v: &[u8], k: usize| Block::from_bytes(v[16 * k..16 * k + 16].try_into().unwrap());
        let key = at(&keys, 11 * i);
        let aes = FixedKeyAes::with_backend(key, Backend::Portable).unwrap();
        let schedule: Vec<Block> = (0..11).map(|r| at(&keys, 11 * i + r)).collect();
        assert_eq!(
            aes.round_keys().0.to_vec(),
            schedule,
            "instance {i}'s key schedule"
        );
        assert_eq!(
            aes.encrypt_block(at(&plains, i)),
            at(&ciphers, i),
            "instance {i}"
        );
    }
}

/// ABY's SHA-1 of a 512-bit input as VASA ran it: 63 digests of whole 64-byte messages (each
/// party half of each), equal to RustCrypto's SHA-1.
#[test]
fn sha1x63_is_63_sha1_digests_of_512_bit_messages() {
    use sha1::Digest;
    let mut prg = Prg::from_seed_block(Block::new(2));
    let b = benchmark("sha1x63", &mut prg).unwrap().unwrap();
    assert_eq!(
        tessera_circuit::analysis::gate_counts(&b.circuit).and,
        63 * 19_757
    );
    let out = evaluate(&b.circuit, &b.inputs).unwrap();
    let (firsts, lasts, digests) = (bytes(&b.inputs[0]), bytes(&b.inputs[1]), bytes(&out[0]));
    for i in 0..63 {
        let message = [&firsts[32 * i..32 * i + 32], &lasts[32 * i..32 * i + 32]].concat();
        let expect = sha1::Sha1::digest(&message);
        assert_eq!(&digests[20 * i..20 * i + 20], &expect[..], "instance {i}");
    }
}

#[test]
fn waksman_networks_permute() {
    let mut prg = Prg::from_seed_block(Block::new(3));
    for m in [1, 2, 3, 4, 5, 7, 8, 13, 2047] {
        let input: Vec<usize> = (0..m).collect();
        let mut swaps = 0;
        let out = waksman(input.clone(), &mut |a, b| {
            swaps += 1;
            if prg.random_block().lsb() {
                (b, a)
            } else {
                (a, b)
            }
        });
        assert_eq!(swaps, waksman_switches(m));
        let mut sorted = out.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, input, "m = {m}");
    }
    // m log m − m + 1 switches for powers of two (Waksman).
    assert_eq!(waksman_switches(8), 8 * 3 - 8 + 1);
}

#[test]
fn scs_psi_benchmark_finds_the_intersection() {
    let mut prg = Prg::from_seed_block(Block::new(4));
    let b = benchmark("scs-psi", &mut prg).unwrap().unwrap();
    let w = PSI_BITS as usize;
    let a = values(&b.inputs[0][..PSI_ELEMENTS * w], w);
    let controls = &b.inputs[0][PSI_ELEMENTS * w..];
    let e = values(&b.inputs[1], w);
    let out = values(&evaluate(&b.circuit, &b.inputs).unwrap()[0], w);
    assert_eq!(out, scs_psi_plain(&a, &e, controls));
    let found: BTreeSet<u64> = out.into_iter().filter(|&v| v != 0).collect();
    let truth: BTreeSet<u64> = a.iter().filter(|x| e.contains(x)).copied().collect();
    assert_eq!(found, truth);
    assert_eq!(truth.len(), PSI_ELEMENTS / 4);
}

#[test]
fn phasing_psi_benchmark_finds_the_intersection() {
    let h = vasa::phasing_parameters().unwrap();
    let mut prg = Prg::from_seed_block(Block::new(5));
    let (a, e) = vasa::psi_sets(&mut prg);
    let g_in = h.garbler_input(&a).unwrap();
    let (e_in, elements) = h.evaluator_input(&e, 99).unwrap();
    let c = phasing_psi(&h).unwrap();
    let out = evaluate(&c, &[g_in.clone(), e_in.clone()])
        .unwrap()
        .concat();
    assert_eq!(out, phasing_psi_plain(&h, &g_in, &e_in));
    let found: BTreeSet<u64> = out
        .iter()
        .zip(&elements)
        .filter(|(hit, _)| **hit)
        .filter_map(|(_, x)| *x)
        .collect();
    let truth: BTreeSet<u64> = a.iter().filter(|x| e.contains(x)).copied().collect();
    assert_eq!(found, truth);
    // Every element of the evaluator's set has a place: a bin or the stash.
    assert_eq!(elements.iter().flatten().count(), PSI_ELEMENTS);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn small_scs_psi_circuits_match_plaintext(log_n in 0u32..4, bits_w in 2u32..10, seed in any::<u128>()) {
        let n = 1usize << log_n;
        let c = scs_psi(n, bits_w).unwrap();
        let mut prg = Prg::from_seed_block(Block::new(seed));
        let mut draw = || -> Vec<u64> {
            let mut v: Vec<u64> = (0..n).map(|_| prg.random_block().low() % (1 << bits_w)).collect();
            v.sort_unstable();
            v
        };
        let (a, b) = (draw(), draw());
        let controls: Vec<bool> = (0..waksman_switches(2 * n - 1)).map(|_| prg.random_block().lsb()).collect();
        let mut g = bits(&a, bits_w);
        g.extend(&controls);
        let out = evaluate(&c, &[g, bits(&b, bits_w)]).unwrap();
        prop_assert_eq!(values(&out[0], bits_w as usize), scs_psi_plain(&a, &b, &controls));
    }

    #[test]
    fn small_phasing_circuits_match_plaintext(n in 2usize..40, seed in any::<u128>()) {
        let h = PhasingHashing::new(n, 16, 1.2, 2, [1, 2, 3]).unwrap();
        let mut prg = Prg::from_seed_block(Block::new(seed));
        let mut draw = || -> Vec<u64> {
            let mut s = BTreeSet::new();
            while s.len() < n {
                s.insert(prg.random_block().low() % (1 << 16));
            }
            s.into_iter().collect()
        };
        let (a, e) = (draw(), draw());
        let (Ok(g), Ok((ev, elements))) = (h.garbler_input(&a), h.evaluator_input(&e, 7)) else {
            // Hashing may fail for tiny tables; that is reported, not a wrong answer.
            return Ok(());
        };
        let out = evaluate(&phasing_psi(&h).unwrap(), &[g.clone(), ev.clone()]).unwrap().concat();
        prop_assert_eq!(&out, &phasing_psi_plain(&h, &g, &ev));
        let found: BTreeSet<u64> = out.iter().zip(&elements).filter(|(hit, _)| **hit).filter_map(|(_, x)| *x).collect();
        let truth: BTreeSet<u64> = a.iter().filter(|x| e.contains(x)).copied().collect();
        prop_assert_eq!(found, truth);
    }
}
