//! Runs that Ctrl-C stops: the work runs on its own thread while this one waits without the
//! GIL and looks for Python's signals every 50 ms; on one (KeyboardInterrupt), the run's
//! networks are stopped ([`Stopper`]), so the parties abort at their next wait and tell their
//! peers ("its user stopped the run"), and the signal's exception is raised once the run has
//! wound down.

use crate::errors;
use pyo3::prelude::*;
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tessera_net::Stopper;

/// The stoppers of a run's networks, filled in as they are made (a network made on the
/// worker's thread adds its own).
#[derive(Clone, Default)]
pub struct Stoppers(Arc<Mutex<Vec<Stopper>>>);

impl Stoppers {
    /// Stoppers known from the start.
    pub fn of(stoppers: Vec<Stopper>) -> Self {
        Stoppers(Arc::new(Mutex::new(stoppers)))
    }

    /// Adds a network's stopper.
    pub fn add(&self, stopper: Stopper) {
        if let Ok(mut list) = self.0.lock() {
            list.push(stopper);
        }
    }

    /// Stops every network added so far.
    pub fn stop_all(&self) {
        if let Ok(list) = self.0.lock() {
            list.iter().for_each(Stopper::stop);
        }
    }
}

/// Runs `work` on its own thread, stopping `stoppers` on a signal; `work`'s result, or the
/// signal's exception.
pub fn interruptible<T: Send>(
    py: Python<'_>,
    stoppers: &Stoppers,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let (tx, rx) = channel();
    // Waited on without the GIL, from this thread only: the lock is never contended.
    let rx = Mutex::new(rx);
    let wait = |timeout: Option<Duration>| match rx.lock() {
        Ok(rx) => match timeout {
            Some(t) => rx.recv_timeout(t),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        },
        Err(_) => Err(RecvTimeoutError::Disconnected),
    };
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let _ = tx.send(work());
        });
        loop {
            match py.detach(|| wait(Some(Duration::from_millis(50)))) {
                Ok(out) => return Ok(out),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(errors::ProtocolError::new_err("the run's thread stopped"));
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            if let Err(signal) = py.check_signals() {
                stoppers.stop_all();
                let _ = py.detach(|| wait(None));
                return Err(signal);
            }
        }
    })
}
