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

#[test]
fn switching_off_any_check_lets_a_cheat_through() {
    let aes = aes128().unwrap();
    for check in Check::ALL {
        checks::set_off(check, true);
        let through = match check {
            Check::Equality => !uncaught_in_triples(2).is_empty(),
            Check::Bucketing => {
                let (passed, right) = leak_through_buckets(60);
                passed > 0 && right == passed
            }
            Check::Consistency | Check::Output => !uncaught_in_2pc(&aes, 2).is_empty(),
        };
        checks::set_off(check, false);
        assert!(through, "with {check:?} off, every cheat was still caught");
    }
    // The same among three parties (WRK17b) for the leaky AND check, the consistency checks
    // (of the authenticated shares, the masked inputs' echo, the garbled rows' MACs) and the
    // output label check. (The n-party bucketing has no leak test yet.)
    let mut prg = Prg::from_seed_block(Block::new(31));
    let c = random_circuit(&mut prg, &[6, 6, 6], 120, Some(12));
    for check in [Check::Equality, Check::Consistency, Check::Output] {
        checks::set_off(check, true);
        let through = !uncaught_in_multi(&c, 3, 1).is_empty();
        checks::set_off(check, false);
        assert!(
            through,
            "with {check:?} off, every cheat among three was still caught"
        );
    }
}
