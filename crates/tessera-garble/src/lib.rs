//! Garbled circuits on Tessera's batched AES: a [`Plan`] orders a circuit's gates into batches
//! of independent AND gates and places wire labels in slots reused by liveness; a [`Garbler`]
//! and an [`Evaluator`] run the plan with a garbling [`Scheme`]: half-gates (Zahur, Rosulek,
//! Evans, EUROCRYPT 2015) with the PRP, MI or CIRC hash, or the PRF-based scheme of Gueron,
//! Lindell, Nof, Pinkas (CCS 2015), the four of VASA §4.3.1, and three-halves garbling
//! (Rosulek, Roy, CRYPTO 2021).
//!
//! The garbler writes each batch's tables to a [`TableSink`] as soon as they exist and the
//! evaluator reads them from a [`TableSource`] in the same order, so neither needs the whole
//! garbled circuit in memory. Batching follows VASA §4.1 (ACSAC 2021):
//! dynamic batching with regular early execution, or static AND-depth layering ([`Batching`]).
//!
//! Tables come from the other party: a truncated stream is an [`Error`], and a tampered one
//! yields wrong labels (so a wrong or undecodable output), never a panic.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod cgp;
mod cgp_stream;
mod crew;
mod delta;
mod encoding;
mod engine;
mod plan;
mod scheme;
mod stream;
mod tables;
mod windows;

use tessera_core::{Failure, Fault};

pub use cgp::{CgpEvaluator, CgpGarbler, MIN_PART, PARTS, Partitions, Source, gather};
pub use cgp_stream::{CgpStreamEvaluator, CgpStreaming};
pub use delta::Delta;
pub use encoding::{InputEncoding, decode, decoding_bits};
pub use engine::{DOMAINS, Evaluation, Evaluator, Garbler, batch_tables, table_blocks};
pub use plan::{Batching, ONE_SLOT, Plan, PlanStats, RESERVED, XorGates, ZERO_SLOT};
pub use scheme::{
    Circ, CircHash, GateCost, HalfGates, HalfGatesHash, Mi, MiHash, Offset, Prf, PrfSecret,
    PrfWire, Prp, PrpHash, Scheme, SchemeCost, SchemeKind, SchemeVisitor, ThreeHalves,
    ThreeHalvesSecret,
};
pub use stream::{Chain, ChainEvaluator, ChainGarbler, check_steps};
pub use tables::{TableBuffer, TableReader, TableSink, TableSource};
pub use windows::{StreamedEvaluator, evaluate_streamed, garble_streamed};

/// The error a table sink or source failed with, shared (errors of this crate are cloned),
/// with its kind: a network error in two-party use, or an internal fault where the engine
/// itself stopped.
#[derive(Clone, Debug)]
pub struct StreamError {
    error: std::sync::Arc<dyn std::error::Error + Send + Sync>,
    fault: Fault,
}

impl StreamError {
    /// Wraps `e`, keeping its kind.
    pub fn new(e: impl Failure + Send + Sync + 'static) -> Self {
        StreamError {
            fault: e.fault(),
            error: std::sync::Arc::new(e),
        }
    }

    /// An internal fault of the engine, with only a text.
    pub fn text(text: impl Into<String>) -> Self {
        #[derive(Debug, thiserror::Error)]
        #[error("{0}")]
        struct Text(String);
        StreamError {
            fault: Fault::Internal,
            error: std::sync::Arc::new(Text(text.into())),
        }
    }

    /// The error as type `E`, if it is one.
    pub fn get<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.error.downcast_ref::<E>()
    }
}

impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

/// Two stream errors are equal if they say the same.
impl PartialEq for StreamError {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Eq for StreamError {}

/// What garbling and evaluation can report.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The circuit is not valid.
    #[error(transparent)]
    Circuit(#[from] tessera_circuit::Error),
    /// Input labels or bits that do not fit the circuit.
    #[error("inputs: {0}")]
    Inputs(String),
    /// The garbled tables ended early.
    #[error("garbled tables end after {available} blocks, but block {needed} is needed")]
    Truncated {
        /// Blocks read so far plus the ones the current batch needs.
        needed: usize,
        /// Blocks the stream held.
        available: usize,
    },
    /// More table blocks than the circuit uses.
    #[error("{0} garbled-table blocks left over after the last gate")]
    TrailingTables(usize),
    /// A plan compiled for another kind of XOR gates than the scheme garbles.
    #[error("scheme {scheme} cannot run a plan compiled for {plan:?} XOR gates")]
    WrongPlan {
        /// The scheme's name.
        scheme: &'static str,
        /// What the plan was compiled for.
        plan: XorGates,
    },
    /// The sink or source failed (a channel in two-party use): its error, kept whole so the
    /// caller can recover its type ([`StreamError::get`]).
    #[error("garbled-table stream: {0}")]
    Stream(StreamError),
}

impl Failure for Error {
    fn fault(&self) -> Fault {
        match self {
            Error::Circuit(e) => e.fault(),
            Error::Inputs(_) | Error::WrongPlan { .. } => Fault::Misuse,
            Error::Truncated { .. } | Error::TrailingTables(_) => Fault::PeerMisbehaved,
            Error::Stream(s) => s.fault,
        }
    }
}
