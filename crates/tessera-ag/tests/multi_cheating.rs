//! n-party authenticated garbling against a cheating party: every message kind each party
//! sends, flipped at a random bit, replaced by random bytes, replayed from another run or cut
//! toward one of its recipients, stops the recipient with no output and some honest party with
//! an error naming a check, and no honest party ever learns a wrong output. (Two parties run
//! the two-party protocol, whose cheating tests are in `twopc_cheating.rs`.)

mod common;

use common::{random_circuit, uncaught_in_multi};
use tessera_core::{Block, Prg};

#[test]
fn every_tampered_message_among_three_is_caught() {
    let mut prg = Prg::from_seed_block(Block::new(31));
    let c = random_circuit(&mut prg, &[6, 6, 6], 120, Some(12));
    let missed = uncaught_in_multi(&c, 3, 20);
    assert!(missed.is_empty(), "{missed:#?}");
}

/// The closing note's run: 1000 trials of each tampering of each message kind among three
/// parties, on the circuit of the CI test (`TESSERA_TRIALS=1000 cargo test --release -p
/// tessera-ag --test multi_cheating -- --ignored`: 160 000 runs, about three CPU-hours, on every
/// core; CI's pass over the ignored tests runs one trial per kind unless `TESSERA_TRIALS` says
/// more).
#[test]
#[ignore]
fn many_trials_per_kind_among_three_are_all_caught() {
    let trials = std::env::var("TESSERA_TRIALS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(1);
    let mut prg = Prg::from_seed_block(Block::new(31));
    let c = random_circuit(&mut prg, &[6, 6, 6], 120, Some(12));
    let missed = uncaught_in_multi(&c, 3, trials);
    assert!(missed.is_empty(), "{missed:#?}");
    eprintln!(
        "n = 3: every message kind of every party, 4 tamperings x {trials} trials: all caught"
    );
}
