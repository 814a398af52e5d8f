//! Progress of a long run, as a Python user expects it: a callback of theirs, or a bar on the
//! terminal (standard error) once a phase has run for a second, or nothing. The protocols
//! report a phase's bytes against the cost model's estimate ([`tessera_protocols::Progress`]).

use crate::errors::invalid;
use crate::interrupt::Stoppers;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pyo3::prelude::*;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tessera_protocols::{Observer, Progress};

/// How often a callback or bar hears of a running phase.
const EVERY: Duration = Duration::from_millis(100);
/// How long a phase runs before its bar appears.
const BAR_AFTER: Duration = Duration::from_secs(1);

/// What a run's `progress` argument asks for.
pub enum Watch {
    Quiet,
    Bar,
    Call(Py<PyAny>),
}

impl Watch {
    /// `None`: a bar when standard error is a terminal; `False`: nothing; `True`: a bar; a
    /// callable: `progress(phase, done, total)` with the phase ("setup" or "online") and its
    /// bytes so far and in all (estimated).
    pub fn of(progress: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        match progress {
            None => Ok(if std::io::stderr().is_terminal() {
                Watch::Bar
            } else {
                Watch::Quiet
            }),
            Some(p) if p.is_callable() => Ok(Watch::Call(p.clone().unbind())),
            Some(p) => match p.extract::<bool>() {
                Ok(true) => Ok(Watch::Bar),
                Ok(false) => Ok(Watch::Quiet),
                Err(_) => Err(invalid(
                    "progress: None, True, False or a callable (phase, done, total)",
                )),
            },
        }
    }

    /// The observer for a session, and where a callback's exception is kept: the first one
    /// stops the run (`stoppers`) and is raised after it.
    pub fn observer(self, stoppers: &Stoppers) -> (Option<Observer>, Raised) {
        let raised = Raised::default();
        let observer = match self {
            Watch::Quiet => None,
            Watch::Bar => {
                let mut bar = Bar::default();
                Some(Observer::new(EVERY, move |p| bar.show(p)))
            }
            Watch::Call(callback) => {
                let (raised, stoppers) = (raised.clone(), stoppers.clone());
                Some(Observer::new(EVERY, move |p| {
                    let r = Python::attach(|py| callback.call1(py, (p.phase, p.done, p.total)));
                    if let Err(e) = r {
                        raised.keep(e);
                        stoppers.stop_all();
                    }
                }))
            }
        };
        (observer, raised)
    }
}

/// The first exception a progress callback raised.
#[derive(Clone, Default)]
pub struct Raised(Arc<Mutex<Option<PyErr>>>);

impl Raised {
    fn keep(&self, e: PyErr) {
        if let Ok(mut slot) = self.0.lock() {
            slot.get_or_insert(e);
        }
    }

    /// The callback's exception, if it raised one (then the run stopped because of it).
    pub fn take(&self) -> Option<PyErr> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }
}

/// A bar on standard error for the phase running, shown once it has run for [`BAR_AFTER`].
#[derive(Default)]
struct Bar {
    phase: Option<(&'static str, Instant)>,
    bar: Option<ProgressBar>,
}

impl Bar {
    fn show(&mut self, p: Progress) {
        let started = match self.phase {
            Some((phase, started)) if phase == p.phase => started,
            _ => {
                self.clear();
                self.phase = Some((p.phase, Instant::now()));
                Instant::now()
            }
        };
        if p.done >= p.total {
            self.clear();
            return;
        }
        if self.bar.is_none() && started.elapsed() >= BAR_AFTER {
            let bar = ProgressBar::with_draw_target(Some(p.total), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "{msg:>6} {bar:40} {bytes}/{total_bytes} [{elapsed} < {eta}]",
            );
            bar.set_style(style.unwrap_or_else(|_| ProgressStyle::default_bar()));
            bar.set_message(p.phase);
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(p.done);
        }
    }

    fn clear(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
