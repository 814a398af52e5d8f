//! n-party authenticated garbling against a cheating party: every message kind each party
//! sends, flipped at a random bit, replaced by random bytes, replayed from another run or cut
//! toward one of its recipients, stops the recipient with no output and some honest party with
//! an error naming a check, and no honest party ever learns a wrong output; and a garbler that
//! corrupts a garbled row is caught with a probability that does not depend on the evaluator's
//! input. (Two parties run the two-party protocol, whose cheating tests are in
//! `twopc_cheating.rs`.)

mod common;

use common::{random_circuit, uncaught_in_multi};
use tessera_ag::multi;
use tessera_core::{Block, Prg};
use tessera_net::exchange::{Editor, Message};

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

/// How many of `runs` runs among three abort for each of the evaluator's input bits x, when
/// garbler 2 (which gives no input) flips a bit of its row (1, 0) of the one AND gate x ∧ y (y
/// party 1's): the evaluator opens that row exactly when its masked values are (1, 0), which
/// the masks make uniform and independent of the inputs.
fn aborts_per_evaluator_bit(runs: usize) -> [usize; 2] {
    let c = common::and_circuit();
    let mut aborts = [0usize; 2];
    for x in [false, true] {
        for run in 0..runs {
            let outs = common::n_parties(3, common::softspoken(), |s| {
                let me = s.id();
                let edit = |msg: &Message, m: &mut Vec<u8>| {
                    if !msg.received && msg.kind == tessera_ag::wire::N_TABLES {
                        // Row 2 of gate 0, its first block, one of its bits.
                        m[2 * 3 * 16 + run % 16] ^= 1 << (run % 8);
                    }
                };
                let edit = (me == 2).then(|| Editor::new(edit));
                let input = match me {
                    0 => vec![x],
                    1 => vec![true],
                    _ => vec![],
                };
                multi::run_edited(s, &c, &input, edit)
            });
            match &outs[0] {
                Ok(z) => assert_eq!(*z, vec![x], "a wrong output"),
                Err(_) => aborts[usize::from(x)] += 1,
            }
        }
    }
    aborts
}

/// Whether the run stops must not depend on the evaluator's input bit (about a quarter abort).
fn assert_independent(runs: usize) {
    let aborts = aborts_per_evaluator_bit(runs);
    common::assert_aborts_independent(aborts, runs, 0.25, "n = 3 selective failure");
}

#[test]
fn a_corrupted_row_aborts_independently_of_the_evaluators_input() {
    assert_independent(40);
}

/// The closing note's run: 1000 per input bit (`cargo test --release -p tessera-ag --test
/// multi_cheating -- --ignored selective`).
#[test]
#[ignore]
fn selective_failure_among_three_over_1000_runs_per_input_bit() {
    assert_independent(1000);
}
