//! One connection to one peer: a non-blocking socket (TCP, or a Unix socket pair for the
//! in-memory mesh), optionally under TLS, with the bytes received but not yet consumed and the
//! bytes queued but not yet sent. The network's event loop drives it; nothing here blocks.

use crate::AbortCode;
use crate::wire::{ABORT_TAG, FRAME_HEADER, parse_header};
use crate::{MAX_UNREAD, Stats};
use std::io::{self, IoSlice, Read, Write};

/// Bytes read from a socket at a time into the receive buffer.
const READ_CHUNK: usize = 1 << 16;
/// Send-queue capacity kept once the queue is empty; a larger backlog's memory is given back.
/// (The receive buffer keeps its size, at most `MAX_UNREAD`: giving it back made every burst
/// grow and zero it again, which halved `bench net`.)
const KEEP: usize = 1 << 20;
/// Payloads at least this long go to the socket straight from the caller when nothing is
/// queued before them.
const DIRECT: usize = 1 << 14;

/// A connected non-blocking socket.
pub(crate) enum Socket {
    /// TCP.
    Tcp(mio::net::TcpStream),
    /// One end of a Unix socket pair (the in-memory mesh).
    #[cfg(unix)]
    Unix(mio::net::UnixStream),
}

impl Socket {
    pub(crate) fn source(&mut self) -> &mut dyn mio::event::Source {
        match self {
            Socket::Tcp(s) => s,
            #[cfg(unix)]
            Socket::Unix(s) => s,
        }
    }

    fn shutdown_write(&self) {
        // Best effort: the peer may be gone.
        let _ = match self {
            Socket::Tcp(s) => s.shutdown(std::net::Shutdown::Write),
            #[cfg(unix)]
            Socket::Unix(s) => s.shutdown(std::net::Shutdown::Write),
        };
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            #[cfg(unix)]
            Socket::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write(buf),
            #[cfg(unix)]
            Socket::Unix(s) => s.write(buf),
        }
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write_vectored(bufs),
            #[cfg(unix)]
            Socket::Unix(s) => s.write_vectored(bufs),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What one attempt to read into the receive buffer gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Fill {
    /// Bytes arrived.
    Got,
    /// The peer closed its end.
    Eof,
    /// Nothing to read now.
    Blocked,
    /// The buffer holds as much unread data as this party accepts from a peer.
    Full,
}

/// One peer's connection.
pub(crate) struct Link {
    socket: Socket,
    tls: Option<Box<rustls::Connection>>,
    /// Received, not consumed: `inbuf[ipos..iend]`, starting at stream offset `consumed`.
    inbuf: Vec<u8>,
    ipos: usize,
    iend: usize,
    consumed: u64,
    /// Stream offset of the next frame header not yet looked at.
    next_header: u64,
    /// Queued, not sent: `outbuf[opos..]`.
    outbuf: Vec<u8>,
    opos: usize,
    /// An abort message found in the received data: its code.
    pub(crate) abort: Option<AbortCode>,
    /// The peer closed its end.
    pub(crate) eof: bool,
    /// The poller reported the peer's end closed (or an error): reads go on to the end of
    /// the stream instead of stopping at a short read.
    pub(crate) hung_up: bool,
    /// A transport error seen while serving other links, reported when this link is used.
    pub(crate) broken: Option<String>,
    /// Readiness as the poller reported it, cleared when an operation would block.
    pub(crate) readable: bool,
    pub(crate) writable: bool,
    pub(crate) stats: Stats,
    /// Whether the last operation was a receive (a send then starts a new round).
    receiving: bool,
}

impl Link {
    pub(crate) fn new(socket: Socket, tls: Option<Box<rustls::Connection>>) -> Self {
        Link {
            socket,
            tls,
            inbuf: Vec::new(),
            ipos: 0,
            iend: 0,
            consumed: 0,
            next_header: 0,
            outbuf: Vec::new(),
            opos: 0,
            abort: None,
            eof: false,
            hung_up: false,
            broken: None,
            readable: true,
            writable: true,
            stats: Stats::default(),
            receiving: true,
        }
    }

    pub(crate) fn source(&mut self) -> &mut dyn mio::event::Source {
        self.socket.source()
    }

    /// Received bytes not yet consumed.
    pub(crate) fn unread(&self) -> usize {
        self.iend - self.ipos
    }

    /// Whether bytes are queued for the peer (TLS records included).
    pub(crate) fn has_unsent(&self) -> bool {
        self.opos < self.outbuf.len() || self.tls.as_ref().is_some_and(|t| t.wants_write())
    }

    pub(crate) fn unsent(&self) -> usize {
        self.outbuf.len() - self.opos
    }

    /// Decrypted (or plain) bytes from the peer into `buf`: `Ok(0)` at the end of the stream.
    fn read_plain(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(tls) = self.tls.as_mut() else {
            return self.socket.read(buf);
        };
        loop {
            match tls.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            match tls.read_tls(&mut self.socket)? {
                0 => {
                    // The TCP stream ended: a clean close_notify reads as 0, a cut as an error.
                    return match tls.reader().read(buf) {
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
                        other => other,
                    };
                }
                _ => {
                    tls.process_new_packets()
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                }
            }
        }
    }

    /// Reads what the socket has into the receive buffer, keeping at most `cap` unread bytes.
    pub(crate) fn fill(&mut self, cap: usize) -> io::Result<Fill> {
        if self.unread() >= cap {
            return Ok(Fill::Full);
        }
        if self.ipos == self.iend {
            self.ipos = 0;
            self.iend = 0;
        }
        if self.inbuf.len() - self.iend < READ_CHUNK {
            if self.ipos >= self.unread() {
                // The consumed prefix outweighs the live bytes: moving them is cheap.
                self.inbuf.copy_within(self.ipos..self.iend, 0);
                self.iend -= self.ipos;
                self.ipos = 0;
            }
            if self.inbuf.len() - self.iend < READ_CHUNK {
                // Grow geometrically, so filling a large backlog costs linear time.
                let len = (self.iend + READ_CHUNK).max(2 * self.inbuf.len());
                self.inbuf.resize(len, 0);
            }
        }
        let end = self.inbuf.len().min(self.iend + (cap - self.unread()));
        let mut buf = std::mem::take(&mut self.inbuf);
        let r = self.read_plain(&mut buf[self.iend..end]);
        self.inbuf = buf;
        match r {
            Ok(0) => {
                self.eof = true;
                Ok(Fill::Eof)
            }
            Ok(n) => {
                self.note_short_read(n, end - self.iend);
                self.iend += n;
                Ok(Fill::Got)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.readable = false;
                Ok(Fill::Blocked)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(Fill::Got),
            Err(e) => Err(e),
        }
    }

    /// Reads straight into `out` (past the receive buffer, which must be empty): `Ok(None)` if
    /// nothing can be read now, `Ok(Some(0))` at the end of the stream.
    pub(crate) fn read_direct(&mut self, out: &mut [u8]) -> io::Result<Option<usize>> {
        debug_assert_eq!(self.unread(), 0);
        loop {
            return match self.read_plain(out) {
                Ok(n) => {
                    self.consumed += n as u64;
                    if n == 0 {
                        self.eof = true;
                    }
                    self.note_short_read(n, out.len());
                    Ok(Some(n))
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.readable = false;
                    Ok(None)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => Err(e),
            };
        }
    }

    /// A stream socket that gave fewer bytes than asked for is drained (epoll(7): "if you call
    /// read(2) ... and read(2) returns a lower number of bytes, you can be sure of having
    /// exhausted the read I/O space"), so the next wait goes straight to the poller instead of
    /// a read that would block. Not under TLS, whose reads go through rustls' buffers, nor
    /// once the peer hung up: the end of the stream may have come with the last bytes, in the
    /// same readiness event, and only a read sees it.
    fn note_short_read(&mut self, got: usize, asked: usize) {
        if self.tls.is_none() && !self.hung_up && got < asked {
            self.readable = false;
        }
    }

    /// Moves up to `out.len()` buffered bytes into `out`; returns how many.
    pub(crate) fn take(&mut self, out: &mut [u8]) -> usize {
        let n = self.unread().min(out.len());
        out[..n].copy_from_slice(&self.inbuf[self.ipos..self.ipos + n]);
        self.ipos += n;
        self.consumed += n as u64;
        n
    }

    /// The next `FRAME_HEADER` buffered bytes, consumed, and the frame they start recorded so that
    /// scanning skips it. The caller checks that they are buffered.
    pub(crate) fn take_header(&mut self) -> [u8; FRAME_HEADER] {
        let mut h = [0u8; FRAME_HEADER];
        self.take(&mut h);
        let (_, len) = parse_header(&h);
        self.next_header = self.next_header.max(self.consumed + len as u64);
        h
    }

    /// Looks through the buffered frames that are not yet consumed for an abort message, so a
    /// peer's abort is seen while this party waits for another peer.
    pub(crate) fn scan_for_abort(&mut self) {
        let buffered_end = self.consumed + self.unread() as u64;
        while self.abort.is_none() {
            let start = self.next_header.max(self.consumed);
            if start + FRAME_HEADER as u64 > buffered_end {
                return;
            }
            let off = self.ipos + (start - self.consumed) as usize;
            let (tag, len) = parse_header(&self.inbuf[off..off + FRAME_HEADER]);
            if tag == ABORT_TAG {
                let have = (buffered_end - start) as usize - FRAME_HEADER;
                if have >= 1 || len == 0 || self.eof {
                    let payload = off + FRAME_HEADER..off + FRAME_HEADER + have.min(len).min(1);
                    self.abort = Some(AbortCode::from_payload(&self.inbuf[payload]));
                }
                return;
            }
            self.next_header = start + (FRAME_HEADER + len) as u64;
        }
    }

    /// Reads what the peer sent while the socket has some (up to [`MAX_UNREAD`] unread
    /// bytes), then looks for an abort message in it; a transport error marks the link broken.
    pub(crate) fn read_available(&mut self) {
        while self.readable && self.broken.is_none() && !self.eof {
            match self.fill(MAX_UNREAD) {
                Ok(Fill::Got) => {}
                Ok(_) => break,
                Err(e) => self.broken = Some(e.to_string()),
            }
        }
        self.scan_for_abort();
    }

    /// Reads and drops what the peer sent (after this party closed): `Ok(true)` while bytes
    /// arrive.
    pub(crate) fn discard(&mut self) -> io::Result<bool> {
        self.ipos = self.iend;
        let got = self.fill(usize::MAX)? == Fill::Got;
        self.ipos = self.iend;
        Ok(got)
    }

    /// Counts a message sent; the first send after a receive starts a round.
    pub(crate) fn count_sent(&mut self, bytes: usize) -> bool {
        self.stats.bytes_sent += bytes as u64;
        self.stats.messages_sent += 1;
        let new_round = self.receiving;
        if new_round {
            self.receiving = false;
            self.stats.rounds += 1;
        }
        new_round
    }

    /// Counts a message received.
    pub(crate) fn count_received(&mut self, bytes: usize) {
        self.stats.bytes_received += bytes as u64;
        self.stats.messages_received += 1;
        self.receiving = true;
    }

    /// Queues a frame.
    pub(crate) fn queue(&mut self, header: &[u8], payload: &[u8]) {
        self.outbuf.extend_from_slice(header);
        self.outbuf.extend_from_slice(payload);
    }

    /// Whether a payload of `len` bytes goes to the socket straight from the caller's buffer
    /// (large payloads on plain sockets: no copy) instead of through the queue.
    pub(crate) fn writes_direct(&self, len: usize) -> bool {
        self.tls.is_none() && len >= DIRECT
    }

    /// Writes what the socket takes now of `header` and then `payload` (the queue must be
    /// empty); returns how many bytes it took.
    pub(crate) fn write_now(&mut self, header: &[u8], payload: &[u8]) -> io::Result<usize> {
        debug_assert!(!self.has_unsent());
        let parts = [IoSlice::new(header), IoSlice::new(payload)];
        loop {
            return match self.socket.write_vectored(&parts) {
                Ok(0) => Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    // A short write filled the socket's buffer (as a short read drains it).
                    self.writable = n == header.len() + payload.len();
                    Ok(n)
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.writable = false;
                    Ok(0)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => Err(e),
            };
        }
    }

    /// Sends as much of the queue as the socket takes now.
    pub(crate) fn push(&mut self) -> io::Result<()> {
        loop {
            if let Some(tls) = self.tls.as_mut() {
                while tls.wants_write() {
                    match tls.write_tls(&mut self.socket) {
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            self.writable = false;
                            return Ok(());
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            if self.opos == self.outbuf.len() {
                self.outbuf.clear();
                self.outbuf.shrink_to(KEEP);
                self.opos = 0;
                return Ok(());
            }
            let pending = &self.outbuf[self.opos..];
            let n = match self.tls.as_mut() {
                Some(tls) => tls.writer().write(pending)?,
                None => match self.socket.write(pending) {
                    Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Ok(n) if n < pending.len() => {
                        // A short write filled the socket's buffer: wait for the poller.
                        self.opos += n;
                        self.compact();
                        self.writable = false;
                        return Ok(());
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        self.writable = false;
                        return Ok(());
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
                    Err(e) => return Err(e),
                },
            };
            self.opos += n;
            self.compact();
        }
    }

    /// Drops the sent bytes from the front of the queue once they are over 1 MiB and most of
    /// it, so the queue holds what is unsent, not everything ever sent. (A peer that reads a
    /// little slower than this party sends makes every write short, and the queue never
    /// empties: compacting only after whole writes let a garbler's queue grow to every table
    /// it sent, 6 GiB for 10^9 gates.)
    fn compact(&mut self) {
        if self.opos > KEEP && self.opos * 2 > self.outbuf.len() {
            self.outbuf.drain(..self.opos);
            self.opos = 0;
        }
    }

    /// Ends this party's direction: TLS close_notify, then a write shutdown, best effort.
    pub(crate) fn close(&mut self) {
        if let Some(tls) = self.tls.as_mut() {
            tls.send_close_notify();
        }
        let _ = self.push();
        self.socket.shutdown_write();
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::{Link, Socket};
    use std::io::Read;

    /// A peer that reads only as fast as this party sends keeps the socket full, so every
    /// write is short: the queue must still hold only the unsent bytes.
    #[test]
    fn a_queue_behind_a_slow_reader_holds_only_the_unsent_bytes() {
        let (a, mut b) = mio::net::UnixStream::pair().unwrap();
        let mut link = Link::new(Socket::Unix(a), None);
        let payload = vec![7u8; 1000];
        // Fill the socket and leave a backlog.
        for _ in 0..2000 {
            link.queue(&[], &payload);
        }
        link.push().unwrap();
        let mut sink = vec![0u8; 1000];
        for _ in 0..40_000 {
            link.queue(&[], &payload);
            link.writable = true;
            link.push().unwrap();
            let mut got = 0;
            while got < payload.len() {
                match b.read(&mut sink[..payload.len() - got]) {
                    Ok(n) => got += n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => panic!("{e}"),
                }
            }
        }
        // 40 MB went through; the backlog is about 2 MB.
        assert!(link.unsent() < 3 << 20, "{}", link.unsent());
        assert!(
            link.outbuf.len() < 3 * link.unsent() + (3 << 20),
            "{}",
            link.outbuf.len()
        );
    }
}
