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
        phase: None,
        bar: None,
    };
    Observer::new(EVERY, move |p| bar.show(p))
}

/// The bar of the phase running, once it has run long enough.
struct Bar {
    /// Each layer's operations in the program, and its name.
    layers: Vec<(Range<usize>, String)>,
    phase: Option<(&'static str, Instant)>,
    bar: Option<ProgressBar>,
}

impl Bar {
    fn show(&mut self, p: Progress) {
        let started = match self.phase {
            Some((phase, started)) if phase == p.phase => started,
            _ => {
                self.clear();
                let now = Instant::now();
                self.phase = Some((p.phase, now));
                now
            }
        };
        if p.done >= p.total {
            self.clear();
            return;
        }
        if self.bar.is_none() && started.elapsed() < BAR_AFTER {
            return;
        }
        let message = self.message(p, started);
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
                    .with_elapsed(started.elapsed())
                    .with_position(p.done);
                self.bar = Some(bar);
            }
        }
    }

    /// The time left at the phase's mean rate so far (indicatif's own estimate follows the
    /// updates, which come in bursts), and the layer running.
    fn message(&self, p: Progress, started: Instant) -> String {
        let left = (p.done > 0).then(|| {
            let rate = p.done as f64 / started.elapsed().as_secs_f64().max(1e-3);
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
