//! The one error type of `tessera-he`.

use tessera_core::{Failure, Fault};

/// Everything `tessera-he` can report.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A ring degree the transforms or the security table do not cover.
    #[error("ring degree {0}: a power of two from 1024 to 32768")]
    Degree(usize),
    /// A prime size outside what the transforms take.
    #[error("a modulus prime of {0} bits: primes have 20 to 62 bits")]
    PrimeBits(u32),
    /// No NTT-friendly prime of the size is left.
    #[error("no prime of {bits} bits is 1 modulo {order} beside those already taken")]
    NoPrime {
        /// The size asked for.
        bits: u32,
        /// Twice the degree.
        order: u64,
    },
    /// A ciphertext modulus too large for 128-bit security at its degree.
    #[error(
        "a ciphertext modulus of {bits} bits at degree {degree} is below 128-bit security \
         (the Homomorphic Encryption Standard allows {max})"
    )]
    Insecure {
        /// The ring degree.
        degree: usize,
        /// The modulus' bits.
        bits: u32,
        /// The most the standard allows at that degree.
        max: u32,
    },
    /// A plaintext modulus outside 2^1 to 2^64.
    #[error("plaintext modulus 2^{0}: from 1 to 64 bits")]
    PlainBits(u32),
    /// Products whose error, flooded, would not fit the modulus.
    #[error(
        "flooding of {flood_bits} bits does not fit the {budget} bits of noise the modulus \
         leaves: a smaller plaintext norm or larger parameters"
    )]
    Budget {
        /// The flooding needed.
        flood_bits: u32,
        /// log2(q/2t) at the top level.
        budget: u32,
    },
    /// The caller passed data of the wrong length or level.
    #[error("{what}: expected {expected}, got {got}")]
    Length {
        /// What was passed.
        what: &'static str,
        /// The length wanted.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// Words received from a peer that are not a ciphertext of these parameters.
    #[error("malformed {what}: {detail}")]
    Malformed {
        /// What was received.
        what: &'static str,
        /// Where and how it is wrong.
        detail: String,
    },
}

impl Failure for Error {
    fn fault(&self) -> Fault {
        match self {
            Error::Malformed { .. } => Fault::PeerMisbehaved,
            Error::Degree(_)
            | Error::PrimeBits(_)
            | Error::NoPrime { .. }
            | Error::Insecure { .. }
            | Error::PlainBits(_)
            | Error::Budget { .. }
            | Error::Length { .. } => Fault::Misuse,
        }
    }
}
