//! The TCP mesh: every party but the last listens, and each party connects to every party
//! with a lower id, retrying until the set-up time runs out, and accepts the parties with a
//! higher id. Over each new connection (after the TLS handshake, under TLS) the connecting
//! party says who it is and whom it meant to reach, in a mesh hello, and the accepting party
//! answers with its own; a connection that does not check out (a stray client, a wrong party,
//! a certificate pinned for another party) is turned away and the wait goes on. Set-up runs
//! on one non-blocking event loop under one deadline (`mesh::setup`); the network then takes
//! the sockets over.

use super::setup;
use super::tls::TlsConfig;
use crate::network::after;
use crate::relay::{LinkSpec, Relay};
use crate::{Error, NetConfig, Network, Stopper};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::time::Duration;

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
    Ok(loopback_through(n, tls, setup, config, None)?.networks)
}

/// A loopback mesh and the relays its connections pass through.
pub struct RelayedMesh {
    /// Party i's network at index i.
    pub networks: Vec<Network>,
    /// One relay in front of each listening party (none without a link); dropping one cuts
    /// the connections through it.
    pub relays: Vec<Relay>,
}

/// Like [`loopback`], but with `link`, every connection passes through a [`Relay`] under it:
/// one relay in front of each listening party, which the parties with higher ids dial.
pub fn loopback_through(
    n: usize,
    tls: Option<&[TlsConfig]>,
    setup: Duration,
    config: NetConfig,
    link: Option<LinkSpec>,
) -> Result<RelayedMesh, Error> {
    let listeners = (0..n)
        .map(|_| listen("127.0.0.1:0"))
        .collect::<Result<Vec<_>, _>>()?;
    let addrs = listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.to_string()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::Usage(format!("a listener's address: {e}")))?;
    let relays = match link {
        None => Vec::new(),
        Some(link) => addrs[..n.saturating_sub(1)]
            .iter()
            .map(|to| {
                let front = listen("127.0.0.1:0")?;
                Relay::start(front, to, link).map_err(|e| Error::Listen {
                    addr: format!("a relay to {to}"),
                    message: e.to_string(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    let dial: Vec<String> = match link {
        None => addrs,
        Some(_) => relays.iter().map(|r| r.local_addr().to_string()).collect(),
    };
    let networks = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|me| {
                let (listener, dial) = (&listeners[me], &dial);
                s.spawn(move || {
                    let m = Mesh {
                        me,
                        parties: n,
                        listener: Some(listener),
                        lower: &dial[..me],
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
            .collect::<Result<Vec<_>, _>>()
    })?;
    Ok(RelayedMesh { networks, relays })
}

/// One end of a two-party network: party 0 accepts on `listener`, party 1 (no listener) dials
/// `connect`; set-up may take `config.timeout`, and `stopper` stops it (a user's Ctrl-C while a
/// server waits for its client) and then the network. What the command line's two-party
/// commands and the Python package's servers and clients open.
pub fn two_party(
    listener: Option<&TcpListener>,
    connect: &[String],
    tls: Option<&TlsConfig>,
    config: NetConfig,
    stopper: &Stopper,
) -> Result<Network, Error> {
    let m = Mesh {
        me: usize::from(listener.is_none()),
        parties: 2,
        listener,
        lower: connect,
        tls,
        setup: config.timeout,
    };
    mesh_with(m, config, stopper)
}

/// Builds this party's network; see the module documentation. The whole-run deadline of
/// `config` counts from here, set-up included.
pub fn mesh(m: Mesh<'_>, config: NetConfig) -> Result<Network, Error> {
    mesh_with(m, config, &Stopper::new())
}

/// [`mesh`], which `stopper` stops, set-up included (a user's Ctrl-C).
pub fn mesh_with(m: Mesh<'_>, config: NetConfig, stopper: &Stopper) -> Result<Network, Error> {
    if m.me >= m.parties || m.lower.len() != m.me {
        return Err(Error::Usage(format!(
            "party {} of {} needs the addresses of parties 0..{}, got {}",
            m.me,
            m.parties,
            m.me,
            m.lower.len()
        )));
    }
    if m.me + 1 < m.parties && m.listener.is_none() {
        return Err(Error::Usage(format!(
            "party {} must listen: parties {:?} connect to it",
            m.me,
            (m.me + 1..m.parties).collect::<Vec<_>>()
        )));
    }
    let run = config.deadline.and_then(after);
    let setup = [after(m.setup), run].into_iter().flatten().min();
    let addrs = m
        .lower
        .iter()
        .enumerate()
        .map(|(party, addr)| {
            resolve(addr).map_err(|message| Error::Connect {
                party,
                addr: addr.clone(),
                message,
                waited: Duration::ZERO,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let links = setup::connect_all(m, addrs, setup, stopper)?;
    Network::new(m.me, links, config, run, stopper.clone())
}
