//! The extension and base-OT cores stepped against each other with no channel: honest runs
//! give correlated rows; every cheat KOS and base OT detect, made by editing a message value
//! on the way, is caught; IKNP, semi-honest by design, checks nothing.

use super::*;
use crate::base::{self, BaseReceiver, BaseSender, Hello};
use tessera_net::role::{Side, run_pair};

fn prg(seed: u128) -> Prg {
    Prg::from_seed_block(Block::new(seed))
}

/// Cores after base OTs run in the clear (the base OT has its own tests below).
fn cores(security: Security) -> (SenderCore, ReceiverCore) {
    let delta = prg(1).random_block();
    let choices = SenderCore::base_choices(delta);
    let mut keys = prg(2);
    let pairs: Vec<(Block, Block)> = (0..KAPPA)
        .map(|_| (keys.random_block(), keys.random_block()))
        .collect();
    let chosen = pairs
        .iter()
        .zip(&choices)
        .map(|(&(k0, k1), &c)| if c { k1 } else { k0 })
        .collect();
    (
        SenderCore::new(security, delta, chosen, prg(3)),
        ReceiverCore::new(security, pairs, prg(4)),
    )
}

type Edit = fn(Side, Kind, &mut Vec<u8>);

/// Both sides' results of a batch, their cores after it, and the receiver's choices.
type Batch = (
    Option<Result<u64, Error>>,
    Option<Result<u64, Error>>,
    SenderCore,
    ReceiverCore,
    Vec<bool>,
);

/// One batch of `n` OTs with `edit` applied to every message on the way.
fn batch(security: Security, n: usize, edit: Edit) -> Batch {
    let (mut s, mut r) = cores(security);
    let choices: Vec<bool> = (0..n).map(|j| j % 3 == 0).collect();
    let (a, b) = run_pair(&mut s.extend(n), &mut r.extend(&choices), edit);
    (a, b, s, r, choices)
}

fn honest(_: Side, _: Kind, _: &mut Vec<u8>) {}

#[test]
fn honest_batches_give_correlated_rows() {
    for security in [Security::SemiHonest, Security::Malicious] {
        for n in [1, 127, 1000, CHUNK + 5] {
            let (a, b, s, r, choices) = batch(security, n, honest);
            assert_eq!(a.unwrap().unwrap(), 0);
            assert_eq!(b.unwrap().unwrap(), 0);
            for (j, &c) in choices.iter().enumerate() {
                let expect = s.rows()[j] ^ (Block::mask(c) & s.delta);
                assert_eq!(r.rows()[j], expect, "{} n={n} j={j}", security.name());
            }
        }
    }
}

/// Flips bit 5 of u in columns 0..64 of the first chunk: the receiver used another choice bit
/// in those columns. Column 0 is among them and s_0 = 1 (Δ's colour bit), so detection is
/// certain.
fn flip_columns(side: Side, kind: Kind, bytes: &mut Vec<u8>) {
    if side == Side::Second && kind == MATRIX {
        let Ok(ToSender::Matrix(Matrix(u))) = ToSender::decode(kind.id, bytes) else {
            panic!("not a matrix")
        };
        let mut u = u.into_owned();
        let width = u.len() / KAPPA;
        for i in 0..64 {
            u[i * width] ^= Block::new(1 << 5);
        }
        *bytes = Matrix(Cow::Owned(u)).encode(&mut Vec::new()).to_vec();
    }
}

#[test]
fn inconsistent_columns_are_caught_by_kos_only() {
    let (a, b, ..) = batch(Security::Malicious, 1000, flip_columns);
    assert!(matches!(a, Some(Err(Error::CheckFailed))), "{a:?}");
    assert!(matches!(b, Some(Ok(_))), "{b:?}");
    let (a, b, ..) = batch(Security::SemiHonest, 1000, flip_columns);
    assert!(matches!((a, b), (Some(Ok(_)), Some(Ok(_)))));
}

#[test]
fn an_edited_check_value_is_caught() {
    fn edit_x(side: Side, kind: Kind, bytes: &mut Vec<u8>) {
        if side == Side::Second && kind == PROOF {
            let Ok(ToSender::Proof(mut p)) = ToSender::decode(kind.id, bytes) else {
                panic!()
            };
            p.x ^= Block::new(1);
            *bytes = p.encode(&mut Vec::new()).to_vec();
        }
    }
    fn edit_t(side: Side, kind: Kind, bytes: &mut Vec<u8>) {
        if side == Side::Second && kind == PROOF {
            let Ok(ToSender::Proof(mut p)) = ToSender::decode(kind.id, bytes) else {
                panic!()
            };
            p.t ^= Block::new(1 << 100);
            *bytes = p.encode(&mut Vec::new()).to_vec();
        }
    }
    for edit in [edit_x as Edit, edit_t] {
        let (a, ..) = batch(Security::Malicious, 300, edit);
        assert!(matches!(a, Some(Err(Error::CheckFailed))), "{a:?}");
    }
}

/// A KOS sender that opens another seed than it committed to (to bias χ) is caught.
#[test]
fn a_sender_that_changes_its_seed_is_caught() {
    fn reopen(side: Side, kind: Kind, bytes: &mut Vec<u8>) {
        if side == Side::First && kind == OPEN {
            let Ok(ToReceiver::Open(Open(seed))) = ToReceiver::decode(kind.id, bytes) else {
                panic!()
            };
            *bytes = Open(seed ^ Block::new(1)).encode(&mut Vec::new()).to_vec();
        }
    }
    let (_, b, ..) = batch(Security::Malicious, 500, reopen);
    assert!(matches!(b, Some(Err(Error::BadCommitment))), "{b:?}");
}

/// A matrix chunk of the wrong size is refused before it is used.
#[test]
fn a_short_matrix_is_refused() {
    fn cut(side: Side, kind: Kind, bytes: &mut Vec<u8>) {
        if side == Side::Second && kind == MATRIX {
            bytes.truncate(bytes.len() - 16);
        }
    }
    let (a, ..) = batch(Security::SemiHonest, 1000, cut);
    assert!(matches!(a, Some(Err(Error::Net(_)))), "{a:?}");
}

#[test]
fn base_ot_delivers_the_chosen_key_and_message_only() {
    let choices: Vec<bool> = (0..70).map(|j| j % 5 < 2).collect();
    let (a, b) = run_pair(
        &mut BaseSender::random(70, prg(5)),
        &mut BaseReceiver::random(&choices, prg(6)),
        honest,
    );
    let (keys, got) = (a.unwrap().unwrap(), b.unwrap().unwrap());
    for ((&(k0, k1), &k), &c) in keys.iter().zip(&got).zip(&choices) {
        assert_ne!(k0, k1);
        assert_eq!(k, if c { k1 } else { k0 });
    }
    let messages: Vec<(Block, Block)> = (0..70u128)
        .map(|i| (Block::new(i), Block::new(!i)))
        .collect();
    let (_, b) = run_pair(
        &mut BaseSender::chosen(&messages, prg(7)),
        &mut BaseReceiver::chosen(&choices, prg(8)),
        honest,
    );
    for ((&(m0, m1), &m), &c) in messages.iter().zip(&b.unwrap().unwrap()).zip(&choices) {
        assert_eq!(m, if c { m1 } else { m0 });
    }
}

/// An invalid point from the receiver is refused with its index, and one from the sender too.
#[test]
fn base_ot_refuses_invalid_points() {
    #[allow(clippy::ptr_arg)] // The edit hook's signature: some edits resize.
    fn garble_third(side: Side, kind: Kind, bytes: &mut Vec<u8>) {
        if side == Side::Second && kind == base::POINTS {
            bytes[2 * 32..3 * 32].fill(0xee);
        }
    }
    let choices = [true; 8];
    let (a, _) = run_pair(
        &mut BaseSender::random(8, prg(9)),
        &mut BaseReceiver::random(&choices, prg(10)),
        garble_third,
    );
    assert_eq!(
        a.unwrap().unwrap_err(),
        Error::BadPoint {
            what: "receiver point B",
            index: 2
        }
    );
    fn identity_a(side: Side, kind: Kind, bytes: &mut Vec<u8>) {
        if side == Side::First && kind == base::HELLO {
            let Ok(base::ToReceiver::Hello(h)) = base::ToReceiver::decode(kind.id, bytes) else {
                panic!()
            };
            let zero = Hello {
                point: [0; 32],
                ..h
            };
            *bytes = zero.encode(&mut Vec::new()).to_vec();
        }
    }
    let (_, b) = run_pair(
        &mut BaseSender::random(8, prg(11)),
        &mut BaseReceiver::random(&choices, prg(12)),
        identity_a,
    );
    assert_eq!(
        b.unwrap().unwrap_err(),
        Error::BadPoint {
            what: "sender point A",
            index: 0
        }
    );
}
