//! `tessera bench paper minimac`: Fig. 2 of "Fast Oblivious AES: a dedicated application of the
//! MiniMac protocol" (seed 004, §1-3) on this machine: the latency from scratch and the time
//! per AES block (latency over the blocks computed at once) of Protocols 1-3, with and without
//! the key expansion, and the pre-processed bytes per party, beside the paper's figures. Each
//! row runs `tessera oaes bench` in a child process (all parties in it over loopback TCP, every
//! ciphertext checked against AES, over `--net`'s relays where one is named), the rows in
//! turn.

use super::super::{CommonArgs, NetCondition, emit};
use super::{child_lines, figure, paper_over_ours, stats_in, words};
use crate::CliError;
use clap::Args;
use serde_json::{Value, json};

/// Options of `tessera bench paper minimac`.
#[derive(Args)]
pub struct MinimacArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Party counts, comma-separated (the paper ran two).
    #[arg(long, value_delimiter = ',', default_value = "2", value_parser = clap::value_parser!(u32).range(2..=16))]
    parties: Vec<u32>,
    /// The paper's parties ran on machines of their own: a profile puts every connection
    /// behind a relay.
    #[command(flatten)]
    net: NetCondition,
}

/// One row of Fig. 2 as published.
struct PaperRow {
    what: &'static str,
    protocol: u8,
    blocks: u32,
    /// Whether the latency counts the key expansion.
    key_expansion: bool,
    ms_per_block: f64,
    latency_ms: f64,
    /// Pre-processed megabytes per player.
    prep_mb: f64,
    /// Whether the paper measured the row or estimated it.
    estimated: bool,
}

/// Fig. 2's rows for Protocols 1-3 (two parties; the binary-circuit MiniMac row of [DLT14] has
/// no counterpart here).
const PAPER_FIG2: [PaperRow; 4] = [
    PaperRow {
        what: "Protocol 1 incl. key expansion",
        protocol: 1,
        blocks: 5,
        key_expansion: true,
        ms_per_block: 3.0,
        latency_ms: 15.0,
        prep_mb: 270.0,
        estimated: false,
    },
    PaperRow {
        what: "Protocol 1 without key expansion",
        protocol: 1,
        blocks: 5,
        key_expansion: false,
        ms_per_block: 1.2,
        latency_ms: 6.0,
        prep_mb: 220.0,
        estimated: false,
    },
    PaperRow {
        what: "Protocol 2 (no on-line multiplications)",
        protocol: 2,
        blocks: 15,
        key_expansion: false,
        ms_per_block: 0.4,
        latency_ms: 6.0,
        prep_mb: 650.0,
        estimated: true,
    },
    PaperRow {
        what: "Protocol 3 (minimised pre-processing)",
        protocol: 3,
        blocks: 15,
        key_expansion: false,
        ms_per_block: 0.8,
        latency_ms: 12.0,
        prep_mb: 10.5,
        estimated: true,
    },
];

/// Runs `tessera bench paper minimac`.
pub fn run(args: &MinimacArgs) -> Result<(), CliError> {
    let json = args.common.json;
    if !json {
        println!(
            "MiniMac oblivious AES, Fig. 2: ours against the paper's (paper/ours > 1: faster here)"
        );
        println!(
            "{:<40} {:>7} {:>6} | {:>10} {:>8} {:>7} | {:>9} {:>8} {:>7} | {:>9} {:>8}",
            "row",
            "parties",
            "blocks",
            "latency ms",
            "paper",
            "×",
            "ms/block",
            "paper",
            "×",
            "prep MB",
            "paper"
        );
    }
    for &parties in &args.parties {
        for row in &PAPER_FIG2 {
            let line = oaes_child(args, parties, row)?;
            print_row(json, parties, row, &line)?;
        }
    }
    Ok(())
}

/// `tessera oaes bench` for one row's protocol and blocks in a child process: its JSON line.
fn oaes_child(args: &MinimacArgs, parties: u32, row: &PaperRow) -> Result<Value, CliError> {
    let mut command = words(&["oaes", "bench", "--json", "--parties", &parties.to_string()]);
    command.extend(words(&["--protocol", &row.protocol.to_string()]));
    command.extend(words(&["--blocks", &row.blocks.to_string()]));
    command.extend(words(&["--samples", &args.common.samples.to_string()]));
    if let Some(p) = args.net.profile {
        command.extend(words(&["--net", p.name]));
    }
    Ok(child_lines(&command, &[])?.swap_remove(0))
}

/// One row: the child's latency (with or without the key expansion, as the paper's row) and
/// its statistics, per block, and the largest party's pre-processed bytes.
fn print_row(json: bool, parties: u32, row: &PaperRow, line: &Value) -> Result<(), CliError> {
    let key = if row.key_expansion {
        "latency_ms_with_key_expansion"
    } else {
        "latency_ms_without_key_expansion"
    };
    let latency = stats_in(line, &format!("{key}_stats"))?;
    let prep = line["prep_bytes_largest_party"]
        .as_f64()
        .ok_or_else(|| CliError::Usage("oaes bench printed no prep_bytes_largest_party".into()))?
        / 1e6;
    let per_block = latency.median / f64::from(row.blocks);
    if json {
        emit(json!({
            "bench": "paper", "paper": "minimac", "figure": 2, "row": row.what,
            "protocol": row.protocol, "parties": parties, "blocks": row.blocks,
            "key_expansion": row.key_expansion, "latency_ms": latency.median,
            "latency_ms_stats": latency, "ms_per_block": per_block, "prep_mb_largest_party": prep,
            "rounds": line[if row.key_expansion { "rounds" } else { "rounds_without_key_expansion" }],
            "paper_latency_ms": row.latency_ms, "paper_ms_per_block": row.ms_per_block,
            "paper_prep_mb_per_player": row.prep_mb, "paper_estimated": row.estimated,
            "paper_over_ours_latency": paper_over_ours(Some(row.latency_ms), latency.median),
        }));
    } else {
        println!(
            "{:<40} {:>7} {:>6} | {:>10.3} {:>8} {:>7} | {:>9.3} {:>8} {:>7} | {:>9.1} {:>8}",
            row.what,
            parties,
            row.blocks,
            latency.median,
            format!("{}{}", row.latency_ms, if row.estimated { "*" } else { "" }),
            figure(paper_over_ours(Some(row.latency_ms), latency.median), 1),
            per_block,
            row.ms_per_block,
            figure(paper_over_ours(Some(row.ms_per_block), per_block), 1),
            prep,
            row.prep_mb,
        );
    }
    Ok(())
}
