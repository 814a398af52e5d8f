//! Tessera's protocols, built from garbling, OT and networks: the [`session`] every protocol
//! runs on (network, PRG, backend, OT providers per peer, message spaces, phases, the one abort
//! path), semi-honest Yao ([`yao`]; on several threads per party, [`yao_threads`]; of circuit files too large to hold, [`yao_file`]) and Boolean circuits in GMW's and ABY2.0's secret sharings
//! ([`boolean`]).

#![deny(missing_docs)]

pub mod boolean;
pub mod hybrid;
pub mod ipp;
pub mod session;
pub mod stream;
pub mod yao;
pub mod yao_file;
pub mod yao_threads;

pub use session::{OtChoice, Session, SessionConfig};

/// What a protocol run can report.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// The network failed or a peer sent something malformed.
    #[error(transparent)]
    Net(#[from] tessera_net::Error),
    /// Oblivious transfer failed.
    #[error(transparent)]
    Ot(#[from] tessera_ot::Error),
    /// Garbling or evaluation failed.
    #[error(transparent)]
    Garble(#[from] tessera_garble::Error),
    /// The circuit is not valid.
    #[error(transparent)]
    Circuit(#[from] tessera_circuit::Error),
    /// From the primitives.
    #[error(transparent)]
    Core(#[from] tessera_core::Error),
    /// The parties are not set up to run the same computation.
    #[error("the parties disagree: {0}")]
    Mismatch(String),
    /// This party's own input or request does not fit.
    #[error("input: {0}")]
    Input(String),
}

impl Error {
    /// What the peers are told when this error stops a party ([`Session::run`]), or `None`
    /// when they must not be: a peer's own abort is never echoed back, nor is a failure that
    /// only repeats an earlier one (whose text may hold a peer's words).
    pub fn reason_for_peers(&self) -> Option<String> {
        let net = match self {
            Error::Net(e) | Error::Ot(tessera_ot::Error::Net(e)) => Some(e),
            _ => None,
        };
        match net {
            Some(tessera_net::Error::PeerAborted { .. } | tessera_net::Error::Poisoned(_)) => None,
            _ => Some(self.to_string()),
        }
    }
}
