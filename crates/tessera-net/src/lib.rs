//! Tessera's networks: every party's links to every other party, with typed, tagged and
//! length-checked messages, and the driver that runs protocol cores over them.
//!
//! - [`Network`]: a party's links to parties 0..n; per-peer messages, broadcast, flush, an
//!   abort sent once to all, statistics per peer and in total. One event loop serves all
//!   links, so sending to several peers at once never deadlocks ([`network`]).
//! - [`Channel`]: the two-party view, `network.peer(j)`, that two-party protocols run on.
//! - Meshes ([`mesh`]): in memory (Unix socket pairs, for tests and single-process runs), TCP,
//!   and TLS 1.3 with mutual authentication by pinned certificates.
//! - [`exchange`]: rounds among n parties (every party sends, then reads messages of known
//!   lengths), the way oblivious AES and n-party authenticated garbling talk, and the one
//!   editor their cheating tests change messages with.
//! - [`role`]: protocol cores without I/O (typed messages in, typed messages out) and the one
//!   driver that moves them over a channel.
//! - [`relay`]: a user-space TCP link emulator (a one-way delay and a bandwidth per direction)
//!   that any program can be pointed at.
//!
//! Communication follows MOTION2NX App. B (Braun et al.): messages are sent
//! asynchronously with respect to computation, and every run can report time and traffic per
//! phase as JSON ([`Stats`], [`Phase`]).
//!
//! Everything a peer sends is untrusted. Every message carries its protocol instance's space,
//! a kind and a length; a message that is not the one expected, has the wrong length, exceeds
//! its bound, does not arrive within the timeout or the run's deadline, or is cut off by a
//! hang-up ends in an [`Error`] naming the party and what was wrong, never a panic or a hang.
//! A party that gives up tells every peer once, with a code ([`Network::abort`],
//! [`AbortCode`]): our own text never leaves, and a peer's never reaches the terminal.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod abort;
mod channel;
mod error;
pub mod exchange;
mod files;
mod link;
pub mod mesh;
pub mod network;
pub mod relay;
pub mod role;
mod stats;
mod wire;

pub use abort::{Abort, AbortCode};
pub use channel::Channel;
pub use error::{DecodeError, Error};
pub use files::{MAX_KEY_FILE_BYTES, read_capped};
#[cfg(unix)]
pub use mesh::memory;
pub use mesh::{tcp, tls};
pub use network::{MAX_UNREAD, NetConfig, Network, PeerChannel, Stopper};
pub use stats::{Phase, PhaseTimer, Stats, Traffic};
pub use wire::{
    ABORT, FRAME_HEADER, Frame, Kind, Len, RawTag, Space, Spaces, Tag, escape, escape_text,
};

use std::time::Duration;

/// The timeout a network gets unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
