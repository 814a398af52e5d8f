//! The project's reader and evaluator against the third-party Bristol circuits in
//! `../shared/circuits/bristol`, read in place by the tests marked `#[ignore]` (`.ci/run` runs
//! them with `--ignored`), and the one small file the repository keeps a copy of.

use std::path::PathBuf;
use tessera_circuit::analysis::{and_depth, gate_counts};
use tessera_circuit::bristol::{Format, read_file};
use tessera_circuit::eval::{bits_from_hex, bits_to_hex, evaluate};
use tessera_circuit::{Circuit, analysis};
use tessera_core::{Backend, Block, FixedKeyAes, Prg};

/// A file of ../shared/circuits/bristol, beside the clone; the tests that read one are marked
/// `#[ignore]` and run by `.ci/run` with `--ignored`, where a missing file fails them.
fn load(name: &str) -> (Circuit, Format) {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/circuits/bristol");
    read_file(&d.join(name)).unwrap()
}

/// The repository's copy of emp-tool's `bristol_format/adder_32bit.txt` (data/tests).
fn adder_32bit() -> Circuit {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/tests");
    read_file(&d.join("bristol-adder_32bit.txt")).unwrap().0
}

/// Bits of a byte string with each byte's bits most significant first, reversed over the
/// whole string: the order of the Bristol AES and SHA files (wire 0 is the last bit).
fn reversed_bits(bytes: &[u8]) -> Vec<bool> {
    let mut bits: Vec<bool> = bytes
        .iter()
        .flat_map(|b| (0..8).rev().map(move |i| (b >> i) & 1 == 1))
        .collect();
    bits.reverse();
    bits
}

fn from_reversed_bits(bits: &[bool]) -> Vec<u8> {
    let mut b = bits.to_vec();
    b.reverse();
    b.chunks(8)
        .map(|c| c.iter().fold(0u8, |acc, &x| (acc << 1) | u8::from(x)))
        .collect()
}

#[test]
#[ignore = "reads ../shared: .ci/run runs it with --ignored"]
fn every_file_parses_with_the_published_gate_counts() {
    // Counts from shared/circuits/bristol/SOURCE.txt.
    let expect = [
        (
            "bristol_format/AES-non-expanded.txt",
            Format::Old,
            6800,
            25124,
            1692,
        ),
        ("bristol_format/adder_32bit.txt", Format::Old, 127, 61, 187),
        ("bristol_format/sha-1.txt", Format::Old, 37300, 24166, 45135),
        (
            "bristol_format/sha-256.txt",
            Format::Old,
            22272,
            91780,
            2194,
        ),
        (
            "bristol_fashion/aes_128.txt",
            Format::Fashion,
            6400,
            28176,
            2087,
        ),
        (
            "bristol_fashion/aes_192.txt",
            Format::Fashion,
            7168,
            32080,
            2317,
        ),
        (
            "bristol_fashion/aes_256.txt",
            Format::Fashion,
            8832,
            39008,
            2826,
        ),
        (
            "bristol_fashion/sha256.txt",
            Format::Fashion,
            22573,
            110644,
            1856,
        ),
    ];
    for (name, format, and, xor, inv) in expect {
        let (c, f) = load(name);
        let n = gate_counts(&c);
        assert_eq!((f, n.and, n.xor, n.inv), (format, and, xor, inv), "{name}");
        assert!(and_depth(&c) > 0);
        assert_eq!(analysis::and_gates_per_layer(&c).iter().sum::<usize>(), and);
    }
}

#[test]
#[ignore = "reads ../shared: .ci/run runs it with --ignored"]
fn bristol_aes128_is_fips197_aes() {
    let (c, _) = load("bristol_fashion/aes_128.txt");
    let key = Block::from_hex("000102030405060708090a0b0c0d0e0f").unwrap();
    let pt = Block::from_hex("00112233445566778899aabbccddeeff").unwrap();
    let out = evaluate(
        &c,
        &[
            reversed_bits(&key.to_bytes()),
            reversed_bits(&pt.to_bytes()),
        ],
    )
    .unwrap();
    assert_eq!(
        from_reversed_bits(&out[0]),
        hex_bytes("69c4e0d86a7b0430d8cdb78070b4c55a")
    );
    // And on random keys and blocks against the core's AES.
    let mut prg = Prg::with_backend(Block::new(11), Backend::Portable).unwrap();
    for _ in 0..8 {
        let (k, p) = (prg.random_block(), prg.random_block());
        let expect = FixedKeyAes::with_backend(k, Backend::Portable)
            .unwrap()
            .encrypt_block(p);
        let out = evaluate(
            &c,
            &[reversed_bits(&k.to_bytes()), reversed_bits(&p.to_bytes())],
        )
        .unwrap();
        assert_eq!(from_reversed_bits(&out[0]), expect.to_bytes());
    }
}

fn hex_bytes(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn bristol_adder_adds() {
    let c = adder_32bit();
    let mut prg = Prg::with_backend(Block::new(5), Backend::Portable).unwrap();
    for _ in 0..50 {
        let (a, b) = (rand_u32(&mut prg), rand_u32(&mut prg));
        let bits = |v: u64, n: usize| (0..n).map(|i| (v >> i) & 1 == 1).collect::<Vec<_>>();
        let out = evaluate(&c, &[bits(a as u64, 32), bits(b as u64, 32)]).unwrap();
        let sum = out[0]
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, &x)| acc | (u64::from(x) << i));
        assert_eq!(sum, a as u64 + b as u64, "{a} + {b}");
    }
}

fn rand_u32(prg: &mut Prg) -> u32 {
    prg.random_block().low() as u32
}

#[test]
#[ignore = "reads ../shared: .ci/run runs it with --ignored"]
fn bristol_sha256_compresses_abc_to_its_digest() {
    let (c, _) = load("bristol_fashion/sha256.txt");
    // One padded block of "abc" and the SHA-256 IV (FIPS 180-4 §5.3.3).
    let mut block = [0u8; 64];
    block[..3].copy_from_slice(b"abc");
    block[3] = 0x80;
    block[63] = 24;
    let iv: Vec<u8> = [
        0x6a09e667u32,
        0xbb67ae85,
        0x3c6ef372,
        0xa54ff53a,
        0x510e527f,
        0x9b05688c,
        0x1f83d9ab,
        0x5be0cd19,
    ]
    .iter()
    .flat_map(|w| w.to_be_bytes())
    .collect();
    let out = evaluate(&c, &[reversed_bits(&block), reversed_bits(&iv)]).unwrap();
    assert_eq!(
        from_reversed_bits(&out[0]),
        hex_bytes("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    );
}

#[test]
fn hex_convention_round_trips() {
    let bits = bits_from_hex("0180", 16).unwrap();
    assert!(bits[0] && bits[15] && bits.iter().filter(|&&b| b).count() == 2);
    assert_eq!(bits_to_hex(&bits), "0180");
    assert!(bits_from_hex("01", 4).is_ok());
    assert!(bits_from_hex("11", 4).is_err());
    assert!(bits_from_hex("0", 4).is_err());
}

/// Hex digits only: a sign (which `u8::from_str_radix` would take), a space or a non-ASCII
/// character is refused with the digit's position.
#[test]
fn hex_values_are_digits_only() {
    for (text, at) in [("+f+f", 0), ("0+0f", 1), ("0f +", 2), ("é00", 0)] {
        match bits_from_hex(text, 16) {
            Err(tessera_circuit::Error::Input(m)) => {
                assert!(m.contains(&format!("digit {at}")), "{text}: {m}")
            }
            other => panic!("{text} gave {other:?}"),
        }
    }
    assert_eq!(bits_to_hex(&bits_from_hex("AbCd", 16).unwrap()), "abcd");
}

/// Bits of bytes, least significant first in each byte (the project's convention).
fn lsb_first(bytes: &[u8]) -> Vec<bool> {
    bytes
        .iter()
        .flat_map(|b| (0..8).map(move |i| (b >> i) & 1 == 1))
        .collect()
}

/// The library's circuits against the files on random inputs.
#[test]
#[ignore = "reads ../shared: .ci/run runs it with --ignored"]
fn library_agrees_with_the_bristol_files() {
    use tessera_circuit::library::{aes128, builtin, sha1_compress, sha256_compress};
    let mut prg = Prg::with_backend(Block::new(21), Backend::Portable).unwrap();
    let ours = |c: &Circuit, inputs: &[&[u8]]| {
        let bits: Vec<Vec<bool>> = inputs.iter().map(|b| lsb_first(b)).collect();
        evaluate(c, &bits).unwrap().remove(0)
    };
    for _ in 0..4 {
        let x: Vec<u8> = (0..4).flat_map(|_| prg.random_block().to_bytes()).collect();
        let y: Vec<u8> = (0..2).flat_map(|_| prg.random_block().to_bytes()).collect();
        {
            let (theirs, _) = load("bristol_fashion/aes_128.txt");
            let out =
                evaluate(&theirs, &[reversed_bits(&x[..16]), reversed_bits(&y[..16])]).unwrap();
            assert_eq!(
                lsb_first(&from_reversed_bits(&out[0])),
                ours(&aes128().unwrap(), &[&x[..16], &y[..16]])
            );
        }
        {
            let (theirs, _) = load("bristol_fashion/sha256.txt");
            let out = evaluate(&theirs, &[reversed_bits(&x), reversed_bits(&y)]).unwrap();
            assert_eq!(
                lsb_first(&from_reversed_bits(&out[0])),
                ours(&sha256_compress().unwrap(), &[&x, &y])
            );
        }
        {
            let (theirs, _) = load("bristol_format/sha-1.txt");
            // 512 input bits with the SHA-1 IV built in; this file orders bits most significant
            // first in every byte, without the reversal of the others.
            let msb_first = |v: Vec<bool>| v.into_iter().rev().collect::<Vec<_>>();
            let out = evaluate(&theirs, &[msb_first(reversed_bits(&x)), vec![]]).unwrap();
            let iv: Vec<u8> = [
                0x67452301u32,
                0xefcdab89,
                0x98badcfe,
                0x10325476,
                0xc3d2e1f0,
            ]
            .iter()
            .flat_map(|w| w.to_be_bytes())
            .collect();
            assert_eq!(
                lsb_first(&from_reversed_bits(&msb_first(out[0].clone()))),
                ours(&sha1_compress().unwrap(), &[&x, &iv])
            );
        }
        {
            let theirs = adder_32bit();
            let out = evaluate(&theirs, &[lsb_first(&x[..4]), lsb_first(&y[..4])]).unwrap();
            let widen = |b: &[u8]| lsb_first(&[b[0], b[1], b[2], b[3], 0])[..33].to_vec();
            let sum =
                evaluate(&builtin("add33").unwrap().unwrap(), &[widen(&x), widen(&y)]).unwrap();
            assert_eq!(out[0], sum[0]);
        }
    }
}
