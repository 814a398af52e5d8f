//! Boolean circuits for garbling and GMW: a flat representation ([`Circuit`]), the Bristol
//! Fashion and old Bristol file formats ([`bristol`]), analyses ([`analysis`]: gate counts,
//! AND-depth, AND gates per layer, wire liveness), the layer order of the secret-sharing
//! protocols ([`layered`]) and a plaintext evaluator ([`eval`]).
//!
//! Files are untrusted input: every malformed file yields an [`Error`] naming the line and what
//! is wrong, never a panic.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod analysis;
pub mod bristol;
pub mod builder;
mod circuit;
pub mod eval;
pub mod layered;
pub mod library;
pub mod simd;

pub use circuit::{Circuit, Gate, GateKind, ShapeError, Wire, check_shape};

/// Everything `tessera-circuit` can report.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A circuit file that does not parse or is not a valid circuit.
    #[error("line {line}: {message}")]
    Parse {
        /// 1-based line number in the file (0: the file as a whole).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A circuit that violates an invariant (built in memory rather than read).
    #[error("invalid circuit: {0}")]
    Invalid(String),
    /// Inputs that do not fit the circuit.
    #[error("input: {0}")]
    Input(String),
    /// Reading or writing a file.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The system's message.
        message: String,
    },
}

impl tessera_core::Failure for Error {
    fn fault(&self) -> tessera_core::Fault {
        match self {
            Error::Parse { .. } | Error::Invalid(_) | Error::Input(_) => {
                tessera_core::Fault::Misuse
            }
            Error::Io { .. } => tessera_core::Fault::LocalIo,
        }
    }
}
