//! An in-memory duplex byte pipe, for two parties in one process (tests, `tessera demo`).
//! Writes never block (the pipe grows); reads wait up to the timeout.

use crate::{DEFAULT_TIMEOUT, Framed};
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

#[derive(Default)]
struct PipeState {
    data: VecDeque<u8>,
    /// The writing end was dropped: reads return end-of-file once `data` is drained.
    writer_gone: bool,
    /// The reading end was dropped: writes fail.
    reader_gone: bool,
}

/// One direction of the duplex pipe.
#[derive(Default)]
struct Pipe {
    state: Mutex<PipeState>,
    ready: Condvar,
}

impl Pipe {
    fn lock(&self) -> MutexGuard<'_, PipeState> {
        // A panic while holding the lock leaves plain bytes behind; they stay usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One end of an in-memory duplex byte stream.
pub struct MemoryStream {
    incoming: Arc<Pipe>,
    outgoing: Arc<Pipe>,
    timeout: Duration,
}

impl std::fmt::Debug for MemoryStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStream")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Two connected channel ends over memory whose reads time out after `timeout` (or
/// [`DEFAULT_TIMEOUT`] when `None`).
pub fn memory_pair(timeout: Option<Duration>) -> (Framed<MemoryStream>, Framed<MemoryStream>) {
    let timeout = timeout.unwrap_or(DEFAULT_TIMEOUT);
    let (a, b) = (Arc::new(Pipe::default()), Arc::new(Pipe::default()));
    let end = |incoming: &Arc<Pipe>, outgoing: &Arc<Pipe>| MemoryStream {
        incoming: incoming.clone(),
        outgoing: outgoing.clone(),
        timeout,
    };
    (
        Framed::new(end(&a, &b), timeout),
        Framed::new(end(&b, &a), timeout),
    )
}

impl Read for MemoryStream {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        let deadline = Instant::now() + self.timeout;
        let mut state = self.incoming.lock();
        while state.data.is_empty() {
            if state.writer_gone {
                return Ok(0);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::ErrorKind::TimedOut.into());
            }
            state = self
                .incoming
                .ready
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        let (front, back) = state.data.as_slices();
        let n = front.len().min(out.len());
        out[..n].copy_from_slice(&front[..n]);
        let m = back.len().min(out.len() - n);
        out[n..n + m].copy_from_slice(&back[..m]);
        state.data.drain(..n + m);
        Ok(n + m)
    }
}

impl Write for MemoryStream {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut state = self.outgoing.lock();
        if state.reader_gone {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        state.data.extend(bytes);
        drop(state);
        self.outgoing.ready.notify_one();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for MemoryStream {
    fn drop(&mut self) {
        self.outgoing.lock().writer_gone = true;
        self.outgoing.ready.notify_one();
        self.incoming.lock().reader_gone = true;
    }
}
