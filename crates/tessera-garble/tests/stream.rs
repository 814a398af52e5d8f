//! Streamed circuits: SHA-256 over messages of several blocks, garbled step by step as a chain
//! of compression functions and evaluated from the stream cut into pieces of every size, gives
//! RustCrypto's digest for every scheme; tweak domains keep runs of one plan apart; circuit
//! files streamed window by window garble to their plaintext outputs.

use sha2::Digest;
use tessera_circuit::bristol::stream::Streamed;
use tessera_circuit::bristol::{Format, write};
use tessera_circuit::eval::{bits_from_bytes, bytes_from_bits};
use tessera_circuit::library::{SHA256_IV, sha256_compress, sha256_final_blocks};
use tessera_core::{Backend, Block, Prg};
use tessera_garble::{
    Batching, Chain, ChainEvaluator, ChainGarbler, Error, Evaluator, Garbler, InputEncoding, Plan,
    Scheme, SchemeKind, SchemeVisitor, TableReader, decode, decoding_bits, evaluate_streamed,
    garble_streamed,
};

/// The 64-byte blocks SHA-256 compresses for `message`.
fn padded(message: &[u8]) -> Vec<[u8; 64]> {
    let whole = message.len() / 64 * 64;
    let mut blocks: Vec<[u8; 64]> = message[..whole]
        .chunks_exact(64)
        .map(|c| c.try_into().unwrap())
        .collect();
    blocks.extend(sha256_final_blocks(&message[whole..], message.len() as u64));
    blocks
}

fn chain<S: Scheme>() -> Chain {
    let step = sha256_compress().unwrap();
    Chain::new(&step, |c| {
        Plan::with_xor(c, Batching::default_for(c), S::XOR_GATES)
    })
    .unwrap()
}

/// Garbles SHA-256 of `message` as a stream; returns the stream and the decoding bits.
fn garble_stream<S: Scheme>(chain: &Chain, message: &[u8], seed: u128) -> (Vec<Block>, Vec<bool>) {
    let scheme = S::with_backend(Backend::active(), Block::new(0x5eed)).unwrap();
    let mut prg = Prg::from_seed_block(Block::new(seed));
    let mut stream = Vec::new();
    let garbler = Garbler::new(scheme);
    let mut g = ChainGarbler::start(
        chain,
        garbler,
        &mut prg,
        &bits_from_bytes(&SHA256_IV),
        &mut stream,
    )
    .unwrap();
    for block in padded(message) {
        g.step(&mut prg, &bits_from_bytes(&block), &mut stream)
            .unwrap();
    }
    assert_eq!(stream.len() as u64, chain.stream_blocks::<S>(g.steps()));
    (stream, g.decoding())
}

struct Digests {
    messages: Vec<Vec<u8>>,
}

impl SchemeVisitor for &Digests {
    type Output = ();
    fn visit<S: Scheme>(self) {
        let chain = chain::<S>();
        for (k, message) in self.messages.iter().enumerate() {
            let (stream, decoding) = garble_stream::<S>(&chain, message, k as u128);
            let steps = padded(message).len() as u64;
            // Pieces of 1, 2, 3, ... blocks, then the rest: batches straddle every boundary.
            let scheme = S::with_backend(Backend::active(), Block::new(0x5eed)).unwrap();
            let mut e = ChainEvaluator::new(&chain, Evaluator::new(scheme), steps).unwrap();
            let (mut at, mut piece) = (0, 1);
            while at < stream.len() {
                let end = (at + piece).min(stream.len());
                assert!(!e.is_done(), "{}: done before the stream ends", S::NAME);
                e.feed(&stream[at..end]).unwrap();
                (at, piece) = (end, piece * 3 / 2 + 1);
            }
            assert!(e.is_done());
            assert_eq!(e.steps_done(), steps);
            let digest = bytes_from_bits(&decode(e.state(), &decoding));
            assert_eq!(
                digest,
                sha2::Sha256::digest(message).to_vec(),
                "{}: message of {} bytes",
                S::NAME,
                message.len()
            );
            // A stream with a block too many is refused.
            let scheme = S::with_backend(Backend::active(), Block::new(0x5eed)).unwrap();
            let mut e = ChainEvaluator::new(&chain, Evaluator::new(scheme), steps).unwrap();
            let mut longer = stream.clone();
            longer.push(Block::ZERO);
            assert_eq!(e.feed(&longer), Err(Error::TrailingTables(1)));
        }
    }
}

#[test]
fn streamed_sha256_gives_the_digest_for_every_scheme() {
    let messages: Vec<Vec<u8>> = [0usize, 55, 64, 200]
        .iter()
        .map(|&n| (0..n).map(|k| (k * 29 + 3) as u8).collect())
        .collect();
    for kind in SchemeKind::ALL {
        kind.visit(&Digests {
            messages: messages.clone(),
        });
    }
}

/// Runs of one plan under one secret in two tweak domains share no ciphertext, and an
/// evaluation in the wrong domain does not decode.
struct Domains;

impl SchemeVisitor for Domains {
    type Output = ();
    fn visit<S: Scheme>(self) {
        let c = tessera_circuit::library::builtin("aes128")
            .unwrap()
            .unwrap();
        let plan = Plan::with_xor(&c, Batching::default_for(&c), S::XOR_GATES);
        let scheme = || S::with_backend(Backend::active(), Block::new(9)).unwrap();
        let mut prg = Prg::from_seed_block(Block::new(5));
        let enc = InputEncoding::<S>::random(&mut prg, plan.num_inputs());
        let input = vec![true; plan.num_inputs()];
        let active = enc.encode(0, &input);
        let mut g = Garbler::new(scheme());
        let mut tables = [Vec::new(), Vec::new()];
        let mut decoding = Vec::new();
        for (domain, t) in tables.iter_mut().enumerate() {
            let out = g
                .garble_in(&plan, domain as u64, &enc.secret, &enc.wires, t)
                .unwrap();
            decoding = tessera_garble::decoding_bits::<S>(out);
        }
        // Ciphertexts all differ; only blocks of a few packed control bits (three-halves) may
        // agree by chance.
        let same = tables[0]
            .iter()
            .zip(&tables[1])
            .filter(|(a, b)| a == b)
            .count();
        assert!(
            tables[0].len() == tables[1].len() && same * 100 < tables[0].len(),
            "{}: {same} of {} table blocks equal across domains",
            S::NAME,
            tables[0].len()
        );
        let expect =
            tessera_circuit::eval::evaluate(&c, &[input[..128].to_vec(), input[128..].to_vec()])
                .unwrap();
        let expect: Vec<bool> = expect.concat();
        let mut e = Evaluator::new(scheme());
        let right = e
            .evaluate_in(&plan, 1, &active, &mut TableReader::new(&tables[1]))
            .unwrap();
        assert_eq!(decode(right, &decoding), expect, "{}", S::NAME);
        let wrong = e
            .evaluate_in(&plan, 0, &active, &mut TableReader::new(&tables[1]))
            .unwrap();
        assert_ne!(decode(wrong, &decoding), expect, "{}", S::NAME);
        assert!(matches!(
            e.evaluate_in(&plan, 1 << 62, &active, &mut TableReader::new(&tables[1])),
            Err(Error::Inputs(_))
        ));
    }
}

#[test]
fn tweak_domains_keep_runs_of_one_plan_apart() {
    for kind in SchemeKind::ALL {
        kind.visit(Domains);
    }
}

/// Circuit files garbled and evaluated window by window, each party reading the file itself,
/// decode to the plaintext outputs; a stream cut short or too long is refused.
struct Files<'a> {
    files: &'a [std::path::PathBuf],
}

impl SchemeVisitor for &Files<'_> {
    type Output = ();
    fn visit<S: Scheme>(self) {
        let compile = |c: &tessera_circuit::Circuit| {
            Plan::with_xor(c, Batching::default_for(c), S::XOR_GATES)
        };
        let scheme = || S::with_backend(Backend::active(), Block::new(0x5eed)).unwrap();
        let mut prg = Prg::from_seed_block(Block::new(11));
        for path in self.files {
            let (whole, _) = tessera_circuit::bristol::read_file(path).unwrap();
            let bits: Vec<Vec<bool>> = whole
                .inputs
                .iter()
                .map(|&w| (0..w).map(|_| prg.random_block().lsb()).collect())
                .collect();
            let expect = tessera_circuit::eval::evaluate(&whole, &bits)
                .unwrap()
                .concat();
            let input = bits.concat();
            // A window of 300 gates on the smaller files only (every scheme, under emulation too).
            let windows: &[usize] = if whole.gates.len() < 50_000 {
                &[300, 1 << 16]
            } else {
                &[1 << 16]
            };
            for &window in windows {
                let enc = InputEncoding::<S>::random(&mut prg, input.len());
                let mut tables = Vec::new();
                let mut file = Streamed::open(path, window).unwrap();
                let mut g = Garbler::new(scheme());
                let out = garble_streamed(
                    &mut file,
                    compile,
                    &mut g,
                    (&enc.secret, &enc.wires),
                    &mut tables,
                )
                .unwrap();
                let decoding = decoding_bits::<S>(&out);
                let active = enc.encode(0, &input);
                let evaluate = |tables: &[Block]| {
                    let file = Streamed::open(path, window).unwrap();
                    let mut source = TableReader::new(tables);
                    let e = Evaluator::new(scheme());
                    evaluate_streamed(file, compile, e, &active, &mut source)
                };
                let labels = evaluate(&tables).unwrap();
                assert_eq!(decode(&labels, &decoding), expect, "{} {path:?}", S::NAME);
                if window != 300 {
                    continue;
                }
                if !tables.is_empty() {
                    let short = &tables[..tables.len() - 1];
                    assert!(matches!(evaluate(short), Err(Error::Truncated { .. })));
                }
                let mut long = tables.clone();
                long.push(Block::ZERO);
                assert!(matches!(evaluate(&long), Err(Error::TrailingTables(1))));
            }
        }
    }
}

#[test]
fn streamed_files_garble_to_their_plaintext_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for name in ["aes128", "sha256", "mul32"] {
        let c = tessera_circuit::library::builtin(name).unwrap().unwrap();
        let path = dir.path().join(format!("{name}.txt"));
        std::fs::write(&path, write(&c, Format::Fashion).unwrap()).unwrap();
        files.push(path);
    }
    for kind in SchemeKind::ALL {
        kind.visit(&Files { files: &files });
    }
}
