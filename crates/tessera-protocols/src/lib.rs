//! Tessera's two-party protocols, built from garbling, OT and channels. Today: semi-honest
//! Yao ([`yao`]).

#![deny(missing_docs)]

pub mod yao;

/// What a protocol run can report.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// The channel failed or the peer sent something malformed.
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
    /// The two parties are not set up to run the same computation.
    #[error("the parties disagree: {0}")]
    Mismatch(String),
    /// This party's own input does not fit the circuit.
    #[error("input: {0}")]
    Input(String),
}
