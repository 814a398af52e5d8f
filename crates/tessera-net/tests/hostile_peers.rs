//! Hostile peers and a hostile network (issue 42, defects 2, 4 and 5): a peer that trickles its
//! hello, hundreds of idle connections, a TLS handshake sent a byte at a time, half a frame and
//! a hang-up, and a man in the middle that trickles, cuts, flips and duplicates bytes. The
//! real peer must get through at once, every wait must end within its bound, and every fault
//! must end in an error naming it.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};
use tessera_net::tcp::{Mesh, listen, mesh};
use tessera_net::tls::{TlsConfig, keygen};
use tessera_net::{Error, Kind, NetConfig, Network, Space};

const SPACE: Space = Space::new(1);
const A: Kind = Kind::new(1, "a");

/// A mesh hello from party `from` of `n` to party `to`, as the wire carries it.
fn hello(n: u16, from: u16, to: u16) -> Vec<u8> {
    let mut f = vec![0, 0, 1, 15, 0, 0, 0];
    f.extend_from_slice(b"tessera\0");
    f.push(1);
    for v in [n, from, to] {
        f.extend_from_slice(&v.to_le_bytes());
    }
    f
}

/// Party 0 of two, listening, set up on a thread: its address and its result.
fn party0(
    tls: Option<TlsConfig>,
    setup: Duration,
    config: NetConfig,
) -> (SocketAddr, thread::JoinHandle<Result<Network, Error>>) {
    let listener = listen("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = thread::spawn(move || {
        let m = Mesh {
            me: 0,
            parties: 2,
            listener: Some(&listener),
            lower: &[],
            tls: tls.as_ref(),
            setup,
        };
        mesh(m, config)
    });
    (addr, handle)
}

/// Party 0 of two (read timeout `timeout`) and a raw socket as party 1 that has exchanged the
/// mesh hello with it.
fn raw_party1(timeout: Duration) -> (TcpStream, Network) {
    let (addr, zero) = party0(
        None,
        Duration::from_secs(10),
        NetConfig::with_timeout(timeout),
    );
    let mut raw = TcpStream::connect(addr).unwrap();
    raw.write_all(&hello(2, 1, 0)).unwrap();
    let mut answer = [0u8; 22];
    raw.read_exact(&mut answer).unwrap();
    assert_eq!(answer.to_vec(), hello(2, 0, 1));
    (raw, zero.join().unwrap().unwrap())
}

/// Party 1 of two, connecting to `addr`.
fn party1(addr: SocketAddr, tls: Option<&TlsConfig>, config: NetConfig) -> Result<Network, Error> {
    let lower = [addr.to_string()];
    let m = Mesh {
        me: 1,
        parties: 2,
        listener: None,
        lower: &lower,
        tls,
        setup: Duration::from_secs(10),
    };
    mesh(m, config)
}

/// Two parties' TLS configurations, each pinning the other's certificate.
fn tls_pair(dir: &std::path::Path) -> [TlsConfig; 2] {
    let certs: Vec<PathBuf> = (0..2)
        .map(|i| keygen(&dir.join(i.to_string()), false).unwrap())
        .collect();
    [0, 1].map(|i| {
        TlsConfig::load(&dir.join(i.to_string()), &[(1 - i, certs[1 - i].as_path())]).unwrap()
    })
}

/// Sends `bytes` one at a time, `gap` apart, ignoring a closed connection.
fn trickle(addr: SocketAddr, bytes: Vec<u8>, gap: Duration) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let Ok(mut s) = TcpStream::connect(addr) else {
            return;
        };
        for b in bytes {
            if s.write_all(&[b]).is_err() {
                return;
            }
            thread::sleep(gap);
        }
    })
}

/// Defect 2: a peer sending its hello a byte every 300 ms neither delays the real peer nor
/// stretches the set-up past its bound; the run's deadline bounds set-up too.
#[test]
fn a_trickled_hello_holds_nothing() {
    let config = NetConfig::with_timeout(Duration::from_secs(30));
    let (addr, zero) = party0(None, Duration::from_secs(10), config);
    let slow = trickle(addr, hello(2, 1, 0), Duration::from_millis(300));
    thread::sleep(Duration::from_millis(200));
    let start = Instant::now();
    let one = party1(addr, None, config).unwrap();
    let zero = zero.join().unwrap().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    drop((one, zero));
    slow.join().unwrap();

    // Alone, the trickler is turned away when set-up's bound passes, not 22 bytes later.
    let start = Instant::now();
    let (addr, zero) = party0(None, Duration::from_secs(2), config);
    let slow = trickle(addr, hello(2, 1, 0), Duration::from_millis(300));
    let err = zero.join().unwrap().unwrap_err();
    assert!(matches!(err, Error::NeverConnected { .. }), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
    slow.join().unwrap();

    // A deadline of 1 s bounds a set-up allowed 10 s.
    let start = Instant::now();
    let bounded = NetConfig {
        timeout: Duration::from_secs(30),
        deadline: Some(Duration::from_secs(1)),
    };
    let (_, zero) = party0(None, Duration::from_secs(10), bounded);
    assert!(zero.join().unwrap().is_err());
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}

/// Defect 4: 500 idle connections, made before the real peer, do not keep it out.
#[test]
fn idle_connections_do_not_lock_the_peer_out() {
    let config = NetConfig::with_timeout(Duration::from_secs(30));
    let (addr, zero) = party0(None, Duration::from_secs(10), config);
    let idle: Vec<TcpStream> = (0..500)
        .filter_map(|_| TcpStream::connect(addr).ok())
        .collect();
    assert!(idle.len() >= 400, "{} connections", idle.len());
    let start = Instant::now();
    let one = party1(addr, None, config).unwrap();
    zero.join().unwrap().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    drop((one, idle));
}

/// A TLS handshake record sent a byte every 200 ms (a slowloris) does not hold the listener:
/// the real peer's handshake goes through beside it.
#[test]
fn a_trickled_tls_handshake_holds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let [t0, t1] = tls_pair(dir.path());
    let config = NetConfig::with_timeout(Duration::from_secs(30));
    let (addr, zero) = party0(Some(t0), Duration::from_secs(10), config);
    let record = vec![
        0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03,
    ];
    let slow = trickle(addr, record, Duration::from_millis(200));
    thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    let one = party1(addr, Some(&t1), config).unwrap();
    zero.join().unwrap().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    drop(one);
    slow.join().unwrap();
}

/// Defect 5: half a frame and then a hang-up is a closed connection named with the message it
/// cut, at once, however long the read timeout, also when both arrive together while the
/// party is busy (one readiness event for the bytes and the end of the stream).
#[test]
fn half_a_frame_then_a_hang_up_is_seen_at_once() {
    for sent in [3usize, 7 + 50] {
        let (mut raw, mut zero) = raw_party1(Duration::from_secs(100));
        // A whole message first, so the party has waited on the link once.
        let (tail, mut whole) = (vec![1, 0, A.id, 100, 0, 0, 0], vec![1, 0, A.id, 4, 0, 0, 0]);
        whole.extend_from_slice(&[9u8; 4]);
        raw.write_all(&whole).unwrap();
        let mut four = [0u8; 4];
        zero.recv_into(1, SPACE.tag(A), &mut four).unwrap();
        // Then, while it does something else, half a frame and the end of the stream.
        let mut frame = tail;
        frame.extend_from_slice(&[5u8; 50]);
        raw.write_all(&frame[..sent]).unwrap();
        raw.shutdown(Shutdown::Both).unwrap();
        thread::sleep(Duration::from_millis(200));
        let start = Instant::now();
        let mut buf = [0u8; 100];
        let err = zero.recv_into(1, SPACE.tag(A), &mut buf).unwrap_err();
        assert_eq!(
            err,
            Error::Closed {
                party: 1,
                during: Some("a")
            },
            "{sent} bytes"
        );
        assert!(
            err.to_string().contains("in the middle of message 'a'"),
            "{err}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
    }
}

/// What the man in the middle does to the bytes party 1 sends, after the first `skip`.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Forwards one byte every 20 ms.
    Trickle,
    /// Forwards `n` bytes, then closes both connections.
    Cut(usize),
    /// Flips the low bit of the byte at offset `n`.
    Flip(usize),
    /// Forwards the `n` bytes from the offset twice.
    Duplicate(usize),
}

/// A relay on loopback to `target` that applies `fault` past the first `skip` bytes from the
/// connecting side; its address.
fn man_in_the_middle(target: SocketAddr, skip: usize, fault: Fault) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let (mut client, _) = listener.accept().unwrap();
        let mut server = TcpStream::connect(target).unwrap();
        let (mut back_from, mut back_to) =
            (server.try_clone().unwrap(), client.try_clone().unwrap());
        thread::spawn(move || {
            let _ = std::io::copy(&mut back_from, &mut back_to);
            let _ = back_to.shutdown(Shutdown::Write);
        });
        let mut seen = 0usize;
        let mut buf = [0u8; 4096];
        loop {
            let n = match client.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            for &b in &buf[..n] {
                let at = seen.checked_sub(skip);
                seen += 1;
                let out: Vec<u8> = match (fault, at) {
                    (_, None) => vec![b],
                    (Fault::Trickle, _) => {
                        thread::sleep(Duration::from_millis(20));
                        vec![b]
                    }
                    (Fault::Cut(k), Some(i)) if i >= k => {
                        let _ = server.shutdown(Shutdown::Both);
                        let _ = client.shutdown(Shutdown::Both);
                        return;
                    }
                    (Fault::Flip(k), Some(i)) if i == k => vec![b ^ 1],
                    (Fault::Duplicate(k), Some(i)) if i < k => vec![b, b],
                    _ => vec![b],
                };
                if server.write_all(&out).is_err() {
                    return;
                }
            }
        }
        let _ = server.shutdown(Shutdown::Write);
    });
    addr
}

/// Party 1 sends one 10 000-byte message through `fault`; party 0's receive of it.
fn through(fault: Fault, tls: bool, config: NetConfig) -> (Result<(), Error>, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let [t0, t1] = tls_pair(dir.path());
    let (t0, t1) = if tls {
        (Some(t0), Some(t1))
    } else {
        (None, None)
    };
    let (addr, zero) = party0(t0, Duration::from_secs(10), config);
    // Plain: the hello passes untouched; TLS: the handshake does.
    let skip = if tls { 4000 } else { 22 };
    let relay = man_in_the_middle(addr, skip, fault);
    let sender = thread::spawn(move || {
        let mut one = party1(relay, t1.as_ref(), config)?;
        one.send(0, SPACE.tag(A), &[7u8; 10_000])?;
        one.flush()?;
        thread::sleep(Duration::from_millis(500));
        Ok::<_, Error>(())
    });
    let mut zero = zero.join().unwrap().unwrap();
    let start = Instant::now();
    let mut buf = vec![0u8; 10_000];
    let got = zero.recv_into(1, SPACE.tag(A), &mut buf).and_then(|()| {
        if buf.iter().all(|&b| b == 7) {
            Ok(())
        } else {
            Err(Error::Usage("the payload arrived altered".into()))
        }
    });
    let _ = sender.join();
    (got, start.elapsed())
}

/// A man in the middle: a trickle is ended by the deadline, a cut is a closed connection
/// named with its message, and under TLS a flipped or duplicated byte is a failed link, never
/// altered data; over plain TCP a flipped tag is an unexpected message.
#[test]
fn a_man_in_the_middle_is_caught() {
    let bounded = NetConfig {
        timeout: Duration::from_secs(30),
        deadline: Some(Duration::from_secs(2)),
    };
    let (got, took) = through(Fault::Trickle, false, bounded);
    assert!(matches!(got, Err(Error::Deadline { .. })), "{got:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");

    let patient = NetConfig::with_timeout(Duration::from_secs(100));
    let (got, took) = through(Fault::Cut(1000), false, patient);
    assert_eq!(
        got,
        Err(Error::Closed {
            party: 1,
            during: Some("a")
        })
    );
    assert!(took < Duration::from_secs(3), "{took:?}");

    // Byte 2 of the first frame is its kind.
    let (got, _) = through(Fault::Flip(2), false, patient);
    assert!(
        matches!(got, Err(Error::UnexpectedMessage { party: 1, .. })),
        "{got:?}"
    );

    for fault in [Fault::Flip(100), Fault::Duplicate(300), Fault::Cut(500)] {
        let (got, took) = through(fault, true, patient);
        assert!(
            matches!(
                got,
                Err(Error::Io { party: 1, .. } | Error::Closed { party: 1, .. })
            ),
            "{fault:?}: {got:?}"
        );
        assert!(took < Duration::from_secs(3), "{fault:?}: {took:?}");
    }
}

/// Defect 11 at the wire: an abort carries one code byte. A raw peer's abort with 4 KiB of
/// terminal escapes and text is read as a code (here an unknown one) and shown as fixed text;
/// nothing it sent reaches the error.
#[test]
fn an_abort_is_a_code_and_a_peers_text_is_never_shown() {
    let (mut raw, mut zero) = raw_party1(Duration::from_secs(10));
    let text = format!("\u{1b}[2J\ntessera: result 42\n{}", "x".repeat(4000));
    let mut frame = vec![0, 0, 0xff];
    frame.extend_from_slice(&(text.len() as u32).to_le_bytes());
    frame.extend_from_slice(text.as_bytes());
    raw.write_all(&frame).unwrap();
    let mut buf = [0u8; 4];
    let err = zero.recv_into(1, SPACE.tag(A), &mut buf).unwrap_err();
    assert_eq!(
        err,
        Error::PeerAborted {
            party: 1,
            code: tessera_net::AbortCode::Unknown
        }
    );
    let shown = err.to_string();
    assert!(
        !shown.contains("result 42") && !shown.contains('\u{1b}'),
        "{shown}"
    );
    assert!(shown.len() < 100, "{shown}");
}

/// Defect 15: a key that does not go with its certificate, and a certificate that does not
/// decode, are refused when the configuration loads, naming the file, before anything listens.
#[test]
fn tls_misconfiguration_is_refused_when_loaded() {
    use tessera_net::tls::{CERT_FILE, KEY_FILE};
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let (cert_a, cert_b) = (keygen(&a, false).unwrap(), keygen(&b, false).unwrap());
    let own = std::fs::read(&cert_a).unwrap();
    TlsConfig::load(&a, &[(1, cert_b.as_path())]).unwrap();
    // a's key with b's certificate.
    std::fs::copy(&cert_b, a.join(CERT_FILE)).unwrap();
    let err = TlsConfig::load(&a, &[(1, cert_b.as_path())]).unwrap_err();
    assert!(
        err.to_string().contains(KEY_FILE) && err.to_string().contains("does not go with"),
        "{err}"
    );
    std::fs::write(&cert_a, &own).unwrap();
    TlsConfig::load(&a, &[(1, cert_b.as_path())]).unwrap();
    // A PEM certificate whose DER is not a certificate, as the peer's and as our own.
    let junk = dir.path().join("junk.pem");
    std::fs::write(
        &junk,
        "-----BEGIN CERTIFICATE-----\nAAECAwQFBgcICQ==\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let err = TlsConfig::load(&a, &[(1, junk.as_path())]).unwrap_err();
    assert!(
        err.to_string().contains("junk.pem") && err.to_string().contains("does not decode"),
        "{err}"
    );
    std::fs::copy(&junk, a.join(CERT_FILE)).unwrap();
    let err = TlsConfig::load(&a, &[(1, cert_b.as_path())]).unwrap_err();
    assert!(err.to_string().contains("does not decode"), "{err}");
}
