//! n-party authenticated garbling (WRK17b) among sessions over memory with actively secure OT:
//! every party's outputs equal plaintext evaluation on random circuits (every gate kind, wide
//! and deep), AES-128 (FIPS-197) and SHA-256 ("abc"), for 2, 3 and 5 parties.

mod common;

use common::{aes_fips197, n_parties, random_circuit, random_values, sha256_abc, softspoken};
use tessera_ag::multi;
use tessera_circuit::library::aes128;
use tessera_circuit::{Circuit, eval};
use tessera_core::{Block, Prg};

/// Runs `circuit` among `n` parties on `values` (value i from party i) and checks every
/// party's outputs against plaintext evaluation.
fn assert_runs(circuit: &Circuit, values: &[Vec<bool>], n: usize) {
    let expect: Vec<bool> = eval::evaluate(circuit, values).unwrap().concat();
    let outs = n_parties(n, softspoken(), |s| {
        let mine = values.get(s.id()).cloned().unwrap_or_default();
        multi::run(s, circuit, &mine)
    });
    for (i, out) in outs.into_iter().enumerate() {
        assert_eq!(out.unwrap(), expect, "party {i} of {n}");
    }
}

#[test]
fn random_circuits_equal_plaintext() {
    let mut prg = Prg::from_seed_block(Block::new(4417));
    let shapes: [(usize, &[u32], u32, Option<u32>); 6] = [
        (3, &[8, 8, 8], 300, None),
        (3, &[4, 12], 400, Some(3)),
        (2, &[6, 6], 200, Some(8)),
        (5, &[3, 3, 3, 3, 3], 300, None),
        (4, &[1, 0, 1, 2], 120, Some(5)),
        (3, &[12, 12, 12], 1500, Some(40)),
    ];
    for (n, widths, gates, window) in shapes {
        let c = random_circuit(&mut prg, widths, gates, window);
        let values = random_values(&mut prg, &c);
        assert_runs(&c, &values, n);
    }
}

#[test]
fn aes128_matches_fips197_among_three() {
    let (c, values) = aes_fips197();
    assert_runs(&c, &values, 3);
}

#[test]
fn sha256_of_abc_among_three_and_five() {
    let (c, values) = sha256_abc();
    assert_runs(&c, &values, 3);
    assert_runs(&c, &values, 5);
}

#[test]
fn wrong_inputs_are_refused_with_what_is_wrong() {
    let c = aes128().unwrap();
    let outs = n_parties(3, softspoken(), |s| {
        let mine = vec![false; if s.id() == 0 { 127 } else { 128 }];
        multi::run(s, &c, if s.id() == 2 { &[] } else { &mine })
    });
    let e = outs[0].as_ref().unwrap_err().to_string();
    assert!(e.contains("party 0 gives 127 input bits"), "{e}");
    for out in &outs[1..] {
        assert!(out.is_err());
    }
    let outs = n_parties(2, softspoken(), |s| {
        let three = Circuit {
            inputs: vec![1, 1, 1],
            outputs: vec![1],
            num_wires: 4,
            gates: vec![],
        };
        multi::run(s, &three, &[true])
    });
    let e = outs[0].as_ref().unwrap_err().to_string();
    assert!(
        e.contains("3 input values, one per party, but there are 2 parties"),
        "{e}"
    );
}

/// Circuit files streamed window by window among three parties, each window a program whose
/// inputs are carried from the windows before by position: AES-128 in windows of 300 gates and
/// a random circuit of three input values in windows of 7, every party's outputs equal to
/// plaintext.
#[test]
fn a_file_streams_window_by_window_among_three() {
    use tessera_circuit::bristol::{self, stream::Streamed};
    let dir = tempfile::tempdir().unwrap();
    let mut prg = Prg::from_seed_block(Block::new(72));
    let random = random_circuit(&mut prg, &[5, 6, 7], 300, Some(12));
    for (name, circuit, window) in [("aes", aes128().unwrap(), 300), ("random", random, 7)] {
        let path = dir.path().join(format!("{name}.txt"));
        let text = bristol::write(&circuit, bristol::Format::Fashion).unwrap();
        std::fs::write(&path, text).unwrap();
        let values = random_values(&mut prg, &circuit);
        let expect: Vec<bool> = eval::evaluate(&circuit, &values).unwrap().concat();
        let outs = n_parties(3, softspoken(), |s| {
            let mut file = Streamed::open(&path, window).unwrap();
            let mine = values.get(s.id()).cloned().unwrap_or_default();
            multi::run_file(s, &mut file, &mine)
        });
        for (i, out) in outs.into_iter().enumerate() {
            assert_eq!(out.unwrap(), expect, "{name}: party {i}");
        }
    }
}
