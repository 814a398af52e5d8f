//! Actively secure computation by authenticated garbling: Wang-Ranellucci-Katz, "Authenticated
//! garbling and efficient maliciously secure two-party computation" (CCS 2017, eprint 2017/030;
//! WRK17) and Katz-Ranellucci-Rosulek-Wang, "Optimizing authenticated garbling for faster secure
//! two-party computation" (CRYPTO 2018, eprint 2018/578; KRRW18). Issue 44 builds it in parts:
//!
//! - [`abit`]: authenticated bits from the session's random correlated OT, and their checked
//!   opening (WRK17 §2.2).
//! - [`share`]: authenticated XOR shares between two parties.
//! - [`triples`]: authenticated AND triples, batch by batch: KRRW18's leaky AND, the equality
//!   check, and WRK17's bucketing (by cyclic shifts of layers).
//! - [`garbling`]: KRRW18's authenticated half-gates on the garbling engine's plans and kernels.
//! - [`twopc`]: the two-party protocol, its phases as roles without I/O and the drivers for a
//!   circuit ([`twopc::run`]) and for a chain of steps with the state carried
//!   ([`twopc::run_chain`]).
//! - [`combine`]: comparing long vectors of MACs by one random linear combination.
//! - [`checks`]: the checks against cheating by name (switchable in this crate's tests only).
//! - [`wire`]: the message kinds.
//!
//! - [`multi`]: n parties (WRK17b): authenticated shares among n, triples and the distributed
//!   garbled circuit, party 0 evaluating and every party learning the outputs.
//!
//! Security against active adversaries rests on the OT: a session for these protocols must use
//! an actively secure provider (SoftSpoken or IKNP with the KOS consistency check, or malicious
//! Ferret); [`abit::check_provider`] refuses the others.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
pub mod abit;
pub mod checks;
pub mod combine;
pub mod garbling;
pub mod multi;
pub mod share;
pub mod triples;
pub mod twopc;
pub mod wire;

/// What went wrong in an authenticated-garbling protocol.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// From the session: the network, the OT, or this party's own request.
    #[error(transparent)]
    Session(#[from] tessera_protocols::Error),
    /// A check against cheating failed: the peer deviated from the protocol.
    #[error("{check} failed: the peer's values are not authentic (cheating)")]
    CheckFailed {
        /// Which check.
        check: &'static str,
    },
    /// This party's own request does not fit.
    #[error("{0}")]
    Usage(String),
    /// The circuit file this party reads: unreadable or malformed (named with its line).
    #[error(transparent)]
    Circuit(#[from] tessera_circuit::Error),
}

impl From<tessera_net::Error> for Error {
    fn from(e: tessera_net::Error) -> Self {
        Error::Session(e.into())
    }
}

impl From<tessera_ot::Error> for Error {
    fn from(e: tessera_ot::Error) -> Self {
        Error::Session(e.into())
    }
}

impl tessera_core::Failure for Error {
    fn fault(&self) -> tessera_core::Fault {
        match self {
            Error::Session(e) => e.fault(),
            Error::CheckFailed { .. } => tessera_core::Fault::CheatDetected,
            Error::Usage(_) => tessera_core::Fault::Misuse,
            Error::Circuit(e) => e.fault(),
        }
    }
}
