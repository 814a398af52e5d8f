//! The channel contract on every transport: messages arrive intact and in order, and every
//! way a peer can misbehave ends in a named error, not a panic or a hang.

use std::thread;
use std::time::Duration;
use tessera_core::Block;
use tessera_net::{Channel, Error, Tag, memory_pair, tcp, tls};

const A: Tag = Tag::new(1, "a");
const B: Tag = Tag::new(2, "b");
const SHORT: Duration = Duration::from_millis(300);

/// Both ends exchange small and large messages; stats count every byte and round.
fn exchange(mut x: impl Channel + Send + 'static, mut y: impl Channel + Send + 'static) {
    let big: Vec<u8> = (0..1_000_000u32).map(|i| (i * 7) as u8).collect();
    let big2 = big.clone();
    let peer = thread::spawn(move || {
        let mut got = vec![0u8; 3];
        y.recv_into(A, &mut got).unwrap();
        assert_eq!(got, [1, 2, 3]);
        let got = y.recv_bounded(B, 2_000_000).unwrap();
        assert_eq!(got, big2);
        let mut blocks = [Block::ZERO; 2];
        y.recv_blocks(A, &mut blocks).unwrap();
        assert_eq!(blocks, [Block::new(5), Block::ONES]);
        y.send(B, b"done").unwrap();
        y.flush().unwrap();
        y.stats()
    });
    x.send(A, &[1, 2, 3]).unwrap();
    x.send(B, &big).unwrap();
    x.send_blocks(A, &[Block::new(5), Block::ONES]).unwrap();
    assert_eq!(x.recv_bounded(B, 4).unwrap(), b"done");
    let (sx, sy) = (x.stats(), peer.join().unwrap());
    assert_eq!(sx.bytes_sent, sy.bytes_received);
    assert_eq!(sx.bytes_sent, (3 * 5 + 3 + 1_000_000 + 32) as u64);
    assert_eq!((sx.messages_sent, sy.messages_received), (3, 3));
    assert_eq!((sx.rounds, sy.rounds), (1, 1));
}

fn tcp_pair() -> (impl Channel + Send + 'static, impl Channel + Send + 'static) {
    let listener = tcp::listen("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let server = thread::spawn(move || tcp::accept(&listener, SHORT * 10).unwrap());
    let client = tcp::connect(&addr, SHORT * 10).unwrap();
    (client, server.join().unwrap())
}

#[test]
fn memory_exchange() {
    let (x, y) = memory_pair(None);
    exchange(x, y);
}

#[test]
fn tcp_exchange() {
    let (x, y) = tcp_pair();
    exchange(x, y);
}

fn keys() -> (
    tempfile::TempDir,
    tls::TlsConfig,
    tls::TlsConfig,
    std::path::PathBuf,
) {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    let (ca, cb) = (tls::keygen(&a).unwrap(), tls::keygen(&b).unwrap());
    let other = tls::keygen(&c).unwrap();
    (
        dir,
        tls::TlsConfig::load(&a, &cb).unwrap(),
        tls::TlsConfig::load(&b, &ca).unwrap(),
        other,
    )
}

#[test]
fn tls_exchange() {
    let (_dir, ca, cb, _) = keys();
    let listener = tcp::listen("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let server = thread::spawn(move || tls::accept(&listener, &cb, SHORT * 10).unwrap());
    let client = tls::connect(&addr, &ca, SHORT * 10).unwrap();
    exchange(client, server.join().unwrap());
}

/// A server that pins some other certificate refuses the client, and the client that pins
/// some other certificate refuses the server.
#[test]
fn tls_refuses_an_unpinned_certificate() {
    let (dir, ca, _cb, other) = keys();
    let b = dir.path().join("b");
    for (client_cfg, server_cfg) in [
        // The server expects `other`, the client presents a.
        (ca.clone(), tls::TlsConfig::load(&b, &other).unwrap()),
        // The client expects `other`, the server presents b.
        (
            tls::TlsConfig::load(&dir.path().join("a"), &other).unwrap(),
            tls::TlsConfig::load(&b, &dir.path().join("a/cert.pem")).unwrap(),
        ),
    ] {
        let listener = tcp::listen("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let server = thread::spawn(move || {
            tls::accept(&listener, &server_cfg, SHORT * 10).and_then(|mut c| {
                let mut b = [0u8; 1];
                c.recv_into(A, &mut b)
            })
        });
        let client = tls::connect(&addr, &client_cfg, SHORT * 10).and_then(|mut c| {
            c.send(A, &[1])?;
            c.flush()?;
            let mut b = [0u8; 1];
            c.recv_into(A, &mut b)
        });
        let server = server.join().unwrap();
        assert!(
            matches!(
                server,
                Err(Error::Tls(_)) | Err(Error::Io(_)) | Err(Error::Closed(_))
            ),
            "{server:?}"
        );
        assert!(client.is_err(), "{client:?}");
        let text = format!("{:?} {:?}", server, client);
        assert!(
            text.contains("pinned") || text.contains("certificate"),
            "{text}"
        );
    }
}

#[test]
fn key_files_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let not_pem = dir.path().join("x.pem");
    std::fs::write(&not_pem, "hello").unwrap();
    tls::keygen(dir.path()).unwrap();
    let e = tls::TlsConfig::load(dir.path(), &not_pem).unwrap_err();
    assert!(e.to_string().contains("x.pem"), "{e}");
    let e = tls::TlsConfig::load(&dir.path().join("missing"), &not_pem).unwrap_err();
    assert!(e.to_string().contains("key.pem"), "{e}");
}

/// Every kind of misbehaviour the receiver must name: a message out of order, of the wrong
/// length, larger than allowed, cut off by a hang-up, never sent, and an explicit abort.
#[test]
fn misbehaving_peers_get_named_errors() {
    type Misbehaviour = fn(&mut dyn Channel);
    let cases: Vec<(&str, Misbehaviour)> = vec![
        ("out of order", |c| c.send(B, &[0; 4]).unwrap()),
        ("wrong length", |c| c.send(A, &[0; 5]).unwrap()),
        ("abort", |c| c.abort("my input is malformed")),
        ("hang up", |_| {}),
    ];
    for (what, misbehave) in cases {
        let (mut x, mut y) = memory_pair(Some(SHORT));
        misbehave(&mut y);
        y.flush().ok();
        drop(y);
        let mut buf = [0u8; 4];
        let e = x.recv_into(A, &mut buf).unwrap_err();
        match what {
            "out of order" => assert!(matches!(e, Error::UnexpectedMessage { got: 2, .. })),
            "wrong length" => assert!(matches!(
                e,
                Error::WrongLength {
                    got: 5,
                    expected: 4,
                    ..
                }
            )),
            "abort" => assert_eq!(e, Error::PeerAborted("my input is malformed".into())),
            _ => assert!(matches!(e, Error::Closed(_))),
        }
        // The channel stays failed.
        assert!(matches!(x.recv_into(A, &mut buf), Err(Error::Poisoned(_))));
    }
    // Oversized: the length is rejected before any payload is read.
    let (mut x, mut y) = memory_pair(Some(SHORT));
    y.send(A, &[0; 100]).unwrap();
    y.flush().unwrap();
    assert!(matches!(
        x.recv_bounded(A, 99),
        Err(Error::Oversized {
            got: 100,
            max: 99,
            ..
        })
    ));
    // A truncated frame: the header promises more than arrives before the hang-up.
    let listener = tcp::listen("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let raw = thread::spawn(move || {
        use std::io::Write;
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(&[1, 100, 0, 0, 0, 9, 9, 9]).unwrap();
    });
    let mut x = tcp::accept(&listener, SHORT * 10).unwrap();
    raw.join().unwrap();
    let mut buf = [0u8; 100];
    assert!(matches!(x.recv_into(A, &mut buf), Err(Error::Closed(_))));
}

#[test]
fn a_silent_peer_times_out() {
    let (mut x, _y) = memory_pair(Some(SHORT));
    let start = std::time::Instant::now();
    assert!(matches!(x.recv_bounded(A, 4), Err(Error::Timeout(_))));
    assert!(start.elapsed() < SHORT * 5);
    // Over TCP too.
    let listener = tcp::listen("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let _server = thread::spawn(move || {
        let c = tcp::accept(&listener, SHORT * 10).unwrap();
        thread::sleep(SHORT * 4);
        drop(c);
    });
    let mut c = tcp::connect(&addr, SHORT).unwrap();
    assert!(matches!(c.recv_bounded(A, 4), Err(Error::Timeout(_))));
    // And a listener nobody connects to.
    let lonely = tcp::listen("127.0.0.1:0").unwrap();
    assert!(matches!(
        tcp::accept(&lonely, SHORT),
        Err(Error::Timeout(_))
    ));
}
