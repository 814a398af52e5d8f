//! What the network reports: set-up failures, link failures and a peer's misbehaviour, each
//! naming the party concerned. A peer's abort arrives as a code ([`AbortCode`]), never as text,
//! and its kind ([`Failure::fault`]) gives the code the peers are told ([`crate::Abort`]).

use tessera_core::{Failure, Fault};

use crate::AbortCode;
use crate::wire::RawTag;
use std::time::Duration;

/// What the network can report.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// This party could not listen.
    #[error("listening on {addr}: {message}")]
    Listen {
        /// The address.
        addr: String,
        /// The system's message.
        message: String,
    },
    /// This party could not reach a peer before the set-up time ran out.
    #[error("connecting to party {party} at {addr}: {message} (gave up after {waited:?})")]
    Connect {
        /// The peer.
        party: usize,
        /// Its address.
        addr: String,
        /// The last failure.
        message: String,
        /// How long this party tried.
        waited: Duration,
    },
    /// Peers that were to connect to this party did not within the set-up time.
    #[error(
        "{} never connected within {waited:?}{}",
        parties(missing),
        refused.as_ref().map(|r| format!(" (a connection was refused: {r})")).unwrap_or_default()
    )]
    NeverConnected {
        /// The parties that did not connect.
        missing: Vec<usize>,
        /// How long this party waited.
        waited: Duration,
        /// Why the last connection that was turned away was, if any was.
        refused: Option<String>,
    },
    /// The mesh hello or the TLS handshake with a peer failed.
    #[error("setting up the link to {}: {message}", party.map_or("a peer".to_string(), |p| format!("party {p}")))]
    Handshake {
        /// The peer, if known.
        party: Option<usize>,
        /// What went wrong.
        message: String,
    },
    /// The transport to a peer failed.
    #[error("connection to party {party}: {message}")]
    Io {
        /// The peer.
        party: usize,
        /// The system's message.
        message: String,
    },
    /// A peer hung up.
    #[error("party {party} closed the connection{}", during.map(|m| format!(" in the middle of message '{m}'")).unwrap_or_default())]
    Closed {
        /// The peer.
        party: usize,
        /// The message it cut off, if it did.
        during: Option<&'static str>,
    },
    /// Nothing arrived from a peer within the timeout.
    #[error("party {party} sent nothing for {after:?} (read timeout)")]
    ReadTimeout {
        /// The peer.
        party: usize,
        /// The timeout.
        after: Duration,
    },
    /// A peer took none of this party's data within the timeout: it is not reading.
    #[error(
        "party {party} accepted nothing this party sent for {after:?} (write timeout: it is not reading)"
    )]
    WriteTimeout {
        /// The peer.
        party: usize,
        /// The timeout.
        after: Duration,
    },
    /// The bound on the whole run passed.
    #[error("the run's deadline of {after:?} passed")]
    Deadline {
        /// The bound.
        after: Duration,
    },
    /// A message other than the one the protocol expects next.
    #[error("party {party}: expected message '{expected}' ({expected_tag}), got {got}")]
    UnexpectedMessage {
        /// The peer.
        party: usize,
        /// The name of the expected message.
        expected: &'static str,
        /// Its tag.
        expected_tag: RawTag,
        /// The tag that arrived.
        got: RawTag,
    },
    /// A message of the wrong size.
    #[error("party {party}: message '{name}' has {got} bytes, expected {expected}")]
    WrongLength {
        /// The peer.
        party: usize,
        /// The message.
        name: &'static str,
        /// Its length on the wire.
        got: usize,
        /// The length the protocol needs.
        expected: usize,
    },
    /// A message larger than the protocol allows.
    #[error("party {party}: message '{name}' announces {got} bytes, more than the limit of {max}")]
    Oversized {
        /// The peer.
        party: usize,
        /// The message.
        name: &'static str,
        /// The announced length.
        got: usize,
        /// The bound.
        max: usize,
    },
    /// A message of the right size whose content is not valid.
    #[error("party {party}: message '{name}' is malformed: {what}")]
    Malformed {
        /// The peer.
        party: usize,
        /// The message.
        name: &'static str,
        /// What is wrong with it.
        what: String,
    },
    /// A peer gave up and said why, as a code.
    #[error("party {party} aborted: {code}")]
    PeerAborted {
        /// The peer.
        party: usize,
        /// Its reason.
        code: AbortCode,
    },
    /// A network that already failed, used again.
    #[error("the network failed earlier and cannot be used: {0}")]
    Poisoned(String),
    /// TLS configuration.
    #[error("TLS: {0}")]
    Tls(String),
    /// A key, certificate or other file that cannot be used.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// A request the network cannot serve (this party's own mistake, not a peer's).
    #[error("{0}")]
    Usage(String),
    /// This party's user stopped the run ([`crate::Stopper`]).
    #[error("stopped")]
    Stopped,
}

impl Failure for Error {
    fn fault(&self) -> Fault {
        use Error::*;
        match self {
            PeerAborted { .. } => Fault::PeerAborted,
            Poisoned(_) => Fault::Repeated,
            UnexpectedMessage { .. } | WrongLength { .. } | Oversized { .. } | Malformed { .. } => {
                Fault::PeerMisbehaved
            }
            ReadTimeout { .. } | WriteTimeout { .. } | Deadline { .. } => Fault::Timeout,
            Listen { .. }
            | Connect { .. }
            | NeverConnected { .. }
            | Handshake { .. }
            | Io { .. }
            | Closed { .. } => Fault::Network,
            File { .. } => Fault::LocalIo,
            Stopped => Fault::Stopped,
            Tls(_) | Usage(_) => Fault::Misuse,
        }
    }
}

fn parties(list: &[usize]) -> String {
    match list {
        [one] => format!("party {one}"),
        _ => format!(
            "parties {}",
            list.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Why a message's content is invalid, found while decoding it; the driver that received it
/// turns it into [`Error::Malformed`] with the peer and the message named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(pub String);
