//! Evaluating [`Partitions`] as their table streams arrive (UltraSFE §4.2, CGP, between two
//! parties): each partition goes to a thread as soon as its stream is complete, so the
//! evaluator works while the garbler still garbles and sends later partitions, instead of
//! waiting for the whole garbled circuit. The tail, which reads the partitions' outputs, runs
//! last on every thread, fine-grained.
//!
//! The threads live for one evaluation and own what they use (the partitions through an
//! [`Arc`], one [`Evaluator`] each); tables go to them and come back in owned buffers, which
//! the caller can fill again with later streams.

use crate::cgp::{Partitions, check, gather, run_tail};
use crate::{Error, Evaluator, Plan, Scheme, StreamError, TableBuffer, TableReader};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use tessera_core::Block;

/// A partition's tables handed to the threads.
type Job = (usize, TableBuffer);

/// What a thread hands back: the partition, its output labels and its table buffer.
type Done = Result<(usize, Vec<Block>, TableBuffer), Error>;

/// Evaluates [`Partitions`] garbled with scheme `S` on several threads as their streams
/// arrive ([`CgpStreamEvaluator::start`]).
pub struct CgpStreamEvaluator<S: Scheme> {
    scheme: S,
    threads: usize,
    tail: Evaluator<S>,
    outs: Vec<Vec<Block>>,
    outputs: Vec<Block>,
}

impl<S: Scheme> CgpStreamEvaluator<S> {
    /// An evaluator on `threads` threads (at least one).
    pub fn new(scheme: S, threads: usize) -> Self {
        let threads = threads.max(1);
        CgpStreamEvaluator {
            tail: Evaluator::with_threads(scheme.clone(), threads),
            scheme,
            threads,
            outs: Vec::new(),
            outputs: Vec::new(),
        }
    }

    /// Starts evaluating `parts` on the active input labels `inputs`: starts the threads,
    /// which then wait for the partitions' tables.
    pub fn start(
        &mut self,
        parts: &Arc<Partitions>,
        inputs: &[Block],
    ) -> Result<CgpStreaming<'_, S>, Error> {
        check(parts, inputs.len())?;
        let inputs: Arc<[Block]> = inputs.into();
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let (report, done) = mpsc::channel::<Done>();
        let threads = self.threads.min(parts.len() - 1).max(1);
        for _ in 0..threads {
            let (queue, report) = (Arc::clone(&queue), report.clone());
            let (parts, inputs) = (Arc::clone(parts), Arc::clone(&inputs));
            let mut evaluator = Evaluator::new(self.scheme.clone());
            let mut labels = Vec::new();
            let thread = std::thread::Builder::new().name("cgp-evaluate".into());
            let started = thread.spawn(move || {
                loop {
                    // One thread at a time waits for the next job, holding the lock; a closed
                    // queue ends the thread.
                    let job = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
                    let Ok((k, tables)) = job else { break };
                    let (plan, sources) = parts.part(k);
                    gather(sources, &inputs, &[], &mut labels);
                    let mut source = TableReader::new(tables.as_slice());
                    let result = evaluator
                        .evaluate_in(plan, k as u64, &labels, &mut source)
                        .map(|out| (k, out.to_vec(), tables));
                    // A closed report channel means the evaluation was given up.
                    if report.send(result).is_err() {
                        break;
                    }
                }
            });
            started.map_err(|e| {
                Error::Stream(StreamError::text(format!("no evaluating thread: {e}")))
            })?;
        }
        self.outs.clear();
        self.outs.resize_with(parts.len(), Vec::new);
        Ok(CgpStreaming {
            parts: Arc::clone(parts),
            inputs,
            jobs: Some(jobs),
            done,
            handed: vec![false; parts.len() - 1],
            pending: 0,
            spare: Vec::new(),
            engine: self,
        })
    }
}

/// One evaluation under way ([`CgpStreamEvaluator::start`]). Dropped before
/// [`CgpStreaming::finish`], it lets its threads go once they finish the partition at hand.
pub struct CgpStreaming<'e, S: Scheme> {
    engine: &'e mut CgpStreamEvaluator<S>,
    parts: Arc<Partitions>,
    inputs: Arc<[Block]>,
    jobs: Option<mpsc::Sender<Job>>,
    done: mpsc::Receiver<Done>,
    /// Partitions handed to the threads.
    handed: Vec<bool>,
    /// Partitions handed out and not back yet.
    pending: usize,
    /// Table buffers the threads are done with.
    spare: Vec<TableBuffer>,
}

impl<'e, S: Scheme> CgpStreaming<'e, S> {
    /// Hands partition `k` (not the tail) with its whole stream of tables to the threads.
    pub fn evaluate(&mut self, k: usize, tables: TableBuffer) -> Result<(), Error> {
        match self.handed.get_mut(k) {
            Some(handed) if !*handed => *handed = true,
            _ => {
                return Err(Error::Inputs(format!(
                    "partition {k} handed again, or not one of the {}",
                    self.handed.len()
                )));
            }
        }
        let jobs = self.jobs.as_ref().ok_or_else(stopped)?;
        jobs.send((k, tables)).map_err(|_| stopped())?;
        self.pending += 1;
        while let Ok(done) = self.done.try_recv() {
            self.take(done)?;
        }
        Ok(())
    }

    /// An empty table buffer for the next stream: one the threads are done with if any.
    pub fn buffer(&mut self) -> TableBuffer {
        let mut b = self.spare.pop().unwrap_or_default();
        b.clear();
        b
    }

    /// Waits for every partition, then evaluates the tail with its `tables`; returns the
    /// active output labels.
    pub fn finish(mut self, tables: &[Block]) -> Result<&'e [Block], Error> {
        if let Some(k) = self.handed.iter().position(|&h| !h) {
            return Err(Error::Inputs(format!("partition {k} got no tables")));
        }
        // The threads end once the queue is empty.
        self.jobs = None;
        while self.pending > 0 {
            let done = self.done.recv().map_err(|_| stopped())?;
            self.take(done)?;
        }
        let CgpStreaming {
            engine,
            parts,
            inputs,
            ..
        } = self;
        let last = parts.len() - 1;
        let CgpStreamEvaluator {
            tail,
            outs,
            outputs,
            ..
        } = engine;
        let run = |plan: &Plan, labels: &[Block], out: &mut Vec<Block>| {
            let mut source = TableReader::new(tables);
            let o = tail.evaluate_in(plan, last as u64, labels, &mut source)?;
            out.clear();
            out.extend_from_slice(o);
            Ok(())
        };
        run_tail(&parts, &inputs, outs, (&mut Vec::new(), outputs), run)?;
        Ok(outputs)
    }

    /// Keeps a partition's outputs and its buffer.
    fn take(&mut self, done: Done) -> Result<(), Error> {
        let (k, out, tables) = done?;
        self.engine.outs[k] = out;
        self.spare.push(tables);
        self.pending -= 1;
        Ok(())
    }
}

fn stopped() -> Error {
    Error::Stream(StreamError::text("an evaluating thread stopped"))
}
