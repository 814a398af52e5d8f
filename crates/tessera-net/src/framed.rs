//! Framing over any byte stream: each message is a one-byte tag, a 4-byte little-endian
//! length and the payload. Writes are buffered; reads are buffered and checked against what
//! the protocol expects before any payload is read.

use crate::{ABORT, Channel, Error, MAX_ABORT_REASON, Stats, Tag};
use std::io::{self, Read, Write};
use std::time::Duration;

/// A byte stream a [`Framed`] channel can run over (memory pipe, TCP, TLS).
pub trait Transport: Read + Write + Send {}
impl<T: Read + Write + Send> Transport for T {}

/// Frame header bytes: tag and length.
const HEADER: usize = 5;
/// Write buffer: messages are coalesced up to this size before they are written.
const WRITE_BUFFER: usize = 1 << 16;
/// Read buffer.
const READ_BUFFER: usize = 1 << 16;

/// A [`Channel`] over a byte stream `S`.
pub struct Framed<S> {
    io: S,
    /// The read timeout the transport was set up with, for error messages.
    timeout: Duration,
    wbuf: Vec<u8>,
    rbuf: Box<[u8]>,
    /// Unread bytes are `rbuf[rpos..rend]`.
    rpos: usize,
    rend: usize,
    stats: Stats,
    /// Whether the last operation was a receive (a send then starts a new round).
    receiving: bool,
    /// The first error; after one the stream may be mid-message, so the channel stops.
    failed: Option<String>,
}

impl<S> std::fmt::Debug for Framed<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Framed")
            .field("stats", &self.stats)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl<S: Transport> Framed<S> {
    /// Frames `io`, whose reads time out after `timeout` (set on the transport by the caller).
    pub fn new(io: S, timeout: Duration) -> Self {
        Framed {
            io,
            timeout,
            wbuf: Vec::with_capacity(WRITE_BUFFER),
            rbuf: vec![0u8; READ_BUFFER].into_boxed_slice(),
            rpos: 0,
            rend: 0,
            stats: Stats::default(),
            receiving: true,
            failed: None,
        }
    }

    fn check(&self) -> Result<(), Error> {
        match &self.failed {
            Some(e) => Err(Error::Poisoned(e.clone())),
            None => Ok(()),
        }
    }

    /// Records `result`'s error, if any, so later calls fail fast.
    fn track<T>(&mut self, result: Result<T, Error>) -> Result<T, Error> {
        if let Err(e) = &result {
            self.failed.get_or_insert_with(|| e.to_string());
        }
        result
    }

    fn io_error(&self, e: io::Error) -> Error {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Error::Timeout(self.timeout),
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe => Error::Closed(format!(" ({e})")),
            _ => Error::Io(e.to_string()),
        }
    }

    fn write_out(&mut self) -> Result<(), Error> {
        if !self.wbuf.is_empty() {
            let r = self.io.write_all(&self.wbuf);
            self.wbuf.clear();
            r.map_err(|e| self.io_error(e))?;
        }
        self.io.flush().map_err(|e| self.io_error(e))
    }

    fn send_frame(&mut self, tag: u8, payload: &[u8]) -> Result<(), Error> {
        let len = u32::try_from(payload.len())
            .map_err(|_| Error::Io(format!("message of {} bytes is too long", payload.len())))?;
        if self.receiving {
            self.receiving = false;
            self.stats.rounds += 1;
        }
        self.wbuf.push(tag);
        self.wbuf.extend_from_slice(&len.to_le_bytes());
        if payload.len() >= WRITE_BUFFER / 2 {
            // Large payloads go straight to the stream, not through the buffer.
            let r = self.io.write_all(&self.wbuf);
            self.wbuf.clear();
            r.and_then(|()| self.io.write_all(payload))
                .map_err(|e| self.io_error(e))?;
        } else {
            self.wbuf.extend_from_slice(payload);
            if self.wbuf.len() >= WRITE_BUFFER {
                let r = self.io.write_all(&self.wbuf);
                self.wbuf.clear();
                r.map_err(|e| self.io_error(e))?;
            }
        }
        self.stats.bytes_sent += (HEADER + payload.len()) as u64;
        self.stats.messages_sent += 1;
        Ok(())
    }

    /// Fills `out` from the read buffer and the stream.
    fn read_exact(&mut self, mut out: &mut [u8]) -> Result<(), Error> {
        let buffered = (self.rend - self.rpos).min(out.len());
        out[..buffered].copy_from_slice(&self.rbuf[self.rpos..self.rpos + buffered]);
        self.rpos += buffered;
        out = &mut out[buffered..];
        while !out.is_empty() {
            if out.len() >= self.rbuf.len() {
                // Large reads go straight into the caller's buffer.
                let n = self.read_some_into_out(out)?;
                out = &mut out[n..];
            } else {
                let n = self.read_some_into_buffer()?;
                let take = n.min(out.len());
                out[..take].copy_from_slice(&self.rbuf[..take]);
                self.rpos = take;
                out = &mut out[take..];
            }
        }
        Ok(())
    }

    fn read_some_into_out(&mut self, out: &mut [u8]) -> Result<usize, Error> {
        loop {
            match self.io.read(out) {
                Ok(0) => return Err(Error::Closed(" in the middle of a message".into())),
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_error(e)),
            }
        }
    }

    fn read_some_into_buffer(&mut self) -> Result<usize, Error> {
        loop {
            match self.io.read(&mut self.rbuf) {
                Ok(0) => return Err(Error::Closed(String::new())),
                Ok(n) => {
                    self.rpos = 0;
                    self.rend = n;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_error(e)),
            }
        }
    }

    /// Reads the next header, checks its tag and returns its length. An abort message from the
    /// peer becomes [`Error::PeerAborted`].
    fn recv_header(&mut self, tag: Tag) -> Result<usize, Error> {
        self.check()?;
        self.write_out()?;
        self.receiving = true;
        let mut header = [0u8; HEADER];
        self.read_exact(&mut header)?;
        let len = u32::from_le_bytes([header[1], header[2], header[3], header[4]]) as usize;
        self.stats.messages_received += 1;
        self.stats.bytes_received += HEADER as u64;
        if header[0] == ABORT.id {
            let mut reason = vec![0u8; len.min(MAX_ABORT_REASON)];
            let got = self.read_exact(&mut reason);
            let text = String::from_utf8_lossy(&reason).into_owned();
            return Err(Error::PeerAborted(match got {
                Ok(()) => text,
                Err(_) => format!("{text} (reason cut off)"),
            }));
        }
        if header[0] != tag.id {
            return Err(Error::UnexpectedMessage {
                expected: tag.name,
                expected_id: tag.id,
                got: header[0],
            });
        }
        Ok(len)
    }

    fn recv_payload(&mut self, out: &mut [u8]) -> Result<(), Error> {
        self.read_exact(out)?;
        self.stats.bytes_received += out.len() as u64;
        Ok(())
    }
}

impl<S: Transport> Channel for Framed<S> {
    fn send(&mut self, tag: Tag, payload: &[u8]) -> Result<(), Error> {
        self.check()?;
        let r = self.send_frame(tag.id, payload);
        self.track(r)
    }

    fn recv_into(&mut self, tag: Tag, out: &mut [u8]) -> Result<(), Error> {
        let r = self.recv_header(tag).and_then(|len| {
            if len != out.len() {
                return Err(Error::WrongLength {
                    name: tag.name,
                    got: len,
                    expected: out.len(),
                });
            }
            self.recv_payload(out)
        });
        self.track(r)
    }

    fn recv_bounded(&mut self, tag: Tag, max: usize) -> Result<Vec<u8>, Error> {
        let r = self.recv_header(tag).and_then(|len| {
            if len > max {
                return Err(Error::Oversized {
                    name: tag.name,
                    got: len,
                    max,
                });
            }
            let mut out = vec![0u8; len];
            self.recv_payload(&mut out)?;
            Ok(out)
        });
        self.track(r)
    }

    fn flush(&mut self) -> Result<(), Error> {
        self.check()?;
        let r = self.write_out();
        self.track(r)
    }

    fn abort(&mut self, reason: &str) {
        let reason = &reason.as_bytes()[..reason.len().min(MAX_ABORT_REASON)];
        // Best effort: the connection may be what failed.
        let _ = self
            .send_frame(ABORT.id, reason)
            .and_then(|()| self.write_out());
        self.failed
            .get_or_insert_with(|| "this party aborted".to_owned());
    }

    fn stats(&self) -> Stats {
        self.stats
    }
}
