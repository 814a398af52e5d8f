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
