//! Why a party stopped, as its peers are told: one code from a closed set, never text. Our own
//! error text may hold local paths, file contents or a peer's words; it stays on our terminal.
//! A peer's code is shown as the fixed description here, so nothing a peer sends in an abort
//! reaches the user's terminal as it was sent (rustls' alerts follow the same rule).

use tessera_core::{Failure, Fault};

/// The reasons a party tells its peers when it stops. The byte on the wire is the
/// discriminant; an unknown byte reads as [`AbortCode::Unknown`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AbortCode {
    /// A peer's message was malformed, out of place or of the wrong size.
    PeerMisbehaved = 1,
    /// The parties are not set up for the same computation (their fingerprints differ).
    Mismatch = 2,
    /// This party's own input, file or request was refused.
    Input = 3,
    /// A wait ran out, or the run's deadline passed.
    Timeout = 4,
    /// A connection to another party failed.
    Network = 5,
    /// A check against cheating failed.
    CheatDetected = 6,
    /// The pre-processing cannot be used (used before, exhausted, another dealing's).
    Preprocessing = 7,
    /// A fault inside this party.
    Internal = 8,
    /// Its user stopped the run.
    Stopped = 9,
    /// A code this version does not know.
    Unknown = 0,
}

impl AbortCode {
    /// Every code a party sends.
    pub const ALL: [AbortCode; 9] = [
        AbortCode::PeerMisbehaved,
        AbortCode::Mismatch,
        AbortCode::Input,
        AbortCode::Timeout,
        AbortCode::Network,
        AbortCode::CheatDetected,
        AbortCode::Preprocessing,
        AbortCode::Internal,
        AbortCode::Stopped,
    ];

    /// The code a byte on the wire stands for.
    pub fn from_byte(b: u8) -> Self {
        Self::ALL
            .into_iter()
            .find(|c| *c as u8 == b)
            .unwrap_or(AbortCode::Unknown)
    }

    /// The code an abort message's payload carries: its first byte; a payload cut off (or
    /// empty) reads as [`AbortCode::Unknown`].
    pub fn from_payload(payload: &[u8]) -> Self {
        payload
            .first()
            .map_or(AbortCode::Unknown, |&b| Self::from_byte(b))
    }

    /// What the user is shown.
    pub fn describe(self) -> &'static str {
        match self {
            AbortCode::PeerMisbehaved => "it found a message of ours malformed or out of place",
            AbortCode::Mismatch => "the parties are not set up for the same computation",
            AbortCode::Input => "its own input, file or request was refused",
            AbortCode::Timeout => "a wait ran out or its deadline passed",
            AbortCode::Network => "its connection to a party failed",
            AbortCode::CheatDetected => "a check against cheating failed",
            AbortCode::Preprocessing => "its pre-processing cannot be used",
            AbortCode::Internal => "an internal fault",
            AbortCode::Stopped => "its user stopped the run",
            AbortCode::Unknown => "a reason this version does not know",
        }
    }
}

impl AbortCode {
    /// What the peers are told when a failure of this kind stops a party, or `None` when they
    /// must not be told anything (a peer's own abort is never echoed back, nor is a failure
    /// that only repeats an earlier one). The one mapping from errors to abort codes: every
    /// crate's error reaches it through its kind ([`Abort::abort_code`]).
    pub fn for_fault(fault: Fault) -> Option<AbortCode> {
        Some(match fault {
            Fault::PeerAborted | Fault::Repeated => return None,
            Fault::PeerMisbehaved => AbortCode::PeerMisbehaved,
            Fault::CheatDetected => AbortCode::CheatDetected,
            Fault::Mismatch => AbortCode::Mismatch,
            Fault::Misuse | Fault::LocalIo => AbortCode::Input,
            Fault::Preprocessing => AbortCode::Preprocessing,
            Fault::Network => AbortCode::Network,
            Fault::Timeout => AbortCode::Timeout,
            Fault::Internal => AbortCode::Internal,
            Fault::Stopped => AbortCode::Stopped,
            _ => AbortCode::Internal,
        })
    }
}

/// What the peers are told when an error stops a party: its kind's code
/// ([`AbortCode::for_fault`]). Every crate's error has it.
pub trait Abort: Failure {
    /// The code, or `None` when the peers must not be told.
    fn abort_code(&self) -> Option<AbortCode> {
        AbortCode::for_fault(self.fault())
    }
}

impl<E: Failure + ?Sized> Abort for E {}

impl std::fmt::Display for AbortCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::AbortCode;
    use tessera_core::Fault;

    /// The one mapping: a peer is told nothing of its own abort or of a failure repeated,
    /// and the caller's misuse and its files alike read as "its own input".
    #[test]
    fn every_kind_of_failure_has_its_code() {
        let table = [
            (Fault::PeerMisbehaved, Some(AbortCode::PeerMisbehaved)),
            (Fault::CheatDetected, Some(AbortCode::CheatDetected)),
            (Fault::PeerAborted, None),
            (Fault::Mismatch, Some(AbortCode::Mismatch)),
            (Fault::Misuse, Some(AbortCode::Input)),
            (Fault::Preprocessing, Some(AbortCode::Preprocessing)),
            (Fault::LocalIo, Some(AbortCode::Input)),
            (Fault::Network, Some(AbortCode::Network)),
            (Fault::Timeout, Some(AbortCode::Timeout)),
            (Fault::Repeated, None),
            (Fault::Internal, Some(AbortCode::Internal)),
            (Fault::Stopped, Some(AbortCode::Stopped)),
        ];
        for (fault, code) in table {
            assert_eq!(AbortCode::for_fault(fault), code, "{fault:?}");
        }
    }

    #[test]
    fn codes_round_trip_and_unknown_bytes_are_named() {
        for c in AbortCode::ALL {
            assert_eq!(AbortCode::from_byte(c as u8), c);
        }
        for b in [0u8, 10, 0x1b, 255] {
            assert_eq!(AbortCode::from_byte(b), AbortCode::Unknown);
        }
    }
}
