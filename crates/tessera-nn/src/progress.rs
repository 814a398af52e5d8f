//! A private inference's progress on a terminal: a bar on standard error for the phase running
//! (the setup, the online phase), its bytes against the cost model's estimate with the time
//! left, labelled with the layer running; it appears once a phase has run for [`BAR_AFTER`]
//! (short runs print nothing) and never where standard error is not a terminal. What `nn run`,
//! `nn bench` and the Python package show.

use crate::secure::Compiled;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::ops::Range;
use std::time::{Duration, Instant};
use tessera_protocols::{Observer, Progress};

/// How long a phase runs before its bar appears.
pub const BAR_AFTER: Duration = Duration::from_secs(1);
/// How often the bar moves.
const EVERY: Duration = Duration::from_millis(100);

/// An observer drawing the bar for a session running `compiled`.
pub fn bar(compiled: &Compiled) -> Observer {
    let layers: Vec<(Range<usize>, String)> = compiled
        .layers
        .iter()
        .map(|l| (l.ops.clone(), l.name.clone()))
        .collect();
    let mut bar = Bar {
        layers,
        clocks: Clocks::default(),
        bar: None,
    };
    Observer::new(EVERY, move |p| bar.show(p))
}

/// How long each phase has run. A streamed run takes its setup and online phase in turns
/// (`hybrid::Program::run_streamed`), so a phase's time is the sum of its turns: its bar
/// appears once that sum passes [`BAR_AFTER`], shows it as elapsed, and estimates the time
/// left from it.
#[derive(Default)]
struct Clocks {
    /// Each phase seen and the time of its finished turns.
    ran: Vec<(&'static str, Duration)>,
    /// The phase running and when its turn began.
    running: Option<(&'static str, Instant)>,
}

impl Clocks {
    /// `phase`'s time at `now`, and whether its turn begins here (another phase ran before).
    fn at(&mut self, phase: &'static str, now: Instant) -> (Duration, bool) {
        let turn = match self.running {
            Some((running, since)) if running == phase => Some(since),
            Some((running, since)) => {
                *self.ran_mut(running) += now.saturating_duration_since(since);
                None
            }
            None => None,
        };
        let since = turn.unwrap_or(now);
        self.running = Some((phase, since));
        let ran = *self.ran_mut(phase) + now.saturating_duration_since(since);
        (ran, turn.is_none())
    }

    fn ran_mut(&mut self, phase: &'static str) -> &mut Duration {
        let at = match self.ran.iter().position(|(p, _)| *p == phase) {
            Some(at) => at,
            None => {
                self.ran.push((phase, Duration::ZERO));
                self.ran.len() - 1
            }
        };
        &mut self.ran[at].1
    }
}

/// The bar of the phase running, once it has run long enough.
struct Bar {
    /// Each layer's operations in the program, and its name.
    layers: Vec<(Range<usize>, String)>,
    clocks: Clocks,
    bar: Option<ProgressBar>,
}

impl Bar {
    fn show(&mut self, p: Progress) {
        let (ran, turns) = self.clocks.at(p.phase, Instant::now());
        if turns || p.done >= p.total {
            self.clear();
        }
        if p.done >= p.total || (self.bar.is_none() && ran < BAR_AFTER) {
            return;
        }
        let message = self.message(p, ran);
        match &self.bar {
            Some(bar) => {
                bar.set_message(message);
                bar.set_position(p.done);
            }
            None => {
                let style = ProgressStyle::with_template(
                    "{prefix:>6} {bar:30} {bytes}/{total_bytes} [{elapsed} < {msg}",
                );
                let target = ProgressDrawTarget::stderr();
                let bar = ProgressBar::with_draw_target(Some(p.total), target)
                    .with_style(style.unwrap_or_else(|_| ProgressStyle::default_bar()))
                    .with_prefix(p.phase)
                    .with_message(message)
                    .with_elapsed(ran)
                    .with_position(p.done);
                self.bar = Some(bar);
            }
        }
    }

    /// The time left at the phase's mean rate so far (indicatif's own estimate follows the
    /// updates, which come in bursts), and the layer running.
    fn message(&self, p: Progress, ran: Duration) -> String {
        let left = (p.done > 0).then(|| {
            let rate = p.done as f64 / ran.as_secs_f64().max(1e-3);
            (p.total - p.done) as f64 / rate
        });
        let left = left.map_or_else(|| "?".to_owned(), |s| format!("{s:.0}s"));
        let layer =
            p.op.and_then(|op| self.layers.iter().find(|(ops, _)| ops.contains(&op)));
        format!("{left}] {}", layer.map_or("", |(_, name)| name.as_str()))
    }

    fn clear(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_taken_in_turns_counts_all_its_turns() {
        let mut clocks = Clocks::default();
        let t0 = Instant::now();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        assert_eq!(clocks.at("setup", at(0.0)), (Duration::ZERO, true));
        assert_eq!(clocks.at("setup", at(0.6)).0, Duration::from_secs_f64(0.6));
        // The online phase's turn: its own clock, the setup's paused.
        assert_eq!(clocks.at("online", at(0.7)), (Duration::ZERO, true));
        assert_eq!(clocks.at("online", at(0.9)).0, Duration::from_secs_f64(0.2));
        // The setup's second turn goes on from 0.7 s: past BAR_AFTER at 1.0 s.
        assert_eq!(
            clocks.at("setup", at(1.0)),
            (Duration::from_secs_f64(0.7), true)
        );
        let (ran, turns) = clocks.at("setup", at(1.4));
        assert!(ran >= BAR_AFTER && !turns, "{ran:?}");
        // The online turn lasted until the setup was heard of again.
        assert_eq!(clocks.at("online", at(1.5)).0, Duration::from_secs_f64(0.3));
    }
}
