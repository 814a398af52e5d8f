//! The checks against cheating, by name. A build with the feature `check-switches` (which only
//! this crate's own tests turn on, never the command line) can switch each off, so that a test
//! shows that some cheating test then fails: the checks are what catches the cheats.
//! Without the feature [`on`] is always true and compiles away.

/// A check against cheating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// The leaky AND's equality check and its commitment ([`crate::triples`]).
    Equality,
    /// Folding each bucket of leaky triples into one.
    Bucketing,
    /// The garbler's check of the evaluator's AND labels and the evaluator's consistency check
    /// ([`crate::twopc`]).
    Consistency,
    /// The checks on decoding outputs: the garbler's on the evaluator's output labels, and both
    /// parties' on the opened output masks.
    Output,
}

impl Check {
    /// Every check.
    pub const ALL: [Check; 4] = [
        Check::Equality,
        Check::Bucketing,
        Check::Consistency,
        Check::Output,
    ];

    #[cfg(feature = "check-switches")]
    fn bit(self) -> u8 {
        1 << self as u8
    }
}

#[cfg(feature = "check-switches")]
static OFF: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

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
