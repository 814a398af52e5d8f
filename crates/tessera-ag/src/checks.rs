//! The checks against cheating, by name: a failed one is [`crate::Error::CheckFailed`] naming
//! its [`Check`], which the peers are told as cheating detected. A build with the feature
//! `check-switches` (which only this crate's own tests turn on, never the command line) can
//! switch each off, so that a test shows that some cheating test then fails: the checks are
//! what catches the cheats. Without the feature [`on`] is always true and compiles away.

use crate::Error;

/// A check against cheating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// The leaky AND's equality check (KRRW18 §4, F_EQ; [`crate::triples`]).
    LeakyEquality,
    /// The commitment to the first party's equality digest and coin.
    EqualityCommitment,
    /// The MACs of the opened bucket differences y_1 ⊕ y_i (two and n parties).
    BucketMacs,
    /// Folding each bucket of leaky triples into one (a switch only: it cannot fail).
    Bucketing,
    /// The MACs of the opened Beaver differences of the AND gates' masks ([`crate::twopc`]).
    BeaverMacs,
    /// The MACs of the opened masks of this party's input wires.
    InputMaskMacs,
    /// The evaluator's input labels: their low bits are its masked inputs.
    InputLabels,
    /// The evaluator's check of the garbler's digest of the AND labels it must hold.
    ExpectedLabels,
    /// The garbler's check of the evaluator's opened digest of its AND labels.
    AndLabels,
    /// The evaluator's consistency check of every AND gate's masked values (KRRW18 §3).
    Consistency,
    /// The garbler's check that the evaluator's output labels are its own (two and n parties).
    OutputLabels,
    /// The MACs of the opened output masks.
    OutputMasks,
    /// n parties ([`crate::multi`]): the MACs of authenticated bits opened to a party.
    OpenedMacs,
    /// The consistency check of the authenticated shares (WRK17b): each peer's combination's
    /// MAC, and the digest of all of them compared.
    ShareConsistency,
    /// A tossed coin's commitment.
    CoinCommitment,
    /// The leaky AND check: the committed combinations add to 0.
    LeakyCheck,
    /// The leaky AND check's commitment.
    LeakyCommitment,
    /// The digest of the masked inputs every party saw.
    InputEcho,
    /// The MACs of the decrypted shares of the distributed garbled rows.
    GarbledRowMacs,
}

impl Check {
    /// Every check.
    pub const ALL: [Check; 19] = [
        Check::LeakyEquality,
        Check::EqualityCommitment,
        Check::BucketMacs,
        Check::Bucketing,
        Check::BeaverMacs,
        Check::InputMaskMacs,
        Check::InputLabels,
        Check::ExpectedLabels,
        Check::AndLabels,
        Check::Consistency,
        Check::OutputLabels,
        Check::OutputMasks,
        Check::OpenedMacs,
        Check::ShareConsistency,
        Check::CoinCommitment,
        Check::LeakyCheck,
        Check::LeakyCommitment,
        Check::InputEcho,
        Check::GarbledRowMacs,
    ];

    /// What the check is, in words.
    pub fn name(self) -> &'static str {
        match self {
            Check::LeakyEquality => "the leaky AND equality check",
            Check::EqualityCommitment => "the equality check's commitment",
            Check::BucketMacs => "the bucket differences' MAC check",
            Check::Bucketing => "the bucketing of leaky triples",
            Check::BeaverMacs => "the Beaver opening's MAC check",
            Check::InputMaskMacs => "the input masks' MAC check",
            Check::InputLabels => "the input labels' low-bit check",
            Check::ExpectedLabels => "the label check (the garbler's expected labels)",
            Check::AndLabels => "the label check (the evaluator's AND labels)",
            Check::Consistency => "the consistency check",
            Check::OutputLabels => "the output label check",
            Check::OutputMasks => "the output masks' MAC check",
            Check::OpenedMacs => "the MAC check of opened authenticated bits",
            Check::ShareConsistency => "the consistency check of the authenticated shares",
            Check::CoinCommitment => "the coin's commitment check",
            Check::LeakyCheck => "the leaky AND check",
            Check::LeakyCommitment => "the leaky AND check's commitment",
            Check::InputEcho => "the masked inputs' echo check",
            Check::GarbledRowMacs => "the garbled rows' MAC check",
        }
    }

    #[cfg(feature = "check-switches")]
    fn bit(self) -> u32 {
        1 << self as u32
    }
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(feature = "check-switches")]
static OFF: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Whether `check` runs.
#[inline]
pub fn on(check: Check) -> bool {
    #[cfg(feature = "check-switches")]
    {
        OFF.load(std::sync::atomic::Ordering::Relaxed) & check.bit() == 0
    }
    #[cfg(not(feature = "check-switches"))]
    {
        let _ = check;
        true
    }
}

/// `check` on what it found: fine where it `passed` (or is switched off), else the error that
/// names it.
#[inline]
pub fn require(check: Check, passed: bool) -> Result<(), Error> {
    if passed || !on(check) {
        Ok(())
    } else {
        Err(Error::CheckFailed { check })
    }
}

/// Switches `check` off (`off`) or on again, for every party in this process.
#[cfg(feature = "check-switches")]
pub fn set_off(check: Check, off: bool) {
    use std::sync::atomic::Ordering;
    if off {
        OFF.fetch_or(check.bit(), Ordering::Relaxed);
    } else {
        OFF.fetch_and(!check.bit(), Ordering::Relaxed);
    }
}
