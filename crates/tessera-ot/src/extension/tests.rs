//! The extension and base-OT cores stepped against each other with no channel: honest runs
//! give correlated rows for every k; every cheat the KOS check and base OT detect, made by
//! editing a message value on the way, is caught, for IKNP's k = 1 and SoftSpoken's larger k;
//! the semi-honest variants check nothing.

use super::*;
use crate::base::{self, BaseReceiver, BaseSender, Hello};
use tessera_net::role::{Side, run_pair};

fn prg(seed: u128) -> Prg {
    Prg::from_seed_block(Block::new(seed))
}

/// Every k in both securities, some of which do not divide the 127 grouped columns.
fn protocols() -> Vec<Protocol> {
    [1, 2, 3, 4, 5, 8]
        .into_iter()
        .flat_map(|k| {
            [Security::SemiHonest, Security::Malicious].map(|s| Protocol::softspoken(k, s).unwrap())
        })
        .collect()
}

/// Cores after base OTs run in the clear (the base OT has its own tests below) and the setup
/// roles stepped against each other.
fn cores(protocol: Protocol) -> (SenderCore, ReceiverCore) {
    let delta = prg(1).random_block();
    let choices = SenderColumns::base_choices(protocol.k(), delta.with_lsb(true));
    let mut keys = prg(2);
    let pairs: Vec<(Block, Block)> = choices
        .iter()
        .map(|_| (keys.random_block(), keys.random_block()))
        .collect();
    let chosen: Vec<Block> = pairs
        .iter()
        .zip(&choices)
        .map(|(&(k0, k1), &c)| if c { k1 } else { k0 })
        .collect();
    let (receiver, tree) = ReceiverCore::new(protocol, &pairs, prg(4)).unwrap();
    let mut setup = SetupSender {
        protocol,
        delta,
        keys: &chosen,
        prg: Some(prg(3)),
    };
    let (s, r) = run_pair(&mut setup, &mut SetupReceiver(&tree), honest);
    assert!(matches!(r, Some(Ok(()))));
    (s.unwrap().unwrap(), receiver)
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
fn batch(protocol: Protocol, n: usize, edit: Edit) -> Batch {
    let (mut s, mut r) = cores(protocol);
    let choices: Vec<bool> = (0..n).map(|j| j % 3 == 0).collect();
    let packed = crate::ChoiceBits::from_bools(&choices);
    let (a, b) = run_pair(&mut s.extend(n), &mut r.extend(packed.as_choices()), edit);
    (a, b, s, r, choices)
}

fn honest(_: Side, _: Kind, _: &mut Vec<u8>) {}

/// Rows q_j ⊕ r_j·Δ = t_j, with q_j's least significant bit 0 and t_j's the choice.
fn assert_correlated(s: &SenderCore, r: &ReceiverCore, choices: &[bool], context: &str) {
    for (j, &c) in choices.iter().enumerate() {
        let (q, t) = (s.rows()[j], r.rows()[j]);
        assert_eq!(t, q ^ (Block::mask(c) & s.delta), "{context} j={j}");
        assert!(!q.lsb(), "{context} j={j}");
    }
}

#[test]
fn honest_batches_give_correlated_rows() {
    for protocol in protocols() {
        for n in [1, 127, 1000, CHUNK + 5] {
            let (a, b, s, r, choices) = batch(protocol, n, honest);
            assert_eq!(a.unwrap().unwrap(), 0);
            assert_eq!(b.unwrap().unwrap(), 0);
            assert_correlated(&s, &r, &choices, &format!("{} n={n}", protocol.name()));
        }
    }
}

/// A batch into callers' buffers (whole chunks straight in, the rest through the cores' rows)
/// gives the rows a batch kept in the cores gives, for buffers shorter than a chunk, a chunk
/// and a part, and whole chunks; the cores then hold only what the buffers did not take.
#[test]
fn batches_into_buffers_give_the_cores_rows() {
    for protocol in [1, 3].map(|k| Protocol::softspoken(k, Security::Malicious).unwrap()) {
        for n in [1000, CHUNK, CHUNK + 5, 2 * CHUNK + 300] {
            let (_, _, s, r, choices) = batch(protocol, n, honest);
            let (mut s2, mut r2) = cores(protocol);
            let packed = crate::ChoiceBits::from_bools(&choices);
            let (mut q, mut t) = (vec![Block::ZERO; n], vec![Block::ZERO; n]);
            let (a, b) = run_pair(
                &mut s2.extend_into(n, &mut q),
                &mut r2.extend_into(n, packed.as_choices(), &mut t),
                honest,
            );
            assert_eq!((a.unwrap().unwrap(), b.unwrap().unwrap()), (0, 0));
            let context = format!("{} n={n}", protocol.name());
            assert_eq!(q, s.rows()[..n], "{context}");
            assert_eq!(t, r.rows()[..n], "{context}");
            let kept = protocol.security().rows(n) - n / CHUNK * CHUNK;
            assert_eq!(
                (s2.rows().len(), r2.rows().len()),
                (kept, kept),
                "{context}"
            );
        }
    }
}

/// Random choices come out as the receiver's least significant bits, balanced; a second batch
/// goes on with the next OT indices and fresh streams.
#[test]
fn random_choice_batches_carry_the_choice_in_the_low_bit() {
    for protocol in protocols() {
        let (mut s, mut r) = cores(protocol);
        for (batch, n) in [3000, 700].into_iter().enumerate() {
            let (a, b) = run_pair(&mut s.extend(n), &mut r.extend_random(n), honest);
            let first = [0, 3000][batch];
            assert_eq!(a.unwrap().unwrap(), first);
            assert_eq!(b.unwrap().unwrap(), first);
            let choices: Vec<bool> = r.rows()[..n].iter().map(|t| t.lsb()).collect();
            let ones = choices.iter().filter(|&&c| c).count();
            assert!(ones > n / 3 && ones < 2 * n / 3, "{ones} of {n}");
            assert_correlated(&s, &r, &choices, &protocol.name());
        }
    }
}

/// Flips bit 5 of the corrections of the first 64 groups in the first chunk: the receiver used
/// another choice bit in those groups. The sender's rows then miss Δ's bits in those groups,
/// which are not all zero, so detection is certain.
fn flip_columns(side: Side, kind: Kind, bytes: &mut Vec<u8>) {
    if side == Side::Second && kind == MATRIX {
        let Ok(ToSender::Matrix(Matrix(u))) = ToSender::decode(kind.id, bytes) else {
            panic!("not a matrix")
        };
        let mut u = u.into_owned();
        let width = 1000usize.div_ceil(KAPPA);
        let groups = u.len() / width;
        for i in 0..64.min(groups) {
            u[i * width] ^= Block::new(1 << 5);
        }
        *bytes = Matrix(Cow::Owned(u)).encode(&mut Vec::new()).to_vec();
    }
}

#[test]
fn inconsistent_columns_are_caught_by_the_malicious_variants_only() {
    for protocol in protocols() {
        let (a, b, ..) = batch(protocol, 1000, flip_columns);
        if protocol.security() == Security::Malicious {
            assert!(matches!(a, Some(Err(Error::CheckFailed))), "{a:?}");
            assert!(matches!(b, Some(Ok(_))), "{b:?}");
        } else {
            assert!(matches!((a, b), (Some(Ok(_)), Some(Ok(_)))));
        }
    }
}

/// The tree message must hold two sums per base OT.
#[test]
fn a_short_tree_message_is_refused() {
    fn cut(side: Side, kind: Kind, bytes: &mut Vec<u8>) {
        if side == Side::Second && kind == TREE {
            bytes.truncate(bytes.len() - 32);
        }
    }
    let delta = Block::new(3);
    let keys = vec![Block::ZERO; KAPPA - 1];
    let mut setup = SetupSender {
        protocol: Protocol::IKNP,
        delta,
        keys: &keys,
        prg: Some(prg(1)),
    };
    let tree = vec![Block::ZERO; 2 * (KAPPA - 1)];
    let (a, _) = run_pair(&mut setup, &mut SetupReceiver(&tree), cut);
    assert!(
        matches!(a, Some(Err(Error::Net(_)))),
        "{:?}",
        a.map(|r| r.err())
    );
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
        for protocol in [
            Protocol::KOS,
            Protocol::softspoken(4, Security::Malicious).unwrap(),
        ] {
            let (a, ..) = batch(protocol, 300, edit);
            assert!(matches!(a, Some(Err(Error::CheckFailed))), "{a:?}");
        }
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
    let (_, b, ..) = batch(Protocol::KOS, 500, reopen);
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
    let (a, ..) = batch(
        Protocol::softspoken(3, Security::SemiHonest).unwrap(),
        1000,
        cut,
    );
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
