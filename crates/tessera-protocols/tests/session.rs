//! The session lends both OT directions with a peer: set up once in an agreed order, then
//! random correlated OTs each way, for OT extension and for Ferret.

use std::thread;
use tessera_core::Block;
use tessera_net::memory;
use tessera_ot::ferret::Params;
use tessera_ot::{Protocol, Security};
use tessera_protocols::{OtChoice, Session, SessionConfig};

/// Ferret with iterations of 2^14 OTs.
const FERRET_SMALL: Params = Params::INSECURE_SMALL;

/// What a party saw: its Δ, the OTs it sent and those it received, per call.
type Seen = (Block, Vec<(Vec<Block>, Vec<Block>)>);

/// Two calls of `with_ot_pair`, each sending `n` random correlated OTs each way; party 0
/// sends first, party 1 receives first.
fn party(mut session: Session, peer: usize, n: usize) -> Seen {
    let first = session.id() == 0;
    let mut calls = Vec::new();
    let mut delta = Block::ZERO;
    for _ in 0..2 {
        let seen = session
            .with_ot_pair(peer, |s, r, ch| {
                let (mut sent, mut got) = (vec![Block::ZERO; n], vec![Block::ZERO; n]);
                if first {
                    s.send_random_correlated(ch, &mut sent)?;
                    r.receive_random_correlated(ch, &mut got)?;
                } else {
                    r.receive_random_correlated(ch, &mut got)?;
                    s.send_random_correlated(ch, &mut sent)?;
                }
                delta = s.delta();
                Ok((sent, got))
            })
            .unwrap();
        calls.push(seen);
    }
    (delta, calls)
}

#[test]
fn both_ot_directions_with_a_peer() {
    for ot in [
        OtChoice::Extension(Protocol::softspoken(3, Security::SemiHonest).unwrap()),
        OtChoice::Ferret(FERRET_SMALL, Security::Malicious),
    ] {
        let (a, b) = memory::pair().unwrap();
        let config = SessionConfig::with_ot(ot);
        let one = thread::spawn(move || party(Session::new(b, config).unwrap(), 0, 20000));
        let zero = party(Session::new(a, config).unwrap(), 1, 20000);
        let one = one.join().unwrap();
        for ((delta, sender), (_, receiver)) in [(&zero, &one), (&one, &zero)] {
            for ((sent, _), (_, got)) in sender.iter().zip(receiver) {
                for (&q, &t) in sent.iter().zip(got) {
                    assert!(!q.lsb(), "{ot:?}");
                    assert_eq!(t, q ^ (Block::mask(t.lsb()) & *delta), "{ot:?}");
                }
            }
        }
        assert_ne!(zero.0, one.0);
    }
}

/// A party that stops tells its peer a code, never its own text (issue 42, defect 11): an
/// error naming a private path reaches the peer as "its own input, file or request was
/// refused", and a mismatch as a mismatch. The code follows from the error's kind, whichever
/// crate it came from and however deep it is wrapped: a cheat caught by OT, a garbled-table
/// stream cut by a network timeout, a role stepped out of turn (our fault, not the peer's).
#[test]
fn the_peer_is_told_a_code_never_our_text() {
    use tessera_garble::{Error as GarbleError, StreamError};
    use tessera_net::{AbortCode, Error as NetError, Kind, Space};
    use tessera_protocols::Error;
    let timeout = NetError::ReadTimeout {
        party: 1,
        after: std::time::Duration::from_secs(1),
    };
    let cases = [
        (
            Error::Input("line 3005: /srv/private/secret-circuit.txt: bad gate".into()),
            AbortCode::Input,
        ),
        (
            Error::Mismatch("fingerprint of /srv/private/secret-circuit.txt".into()),
            AbortCode::Mismatch,
        ),
        (
            Error::Ot(tessera_ot::Error::CheckFailed),
            AbortCode::CheatDetected,
        ),
        (
            Error::Garble(GarbleError::Stream(StreamError::new(timeout))),
            AbortCode::Timeout,
        ),
        (
            Error::Garble(GarbleError::TrailingTables(3)),
            AbortCode::PeerMisbehaved,
        ),
        (
            Error::Ot(tessera_ot::Error::OutOfTurn {
                protocol: "OT extension",
                what: "a message",
            }),
            AbortCode::Internal,
        ),
        (
            Error::Circuit(tessera_circuit::Error::Io {
                path: "/srv/private/secret-circuit.txt".into(),
                message: "permission denied".into(),
            }),
            AbortCode::Input,
        ),
    ];
    for (local, code) in cases {
        let (a, b) = memory::pair().unwrap();
        let waiting = thread::spawn(move || {
            let mut s = Session::new(b, SessionConfig::default()).unwrap();
            let mut buf = [0u8; 1];
            let tag = Space::new(1).tag(Kind::new(1, "never sent"));
            s.run(|s| Ok(s.network().recv_into(0, tag, &mut buf)?))
        });
        let mut s = Session::new(a, SessionConfig::default()).unwrap();
        let err = s.run(|_| Err::<(), _>(local.clone())).unwrap_err();
        assert_eq!(err, local, "our own error stays as it was, here");
        let seen = waiting.join().unwrap().unwrap_err();
        assert_eq!(seen, Error::Net(NetError::PeerAborted { party: 0, code }));
        assert!(!seen.to_string().contains("secret"), "{seen}");
    }
}

/// Folding phases keeps one entry per name, in the order the names first came, with the times
/// and the traffic added up.
#[test]
fn folded_phases_keep_one_entry_per_name() {
    let [a, b]: [_; 2] = memory::mesh(2, tessera_net::NetConfig::default())
        .unwrap()
        .try_into()
        .unwrap();
    let peer = thread::spawn(move || {
        let mut s = Session::new(b, SessionConfig::default()).unwrap();
        let space = s.space(0).unwrap();
        let tag = space.tag(tessera_net::Kind::new(1, "ping"));
        for _ in 0..3 {
            let mut got = [0u8; 4];
            tessera_net::Channel::recv_into(&mut s.channel(0), tag, &mut got).unwrap();
        }
    });
    let mut s = Session::new(a, SessionConfig::default()).unwrap();
    let space = s.space(1).unwrap();
    let tag = space.tag(tessera_net::Kind::new(1, "ping"));
    for name in ["send", "idle", "send", "send"] {
        s.phase(name, |s| {
            if name == "send" {
                let mut ch = s.channel(1);
                tessera_net::Channel::send(&mut ch, tag, &[1, 2, 3, 4]).unwrap();
                tessera_net::Channel::flush(&mut ch).unwrap();
            }
        });
    }
    s.fold_phases();
    let phases = s.take_phases();
    let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["send", "idle"]);
    assert_eq!(phases[0].traffic.messages_sent, 3);
    assert_eq!(phases[1].traffic.messages_sent, 0);
    peer.join().unwrap();
}

/// A seeded run replays: the same seed gives every party the same setup (its masks, triples,
/// correlated OTs and garbled tables) in a program of every sharing, another seed another;
/// this is what `TESSERA_SEED` relies on to run a failing test again.
#[test]
fn a_seed_replays_a_run() {
    use tessera_protocols::hybrid::{Kind, Program, Reveal, Sharing, Type};
    let mut p = Program::new();
    let t = |sharing, kind| Type {
        sharing,
        kind,
        n: 5,
    };
    let x = p.input(0, t(Sharing::A, Kind::Ring(16))).unwrap();
    let y = p.input(1, t(Sharing::Alpha, Kind::Ring(16))).unwrap();
    let xa = p.convert(x, Sharing::Alpha).unwrap();
    let product = p.mul(xa, y).unwrap();
    let sign = p.convert(product, Sharing::A).unwrap();
    let sign = p.sign(sign, Sharing::Y).unwrap();
    let bits = p.input(1, t(Sharing::B, Kind::Bits(4))).unwrap();
    let both = p.and(bits, bits).unwrap();
    p.output(sign, Reveal::Both).unwrap();
    p.output(both, Reveal::Both).unwrap();
    let setup = |seed: Block| {
        let config = SessionConfig::default().seeded(seed);
        tessera_testkit::two_parties(config, |s| {
            let prepared = p.setup(s, 1 - s.id())?;
            Ok::<_, tessera_protocols::Error>(format!("{prepared:?}"))
        })
        .map(Result::unwrap)
    };
    let seed = tessera_testkit::seed();
    let first = setup(seed);
    assert_eq!(first, setup(seed), "the same seed, the same setup");
    assert_ne!(
        first,
        setup(seed ^ Block::new(1)),
        "another seed, another setup"
    );
}

/// A network stopped from another thread (a user's Ctrl-C) ends the wait it is in with
/// `Stopped`, and the session tells the peer its user stopped the run.
#[test]
fn a_stopped_party_stops_its_wait_and_tells_the_peer() {
    use tessera_net::{AbortCode, Error as NetError, Kind, Space};
    use tessera_protocols::Error;
    let (a, b) = memory::pair().unwrap();
    let tag = Space::new(1).tag(Kind::new(1, "never sent"));
    let stopper = a.stopper();
    let waiting = thread::spawn(move || {
        let mut s = Session::new(b, SessionConfig::default()).unwrap();
        let mut buf = [0u8; 1];
        s.run(|s| Ok(s.network().recv_into(0, tag, &mut buf)?))
    });
    let start = std::time::Instant::now();
    let stop = thread::spawn(move || {
        thread::sleep(std::time::Duration::from_millis(100));
        stopper.stop();
    });
    let mut s = Session::new(a, SessionConfig::default()).unwrap();
    let mut buf = [0u8; 1];
    let err = s
        .run(|s| Ok(s.network().recv_into(1, tag, &mut buf)?))
        .unwrap_err();
    stop.join().unwrap();
    assert_eq!(err, Error::Net(NetError::Stopped));
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    let seen = waiting.join().unwrap().unwrap_err();
    assert_eq!(
        seen,
        Error::Net(NetError::PeerAborted {
            party: 0,
            code: AbortCode::Stopped
        })
    );
}
