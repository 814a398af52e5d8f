//! n-party authenticated garbling against a cheating party: every message kind each party
//! sends, flipped at a random bit, replaced by random bytes, replayed from another run or cut
//! toward one of its recipients, stops the recipient with no output and some honest party with
//! an error naming a check, and no honest party ever learns a wrong output. (Two parties run
//! the two-party protocol, whose cheating tests are in `twopc_cheating.rs`.)

mod common;

use common::{random_circuit, uncaught_in_multi};
use tessera_circuit::library::aes128;
use tessera_core::{Block, Prg};

#[test]
fn every_tampered_message_among_three_is_caught() {
    let mut prg = Prg::from_seed_block(Block::new(31));
    let c = random_circuit(&mut prg, &[6, 6, 6], 120, Some(12));
    let missed = uncaught_in_multi(&c, 3, 20);
    assert!(missed.is_empty(), "{missed:#?}");
}

/// The closing note's run: 1000 trials of each tampering of each message kind, AES-128 among
/// three parties (`cargo test --release -p tessera-ag --test multi_cheating -- --ignored`).
#[test]
#[ignore]
fn a_thousand_trials_per_kind_among_three_are_all_caught() {
    let missed = uncaught_in_multi(&aes128().unwrap(), 3, 1000);
    assert!(missed.is_empty(), "{missed:#?}");
    eprintln!("n = 3: every message kind of every party, 4 tamperings x 1000 trials: all caught");
}
