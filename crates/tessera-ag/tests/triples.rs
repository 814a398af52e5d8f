//! Authenticated AND triples: made between two sessions over actively secure OT they satisfy
//! z = x ∧ y with every share authenticated both ways; the bucket sizes keep a bad bucket below
//! 2^-40; every edit, replay and cut of every message kind of a batch stops the batch with an
//! error naming a check before the party it was sent to finishes, except a flipped garbled row
//! the honest party's x-share ignores, which leaves the triples correct; and what such a flip
//! leaks, bucketing hides.

mod common;

use common::{
    leak_through_buckets, stepped_batch, triples_are_right, two_parties, uncaught_in_triples,
};
use tessera_ag::Error;
use tessera_ag::triples::{self, Generator};
use tessera_ot::OtChoice;
use tessera_ot::extension::{Protocol, Security};

#[test]
fn bucket_sizes_keep_a_bad_bucket_below_2_to_the_minus_40() {
    for (from, b) in [(370_728, 3), (4_096, 4), (431, 5), (112, 6)] {
        assert_eq!(triples::bucket_size(from), b, "ℓ = {from}");
        assert_eq!(triples::bucket_size(from - 1), b + 1, "ℓ = {}", from - 1);
    }
    assert!(triples::log2_bad_bucket(1 << 19, 3) <= -40.0);
    assert!(triples::log2_bad_bucket(1 << 19, 2) > -40.0);
}

#[test]
fn triples_made_over_ot_are_correct_and_authenticated() {
    for ot in [
        OtChoice::Extension(Protocol::KOS),
        OtChoice::Extension(Protocol::softspoken(8, Security::Malicious).unwrap()),
    ] {
        let [a, b] = two_parties(ot, |s| {
            let mut g = Generator::new(s, 1 - s.id())?;
            let first = g.batch(s, 700)?;
            let second = g.batch(s, 4000)?;
            Ok([first, second])
        });
        let (a, b) = (a.unwrap(), b.unwrap());
        for k in 0..2 {
            let rings = [a[k].1, b[k].1];
            assert!(rings[0].first && !rings[1].first);
            triples_are_right([&a[k].0, &b[k].0], rings).unwrap();
        }
        assert_eq!(a[0].0.len(), 700);
        assert_eq!(a[1].0.len(), 4000);
    }
}

#[test]
fn semi_honest_ot_is_refused() {
    let [a, _] = two_parties(OtChoice::Extension(Protocol::IKNP), |s| {
        Generator::new(s, 1 - s.id()).map(|_| ())
    });
    assert!(matches!(a, Err(Error::Usage(_))), "{a:?}");
}

#[test]
fn an_honest_batch_steps_to_correct_triples() {
    let ([a, b], _, rings) = stepped_batch(1, 0, (500, 5), |_, _, _| {});
    triples_are_right([&a.unwrap().unwrap(), &b.unwrap().unwrap()], rings).unwrap();
}

#[test]
fn every_tampered_message_is_caught() {
    let missed = uncaught_in_triples(20);
    assert!(missed.is_empty(), "{missed:#?}");
}

/// 60 batches: about 30 pass (fewer than 15 with probability 5·10^-5), and each guess the
/// cheater makes of a folded x-share is right with probability 1/2, so all right has
/// probability 2^-passed.
#[test]
fn bucketing_hides_what_a_cheat_leaks() {
    let (passed, right) = leak_through_buckets(60);
    assert!(passed >= 15, "{passed} of 60 batches passed");
    assert!(right < passed, "every one of {passed} guesses was right");
}

/// The closing note's run: 1000 trials of each tampering of each message kind (`cargo test
/// --release -p tessera-ag --test triples -- --ignored`).
#[test]
#[ignore]
fn a_thousand_trials_per_kind_are_all_caught() {
    let missed = uncaught_in_triples(1000);
    assert!(missed.is_empty(), "{missed:#?}");
}
