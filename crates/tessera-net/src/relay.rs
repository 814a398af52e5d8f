//! A user-space TCP link emulator: a relay that any program, Tessera or not, can be pointed
//! at, adding to each direction of every connection a one-way delay and a bandwidth limit. The
//! kernels here have no `netem`, and `tbf` only limits bandwidth (its `latency` bounds its
//! queue, it adds none), so latency comes from here.
//!
//! Each direction is a delay line: a reader stamps every chunk it reads with its arrival time
//! and queues it; a writer releases each chunk at its arrival time plus the delay, no earlier
//! than the previous chunk's transmission at the rate has ended (a token bucket of one chunk).
//! Sleeping per read instead would turn latency into a throughput cap. The queue holds about
//! the bandwidth-delay product plus a margin; when it is full the reader stops reading, so the
//! sender is pushed back by TCP instead of the queue growing. A side that closes its end is
//! closed on the other side once the data in flight is delivered.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Bytes read at a time.
const CHUNK: usize = 64 << 10;
/// Room beyond the bandwidth-delay product.
const MARGIN: usize = 1 << 20;
/// The queue of a direction without a rate limit.
const UNLIMITED_ROOM: usize = 4 << 20;
/// How long connecting to the target may take.
const CONNECT_WAIT: Duration = Duration::from_secs(10);
/// How often a refusing target is tried again.
const RETRY: Duration = Duration::from_millis(10);

/// One direction's conditions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkSpec {
    /// The one-way delay added to every byte.
    pub delay: Duration,
    /// The bandwidth in bits per second; `None` for no limit.
    pub rate_bps: Option<u64>,
}

impl LinkSpec {
    /// The bytes a direction's queue holds before the reader stops: the bandwidth-delay
    /// product and a margin.
    pub fn room(&self) -> usize {
        match self.rate_bps {
            None => UNLIMITED_ROOM,
            Some(r) => {
                let bdp = (r as f64 / 8.0 * self.delay.as_secs_f64()) as usize;
                bdp.saturating_add(MARGIN)
            }
        }
    }

    /// How long `bytes` take at the rate.
    fn transmission(&self, bytes: usize) -> Duration {
        self.rate_bps.map_or(Duration::ZERO, |r| {
            Duration::from_secs_f64(bytes as f64 * 8.0 / r.max(1) as f64)
        })
    }
}

/// A named network condition from the literature.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile {
    /// The name `--profile` and `--net` take.
    pub name: &'static str,
    /// Each direction's conditions.
    pub link: LinkSpec,
    /// Where the figures come from.
    pub source: &'static str,
}

const fn mbit(delay_us: u64, mbit_s: u64) -> LinkSpec {
    LinkSpec {
        delay: Duration::from_micros(delay_us),
        rate_bps: Some(mbit_s * 1_000_000),
    }
}

/// The profiles, once: parsing, help text and the benchmarks derive from this list.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "emp-lan",
        link: mbit(0, 2320),
        source: "the LAN of EMP-toolkit's published benchmarks: 2320 Mbit/s, no added delay",
    },
    Profile {
        name: "emp-wan",
        link: mbit(10_000, 200),
        source: "the WAN of EMP-toolkit's published benchmarks: 200 Mbit/s, 10 ms one way",
    },
    Profile {
        name: "cheetah-lan",
        link: mbit(150, 3000),
        source: "the LAN of Cheetah (Huang et al., USENIX Security 2022): 3 Gbit/s, 0.15 ms one way",
    },
    Profile {
        name: "cheetah-wan",
        link: mbit(20_000, 400),
        source: "the WAN of Cheetah (Huang et al., USENIX Security 2022): 400 Mbit/s, 20 ms one way",
    },
];

/// Other names for profiles: (alias, profile).
pub const ALIASES: &[(&str, &str)] = &[("lan", "cheetah-lan"), ("wan", "cheetah-wan")];

/// The profile `name` (or alias) stands for.
pub fn profile(name: &str) -> Option<Profile> {
    let name = ALIASES
        .iter()
        .find(|(a, _)| *a == name)
        .map_or(name, |(_, p)| p);
    PROFILES.iter().copied().find(|p| p.name == name)
}

/// One direction's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DirectionStats {
    /// Bytes delivered.
    pub bytes: u64,
    /// Chunks delivered (reads of the source, as they were).
    pub chunks: u64,
    /// The most bytes queued at once in one connection's direction.
    pub peak_buffered: u64,
}

/// A relay's counters: connections, and both directions over all of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RelayStats {
    /// Connections accepted.
    pub connections: u64,
    /// Connections over: both directions ended (closed, failed or shut down).
    pub closed: u64,
    /// From the connecting side to the target.
    pub forward: DirectionStats,
    /// From the target back.
    pub backward: DirectionStats,
}

/// What the connections of a relay share.
struct Shared {
    link: LinkSpec,
    stop: AtomicBool,
    stats: Mutex<RelayStats>,
    /// Every socket, so stopping can shut them down.
    sockets: Mutex<Vec<TcpStream>>,
}

impl Shared {
    fn stats(&self) -> MutexGuard<'_, RelayStats> {
        self.stats.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl RelayStats {
    /// The counters of one direction: from the connecting side (`forward`) or back.
    fn direction(&mut self, forward: bool) -> &mut DirectionStats {
        if forward {
            &mut self.forward
        } else {
            &mut self.backward
        }
    }
}

/// A running relay: accepts on its listener and forwards each connection to the target.
pub struct Relay {
    addr: std::net::SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl Relay {
    /// Starts relaying connections accepted on `listener` to `to` under `link`.
    pub fn start(listener: TcpListener, to: &str, link: LinkSpec) -> io::Result<Relay> {
        let target: Vec<_> = to.to_socket_addrs()?.collect();
        if target.is_empty() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no address"));
        }
        let addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let shared = Arc::new(Shared {
            link,
            stop: AtomicBool::new(false),
            stats: Mutex::new(RelayStats::default()),
            sockets: Mutex::new(Vec::new()),
        });
        let s = shared.clone();
        let acceptor = thread::Builder::new()
            .name("relay-accept".into())
            .spawn(move || accept_loop(listener, &target, &s))?;
        Ok(Relay {
            addr,
            shared,
            acceptor: Some(acceptor),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    /// The counters so far.
    pub fn stats(&self) -> RelayStats {
        *self.shared.stats()
    }

    /// Stops accepting, shuts every connection down, and returns the counters.
    pub fn stop(mut self) -> RelayStats {
        self.halt();
        self.stats()
    }

    fn halt(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        let sockets = self
            .shared
            .sockets
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        for s in sockets.iter() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.halt();
    }
}

fn accept_loop(listener: TcpListener, target: &[std::net::SocketAddr], shared: &Arc<Shared>) {
    while !shared.stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((client, _)) => {
                let shared = shared.clone();
                let target = target.to_vec();
                // A connection that cannot be relayed is dropped; the others go on.
                let _ = thread::Builder::new()
                    .name("relay-conn".into())
                    .spawn(move || connect(client, &target, &shared));
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(2));
            }
            Err(_) => thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Connects `client` to the target and starts both directions. A target that refuses is
/// tried again every [`RETRY`] until [`CONNECT_WAIT`] has passed: the client's connection is
/// already accepted here, so the relay retries for it, as a client would (programs such as
/// EMP's open their next connection before the peer listens on it).
fn connect(client: TcpStream, target: &[std::net::SocketAddr], shared: &Arc<Shared>) {
    let started = std::time::Instant::now();
    let server = loop {
        let tried = target
            .iter()
            .find_map(|a| TcpStream::connect_timeout(a, CONNECT_WAIT).ok());
        if tried.is_some()
            || started.elapsed() >= CONNECT_WAIT
            || shared.stop.load(Ordering::SeqCst)
        {
            break tried;
        }
        std::thread::sleep(RETRY);
    };
    let Some(server) = server else {
        let _ = client.shutdown(Shutdown::Both);
        return;
    };
    let clones = [&client, &server].map(|s| {
        let _ = s.set_nodelay(true);
        s.try_clone()
    });
    let [Ok(c2), Ok(s2)] = clones else {
        return;
    };
    {
        let mut sockets = shared.sockets.lock().unwrap_or_else(|p| p.into_inner());
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        for s in [&client, &server] {
            if let Ok(s) = s.try_clone() {
                sockets.push(s);
            }
        }
    }
    shared.stats().connections += 1;
    let forward = DelayLine::start(client, s2, shared.clone(), true);
    let backward = DelayLine::start(server, c2, shared.clone(), false);
    for line in [forward, backward].into_iter().flatten() {
        line.join();
    }
    shared.stats().closed += 1;
}

/// The queue of one direction.
#[derive(Default)]
struct Queue {
    chunks: VecDeque<(Instant, Vec<u8>)>,
    buffered: usize,
    /// The source closed its end.
    ended: bool,
    /// A socket failed: both ends are shut down.
    failed: bool,
}

/// One direction of one connection: a reader and a writer thread around a queue.
struct DelayLine {
    threads: [JoinHandle<()>; 2],
}

type Line = Arc<(Mutex<Queue>, Condvar)>;

fn lock(line: &Line) -> MutexGuard<'_, Queue> {
    line.0.lock().unwrap_or_else(|p| p.into_inner())
}

impl DelayLine {
    fn start(from: TcpStream, to: TcpStream, shared: Arc<Shared>, forward: bool) -> Option<Self> {
        let line: Line = Arc::new((Mutex::new(Queue::default()), Condvar::new()));
        let (l2, s2) = (line.clone(), shared.clone());
        let reader = thread::Builder::new()
            .name("relay-read".into())
            .spawn(move || read_side(from, &line, &shared, forward))
            .ok()?;
        let writer = thread::Builder::new()
            .name("relay-write".into())
            .spawn(move || write_side(to, &l2, &s2, forward))
            .ok()?;
        Some(DelayLine {
            threads: [reader, writer],
        })
    }

    fn join(self) {
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// Reads chunks from `from`, stamped with their release time, while the queue has room.
fn read_side(mut from: TcpStream, line: &Line, shared: &Shared, forward: bool) {
    let room = shared.link.room();
    let mut buf = vec![0u8; CHUNK];
    loop {
        let space = {
            let mut q = lock(line);
            while q.buffered >= room && !q.failed {
                q = line.1.wait(q).unwrap_or_else(|p| p.into_inner());
            }
            if q.failed {
                return;
            }
            (room - q.buffered).min(CHUNK)
        };
        let got = from.read(&mut buf[..space]);
        let arrived = Instant::now();
        let mut q = lock(line);
        match got {
            Ok(0) => q.ended = true,
            Ok(n) => {
                q.chunks
                    .push_back((arrived + shared.link.delay, buf[..n].to_vec()));
                q.buffered += n;
                let peak = q.buffered as u64;
                let mut stats = shared.stats();
                let d = stats.direction(forward);
                d.peak_buffered = d.peak_buffered.max(peak);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => q.failed = true,
        }
        let done = q.ended || q.failed;
        drop(q);
        line.1.notify_all();
        if done {
            return;
        }
    }
}

/// The most a [`Pacer`] sleeps short: about Linux's default timer slack. A thread that was
/// not scheduled for longer (a busy machine) must not teach it to spin for long.
const MAX_EARLY: Duration = Duration::from_micros(60);

/// Waits until deadlines without waking late: Linux wakes a sleeping thread up to its timer
/// slack (50 µs by default) after the time asked for, so it sleeps short by how late its sleeps
/// have woken (at most [`MAX_EARLY`]) and yields the rest away. A release never comes before
/// its deadline.
#[derive(Default)]
struct Pacer {
    /// The running mean of how late a sleep woke.
    late: Duration,
}

impl Pacer {
    fn wait_until(&mut self, deadline: Instant) {
        let now = Instant::now();
        let Some(wait) = deadline.checked_duration_since(now) else {
            return;
        };
        let aim = wait.saturating_sub(self.late);
        if !aim.is_zero() {
            thread::sleep(aim);
            let overshoot = now.elapsed().saturating_sub(aim).min(MAX_EARLY);
            self.late = (self.late * 7 + overshoot) / 8;
        }
        while Instant::now() < deadline {
            thread::yield_now();
        }
    }
}

/// Writes each chunk to `to` at its release time, paced at the rate; closes `to`'s write side
/// after the last one, or both ends of both sockets on a failure.
fn write_side(mut to: TcpStream, line: &Line, shared: &Shared, forward: bool) {
    let mut free_at = Instant::now();
    let mut pacer = Pacer::default();
    loop {
        let next = {
            let mut q = lock(line);
            while q.chunks.is_empty() && !q.ended && !q.failed {
                q = line.1.wait(q).unwrap_or_else(|p| p.into_inner());
            }
            if q.failed {
                let _ = to.shutdown(Shutdown::Both);
                return;
            }
            q.chunks.pop_front()
        };
        let Some((release, data)) = next else {
            // The source ended and everything is delivered.
            let _ = to.shutdown(Shutdown::Write);
            return;
        };
        // A chunk held back by its delay is released on time; one held back by the rate may
        // leave late, as the bucket's time runs from when it was due, not from when it left.
        if release >= free_at {
            pacer.wait_until(release);
        } else if let Some(wait) = free_at.checked_duration_since(Instant::now()) {
            thread::sleep(wait);
        }
        let start = release.max(free_at);
        let wrote = to.write_all(&data);
        free_at = start + shared.link.transmission(data.len());
        let mut q = lock(line);
        q.buffered -= data.len();
        if wrote.is_err() {
            q.failed = true;
            let _ = to.shutdown(Shutdown::Both);
        }
        drop(q);
        line.1.notify_all();
        if wrote.is_err() {
            return;
        }
        let mut stats = shared.stats();
        let d = stats.direction(forward);
        d.bytes += data.len() as u64;
        d.chunks += 1;
    }
}
