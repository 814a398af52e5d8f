//! Semi-honest Yao of a circuit file too large to hold (10^9 gates and more): each party
//! reads the file itself in two passes ([`Streamed`]: liveness, then windows of consecutive
//! gates), the garbler garbles it window by window ([`garble_streamed`]) and the evaluator
//! evaluates each batch as its tables arrive ([`StreamedEvaluator`]). Each party's memory is
//! the labels of the wires live across windows, one window's plan and one batch's tables,
//! whatever the file's size.
//!
//! The steps are those of [`crate::yao`]: a hello whose fingerprint covers the protocol, the
//! scheme, the output mode, the window size and the file's digest (so both parties stream the
//! same bytes in the same windows); the evaluator's inputs by OT; the garbler's input labels;
//! the tables batch by batch; the outputs. The two parties' cores are Yao's, over a file
//! instead of a plan. Security is semi-honest, as for [`crate::yao`]; windows are garbled in
//! distinct tweak domains under one secret, so no two gates share a tweak.

use crate::yao::{
    EvaluateBody, EvaluateCore, GarbleBody, GarbleCore, OutputTo, PROTOCOL_VERSION, YaoRole,
    evaluator_input_ot, garbler_input_ot, hello,
};
use crate::{Error, Session};
use sha2::Digest;
use tessera_circuit::Circuit;
use tessera_circuit::bristol::stream::Streamed;
use tessera_circuit::eval::split_values;
use tessera_core::Block;
use tessera_garble::{
    Evaluator, Garbler, InputEncoding, Plan, Scheme, SchemeKind, SchemeVisitor, StreamedEvaluator,
    TableBuffer, TableSink, garble_streamed,
};
use tessera_net::role;
use tessera_net::{Phase, Space};

/// SHA-256 of what both parties must agree on: protocol, version, scheme, output mode,
/// window size and the file's digest.
pub fn fingerprint(file: &Streamed, scheme: SchemeKind, outputs: OutputTo) -> [u8; 32] {
    crate::hello::fingerprint(b"tessera/yao-file", |h| {
        h.update([PROTOCOL_VERSION, scheme.code()]);
        h.update(outputs.name().as_bytes());
        h.update((file.window() as u64).to_le_bytes());
        h.update(file.digest());
    })
}

/// What a run gives a party.
#[derive(Clone, Debug, PartialEq)]
pub struct FileOutcome {
    /// The output bits, one vector per output value, if this party learns them.
    pub output: Option<Vec<Vec<bool>>>,
    /// Gates run, all kinds.
    pub gates: u64,
    /// Time and traffic of each phase.
    pub phases: Vec<Phase>,
}

/// Runs the circuit of `file` (opened by this party) with `peer` in `role`, with this
/// party's `input` (value 0 for the garbler, value 1 for the evaluator). A failure stops both
/// parties, the peer told why.
pub fn run(
    session: &mut Session,
    (peer, role): (usize, YaoRole),
    file: Streamed,
    (scheme, outputs): (SchemeKind, OutputTo),
    input: &[bool],
) -> Result<FileOutcome, Error> {
    session.run(|s| {
        let widths = file.inputs().to_vec();
        let [g, e] = widths[..] else {
            return Err(Error::Input(format!(
                "a two-party circuit has two input values (garbler's, evaluator's); this one has {}",
                widths.len()
            )));
        };
        let mine = if role == YaoRole::Garbler { g } else { e };
        if input.len() != mine as usize {
            return Err(Error::Input(format!(
                "the {}'s input has {} bits, the circuit's value has {mine}",
                role.name(),
                input.len()
            )));
        }
        let space = s.space(peer)?;
        let print = fingerprint(&file, scheme, outputs);
        let block = hello(s, (peer, space), role, scheme, print)?;
        let gates = u64::from(file.num_gates());
        let split = file.outputs().to_vec();
        let bits = scheme.visit(Visit {
            session: s,
            peer: (peer, space),
            role,
            file,
            widths: (g as usize, e as usize),
            outputs,
            input,
            block,
        })?;
        Ok(FileOutcome {
            output: bits.map(|b| split_values(&split, &b)),
            gates,
            phases: s.take_phases(),
        })
    })
}

/// A window's plan for a scheme with `xor` gates.
fn compile(xor: tessera_garble::XorGates) -> impl FnMut(&Circuit) -> Plan + Copy {
    move |c: &Circuit| Plan::default_for(c, xor)
}

/// Either side's run for the scheme chosen at run time.
struct Visit<'a> {
    session: &'a mut Session,
    peer: (usize, Space),
    role: YaoRole,
    file: Streamed,
    widths: (usize, usize),
    outputs: OutputTo,
    input: &'a [bool],
    block: Block,
}

impl SchemeVisitor for Visit<'_> {
    type Output = Result<Option<Vec<bool>>, Error>;
    fn visit<S: Scheme>(self) -> Self::Output {
        let s = self.session;
        let scheme = S::with_backend(s.backend(), self.block)?;
        let (peer, space) = self.peer;
        let compile = compile(S::XOR_GATES);
        match self.role {
            YaoRole::Garbler => {
                let mut prg = s.fork_prg();
                let encoding: InputEncoding<S> = s.phase("input-ot", |s| {
                    garbler_input_ot(s, peer, &mut prg, self.widths)
                })?;
                let mut file = self.file;
                let mut core = GarbleCore {
                    encoding: Some(&encoding),
                    tables: &mut TableBuffer::new(),
                    body: FileGarbling {
                        garbler: Garbler::new(scheme),
                        file: &mut file,
                        compile,
                    },
                    outputs: self.outputs,
                    input: self.input,
                    decoding: Vec::new(),
                };
                s.phase("garble", |s| {
                    role::drive(&mut core, &mut s.channel(peer), space)
                })
            }
            YaoRole::Evaluator => {
                let (g, e) = self.widths;
                let mut labels = vec![Block::ZERO; g + e];
                s.phase("input-ot", |s| {
                    evaluator_input_ot::<S>(s, peer, self.input, &mut labels[g..])
                })?;
                let mut core = EvaluateCore {
                    body: FileEvaluation {
                        waiting: Some((self.file, compile, Evaluator::new(scheme))),
                        running: None,
                    },
                    labels: &mut labels,
                    garbler_inputs: g,
                    outputs: self.outputs,
                    started: false,
                    out_labels: None,
                };
                s.phase("evaluate", |s| {
                    role::drive(&mut core, &mut s.channel(peer), space)
                })
            }
        }
    }
}

/// The garbler's body: its engine, the file window by window.
struct FileGarbling<'f, S: Scheme, C> {
    garbler: Garbler<S>,
    file: &'f mut Streamed,
    compile: C,
}

impl<S: Scheme, C: FnMut(&Circuit) -> Plan> GarbleBody<S> for FileGarbling<'_, S, C> {
    fn garble(
        &mut self,
        enc: &InputEncoding<S>,
        sink: &mut impl TableSink,
    ) -> Result<Vec<S::Wire>, Error> {
        let inputs = (&enc.secret, &enc.wires[..]);
        Ok(garble_streamed(
            self.file,
            &mut self.compile,
            &mut self.garbler,
            inputs,
            sink,
        )?)
    }
}

/// The evaluator's body: the file, its compiler and engine until the labels are in, then
/// their streamed evaluation.
struct FileEvaluation<S: Scheme, C> {
    waiting: Option<(Streamed, C, Evaluator<S>)>,
    running: Option<StreamedEvaluator<S, C>>,
}

impl<S: Scheme, C: FnMut(&Circuit) -> Plan> FileEvaluation<S, C> {
    fn running(&mut self) -> Result<&mut StreamedEvaluator<S, C>, Error> {
        self.running
            .as_mut()
            .ok_or_else(|| Error::Input("evaluating before the labels".into()))
    }
}

impl<S: Scheme, C: FnMut(&Circuit) -> Plan> EvaluateBody for FileEvaluation<S, C> {
    fn start(&mut self, labels: &[Block]) -> Result<(), Error> {
        let (file, compile, evaluator) = self
            .waiting
            .take()
            .ok_or_else(|| Error::Input("a file evaluated twice".into()))?;
        self.running = Some(StreamedEvaluator::new(file, compile, evaluator, labels)?);
        Ok(())
    }
    fn next_tables(&mut self) -> Result<Option<usize>, Error> {
        Ok(self.running()?.next_tables()?)
    }
    fn feed(&mut self, table: &[Block]) -> Result<(), Error> {
        Ok(self.running()?.feed(table)?)
    }
    fn outputs(&mut self) -> Result<Vec<Block>, Error> {
        Ok(self.running()?.outputs()?)
    }
}
