//! Garble, evaluate and decode against plaintext evaluation, for every scheme, batching
//! strategy, AES backend and thread count; identical labels across backends and strategies,
//! identical tables across backends and thread counts; tampered and truncated tables.

mod common;

use proptest::prelude::*;
use tessera_circuit::Circuit;
use tessera_circuit::eval::{bits_from_hex, bits_to_hex, evaluate};
use tessera_circuit::library::builtin;
use tessera_core::{Backend, Block, Prg};
use tessera_garble::{
    Batching, Error, Evaluator, Garbler, InputEncoding, Plan, Prf, Prp, Scheme, SchemeKind,
    SchemeVisitor, TableReader, TableSink, ThreeHalves, XorGates, batch_tables, decode,
    decoding_bits, table_blocks,
};

/// Thread counts of the parallel engine tested against one thread.
const THREADS: [usize; 3] = [2, 3, 7];

const STRATEGIES: [Batching; 4] = [
    Batching::DYNAMIC,
    Batching::NONE,
    Batching::Dynamic { max: 7 },
    Batching::Layered,
];

/// The scheme on `backend`, with a fixed session block (MI's key offset).
fn on<S: Scheme>(backend: Backend) -> S {
    S::with_backend(backend, Block::new(0x5eed_0ff5e7)).unwrap()
}

/// A test body run once for every scheme in the registry ([`SchemeKind::ALL`]).
trait PerScheme {
    fn run<S: Scheme>(&self);
}

fn for_each_scheme(test: &impl PerScheme) {
    struct Visit<'a, T>(&'a T);
    impl<T: PerScheme> SchemeVisitor for Visit<'_, T> {
        type Output = ();
        fn visit<S: Scheme>(self) {
            self.0.run::<S>()
        }
    }
    for kind in SchemeKind::ALL {
        kind.visit(Visit(test));
    }
}

/// Everything one garbled run produced.
struct Run<S: Scheme> {
    out_wires: Vec<S::Wire>,
    out_active: Vec<Block>,
    decoded: Vec<bool>,
    tables: Vec<Block>,
    encoding: InputEncoding<S>,
}

fn plan<S: Scheme>(c: &Circuit, batching: Batching) -> Plan {
    Plan::with_xor(c, batching, S::XOR_GATES)
}

fn garble_run<S: Scheme>(
    c: &Circuit,
    batching: Batching,
    backend: Backend,
    inputs: &[Vec<bool>],
    seed: u128,
) -> Run<S> {
    garble_run_on::<S>(c, batching, (backend, 1), inputs, seed)
}

fn garble_run_on<S: Scheme>(
    c: &Circuit,
    batching: Batching,
    on_threads: (Backend, usize),
    inputs: &[Vec<bool>],
    seed: u128,
) -> Run<S> {
    run_plan::<S>(&plan::<S>(c, batching), on_threads, inputs, seed)
}

/// A table sink that keeps the tables and the size of each commit.
#[derive(Default)]
struct Commits {
    blocks: Vec<Block>,
    committed: usize,
    commits: Vec<usize>,
}

impl TableSink for Commits {
    fn reserve(&mut self, n: usize) -> &mut [Block] {
        TableSink::reserve(&mut self.blocks, n)
    }

    fn commit(&mut self) -> Result<(), Error> {
        self.commits.push(self.blocks.len() - self.committed);
        self.committed = self.blocks.len();
        Ok(())
    }
}

fn run_plan<S: Scheme>(
    plan: &Plan,
    (backend, threads): (Backend, usize),
    inputs: &[Vec<bool>],
    seed: u128,
) -> Run<S> {
    let mut prg = Prg::from_seed_block(Block::new(seed));
    let encoding = InputEncoding::<S>::random(&mut prg, plan.num_inputs());
    let mut sink = Commits::default();
    let out_wires = Garbler::with_threads(on::<S>(backend), threads)
        .garble(plan, &encoding.secret, &encoding.wires, &mut sink)
        .unwrap()
        .to_vec();
    let tables = sink.blocks;
    assert_eq!(tables.len(), table_blocks::<S>(plan), "{}", S::NAME);
    // One commit per batch whatever the thread count: a peer expects one message each.
    let batches: Vec<usize> = batch_tables::<S>(plan).collect();
    assert_eq!(sink.commits, batches, "{} on {threads} threads", S::NAME);
    let bits: Vec<bool> = inputs.concat();
    let active = encoding.encode(0, &bits);
    let out_active = Evaluator::with_threads(on::<S>(backend), threads)
        .evaluate(plan, &active, &mut TableReader::new(&tables))
        .unwrap()
        .to_vec();
    let decoded = decode(&out_active, &decoding_bits::<S>(&out_wires));
    Run {
        out_wires,
        out_active,
        decoded,
        tables,
        encoding,
    }
}

/// Garbles `c` with every strategy, backend and thread count, checks the output against
/// plaintext and the labels and tables against the reference run (portable backend, one
/// thread), and the output wires against dynamic batching's.
fn check_all<S: Scheme>(check: &CheckAll<'_>) {
    let CheckAll {
        circuit: c,
        inputs,
        seed,
        backends,
        batchings,
    } = *check;
    let expect = plaintext(c, inputs);
    let name = S::NAME;
    for &batching in batchings {
        let reference = garble_run::<S>(c, batching, Backend::Portable, inputs, seed);
        assert_eq!(reference.decoded, expect, "{name} {batching:?}");
        for &backend in backends {
            let run = garble_run::<S>(c, batching, backend, inputs, seed);
            assert_eq!(run.decoded, expect, "{name} {backend} {batching:?}");
            assert_eq!(
                run.out_wires, reference.out_wires,
                "{name} {backend} {batching:?}"
            );
            assert_eq!(
                run.out_active, reference.out_active,
                "{name} {backend} {batching:?}"
            );
            assert_eq!(
                run.tables, reference.tables,
                "{name} {backend} {batching:?}"
            );
        }
        for threads in THREADS {
            let run = garble_run_on::<S>(c, batching, (Backend::active(), threads), inputs, seed);
            assert_eq!(run.decoded, expect, "{name} {threads} threads {batching:?}");
            assert_eq!(
                (run.out_wires, run.out_active, run.tables),
                (
                    reference.out_wires.clone(),
                    reference.out_active.clone(),
                    reference.tables.clone()
                ),
                "{name} {threads} threads {batching:?}"
            );
        }
        // Per-gate randomness is a PRF of the gate index: the labels do not depend on the
        // order the gates are garbled in.
        let dynamic = garble_run::<S>(c, Batching::DYNAMIC, Backend::Portable, inputs, seed);
        assert_eq!(
            reference.out_wires, dynamic.out_wires,
            "{name} {batching:?}"
        );
    }
}

/// [`check_all`] for every scheme.
struct CheckAll<'a> {
    circuit: &'a Circuit,
    inputs: &'a [Vec<bool>],
    seed: u128,
    backends: &'a [Backend],
    /// The batchings to compile for.
    batchings: &'a [Batching],
}

impl PerScheme for CheckAll<'_> {
    fn run<S: Scheme>(&self) {
        check_all::<S>(self);
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
    struct Fips(Circuit, [Vec<bool>; 2]);
    impl PerScheme for Fips {
        fn run<S: Scheme>(&self) {
            for batching in STRATEGIES {
                let run = garble_run::<S>(&self.0, batching, Backend::active(), &self.1, 1);
                assert_eq!(
                    bits_to_hex(&run.decoded),
                    "69c4e0d86a7b0430d8cdb78070b4c55a",
                    "{} {batching:?}",
                    S::NAME
                );
            }
        }
    }
    for_each_scheme(&Fips(c, inputs));
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
    struct Abc(Circuit, [Vec<bool>; 2]);
    impl PerScheme for Abc {
        fn run<S: Scheme>(&self) {
            for batching in [Batching::DYNAMIC, Batching::Layered] {
                let run = garble_run::<S>(&self.0, batching, Backend::active(), &self.1, 2);
                assert_eq!(
                    bits_to_hex(&run.decoded),
                    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                    "{}",
                    S::NAME
                );
            }
        }
    }
    for_each_scheme(&Abc(c, [block, iv]));
}

#[test]
fn library_circuits_on_random_inputs_every_strategy_and_backend() {
    let mut prg = Prg::from_seed_block(Block::new(3));
    for name in [
        "aes128", "sha1", "add64", "sub17", "mul32", "lt40", "lts40", "eq64",
    ] {
        let c = builtin(name).unwrap().unwrap();
        for trial in 0..2 {
            let inputs: Vec<Vec<bool>> =
                c.inputs.iter().map(|&w| random_bits(&mut prg, w)).collect();
            for_each_scheme(&CheckAll {
                circuit: &c,
                inputs: &inputs,
                seed: trial,
                backends: &Backend::available(),
                batchings: &STRATEGIES,
            });
        }
    }
}

struct InWindows<'a> {
    circuit: &'a Circuit,
    inputs: &'a [Vec<bool>],
    window: usize,
}

impl PerScheme for InWindows<'_> {
    fn run<S: Scheme>(&self) {
        let plan = Plan::layered_in_windows(self.circuit, S::XOR_GATES, self.window);
        let run = run_plan::<S>(&plan, (Backend::active(), 1), self.inputs, 7);
        let want = plaintext(self.circuit, self.inputs);
        assert_eq!(run.decoded, want, "{} window {}", S::NAME, self.window);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn random_circuits_garble_correctly_with_every_scheme((c, seed) in common::random_circuit(200, None)) {
        c.check().unwrap();
        let mut prg = Prg::from_seed_block(Block::new(u128::from(seed)));
        let inputs: Vec<Vec<bool>> = c.inputs.iter().map(|&w| random_bits(&mut prg, w)).collect();
        for_each_scheme(&CheckAll {
            circuit: &c,
            inputs: &inputs,
            seed: u128::from(seed),
            backends: &[Backend::active()],
            batchings: &STRATEGIES,
        });
        for batching in STRATEGIES {
            for xor in [XorGates::Free, XorGates::Garbled] {
                let stats = Plan::with_xor(&c, batching, xor).stats();
                // The live wires, plus the two constants.
                prop_assert!(stats.slots <= c.num_wires as usize + 2);
            }
        }
    }

    /// Levels counted within windows of a few gates (what wide circuits get in place of one
    /// levelling of the whole circuit) garble correctly with every scheme.
    #[test]
    fn layers_within_windows_garble_correctly((c, seed) in common::random_circuit(200, None), window in 1usize..40) {
        let mut prg = Prg::from_seed_block(Block::new(u128::from(seed)));
        let inputs: Vec<Vec<bool>> = c.inputs.iter().map(|&w| random_bits(&mut prg, w)).collect();
        for_each_scheme(&InWindows { circuit: &c, inputs: &inputs, window });
    }

    #[test]
    fn garbage_tables_never_panic((c, seed) in common::random_circuit(200, None), junk in any::<u128>(), cut in any::<usize>()) {
        for_each_scheme(&GarbageTables { circuit: &c, seed, junk, cut });
    }
}

/// Random tables, cut short or with a block too many: an error or wrong labels, never a panic.
struct GarbageTables<'a> {
    circuit: &'a Circuit,
    seed: u64,
    junk: u128,
    cut: usize,
}

impl PerScheme for GarbageTables<'_> {
    fn run<S: Scheme>(&self) {
        let plan = plan::<S>(self.circuit, Batching::Layered);
        let mut prg = Prg::from_seed_block(Block::new(u128::from(self.seed)));
        let labels: Vec<Block> = (0..plan.num_inputs()).map(|_| prg.random_block()).collect();
        let n = table_blocks::<S>(&plan);
        let mut tables: Vec<Block> = (0..n)
            .map(|i| Block::new(self.junk.rotate_left(i as u32)))
            .collect();
        let mut eval = Evaluator::new(on::<S>(Backend::active()));
        assert!(
            eval.evaluate(&plan, &labels, &mut TableReader::new(&tables))
                .is_ok()
        );
        if n > 0 {
            let keep = self.cut % n;
            let r = eval.evaluate(&plan, &labels, &mut TableReader::new(&tables[..keep]));
            assert!(matches!(r, Err(Error::Truncated { .. })), "{r:?}");
        }
        tables.push(Block::ZERO);
        assert_eq!(
            eval.evaluate(&plan, &labels, &mut TableReader::new(&tables)),
            Err(Error::TrailingTables(1))
        );
    }
}

#[test]
fn three_halves_tables_are_three_quarters_of_half_gates() {
    // 1.5 blocks + 5 bits per AND gate against 2 blocks, plus at most a block per piece of
    // a batch the scheme is called on (128 gates).
    let c = builtin("aes128").unwrap().unwrap();
    for batching in [Batching::DYNAMIC, Batching::Layered] {
        let (th, hg) = (
            table_blocks::<ThreeHalves>(&plan::<ThreeHalves>(&c, batching)),
            table_blocks::<Prp>(&plan::<Prp>(&c, batching)),
        );
        let stats = plan::<ThreeHalves>(&c, batching).stats();
        let (batches, ands) = (stats.batches, stats.and_gates);
        assert_eq!(hg, 2 * ands);
        assert!(th * 128 >= ands * (3 * 64 + 5), "{batching:?}: {th} blocks");
        assert!(
            th * 128 <= ands * (3 * 64 + 5) + (batches + ands.div_ceil(128)) * 128,
            "{batching:?}: {th} blocks"
        );
    }
}

#[test]
fn tampered_tables_give_invalid_output_labels() {
    let c = builtin("aes128").unwrap().unwrap();
    let mut prg = Prg::from_seed_block(Block::new(9));
    let inputs: Vec<Vec<bool>> = c.inputs.iter().map(|&w| random_bits(&mut prg, w)).collect();
    struct Tamper(Circuit, Vec<Vec<bool>>);
    impl PerScheme for Tamper {
        fn run<S: Scheme>(&self) {
            let run = garble_run::<S>(&self.0, Batching::DYNAMIC, Backend::active(), &self.1, 4);
            let plan = plan::<S>(&self.0, Batching::DYNAMIC);
            let active = run.encoding.encode(0, &self.1.concat());
            let secret = &run.encoding.secret;
            let valid = |labels: &[Block]| {
                labels
                    .iter()
                    .zip(&run.out_wires)
                    .filter(|(l, w)| {
                        [false, true]
                            .iter()
                            .any(|&b| S::encode(secret, w, b) == **l)
                    })
                    .count()
            };
            assert_eq!(valid(&run.out_active), 128, "{}", S::NAME);
            // Flip one bit in every table block of the last 512 gates: the output labels that
            // depend on them are no longer either of their wire's labels.
            let mut tampered = run.tables.clone();
            let n = tampered.len();
            for t in &mut tampered[n - 2 * 512..] {
                *t ^= Block::new(1 << 77);
            }
            let mut eval = Evaluator::new(on::<S>(Backend::active()));
            let out = eval
                .evaluate(&plan, &active, &mut TableReader::new(&tampered))
                .unwrap();
            assert!(
                valid(out) < 64,
                "{}: tampering went unnoticed in {} of 128 outputs",
                S::NAME,
                valid(out)
            );
        }
    }
    for_each_scheme(&Tamper(c, inputs));
}

#[test]
fn a_plan_for_the_other_kind_of_xor_gates_is_refused() {
    let c = builtin("add8").unwrap().unwrap();
    let free = Plan::new(&c, Batching::DYNAMIC);
    let mut prf = Evaluator::new(on::<Prf>(Backend::active()));
    let r = prf.evaluate(&free, &[Block::ZERO; 16], &mut TableReader::new(&[]));
    assert!(
        matches!(r, Err(Error::WrongPlan { scheme: "prf", .. })),
        "{r:?}"
    );
    let garbled = Plan::with_xor(&c, Batching::DYNAMIC, XorGates::Garbled);
    let mut prp = Evaluator::new(Prp::default());
    let r = prp.evaluate(&garbled, &[Block::ZERO; 16], &mut TableReader::new(&[]));
    assert!(
        matches!(r, Err(Error::WrongPlan { scheme: "prp", .. })),
        "{r:?}"
    );
}

#[test]
fn wrong_number_of_input_labels_is_an_error() {
    let c = builtin("add8").unwrap().unwrap();
    let plan = Plan::new(&c, Batching::DYNAMIC);
    let mut prp = Evaluator::new(Prp::default());
    let r = prp.evaluate(&plan, &[Block::ZERO; 3], &mut TableReader::new(&[]));
    assert!(matches!(r, Err(Error::Inputs(_))), "{r:?}");
}

/// Wires placed in the engines' slots garble and evaluate as copied ones do; an engine whose
/// slots were not placed for the plan says so.
#[test]
fn placed_inputs_garble_like_copied_ones() {
    let c = builtin("mul16").unwrap().unwrap();
    let plan = Plan::new(&c, Batching::Layered);
    let mut prg = Prg::from_seed_block(Block::new(5));
    let enc = InputEncoding::<Prp>::random(&mut prg, plan.num_inputs());
    let inputs: Vec<Vec<bool>> = c.inputs.iter().map(|&w| random_bits(&mut prg, w)).collect();
    let active = enc.encode(0, &inputs.concat());
    let mut g = Garbler::new(Prp::default());
    let mut copied = Vec::new();
    let want = g
        .garble(&plan, &enc.secret, &enc.wires, &mut copied)
        .unwrap()
        .to_vec();
    let mut g = Garbler::new(Prp::default());
    let mut placed = Vec::new();
    let r = g.garble_placed(&plan, 0, &enc.secret, &mut placed);
    assert!(matches!(r, Err(Error::Inputs(_))), "{r:?}");
    g.inputs(&plan).copy_from_slice(&enc.wires);
    let got = g.garble_placed(&plan, 0, &enc.secret, &mut placed).unwrap();
    assert_eq!((got, &placed), (&want[..], &copied));
    let mut e = Evaluator::new(Prp::default());
    let r = e.evaluate_placed(&plan, 0, &mut TableReader::new(&placed));
    assert!(matches!(r, Err(Error::Inputs(_))), "{r:?}");
    e.inputs(&plan).copy_from_slice(&active);
    let out = e
        .evaluate_placed(&plan, 0, &mut TableReader::new(&placed))
        .unwrap();
    assert_eq!(
        decode(out, &decoding_bits::<Prp>(&want)),
        plaintext(&c, &inputs)
    );
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
    struct Wide(Circuit, Vec<Vec<bool>>, Vec<bool>);
    impl PerScheme for Wide {
        fn run<S: Scheme>(&self) {
            for batching in STRATEGIES {
                assert_eq!(
                    garble_run::<S>(&self.0, batching, Backend::active(), &self.1, 5).decoded,
                    self.2,
                    "{} {batching:?}",
                    S::NAME
                );
            }
        }
    }
    for_each_scheme(&Wide(c, inputs, expect));
}

#[test]
fn layers_wider_than_a_thread_share_garble_alike_on_every_thread_count() {
    // 1100 AND gates per layer: shared among 2, 3 and 7 threads (at least 256 gates each),
    // the last share cut off the chunk grid. 40 layers, so the shared batches hold enough
    // gates to start threads (dynamic batching shares 1024 gates of each layer); the
    // batchings that share (queues of 1 and 7 gates never do).
    let c = tessera_circuit::library::ultrasfe::levels(1100, 40, 7).unwrap();
    let mut prg = Prg::from_seed_block(Block::new(13));
    let inputs: Vec<Vec<bool>> = c.inputs.iter().map(|&w| random_bits(&mut prg, w)).collect();
    for_each_scheme(&CheckAll {
        circuit: &c,
        inputs: &inputs,
        seed: 8,
        backends: &[Backend::active()],
        batchings: &[Batching::DYNAMIC, Batching::Layered],
    });
}
