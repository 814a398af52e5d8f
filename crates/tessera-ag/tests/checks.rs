//! Every check against cheating matters: with one switched off (the `check-switches` feature,
//! which only these tests turn on), a cheating test that passes with it fails. The checks are
//! process-wide, so this file is a test binary of its own and one test.

mod common;

use common::{leak_through_buckets, uncaught_in_2pc, uncaught_in_triples};
use tessera_ag::checks::{self, Check};
use tessera_circuit::library::aes128;

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
}
