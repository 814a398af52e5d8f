//! Oblivious transfer for Tessera (VASA, ACSAC 2021, §2.2 and §4.3.2).
//!
//! - [`traits`]: the flavours every provider offers, sender and receiver: correlated OT with a
//!   global offset Δ, random OT, chosen-message OT.
//! - [`base`]: the Chou-Orlandi "simplest" OT (LATINCRYPT 2015) over Ristretto255, 128 of
//!   which seed the extension.
//! - [`extension`]: SoftSpoken OT extension (Roy, CRYPTO 2022) with k bits per group, of which
//!   IKNP (Ishai, Kilian, Nissim, Petrank, CRYPTO 2003) with the optimisations of Asharov,
//!   Lindell, Schneider, Zohner (CCS 2013) is k = 1, for semi-honest security, and with the
//!   KOS consistency check (Keller, Orsini, Scholl, CRYPTO 2015) for security against a
//!   malicious receiver.
//! - [`ferret`]: Ferret silent OT (Yang, Weng, Lan, Zhang, Wang, CCS 2020): random correlated
//!   OT from GGM-tree multi-point COT and an LPN encoding, bootstrapped from SoftSpoken.
//! - [`choices`]: the receiver's choice bits, packed.
//! - [`flavours`]: every flavour derived once from a provider's random correlated OT.
//! - [`choice`]: which provider a party runs ([`OtChoice`]), its sides as trait objects.
//! - [`ggm`]: GGM trees as puncturable PRFs, batched across trees.
//! - [`spread`]: when a party's local work spreads over threads.
//!
//! Every protocol is a set of roles without I/O (typed messages in, typed messages out,
//! [`tessera_net::role`]) and a thin driver; tests step the roles directly and cheat by
//! editing a message. A party that detects misbehaviour (an invalid curve point, a failed
//! consistency check, a commitment that does not open) returns an [`Error`]; telling the peer
//! is the session's job, in one place.
//!
//! The receiver's choice matrix is built from the core's AES-CTR PRG, transposed with the
//! core's bit-matrix transposition and hashed with the core's batched TCCR hash (Guo, Katz,
//! Wang, Yu, S&P 2020), all in batches of thousands of OTs.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod base;
mod bits;
pub mod choice;
pub mod choices;
pub mod extension;
pub mod ferret;
pub mod flavours;
pub mod ggm;
#[cfg(feature = "ideal")]
pub mod ideal;
pub mod one_of_n;
pub mod spread;
pub mod traits;
pub mod triples;

pub use choice::{OtChoice, OtReceiving, OtSending};
pub use choices::{ChoiceBits, Choices};
pub use extension::{ExtensionReceiver, ExtensionSender, Protocol, Security};
pub use ferret::{FerretReceiver, FerretSender};
pub use flavours::{Flavours, ProviderReceiver, ProviderSender};
pub use traits::{
    CotReceiver, CotSender, Flow, OtReceiver, OtSender, RcotReceiver, RcotSender, RotReceiver,
    RotSender,
};

/// A role stepped with a message at a point where it expects none: the driver hands a role
/// only the message it asked for, so this is a fault of ours, never a peer's.
pub(crate) fn out_of_turn(protocol: &'static str, what: &'static str) -> Error {
    Error::OutOfTurn { protocol, what }
}

/// What oblivious transfer can report.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The network failed or the peer sent something malformed.
    #[error(transparent)]
    Net(#[from] tessera_net::Error),
    /// From the primitives.
    #[error(transparent)]
    Core(#[from] tessera_core::Error),
    /// The peer sent bytes that are not a valid Ristretto255 point, or the identity.
    #[error("base OT: {what} {index} from the peer is not a valid non-identity Ristretto255 point")]
    BadPoint {
        /// Which message.
        what: &'static str,
        /// Which point in it.
        index: usize,
    },
    /// The KOS consistency check failed: the receiver did not use one choice vector.
    #[error("KOS consistency check failed: the receiver's messages are inconsistent (cheating)")]
    CheckFailed,
    /// The Ferret consistency check failed.
    #[error("Ferret consistency check failed: the sender's trees are inconsistent (cheating)")]
    FerretCheckFailed,
    /// The sender's coin-toss commitment does not open.
    #[error("KOS coin toss: the sender's seed does not match its commitment")]
    BadCommitment,
    /// A request the protocol cannot serve (the caller's misuse).
    #[error("{0}")]
    Usage(String),
    /// A role stepped out of turn: an internal fault (the driver hands a role only the
    /// message it asked for).
    #[error("{protocol}: {what} out of turn (an internal fault)")]
    OutOfTurn {
        /// The protocol.
        protocol: &'static str,
        /// What came.
        what: &'static str,
    },
}

impl tessera_core::Failure for Error {
    fn fault(&self) -> tessera_core::Fault {
        use tessera_core::Fault;
        match self {
            Error::Net(e) => e.fault(),
            Error::Core(e) => e.fault(),
            Error::BadPoint { .. } => Fault::PeerMisbehaved,
            Error::CheckFailed | Error::FerretCheckFailed | Error::BadCommitment => {
                Fault::CheatDetected
            }
            Error::Usage(_) => Fault::Misuse,
            Error::OutOfTurn { .. } => Fault::Internal,
        }
    }
}
