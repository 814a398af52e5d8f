//! The TCP mesh: every party but the last listens, and each party connects to every party
//! with a lower id, retrying until the set-up time runs out, and accepts the parties with a
//! higher id. Over each new connection (after the TLS handshake, under TLS) the connecting
//! party says who it is and whom it meant to reach, in a mesh hello, and the accepting party
//! answers with its own; a connection that does not check out (a stray client, a wrong party,
//! a certificate pinned for another party) is turned away and the wait goes on. Set-up runs
//! on blocking sockets (accepting on a second thread); the network then takes the sockets
//! over, non-blocking.

use super::tls::TlsConfig;
use crate::link::{Link, Socket};
use crate::network::after;
use crate::wire::{HEADER, Kind, RawTag, Space, header, parse_header};
use crate::{Error, NetConfig, Network};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// How often a pending connect or accept is retried.
const POLL: Duration = Duration::from_millis(10);
/// The mesh hello's message kind, in the network's own space.
const HELLO: Kind = Kind::new(1, "mesh hello");
const MAGIC: &[u8; 8] = b"tessera\0";
/// The mesh protocol's version.
const VERSION: u8 = 1;
const HELLO_LEN: usize = 8 + 1 + 2 + 2 + 2;

/// Listens on `addr` (`127.0.0.1:0` picks a free port; see [`TcpListener::local_addr`]).
pub fn listen(addr: &str) -> Result<TcpListener, Error> {
    let fail = |message: String| Error::Listen {
        addr: addr.to_owned(),
        message,
    };
    let addrs = resolve(addr).map_err(fail)?;
    TcpListener::bind(&addrs[..]).map_err(|e| fail(e.to_string()))
}

fn resolve(addr: &str) -> Result<Vec<SocketAddr>, String> {
    let addrs: Vec<SocketAddr> = addr.to_socket_addrs().map_err(|e| e.to_string())?.collect();
    if addrs.is_empty() {
        return Err("resolves to no address".into());
    }
    Ok(addrs)
}

/// One party's view of the mesh to build.
#[derive(Clone, Copy, Debug)]
pub struct Mesh<'a> {
    /// This party's id.
    pub me: usize,
    /// The number of parties.
    pub parties: usize,
    /// This party's listening socket; every party but the last needs one.
    pub listener: Option<&'a TcpListener>,
    /// The addresses of parties `0..me`, which this party connects to.
    pub lower: &'a [String],
    /// TLS with pinned certificates, or plain TCP.
    pub tls: Option<&'a TlsConfig>,
    /// How long set-up may take: connecting (with retries), accepting and the handshakes.
    pub setup: Duration,
}

/// All `n` parties of a mesh in this process over loopback TCP (ports picked by the system),
/// built on one thread per party; `tls[i]` is party i's configuration. For tests and
/// benchmarks.
pub fn loopback(
    n: usize,
    tls: Option<&[TlsConfig]>,
    setup: Duration,
    config: NetConfig,
) -> Result<Vec<Network>, Error> {
    let listeners = (0..n)
        .map(|_| listen("127.0.0.1:0"))
        .collect::<Result<Vec<_>, _>>()?;
    let addrs = listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.to_string()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::Usage(format!("a listener's address: {e}")))?;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|me| {
                let (listener, addrs) = (&listeners[me], &addrs);
                s.spawn(move || {
                    let m = Mesh {
                        me,
                        parties: n,
                        listener: Some(listener),
                        lower: &addrs[..me],
                        tls: tls.map(|t| &t[me]),
                        setup,
                    };
                    mesh(m, config)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// A socket after set-up, with its TLS state.
type Connected = (Socket, Option<Box<rustls::Connection>>);

/// Builds this party's network; see the module documentation.
pub fn mesh(m: Mesh<'_>, config: NetConfig) -> Result<Network, Error> {
    if m.me >= m.parties || m.lower.len() != m.me {
        return Err(Error::Usage(format!(
            "party {} of {} needs the addresses of parties 0..{}, got {}",
            m.me,
            m.parties,
            m.me,
            m.lower.len()
        )));
    }
    let higher: Vec<usize> = (m.me + 1..m.parties).collect();
    if !higher.is_empty() && m.listener.is_none() {
        return Err(Error::Usage(format!(
            "party {} must listen: parties {higher:?} connect to it",
            m.me
        )));
    }
    let started = Instant::now();
    let deadline = after(m.setup);
    let (accepted, connected) = std::thread::scope(|scope| {
        let acceptor = m
            .listener
            .filter(|_| !higher.is_empty())
            .map(|l| scope.spawn(move || accept_all(m, l, deadline, started)));
        let connected = (0..m.me)
            .map(|j| connect_one(m, j, deadline, started))
            .collect::<Result<Vec<_>, Error>>();
        let accepted = match acceptor {
            Some(a) => a.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            None => Ok(Vec::new()),
        };
        (accepted, connected)
    });
    let (accepted, connected) = (accepted?, connected?);
    let mut links: Vec<Option<Link>> = (0..m.parties).map(|_| None).collect();
    for (j, (socket, tls)) in connected.into_iter().enumerate() {
        links[j] = Some(Link::new(socket, tls));
    }
    for (j, (socket, tls)) in accepted {
        links[j] = Some(Link::new(socket, tls));
    }
    Network::new(m.me, links, config)
}

/// Time left until `deadline`, at least a millisecond (socket timeouts cannot be zero).
fn left(deadline: Option<Instant>) -> Duration {
    deadline.map_or(Duration::from_secs(3600), |d| {
        d.saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    })
}

fn passed(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

fn configure(s: &TcpStream, deadline: Option<Instant>) -> io::Result<()> {
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(left(deadline)))?;
    s.set_write_timeout(Some(left(deadline)))
}

fn hello_frame(n: usize, from: usize, to: usize) -> Vec<u8> {
    let mut f = header(RawTag::from(Space::CONTROL.tag(HELLO)), HELLO_LEN as u32).to_vec();
    f.extend_from_slice(MAGIC);
    f.push(VERSION);
    for v in [n, from, to] {
        f.extend_from_slice(&(v as u16).to_le_bytes());
    }
    f
}

/// Reads a mesh hello: (parties, from, to).
fn read_hello(s: &mut dyn ReadWrite) -> Result<(usize, usize, usize), String> {
    let mut h = [0u8; HEADER];
    s.read_exact(&mut h)
        .map_err(|e| format!("no mesh hello: {e}"))?;
    let (tag, len) = parse_header(&h);
    if tag != RawTag::from(Space::CONTROL.tag(HELLO)) || len != HELLO_LEN {
        return Err("not a Tessera mesh hello".into());
    }
    let mut p = [0u8; HELLO_LEN];
    s.read_exact(&mut p)
        .map_err(|e| format!("mesh hello cut off: {e}"))?;
    if &p[..8] != MAGIC {
        return Err("not a Tessera mesh hello".into());
    }
    if p[8] != VERSION {
        return Err(format!(
            "mesh protocol version {} at the peer, {VERSION} here",
            p[8]
        ));
    }
    let v = |k: usize| usize::from(u16::from_le_bytes([p[9 + 2 * k], p[10 + 2 * k]]));
    Ok((v(0), v(1), v(2)))
}

/// A blocking stream during set-up: plain or TLS.
enum SetupStream {
    Plain(TcpStream),
    Client(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
    Server(Box<rustls::StreamOwned<rustls::ServerConnection, TcpStream>>),
}

impl SetupStream {
    fn io(&mut self) -> &mut dyn ReadWrite {
        match self {
            SetupStream::Plain(s) => s,
            SetupStream::Client(s) => s.as_mut(),
            SetupStream::Server(s) => s.as_mut(),
        }
    }

    /// Hands the socket to the network: non-blocking, with the TLS state.
    fn finish(self) -> io::Result<Connected> {
        let (sock, tls) = match self {
            SetupStream::Plain(s) => (s, None),
            SetupStream::Client(s) => {
                let (conn, sock) = s.into_parts();
                (sock, Some(Box::new(rustls::Connection::Client(conn))))
            }
            SetupStream::Server(s) => {
                let (conn, sock) = s.into_parts();
                (sock, Some(Box::new(rustls::Connection::Server(conn))))
            }
        };
        sock.set_nonblocking(true)?;
        Ok((Socket::Tcp(mio::net::TcpStream::from_std(sock)), tls))
    }
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

fn handshake<C, D>(
    mut conn: C,
    mut sock: TcpStream,
) -> Result<Box<rustls::StreamOwned<C, TcpStream>>, String>
where
    C: std::ops::DerefMut<Target = rustls::ConnectionCommon<D>>,
    D: rustls::SideData,
{
    while conn.is_handshaking() {
        conn.complete_io(&mut sock)
            .map_err(|e| format!("TLS handshake: {e}"))?;
    }
    Ok(Box::new(rustls::StreamOwned::new(conn, sock)))
}

/// The first of `addrs` that accepts a connection within `timeout` each, or the last failure.
fn connect_any(addrs: &[SocketAddr], timeout: Duration) -> io::Result<TcpStream> {
    let mut last = io::Error::from(io::ErrorKind::AddrNotAvailable);
    for a in addrs {
        match TcpStream::connect_timeout(a, timeout) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Connects to party `j` (retrying while it does not listen yet), runs the handshake and the
/// hello.
fn connect_one(
    m: Mesh<'_>,
    j: usize,
    deadline: Option<Instant>,
    started: Instant,
) -> Result<Connected, Error> {
    let addr = &m.lower[j];
    let fail = |message: String| Error::Connect {
        party: j,
        addr: addr.clone(),
        message,
        waited: started.elapsed(),
    };
    let addrs = resolve(addr).map_err(fail)?;
    let sock = loop {
        match connect_any(&addrs, left(deadline).min(Duration::from_secs(5))) {
            Ok(s) => break s,
            Err(e) if passed(deadline) => return Err(fail(e.to_string())),
            Err(_) => std::thread::sleep(POLL),
        }
    };
    configure(&sock, deadline).map_err(|e| fail(e.to_string()))?;
    let handshake_error = |message: String| Error::Handshake {
        party: Some(j),
        message,
    };
    let mut stream = match m.tls {
        Some(tls) => SetupStream::Client(handshake(tls.client(j)?, sock).map_err(handshake_error)?),
        None => SetupStream::Plain(sock),
    };
    let io = stream.io();
    io.write_all(&hello_frame(m.parties, m.me, j))
        .and_then(|()| io.flush())
        .map_err(|e| handshake_error(format!("sending the mesh hello: {e}")))?;
    let (n, from, to) = read_hello(io).map_err(handshake_error)?;
    if (n, from, to) != (m.parties, j, m.me) {
        return Err(handshake_error(format!(
            "the peer at {addr} is party {from} of {n} and took this party for {to}; expected party {j} of {}",
            m.parties
        )));
    }
    stream.finish().map_err(|e| handshake_error(e.to_string()))
}

/// Accepts parties `me + 1..parties`; returns them with their ids.
fn accept_all(
    m: Mesh<'_>,
    listener: &TcpListener,
    deadline: Option<Instant>,
    started: Instant,
) -> Result<Vec<(usize, Connected)>, Error> {
    let setup = |e: io::Error| Error::Listen {
        addr: listener
            .local_addr()
            .map_or_else(|_| "?".into(), |a| a.to_string()),
        message: e.to_string(),
    };
    listener.set_nonblocking(true).map_err(setup)?;
    let mut got: Vec<(usize, Connected)> = Vec::new();
    let mut refused = None;
    while got.len() < m.parties - m.me - 1 {
        match listener.accept() {
            Ok((sock, from_addr)) => match welcome(m, sock, deadline, &got) {
                Ok(c) => got.push(c),
                Err(why) => refused = Some(format!("from {from_addr}: {why}")),
            },
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if passed(deadline) {
                    let missing = (m.me + 1..m.parties)
                        .filter(|j| got.iter().all(|(k, _)| k != j))
                        .collect();
                    return Err(Error::NeverConnected {
                        missing,
                        waited: started.elapsed(),
                        refused,
                    });
                }
                std::thread::sleep(POLL);
            }
            Err(e) => return Err(setup(e)),
        }
    }
    Ok(got)
}

/// Checks one accepted connection: handshake, hello, a party expected and not yet connected.
fn welcome(
    m: Mesh<'_>,
    sock: TcpStream,
    deadline: Option<Instant>,
    got: &[(usize, Connected)],
) -> Result<(usize, Connected), String> {
    sock.set_nonblocking(false).map_err(|e| e.to_string())?;
    configure(&sock, deadline).map_err(|e| e.to_string())?;
    let mut stream = match m.tls {
        Some(tls) => {
            let server = tls.server(m.me + 1..m.parties).map_err(|e| e.to_string())?;
            SetupStream::Server(handshake(server, sock)?)
        }
        None => SetupStream::Plain(sock),
    };
    let (n, from, to) = read_hello(stream.io())?;
    if n != m.parties || to != m.me || from <= m.me || from >= m.parties {
        return Err(format!(
            "it is party {from} of {n} and wants party {to}; this is party {} of {}",
            m.me, m.parties
        ));
    }
    if got.iter().any(|(k, _)| *k == from) {
        return Err(format!("party {from} is already connected"));
    }
    if let (Some(tls), SetupStream::Server(s)) = (m.tls, &stream) {
        let certified = s
            .conn
            .peer_certificates()
            .and_then(|c| c.first())
            .and_then(|c| tls.party_of(c));
        if certified != Some(from) {
            return Err(format!(
                "it says it is party {from}, but its certificate is {}",
                certified.map_or("no party's".into(), |p| format!("party {p}'s"))
            ));
        }
    }
    let io = stream.io();
    io.write_all(&hello_frame(m.parties, m.me, from))
        .and_then(|()| io.flush())
        .map_err(|e| format!("answering the mesh hello: {e}"))?;
    Ok((from, stream.finish().map_err(|e| e.to_string())?))
}
