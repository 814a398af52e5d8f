//! A cheating KOS receiver is caught; an IKNP one is not checked (semi-honest by design).

use super::*;
use std::thread;
use tessera_net::memory_pair;

/// Flips bit `row` of u in columns `columns` of the first chunk: the receiver uses a
/// different choice bit in those columns than in the rest.
struct FlipColumns {
    row: usize,
    columns: std::ops::Range<usize>,
    width: usize,
}

impl Tamper for FlipColumns {
    fn matrix(&mut self, start: usize, u: &mut [Block]) {
        if start == 0 {
            for i in self.columns.clone() {
                let block = &mut u[i * self.width + self.row / KAPPA];
                *block ^= Block::new(1u128 << (self.row % KAPPA));
            }
        }
    }
}

/// Changes one check value.
struct BadProof(usize);

impl Tamper for BadProof {
    fn proof(&mut self, proof: &mut [Block; 2]) {
        proof[self.0] ^= Block::new(1);
    }
}

/// Runs a KOS extension of `n` OTs with a tampering receiver; returns both sides' results.
fn run(
    security: Security,
    n: usize,
    mut tamper: impl Tamper + Send + 'static,
) -> (Result<u64, Error>, Result<Vec<Block>, Error>) {
    let (mut a, mut b) = memory_pair(None);
    let receiver = thread::spawn(move || {
        let mut r = OtReceiver::setup(&mut b, security, Prg::from_seed_block(Block::new(1)))?;
        let choices: Vec<bool> = (0..n).map(|j| j % 3 == 0).collect();
        let got = r.extend_tampered(&mut b, &choices, &mut tamper);
        // Wait for the sender's verdict so the channel outlives it.
        let _ = b.recv_bounded(MESSAGES, 0);
        got
    });
    let mut s = OtSender::setup(&mut a, security, Prg::from_seed_block(Block::new(2))).unwrap();
    let mut out = vec![Block::ZERO; n];
    let sent = s.correlated(&mut a, &mut out).map(|()| out);
    drop(a);
    (receiver.join().unwrap(), sent)
}

#[test]
fn honest_kos_passes_the_check() {
    let (r, s) = run(Security::Malicious, 1000, ());
    assert!(r.is_ok() && s.is_ok(), "{r:?} {:?}", s.err());
}

#[test]
fn inconsistent_columns_are_caught() {
    // Column 0 is always among the flipped ones, and s_0 = 1 (Δ's colour bit), so detection
    // is certain, not just overwhelmingly likely.
    for (row, columns) in [(5, 0..64), (999, 0..1), (17, 0..128)] {
        let tamper = FlipColumns {
            row,
            columns,
            width: Security::Malicious.rows(1000) / KAPPA,
        };
        let (r, s) = run(Security::Malicious, 1000, tamper);
        assert_eq!(s.unwrap_err(), Error::CheckFailed);
        // The receiver finished its part; its next receive learns of the abort.
        assert!(r.is_ok());
    }
}

#[test]
fn a_bad_check_value_is_caught_and_the_receiver_told() {
    for (which, expect) in [(0, Error::CheckFailed), (1, Error::CheckFailed)] {
        let (mut a, mut b) = memory_pair(None);
        let receiver = thread::spawn(move || {
            let mut r = OtReceiver::setup(
                &mut b,
                Security::Malicious,
                Prg::from_seed_block(Block::new(3)),
            )?;
            r.extend_tampered(&mut b, &[true; 300], &mut BadProof(which))?;
            // The sender's verdict arrives as an abort message.
            b.recv_bounded(MESSAGES, 0).map_err(Error::from)?;
            Ok::<_, Error>(())
        });
        let mut s = OtSender::setup(
            &mut a,
            Security::Malicious,
            Prg::from_seed_block(Block::new(4)),
        )
        .unwrap();
        let mut out = vec![Block::ZERO; 300];
        assert_eq!(s.correlated(&mut a, &mut out).unwrap_err(), expect);
        match receiver.join().unwrap() {
            Err(Error::Net(tessera_net::Error::PeerAborted(why))) => {
                assert_eq!(why, expect.to_string())
            }
            other => panic!("the receiver was not told: {other:?}"),
        }
    }
}

#[test]
fn iknp_has_no_check_to_fail() {
    let tamper = FlipColumns {
        row: 5,
        columns: 0..64,
        width: Security::SemiHonest.rows(1000) / KAPPA,
    };
    let (r, s) = run(Security::SemiHonest, 1000, tamper);
    assert!(r.is_ok() && s.is_ok());
}

/// Opens a different seed than the one committed to.
struct BadOpening;

impl Tamper for BadOpening {
    fn opening(&mut self, seed: &mut Block) {
        *seed ^= Block::new(1);
    }
}

/// A KOS sender that opens another seed than it committed to (to bias χ) is caught by the
/// receiver, which tells it why.
#[test]
fn a_sender_that_changes_its_seed_is_caught() {
    let (mut a, mut b) = memory_pair(None);
    let receiver = thread::spawn(move || {
        let mut r = OtReceiver::setup(
            &mut b,
            Security::Malicious,
            Prg::from_seed_block(Block::new(5)),
        )?;
        let mut out = vec![Block::ZERO; 500];
        r.correlated(&mut b, &[false; 500], &mut out)
    });
    let mut s = OtSender::setup(
        &mut a,
        Security::Malicious,
        Prg::from_seed_block(Block::new(6)),
    )
    .unwrap();
    s.scratch.rows.clear();
    let sent = s.extend_tampered(&mut a, 500, &mut BadOpening);
    assert_eq!(receiver.join().unwrap().unwrap_err(), Error::BadCommitment);
    match sent {
        Err(Error::Net(tessera_net::Error::PeerAborted(why))) => {
            assert_eq!(why, Error::BadCommitment.to_string())
        }
        other => panic!("the sender was not told: {other:?}"),
    }
}
