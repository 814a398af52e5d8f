//! How far a long phase has come, for a progress bar or a caller's callback: a phase of known
//! size (its estimated bytes, from the protocol's cost model) is metered by the bytes this
//! party has sent and received in it ([`tessera_net::Network::meter`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where a metered phase stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The phase: "setup" or "online".
    pub phase: &'static str,
    /// Its bytes so far, sent and received by this party (at most `total`).
    pub done: u64,
    /// Its estimated bytes; at the end of the phase `done` equals it.
    pub total: u64,
    /// The operation of the program running (its index, as [`crate::hybrid::Step`]s count),
    /// where the phase runs one after another (the online phase; the setup's linear maps),
    /// else `None`.
    pub op: Option<usize>,
}

/// Where a metered phase is: the operation running, shared between the protocol's loop (which
/// moves it) and the network's meter (which reads it).
#[derive(Clone, Debug, Default)]
pub struct Position(Arc<AtomicUsize>);

impl Position {
    const NONE: usize = usize::MAX;

    /// Operation `op` runs now.
    pub fn at(&self, op: usize) {
        self.0.store(op, Ordering::Relaxed);
    }

    /// No operation of its own runs now (a part shared by all).
    pub fn clear(&self) {
        self.0.store(Self::NONE, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> Option<usize> {
        Some(self.0.load(Ordering::Relaxed)).filter(|&op| op != Self::NONE)
    }
}

/// A caller's watcher of progress, shared with the network's meter while a phase runs.
#[derive(Clone)]
pub struct Observer {
    /// How often a metered phase reports, at most.
    pub(crate) every: Duration,
    watch: Arc<Mutex<dyn FnMut(Progress) + Send>>,
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Observer")
    }
}

impl Observer {
    /// An observer calling `watch` at the start and end of every metered phase and at most
    /// once per `every` while it runs.
    pub fn new(every: Duration, watch: impl FnMut(Progress) + Send + 'static) -> Self {
        Observer {
            every,
            watch: Arc::new(Mutex::new(watch)),
        }
    }

    /// Tells the watcher `progress` (a watcher that panicked earlier is not called again).
    pub(crate) fn tell(&self, progress: Progress) {
        if let Ok(mut watch) = self.watch.lock() {
            watch(progress);
        }
    }
}
