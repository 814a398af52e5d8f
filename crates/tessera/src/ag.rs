//! `tessera ag run` and `tessera demo ag`: actively secure computation by authenticated
//! garbling, between two parties (KRRW18) or among n (WRK17b).

use crate::CliError;
use crate::circuit::{hex_value, load};
use crate::parties::MeshArgs;
use crate::twoparty::phases_json;
use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;
use std::time::Instant;
use tessera_ag::twopc::{self, Outputs, Program};
use tessera_ag::{Job, multi};
use tessera_circuit::Circuit;
use tessera_circuit::bristol::stream::{DEFAULT_WINDOW, Streamed};
use tessera_circuit::eval::{bits_from_hex, bits_to_hex, split_values};
use tessera_net::{NetConfig, Network, Phase, memory};
use tessera_ot::OtChoice;
use tessera_protocols::{Session, SessionConfig};

/// `tessera ag ...`.
#[derive(Subcommand)]
pub enum AgCommand {
    /// One party of an actively secure computation over TCP or TLS: between two parties party 0
    /// garbles and party 1 evaluates (KRRW18); among three or more party 0 evaluates, the
    /// others garble and every party learns the outputs (WRK17b). A cheating peer is caught
    /// and the run stops with an error naming the check.
    Run(Box<RunArgs>),
}

/// The random correlated OT authenticated bits come from (each actively secure).
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum CotArg {
    /// SoftSpoken OT (k = 3) with its consistency check.
    Softspoken,
    /// Ferret silent OT with its malicious checks (EMP-OT's ferret_b10 parameters).
    Ferret,
    /// IKNP with the KOS consistency check.
    Kos,
}

impl CotArg {
    /// The session's OT.
    pub fn choice(self) -> Result<OtChoice, CliError> {
        let name = match self {
            CotArg::Softspoken => "softspoken",
            CotArg::Ferret => "ferret",
            CotArg::Kos => "kos",
        };
        Ok(tessera_ag::cot(name)?)
    }
}

/// Who learns the outputs.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum OutputArg {
    /// Both parties.
    All,
    /// Party 1 only.
    Evaluator,
    /// Party 0 only.
    Garbler,
}

impl From<OutputArg> for Outputs {
    fn from(o: OutputArg) -> Outputs {
        match o {
            OutputArg::All => Outputs::All,
            OutputArg::Evaluator => Outputs::Evaluator,
            OutputArg::Garbler => Outputs::Garbler,
        }
    }
}

/// Options of `tessera ag run`.
#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    mesh: MeshArgs,
    /// A built-in circuit or a Bristol Fashion file: input value i is party i's (for aes128,
    /// party 0 holds the key and party 1 the plaintext).
    #[arg(long)]
    circuit: String,
    /// This party's input value in hex, as `circuit eval` reads it (or @FILE); empty for a
    /// party past the circuit's input values.
    #[arg(long, default_value = "")]
    input: String,
    /// Who learns the outputs (among three or more parties: all).
    #[arg(long, value_enum, default_value_t = OutputArg::All)]
    output: OutputArg,
    /// Read the circuit file in windows of this many gates, each run with the live wires
    /// carried from the ones before: memory follows one window and the live wires, not the
    /// file. Default: a file of more than 65536 gates between two parties in windows of that
    /// many, other circuits whole; 0 reads the file whole.
    #[arg(long)]
    window: Option<usize>,
    /// The correlated OT behind the authenticated bits.
    #[arg(long, value_enum, default_value_t = CotArg::Softspoken)]
    cot: CotArg,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `tessera ag ...`.
pub fn run(cmd: AgCommand) -> Result<(), CliError> {
    match cmd {
        AgCommand::Run(args) => run_party(&args),
    }
}

/// This party's input bits for a circuit of input values of widths `inputs`: its value's hex,
/// or nothing past the values.
fn party_input(inputs: &[u32], party: usize, hex: &str) -> Result<Vec<bool>, CliError> {
    match inputs.get(party) {
        Some(&w) => hex_value(hex, w),
        None if hex.is_empty() => Ok(Vec::new()),
        None => Err(CliError::Usage(format!(
            "party {party} gives no input to a circuit of {} input values, but --input is set",
            inputs.len()
        ))),
    }
}

/// The circuit of a run: whole, or a file read window by window, between two parties; whole
/// among more.
enum Source {
    Whole(Box<(Circuit, Program)>),
    Streamed(Box<Streamed>),
    Many(Box<Circuit>),
}

/// Whether the circuit `name` names is read in windows unless told otherwise: a file (a
/// built-in name is taken as the built-in circuit, as `load` does) larger than a window (its
/// header says), between two parties.
pub fn in_windows_by_default(name: &str, parties: usize) -> Result<bool, CliError> {
    let path = std::path::Path::new(name);
    let file = path.exists() && tessera_circuit::library::builtin(name).is_none();
    Ok(file
        && parties == 2
        && tessera_circuit::bristol::declared_gates(path)? as usize > DEFAULT_WINDOW)
}

impl Source {
    /// The circuit `args` name, checked for `parties` parties.
    fn load(args: &RunArgs, parties: usize) -> Result<Source, CliError> {
        if parties > 2 && args.output != OutputArg::All {
            return Err(CliError::Usage(format!(
                "{parties} parties: every party learns the outputs (--output all)"
            )));
        }
        let path = std::path::Path::new(&args.circuit);
        let streamed = match args.window {
            Some(0) => None,
            None if in_windows_by_default(&args.circuit, parties)? => {
                Some(Streamed::open(path, DEFAULT_WINDOW)?)
            }
            None => None,
            Some(w) => Some(Streamed::open(path, w)?),
        };
        let source = match streamed {
            Some(f) => Source::Streamed(Box::new(f)),
            None if parties > 2 => Source::Many(Box::new(load(&args.circuit)?.0)),
            None => {
                let (circuit, _) = load(&args.circuit)?;
                let program = Program::new(&circuit)?;
                Source::Whole(Box::new((circuit, program)))
            }
        };
        let values = source.inputs().len();
        if values > parties {
            return Err(CliError::Usage(format!(
                "{}: {values} input values for {parties} parties",
                args.circuit
            )));
        }
        Ok(source)
    }

    fn inputs(&self) -> &[u32] {
        match self {
            Source::Whole(w) => &w.0.inputs,
            Source::Streamed(f) => f.inputs(),
            Source::Many(c) => &c.inputs,
        }
    }

    fn outputs(&self) -> Vec<u32> {
        match self {
            Source::Whole(w) => w.0.outputs.clone(),
            Source::Streamed(f) => f.outputs().to_vec(),
            Source::Many(c) => c.outputs.clone(),
        }
    }

    /// Runs it as this party of `session`.
    fn run(
        &mut self,
        session: &mut Session,
        input: &[bool],
        to: Outputs,
    ) -> Result<Option<Vec<bool>>, CliError> {
        Ok(match self {
            Source::Whole(w) => Job::Two(&w.1).run(session, input, to)?,
            Source::Streamed(file) if session.parties() > 2 => {
                Some(multi::run_file(session, file, input)?)
            }
            Source::Streamed(file) => twopc::run_file(session, file, input, to)?,
            Source::Many(c) => Job::Many(c).run(session, input, to)?,
        })
    }

    /// What the JSON report says of its size.
    fn size(&self) -> serde_json::Value {
        match self {
            Source::Whole(w) => json!({"and_gates": w.1.ands()}),
            Source::Streamed(f) => json!({"gates": f.num_gates(), "window": f.window()}),
            Source::Many(c) => json!({"and_gates": Job::Many(c).ands()}),
        }
    }
}

fn run_party(args: &RunArgs) -> Result<(), CliError> {
    let n = args.mesh.parties()?;
    let mut source = Source::load(args, n)?;
    let me = args.mesh.party;
    let input = party_input(source.inputs(), me, &args.input)?;
    let start = Instant::now();
    let net = args.mesh.open()?;
    let mut session = Session::new(net, SessionConfig::with_ot(args.cot.choice()?))?;
    let output = source.run(&mut session, &input, args.output.into())?;
    let total_ms = start.elapsed().as_secs_f64() * 1e3;
    let widths = source.outputs();
    let values: Option<Vec<String>> = output.map(|bits| {
        split_values(&widths, &bits)
            .iter()
            .map(|v| bits_to_hex(v))
            .collect()
    });
    let stats = session.network().stats();
    if args.json {
        println!(
            "{}",
            json!({
                "party": me,
                "role": if (me == 0) == (n == 2) { "garbler" } else { "evaluator" },
                "circuit": args.circuit,
                "cot": args.cot.choice()?.name(),
                "size": source.size(),
                "output": values,
                "total_ms": total_ms,
                "bytes_sent": stats.bytes_sent,
                "bytes_received": stats.bytes_received,
                "phases": phases_json(&session.take_phases()),
            })
        );
    } else if let Some(values) = values {
        for v in values {
            println!("{v}");
        }
    }
    Ok(())
}

/// Options of `tessera demo ag`.
#[derive(Args)]
pub struct DemoArgs {
    /// The correlated OT behind the authenticated bits.
    #[arg(long, value_enum, default_value_t = CotArg::Softspoken)]
    cot: CotArg,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// `tessera demo ag`: FIPS-197's AES-128 example among three parties in this process (WRK17b),
/// party 0 holding the key and party 1 the plaintext, every party learning the ciphertext,
/// checked.
pub fn demo(args: &DemoArgs) -> Result<(), CliError> {
    let circuit = tessera_circuit::library::aes128()?;
    let job = Job::Many(&circuit);
    let key = bits_from_hex("000102030405060708090a0b0c0d0e0f", 128)?;
    let plain = bits_from_hex("00112233445566778899aabbccddeeff", 128)?;
    let want = "69c4e0d86a7b0430d8cdb78070b4c55a";
    let ot = args.cot.choice()?;
    let start = Instant::now();
    let nets = memory::mesh(3, NetConfig::default())?;
    let runs = in_threads(nets, ot, job, &[key, plain])?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let mut bytes = 0;
    let mut shown = Vec::new();
    for (p, r) in runs.into_iter().enumerate() {
        bytes += r.bytes_sent;
        let hex = r.output.map(|b| bits_to_hex(&b)).unwrap_or_default();
        if hex != want {
            return Err(CliError::Usage(format!(
                "party {p} learned {hex}, not FIPS-197's {want}"
            )));
        }
        shown.push(hex);
    }
    if args.json {
        println!(
            "{}",
            json!({"ciphertext": shown[0], "expected": want, "checked": true, "ms": ms,
                   "bytes": bytes, "and_gates": job.ands(), "parties": 3, "cot": ot.name()})
        );
    } else {
        println!(
            "AES-128 (FIPS-197 C.1) by actively secure computation among 3 parties: {} (checked), {ms:.1} ms, {bytes} bytes, {} AND gates, {}",
            shown[0],
            job.ands(),
            ot.name()
        );
    }
    Ok(())
}

/// What one party of a run on a thread ends with.
pub struct PartyRun {
    /// The outputs it learned.
    pub output: Option<Vec<bool>>,
    /// Its phases.
    pub phases: Vec<Phase>,
    /// Bytes it sent.
    pub bytes_sent: u64,
}

/// Runs `job` with every party of `nets` on a thread of its own, party i on `inputs[i]` (none
/// past the list), outputs to all.
pub fn in_threads(
    nets: Vec<Network>,
    ot: OtChoice,
    job: Job<'_>,
    inputs: &[Vec<bool>],
) -> Result<Vec<PartyRun>, CliError> {
    in_threads_with(nets, ot, inputs, |session, input| {
        Ok(job.run(session, input, Outputs::All)?)
    })
}

/// Runs `run` as every party of `nets`, each on a thread of its own with a session of its own,
/// party i on `inputs[i]` (none past the list).
pub fn in_threads_with(
    nets: Vec<Network>,
    ot: OtChoice,
    inputs: &[Vec<bool>],
    run: impl Fn(&mut Session, &[bool]) -> Result<Option<Vec<bool>>, CliError> + Sync,
) -> Result<Vec<PartyRun>, CliError> {
    let run = &run;
    std::thread::scope(|s| {
        let handles: Vec<_> = nets
            .into_iter()
            .enumerate()
            .map(|(p, net)| {
                let input = inputs.get(p).cloned().unwrap_or_default();
                s.spawn(move || -> Result<PartyRun, CliError> {
                    let mut session = Session::new(net, SessionConfig::with_ot(ot))?;
                    let output = run(&mut session, &input)?;
                    Ok(PartyRun {
                        output,
                        phases: session.take_phases(),
                        bytes_sent: session.network().stats().bytes_sent,
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| CliError::Usage("a party's thread panicked".into()))?
            })
            .collect()
    })
}
