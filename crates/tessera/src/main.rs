//! `tessera`: the command line of the Tessera MPC framework.

#![forbid(unsafe_code)]
mod ag;
mod bench;
mod circuit;
mod mpc;
mod nn;
mod oaes;
mod parties;
mod relay;
mod schemes;
mod twoparty;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Tessera: fast secure multi-party computation.
#[derive(Parser)]
#[command(name = "tessera", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// AES-128 as a two-party computation in one process: garbler's random key, evaluator's
    /// random plaintext; prints the ciphertext, checked against plain AES, with time and bytes.
    /// `demo nn`: one private inference of an MNIST digit; `demo oaes`: oblivious AES among
    /// three parties; `demo ag`: AES-128 by actively secure 2PC.
    Demo(DemoCli),
    /// One party of a semi-honest Yao computation over TCP or TLS.
    Run(Box<twoparty::RunArgs>),
    /// Secret-sharing and garbled-circuit protocols between two processes.
    Mpc {
        #[command(subcommand)]
        what: mpc::MpcCommand,
    },
    /// Private inference of ONNX neural networks between a model owner and a client.
    Nn {
        #[command(subcommand)]
        what: nn::NnCommand,
    },
    /// Actively secure computation by authenticated garbling (KRRW18): a cheating party is
    /// caught.
    Ag {
        #[command(subcommand)]
        what: ag::AgCommand,
    },
    /// Oblivious AES for n parties from a trusted dealer's pre-processing (MiniMac tables).
    Oaes {
        #[command(subcommand)]
        what: oaes::OaesCommand,
    },
    /// Writes a TLS key and self-signed certificate (key.pem, cert.pem) for `run --tls-dir`.
    Keygen(twoparty::KeygenArgs),
    /// A TCP link emulator for any program: forwards connections with a one-way delay and a
    /// bandwidth limit per direction (named profiles from the literature, or your own).
    Relay(relay::RelayArgs),
    /// Measure the hot paths; one JSON object per line with --json.
    Bench {
        #[command(subcommand)]
        what: bench::BenchCommand,
    },
    /// Inspect and evaluate Boolean circuits (built-in ones, Bristol Fashion or old Bristol files).
    Circuit {
        #[command(subcommand)]
        what: circuit::CircuitCommand,
    },
}

/// `tessera demo [nn]`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
struct DemoCli {
    #[command(subcommand)]
    what: Option<DemoCommand>,
    #[command(flatten)]
    aes: twoparty::DemoArgs,
}

/// The demos besides AES.
#[derive(Subcommand)]
enum DemoCommand {
    /// One private inference of a bundled MNIST digit on a bundled network, in one process,
    /// printed beside the plaintext fixed-point and float results.
    Nn(nn::DemoArgs),
    /// Oblivious AES-128 among three parties in one process, the FIPS-197 key split among
    /// them; prints the ciphertext checked against FIPS-197.
    Oaes(oaes::DemoArgs),
    /// FIPS-197's AES-128 example by actively secure two-party computation in one process:
    /// party 0 holds the key, party 1 the plaintext; prints the ciphertext, checked.
    Ag(ag::DemoArgs),
}

/// Everything the command line reports as a one-line error.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// From the primitives.
    #[error(transparent)]
    Core(#[from] tessera_core::Error),
    /// From the circuit layer.
    #[error(transparent)]
    Circuit(#[from] tessera_circuit::Error),
    /// A command line that names something that does not exist.
    #[error("{0}")]
    Usage(String),
    /// From garbling.
    #[error(transparent)]
    Garble(#[from] tessera_garble::Error),
    /// From the channel layer.
    #[error(transparent)]
    Net(#[from] tessera_net::Error),
    /// From oblivious transfer.
    #[error(transparent)]
    Ot(#[from] tessera_ot::Error),
    /// From a two-party protocol.
    #[error(transparent)]
    Protocol(#[from] tessera_protocols::Error),
    /// From the neural-network layer (models, inputs).
    #[error(transparent)]
    Nn(#[from] tessera_nn::Error),
    /// From oblivious AES.
    #[error(transparent)]
    Aes(#[from] tessera_aes::Error),
    /// From authenticated garbling.
    #[error(transparent)]
    Ag(#[from] tessera_ag::Error),
    /// Writing the output failed.
    #[error("writing output: {0}")]
    Io(#[from] std::io::Error),
}

/// The most characters of an error message printed.
const MAX_ERROR_CHARS: usize = 2000;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A bad TESSERA_AES_BACKEND is fatal here, not silently ignored.
    let result = tessera_core::Backend::from_env()
        .map_err(CliError::from)
        .and_then(|_| match cli.command {
            Command::Demo(DemoCli { what: None, aes }) => twoparty::demo(&aes),
            Command::Demo(DemoCli {
                what: Some(DemoCommand::Nn(args)),
                ..
            }) => nn::demo(&args),
            Command::Demo(DemoCli {
                what: Some(DemoCommand::Oaes(args)),
                ..
            }) => oaes::demo(&args),
            Command::Demo(DemoCli {
                what: Some(DemoCommand::Ag(args)),
                ..
            }) => ag::demo(&args),
            Command::Run(args) => twoparty::run(&args),
            Command::Keygen(args) => twoparty::keygen(&args),
            Command::Relay(args) => relay::run(&args),
            Command::Mpc { what } => mpc::run(what),
            Command::Nn { what } => nn::run(what),
            Command::Oaes { what } => oaes::run(what),
            Command::Ag { what } => ag::run(what),
            Command::Bench { what } => bench::run(what),
            Command::Circuit { what } => circuit::run(what),
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Errors may quote a file, a path or a name: control characters never reach the
            // terminal, and a long quote is cut.
            let shown = tessera_net::escape_text(&e.to_string(), MAX_ERROR_CHARS);
            eprintln!("tessera: error: {shown}");
            ExitCode::FAILURE
        }
    }
}
