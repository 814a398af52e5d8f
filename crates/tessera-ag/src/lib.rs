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
//! - [`hello`]: the hello every run opens with: version, protocol and the fingerprint of what
//!   the parties must agree on.
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
pub mod hello;
pub mod multi;
pub mod share;
pub mod triples;
pub mod twopc;
pub mod wire;

/// The actively secure random correlated OTs that authenticated bits can come from, by name
/// (the registry `tessera ag run --cot` and the Python package read): SoftSpoken OT (k = 3,
/// `Protocol::DEFAULT_K`) with its consistency check, Ferret with its malicious checks
/// (EMP-OT's ferret_b10), IKNP with the KOS check.
pub const COTS: [&str; 3] = ["softspoken", "ferret", "kos"];

/// The session OT of the correlated OT called `name` (one of [`COTS`]).
pub fn cot(name: &str) -> Result<tessera_ot::OtChoice, Error> {
    use tessera_ot::{OtChoice, Protocol, Security};
    match name {
        "softspoken" => Protocol::softspoken(Protocol::DEFAULT_K, Security::Malicious)
            .map(OtChoice::Extension)
            .map_err(Error::from),
        "ferret" => Ok(OtChoice::Ferret(
            tessera_ot::ferret::Params::EMP_B10,
            Security::Malicious,
        )),
        "kos" => Ok(OtChoice::Extension(Protocol::KOS)),
        _ => Err(Error::Usage(format!(
            "no correlated OT called {name:?}: one of {}",
            COTS.join(", ")
        ))),
    }
}

/// What authenticated garbling runs: a two-party program (KRRW18, [`twopc`]) or a circuit
/// among any number of parties (WRK17b, [`multi`]). What `tessera ag run` and the Python
/// package run, so that either can be any party.
#[derive(Clone, Copy, Debug)]
pub enum Job<'a> {
    /// Between two parties: party 0 garbles, party 1 evaluates.
    Two(&'a twopc::Program),
    /// Among any number: party 0 evaluates, the others garble, all learn the outputs.
    Many(&'a tessera_circuit::Circuit),
}

impl Job<'_> {
    /// Its AND gates.
    pub fn ands(self) -> usize {
        match self {
            Job::Two(p) => p.ands(),
            Job::Many(c) => {
                let and = tessera_circuit::GateKind::And;
                c.gates.iter().filter(|g| g.kind == and).count()
            }
        }
    }

    /// Runs it as this party of `session` on this party's `input` bits: the outputs, where
    /// `outputs` says this party learns them (among more than two parties, all do).
    pub fn run(
        self,
        session: &mut tessera_protocols::Session,
        input: &[bool],
        outputs: twopc::Outputs,
    ) -> Result<Option<Vec<bool>>, Error> {
        match self {
            Job::Two(p) => twopc::run(session, p, input, outputs),
            Job::Many(_) if outputs != twopc::Outputs::All => Err(Error::Usage(
                "among more than two parties, every party learns the outputs".to_owned(),
            )),
            Job::Many(c) => multi::run(session, c, input).map(Some),
        }
    }
}

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
        check: checks::Check,
    },
    /// A message that cannot be read (an opening of the wrong length, bits set in the padding
    /// of packed bits, a payload that is not whole blocks): the peer misbehaved, whatever its
    /// values.
    #[error("a malformed message from the peer: {message}")]
    Malformed {
        /// The message kind's name ([`wire`]).
        message: &'static str,
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
            Error::Malformed { .. } => tessera_core::Fault::PeerMisbehaved,
            Error::Usage(_) => tessera_core::Fault::Misuse,
            Error::Circuit(e) => e.fault(),
        }
    }
}
