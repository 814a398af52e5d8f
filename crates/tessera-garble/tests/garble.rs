//! Garble, evaluate and decode against plaintext evaluation, for every batching strategy and
//! AES backend; identical labels across strategies; tampered and truncated tables.

use proptest::prelude::*;
use tessera_circuit::eval::{bits_from_hex, bits_to_hex, evaluate};
use tessera_circuit::library::builtin;
use tessera_circuit::{Circuit, Gate, GateKind};
use tessera_core::{Backend, Block, FixedKeyHash, Prg};
use tessera_garble::{
    Batching, Error, Evaluator, Garbler, HalfGates, InputEncoding, Plan, TableReader, decode,
    decoding_bits,
};

const STRATEGIES: [Batching; 4] = [
    Batching::DYNAMIC,
    Batching::Dynamic { max: 1 },
    Batching::Dynamic { max: 7 },
    Batching::Layered,
];

/// Everything one garbled run produced.
struct Run {
    out_zero: Vec<Block>,
    out_active: Vec<Block>,
    decoded: Vec<bool>,
    tables: Vec<Block>,
    encoding: InputEncoding,
}

fn garble_run(
    c: &Circuit,
    batching: Batching,
    backend: Backend,
    inputs: &[Vec<bool>],
    seed: u128,
) -> Run {
    let plan = Plan::new(c, batching);
    let hash = FixedKeyHash::with_backend(tessera_core::hash::DEFAULT_FIXED_KEY, backend).unwrap();
    let mut prg = Prg::from_seed_block(Block::new(seed));
    let encoding = InputEncoding::random(&mut prg, plan.num_inputs());
    let mut tables = Vec::new();
    let out_zero = Garbler::new(HalfGates::new(hash.clone()))
        .garble(&plan, encoding.delta, &encoding.zero_labels, &mut tables)
        .unwrap();
    let bits: Vec<bool> = inputs.concat();
    let active = encoding.encode(0, &bits);
    let out_active = Evaluator::new(HalfGates::new(hash))
        .evaluate(&plan, &active, &mut TableReader::new(&tables))
        .unwrap();
    let decoded = decode(&out_active, &decoding_bits(&out_zero));
    Run {
        out_zero,
        out_active,
        decoded,
        tables,
        encoding,
    }
}

fn plaintext(c: &Circuit, inputs: &[Vec<bool>]) -> Vec<bool> {
    evaluate(c, inputs).unwrap().concat()
}

fn random_bits(prg: &mut Prg, n: u32) -> Vec<bool> {
    (0..n).map(|_| prg.random_block().lsb()).collect()
}

#[test]
fn aes128_garbled_gives_the_fips197_ciphertext() {
    let c = builtin("aes128").unwrap().unwrap();
    let inputs = [
        bits_from_hex("000102030405060708090a0b0c0d0e0f", 128).unwrap(),
        bits_from_hex("00112233445566778899aabbccddeeff", 128).unwrap(),
    ];
    for batching in STRATEGIES {
        let run = garble_run(&c, batching, Backend::active(), &inputs, 1);
        assert_eq!(
            bits_to_hex(&run.decoded),
            "69c4e0d86a7b0430d8cdb78070b4c55a",
            "{batching:?}"
        );
    }
}

#[test]
fn sha256_garbled_gives_the_abc_digest() {
    let c = builtin("sha256").unwrap().unwrap();
    let block = bits_from_hex(
        "6162638000000000000000000000000000000000000000000000000000000000\
         0000000000000000000000000000000000000000000000000000000000000018",
        512,
    )
    .unwrap();
    let iv = bits_from_hex(
        "6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19",
        256,
    )
    .unwrap();
    for batching in [Batching::DYNAMIC, Batching::Layered] {
        let run = garble_run(
            &c,
            batching,
            Backend::active(),
            &[block.clone(), iv.clone()],
            2,
        );
        assert_eq!(
            bits_to_hex(&run.decoded),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}

#[test]
fn library_circuits_on_random_inputs_every_strategy_and_backend() {
    let mut prg = Prg::from_seed_block(Block::new(3));
    for name in [
        "aes128", "sha1", "add64", "sub17", "mul32", "lt40", "lts40", "eq64",
    ] {
        let c = builtin(name).unwrap().unwrap();
        for trial in 0..3 {
            let inputs: Vec<Vec<bool>> =
                c.inputs.iter().map(|&w| random_bits(&mut prg, w)).collect();
            let expect = plaintext(&c, &inputs);
            let reference = garble_run(&c, Batching::DYNAMIC, Backend::Portable, &inputs, trial);
            assert_eq!(reference.decoded, expect, "{name}");
            for backend in Backend::available() {
                for batching in STRATEGIES {
                    let run = garble_run(&c, batching, backend, &inputs, trial);
                    assert_eq!(run.decoded, expect, "{name} {backend} {batching:?}");
                    assert_eq!(
                        run.out_zero, reference.out_zero,
                        "{name} {backend} {batching:?}"
                    );
                    assert_eq!(run.out_active, reference.out_active);
                }
            }
        }
    }
}

/// A random valid circuit with every gate kind: gate i writes wire `inputs + i` from earlier
/// wires; the last `outputs` wires are the outputs.
fn random_circuit() -> impl Strategy<Value = (Circuit, u64)> {
    (1u32..12, 0u32..12, 1usize..200, any::<u64>()).prop_flat_map(|(w0, w1, g, seed)| {
        let num_in = w0 + w1;
        proptest::collection::vec((0u8..10, any::<u32>(), any::<u32>()), g).prop_flat_map(
            move |spec| {
                let gates: Vec<Gate> = spec
                    .iter()
                    .enumerate()
                    .map(|(i, &(k, x, y))| {
                        let out = num_in + i as u32;
                        let kind = match k {
                            0..=3 => GateKind::And,
                            4..=6 => GateKind::Xor,
                            7 => GateKind::Inv,
                            8 => GateKind::Eqw,
                            _ => GateKind::Eq,
                        };
                        let a = if kind == GateKind::Eq { x & 1 } else { x % out };
                        let b = if matches!(kind, GateKind::And | GateKind::Xor) {
                            y % out
                        } else {
                            0
                        };
                        Gate { kind, a, b, out }
                    })
                    .collect();
                let n = gates.len() as u32;
                (1u32..=n.min(16)).prop_map(move |outs| {
                    let c = Circuit {
                        num_wires: num_in + n,
                        inputs: if w1 == 0 { vec![w0] } else { vec![w0, w1] },
                        outputs: vec![outs],
                        gates: gates.clone(),
                    };
                    (c, seed)
                })
            },
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_circuits_garble_correctly_with_identical_labels((c, seed) in random_circuit()) {
        c.check().unwrap();
        let mut prg = Prg::from_seed_block(Block::new(u128::from(seed)));
        let inputs: Vec<Vec<bool>> = c.inputs.iter().map(|&w| random_bits(&mut prg, w)).collect();
        let expect = plaintext(&c, &inputs);
        let reference = garble_run(&c, Batching::DYNAMIC, Backend::active(), &inputs, u128::from(seed));
        prop_assert_eq!(&reference.decoded, &expect);
        for batching in STRATEGIES {
            let run = garble_run(&c, batching, Backend::active(), &inputs, u128::from(seed));
            prop_assert_eq!(&run.decoded, &expect, "{:?}", batching);
            prop_assert_eq!(&run.out_zero, &reference.out_zero);
            prop_assert_eq!(&run.out_active, &reference.out_active);
            let stats = Plan::new(&c, batching).stats();
            prop_assert!(stats.slots <= c.num_wires as usize);
        }
    }

    #[test]
    fn garbage_tables_never_panic((c, seed) in random_circuit(), junk in any::<u128>(), cut in any::<usize>()) {
        let plan = Plan::new(&c, Batching::Layered);
        let mut prg = Prg::from_seed_block(Block::new(u128::from(seed)));
        let labels: Vec<Block> = (0..plan.num_inputs()).map(|_| prg.random_block()).collect();
        let n = plan.stats().and_gates * 2;
        let mut tables: Vec<Block> = (0..n).map(|i| Block::new(junk.rotate_left(i as u32))).collect();
        let mut eval = Evaluator::new(HalfGates::default());
        prop_assert!(eval.evaluate(&plan, &labels, &mut TableReader::new(&tables)).is_ok());
        if n > 0 {
            let keep = cut % n;
            let r = eval.evaluate(&plan, &labels, &mut TableReader::new(&tables[..keep]));
            let is_truncated = matches!(r, Err(Error::Truncated { .. }));
            prop_assert!(is_truncated);
        }
        tables.push(Block::ZERO);
        prop_assert_eq!(eval.evaluate(&plan, &labels, &mut TableReader::new(&tables)), Err(Error::TrailingTables(1)));
    }
}

#[test]
fn tampered_tables_give_invalid_output_labels() {
    let c = builtin("aes128").unwrap().unwrap();
    let mut prg = Prg::from_seed_block(Block::new(9));
    let inputs: Vec<Vec<bool>> = c.inputs.iter().map(|&w| random_bits(&mut prg, w)).collect();
    let run = garble_run(&c, Batching::DYNAMIC, Backend::active(), &inputs, 4);
    let plan = Plan::new(&c, Batching::DYNAMIC);
    let active = run.encoding.encode(0, &inputs.concat());
    let delta = run.encoding.delta.block();
    let valid = |labels: &[Block]| {
        labels
            .iter()
            .zip(&run.out_zero)
            .filter(|(l, z)| **l == **z || **l == **z ^ delta)
            .count()
    };
    assert_eq!(valid(&run.out_active), 128);
    // Flip one bit in every table block of the last AND layers' gates: the output labels
    // that depend on them are no longer either of their wire's labels.
    let mut tampered = run.tables.clone();
    let n = tampered.len();
    for t in &mut tampered[n - 2 * 512..] {
        *t ^= Block::new(1 << 77);
    }
    let out = Evaluator::new(HalfGates::default())
        .evaluate(&plan, &active, &mut TableReader::new(&tampered))
        .unwrap();
    assert!(
        valid(&out) < 64,
        "tampering went unnoticed in {} of 128 outputs",
        valid(&out)
    );
}

#[test]
fn wrong_number_of_input_labels_is_an_error() {
    let c = builtin("add8").unwrap().unwrap();
    let plan = Plan::new(&c, Batching::DYNAMIC);
    let r = Evaluator::new(HalfGates::default()).evaluate(
        &plan,
        &[Block::ZERO; 3],
        &mut TableReader::new(&[]),
    );
    assert!(matches!(r, Err(Error::Inputs(_))), "{r:?}");
}

#[test]
fn slots_follow_live_wires_not_circuit_size() {
    for name in ["aes128", "sha256"] {
        let c = builtin(name).unwrap().unwrap();
        for batching in [Batching::DYNAMIC, Batching::Layered] {
            let s = Plan::new(&c, batching).stats();
            assert!(
                s.slots * 4 < c.num_wires as usize,
                "{name} {batching:?}: {} slots for {} wires",
                s.slots,
                c.num_wires
            );
        }
    }
}

#[test]
fn wide_layers_split_into_chunks_keep_labels_apart() {
    // 200 copies of a multiplier: AND layers far wider than one chunk of the engine.
    let c = tessera_circuit::simd::simd(&builtin("mul8").unwrap().unwrap(), 200).unwrap();
    let mut prg = Prg::from_seed_block(Block::new(12));
    let inputs: Vec<Vec<bool>> = c.inputs.iter().map(|&w| random_bits(&mut prg, w)).collect();
    let expect = plaintext(&c, &inputs);
    for batching in STRATEGIES {
        assert_eq!(
            garble_run(&c, batching, Backend::active(), &inputs, 5).decoded,
            expect,
            "{batching:?}"
        );
    }
}
