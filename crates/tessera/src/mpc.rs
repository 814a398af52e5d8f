//! `tessera mpc run`: one party of a two-input Boolean circuit in Yao (y), GMW (b) or ABY2.0
//! (beta) over TCP or TLS. The listening party is party 0: it holds input value 0 (and garbles
//! in Yao); the connecting party holds value 1. Setup and online phases are timed apart.

use crate::CliError;
use crate::circuit::load;
use crate::twoparty::{LinkArgs, open, phases_json};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;
use tessera_circuit::eval::bits_to_hex;
use tessera_protocols::boolean::Reveal;
use tessera_protocols::circuits::{self, CircuitProtocol};
use tessera_protocols::{Session, SessionConfig};

/// Who learns the output, as the protocols name it.
fn reveal(learner: Learner) -> Reveal {
    match learner {
        Learner::Both => Reveal::Both,
        Learner::Listener => Reveal::To(0),
        Learner::Connector => Reveal::To(1),
    }
}

/// `tessera mpc ...`.
#[derive(Subcommand)]
pub enum MpcCommand {
    /// One party of a Boolean circuit in Yao, GMW or ABY2.0 over TCP or TLS.
    Run(Box<MpcRunArgs>),
}

/// `--protocol`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ProtocolArg {
    /// Yao's garbled circuits (half-gates).
    Y,
    /// Boolean GMW.
    B,
    /// ABY2.0's Boolean sharing.
    Beta,
}

/// `--output`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Learner {
    /// Both parties.
    Both,
    /// The listening party (party 0).
    Listener,
    /// The connecting party (party 1).
    Connector,
}

/// Options of `tessera mpc run`.
#[derive(Args)]
pub struct MpcRunArgs {
    /// The protocol; both parties must name the same.
    #[arg(long, value_enum)]
    protocol: ProtocolArg,
    #[command(flatten)]
    link: LinkArgs,
    /// A built-in circuit (aes128, aes128-expanded, sha256, sha256-lowdepth, add32, ...) or a Bristol file with
    /// two input values.
    #[arg(long)]
    circuit: String,
    /// This party's input value in hex (the listener's is value 0, the connector's value 1;
    /// bit k is bit k mod 8 of byte k div 8; `@FILE`: the hex in FILE).
    #[arg(long)]
    input: String,
    /// Who learns the output.
    #[arg(long, value_enum, default_value_t = Learner::Both)]
    output: Learner,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `tessera mpc ...`.
pub fn run(cmd: MpcCommand) -> Result<(), CliError> {
    match cmd {
        MpcCommand::Run(args) => run_party(&args),
    }
}

fn run_party(args: &MpcRunArgs) -> Result<(), CliError> {
    let (circuit, _) = load(&args.circuit)?;
    if circuit.inputs.len() != 2 {
        return Err(CliError::Usage(format!(
            "{}: a two-party circuit needs two input values, this one has {}",
            args.circuit,
            circuit.inputs.len()
        )));
    }
    // The listener is party 0. The input is checked before anything is sent.
    let me = usize::from(!args.link.listens());
    let bits = crate::circuit::hex_value(&args.input, circuit.inputs[me])?;
    let network = open(&args.link)?;
    let mut s = Session::new(network, SessionConfig::default())?;
    let protocol = match args.protocol {
        ProtocolArg::Y => CircuitProtocol::Y,
        ProtocolArg::B => CircuitProtocol::B,
        ProtocolArg::Beta => CircuitProtocol::Beta,
    };
    let output = circuits::run(
        &mut s,
        (me, 1 - me),
        &circuit,
        protocol,
        bits,
        reveal(args.output),
    )?;
    let phases = s.take_phases();
    let hex: Option<Vec<String>> = output.map(|v| v.iter().map(|b| bits_to_hex(b)).collect());
    if args.json {
        let stats = s.network().stats();
        println!(
            "{}",
            json!({
                "protocol": protocol.name(),
                "party": me,
                "circuit": args.circuit,
                "output": hex,
                "bytes_sent": stats.bytes_sent,
                "bytes_received": stats.bytes_received,
                "rounds": stats.rounds,
                "phases": phases_json(&phases),
            })
        );
    } else {
        match hex {
            Some(values) => values.iter().for_each(|v| println!("{v}")),
            None => eprintln!("tessera: done; the peer learns the output"),
        }
    }
    Ok(())
}
