//! Known-answer tests (FIPS-197, NIST SP 800-38A) and backend agreement.

use super::*;
use proptest::prelude::*;

fn hex(s: &str) -> Block {
    Block::from_hex(s).unwrap()
}

/// FIPS-197 Appendix C.1 and SP 800-38A F.1.1 (ECB-AES128.Encrypt).
const VECTORS: &[(&str, &str, &str)] = &[
    (
        "000102030405060708090a0b0c0d0e0f",
        "00112233445566778899aabbccddeeff",
        "69c4e0d86a7b0430d8cdb78070b4c55a",
    ),
    (
        "2b7e151628aed2a6abf7158809cf4f3c",
        "6bc1bee22e409f96e93d7e117393172a",
        "3ad77bb40d7a3660a89ecaf32466ef97",
    ),
    (
        "2b7e151628aed2a6abf7158809cf4f3c",
        "ae2d8a571e03ac9c9eb76fac45af8e51",
        "f5d3d58503b9699de785895a96fdbaaf",
    ),
    (
        "2b7e151628aed2a6abf7158809cf4f3c",
        "30c81c46a35ce411e5fbc1191a0a52ef",
        "43b1cd7f598ece23881b00e3ed030688",
    ),
    (
        "2b7e151628aed2a6abf7158809cf4f3c",
        "f69f2445df4f9b17ad2b417be66c3710",
        "7b0c785e27e8ad3f8223207104725dd4",
    ),
    // FIPS-197 Appendix B.
    (
        "2b7e151628aed2a6abf7158809cf4f3c",
        "3243f6a8885a308d313198a2e0370734",
        "3925841d02dc09fbdc118597196a0b32",
    ),
];

#[test]
fn known_answers_on_every_backend() {
    for backend in Backend::available() {
        for &(k, p, c) in VECTORS {
            let aes = FixedKeyAes::with_backend(hex(k), backend).unwrap();
            assert_eq!(aes.encrypt_block(hex(p)), hex(c), "{backend}: key {k}");
            // The same vector inside batches of every tail shape.
            for len in [1usize, 7, 8, 9, 31, 33, 64] {
                let mut v = vec![hex(p); len];
                aes.encrypt_blocks(&mut v);
                assert!(v.iter().all(|&b| b == hex(c)), "{backend}: batch of {len}");
            }
            let mut v = vec![hex(p); 5];
            Aes::with_backend(backend)
                .unwrap()
                .encrypt_multi_key(&[hex(k)], &mut v);
            assert!(v.iter().all(|&b| b == hex(c)), "{backend}: multi-key");
        }
    }
}

#[test]
fn fips197_key_expansion_on_every_backend() {
    // FIPS-197 Appendix A.1: w[4..8] and w[40..44] for key 2b7e1516...
    for backend in Backend::available() {
        let rk = Aes::with_backend(backend)
            .unwrap()
            .expand_key(hex("2b7e151628aed2a6abf7158809cf4f3c"));
        assert_eq!(
            rk.0[1],
            hex("a0fafe1788542cb123a339392a6c7605"),
            "{backend}"
        );
        assert_eq!(
            rk.0[10],
            hex("d014f9a8c9ee2589e13f0cc8b6630ca6"),
            "{backend}"
        );
    }
}

#[test]
fn agrees_with_the_rustcrypto_aes_crate() {
    use ::aes::cipher::{BlockCipherEncrypt, KeyInit};
    let key = [7u8; 16];
    let reference = ::aes::Aes128::new(&key.into());
    let mut prg = crate::Prg::with_backend(Block::new(99), Backend::Portable).unwrap();
    let blocks = prg.random_blocks(100);
    for backend in Backend::available() {
        let mut ours = blocks.clone();
        FixedKeyAes::with_backend(Block::from_bytes(key), backend)
            .unwrap()
            .encrypt_blocks(&mut ours);
        for (b, o) in blocks.iter().zip(&ours) {
            let mut theirs = b.to_bytes().into();
            reference.encrypt_block(&mut theirs);
            assert_eq!(o.to_bytes(), <[u8; 16]>::from(theirs), "{backend}");
        }
    }
}

#[test]
fn backend_names_round_trip_and_unknown_is_an_error() {
    for b in Backend::ALL {
        assert_eq!(b.name().parse::<Backend>().unwrap(), b);
    }
    let e = "vaes1024".parse::<Backend>().unwrap_err().to_string();
    assert!(e.contains("vaes1024"), "{e}");
}

#[test]
fn unsupported_backends_are_refused_with_a_reason() {
    for b in Backend::ALL {
        if b.is_supported() {
            assert!(Aes::with_backend(b).is_ok());
        } else {
            let e = Aes::with_backend(b).unwrap_err().to_string();
            assert!(e.contains(b.name()) && e.contains("needs"), "{e}");
            println!("note: backend {b} not supported by this CPU; its tests were skipped");
        }
    }
    assert!(Backend::Portable.is_supported());
}

#[test]
fn vaes512_status_is_reported() {
    if !Backend::Vaes512.is_supported() {
        println!(
            "SKIPPED: vaes512 tests (this CPU lacks AVX-512F/BW + VAES; QEMU cannot emulate AVX-512)"
        );
    }
}

fn blocks(v: &[u128]) -> Vec<Block> {
    v.iter().map(|&x| Block::new(x)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn ecb_matches_portable(key in any::<u128>(), data in proptest::collection::vec(any::<u128>(), 0..140)) {
        let mut expect = blocks(&data);
        FixedKeyAes::with_backend(Block::new(key), Backend::Portable).unwrap().encrypt_blocks(&mut expect);
        for backend in Backend::available() {
            let mut got = blocks(&data);
            FixedKeyAes::with_backend(Block::new(key), backend).unwrap().encrypt_blocks(&mut got);
            prop_assert_eq!(&got, &expect, "backend {}", backend);
        }
    }

    #[test]
    fn counter_mode_is_ecb_of_the_counters(key in any::<u128>(), len in 0usize..140, high in any::<u64>(), low in any::<u64>(), near_wrap in any::<bool>()) {
        // The counters count in the low half, modulo 2^64, with no carry into the high half.
        let low = if near_wrap { u64::MAX - (low % 40) } else { low };
        let first = Block::from_halves(high, low);
        let mut expect: Vec<Block> = (0..len as u64).map(|k| Block::from_halves(high, low.wrapping_add(k))).collect();
        FixedKeyAes::with_backend(Block::new(key), Backend::Portable).unwrap().encrypt_blocks(&mut expect);
        for backend in Backend::available() {
            let mut got = vec![Block::ONES; len];
            FixedKeyAes::with_backend(Block::new(key), backend).unwrap().encrypt_counter(first, &mut got);
            prop_assert_eq!(&got, &expect, "backend {}", backend);
        }
    }

    #[test]
    fn key_expansion_matches_portable(keys in proptest::collection::vec(any::<u128>(), 0..45)) {
        let keys = blocks(&keys);
        let mut expect = vec![RoundKeys::default(); keys.len()];
        Aes::with_backend(Backend::Portable).unwrap().expand_keys(&keys, &mut expect);
        for backend in Backend::available() {
            let mut got = vec![RoundKeys::default(); keys.len()];
            Aes::with_backend(backend).unwrap().expand_keys(&keys, &mut got);
            prop_assert_eq!(&got, &expect, "backend {}", backend);
        }
    }

    #[test]
    fn multi_key_matches_one_key_at_a_time(
        keys in proptest::collection::vec(any::<u128>(), 1..40),
        per_key in 1usize..5,
        seed in any::<u128>(),
    ) {
        let keys = blocks(&keys);
        let data: Vec<Block> = (0..keys.len() * per_key).map(|i| Block::new(seed ^ (i as u128 * 0x9e37_79b9))).collect();
        let mut expect = data.clone();
        for (k, chunk) in keys.iter().zip(expect.chunks_mut(per_key)) {
            FixedKeyAes::with_backend(*k, Backend::Portable).unwrap().encrypt_blocks(chunk);
        }
        for backend in Backend::available() {
            let mut got = data.clone();
            Aes::with_backend(backend).unwrap().encrypt_multi_key(&keys, &mut got);
            prop_assert_eq!(&got, &expect, "backend {}", backend);
        }
    }
}

/// CI runs these tests under QEMU with `TESSERA_AES_BACKEND=vaes256`: make sure that backend is
/// really the one in use, rather than silently falling back.
#[test]
fn forced_backend_is_the_active_one() {
    match std::env::var(BACKEND_ENV) {
        Ok(v) if !v.is_empty() => {
            let forced: Backend = v.parse().unwrap();
            assert!(
                forced.is_supported(),
                "{BACKEND_ENV}={v}, but this CPU lacks it"
            );
            assert_eq!(Backend::from_env(), Ok(Some(forced)));
            assert_eq!(Backend::active(), forced);
            assert_eq!(FixedKeyAes::new(Block::ZERO).backend(), forced);
            println!("active AES backend (forced): {forced}");
        }
        _ => println!("active AES backend (detected): {}", Backend::active()),
    }
}
