//! `tessera bench paper motion2nx`: MOTION2NX's private-inference tables (Braun, seed 003,
//! App. C.2) on this machine, beside the paper's "this work w/ NN Ops" rows (its specialised
//! tensor operations, the counterpart of Tessera's secure layers):
//!
//! - **Table 1**: CryptoNets (MNIST, with ReLU), ℓ = 32, setup and online per protocol pair,
//!   LAN and WAN.
//! - **Table 2**: MiniONN's MNIST network, ℓ = 32, the same.
//! - **Table 3**: MiniONN's CIFAR-10 network, ℓ = 32 and 64, online only.
//!
//! Each cell is one `tessera nn bench` run (both parties in one process, one warm-up, then
//! `--samples` timed inferences, every output checked against fixed point) in a child process,
//! through relays under the named profile for each of `--nets`. The paper's appendix does not
//! state its LAN and WAN; the defaults are the Cheetah profiles (`lan`, `wan`).

use super::super::{CommonArgs, emit};
use super::{child_lines, figure, paper_over_ours, stats_in, words};
use crate::CliError;
use clap::Args;
use serde_json::{Value, json};

/// Options of `tessera bench paper motion2nx`.
#[derive(Args)]
pub struct Motion2nxArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// The tables to run, comma-separated (1, 2, 3).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3", value_parser = clap::value_parser!(u8).range(1..=3))]
    tables: Vec<u8>,
    /// The networks, comma-separated, standing for the paper's LAN and WAN columns in order:
    /// `loopback` (no relay) or a profile of `tessera relay --help`.
    #[arg(long, value_delimiter = ',', default_value = "lan,wan")]
    nets: Vec<String>,
    /// Protocol pairs, comma-separated (a+b, a+y, alpha+beta, alpha+y).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "a+b,a+y,alpha+beta,alpha+y"
    )]
    protocols: Vec<String>,
}

/// One published cell: (table, model, ℓ, protocol, [LAN, WAN] of (setup ms, online ms)); the
/// setup is absent from Table 3.
type PaperCell = (u8, &'static str, u32, &'static str, [(Option<f64>, f64); 2]);

/// The paper's "this work w/ NN Ops" rows of Tables 1-3.
const PAPER: [PaperCell; 16] = [
    (
        1,
        "cryptonets",
        32,
        "a+b",
        [(Some(111.2), 11.1), (Some(1005.7), 1047.4)],
    ),
    (
        1,
        "cryptonets",
        32,
        "a+y",
        [(Some(103.4), 11.1), (Some(1062.4), 858.6)],
    ),
    (
        1,
        "cryptonets",
        32,
        "alpha+beta",
        [(Some(129.1), 28.1), (Some(1766.7), 982.2)],
    ),
    (
        1,
        "cryptonets",
        32,
        "alpha+y",
        [(Some(136.6), 8.7), (Some(1539.4), 858.6)],
    ),
    (
        2,
        "minionn-mnist",
        32,
        "a+b",
        [(Some(649.7), 171.5), (Some(4826.6), 5138.1)],
    ),
    (
        2,
        "minionn-mnist",
        32,
        "a+y",
        [(Some(523.8), 126.7), (Some(4476.5), 2574.9)],
    ),
    (
        2,
        "minionn-mnist",
        32,
        "alpha+beta",
        [(Some(737.0), 151.6), (Some(6424.5), 4654.0)],
    ),
    (
        2,
        "minionn-mnist",
        32,
        "alpha+y",
        [(Some(676.1), 81.8), (Some(5908.9), 1235.7)],
    ),
    (
        3,
        "minionn-cifar",
        32,
        "a+b",
        [(None, 1167.7), (None, 20773.1)],
    ),
    (
        3,
        "minionn-cifar",
        32,
        "a+y",
        [(None, 1246.8), (None, 34783.5)],
    ),
    (
        3,
        "minionn-cifar",
        32,
        "alpha+beta",
        [(None, 624.2), (None, 7882.5)],
    ),
    (
        3,
        "minionn-cifar",
        32,
        "alpha+y",
        [(None, 695.6), (None, 6756.2)],
    ),
    (
        3,
        "minionn-cifar",
        64,
        "a+b",
        [(None, 2024.6), (None, 37584.9)],
    ),
    (
        3,
        "minionn-cifar",
        64,
        "a+y",
        [(None, 2231.1), (None, 66187.8)],
    ),
    (
        3,
        "minionn-cifar",
        64,
        "alpha+beta",
        [(None, 989.5), (None, 11768.9)],
    ),
    (
        3,
        "minionn-cifar",
        64,
        "alpha+y",
        [(None, 1226.6), (None, 10591.8)],
    ),
];

/// Runs `tessera bench paper motion2nx`.
pub fn run(args: &Motion2nxArgs) -> Result<(), CliError> {
    let json = args.common.json;
    if !json {
        println!(
            "MOTION2NX Tables 1-3 (this work w/ NN Ops): ms, ours against the paper's (paper/ours > 1: faster here); columns {}",
            args.nets.join(", ")
        );
        println!(
            "{:<5} {:<14} {:>3} {:<10} {:<9} | {:>9} {:>9} {:>6} | {:>9} {:>9} {:>6}",
            "table", "model", "ℓ", "protocol", "net", "setup", "paper", "×", "online", "paper", "×"
        );
    }
    let cells = PAPER
        .iter()
        .filter(|c| args.tables.contains(&c.0) && args.protocols.iter().any(|p| p == c.3));
    for cell in cells {
        for (k, net) in args.nets.iter().enumerate() {
            let line = nn_child(args, cell, net)?;
            let paper = cell.4.get(k).copied();
            print_cell(json, cell, net, paper, &line)?;
        }
    }
    Ok(())
}

/// `tessera nn bench` for one cell's model, width and protocol over `net`: its JSON line.
fn nn_child(args: &Motion2nxArgs, cell: &PaperCell, net: &str) -> Result<Value, CliError> {
    let &(_, model, bits, protocol, _) = cell;
    let mut command = words(&[
        "nn",
        "bench",
        "--json",
        "--model",
        model,
        "--protocol",
        protocol,
    ]);
    command.extend(words(&["--bits", &bits.to_string()]));
    command.extend(words(&["--samples", &args.common.samples.to_string()]));
    if net != "loopback" {
        command.extend(words(&["--net", net]));
    }
    Ok(child_lines(&command, &[])?.swap_remove(0))
}

/// One cell: our setup and online medians (and their statistics) beside the paper's column.
fn print_cell(
    json: bool,
    &(table, model, bits, protocol, _): &PaperCell,
    net: &str,
    paper: Option<(Option<f64>, f64)>,
    line: &Value,
) -> Result<(), CliError> {
    let (setup, online) = (
        stats_in(line, "setup_ms_stats")?,
        stats_in(line, "online_ms_stats")?,
    );
    let (paper_setup, paper_online) = (paper.and_then(|p| p.0), paper.map(|p| p.1));
    if json {
        emit(json!({
            "bench": "paper", "paper": "motion2nx", "table": table, "model": model, "bits": bits,
            "protocol": protocol, "net": net, "setup_ms": setup.median, "online_ms": online.median,
            "setup_ms_stats": setup, "online_ms_stats": online,
            "setup_bytes": line["setup_bytes"], "online_bytes": line["online_bytes"],
            "online_rounds": line["online_rounds"],
            "paper_setup_ms": paper_setup, "paper_online_ms": paper_online,
            "paper_over_ours_setup": paper_over_ours(paper_setup, setup.median),
            "paper_over_ours_online": paper_over_ours(paper_online, online.median),
        }));
    } else {
        println!(
            "{:<5} {:<14} {:>3} {:<10} {:<9} | {:>9.1} {:>9} {:>6} | {:>9.1} {:>9} {:>6}",
            table,
            model,
            bits,
            protocol,
            net,
            setup.median,
            figure(paper_setup, 1),
            figure(paper_over_ours(paper_setup, setup.median), 2),
            online.median,
            figure(paper_online, 1),
            figure(paper_over_ours(paper_online, online.median), 2),
        );
    }
    Ok(())
}
