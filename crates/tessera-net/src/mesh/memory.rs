//! All parties in one process: every pair of parties joined by a Unix socket pair, so the
//! network runs exactly the code it runs over TCP, without a port.

use crate::link::{Link, Socket};
use crate::{Error, NetConfig, Network, Stopper};

/// `n` parties, each network to be moved to its party's thread.
#[cfg(unix)]
pub fn mesh(n: usize, config: NetConfig) -> Result<Vec<Network>, Error> {
    let mut links: Vec<Vec<Option<Link>>> =
        (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
    let pairs = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j)));
    for (i, j) in pairs {
        let (a, b) = mio::net::UnixStream::pair()
            .map_err(|e| Error::Usage(format!("creating a socket pair: {e}")))?;
        links[i][j] = Some(Link::new(Socket::Unix(a), None));
        links[j][i] = Some(Link::new(Socket::Unix(b), None));
    }
    let deadline = config.deadline.and_then(crate::network::after);
    links
        .into_iter()
        .enumerate()
        .map(|(me, l)| Network::new(me, l, config, deadline, Stopper::new()))
        .collect()
}

/// Two parties with the default timeouts: (party 0, party 1).
#[cfg(unix)]
pub fn pair() -> Result<(Network, Network), Error> {
    pair_with(NetConfig::default())
}

/// Two parties: (party 0, party 1).
#[cfg(unix)]
pub fn pair_with(config: NetConfig) -> Result<(Network, Network), Error> {
    let mut nets = mesh(2, config)?;
    let b = nets.pop();
    let a = nets.pop();
    a.zip(b)
        .ok_or_else(|| Error::Usage("a mesh of two has two parties".into()))
}

/// Two parties over connected Unix streams, `a` party 0's end and `b` party 1's: a socket
/// pair, or the ends of a test's interposer that edits what passes (the tamper harness of
/// `tessera-testkit`). The network runs exactly the code it runs over TCP.
#[cfg(unix)]
pub fn pair_over(
    a: std::os::unix::net::UnixStream,
    b: std::os::unix::net::UnixStream,
    config: NetConfig,
) -> Result<(Network, Network), Error> {
    let deadline = config.deadline.and_then(crate::network::after);
    let end = |me: usize, stream: std::os::unix::net::UnixStream| {
        stream
            .set_nonblocking(true)
            .map_err(|e| Error::Usage(format!("a stream for party {me}: {e}")))?;
        let mut links = vec![None, None];
        links[1 - me] = Some(Link::new(
            Socket::Unix(mio::net::UnixStream::from_std(stream)),
            None,
        ));
        Network::new(me, links, config, deadline, Stopper::new())
    };
    Ok((end(0, a)?, end(1, b)?))
}
