//! Progress of a long run, as a Python user expects it: a callback of theirs, or the command
//! line's bar on the terminal (standard error; [`tessera_nn::progress`]), or nothing. The
//! protocols report a phase's bytes against the cost model's estimate
//! ([`tessera_protocols::Progress`]).

use crate::errors::invalid;
use crate::interrupt::Stoppers;
use pyo3::prelude::*;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tessera_nn::secure::Compiled;
use tessera_protocols::Observer;

/// How often a callback hears of a running phase.
const EVERY: Duration = Duration::from_millis(100);

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

    /// The observer for a session running `compiled`; a callback's first exception is kept
    /// in `raised` and stops the run (`stoppers`), to be raised after it.
    pub fn observer(
        self,
        compiled: &Compiled,
        stoppers: &Stoppers,
        raised: &Raised,
    ) -> Option<Observer> {
        match self {
            Watch::Quiet => None,
            Watch::Bar => Some(tessera_nn::progress::bar(compiled)),
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
        }
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
