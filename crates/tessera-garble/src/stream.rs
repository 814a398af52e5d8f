//! Streamed circuits: a circuit too large to hold as one gate list, run as a [`Chain`], one
//! step circuit compiled once and run over and over with its state carried from step to step
//! (SHA-256 over a long message: one compression function per 64-byte block, the chaining
//! value carried, FIPS 180-4 §6.2). Memory is one step's slots and one batch's tables,
//! whatever the number of steps.
//!
//! The garbler ([`ChainGarbler`]) writes one stream of blocks: the active labels of the initial
//! state, then for each step the active labels of its fresh input and its tables. Every input
//! is the garbler's (its message); the evaluator ([`ChainEvaluator`]) takes the stream in
//! pieces of any size, as they arrive. Step k is garbled in tweak domain k
//! ([`Garbler::garble_in`]), so no two gates of the stream share a tweak under the one secret
//! the carried labels need.

use crate::engine::DOMAINS;
use crate::{Error, Evaluation, Evaluator, Garbler, InputEncoding, Plan, Scheme, TableSink};
use tessera_circuit::Circuit;
use tessera_core::{Block, Prg};

/// A step circuit whose inputs are a fresh value then the state, and whose output is the new
/// state, compiled once for all its runs.
#[derive(Clone, Debug)]
pub struct Chain {
    plan: Plan,
    fresh: usize,
    state: usize,
    gates: u64,
    digest: [u8; 32],
}

impl Chain {
    /// The chain of `step`, which must be valid and have two input values (fresh, state) and
    /// output values as wide as the state, compiled as `compile` does.
    pub fn new(step: &Circuit, compile: impl FnOnce(&Circuit) -> Plan) -> Result<Chain, Error> {
        step.check()?;
        let [fresh, state] = step.inputs[..] else {
            return Err(Error::Inputs(format!(
                "a chain's step circuit takes two values (fresh input, state), this one {}",
                step.inputs.len()
            )));
        };
        if step.num_output_wires() != state {
            return Err(Error::Inputs(format!(
                "a chain's step circuit outputs its new state: {} output bits for a {state}-bit state",
                step.num_output_wires()
            )));
        }
        Ok(Chain {
            plan: compile(step),
            fresh: fresh as usize,
            state: state as usize,
            gates: step.gates.len() as u64,
            digest: step.digest(),
        })
    }

    /// The step circuit's [`Circuit::digest`].
    pub fn step_digest(&self) -> [u8; 32] {
        self.digest
    }

    /// The compiled step.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Bits of fresh input per step.
    pub fn fresh_bits(&self) -> usize {
        self.fresh
    }

    /// Bits of state.
    pub fn state_bits(&self) -> usize {
        self.state
    }

    /// Gates per step (all kinds).
    pub fn gates_per_step(&self) -> u64 {
        self.gates
    }

    /// Blocks of the stream of `steps` steps with scheme `S`.
    pub fn stream_blocks<S: Scheme>(&self, steps: u64) -> u64 {
        let per_step = (self.fresh + crate::table_blocks::<S>(&self.plan)) as u64;
        self.state as u64 + steps.saturating_mul(per_step)
    }
}

/// Checks that a chain of `steps` steps can run: 1 to 2^62 (one tweak domain each).
pub fn check_steps(steps: u64) -> Result<(), Error> {
    if steps == 0 || steps > DOMAINS {
        return Err(Error::Inputs(format!(
            "a chain runs 1 to 2^62 steps, not {steps}"
        )));
    }
    Ok(())
}

/// The garbler of a chain: its input encoding (the secret and the next step's input wires:
/// fresh, then the state) and its engine.
pub struct ChainGarbler<'c, S: Scheme> {
    chain: &'c Chain,
    garbler: Garbler<S>,
    encoding: InputEncoding<S>,
    labels: Vec<Block>,
    step: u64,
}

impl<'c, S: Scheme> ChainGarbler<'c, S> {
    /// Starts garbling `chain` with `garbler` under a fresh secret from `prg`: draws the state's
    /// wires and puts the active labels of the `initial` state bits into `sink`.
    pub fn start(
        chain: &'c Chain,
        garbler: Garbler<S>,
        prg: &mut Prg,
        initial: &[bool],
        sink: &mut impl TableSink,
    ) -> Result<Self, Error> {
        if initial.len() != chain.state {
            return Err(Error::Inputs(format!(
                "the chain's state has {} bits, got {}",
                chain.state,
                initial.len()
            )));
        }
        let mut g = ChainGarbler {
            chain,
            garbler,
            encoding: InputEncoding::random(prg, chain.fresh + chain.state),
            labels: Vec::with_capacity(chain.fresh.max(chain.state)),
            step: 0,
        };
        g.encoding.encode_into(chain.fresh, initial, &mut g.labels);
        sink.put(&g.labels)?;
        Ok(g)
    }

    /// Garbles the next step with fresh input bits `fresh` (new wires drawn from `prg`): puts
    /// their active labels, then the step's tables, into `sink`.
    pub fn step(
        &mut self,
        prg: &mut Prg,
        fresh: &[bool],
        sink: &mut impl TableSink,
    ) -> Result<(), Error> {
        let n = self.chain.fresh;
        if fresh.len() != n {
            return Err(Error::Inputs(format!(
                "a step takes {n} fresh bits, got {}",
                fresh.len()
            )));
        }
        let enc = &mut self.encoding;
        for w in &mut enc.wires[..n] {
            *w = S::random_wire(&enc.secret, prg);
        }
        enc.encode_into(0, fresh, &mut self.labels);
        sink.put(&self.labels)?;
        let plan = &self.chain.plan;
        let out = self
            .garbler
            .garble_in(plan, self.step, &enc.secret, &enc.wires, sink)?;
        enc.wires[n..].copy_from_slice(out);
        self.step += 1;
        Ok(())
    }

    /// Steps garbled so far.
    pub fn steps(&self) -> u64 {
        self.step
    }

    /// The decoding bits of the current state (after the last step: of the output).
    pub fn decoding(&self) -> Vec<bool> {
        crate::decoding_bits::<S>(&self.encoding.wires[self.chain.fresh..])
    }
}

/// The evaluator of a chain of a known number of steps: takes the garbler's stream in pieces
/// of any size and evaluates each batch as soon as its tables are in.
pub struct ChainEvaluator<'c, S: Scheme> {
    chain: &'c Chain,
    evaluator: Evaluator<S>,
    steps: u64,
    step: u64,
    /// Blocks received and not yet used, from `at`.
    pending: Vec<Block>,
    at: usize,
    /// The next step's active input labels: fresh, then the state.
    inputs: Vec<Block>,
    /// Whether the initial state's labels are in.
    started: bool,
    evaluation: Option<Evaluation<'c>>,
}

impl<'c, S: Scheme> ChainEvaluator<'c, S> {
    /// An evaluator of `steps` steps (1 to 2^62) of `chain` with `evaluator`.
    pub fn new(chain: &'c Chain, evaluator: Evaluator<S>, steps: u64) -> Result<Self, Error> {
        check_steps(steps)?;
        Ok(ChainEvaluator {
            chain,
            evaluator,
            steps,
            step: 0,
            pending: Vec::new(),
            at: 0,
            inputs: vec![Block::ZERO; chain.fresh + chain.state],
            started: false,
            evaluation: None,
        })
    }

    /// Takes the next `blocks` of the garbler's stream and evaluates as far as they reach.
    pub fn feed(&mut self, blocks: &[Block]) -> Result<(), Error> {
        if self.is_done() {
            return Err(Error::TrailingTables(blocks.len()));
        }
        self.pending.drain(..self.at);
        self.at = 0;
        self.pending.extend_from_slice(blocks);
        while self.advance()? {}
        if self.is_done() && self.at < self.pending.len() {
            return Err(Error::TrailingTables(self.pending.len() - self.at));
        }
        Ok(())
    }

    /// One move: the initial state's labels, a step's fresh labels, a batch, or the end of a
    /// step. False when it waits for more of the stream or the chain is done.
    fn advance(&mut self) -> Result<bool, Error> {
        let chain: &'c Chain = self.chain;
        let (fresh, state) = (chain.fresh, chain.state);
        if !self.started {
            let Some(l) = self.pending.get(self.at..self.at + state) else {
                return Ok(false);
            };
            self.inputs[fresh..].copy_from_slice(l);
            self.at += state;
            self.started = true;
            return Ok(true);
        }
        if self.is_done() {
            return Ok(false);
        }
        let Some(ev) = self.evaluation.as_mut() else {
            let Some(l) = self.pending.get(self.at..self.at + fresh) else {
                return Ok(false);
            };
            self.inputs[..fresh].copy_from_slice(l);
            self.at += fresh;
            let ev = self
                .evaluator
                .start_in(&chain.plan, self.step, &self.inputs)?;
            self.evaluation = Some(ev);
            return Ok(true);
        };
        match self.evaluator.next_tables(ev) {
            Some(n) => {
                let Some(table) = self.pending.get(self.at..self.at + n) else {
                    return Ok(false);
                };
                self.evaluator.feed(ev, table)?;
                self.at += n;
            }
            None => {
                let out = self.evaluator.outputs(ev);
                self.inputs[fresh..].copy_from_slice(out);
                self.evaluation = None;
                self.step += 1;
            }
        }
        Ok(true)
    }

    /// Whether every step is evaluated.
    pub fn is_done(&self) -> bool {
        self.step == self.steps
    }

    /// Steps evaluated so far.
    pub fn steps_done(&self) -> u64 {
        self.step
    }

    /// The active labels of the state (after the last step: of the output).
    pub fn state(&self) -> &[Block] {
        &self.inputs[self.chain.fresh..]
    }
}
