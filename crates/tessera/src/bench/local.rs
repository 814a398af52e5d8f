//! Garbling and evaluating in one process, for the benchmarks: a scheme built on a chosen AES
//! backend, its input encoding, and the tables of the last garbling.

use crate::CliError;
use tessera_circuit::Circuit;
use tessera_core::{Backend, Block, Prg};
use tessera_garble::{Batching, Evaluator, Garbler, InputEncoding, Plan, Scheme, TableReader};

/// One scheme's garbler and evaluator on one plan, with fixed inputs.
pub struct LocalRun<S: Scheme> {
    plan: Plan,
    garbler: Garbler<S>,
    evaluator: Evaluator<S>,
    encoding: InputEncoding<S>,
    inputs: Vec<S::Wire>,
    active: Vec<Block>,
    tables: Vec<Block>,
}

impl<S: Scheme> LocalRun<S> {
    /// Compiles `circuit` for `batching` and the scheme on `backend`, with input bits
    /// `bits` (all input values concatenated), and garbles once, on one thread.
    pub fn new(
        circuit: &Circuit,
        batching: Batching,
        backend: Backend,
        bits: &[bool],
    ) -> Result<Self, CliError> {
        Self::with_threads(circuit, batching, backend, bits, 1)
    }

    /// As [`LocalRun::new`], garbling and evaluating on `threads` threads.
    pub fn with_threads(
        circuit: &Circuit,
        batching: Batching,
        backend: Backend,
        bits: &[bool],
        threads: usize,
    ) -> Result<Self, CliError> {
        let plan = Plan::with_xor(circuit, batching, S::XOR_GATES);
        let mut prg = Prg::from_os()?;
        let encoding = InputEncoding::<S>::random(&mut prg, plan.num_inputs());
        let active = encoding.encode(0, bits);
        // One instance for both parties: they must agree on its parameters (MI's key offset).
        let scheme = S::with_backend(backend, prg.random_block())?;
        let mut run = LocalRun {
            plan,
            garbler: Garbler::with_threads(scheme.clone(), threads),
            evaluator: Evaluator::with_threads(scheme, threads),
            inputs: encoding.wires.clone(),
            encoding,
            active,
            tables: Vec::new(),
        };
        run.garble()?;
        Ok(run)
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Garbles the circuit again, keeping its tables; returns the output wires.
    pub fn garble(&mut self) -> Result<&[S::Wire], CliError> {
        self.tables.clear();
        Ok(self.garbler.garble(
            &self.plan,
            &self.encoding.secret,
            &self.inputs,
            &mut self.tables,
        )?)
    }

    /// Evaluates the last garbling; returns the output labels.
    pub fn evaluate(&mut self) -> Result<&[Block], CliError> {
        Ok(self.evaluator.evaluate(
            &self.plan,
            &self.active,
            &mut TableReader::new(&self.tables),
        )?)
    }

    /// Garbles and evaluates once and decodes the output bits.
    pub fn output(&mut self) -> Result<Vec<bool>, CliError> {
        let decoding = tessera_garble::decoding_bits::<S>(self.garble()?);
        Ok(tessera_garble::decode(self.evaluate()?, &decoding))
    }
}
