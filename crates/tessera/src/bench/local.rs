//! Garbling and evaluating in one process, for the benchmarks: a scheme built on a chosen AES
//! backend, its input encoding, and the tables of the last garbling; fine-grained
//! ([`LocalRun`]) or coarse-grained ([`LocalCgp`]).

use crate::CliError;
use std::time::{Duration, Instant};
use tessera_circuit::Circuit;
use tessera_core::{Backend, Block, Prg};
use tessera_garble::{
    Batching, CgpEvaluator, CgpGarbler, Evaluator, Garbler, InputEncoding, Partitions, Plan,
    Scheme, TableBuffer, TableReader,
};

/// One scheme's garbler and evaluator on one plan, with fixed inputs.
pub struct LocalRun<S: Scheme> {
    plan: Plan,
    /// How long compiling the plan took.
    compile: Duration,
    garbler: Garbler<S>,
    evaluator: Evaluator<S>,
    encoding: InputEncoding<S>,
    active: Vec<Block>,
    tables: TableBuffer,
}

impl<S: Scheme> LocalRun<S> {
    /// Compiles `circuit` for `batching` and the scheme on `backend`, with input bits
    /// `bits` (all input values concatenated); garbles and evaluates once, on one thread, and
    /// checks the output against plaintext, so no benchmark times a kernel that computes
    /// something else.
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
        let t = Instant::now();
        let plan = Plan::with_xor(circuit, batching, S::XOR_GATES);
        let compile = t.elapsed();
        let mut prg = Prg::from_os()?;
        let encoding = InputEncoding::<S>::random(&mut prg, plan.num_inputs());
        let active = encoding.encode(0, bits);
        // One instance for both parties: they must agree on its parameters (MI's key offset).
        let scheme = S::with_backend(backend, prg.random_block())?;
        let mut run = LocalRun {
            plan,
            compile,
            garbler: Garbler::with_threads(scheme.clone(), threads),
            evaluator: Evaluator::with_threads(scheme, threads),
            encoding,
            active,
            tables: TableBuffer::new(),
        };
        let out = run.output()?;
        check_plaintext(circuit, bits, &out, &format!("{} on {backend}", S::NAME))?;
        Ok(run)
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// How long compiling the plan took.
    pub fn compile_time(&self) -> Duration {
        self.compile
    }

    /// Garbles the circuit again, keeping its tables; returns the output wires.
    pub fn garble(&mut self) -> Result<&[S::Wire], CliError> {
        self.tables.clear();
        Ok(self.garbler.garble(
            &self.plan,
            &self.encoding.secret,
            &self.encoding.wires,
            &mut self.tables,
        )?)
    }

    /// Garbles the circuit again with its input wires placed in the garbler's slots first,
    /// as EMP's driver has its input labels in place; returns the time of the placement and
    /// of the garbling.
    pub fn garble_placed(&mut self) -> Result<[Duration; 2], CliError> {
        self.tables.clear();
        let t = Instant::now();
        let slots = self.garbler.inputs(&self.plan);
        slots.copy_from_slice(&self.encoding.wires);
        let (placed, t) = (t.elapsed(), Instant::now());
        let secret = &self.encoding.secret;
        self.garbler
            .garble_placed(&self.plan, 0, secret, &mut self.tables)?;
        Ok([placed, t.elapsed()])
    }

    /// Evaluates the last garbling with the active input labels placed first; returns the
    /// time of the placement and of the evaluation.
    pub fn evaluate_placed(&mut self) -> Result<[Duration; 2], CliError> {
        let t = Instant::now();
        let slots = self.evaluator.inputs(&self.plan);
        slots.copy_from_slice(&self.active);
        let (placed, t) = (t.elapsed(), Instant::now());
        let mut tables = TableReader::new(self.tables.as_slice());
        self.evaluator.evaluate_placed(&self.plan, 0, &mut tables)?;
        Ok([placed, t.elapsed()])
    }

    /// Evaluates the last garbling; returns the output labels.
    pub fn evaluate(&mut self) -> Result<&[Block], CliError> {
        Ok(self.evaluator.evaluate(
            &self.plan,
            &self.active,
            &mut TableReader::new(self.tables.as_slice()),
        )?)
    }

    /// Garbles and evaluates once and decodes the output bits.
    pub fn output(&mut self) -> Result<Vec<bool>, CliError> {
        let decoding = tessera_garble::decoding_bits::<S>(self.garble()?);
        Ok(tessera_garble::decode(self.evaluate()?, &decoding))
    }
}

/// Checks the decoded output `out` of a garbling of `circuit` on input bits `bits` (all input
/// values concatenated) against the circuit's plaintext evaluation.
fn check_plaintext(
    circuit: &Circuit,
    bits: &[bool],
    out: &[bool],
    what: &str,
) -> Result<(), CliError> {
    let values = tessera_circuit::eval::split_values(&circuit.inputs, bits);
    if out != tessera_circuit::eval::evaluate(circuit, &values)?.concat() {
        return Err(CliError::Usage(format!(
            "{what}: the output differs from plaintext"
        )));
    }
    Ok(())
}

/// One scheme's coarse-grained parallel garbler and evaluator (UltraSFE §4.2) on one
/// partitioned circuit, with fixed inputs.
pub struct LocalCgp<S: Scheme> {
    parts: Partitions,
    /// How long partitioning and compiling took.
    compile: Duration,
    garbler: CgpGarbler<S>,
    evaluator: CgpEvaluator<S>,
    encoding: InputEncoding<S>,
    active: Vec<Block>,
    tables: Vec<TableBuffer>,
}

impl<S: Scheme> LocalCgp<S> {
    /// Partitions `circuit`, compiles each part for `batching` and the scheme on `backend`,
    /// with input bits `bits`; garbles and evaluates once on `threads` threads and checks the
    /// output against plaintext.
    pub fn new(
        circuit: &Circuit,
        batching: Batching,
        (backend, threads): (Backend, usize),
        bits: &[bool],
    ) -> Result<Self, CliError> {
        let t = Instant::now();
        let parts = Partitions::new(circuit, threads, |c| {
            Plan::with_xor(c, batching, S::XOR_GATES)
        })?;
        let compile = t.elapsed();
        let mut prg = Prg::from_os()?;
        let encoding = InputEncoding::<S>::random(&mut prg, parts.num_inputs());
        let active = encoding.encode(0, bits);
        let scheme = S::with_backend(backend, prg.random_block())?;
        let mut run = LocalCgp {
            tables: vec![TableBuffer::new(); parts.len()],
            parts,
            compile,
            garbler: CgpGarbler::new(scheme.clone(), threads),
            evaluator: CgpEvaluator::new(scheme, threads),
            encoding,
            active,
        };
        let decoding = tessera_garble::decoding_bits::<S>(run.garble()?);
        let out = tessera_garble::decode(run.evaluate()?, &decoding);
        check_plaintext(circuit, bits, &out, "coarse-grained garbling")?;
        Ok(run)
    }

    /// The partitions.
    pub fn parts(&self) -> &Partitions {
        &self.parts
    }

    /// How long partitioning and compiling took.
    pub fn compile_time(&self) -> Duration {
        self.compile
    }

    /// Garbles the circuit again, keeping its tables; returns the output wires.
    pub fn garble(&mut self) -> Result<&[S::Wire], CliError> {
        Ok(self.garbler.garble(
            &self.parts,
            &self.encoding.secret,
            &self.encoding.wires,
            &mut self.tables,
        )?)
    }

    /// Evaluates the last garbling; returns the output labels.
    pub fn evaluate(&mut self) -> Result<&[Block], CliError> {
        Ok(self
            .evaluator
            .evaluate(&self.parts, &self.active, &self.tables)?)
    }
}
