//! Two-party authenticated garbling between two sessions over actively secure OT: outputs equal
//! plaintext evaluation on random circuits (wide and deep, every gate kind), AES-128 (FIPS-197)
//! and SHA-256 ("abc"), to both parties or either.

mod common;

use common::{aes_fips197, random_circuit, random_values, sha256_abc, softspoken, two_parties};
use tessera_ag::twopc::{self, Outputs, Program};
use tessera_circuit::library::{self as sha, aes128};
use tessera_circuit::{Circuit, eval};
use tessera_core::{Block, Prg};
use tessera_ot::OtChoice;
use tessera_ot::extension::Protocol;

/// Runs `circuit` on `values` (input value i from party i) with outputs to `to`, and checks
/// each party's outputs against plaintext evaluation.
fn assert_runs(circuit: &Circuit, values: &[Vec<bool>], to: Outputs, ot: OtChoice) {
    let program = Program::new(circuit).unwrap();
    let expect: Vec<bool> = eval::evaluate(circuit, values).unwrap().concat();
    let [g, e] = two_parties(ot, |s| {
        let mine = values.get(s.id()).cloned().unwrap_or_default();
        twopc::run(s, &program, &mine, to)
    });
    let (g, e) = (g.unwrap(), e.unwrap());
    let want = |learns: bool| learns.then(|| expect.clone());
    assert_eq!(g, want(to != Outputs::Evaluator), "garbler's outputs");
    assert_eq!(e, want(to != Outputs::Garbler), "evaluator's outputs");
}

#[test]
fn random_circuits_equal_plaintext() {
    let mut prg = Prg::from_seed_block(Block::new(44));
    let shapes = [
        (&[8, 8][..], 200, None),
        (&[16, 4], 400, Some(3)),
        (&[5], 150, Some(8)),
        (&[1, 1], 60, None),
        (&[12, 12], 1500, Some(40)),
    ];
    for (k, &(widths, gates, window)) in shapes.iter().enumerate() {
        let c = random_circuit(&mut prg, widths, gates, window);
        let values = random_values(&mut prg, &c);
        let to = [Outputs::All, Outputs::Evaluator, Outputs::Garbler][k % 3];
        assert_runs(&c, &values, to, softspoken());
    }
}

#[test]
fn aes128_matches_fips197() {
    let (c, values) = aes_fips197();
    assert_runs(&c, &values, Outputs::All, softspoken());
}

#[test]
fn sha256_of_abc() {
    let (c, values) = sha256_abc();
    assert_runs(
        &c,
        &values,
        Outputs::All,
        OtChoice::Extension(Protocol::KOS),
    );
}

#[test]
fn wrong_inputs_are_refused() {
    let c = aes128().unwrap();
    let program = Program::new(&c).unwrap();
    let [g, e] = two_parties(softspoken(), |s| {
        let n = if s.id() == 0 { 127 } else { 128 };
        twopc::run(s, &program, &vec![false; n], Outputs::All)
    });
    let g = g.unwrap_err().to_string();
    assert!(g.contains("party 0 gives 127 input bits"), "{g}");
    assert!(e.is_err());
    let mut three = c.clone();
    three.inputs = vec![64, 64, 128];
    let err = Program::new(&three).unwrap_err().to_string();
    assert!(err.contains("3 input values"), "{err}");
}

/// SHA-256 of a four-block message as a chain of compression functions, the chaining value
/// carried from step to step in labels and masks: equal to RustCrypto's digest, to both
/// parties and to the evaluator only.
#[test]
fn a_chain_carries_its_state_from_step_to_step() {
    use sha2::Digest;
    use tessera_garble::{Batching, Chain, Plan};
    let step = sha::sha256_compress().unwrap();
    let chain = Chain::new(&step, |c| Plan::new(c, Batching::default_for(c))).unwrap();
    let message: Vec<u8> = (0..200u32).map(|i| (i * 7 + 3) as u8).collect();
    let whole = message.len() / 64 * 64;
    let mut blocks: Vec<[u8; 64]> = message[..whole]
        .chunks(64)
        .map(|c| c.try_into().unwrap())
        .collect();
    blocks.extend(sha::sha256_final_blocks(
        &message[whole..],
        message.len() as u64,
    ));
    assert_eq!(blocks.len(), 4);
    let want = sha2::Sha256::digest(&message);
    for to in [Outputs::All, Outputs::Evaluator] {
        let [g, e] = two_parties(softspoken(), |s| {
            let garbler = s.id() == 0;
            let initial = if garbler {
                eval::bits_from_bytes(&sha::SHA256_IV)
            } else {
                Vec::new()
            };
            let fresh = |k: u64| {
                if garbler {
                    eval::bits_from_bytes(&blocks[k as usize])
                } else {
                    Vec::new()
                }
            };
            twopc::run_chain(s, &chain, (blocks.len() as u64, &initial), fresh, to)
        });
        let digest = eval::bits_from_bytes(&want);
        assert_eq!(e.unwrap(), Some(digest.clone()));
        assert_eq!(g.unwrap(), (to == Outputs::All).then_some(digest));
    }
}

/// Circuit files streamed window by window, each window a run whose inputs are carried from the
/// windows before by position: AES-128 in windows of 300 gates and a random circuit in windows
/// of 7, equal to plaintext, to both parties and to the evaluator only.
#[test]
fn a_file_streams_window_by_window() {
    use tessera_circuit::bristol::{self, stream::Streamed};
    let dir = tempfile::tempdir().unwrap();
    let mut prg = Prg::from_seed_block(Block::new(71));
    let random = random_circuit(&mut prg, &[9, 6], 300, Some(12));
    for (name, circuit, window, to) in [
        ("aes", aes128().unwrap(), 300, Outputs::All),
        ("random", random, 7, Outputs::Evaluator),
    ] {
        let path = dir.path().join(format!("{name}.txt"));
        let text = bristol::write(&circuit, bristol::Format::Fashion).unwrap();
        std::fs::write(&path, text).unwrap();
        let values = random_values(&mut prg, &circuit);
        let expect: Vec<bool> = eval::evaluate(&circuit, &values).unwrap().concat();
        let [g, e] = two_parties(softspoken(), |s| {
            let mut file = Streamed::open(&path, window).unwrap();
            let mine = values.get(s.id()).cloned().unwrap_or_default();
            twopc::run_file(s, &mut file, &mine, to)
        });
        assert_eq!(
            e.unwrap(),
            Some(expect.clone()),
            "{name}: the evaluator's outputs"
        );
        let g = g.unwrap();
        assert_eq!(
            g,
            (to == Outputs::All).then_some(expect),
            "{name}: the garbler's outputs"
        );
    }
}

/// A gate line that reads a wire no gate has written yet, past the first windows of a file:
/// each party finds it on its reader thread (windows ahead of the protocol, after some
/// windows ran) and stops with the file's error naming the line; neither hangs.
#[test]
fn a_fault_deep_in_a_file_stops_both_parties() {
    use tessera_circuit::bristol::{self, stream::Streamed};
    let dir = tempfile::tempdir().unwrap();
    let circuit = aes128().unwrap();
    let text = bristol::write(&circuit, bristol::Format::Fashion).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // Line 3000 (header lines first): its first input becomes a wire never written.
    let bad = 3000;
    let mut tokens: Vec<String> = lines[bad - 1].split(' ').map(str::to_string).collect();
    tokens[2] = (circuit.num_wires - 1).to_string();
    lines[bad - 1] = tokens.join(" ");
    let path = dir.path().join("aes-bad.txt");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let mut prg = Prg::from_seed_block(Block::new(72));
    let values = random_values(&mut prg, &circuit);
    let [g, e] = two_parties(softspoken(), |s| {
        let mut file = Streamed::open(&path, 300).unwrap();
        let mine = values.get(s.id()).cloned().unwrap_or_default();
        twopc::run_file(s, &mut file, &mine, Outputs::All)
    });
    for (who, r) in [("garbler", g), ("evaluator", e)] {
        match r {
            Err(tessera_ag::Error::Circuit(tessera_circuit::Error::Parse { line, message })) => {
                assert_eq!(line, bad, "{who}: {message}");
                assert!(
                    message.contains("before any gate writes it"),
                    "{who}: {message}"
                );
            }
            other => panic!("{who}: {other:?}"),
        }
    }
}
