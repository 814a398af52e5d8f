//! Yao with several threads per party (UltraSFE, Buescher and Katzenbeisser, USENIX Security 2015, §4): what
//! each party compiles and how its threads garble or evaluate it.
//!
//! - [`Strategy::Fgp`]: one plan, each wide batch shared among the garbler's threads
//!   ([`Garbler::with_threads`]); the tables are the same whatever the thread count, one
//!   message per batch. An evaluator on one thread evaluates each batch as it arrives.
//! - [`Strategy::Cgp`]: the partitions the compiler finds ([`Partitions`]) garbled by
//!   separate threads, each in its own tweak domain, then the tail with every thread
//!   fine-grained; the garbler sends partition after partition, the tail last, in pieces of
//!   at most [`PIECE`] blocks, each partition as soon as it and those before it are garbled
//!   ([`CgpGarbler::garble_streaming`]).
//!
//! Under CGP the evaluator hands each partition to a thread as soon as its stream is complete
//! ([`CgpStreamEvaluator`]), and evaluates the tail once every partition is done. Under FGP
//! an evaluator on more than one thread first takes every table message, then evaluates on
//! its threads: it holds the whole garbled circuit (two blocks per AND gate for half-gates),
//! where the evaluator on one thread holds one batch. Neither party's thread count changes a
//! message, so each party picks its own; both must name the same strategy (the hello's
//! fingerprint covers it).

use crate::Error;
use crate::yao::{EvaluateBody, GarbleBody};
use std::sync::Arc;
use tessera_circuit::Circuit;
use tessera_core::Block;
use tessera_garble::{
    CgpGarbler, CgpStreamEvaluator, CgpStreaming, Evaluation, Evaluator, Garbler, InputEncoding,
    Partitions, Plan, Scheme, TableBuffer, TableReader, TableSink, XorGates, batch_tables,
    table_blocks,
};

/// Table blocks per message of a CGP partition's stream (1 MiB).
pub const PIECE: usize = 1 << 16;

/// How a party spreads garbling and evaluation over its threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Fine-grained: the gates of each wide batch shared among the threads.
    Fgp,
    /// Coarse-grained: independent partitions of the circuit on separate threads, then the
    /// tail fine-grained.
    Cgp,
}

impl Strategy {
    /// The strategy's name.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Fgp => "fgp",
            Strategy::Cgp => "cgp",
        }
    }

    /// The faster strategy for `circuit` (valid): cgp when the independent partitions
    /// [`Partitions::new`] finds hold at least [`Strategy::CGP_SHARE`] of its AND gates
    /// (UltraSFE §4.2: MVMul's rows, BioMatch's subtrees), fgp otherwise (AES, whose gates
    /// depend on each other). It depends on the circuit alone, so both parties pick the same
    /// whatever threads each runs; on one thread the two run at the same speed.
    pub fn for_circuit(circuit: &Circuit) -> Strategy {
        if Partitions::independent_share(circuit) >= Strategy::CGP_SHARE {
            Strategy::Cgp
        } else {
            Strategy::Fgp
        }
    }

    /// The share of AND gates in independent partitions from which [`Strategy::for_circuit`]
    /// picks cgp.
    pub const CGP_SHARE: f64 = 0.5;
}

/// A party's strategy and thread count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parallel {
    /// Both parties name the same.
    pub strategy: Strategy,
    /// This party's threads (at least one; each party picks its own).
    pub threads: usize,
}

impl Default for Parallel {
    /// One thread, fine-grained: garbled and evaluated batch by batch as the tables flow.
    fn default() -> Self {
        Parallel {
            strategy: Strategy::Fgp,
            threads: 1,
        }
    }
}

/// What both parties compile from the circuit for their strategy.
pub(crate) enum Compiled {
    Plan(Box<Plan>),
    /// Shared with the evaluator's threads.
    Parts(Arc<Partitions>),
}

impl Compiled {
    /// Compiles `circuit` (valid) for `parallel` (partitions on its threads) and a scheme
    /// with `xor` gates.
    pub(crate) fn new(circuit: &Circuit, parallel: Parallel, xor: XorGates) -> Result<Self, Error> {
        let compile = |c: &Circuit| Plan::default_for(c, xor);
        Ok(match parallel.strategy {
            Strategy::Fgp => Compiled::Plan(Box::new(compile(circuit))),
            Strategy::Cgp => Compiled::Parts(Arc::new(Partitions::new(
                circuit,
                parallel.threads,
                compile,
            )?)),
        })
    }

    /// The CGP garbler's table messages: each partition's stream in pieces, in index order.
    fn messages_of<S: Scheme>(parts: &Partitions) -> Messages {
        Messages::new(
            parts
                .plans()
                .enumerate()
                .flat_map(|(k, plan)| pieces(table_blocks::<S>(plan)).map(move |n| (k, n))),
        )
    }
}

/// The table messages an evaluator expects, in order: each one's stream and blocks, and how
/// many have come.
#[derive(Default)]
struct Messages {
    expected: Vec<(usize, usize)>,
    at: usize,
}

impl Messages {
    fn new(expected: impl Iterator<Item = (usize, usize)>) -> Self {
        Messages {
            expected: expected.collect(),
            at: 0,
        }
    }

    /// The next message's stream and blocks, or `None` after the last.
    fn next(&self) -> Option<(usize, usize)> {
        self.expected.get(self.at).copied()
    }

    /// Takes message `table`: an error if none is expected or it has another size.
    fn take(&mut self, table: &[Block]) -> Result<(), Error> {
        let (_, n) = self
            .next()
            .ok_or_else(|| Error::Input("tables after the last message".into()))?;
        if table.len() != n {
            return Err(tessera_garble::Error::Truncated {
                needed: n,
                available: table.len(),
            }
            .into());
        }
        self.at += 1;
        Ok(())
    }
}

/// A stream of `total` blocks in messages of at most [`PIECE`].
fn pieces(total: usize) -> impl Iterator<Item = usize> {
    (0..total.div_ceil(PIECE)).map(move |i| (total - i * PIECE).min(PIECE))
}

fn other_strategy() -> Error {
    Error::Input("an engine built for another strategy".into())
}

/// The garbler's engine for its strategy.
pub(crate) enum GarbleEngine<S: Scheme> {
    Fine(Garbler<S>),
    /// With the partitions' table streams, kept from one execution to the next.
    Coarse(CgpGarbler<S>, Vec<TableBuffer>),
}

impl<S: Scheme> GarbleEngine<S> {
    pub(crate) fn new(scheme: S, parallel: Parallel) -> Self {
        match parallel.strategy {
            Strategy::Fgp => GarbleEngine::Fine(Garbler::with_threads(scheme, parallel.threads)),
            Strategy::Cgp => {
                GarbleEngine::Coarse(CgpGarbler::new(scheme, parallel.threads), Vec::new())
            }
        }
    }
}

/// The garbler's body: its engine over what both parties compiled.
pub(crate) struct Garbling<'a, S: Scheme> {
    pub engine: &'a mut GarbleEngine<S>,
    pub compiled: &'a Compiled,
}

impl<S: Scheme> GarbleBody<S> for Garbling<'_, S> {
    fn garble(
        &mut self,
        enc: &InputEncoding<S>,
        sink: &mut impl TableSink,
    ) -> Result<Vec<S::Wire>, Error> {
        match (&mut *self.engine, self.compiled) {
            (GarbleEngine::Fine(g), Compiled::Plan(plan)) => {
                Ok(g.garble(plan, &enc.secret, &enc.wires, sink)?.to_vec())
            }
            (GarbleEngine::Coarse(g, streams), Compiled::Parts(parts)) => {
                streams.resize_with(parts.len(), TableBuffer::new);
                let send = |tables: &[Block]| tables.chunks(PIECE).try_for_each(|t| sink.put(t));
                let run = (&enc.secret, &enc.wires[..]);
                Ok(g.garble_streaming(parts, run, streams, send)?.to_vec())
            }
            _ => Err(other_strategy()),
        }
    }
}

/// The evaluator's engine for its strategy and thread count.
pub(crate) enum EvaluateEngine<S: Scheme> {
    /// FGP on one thread: each batch evaluated as its tables arrive.
    Flowing(Evaluator<S>),
    /// FGP on several threads, once every table is in.
    Fine(Evaluator<S>),
    /// CGP: each partition as its stream completes.
    Coarse(CgpStreamEvaluator<S>),
}

impl<S: Scheme> EvaluateEngine<S> {
    pub(crate) fn new(scheme: S, parallel: Parallel) -> Self {
        match parallel.strategy {
            Strategy::Fgp if parallel.threads <= 1 => {
                EvaluateEngine::Flowing(Evaluator::new(scheme))
            }
            Strategy::Fgp => {
                EvaluateEngine::Fine(Evaluator::with_threads(scheme, parallel.threads))
            }
            Strategy::Cgp => {
                EvaluateEngine::Coarse(CgpStreamEvaluator::new(scheme, parallel.threads))
            }
        }
    }
}

/// The evaluator's body: batch by batch as the tables arrive (one thread, FGP), every table
/// first and then the threads (FGP), or partition by partition as their streams complete
/// (CGP).
pub(crate) enum Evaluating<'a, S: Scheme> {
    Flowing(PlanEvaluation<'a, S>),
    Collected(Collected<'a, S>),
    Streaming(PartsEvaluation<'a, S>),
    /// An engine built for another strategy than the compiled circuit's: every step fails.
    Mismatched,
}

impl<'a, S: Scheme> Evaluating<'a, S> {
    /// The body for `engine` over `compiled`; `tables` keeps the collected tables (FGP on
    /// several threads) from one execution to the next.
    pub(crate) fn new(
        engine: &'a mut EvaluateEngine<S>,
        compiled: &'a Compiled,
        tables: &'a mut TableBuffer,
    ) -> Self {
        match (engine, compiled) {
            (EvaluateEngine::Flowing(evaluator), Compiled::Plan(plan)) => {
                Evaluating::Flowing(PlanEvaluation {
                    evaluator,
                    plan,
                    evaluation: None,
                })
            }
            (EvaluateEngine::Coarse(engine), Compiled::Parts(parts)) => {
                Evaluating::Streaming(PartsEvaluation {
                    state: PartsState::Ready(engine),
                    parts,
                    messages: Messages::default(),
                    next_part: 0,
                    stream: TableBuffer::new(),
                })
            }
            (EvaluateEngine::Fine(evaluator), Compiled::Plan(plan)) => {
                Evaluating::Collected(Collected {
                    evaluator,
                    plan,
                    tables,
                    messages: Messages::default(),
                    labels: Vec::new(),
                })
            }
            _ => Evaluating::Mismatched,
        }
    }
}

impl<S: Scheme> EvaluateBody for Evaluating<'_, S> {
    fn start(&mut self, labels: &[Block]) -> Result<(), Error> {
        match self {
            Evaluating::Flowing(e) => e.start(labels),
            Evaluating::Collected(e) => e.start(labels),
            Evaluating::Streaming(e) => e.start(labels),
            Evaluating::Mismatched => Err(other_strategy()),
        }
    }
    fn next_tables(&mut self) -> Result<Option<usize>, Error> {
        match self {
            Evaluating::Flowing(e) => e.next_tables(),
            Evaluating::Collected(e) => Ok(e.messages.next().map(|(_, n)| n)),
            Evaluating::Streaming(e) => Ok(e.messages.next().map(|(_, n)| n)),
            Evaluating::Mismatched => Err(other_strategy()),
        }
    }
    fn feed(&mut self, table: &[Block]) -> Result<(), Error> {
        match self {
            Evaluating::Flowing(e) => e.feed(table),
            Evaluating::Collected(e) => e.feed(table),
            Evaluating::Streaming(e) => e.feed(table),
            Evaluating::Mismatched => Err(other_strategy()),
        }
    }
    fn outputs(&mut self) -> Result<Vec<Block>, Error> {
        match self {
            Evaluating::Flowing(e) => e.outputs(),
            Evaluating::Collected(e) => e.outputs(),
            Evaluating::Streaming(e) => e.outputs(),
            Evaluating::Mismatched => Err(other_strategy()),
        }
    }
}

/// A compiled plan's evaluation batch by batch.
pub(crate) struct PlanEvaluation<'a, S: Scheme> {
    evaluator: &'a mut Evaluator<S>,
    plan: &'a Plan,
    evaluation: Option<Evaluation<'a>>,
}

impl<'a, S: Scheme> PlanEvaluation<'a, S> {
    fn running(&mut self) -> Result<(&mut Evaluator<S>, &mut Evaluation<'a>), Error> {
        let ev = self
            .evaluation
            .as_mut()
            .ok_or_else(|| Error::Input("evaluating before the labels".into()))?;
        Ok((self.evaluator, ev))
    }

    fn start(&mut self, labels: &[Block]) -> Result<(), Error> {
        self.evaluation = Some(self.evaluator.start(self.plan, labels)?);
        Ok(())
    }
    fn next_tables(&mut self) -> Result<Option<usize>, Error> {
        let (evaluator, ev) = self.running()?;
        Ok(evaluator.next_tables(ev))
    }
    fn feed(&mut self, table: &[Block]) -> Result<(), Error> {
        let (evaluator, ev) = self.running()?;
        Ok(evaluator.feed(ev, table)?)
    }
    fn outputs(&mut self) -> Result<Vec<Block>, Error> {
        let (evaluator, ev) = self.running()?;
        Ok(evaluator.outputs(ev).to_vec())
    }
}

/// Every table message of a plan kept, then evaluated on the evaluator's threads.
pub(crate) struct Collected<'a, S: Scheme> {
    evaluator: &'a mut Evaluator<S>,
    plan: &'a Plan,
    tables: &'a mut TableBuffer,
    messages: Messages,
    labels: Vec<Block>,
}

impl<S: Scheme> Collected<'_, S> {
    fn start(&mut self, labels: &[Block]) -> Result<(), Error> {
        self.labels = labels.to_vec();
        self.messages = Messages::new(batch_tables::<S>(self.plan).map(|n| (0, n)));
        self.tables.clear();
        Ok(())
    }

    fn feed(&mut self, table: &[Block]) -> Result<(), Error> {
        self.messages.take(table)?;
        self.tables.put(table)?;
        Ok(())
    }

    fn outputs(&mut self) -> Result<Vec<Block>, Error> {
        let mut source = TableReader::new(self.tables.as_slice());
        let outputs = self
            .evaluator
            .evaluate(self.plan, &self.labels, &mut source)?;
        Ok(outputs.to_vec())
    }
}

/// Where a CGP evaluation stands.
enum PartsState<'a, S: Scheme> {
    /// Before the labels.
    Ready(&'a mut CgpStreamEvaluator<S>),
    Running(CgpStreaming<'a, S>),
    /// Finished, or given up on an error.
    Over,
}

/// Partitions evaluated on threads as their streams complete, the tail once all are done.
pub(crate) struct PartsEvaluation<'a, S: Scheme> {
    state: PartsState<'a, S>,
    parts: &'a Arc<Partitions>,
    messages: Messages,
    /// The first partition not yet handed to the threads.
    next_part: usize,
    /// The stream being received.
    stream: TableBuffer,
}

impl<'a, S: Scheme> PartsEvaluation<'a, S> {
    fn start(&mut self, labels: &[Block]) -> Result<(), Error> {
        let PartsState::Ready(engine) = std::mem::replace(&mut self.state, PartsState::Over) else {
            return Err(Error::Input("an evaluation started twice".into()));
        };
        self.state = PartsState::Running(engine.start(self.parts, labels)?);
        self.messages = Compiled::messages_of::<S>(self.parts);
        self.hand_complete()
    }

    fn feed(&mut self, table: &[Block]) -> Result<(), Error> {
        self.messages.take(table)?;
        self.stream.put(table)?;
        self.hand_complete()
    }

    /// Hands every partition whose stream is complete (every stream before the next
    /// message's; streams of no message are empty) to the threads; the tail stays.
    fn hand_complete(&mut self) -> Result<(), Error> {
        let tail = self.parts.len() - 1;
        let upto = self.messages.next().map_or(tail, |(s, _)| s.min(tail));
        let PartsState::Running(run) = &mut self.state else {
            return Err(Error::Input("evaluating before the labels".into()));
        };
        while self.next_part < upto {
            // The stream received last is partition k's if its messages came; it is empty
            // otherwise.
            let tables = std::mem::replace(&mut self.stream, run.buffer());
            run.evaluate(self.next_part, tables)?;
            self.next_part += 1;
        }
        Ok(())
    }

    fn outputs(&mut self) -> Result<Vec<Block>, Error> {
        let PartsState::Running(run) = std::mem::replace(&mut self.state, PartsState::Over) else {
            return Err(Error::Input("outputs before the labels".into()));
        };
        Ok(run.finish(self.stream.as_slice())?.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_circuit::library::{builtin, ultrasfe};
    use tessera_garble::{Prf, Prp};

    #[test]
    fn streams_are_cut_into_pieces_of_at_most_a_piece() {
        assert_eq!(pieces(0).count(), 0);
        assert_eq!(pieces(PIECE).collect::<Vec<_>>(), [PIECE]);
        assert_eq!(pieces(2 * PIECE + 5).collect::<Vec<_>>(), [PIECE, PIECE, 5]);
    }

    /// A collecting evaluator takes the messages it expects, in order and of their size, and
    /// refuses a message of another size or one after the last.
    #[test]
    fn messages_are_taken_in_order_and_size() {
        let mut m = Messages::new([(0, 3), (2, 1)].into_iter());
        assert_eq!(m.next(), Some((0, 3)));
        let err = m.take(&[Block::ZERO; 2]).unwrap_err().to_string();
        assert!(err.contains('3') && err.contains('2'), "{err}");
        assert_eq!(m.next(), Some((0, 3)), "a refused message is not taken");
        m.take(&[Block::ZERO; 3]).unwrap();
        assert_eq!(m.next(), Some((2, 1)));
        m.take(&[Block::ZERO]).unwrap();
        assert_eq!(m.next(), None);
        let err = m.take(&[Block::ZERO]).unwrap_err().to_string();
        assert!(err.contains("after the last message"), "{err}");
    }

    /// Without a flag, the strategy follows the circuit: cgp for the built-in MVMul and
    /// BioMatch (independent rows and subtrees), fgp for AES-128 and SHA-256.
    #[test]
    fn the_strategy_follows_the_circuits_independence() {
        for (name, want) in [
            ("mvmul", Strategy::Cgp),
            ("biomatch", Strategy::Cgp),
            ("aes128", Strategy::Fgp),
            ("sha256", Strategy::Fgp),
        ] {
            let c = tessera_circuit::library::builtin(name).unwrap().unwrap();
            assert_eq!(Strategy::for_circuit(&c), want, "{name}");
        }
    }

    /// What the protocol tests lean on: the small MVMul has several partitions, and
    /// SHA-256 garbled with the PRF scheme a tail of several pieces.
    #[test]
    fn the_test_circuits_have_partitions_and_pieces() {
        let mvmul = ultrasfe::mvmul(4, 4, 16).unwrap();
        let cgp = Parallel {
            strategy: Strategy::Cgp,
            threads: 2,
        };
        let partitions = |c: &Circuit, xor| match Compiled::new(c, cgp, xor).unwrap() {
            Compiled::Parts(parts) => parts,
            Compiled::Plan(_) => panic!("CGP compiled a plan"),
        };
        let parts = partitions(&mvmul, XorGates::Free);
        assert!(parts.len() > 2, "{}", parts.len());
        let messages = Compiled::messages_of::<Prp>(&parts).expected;
        let streams: std::collections::BTreeSet<_> = messages.iter().map(|m| m.0).collect();
        assert!(streams.len() > 2, "{messages:?}");
        let sha = partitions(&builtin("sha256").unwrap().unwrap(), XorGates::Garbled);
        let tail = sha.len() - 1;
        let messages = Compiled::messages_of::<Prf>(&sha).expected;
        let pieces = messages.iter().filter(|m| m.0 == tail).count();
        assert!(pieces > 1, "{messages:?}");
    }
}
