//! TCP transport: TCP_NODELAY (the framing layer does the batching), read and write timeouts,
//! and connect/accept that give up after the timeout instead of waiting forever.

use crate::{Error, Framed};
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// How often a pending connect or accept is retried.
const POLL: Duration = Duration::from_millis(20);

/// Sets up a connected stream: no Nagle delay, reads and writes time out.
fn configure(stream: &TcpStream, timeout: Duration) -> Result<(), Error> {
    let io = |e: io::Error| Error::Io(format!("setting up the TCP stream: {e}"));
    stream.set_nodelay(true).map_err(io)?;
    stream.set_read_timeout(Some(timeout)).map_err(io)?;
    stream.set_write_timeout(Some(timeout)).map_err(io)
}

fn resolve(addr: &str) -> Result<Vec<SocketAddr>, Error> {
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| Error::Io(format!("address {addr}: {e}")))?
        .collect();
    if addrs.is_empty() {
        return Err(Error::Io(format!("address {addr} resolves to nothing")));
    }
    Ok(addrs)
}

/// Connects to `addr`, retrying while the peer is not yet listening, for up to `timeout`.
pub fn connect_stream(addr: &str, timeout: Duration) -> Result<TcpStream, Error> {
    let addrs = resolve(addr)?;
    let deadline = Instant::now() + timeout;
    loop {
        match TcpStream::connect(&addrs[..]) {
            Ok(s) => {
                configure(&s, timeout)?;
                return Ok(s);
            }
            Err(e) if Instant::now() >= deadline => {
                return Err(Error::Io(format!(
                    "connecting to {addr}: {e} (gave up after {timeout:?})"
                )));
            }
            Err(_) => std::thread::sleep(POLL),
        }
    }
}

/// A framed channel to the peer listening at `addr`.
pub fn connect(addr: &str, timeout: Duration) -> Result<Framed<TcpStream>, Error> {
    Ok(Framed::new(connect_stream(addr, timeout)?, timeout))
}

/// Listens on `addr` (`127.0.0.1:0` picks a free port; see [`TcpListener::local_addr`]).
pub fn listen(addr: &str) -> Result<TcpListener, Error> {
    TcpListener::bind(&resolve(addr)?[..])
        .map_err(|e| Error::Io(format!("listening on {addr}: {e}")))
}

/// Accepts one peer on `listener`, waiting at most `timeout`.
pub fn accept_stream(listener: &TcpListener, timeout: Duration) -> Result<TcpStream, Error> {
    let io = |e: io::Error| Error::Io(format!("accepting a connection: {e}"));
    listener.set_nonblocking(true).map_err(io)?;
    let deadline = Instant::now() + timeout;
    let stream = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(Error::Timeout(timeout));
                }
                std::thread::sleep(POLL);
            }
            Err(e) => return Err(io(e)),
        }
    };
    listener.set_nonblocking(false).map_err(io)?;
    stream.set_nonblocking(false).map_err(io)?;
    configure(&stream, timeout)?;
    Ok(stream)
}

/// A framed channel to the first peer that connects to `listener`, waiting at most `timeout`.
pub fn accept(listener: &TcpListener, timeout: Duration) -> Result<Framed<TcpStream>, Error> {
    Ok(Framed::new(accept_stream(listener, timeout)?, timeout))
}
