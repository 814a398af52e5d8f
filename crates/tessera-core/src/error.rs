//! The one error type of `tessera-core`.

/// Everything `tessera-core` can report.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A backend name that does not exist.
    #[error("unknown AES backend: {0}")]
    UnknownBackend(String),
    /// A backend this CPU cannot run.
    #[error("this CPU cannot run the {backend} backend: it needs the CPU features {needs}")]
    UnsupportedBackend {
        /// The backend asked for.
        backend: &'static str,
        /// What it needs.
        needs: String,
    },
    /// A transposition backend this CPU cannot run.
    #[error("this CPU cannot run the {0} transposition: it lacks the CPU features")]
    UnsupportedTranspose(&'static str),
    /// Malformed hexadecimal input.
    #[error("bad hex: {0}")]
    Hex(String),
    /// A bit matrix whose shape the operation cannot take.
    #[error("bit-matrix shape: {0}")]
    Shape(String),
    /// The operating system's randomness source failed.
    #[error("operating-system randomness failed: {0}")]
    Entropy(String),
}

/// What kind of failure an error is: the one taxonomy of every Tessera crate's errors, after
/// rustls' (which keeps a peer's misbehaviour apart from the caller's misuse, I/O and its own
/// faults). Every crate's error says its kind ([`Failure::fault`]); what a peer is told when a
/// party stops follows from the kind alone, in one place (`tessera_net::AbortCode::for_fault`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fault {
    /// A peer sent something malformed, of the wrong size, or not a valid value.
    PeerMisbehaved,
    /// A check against cheating failed: a peer deviated from the protocol.
    CheatDetected,
    /// A peer stopped and said why.
    PeerAborted,
    /// The parties are not set up for the same computation.
    Mismatch,
    /// The caller asked for what cannot be served: its input, options, circuit or model.
    Misuse,
    /// Pre-processing that cannot be used: used before, exhausted, or another dealing's.
    Preprocessing,
    /// A file of this party's could not be read or written.
    LocalIo,
    /// The connection to a peer failed.
    Network,
    /// A wait ran out or the run's deadline passed.
    Timeout,
    /// A failure already reported once (a network that failed earlier, used again).
    Repeated,
    /// This party's user stopped the run (Ctrl-C).
    Stopped,
    /// A fault inside this party: the operating system's randomness, a broken invariant.
    Internal,
}

/// An error that says what kind of failure it is.
pub trait Failure: std::error::Error {
    /// Its kind.
    fn fault(&self) -> Fault;
}

impl Failure for Error {
    fn fault(&self) -> Fault {
        match self {
            Error::Entropy(_) => Fault::Internal,
            Error::UnknownBackend(_)
            | Error::UnsupportedBackend { .. }
            | Error::UnsupportedTranspose(_)
            | Error::Hex(_)
            | Error::Shape(_) => Fault::Misuse,
        }
    }
}
