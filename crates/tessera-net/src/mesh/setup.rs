//! Setting up a TCP mesh on one non-blocking event loop: every connection this party makes
//! and every one it accepts is a [`Pending`] state machine (connect, TLS handshake, mesh
//! hello), driven by readiness events under one deadline for the whole set-up. Many
//! connections are set up at once, so a stray, idle or slow one (a port scanner, a client that
//! sends one byte a second, a TLS handshake trickled out) never delays a legitimate one: it
//! sits in its own slot until [`HELLO_WAIT`] passes or, when [`MAX_PENDING`] are under way,
//! the newest arrival pushes the oldest out.
//!
//! The hello: the connecting party says who it is and whom it meant to reach; the accepting
//! party checks it (and, under TLS, that the certificate is that party's) and answers with its
//! own. A connection that fails in transport (refused, reset, closed) is retried by the
//! connecting party until the deadline; a hello that does not check out is an error there and
//! a refused connection at the accepting party, whose wait goes on.

use super::tcp::Mesh;
use crate::link::{Link, Socket};
use crate::wire::{FRAME_HEADER, Kind, RawTag, Space, header, parse_header};
use crate::{Error, Stopper};
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Connections this party accepts that may be setting up at once; one more pushes the oldest
/// out.
pub const MAX_PENDING: usize = 64;
/// How long one connection may take from its TCP connect to a checked hello.
pub const HELLO_WAIT: Duration = Duration::from_secs(10);
/// The pause before a failed connection is tried again.
const RETRY: Duration = Duration::from_millis(20);
/// The listening socket's token; pending connections use their slot's index.
const LISTENER: Token = Token(usize::MAX);
/// The stopper's waker's token.
const WAKE: Token = Token(usize::MAX - 1);

/// The mesh hello's message kind, in the network's own space.
const HELLO: Kind = Kind::new(1, "mesh hello");
const MAGIC: &[u8; 8] = b"tessera\0";
/// The mesh protocol's version.
const VERSION: u8 = 1;
const HELLO_LEN: usize = 8 + 1 + 2 + 2 + 2;
/// A hello on the wire: header and payload.
const HELLO_FRAME: usize = FRAME_HEADER + HELLO_LEN;

fn hello_frame(n: usize, from: usize, to: usize) -> Vec<u8> {
    let mut f = header(RawTag::from(Space::CONTROL.tag(HELLO)), HELLO_LEN as u32).to_vec();
    f.extend_from_slice(MAGIC);
    f.push(VERSION);
    for v in [n, from, to] {
        f.extend_from_slice(&(v as u16).to_le_bytes());
    }
    f
}

/// Checks what arrived of a hello so far: its header as soon as it is in, the rest once all of
/// it is; a whole hello gives (parties, from, to).
fn parse_hello(got: &[u8]) -> Result<Option<(usize, usize, usize)>, String> {
    if got.len() >= FRAME_HEADER {
        let (tag, len) = parse_header(&got[..FRAME_HEADER]);
        if tag != RawTag::from(Space::CONTROL.tag(HELLO)) || len != HELLO_LEN {
            return Err("not a Tessera mesh hello".into());
        }
    }
    if got.len() < HELLO_FRAME {
        return Ok(None);
    }
    let p = &got[FRAME_HEADER..];
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
    Ok(Some((v(0), v(1), v(2))))
}

/// Why a pending connection ended without a link.
enum Failure {
    /// The transport failed or the peer went away: try again (connecting side).
    Transport(String),
    /// The peer is not the party expected, or its TLS handshake failed.
    Refused(String),
}

fn transport(e: impl std::fmt::Display) -> Failure {
    Failure::Transport(e.to_string())
}

/// A non-blocking read's or write's outcome: the bytes it moved (0 when interrupted: try
/// again), `None` if it would block, or the failure (`closed` when it moved nothing: the end
/// of the stream).
fn progress(r: io::Result<usize>, closed: &str) -> Result<Option<usize>, Failure> {
    match r {
        Ok(0) => Err(transport(closed)),
        Ok(n) => Ok(Some(n)),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(Some(0)),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
        Err(e) => Err(transport(e)),
    }
}

/// Which end of a connection this party is.
#[derive(Clone, Copy, Debug)]
enum Side {
    /// This party connected to party `j`.
    Dialed(usize),
    /// A connection accepted from this address.
    Accepted(SocketAddr),
}

/// One connection in set-up.
struct Pending {
    socket: TcpStream,
    tls: Option<Box<rustls::Connection>>,
    side: Side,
    since: Instant,
    /// The TCP connect has completed (always, for accepted connections).
    connected: bool,
    /// This party's hello, and how much of it is written.
    out: Vec<u8>,
    sent: usize,
    /// The peer's hello so far.
    got: Vec<u8>,
}

impl Pending {
    /// A connection on `socket` for `side`, with this party's hello `out` (empty until an
    /// accepted connection's peer has said who it is).
    fn new(socket: TcpStream, tls: Option<rustls::Connection>, side: Side, out: Vec<u8>) -> Self {
        let _ = socket.set_nodelay(true);
        Pending {
            socket,
            tls: tls.map(Box::new),
            side,
            since: Instant::now(),
            connected: matches!(side, Side::Accepted(_)),
            out,
            sent: 0,
            got: Vec::new(),
        }
    }

    fn handshaking(&self) -> bool {
        self.tls.as_ref().is_some_and(|t| t.is_handshaking())
    }

    /// Moves TLS records both ways as far as the socket allows; whether anything moved.
    fn tls_io(&mut self) -> Result<bool, Failure> {
        let Some(tls) = self.tls.as_mut() else {
            return Ok(false);
        };
        let mut moved = false;
        while tls.wants_write() {
            match progress(tls.write_tls(&mut self.socket), "the connection closed")? {
                Some(_) => moved = true,
                None => break,
            }
        }
        if tls.wants_read()
            && progress(
                tls.read_tls(&mut self.socket),
                "the peer closed the connection",
            )?
            .is_some()
        {
            moved = true;
            tls.process_new_packets()
                .map_err(|e| Failure::Refused(format!("TLS handshake: {e}")))?;
        }
        Ok(moved)
    }

    /// Writes what is left of this party's hello; whether anything moved.
    fn write_hello(&mut self) -> Result<bool, Failure> {
        let rest = &self.out[self.sent..];
        if rest.is_empty() {
            return Ok(false);
        }
        let written = match self.tls.as_mut() {
            Some(tls) => tls.writer().write(rest),
            None => self.socket.write(rest),
        };
        Ok(match progress(written, "the connection closed")? {
            Some(n) => {
                self.sent += n;
                true
            }
            None => false,
        })
    }

    /// Reads more of the peer's hello (never past it); whether anything moved.
    fn read_hello(&mut self) -> Result<bool, Failure> {
        let mut buf = [0u8; HELLO_FRAME];
        let need = HELLO_FRAME - self.got.len();
        if need == 0 {
            return Ok(false);
        }
        let read = match self.tls.as_mut() {
            Some(tls) => tls.reader().read(&mut buf[..need]),
            None => self.socket.read(&mut buf[..need]),
        };
        Ok(
            match progress(read, "the peer closed the connection before its hello")? {
                Some(n) => {
                    self.got.extend_from_slice(&buf[..n]);
                    true
                }
                None => false,
            },
        )
    }

    /// Whether the TCP connect has completed; an error if it failed.
    fn check_connected(&mut self) -> Result<bool, Failure> {
        if self.connected {
            return Ok(true);
        }
        if let Some(e) = self.socket.take_error().map_err(transport)? {
            return Err(transport(e));
        }
        match self.socket.peer_addr() {
            Ok(_) => {
                self.connected = true;
                Ok(true)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotConnected | io::ErrorKind::WouldBlock
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(transport(e)),
        }
    }

    /// Drives the connection as far as its socket allows: the party at the other end once its
    /// hello has checked out (this party's answer then queued), or `None` while waiting.
    /// `links` are the links made so far: a party connects once.
    fn advance(&mut self, m: &Mesh<'_>, links: &[Option<Link>]) -> Result<Option<usize>, Failure> {
        if !self.check_connected()? {
            return Ok(None);
        }
        loop {
            let mut moved = self.tls_io()?;
            if !self.handshaking() {
                moved |= self.write_hello()?;
                moved |= self.read_hello()?;
                if let Some(hello) = parse_hello(&self.got).map_err(Failure::Refused)? {
                    let peer = self.check(m, links, hello)?;
                    if let Side::Accepted(_) = self.side {
                        self.out = hello_frame(m.parties, m.me, peer);
                        self.sent = 0;
                        self.write_hello()?;
                        self.tls_io()?;
                    }
                    return Ok(Some(peer));
                }
            }
            if !moved {
                return Ok(None);
            }
        }
    }

    /// The peer's party, if its hello `(parties, from, to)` is the one this end expects.
    fn check(
        &self,
        m: &Mesh<'_>,
        links: &[Option<Link>],
        (n, from, to): (usize, usize, usize),
    ) -> Result<usize, Failure> {
        let refuse = |why: String| Err(Failure::Refused(why));
        match self.side {
            Side::Dialed(j) if (n, from, to) != (m.parties, j, m.me) => refuse(format!(
                "the peer at {} is party {from} of {n} and took this party for {to}; expected party {j} of {}",
                m.lower[j], m.parties
            )),
            Side::Dialed(j) => Ok(j),
            Side::Accepted(_) => {
                if n != m.parties || to != m.me || from <= m.me || from >= m.parties {
                    return refuse(format!(
                        "it is party {from} of {n} and wants party {to}; this is party {} of {}",
                        m.me, m.parties
                    ));
                }
                if links[from].is_some() {
                    return refuse(format!("party {from} is already connected"));
                }
                if let (Some(config), Some(tls)) = (m.tls, &self.tls) {
                    let certified = tls
                        .peer_certificates()
                        .and_then(|c| c.first())
                        .and_then(|c| config.party_of(c));
                    if certified != Some(from) {
                        return refuse(format!(
                            "it says it is party {from}, but its certificate is {}",
                            certified.map_or("no party's".into(), |p| format!("party {p}'s"))
                        ));
                    }
                }
                Ok(from)
            }
        }
    }

    /// The link to the network, with what is left of this party's hello queued.
    fn into_link(mut self, poll: &Poll) -> Link {
        // Best effort: the set-up poll is dropped right after.
        let _ = poll.registry().deregister(&mut self.socket);
        let rest = self.out.split_off(self.sent.min(self.out.len()));
        let mut link = Link::new(Socket::Tcp(self.socket), self.tls);
        link.queue(&[], &rest);
        link
    }
}

/// The connecting side's state toward one lower party.
struct Dial {
    addrs: Vec<SocketAddr>,
    attempts: usize,
    next: Instant,
    active: bool,
    last: String,
}

/// The event loop's state.
struct Setup<'a> {
    m: Mesh<'a>,
    poll: Poll,
    slots: Vec<Option<Pending>>,
    dials: Vec<Dial>,
    links: Vec<Option<Link>>,
    refused: Option<String>,
    started: Instant,
}

/// Connects and accepts every peer of `m` before `deadline`: this party's links, `None` at its
/// own index.
pub(super) fn connect_all(
    m: Mesh<'_>,
    addrs: Vec<Vec<SocketAddr>>,
    deadline: Option<Instant>,
    stopper: &Stopper,
) -> Result<Vec<Option<Link>>, Error> {
    let io = |e: io::Error| Error::Usage(format!("setting up the event loop: {e}"));
    let poll = Poll::new().map_err(io)?;
    stopper.wake(poll.registry(), WAKE).map_err(io)?;
    let mut listener = match m.listener.filter(|_| m.me + 1 < m.parties) {
        Some(l) => {
            let l = l.try_clone().map_err(io)?;
            l.set_nonblocking(true).map_err(io)?;
            let mut l = TcpListener::from_std(l);
            poll.registry()
                .register(&mut l, LISTENER, Interest::READABLE)
                .map_err(io)?;
            Some(l)
        }
        None => None,
    };
    let now = Instant::now();
    let mut s = Setup {
        m,
        poll,
        slots: Vec::new(),
        dials: addrs
            .into_iter()
            .map(|addrs| Dial {
                addrs,
                attempts: 0,
                next: now,
                active: false,
                last: "no answer".into(),
            })
            .collect(),
        links: (0..m.parties).map(|_| None).collect(),
        refused: None,
        started: now,
    };
    let mut events = Events::with_capacity(256);
    while (0..m.parties).any(|j| j != m.me && s.links[j].is_none()) {
        if stopper.is_stopped() {
            return Err(Error::Stopped);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(s.timed_out());
        }
        s.start_dials();
        s.expire();
        match s.poll.poll(&mut events, Some(s.wait(deadline))) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
        for event in events.iter() {
            match (event.token(), listener.as_mut()) {
                (LISTENER, Some(l)) => s.accept(l),
                (WAKE, _) => {}
                (Token(k), _) => s.serve(k)?,
            }
        }
    }
    Ok(s.links)
}

impl Setup<'_> {
    /// How long to sleep: until the deadline, the next connection attempt or the next expiry.
    fn wait(&self, deadline: Option<Instant>) -> Duration {
        let dials = self.dials.iter().filter(|d| !d.active).map(|d| d.next);
        let expiries = self.slots.iter().flatten().map(|p| p.since + HELLO_WAIT);
        let until = dials.chain(expiries).chain(deadline).min();
        until.map_or(Duration::from_secs(60), |u| {
            u.saturating_duration_since(Instant::now())
                .min(Duration::from_secs(60))
        })
    }

    /// Starts a connection to each lower party that has none under way and is due.
    fn start_dials(&mut self) {
        let now = Instant::now();
        for j in 0..self.dials.len() {
            let d = &mut self.dials[j];
            if self.links[j].is_some() || d.active || d.next > now || d.addrs.is_empty() {
                continue;
            }
            let addr = d.addrs[d.attempts % d.addrs.len()];
            d.attempts += 1;
            let pending = TcpStream::connect(addr).and_then(|socket| {
                let tls = match self.m.tls {
                    Some(t) => Some(rustls::Connection::Client(
                        t.client(j).map_err(|e| io::Error::other(e.to_string()))?,
                    )),
                    None => None,
                };
                let hello = hello_frame(self.m.parties, self.m.me, j);
                Ok(Pending::new(socket, tls, Side::Dialed(j), hello))
            });
            match pending.and_then(|p| self.insert(p)) {
                Ok(()) => self.dials[j].active = true,
                Err(e) => {
                    self.dials[j].last = e.to_string();
                    self.dials[j].next = now + RETRY;
                }
            }
        }
    }

    /// Puts `p` in a free slot and registers it.
    fn insert(&mut self, mut p: Pending) -> io::Result<()> {
        let k = self
            .slots
            .iter()
            .position(Option::is_none)
            .unwrap_or(self.slots.len());
        self.poll.registry().register(
            &mut p.socket,
            Token(k),
            Interest::READABLE | Interest::WRITABLE,
        )?;
        if k == self.slots.len() {
            self.slots.push(Some(p));
        } else {
            self.slots[k] = Some(p);
        }
        Ok(())
    }

    /// Accepts what the listener has, pushing the oldest accepted connection out when
    /// [`MAX_PENDING`] are setting up.
    fn accept(&mut self, listener: &mut TcpListener) {
        loop {
            let (socket, from) = match listener.accept() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // WouldBlock, or out of descriptors: the next event tries again.
                Err(_) => return,
            };
            let accepted = |p: &Option<Pending>| {
                p.as_ref()
                    .is_some_and(|p| matches!(p.side, Side::Accepted(_)))
            };
            if self.slots.iter().filter(|p| accepted(p)).count() >= MAX_PENDING {
                let oldest = (0..self.slots.len())
                    .filter(|&k| accepted(&self.slots[k]))
                    .min_by_key(|&k| self.slots[k].as_ref().map(|p| p.since));
                if let Some(k) = oldest {
                    self.end(
                        k,
                        Failure::Transport(format!(
                            "pushed out: {MAX_PENDING} connections were setting up at once"
                        )),
                    );
                }
            }
            let tls = match self.m.tls.map(|t| t.server(self.m.me + 1..self.m.parties)) {
                Some(Ok(t)) => Some(rustls::Connection::Server(t)),
                Some(Err(e)) => {
                    self.refused = Some(format!("from {from}: {e}"));
                    continue;
                }
                None => None,
            };
            let p = Pending::new(socket, tls, Side::Accepted(from), Vec::new());
            if let Err(e) = self.insert(p) {
                self.refused = Some(format!("from {from}: {e}"));
            }
        }
    }

    /// Drives the connection in slot `k` after an event; a hello that does not check out on a
    /// connection this party made is an error.
    fn serve(&mut self, k: usize) -> Result<(), Error> {
        let Some(p) = self.slots.get_mut(k).and_then(Option::as_mut) else {
            return Ok(());
        };
        let side = p.side;
        match (p.advance(&self.m, &self.links), side) {
            (Ok(None), _) => Ok(()),
            (Ok(Some(peer)), _) => {
                if let Some(p) = self.slots[k].take() {
                    if let Side::Dialed(j) = side {
                        self.dials[j].active = false;
                    }
                    self.links[peer] = Some(p.into_link(&self.poll));
                }
                Ok(())
            }
            (Err(Failure::Refused(why)), Side::Dialed(j)) => Err(Error::Handshake {
                party: Some(j),
                message: why,
            }),
            (Err(failure), _) => {
                self.end(k, failure);
                Ok(())
            }
        }
    }

    /// Drops the connection in slot `k`: a connecting side tries again after a pause; an
    /// accepting side notes why.
    fn end(&mut self, k: usize, failure: Failure) {
        let Some(mut p) = self.slots[k].take() else {
            return;
        };
        let _ = self.poll.registry().deregister(&mut p.socket);
        let why = match failure {
            Failure::Transport(w) | Failure::Refused(w) => w,
        };
        match p.side {
            Side::Dialed(j) => {
                let d = &mut self.dials[j];
                d.active = false;
                d.last = why;
                d.next = Instant::now() + RETRY;
            }
            Side::Accepted(from) => self.refused = Some(format!("from {from}: {why}")),
        }
    }

    /// Ends every connection that has taken longer than [`HELLO_WAIT`].
    fn expire(&mut self) {
        let now = Instant::now();
        for k in 0..self.slots.len() {
            if self.slots[k]
                .as_ref()
                .is_some_and(|p| now >= p.since + HELLO_WAIT)
            {
                self.end(
                    k,
                    Failure::Transport(format!("no hello within {HELLO_WAIT:?}")),
                );
            }
        }
    }

    /// The error at the deadline: the parties that never connected to this one first, else
    /// the first this one could not reach.
    fn timed_out(self) -> Error {
        let waited = self.started.elapsed();
        let missing: Vec<usize> = (self.m.me + 1..self.m.parties)
            .filter(|&j| self.links[j].is_none())
            .collect();
        if !missing.is_empty() {
            return Error::NeverConnected {
                missing,
                waited,
                refused: self.refused,
            };
        }
        let j = (0..self.m.me)
            .find(|&j| self.links[j].is_none())
            .unwrap_or(0);
        Error::Connect {
            party: j,
            addr: self.m.lower.get(j).cloned().unwrap_or_default(),
            message: self
                .dials
                .get(j)
                .map_or_else(String::new, |d| d.last.clone()),
            waited,
        }
    }
}
