//! Every check against cheating matters: with one switched off (the `check-switches` feature,
//! which only these tests turn on), a cheating test that passes with it fails. The checks are
//! process-wide, so this file is a test binary of its own and one test.

mod common;

use common::{
    leak_through_buckets, random_circuit, uncaught_in_2pc, uncaught_in_multi, uncaught_in_triples,
};
use tessera_ag::checks::{self, Check};
use tessera_circuit::library::aes128;
use tessera_core::{Block, Prg};

/// Switches the checks of `group` off for `through`, which says whether a cheat got through.
fn with_off(group: &[Check], through: impl FnOnce() -> bool) -> bool {
    group.iter().for_each(|&c| checks::set_off(c, true));
    let got_through = through();
    group.iter().for_each(|&c| checks::set_off(c, false));
    got_through
}

#[test]
fn switching_off_any_check_lets_a_cheat_through() {
    use Check::*;
    let aes = aes128().unwrap();
    let equality = [LeakyEquality, EqualityCommitment];
    assert!(
        with_off(&equality, || !uncaught_in_triples(2).is_empty()),
        "with {equality:?} off, every cheat was still caught"
    );
    assert!(
        with_off(&[Bucketing], || {
            let (passed, right) = leak_through_buckets(60);
            passed > 0 && right == passed
        }),
        "with the bucketing off, no leak came through"
    );
    for group in [
        &[ExpectedLabels, AndLabels, Consistency][..],
        &[OutputLabels, OutputMasks],
    ] {
        assert!(
            with_off(group, || !uncaught_in_2pc(&aes, 2).is_empty()),
            "with {group:?} off, every cheat was still caught"
        );
    }
    // The same among three parties (WRK17b) for the leaky AND check, the consistency checks
    // (of the authenticated shares, the masked inputs' echo, the garbled rows' MACs) and the
    // output label check. (The n-party bucketing has no leak test yet.)
    let mut prg = Prg::from_seed_block(Block::new(31));
    let c = random_circuit(&mut prg, &[6, 6, 6], 120, Some(12));
    for group in [
        &[LeakyCheck][..],
        &[ShareConsistency, InputEcho, GarbledRowMacs],
        &[OutputLabels, OutputMasks],
    ] {
        assert!(
            with_off(group, || !uncaught_in_multi(&c, 3, 1).is_empty()),
            "with {group:?} off, every cheat among three was still caught"
        );
    }
}
