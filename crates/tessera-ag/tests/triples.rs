//! Authenticated AND triples: made between two sessions over actively secure OT they satisfy
//! z = x ∧ y with every share authenticated both ways; the bucket sizes keep a bad bucket
//! below 2^-40;
//! and every edit, replay and cut of every message kind of a batch stops the batch with an
//! error naming a check before the party it was sent to finishes, except edits of a garbled row the honest party's x-share
//! ignores (the leak bucketing is there for), which leave the triples correct.

use tessera_ag::share::{Keyring, Shares};
use tessera_ag::triples::{self, Generator, TripleBatch, Triples};
use tessera_ag::{Error, wire};
use tessera_core::{Block, Prg};
use tessera_net::role::{self, Side};
use tessera_net::{Kind, NetConfig, memory};
use tessera_ot::OtChoice;
use tessera_ot::extension::Protocol;
use tessera_protocols::{Session, SessionConfig};

/// Checks that both parties' triples are correct and authenticated under each other's Δ.
fn assert_triples(t: [&Triples; 2], rings: [Keyring; 2]) {
    assert_eq!(t[0].len(), t[1].len());
    for (name, s0, s1) in [
        ("x", &t[0].x, &t[1].x),
        ("y", &t[0].y, &t[1].y),
        ("z", &t[0].z, &t[1].z),
    ] {
        assert_authentic(name, [s0, s1], rings);
    }
    let value = |s: [&Shares; 2], i: usize| s[0].bit(i) ^ s[1].bit(i);
    let mut ones = 0;
    for i in 0..t[0].len() {
        let x = value([&t[0].x, &t[1].x], i);
        let y = value([&t[0].y, &t[1].y], i);
        assert_eq!(value([&t[0].z, &t[1].z], i), x & y, "triple {i}");
        ones += usize::from(x & y);
    }
    let n = t[0].len();
    assert!(n < 64 || (n / 8..n / 2).contains(&ones), "{ones} of {n}");
}

fn assert_authentic(name: &str, s: [&Shares; 2], rings: [Keyring; 2]) {
    for (holder, peer) in [(0, 1), (1, 0)] {
        for i in 0..s[holder].len() {
            let key = s[peer].keys()[i];
            assert!(!key.lsb(), "{name} {i}: key's low bit");
            let expect = key ^ (rings[peer].delta & Block::mask(s[holder].bit(i)));
            assert_eq!(
                s[holder].macs()[i],
                expect,
                "{name} {i}: party {holder}'s MAC"
            );
        }
    }
}

#[test]
fn bucket_sizes_keep_a_bad_bucket_below_2_to_the_minus_40() {
    for (from, b) in [(370_728, 3), (4_096, 4), (431, 5), (112, 6)] {
        assert_eq!(triples::bucket_size(from), b, "ℓ = {from}");
        assert_eq!(triples::bucket_size(from - 1), b + 1, "ℓ = {}", from - 1);
    }
    assert!(triples::log2_bad_bucket(1 << 19, 3) <= -40.0);
    assert!(triples::log2_bad_bucket(1 << 19, 2) > -40.0);
}

/// Runs `f` as both parties of a two-party session over memory with `ot`.
fn two_parties<T: Send>(
    ot: OtChoice,
    f: impl Fn(&mut Session) -> Result<T, Error> + Sync,
) -> [Result<T, Error>; 2] {
    let nets = memory::mesh(2, NetConfig::default()).unwrap();
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = nets
            .into_iter()
            .map(|net| {
                s.spawn(move || {
                    let mut session = Session::new(net, SessionConfig { ot }).unwrap();
                    f(&mut session)
                })
            })
            .collect();
        let mut out = handles.into_iter().map(|h| h.join().unwrap());
        [out.next().unwrap(), out.next().unwrap()]
    })
}

#[test]
fn triples_made_over_ot_are_correct_and_authenticated() {
    for ot in [
        OtChoice::Extension(Protocol::KOS),
        OtChoice::Extension(
            Protocol::softspoken(8, tessera_ot::extension::Security::Malicious).unwrap(),
        ),
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
            assert_triples([&a[k].0, &b[k].0], rings);
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

/// Both parties' random authenticated shares of x, y and r for `n` leaky triples (3n shares,
/// x first), dealt locally.
fn dealt(n: usize, prg: &mut Prg) -> ([Shares; 2], [Keyring; 2]) {
    let rings = [true, false].map(|first| Keyring {
        delta: prg.random_block().with_lsb(true),
        first,
    });
    let (mut s0, mut s1) = (Shares::default(), Shares::default());
    for _ in 0..3 * n {
        let r = prg.random_block();
        let (b0, b1) = (r.lsb(), r.high() & 1 == 1);
        let (k1, k0) = (
            prg.random_block().with_lsb(false),
            prg.random_block().with_lsb(false),
        );
        s0.push((k1 ^ (rings[1].delta & Block::mask(b0)), k0));
        s1.push((k0 ^ (rings[0].delta & Block::mask(b1)), k1));
    }
    ([s0, s1], rings)
}

/// What two stepped roles ended with, from which inputs.
type Stepped = (
    [Option<Result<Triples, Error>>; 2],
    [Shares; 2],
    [Keyring; 2],
);

/// One batch of `l` triples in buckets of `b` stepped between two roles, with `edit` applied
/// to each message on the way.
fn stepped(
    seed: u128,
    batch: u64,
    l: usize,
    b: usize,
    edit: impl FnMut(Side, Kind, &mut Vec<u8>),
) -> Stepped {
    let mut prg = Prg::from_seed_block(Block::new(seed));
    let (inputs, rings) = dealt(l * b, &mut prg);
    let mut roles = [0, 1].map(|p| {
        TripleBatch::new(
            rings[p],
            batch,
            b,
            inputs[p].clone(),
            Prg::from_seed_block(prg.random_block()),
        )
    });
    let [r0, r1] = &mut roles;
    let (a, c) = role::run_pair(r0, r1, edit);
    ([a, c], inputs, rings)
}

#[test]
fn an_honest_batch_steps_to_correct_triples() {
    let ([a, b], _, rings) = stepped(1, 0, 500, 5, |_, _, _| {});
    assert_triples([&a.unwrap().unwrap(), &b.unwrap().unwrap()], rings);
}

/// Every message of every kind, as each party sends it, in one honest batch.
fn transcript() -> Vec<(Side, Kind, Vec<u8>)> {
    let mut seen = Vec::new();
    stepped(7, 3, 120, 4, |side, kind, bytes| {
        seen.push((side, kind, bytes.clone()));
    });
    seen
}

const KINDS: [Kind; 6] = [
    wire::GARBLED,
    wire::SHARES,
    wire::COMMIT,
    wire::REVEAL,
    wire::OPEN,
    wire::BUCKETS,
];

/// How a test tampers with one message.
#[derive(Clone, Copy, Debug)]
enum Tamper {
    /// Flips one bit.
    Flip(usize),
    /// Replaces the payload with random bytes.
    Random,
    /// Replaces it with the same kind's message of another batch.
    Replay,
    /// Cuts its last byte.
    Cut,
}

/// Runs a batch with message `kind` from `from` tampered, and checks that the receiving
/// party stops with an error naming a check, or (a garbled row the receiver's x-share
/// ignores) that both finish with correct triples.
fn assert_caught(
    seed: u128,
    from: Side,
    kind: Kind,
    tamper: Tamper,
    earlier: &[(Side, Kind, Vec<u8>)],
) {
    let (l, b) = (120, 4);
    let mut row = None;
    let ([a, c], inputs, rings) = stepped(seed, 9, l, b, |side, k, bytes| {
        if side != from || k != kind {
            return;
        }
        match tamper {
            Tamper::Flip(at) => {
                let bit = at % (bytes.len() * 8);
                bytes[bit / 8] ^= 1 << (bit % 8);
                row = Some(bit / 128);
            }
            Tamper::Random => {
                let mut prg = Prg::from_seed_block(Block::new(seed + 99));
                for x in bytes.iter_mut() {
                    *x = prg.random_block().low() as u8;
                }
            }
            Tamper::Replay => {
                if let Some((_, _, old)) = earlier.iter().find(|(s, k, _)| *s == side && *k == kind)
                {
                    *bytes = old.clone();
                }
            }
            Tamper::Cut => {
                bytes.pop();
            }
        }
    });
    let victim = match from {
        Side::First => 1,
        Side::Second => 0,
    };
    let result = [a, c];
    let what = format!("{} from {from:?} {tamper:?}", kind.name);
    let ignored_row = kind == wire::GARBLED
        && matches!(tamper, Tamper::Flip(_))
        && row.is_some_and(|k| !inputs[victim].bit(k));
    if ignored_row {
        let [Some(Ok(t0)), Some(Ok(t1))] = &result else {
            panic!("{what}: an ignored row stopped the batch: {result:?}");
        };
        assert_triples([t0, t1], rings);
        return;
    }
    // The victim never finishes; it stops on its own check, or is left waiting where the
    // other party's check stopped (over a network it then receives the abort).
    assert!(
        !matches!(result[victim], Some(Ok(_))),
        "{what}: party {victim} finished"
    );
    let errors: Vec<String> = result
        .iter()
        .filter_map(|r| match r {
            Some(Err(e)) => Some(e.to_string()),
            _ => None,
        })
        .collect();
    assert!(
        errors
            .iter()
            .any(|t| t.contains("check") || t.contains(kind.name)),
        "{what}: no check named in {errors:?}"
    );
}

#[test]
fn every_tampered_message_is_caught() {
    let earlier = transcript();
    let mut prg = Prg::from_seed_block(Block::new(5));
    for kind in KINDS {
        for from in [Side::First, Side::Second] {
            let sends = earlier.iter().any(|(s, k, _)| *s == from && *k == kind);
            if !sends {
                continue;
            }
            for trial in 0..20u128 {
                let at = (prg.random_block().low() % (1 << 20)) as usize;
                for tamper in [
                    Tamper::Flip(at),
                    Tamper::Random,
                    Tamper::Replay,
                    Tamper::Cut,
                ] {
                    assert_caught(100 + trial, from, kind, tamper, &earlier);
                }
            }
        }
    }
}
