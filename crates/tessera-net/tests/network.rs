//! The network contract on every transport: messages arrive intact and in order between every
//! pair of parties, parties that all send to all at once do not deadlock, and every way a
//! peer can misbehave or fail ends in an error naming it, never a panic or a hang.

use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};
use tessera_core::Block;
use tessera_net::tcp::{Mesh, listen, mesh};
use tessera_net::tls::{TlsConfig, keygen};
use tessera_net::{AbortCode, Channel, Error, Frame, Kind, Len, NetConfig, Network, Space, memory};

const SPACE: Space = Space::new(1);
const A: Kind = Kind::new(1, "a");
const B: Kind = Kind::new(2, "b");
const SHORT: Duration = Duration::from_millis(300);

/// An n-party TCP mesh on loopback; `tls[i]` is party i's configuration.
fn tcp_mesh(n: usize, tls: Option<Vec<TlsConfig>>, config: NetConfig) -> Vec<Network> {
    tessera_net::tcp::loopback(n, tls.as_deref(), Duration::from_secs(10), config).unwrap()
}

/// Keys for `n` parties in `dir`, and each party's configuration pinning all the others.
fn tls_configs(dir: &std::path::Path, n: usize) -> Vec<TlsConfig> {
    let certs: Vec<PathBuf> = (0..n)
        .map(|i| keygen(&dir.join(i.to_string()), false).unwrap())
        .collect();
    (0..n)
        .map(|i| {
            let peers: Vec<(usize, &std::path::Path)> = (0..n)
                .filter(|&j| j != i)
                .map(|j| (j, certs[j].as_path()))
                .collect();
            TlsConfig::load(&dir.join(i.to_string()), &peers).unwrap()
        })
        .collect()
}

/// Every party sends every other a small message, a large one and blocks, then a broadcast;
/// each receives them in order and the statistics agree on both ends of every link.
fn exchange(nets: Vec<Network>) {
    let n = nets.len();
    let big = |i: usize, j: usize| -> Vec<u8> {
        (0..300_000u32)
            .map(|k| (k as usize * 7 + i * 31 + j) as u8)
            .collect()
    };
    let stats: Vec<_> = thread::scope(|s| {
        let handles: Vec<_> = nets
            .into_iter()
            .map(|mut net| {
                s.spawn(move || {
                    let me = net.id();
                    for j in net.peers().collect::<Vec<_>>() {
                        net.send(j, SPACE.tag(A), &[me as u8, j as u8, 3]).unwrap();
                        net.send(j, SPACE.tag(B), &big(me, j)).unwrap();
                        let mut peer = net.peer(j);
                        peer.send_blocks(SPACE.tag(A), &[Block::new(me as u128), Block::ONES])
                            .unwrap();
                    }
                    net.broadcast(SPACE.tag(B), b"to all").unwrap();
                    let mut frame = Frame::new();
                    for j in net.peers().collect::<Vec<_>>() {
                        let mut small = [0u8; 3];
                        net.recv_into(j, SPACE.tag(A), &mut small).unwrap();
                        assert_eq!(small, [j as u8, me as u8, 3]);
                        net.recv_frame(j, SPACE.tag(B), Len::AtMost(1 << 20), &mut frame)
                            .unwrap();
                        assert_eq!(frame.bytes(), &big(j, me)[..]);
                        let mut blocks = [Block::ZERO; 2];
                        net.peer(j).recv_blocks(SPACE.tag(A), &mut blocks).unwrap();
                        assert_eq!(blocks, [Block::new(j as u128), Block::ONES]);
                        let all = net.peer(j).recv_bounded(SPACE.tag(B), 6).unwrap();
                        assert_eq!(all, b"to all");
                    }
                    net.flush().unwrap();
                    let per_peer: Vec<_> = (0..n).map(|j| net.peer_stats(j)).collect();
                    (per_peer, net.stats())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for i in 0..n {
        for j in 0..n {
            if i != j {
                let (a, b) = (stats[i].0[j], stats[j].0[i]);
                assert_eq!(a.bytes_sent, b.bytes_received, "{i}->{j}");
                assert_eq!(a.messages_sent, 4);
                assert_eq!(a.bytes_sent, (4 * 7 + 3 + 300_000 + 32 + 6) as u64);
            }
        }
        assert_eq!(stats[i].1.messages_sent, 4 * (n as u64 - 1));
        assert_eq!(stats[i].1.rounds, 1);
    }
}

#[test]
fn meshes_of_2_3_5_over_memory() {
    for n in [2, 3, 5] {
        exchange(memory::mesh(n, NetConfig::default()).unwrap());
    }
}

#[test]
fn meshes_of_2_3_5_over_tcp() {
    for n in [2, 3, 5] {
        exchange(tcp_mesh(n, None, NetConfig::default()));
    }
}

#[test]
fn meshes_of_2_3_5_over_tls() {
    let dir = tempfile::tempdir().unwrap();
    for n in [2, 3, 5] {
        let configs = tls_configs(&dir.path().join(n.to_string()), n);
        exchange(tcp_mesh(n, Some(configs), NetConfig::default()));
    }
}

/// Every party first sends 20 MiB to every other party, and only then reads: with blocking
/// writes this deadlocks once the socket buffers fill; the event loop reads while it writes.
#[test]
fn all_to_all_large_sends_do_not_deadlock() {
    const SIZE: usize = 20 << 20;
    for n in [3, 5] {
        let nets = tcp_mesh(n, None, NetConfig::with_timeout(Duration::from_secs(60)));
        let start = Instant::now();
        thread::scope(|s| {
            for mut net in nets {
                s.spawn(move || {
                    let me = net.id();
                    let payload: Vec<u8> = (0..SIZE).map(|k| (k + me) as u8).collect();
                    for j in net.peers().collect::<Vec<_>>() {
                        net.send(j, SPACE.tag(A), &payload).unwrap();
                    }
                    let mut frame = Frame::new();
                    for j in net.peers().collect::<Vec<_>>() {
                        net.recv_frame(j, SPACE.tag(A), Len::Exact(SIZE), &mut frame)
                            .unwrap();
                        let ok = frame
                            .bytes()
                            .iter()
                            .enumerate()
                            .all(|(k, &b)| b == (k + j) as u8);
                        assert!(ok, "party {me} from {j}");
                    }
                    net.flush().unwrap();
                });
            }
        });
        assert!(start.elapsed() < Duration::from_secs(60));
    }
}

/// One party aborts while the others wait (party 0 for party 1, party 1 for party 2): both end
/// at once with party 2's code, not with a timeout.
#[test]
fn one_abort_ends_every_party_with_its_code() {
    for over_tcp in [false, true] {
        let config = NetConfig::with_timeout(Duration::from_secs(20));
        let nets = if over_tcp {
            tcp_mesh(3, None, config)
        } else {
            memory::mesh(3, config).unwrap()
        };
        let start = Instant::now();
        let results: Vec<_> = thread::scope(|s| {
            let handles: Vec<_> = nets
                .into_iter()
                .map(|mut net| {
                    s.spawn(move || {
                        let mut b = [0u8; 1];
                        match net.id() {
                            2 => {
                                thread::sleep(SHORT);
                                net.abort(AbortCode::CheatDetected);
                                Ok(())
                            }
                            me => net.recv_into(me + 1, SPACE.tag(A), &mut b),
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
        for r in &results[..2] {
            match r {
                Err(e @ Error::PeerAborted { party: 2, code }) => {
                    assert_eq!(*code, AbortCode::CheatDetected);
                    assert!(
                        e.to_string().contains("a check against cheating failed"),
                        "{e}"
                    );
                }
                other => panic!("over tcp {over_tcp}: {other:?}"),
            }
        }
    }
}

/// A party that never shows up ends the others at the set-up bound, named.
#[test]
fn a_party_that_never_connects_is_named_at_the_deadline() {
    let listeners: Vec<_> = (0..3).map(|_| listen("127.0.0.1:0").unwrap()).collect();
    let addrs: Vec<String> = listeners
        .iter()
        .map(|l| l.local_addr().unwrap().to_string())
        .collect();
    let start = Instant::now();
    let results: Vec<_> = thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|me| {
                let (listener, addrs) = (&listeners[me], &addrs);
                s.spawn(move || {
                    mesh(
                        Mesh {
                            me,
                            parties: 3,
                            listener: Some(listener),
                            lower: &addrs[..me],
                            tls: None,
                            setup: Duration::from_secs(1),
                        },
                        NetConfig::default(),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(start.elapsed() < Duration::from_secs(5));
    for r in results {
        match r {
            Err(Error::NeverConnected { missing, .. }) => assert_eq!(missing, vec![2]),
            other => panic!("{other:?}"),
        }
    }
    // Connecting to a party that never listens names it too.
    let lonely = [addrs[0].clone()];
    drop(listeners);
    let r = mesh(
        Mesh {
            me: 1,
            parties: 2,
            listener: None,
            lower: &lonely,
            tls: None,
            setup: SHORT,
        },
        NetConfig::default(),
    );
    assert!(matches!(r, Err(Error::Connect { party: 0, .. })), "{r:?}");
}

/// Every kind of misbehaviour a receiver names: a message out of order, in another space, of
/// the wrong length, larger than allowed, an abort, a hang-up, a frame cut off.
#[test]
fn misbehaving_peers_get_named_errors() {
    type Misbehaviour = fn(&mut Network);
    let cases: Vec<(&str, Misbehaviour)> = vec![
        ("out of order", |n| {
            n.send(1, SPACE.tag(B), &[0; 4]).unwrap()
        }),
        ("other space", |n| {
            n.send(1, Space::new(2).tag(A), &[0; 4]).unwrap()
        }),
        ("wrong length", |n| {
            n.send(1, SPACE.tag(A), &[0; 5]).unwrap()
        }),
        ("abort", |n| n.abort(AbortCode::Input)),
        ("hang up", |_| {}),
    ];
    for (what, misbehave) in cases {
        let (mut x, mut y) = memory::pair_with(NetConfig::with_timeout(SHORT)).unwrap();
        misbehave(&mut x);
        drop(x);
        let mut buf = [0u8; 4];
        let e = y.recv_into(0, SPACE.tag(A), &mut buf).unwrap_err();
        let ok = match what {
            "out of order" => {
                matches!(e, Error::UnexpectedMessage { party: 0, got, .. } if got.id == 2)
            }
            "other space" => {
                matches!(e, Error::UnexpectedMessage { party: 0, got, .. } if got.space == 2)
            }
            "wrong length" => matches!(
                e,
                Error::WrongLength {
                    party: 0,
                    got: 5,
                    expected: 4,
                    ..
                }
            ),
            "abort" => {
                e == Error::PeerAborted {
                    party: 0,
                    code: AbortCode::Input,
                }
            }
            _ => matches!(e, Error::Closed { party: 0, .. }),
        };
        assert!(ok, "{what}: {e:?}");
        // The network stays failed.
        assert!(matches!(
            y.recv_into(0, SPACE.tag(A), &mut buf),
            Err(Error::Poisoned(_))
        ));
    }
    let (mut x, mut y) = memory::pair().unwrap();
    x.send(1, SPACE.tag(A), &[0; 100]).unwrap();
    x.flush().unwrap();
    let mut frame = Frame::new();
    assert!(matches!(
        y.recv_frame(0, SPACE.tag(A), Len::AtMost(99), &mut frame),
        Err(Error::Oversized {
            party: 0,
            got: 100,
            max: 99,
            ..
        })
    ));
    // After the last whole message, a hang-up is named when the next one is awaited.
    let [mut a, mut b]: [Network; 2] = tcp_mesh(2, None, NetConfig::with_timeout(SHORT * 10))
        .try_into()
        .unwrap();
    a.send(1, SPACE.tag(A), &[9; 10]).unwrap();
    a.flush().unwrap();
    drop(a);
    let mut buf = [0u8; 10];
    assert!(b.recv_into(0, SPACE.tag(A), &mut buf).is_ok());
    assert!(matches!(
        b.recv_into(0, SPACE.tag(A), &mut buf),
        Err(Error::Closed { party: 0, .. })
    ));
}

/// A silent peer is a read timeout; a peer that reads nothing while this party sends is a
/// write timeout; a peer that trickles bytes cannot outlast the run's deadline (defect 6).
#[test]
fn timeouts_and_the_deadline_are_told_apart() {
    let (mut x, _y) = memory::pair_with(NetConfig::with_timeout(SHORT)).unwrap();
    let start = Instant::now();
    let mut b = [0u8; 4];
    assert!(matches!(
        x.recv_into(1, SPACE.tag(A), &mut b),
        Err(Error::ReadTimeout { party: 1, .. })
    ));
    assert!(start.elapsed() < SHORT * 5);

    let (mut x, _y) = memory::pair_with(NetConfig::with_timeout(SHORT)).unwrap();
    let big = vec![0u8; 64 << 20];
    let r = x.send(1, SPACE.tag(A), &big).and_then(|()| x.flush());
    assert!(
        matches!(r, Err(Error::WriteTimeout { party: 1, .. })),
        "{r:?}"
    );

    let config = NetConfig {
        timeout: Duration::from_secs(3),
        deadline: Some(Duration::from_secs(1)),
    };
    let (mut x, mut y) = memory::pair_with(config).unwrap();
    let trickle = thread::spawn(move || {
        // A message every 200 ms: never silent for the 3 s timeout.
        for _ in 0..20 {
            thread::sleep(Duration::from_millis(200));
            if y.send(0, SPACE.tag(B), &[1])
                .and_then(|()| y.flush())
                .is_err()
            {
                break;
            }
        }
    });
    let start = Instant::now();
    let mut frame = Frame::new();
    let mut r = Ok(());
    for _ in 0..20 {
        r = x.recv_frame(1, SPACE.tag(B), Len::Exact(1), &mut frame);
        if r.is_err() {
            break;
        }
    }
    assert!(matches!(r, Err(Error::Deadline { .. })), "{r:?}");
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    drop(x);
    trickle.join().unwrap();
}

/// Timeouts too long for the clock saturate: no overflow panic (defect 3, once
/// `Instant::now() + timeout`).
#[test]
fn huge_timeouts_saturate() {
    let config = NetConfig {
        timeout: Duration::MAX,
        deadline: Some(Duration::MAX),
    };
    let listener = listen("127.0.0.1:0").unwrap();
    let addr = [listener.local_addr().unwrap().to_string()];
    let nets: Vec<Network> = thread::scope(|s| {
        let a = s.spawn(|| {
            let m = Mesh {
                me: 0,
                parties: 2,
                listener: Some(&listener),
                lower: &[],
                tls: None,
                setup: Duration::MAX,
            };
            mesh(m, config)
        });
        let m = Mesh {
            me: 1,
            parties: 2,
            listener: None,
            lower: &addr,
            tls: None,
            setup: Duration::MAX,
        };
        let b = mesh(m, config);
        vec![a.join().unwrap().unwrap(), b.unwrap()]
    });
    exchange(nets);
}

#[test]
fn tls_refuses_a_certificate_pinned_for_no_one() {
    let dir = tempfile::tempdir().unwrap();
    let good = tls_configs(dir.path(), 2);
    let stranger = keygen(&dir.path().join("x"), false).unwrap();
    // Party 1 presents its own certificate, but party 0 pins the stranger's for party 1.
    let zero = TlsConfig::load(&dir.path().join("0"), &[(1, stranger.as_path())]).unwrap();
    let listener = listen("127.0.0.1:0").unwrap();
    let addr = [listener.local_addr().unwrap().to_string()];
    let setup = Duration::from_secs(2);
    let (a, b) = thread::scope(|s| {
        let a = s.spawn(|| {
            let m = Mesh {
                me: 0,
                parties: 2,
                listener: Some(&listener),
                lower: &[],
                tls: Some(&zero),
                setup,
            };
            mesh(m, NetConfig::default())
        });
        let m = Mesh {
            me: 1,
            parties: 2,
            listener: None,
            lower: &addr,
            tls: Some(&good[1]),
            setup,
        };
        let b = mesh(m, NetConfig::default());
        (a.join().unwrap(), b)
    });
    match a {
        Err(Error::NeverConnected {
            missing,
            refused: Some(why),
            ..
        }) => {
            assert_eq!(missing, vec![1]);
            assert!(
                why.contains("pinned") || why.contains("certificate"),
                "{why}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(b.is_err(), "{b:?}");
}

/// Defect 7: keygen creates its files new, the key at 0600, refuses to overwrite or to write
/// through a link, and a key others can read is refused when loaded. Defect 2: key and
/// certificate files over 1 MiB (`/dev/zero`) are refused by name.
#[test]
fn keys_are_created_private_and_checked() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("k");
    let cert = keygen(&d, false).unwrap();
    let key = d.join("key.pem");
    assert_eq!(
        std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let e = keygen(&d, false).unwrap_err();
    assert!(e.to_string().contains("already exists"), "{e}");
    // A link at key.pem is not followed, even with force: the link goes, its target stays.
    let target = dir.path().join("target");
    std::fs::write(&target, "keep").unwrap();
    std::fs::remove_file(&key).unwrap();
    std::os::unix::fs::symlink(&target, &key).unwrap();
    assert!(keygen(&d, false).is_err());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    keygen(&d, true).unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    assert!(
        !std::fs::symlink_metadata(&key)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A key readable by others is refused, naming the file and why.
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let e = TlsConfig::load(&d, &[(1, cert.as_path())]).unwrap_err();
    assert!(
        e.to_string().contains("key.pem") && e.to_string().contains("0644"),
        "{e}"
    );
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Devices and malformed files are refused by name.
    let e = TlsConfig::load(&d, &[(1, std::path::Path::new("/dev/zero"))]).unwrap_err();
    assert!(
        e.to_string().contains("/dev/zero") && e.to_string().contains("not a regular file"),
        "{e}"
    );
    let not_pem = dir.path().join("x.pem");
    std::fs::write(&not_pem, "hello").unwrap();
    let e = TlsConfig::load(&d, &[(1, not_pem.as_path())]).unwrap_err();
    assert!(e.to_string().contains("x.pem"), "{e}");
    let e = TlsConfig::load(&dir.path().join("missing"), &[]).unwrap_err();
    assert!(e.to_string().contains("key.pem"), "{e}");
}

/// A stop while a large frame is half written (the peer not yet reading) still reaches the peer
/// as an abort: the frame's rest goes out first, so the peer reads the whole message and then
/// the code, never a frame cut in the middle.
#[test]
fn a_stop_in_the_middle_of_a_frame_reaches_the_peer_as_an_abort() {
    const BIG: usize = 16 << 20;
    let (mut x, mut y) =
        memory::pair_with(NetConfig::with_timeout(Duration::from_secs(10))).unwrap();
    let stopper = x.stopper();
    thread::scope(|s| {
        s.spawn(move || {
            thread::sleep(Duration::from_millis(100));
            stopper.stop();
        });
        let sender = s.spawn(move || {
            let e = x.send(1, SPACE.tag(A), &vec![7u8; BIG]).unwrap_err();
            assert_eq!(e, Error::Stopped);
            x.abort(AbortCode::Stopped);
        });
        thread::sleep(Duration::from_millis(300));
        let mut big = vec![0u8; BIG];
        y.recv_into(0, SPACE.tag(A), &mut big).unwrap();
        assert!(big.iter().all(|&b| b == 7));
        let e = y.recv_into(0, SPACE.tag(B), &mut [0u8; 1]).unwrap_err();
        assert_eq!(
            e,
            Error::PeerAborted {
                party: 0,
                code: AbortCode::Stopped
            }
        );
        sender.join().unwrap();
    });
}

/// A stopper made before the network stops a party still waiting for its peer to connect, at
/// once rather than at the end of the set-up time.
#[test]
fn a_stop_ends_the_wait_for_a_peer_to_connect() {
    let listener = tessera_net::tcp::listen("127.0.0.1:0").unwrap();
    let stopper = tessera_net::Stopper::new();
    let config = NetConfig::with_timeout(Duration::from_secs(30));
    let start = Instant::now();
    let stop = stopper.clone();
    let timer = thread::spawn(move || {
        thread::sleep(Duration::from_millis(200));
        stop.stop();
    });
    let e = tessera_net::tcp::two_party(Some(&listener), &[], None, config, &stopper).unwrap_err();
    timer.join().unwrap();
    assert_eq!(e, Error::Stopped);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    // Stopped before it starts, a dialling party does not dial.
    let addr = listener.local_addr().unwrap().to_string();
    let e = tessera_net::tcp::two_party(None, &[addr], None, config, &stopper).unwrap_err();
    assert_eq!(e, Error::Stopped);
}
