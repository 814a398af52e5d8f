//! Channels between two parties: the [`Channel`] trait (framed, tagged messages; flush;
//! statistics) and its transports: an in-memory duplex pipe ([`memory_pair`]), TCP
//! ([`tcp`]) and TLS 1.3 with mutual authentication by pinned self-signed certificates
//! ([`tls`], rustls with the ring provider).
//!
//! Communication follows MOTION2NX App. B (seed `003_09f17a858ba9cc5b.txt`): messages are
//! queued and sent asynchronously with respect to computation (a write buffer, flushed when a
//! party waits for its peer), and every run can report time and communication per phase as
//! JSON ([`Stats`], [`Phase`]).
//!
//! Everything a peer sends is untrusted. Every message carries a tag and a length; a message
//! that is not the one expected (out of order), has the wrong length, exceeds its bound, never
//! arrives within the read timeout, or is cut off by a hang-up ends in an [`Error`] naming
//! what was wrong, never a panic or a hang. A party that gives up says why with
//! [`Channel::abort`], and its peer's next receive returns [`Error::PeerAborted`].

#![deny(missing_docs)]

mod framed;
mod memory;
mod stats;
pub mod tcp;
pub mod tls;

pub use framed::{Framed, Transport};
pub use memory::{MemoryStream, memory_pair};
pub use stats::{Phase, PhaseTimer, Stats};

use std::time::Duration;
use tessera_core::Block;

/// The read timeout a channel gets unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// What a message is, as both parties name it: a one-byte id on the wire and a name for
/// error messages. Tag [`ABORT`] is reserved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag {
    /// The byte sent on the wire.
    pub id: u8,
    /// A name for error messages.
    pub name: &'static str,
}

impl Tag {
    /// A tag; `id` must not be [`ABORT`]'s.
    pub const fn new(id: u8, name: &'static str) -> Self {
        assert!(id != ABORT.id, "tag 0xff is reserved for abort messages");
        Tag { id, name }
    }
}

/// The message a party sends when it gives up; its payload is the reason, in UTF-8.
pub const ABORT: Tag = Tag {
    id: 0xff,
    name: "abort",
};

/// The longest abort reason a party accepts from its peer, in bytes.
pub const MAX_ABORT_REASON: usize = 4096;

/// A reliable, ordered, framed connection to one peer.
///
/// Sends may be buffered until [`Channel::flush`] or the next receive. Implementations count
/// what crosses the wire in [`Stats`].
pub trait Channel {
    /// Queues one message.
    fn send(&mut self, tag: Tag, payload: &[u8]) -> Result<(), Error>;

    /// Receives one message that must be tagged `tag` and fill `out` exactly.
    fn recv_into(&mut self, tag: Tag, out: &mut [u8]) -> Result<(), Error>;

    /// Receives one message tagged `tag` of at most `max` bytes.
    fn recv_bounded(&mut self, tag: Tag, max: usize) -> Result<Vec<u8>, Error>;

    /// Sends everything queued.
    fn flush(&mut self) -> Result<(), Error>;

    /// Tells the peer, best effort, that this party stops and why.
    fn abort(&mut self, reason: &str);

    /// What has crossed the wire so far.
    fn stats(&self) -> Stats;

    /// Queues one message of blocks.
    fn send_blocks(&mut self, tag: Tag, blocks: &[Block]) -> Result<(), Error> {
        self.send(tag, bytemuck::cast_slice(blocks))
    }

    /// Receives one message of exactly `out.len()` blocks.
    fn recv_blocks(&mut self, tag: Tag, out: &mut [Block]) -> Result<(), Error> {
        self.recv_into(tag, bytemuck::cast_slice_mut(out))
    }
}

/// Forwards every required [`Channel`] method through a pointer type.
macro_rules! forward_channel {
    ($($pointer:ty),*) => {$(
        impl<C: Channel + ?Sized> Channel for $pointer {
            fn send(&mut self, tag: Tag, payload: &[u8]) -> Result<(), Error> {
                (**self).send(tag, payload)
            }
            fn recv_into(&mut self, tag: Tag, out: &mut [u8]) -> Result<(), Error> {
                (**self).recv_into(tag, out)
            }
            fn recv_bounded(&mut self, tag: Tag, max: usize) -> Result<Vec<u8>, Error> {
                (**self).recv_bounded(tag, max)
            }
            fn flush(&mut self) -> Result<(), Error> {
                (**self).flush()
            }
            fn abort(&mut self, reason: &str) {
                (**self).abort(reason)
            }
            fn stats(&self) -> Stats {
                (**self).stats()
            }
        }
    )*};
}

forward_channel!(&mut C, Box<C>);

/// What a channel can report.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// The transport failed.
    #[error("connection: {0}")]
    Io(String),
    /// The peer hung up.
    #[error("the peer closed the connection{0}")]
    Closed(String),
    /// Nothing arrived within the read timeout.
    #[error("the peer sent nothing for {0:?} (read timeout)")]
    Timeout(Duration),
    /// A message other than the one the protocol expects next.
    #[error("expected message '{expected}' (tag {expected_id:#04x}), got tag {got:#04x}")]
    UnexpectedMessage {
        /// The name of the expected message.
        expected: &'static str,
        /// Its tag.
        expected_id: u8,
        /// The tag that arrived.
        got: u8,
    },
    /// A message of the wrong size.
    #[error("message '{name}' has {got} bytes, expected {expected}")]
    WrongLength {
        /// The message.
        name: &'static str,
        /// Its length on the wire.
        got: usize,
        /// The length the protocol needs.
        expected: usize,
    },
    /// A message larger than the protocol allows.
    #[error("message '{name}' announces {got} bytes, more than the limit of {max}")]
    Oversized {
        /// The message.
        name: &'static str,
        /// The announced length.
        got: usize,
        /// The bound.
        max: usize,
    },
    /// The peer gave up and said why.
    #[error("the peer aborted: {0}")]
    PeerAborted(String),
    /// A channel that already failed, used again.
    #[error("the channel failed earlier and cannot be used: {0}")]
    Poisoned(String),
    /// TLS set-up or handshake failed.
    #[error("TLS: {0}")]
    Tls(String),
    /// A key or certificate file that cannot be used.
    #[error("{path}: {msg}")]
    KeyFile {
        /// The file.
        path: String,
        /// What is wrong with it.
        msg: String,
    },
}
