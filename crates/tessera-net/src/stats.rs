//! What crossed the wire, and how long each named phase of a run took (MOTION2NX App. B:
//! run statistics as JSON).

use crate::{Channel, Network};
use serde::Serialize;
use std::time::Instant;

/// Traffic counters of one link, or of all of a party's links. Bytes include the 7-byte frame
/// headers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Bytes this party sent.
    pub bytes_sent: u64,
    /// Bytes this party received.
    pub bytes_received: u64,
    /// Messages this party sent.
    pub messages_sent: u64,
    /// Messages this party received.
    pub messages_received: u64,
    /// Communication rounds as this party sees them: how many times it started sending after
    /// it had received (its first send counts as one).
    pub rounds: u64,
}

impl std::iter::Sum for Stats {
    /// Adds the counters up (rounds too, which only a caller knows how to combine).
    fn sum<I: Iterator<Item = Stats>>(iter: I) -> Stats {
        iter.fold(Stats::default(), |a, s| Stats {
            bytes_sent: a.bytes_sent + s.bytes_sent,
            bytes_received: a.bytes_received + s.bytes_received,
            messages_sent: a.messages_sent + s.messages_sent,
            messages_received: a.messages_received + s.messages_received,
            rounds: a.rounds + s.rounds,
        })
    }
}

impl Stats {
    /// The traffic between an `earlier` reading and this one.
    pub fn since(&self, earlier: &Stats) -> Stats {
        Stats {
            bytes_sent: self.bytes_sent - earlier.bytes_sent,
            bytes_received: self.bytes_received - earlier.bytes_received,
            messages_sent: self.messages_sent - earlier.messages_sent,
            messages_received: self.messages_received - earlier.messages_received,
            rounds: self.rounds - earlier.rounds,
        }
    }
}

/// One named phase of a run: its wall-clock time and its traffic.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Phase {
    /// What the phase did ("base-ot", "garble", ...).
    pub name: String,
    /// Wall-clock milliseconds.
    pub ms: f64,
    /// Traffic during the phase.
    #[serde(flatten)]
    pub traffic: Stats,
}

/// Whatever counts traffic: a channel to one peer, or a whole network.
pub trait Traffic {
    /// What has crossed the wire so far.
    fn traffic(&self) -> Stats;
}

impl<C: Channel + ?Sized> Traffic for C {
    fn traffic(&self) -> Stats {
        self.stats()
    }
}

impl Traffic for Network {
    fn traffic(&self) -> Stats {
        self.stats()
    }
}

/// Times a phase: [`PhaseTimer::start`] before, [`PhaseTimer::stop`] after.
#[derive(Clone, Debug)]
pub struct PhaseTimer {
    name: String,
    start: Instant,
    at: Stats,
}

impl PhaseTimer {
    /// Starts timing phase `name` on a channel or network.
    pub fn start<T: Traffic + ?Sized>(name: &str, on: &T) -> Self {
        PhaseTimer {
            name: name.to_owned(),
            start: Instant::now(),
            at: on.traffic(),
        }
    }

    /// Ends the phase.
    pub fn stop<T: Traffic + ?Sized>(self, on: &T) -> Phase {
        Phase {
            name: self.name,
            ms: self.start.elapsed().as_secs_f64() * 1e3,
            traffic: on.traffic().since(&self.at),
        }
    }
}
