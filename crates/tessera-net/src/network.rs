//! A party's connections to all other parties, driven by one event loop on the calling thread:
//! sockets are non-blocking, a send queues (and writes what the socket takes), and every wait,
//! for a message from one peer or for queued data to leave, serves all links meanwhile:
//! it reads what any peer sent (up to [`MAX_UNREAD`] bytes each) and writes what any queue
//! holds. So a write to one peer never blocks a read from another, and parties that all send
//! to all at once do not deadlock (MOTION2NX App. B: asynchronous message-based
//! communication, Braun et al., MOTION2NX). An abort message that arrives from any
//! peer while this party waits for another ends the wait.

use crate::AbortCode;
use crate::link::{Fill, Link};
use crate::wire::{
    ABORT, ABORT_TAG, FRAME_HEADER, Frame, Len, RawTag, Space, Tag, header, parse_header,
};
use crate::{Channel, Error, Stats};
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The most bytes received from one peer and not yet consumed that this party buffers; past
/// it, the peer's data waits in the transport (a peer cannot make this party hold more).
pub const MAX_UNREAD: usize = 1 << 28;
/// A send waits once this many bytes are queued for one peer, until half have left: memory
/// follows what is in flight, not what a protocol produces.
const SEND_HIGH_WATER: usize = 8 << 20;
/// Queued bytes that make a send write to the socket at once.
const WRITE_CHUNK: usize = 1 << 16;

/// How long the network waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetConfig {
    /// The longest a wait for one peer may go without progress: nothing received while
    /// waiting for a message (read timeout), nothing taken while waiting to send (write
    /// timeout).
    pub timeout: Duration,
    /// A bound on the whole run from the network's creation, which a peer that trickles data
    /// cannot extend; `None` for none.
    pub deadline: Option<Duration>,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            timeout: crate::DEFAULT_TIMEOUT,
            deadline: None,
        }
    }
}

impl NetConfig {
    /// Waits of at most `timeout`, no deadline.
    pub fn with_timeout(timeout: Duration) -> Self {
        NetConfig {
            timeout,
            deadline: None,
        }
    }
}

/// `now + d`, or `None` (never) where that is past what [`Instant`] can hold.
pub(crate) fn after(d: Duration) -> Option<Instant> {
    Instant::now().checked_add(d)
}

/// A transport error on the link to `party`.
fn io_error(party: usize) -> impl Fn(io::Error) -> Error {
    move |e| Error::Io {
        party,
        message: e.to_string(),
    }
}

/// What a wait is for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Read,
    Write,
}

/// A party's links to parties 0..n (none to itself); see the module documentation.
pub struct Network {
    me: usize,
    links: Vec<Option<Link>>,
    poll: mio::Poll,
    events: mio::Events,
    config: NetConfig,
    deadline: Option<Instant>,
    /// The first error: after one, a stream may be mid-message, so the network stops.
    failed: Option<String>,
    aborted: bool,
    rounds: u64,
    receiving: bool,
    /// Set from another thread; every wait checks it.
    stopper: Stopper,
    meter: Option<Meter>,
}

/// Watches a network's traffic while a long phase runs (a progress bar): called with the
/// traffic so far, on the party's own thread, from its sends, receives and waits, at most once
/// per `every`.
struct Meter {
    every: Duration,
    last: Instant,
    watch: Box<dyn FnMut(Stats) + Send>,
}

/// The token of the stopper's waker (links use their party's id).
const WAKE: mio::Token = mio::Token(usize::MAX);

/// Stops a network from another thread (a user's Ctrl-C): its next wait, or the one it is in,
/// fails with [`Error::Stopped`], and the session aborting on it tells the peers. Made before
/// the network ([`Stopper::new`], given to [`crate::tcp::two_party`]), it also stops the
/// network's set-up, waiting for a peer to connect.
#[derive(Clone, Debug, Default)]
pub struct Stopper(Arc<StopState>);

#[derive(Debug, Default)]
struct StopState {
    stop: AtomicBool,
    /// The waker of the event loop waiting now (the set-up's, then the network's).
    waker: std::sync::Mutex<Option<Arc<mio::Waker>>>,
}

impl Stopper {
    /// A stopper for a network still to be made.
    pub fn new() -> Self {
        Stopper::default()
    }

    /// Stops the network (or its set-up).
    pub fn stop(&self) {
        self.0.stop.store(true, Ordering::SeqCst);
        if let Ok(waker) = self.0.waker.lock()
            && let Some(w) = waker.as_ref()
        {
            let _ = w.wake();
        }
    }

    /// Whether [`Stopper::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        self.0.stop.load(Ordering::SeqCst)
    }

    /// Wakes `registry`'s event loop on a stop from now on (and at once if stopped already).
    pub(crate) fn wake(&self, registry: &mio::Registry, token: mio::Token) -> io::Result<()> {
        let waker = Arc::new(mio::Waker::new(registry, token)?);
        if let Ok(mut slot) = self.0.waker.lock() {
            *slot = Some(waker.clone());
        }
        if self.is_stopped() {
            waker.wake()?;
        }
        Ok(())
    }
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network")
            .field("me", &self.me)
            .field("parties", &self.links.len())
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl Network {
    /// A network over connected links (`links[me]` is `None`), bounded by `deadline` (the
    /// run's, counted from before set-up), stopped by `stopper`.
    pub(crate) fn new(
        me: usize,
        links: Vec<Option<Link>>,
        config: NetConfig,
        deadline: Option<Instant>,
        stopper: Stopper,
    ) -> Result<Self, Error> {
        let setup = |e: io::Error| Error::Usage(format!("setting up the event loop: {e}"));
        let poll = mio::Poll::new().map_err(setup)?;
        let mut links = links;
        for (j, link) in links.iter_mut().enumerate() {
            if let Some(link) = link {
                poll.registry()
                    .register(
                        link.source(),
                        mio::Token(j),
                        mio::Interest::READABLE | mio::Interest::WRITABLE,
                    )
                    .map_err(setup)?;
            }
        }
        stopper.wake(poll.registry(), WAKE).map_err(setup)?;
        Ok(Network {
            me,
            links,
            poll,
            events: mio::Events::with_capacity(64),
            config,
            deadline,
            failed: None,
            aborted: false,
            rounds: 0,
            receiving: true,
            stopper,
            meter: None,
        })
    }

    /// Calls `watch` with this party's traffic so far ([`Network::stats`]) at most once per
    /// `every` while the network sends, receives or waits, until [`Network::unmeter`]: what
    /// a progress bar over a long phase reads. Replaces an earlier meter.
    pub fn meter(&mut self, every: Duration, watch: impl FnMut(Stats) + Send + 'static) {
        self.meter = Some(Meter {
            every,
            last: Instant::now(),
            watch: Box::new(watch),
        });
    }

    /// Stops calling the meter.
    pub fn unmeter(&mut self) {
        self.meter = None;
    }

    /// Calls the meter if its interval has passed.
    fn tick(&mut self) {
        if self
            .meter
            .as_ref()
            .is_some_and(|m| m.last.elapsed() >= m.every)
        {
            let stats = self.stats();
            if let Some(m) = &mut self.meter {
                m.last = Instant::now();
                (m.watch)(stats);
            }
        }
    }

    /// A handle that stops this network from another thread.
    pub fn stopper(&self) -> Stopper {
        self.stopper.clone()
    }

    /// This party's id.
    pub fn id(&self) -> usize {
        self.me
    }

    /// The number of parties, this one included.
    pub fn parties(&self) -> usize {
        self.links.len()
    }

    /// The other parties' ids.
    pub fn peers(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.links.len()).filter(move |&j| j != self.me)
    }

    /// The two-party channel to peer `j`: messages to and from `j` only.
    pub fn peer(&mut self, j: usize) -> PeerChannel<'_> {
        PeerChannel { net: self, peer: j }
    }

    /// What has crossed all links so far; `rounds` counts the times this party started
    /// sending after it had received from anyone.
    pub fn stats(&self) -> Stats {
        let total = self.links.iter().flatten().map(|l| l.stats).sum::<Stats>();
        Stats {
            rounds: self.rounds,
            ..total
        }
    }

    /// What has crossed the link to peer `j` (nothing for an id that is not a peer).
    pub fn peer_stats(&self, j: usize) -> Stats {
        self.links
            .get(j)
            .and_then(Option::as_ref)
            .map_or_else(Stats::default, |l| l.stats)
    }

    fn check(&self) -> Result<(), Error> {
        match &self.failed {
            Some(e) => Err(Error::Poisoned(e.clone())),
            None => Ok(()),
        }
    }

    /// Records `result`'s error, if any, so later calls fail fast. A link that failed may be
    /// the echo of an abort another peer sent to all (the peer this party waited for stopped
    /// because of it), so the abort, the root cause, is reported where there is one.
    fn track<T>(&mut self, result: Result<T, Error>) -> Result<T, Error> {
        self.tick();
        let result = result.map_err(|e| match e {
            Error::Closed { .. }
            | Error::Io { .. }
            | Error::ReadTimeout { .. }
            | Error::WriteTimeout { .. } => self.abort_seen().unwrap_or(e),
            e => e,
        });
        if let Err(e) = &result {
            self.failed.get_or_insert_with(|| e.to_string());
        }
        result
    }

    /// Reads, without waiting, what every peer has sent and returns an abort found in it.
    fn abort_seen(&mut self) -> Option<Error> {
        for link in self.links.iter_mut().flatten() {
            // No poll has run since the failure: try every link.
            link.readable = true;
            link.read_available();
        }
        self.links.iter().enumerate().find_map(|(k, l)| {
            let code = l.as_ref()?.abort?;
            Some(Error::PeerAborted { party: k, code })
        })
    }

    fn link(&mut self, j: usize) -> Result<&mut Link, Error> {
        let me = self.me;
        let parties = self.links.len();
        let link = self
            .links
            .get_mut(j)
            .and_then(Option::as_mut)
            .ok_or_else(|| {
                Error::Usage(format!(
                    "party {j} is not a peer of party {me} in a network of {parties}"
                ))
            })?;
        match &link.broken {
            Some(e) => Err(Error::Io {
                party: j,
                message: e.clone(),
            }),
            None => Ok(link),
        }
    }

    /// Queues one message to peer `to`.
    pub fn send(&mut self, to: usize, tag: Tag, payload: &[u8]) -> Result<(), Error> {
        self.check()?;
        let r = self.send_raw(to, tag.into(), payload);
        self.track(r)
    }

    /// Queues one message to every peer.
    pub fn broadcast(&mut self, tag: Tag, payload: &[u8]) -> Result<(), Error> {
        for j in 0..self.links.len() {
            if j != self.me {
                self.send(j, tag, payload)?;
            }
        }
        Ok(())
    }

    fn send_raw(&mut self, to: usize, tag: RawTag, payload: &[u8]) -> Result<(), Error> {
        let len = u32::try_from(payload.len()).map_err(|_| {
            Error::Usage(format!("a message of {} bytes is too long", payload.len()))
        })?;
        let new_round = self.link(to)?.count_sent(FRAME_HEADER + payload.len());
        if new_round && self.receiving {
            self.rounds += 1;
            self.receiving = false;
        }
        let header = header(tag, len);
        let link = self.link(to)?;
        if link.writes_direct(payload.len()) {
            return self.write_direct(to, &header, payload);
        }
        link.queue(&header, payload);
        if link.unsent() >= WRITE_CHUNK && link.writable {
            link.push().map_err(io_error(to))?;
        }
        if link.unsent() > SEND_HIGH_WATER {
            self.drain(to, SEND_HIGH_WATER / 2)?;
        }
        Ok(())
    }

    /// Writes a frame to `to` straight from the caller's buffers, after what is queued before
    /// it; while the socket is full it serves every link, as any wait does. A wait that fails
    /// (a stop, a timeout) after part of the frame went out queues the rest, so that an abort
    /// sent next follows a whole frame and the peer can read it.
    fn write_direct(&mut self, to: usize, header: &[u8], payload: &[u8]) -> Result<(), Error> {
        self.drain(to, 0)?;
        let total = header.len() + payload.len();
        let rest = |written: usize| match header.get(written..) {
            Some(h) => (h, payload),
            None => (&[][..], &payload[written - header.len()..]),
        };
        let (mut written, mut progress) = (0, Instant::now());
        loop {
            let link = self.link(to)?;
            if link.writable {
                let (h, p) = rest(written);
                let n = link.write_now(h, p).map_err(io_error(to))?;
                if n > 0 {
                    written += n;
                    progress = Instant::now();
                }
                if written == total {
                    return Ok(());
                }
            }
            if let Err(e) = self.wait(to, Dir::Write, progress) {
                if written > 0 {
                    let (h, p) = rest(written);
                    self.link(to)?.queue(h, p);
                }
                return Err(e);
            }
        }
    }

    /// Waits until at most `below` bytes are queued for `to`.
    fn drain(&mut self, to: usize, below: usize) -> Result<(), Error> {
        let mut progress = Instant::now();
        loop {
            let link = self.link(to)?;
            let before = link.unsent();
            if link.writable {
                link.push().map_err(io_error(to))?;
            }
            if link.unsent() < before {
                progress = Instant::now();
            }
            if link.unsent() <= below && (below > 0 || !link.has_unsent()) {
                return Ok(());
            }
            self.wait(to, Dir::Write, progress)?;
        }
    }

    /// Sends everything queued to every peer, serving incoming data meanwhile.
    pub fn flush(&mut self) -> Result<(), Error> {
        self.check()?;
        let me = self.me;
        let r = (0..self.links.len())
            .filter(|&j| j != me)
            .try_for_each(|j| self.drain(j, 0));
        self.track(r)
    }

    /// Receives one message from `from` that must be tagged `tag` and fit `len`, into `frame`.
    pub fn recv_frame(
        &mut self,
        from: usize,
        tag: Tag,
        len: Len,
        frame: &mut Frame,
    ) -> Result<(), Error> {
        self.check()?;
        let r = self.recv_header(from, tag, len).and_then(|n| {
            let out = frame.prepare(n);
            self.recv_payload(from, tag.kind.name, out)
        });
        self.track(r)
    }

    /// Receives one message from `from` that must be tagged `tag` and fill `out` exactly.
    pub fn recv_into(&mut self, from: usize, tag: Tag, out: &mut [u8]) -> Result<(), Error> {
        self.check()?;
        let r = self
            .recv_header(from, tag, Len::Exact(out.len()))
            .and_then(|_| self.recv_payload(from, tag.kind.name, out));
        self.track(r)
    }

    /// Reads and checks the next header from `from`; returns the payload length.
    fn recv_header(&mut self, from: usize, tag: Tag, len: Len) -> Result<usize, Error> {
        self.push_all();
        self.buffer(from, tag.kind.name, FRAME_HEADER)?;
        let link = self.link(from)?;
        let h = link.take_header();
        link.count_received(FRAME_HEADER);
        self.receiving = true;
        let (got, n) = parse_header(&h);
        if got == ABORT_TAG {
            // The code may be cut off by a hang-up: then it is unknown.
            let _ = self.buffer(from, "abort", n.min(1));
            let link = self.link(from)?;
            let mut first = [0u8; 1];
            let got = if n >= 1 { link.take(&mut first) } else { 0 };
            let code = AbortCode::from_payload(&first[..got]);
            return Err(Error::PeerAborted { party: from, code });
        }
        if got != RawTag::from(tag) {
            return Err(Error::UnexpectedMessage {
                party: from,
                expected: tag.kind.name,
                expected_tag: tag.into(),
                got,
            });
        }
        match len {
            Len::Exact(e) if n != e => Err(Error::WrongLength {
                party: from,
                name: tag.kind.name,
                got: n,
                expected: e,
            }),
            Len::AtMost(max) if n > max => Err(Error::Oversized {
                party: from,
                name: tag.kind.name,
                got: n,
                max,
            }),
            _ => Ok(n),
        }
    }

    /// Fills `out` with the next bytes from `from`, the payload of message `name`: buffered
    /// ones first, then straight from the transport for large payloads.
    fn recv_payload(
        &mut self,
        from: usize,
        name: &'static str,
        out: &mut [u8],
    ) -> Result<(), Error> {
        let mut got = self.link(from)?.take(out);
        let mut progress = Instant::now();
        while got < out.len() {
            let left = out.len() - got;
            let link = self.link(from)?;
            if !link.readable && link.unread() == 0 {
                self.wait(from, Dir::Read, progress)?;
                continue;
            }
            if left < (1 << 16) {
                match link.fill(MAX_UNREAD).map_err(io_error(from))? {
                    Fill::Got | Fill::Full => {}
                    Fill::Eof => {
                        return Err(Error::Closed {
                            party: from,
                            during: Some(name),
                        });
                    }
                    Fill::Blocked => self.wait(from, Dir::Read, progress)?,
                }
                let n = self.link(from)?.take(&mut out[got..]);
                if n > 0 {
                    progress = Instant::now();
                }
                got += n;
                continue;
            }
            match link.read_direct(&mut out[got..]).map_err(io_error(from))? {
                Some(0) => {
                    return Err(Error::Closed {
                        party: from,
                        during: Some(name),
                    });
                }
                Some(n) => {
                    got += n;
                    progress = Instant::now();
                }
                None => self.wait(from, Dir::Read, progress)?,
            }
        }
        let link = self.link(from)?;
        link.stats.bytes_received += out.len() as u64;
        Ok(())
    }

    /// Waits until `n` bytes from `from` are buffered, for message `name`.
    fn buffer(&mut self, from: usize, name: &'static str, n: usize) -> Result<(), Error> {
        let mut progress = Instant::now();
        loop {
            let link = self.link(from)?;
            if link.unread() >= n {
                return Ok(());
            }
            if !link.readable {
                self.wait(from, Dir::Read, progress)?;
                continue;
            }
            let before = link.unread();
            let fill = link.fill(MAX_UNREAD.max(n)).map_err(io_error(from))?;
            match fill {
                Fill::Eof => {
                    return Err(Error::Closed {
                        party: from,
                        during: (before > 0).then_some(name),
                    });
                }
                Fill::Blocked => self.wait(from, Dir::Read, progress)?,
                Fill::Got | Fill::Full => progress = Instant::now(),
            }
        }
    }

    /// Writes what every queue holds, as far as the sockets take it now.
    fn push_all(&mut self) {
        for link in self.links.iter_mut().flatten() {
            if link.broken.is_none()
                && link.writable
                && link.has_unsent()
                && let Err(e) = link.push()
            {
                link.broken = Some(e.to_string());
            }
        }
    }

    /// Serves every link without blocking (writes queued data; reads, up to the cap, what
    /// peers other than the one being read sent, and looks for abort messages in it), then
    /// sleeps until a socket is ready or the wait's bound passes. `progress` is when the wait
    /// for `focus` last moved.
    fn wait(&mut self, focus: usize, dir: Dir, progress: Instant) -> Result<(), Error> {
        if self.stopper.is_stopped() {
            return Err(Error::Stopped);
        }
        self.tick();
        self.push_all();
        for (k, slot) in self.links.iter_mut().enumerate() {
            let Some(link) = slot else { continue };
            if k == focus && dir == Dir::Read {
                continue;
            }
            link.read_available();
            if let Some(code) = link.abort {
                return Err(Error::PeerAborted { party: k, code });
            }
        }
        let link = self.link(focus)?;
        if match dir {
            Dir::Read => link.readable,
            Dir::Write => link.writable,
        } {
            return Ok(());
        }
        let now = Instant::now();
        let limit = progress.checked_add(self.config.timeout);
        let (until, deadline_first) = match (limit, self.deadline) {
            (Some(l), Some(d)) if d < l => (Some(d), true),
            (None, Some(d)) => (Some(d), true),
            (l, _) => (l, false),
        };
        if until.is_some_and(|u| u <= now) {
            return Err(if deadline_first {
                Error::Deadline {
                    after: self.config.deadline.unwrap_or_default(),
                }
            } else if dir == Dir::Read {
                Error::ReadTimeout {
                    party: focus,
                    after: self.config.timeout,
                }
            } else {
                Error::WriteTimeout {
                    party: focus,
                    after: self.config.timeout,
                }
            });
        }
        // Sleep at most a minute at a time; the loop comes back here.
        let sleep = until.map_or(Duration::from_secs(60), |u| {
            (u - now).min(Duration::from_secs(60))
        });
        self.poll(sleep)
    }

    /// Sleeps until a socket is ready or `timeout` passes, and marks the links the poller
    /// reports ready.
    fn poll(&mut self, timeout: Duration) -> Result<(), Error> {
        match self.poll.poll(&mut self.events, Some(timeout)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(Error::Usage(format!("waiting for the network: {e}")));
            }
        }
        for event in self.events.iter() {
            if let Some(Some(link)) = self.links.get_mut(event.token().0) {
                if event.is_readable() || event.is_read_closed() || event.is_error() {
                    link.readable = true;
                }
                // The end of the stream may come in the same event as the last bytes: the
                // link must then read on to it after a short read.
                if event.is_read_closed() || event.is_error() {
                    link.hung_up = true;
                }
                if event.is_writable() || event.is_write_closed() || event.is_error() {
                    link.writable = true;
                }
            }
        }
        Ok(())
    }

    /// Tells every peer, once, that this party stops and why (a code: our own text stays
    /// here), then closes the links. Best effort: a link may be what failed. Later calls do
    /// nothing; the network fails from then on.
    pub fn abort(&mut self, code: AbortCode) {
        if self.aborted {
            return;
        }
        self.aborted = true;
        let control = Space::CONTROL.tag(ABORT);
        for j in 0..self.links.len() {
            if j != self.me {
                let _ = self.send_raw(j, control.into(), &[code as u8]);
            }
        }
        self.failed
            .get_or_insert_with(|| format!("this party aborted: {code}"));
        self.close(Duration::from_secs(1).min(self.config.timeout), true);
    }

    /// Sends what is queued (for at most `grace`) and ends this party's direction of every
    /// link; with `linger`, reads until the peers close theirs (for at most `grace`), so that an
    /// abort this party sent last is not lost to a reset caused by data it left unread.
    fn close(&mut self, grace: Duration, linger: bool) {
        let until = after(grace);
        let left = || {
            until.map_or(Duration::from_secs(60), |u| {
                u.saturating_duration_since(Instant::now())
            })
        };
        loop {
            self.push_all();
            let pending = self
                .links
                .iter()
                .flatten()
                .any(|l| l.broken.is_none() && l.has_unsent());
            if !pending || left().is_zero() || self.poll(left()).is_err() {
                break;
            }
        }
        for link in self.links.iter_mut().flatten() {
            link.close();
        }
        if !linger {
            return;
        }
        loop {
            let mut open = false;
            for link in self.links.iter_mut().flatten() {
                while link.broken.is_none() && !link.eof {
                    match link.discard() {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(e) => link.broken = Some(e.to_string()),
                    }
                }
                open |= link.broken.is_none() && !link.eof;
            }
            if !open || left().is_zero() || self.poll(left()).is_err() {
                return;
            }
        }
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        if !self.aborted {
            // Deliver what is still queued; a network that failed was (or should have been)
            // aborted by its owner.
            let grace = if self.failed.is_none() {
                self.config.timeout
            } else {
                Duration::ZERO
            };
            self.close(grace.min(Duration::from_secs(10)), false);
        }
    }
}

/// The two-party [`Channel`] between this party and one peer of a [`Network`].
#[derive(Debug)]
pub struct PeerChannel<'a> {
    net: &'a mut Network,
    peer: usize,
}

impl Channel for PeerChannel<'_> {
    fn peer(&self) -> usize {
        self.peer
    }
    fn send(&mut self, tag: Tag, payload: &[u8]) -> Result<(), Error> {
        self.net.send(self.peer, tag, payload)
    }
    fn recv_frame(&mut self, tag: Tag, len: Len, frame: &mut Frame) -> Result<(), Error> {
        self.net.recv_frame(self.peer, tag, len, frame)
    }
    fn recv_into(&mut self, tag: Tag, out: &mut [u8]) -> Result<(), Error> {
        self.net.recv_into(self.peer, tag, out)
    }
    fn flush(&mut self) -> Result<(), Error> {
        self.net.check()?;
        let r = self.net.drain(self.peer, 0);
        self.net.track(r)
    }
    fn stats(&self) -> Stats {
        self.net.peer_stats(self.peer)
    }
}
