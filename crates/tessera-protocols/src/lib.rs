//! Tessera's protocols, built from garbling, OT and networks: the [`session`] every protocol
//! runs on (network, PRG, backend, OT providers per peer, message spaces, phases, the one abort
//! path), semi-honest Yao and its variants ([`yao`]: on several threads per party, of circuit
//! files too large to hold, of chains, between two garbling parties), Boolean circuits in GMW's
//! and ABY2.0's secret sharings ([`boolean`]) and hybrid programs over all five sharings
//! ([`hybrid`]), all opening with the one [`hello`].

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod boolean;
pub mod circuits;
pub mod hello;
pub mod hybrid;
pub mod lattice;
pub mod progress;
pub mod session;
pub mod yao;

pub use progress::{Observer, Progress};
pub use session::{MeteredPart, OtChoice, Session, SessionConfig};

/// What a protocol run can report.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The network failed or a peer sent something malformed.
    #[error(transparent)]
    Net(#[from] tessera_net::Error),
    /// Oblivious transfer failed.
    #[error(transparent)]
    Ot(#[from] tessera_ot::Error),
    /// Garbling or evaluation failed.
    #[error(transparent)]
    Garble(tessera_garble::Error),
    /// The circuit is not valid.
    #[error(transparent)]
    Circuit(#[from] tessera_circuit::Error),
    /// From the primitives.
    #[error(transparent)]
    Core(#[from] tessera_core::Error),
    /// The parties are not set up to run the same computation.
    #[error("the parties disagree: {0}")]
    Mismatch(String),
    /// This party's own input or request does not fit (the caller's misuse).
    #[error("input: {0}")]
    Input(String),
}

/// The garbling engine's error; a table stream's network error comes back as itself.
impl From<tessera_garble::Error> for Error {
    fn from(e: tessera_garble::Error) -> Self {
        match &e {
            tessera_garble::Error::Stream(s) => match s.get::<tessera_net::Error>() {
                Some(net) => Error::Net(net.clone()),
                None => Error::Garble(e),
            },
            _ => Error::Garble(e),
        }
    }
}

/// The kind of each error: the parts' kinds kept; what the peers are told follows from it
/// ([`tessera_net::Abort`], used by [`Session::run`]).
impl tessera_core::Failure for Error {
    fn fault(&self) -> tessera_core::Fault {
        match self {
            Error::Net(e) => e.fault(),
            Error::Ot(e) => e.fault(),
            Error::Garble(e) => e.fault(),
            Error::Circuit(e) => e.fault(),
            Error::Core(e) => e.fault(),
            Error::Mismatch(_) => tessera_core::Fault::Mismatch,
            Error::Input(_) => tessera_core::Fault::Misuse,
        }
    }
}
