//! `tessera bench paper ultrasfe`: UltraSFE's garbling tables (Buescher and Katzenbeisser,
//! USENIX Security 2015, seed 002, §6.2-6.3) on this machine.
//!
//! - **Table 2**: BioMatch (n = 512, d = 4, b = 64, exact distances: `biomatch-exact`), MExp
//!   (k = 32, b = 32) and MVMul (16 × 16, b = 64), [`tessera_circuit::library::ultrasfe`]:
//!   gates, the non-linear share, the input bits of each party and the sequential garbling
//!   time (one thread, the engine's default batching), beside the paper's CBMC-GC circuits.
//!   The parameters are the paper's and the AND counts near its non-linear counts (17.1 M,
//!   8.6 M and 1.05 M against 66 M × 25 %, 21.5 M × 41 % and 3.3 M × 37 %: +4 %, −2 %, −14 %;
//!   CBMC-GC's multipliers are not ours), so the like-for-like figure is non-linear gates
//!   garbled per second.
//! - **Figure 5**: fine-grained parallel garbling (FGP) of circuits of depth 1000 and level
//!   width w = 16 … 1024 (`levels<w>`), its efficiency (speed-up over one thread, divided by
//!   the threads) at each of `--threads`, timed in turns; the paper reads about 8 non-linear
//!   gates per thread for a first gain and about 512 per thread for 90 % efficiency.
//!
//! Every garbled output is checked against plaintext before it is timed.

use super::super::garble::{MeasureScheme, Strategy};
use super::super::{CommonArgs, emit};
use super::{figure, paper_over_ours};
use crate::CliError;
use clap::Args;
use serde_json::json;
use tessera_circuit::analysis::gate_counts;
use tessera_circuit::library::{LEVELS_DEPTH, builtin};
use tessera_core::Backend;
use tessera_garble::{Batching, SchemeKind};

/// Options of `tessera bench paper ultrasfe`.
#[derive(Args)]
pub struct UltrasfeArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// The tables to run, comma-separated: 2 (Table 2), 5 (Figure 5).
    #[arg(long, value_delimiter = ',', default_value = "2,5", value_parser = clap::value_parser!(u8).range(2..=5))]
    tables: Vec<u8>,
    /// The garbling scheme (UltraSFE garbles with fixed-key AES: `prp`).
    #[arg(long, default_value = "prp")]
    scheme: SchemeKind,
    /// Figure 5's thread counts, comma-separated, the first 1 (the efficiencies are against it).
    #[arg(long, value_delimiter = ',', default_value = "1,2", value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: Vec<u32>,
    /// Figure 5's level widths, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16,32,64,128,256,512,1024", value_parser = clap::value_parser!(u32).range(1..=4096))]
    widths: Vec<u32>,
}

/// UltraSFE Table 2 as published: (circuit, gates, non-linear share, input bits of party A and
/// B, sequential garbling seconds).
const PAPER_TABLE2: [(&str, f64, f64, &str, f64); 3] = [
    ("biomatch-exact", 66e6, 0.25, "131K/256", 2.07),
    ("mexp", 21.5e6, 0.41, "1K/1K", 1.136),
    ("mvmul", 3.3e6, 0.37, "17K/1K", 0.154),
];

/// Figure 5's reading: non-linear gates per thread for 90 % efficiency.
const PAPER_GATES_PER_THREAD_FOR_90: f64 = 512.0;

/// Runs `tessera bench paper ultrasfe`.
pub fn run(args: &UltrasfeArgs) -> Result<(), CliError> {
    if args.tables.contains(&2) {
        table2(args)?;
    }
    if args.tables.contains(&5) {
        if args.threads.first() != Some(&1) {
            return Err(CliError::Usage(
                "--threads: Figure 5's efficiencies are against one thread, so the list starts with 1"
                    .into(),
            ));
        }
        figure5(args)?;
    }
    Ok(())
}

/// One circuit garbled at each of `threads` by FGP: the engine's rates per thread count.
fn garble(
    args: &UltrasfeArgs,
    circuit: &tessera_circuit::Circuit,
    threads: &[u32],
) -> Result<Vec<super::super::garble::Rates>, CliError> {
    args.scheme.visit(MeasureScheme {
        common: &args.common,
        repeat: None,
        circuit,
        batching: Batching::default_for(circuit),
        backend: Backend::active(),
        threads,
        strategy: Strategy::Fgp,
    })
}

/// Table 2: each circuit's size and sequential garbling time beside the paper's.
fn table2(args: &UltrasfeArgs) -> Result<(), CliError> {
    let json = args.common.json;
    if !json {
        println!(
            "UltraSFE Table 2: the paper's parameters, ours (Tessera's circuits) against the paper's (CBMC-GC's; its non-linear gates are its gates times its share), one thread, {}",
            args.scheme.name()
        );
        println!(
            "{:<14} {:>11} {:>11} {:>6} {:>6} {:>10} {:>10} | {:>12} {:>8} {:>9} {:>7} | {:>9} {:>9} {:>7}",
            "circuit",
            "gates",
            "paper",
            "AND %",
            "paper",
            "AND",
            "paper",
            "inputs",
            "paper",
            "garble s",
            "paper",
            "M AND/s",
            "paper",
            "×"
        );
    }
    for (name, paper_gates, paper_share, paper_inputs, paper_s) in PAPER_TABLE2 {
        let circuit = builtin(name).ok_or_else(|| CliError::Usage(format!("no {name}")))??;
        let counts = gate_counts(&circuit);
        let gates = circuit.gates.len();
        let rates = garble(args, &circuit, &[1])?.swap_remove(0);
        let and = counts.and as f64;
        // The AND gates at the median rate (the statistics are the rates').
        let seconds = and / rates.garble_rate;
        let paper_rate = paper_gates * paper_share / paper_s;
        let inputs = format!("{}/{}", circuit.inputs[0], circuit.inputs[1]);
        if json {
            emit(json!({
                "bench": "paper", "paper": "ultrasfe", "table": 2, "circuit": name,
                "gates": gates, "and_gates": counts.and, "xor_gates": counts.xor,
                "non_linear_share": and / gates as f64, "input_bits": [circuit.inputs[0], circuit.inputs[1]],
                "garble_seconds": seconds, "garble_and_per_sec": rates.garble_rate,
                "garble_and_per_sec_stats": rates.rate_stats[0],
                "paper_gates": paper_gates, "paper_non_linear_share": paper_share,
                "paper_non_linear_gates": paper_gates * paper_share, "paper_inputs": paper_inputs,
                "paper_garble_seconds": paper_s, "paper_non_linear_per_sec": paper_rate,
                "paper_over_ours_seconds": paper_over_ours(Some(paper_s), seconds),
                "ours_over_paper_non_linear_per_sec": rates.garble_rate / paper_rate,
            }));
        } else {
            println!(
                "{:<14} {:>11} {:>11.0} {:>5.1}% {:>5.0}% {:>10} {:>10.0} | {:>12} {:>8} {:>9.3} {:>7.3} | {:>9.1} {:>9.1} {:>7.2}",
                name,
                gates,
                paper_gates,
                100.0 * and / gates as f64,
                100.0 * paper_share,
                counts.and,
                paper_gates * paper_share,
                inputs,
                paper_inputs,
                seconds,
                paper_s,
                rates.garble_rate / 1e6,
                paper_rate / 1e6,
                rates.garble_rate / paper_rate,
            );
        }
    }
    Ok(())
}

/// Figure 5: FGP's efficiency per level width and thread count.
fn figure5(args: &UltrasfeArgs) -> Result<(), CliError> {
    let json = args.common.json;
    if !json {
        println!(
            "UltraSFE Figure 5: FGP efficiency (speed-up over one thread / threads), depth {LEVELS_DEPTH}, {}; paper: about {PAPER_GATES_PER_THREAD_FOR_90} gates per thread for 0.9",
            args.scheme.name()
        );
        println!(
            "{:>6} {:>8} {:>10} {:>12} {:>9} {:>10}",
            "width", "threads", "per thread", "M AND/s", "speed-up", "efficiency"
        );
    }
    for &w in &args.widths {
        let name = format!("levels{w}");
        let circuit = builtin(&name).ok_or_else(|| CliError::Usage(format!("no {name}")))??;
        let rates = garble(args, &circuit, &args.threads)?;
        for (r, &t) in rates.iter().zip(&args.threads) {
            let speedup = r.speedup[0];
            let efficiency = speedup / f64::from(t);
            let per_thread = f64::from(w) / f64::from(t);
            let paper = (t > 1 && per_thread >= PAPER_GATES_PER_THREAD_FOR_90).then_some(0.9);
            if json {
                emit(json!({
                    "bench": "paper", "paper": "ultrasfe", "figure": 5, "width": w,
                    "depth": LEVELS_DEPTH, "threads": t, "gates_per_thread": per_thread,
                    "garble_and_per_sec": r.garble_rate,
                    "garble_and_per_sec_stats": r.rate_stats[0],
                    "garble_speedup": speedup, "garble_efficiency": efficiency,
                    "paper_efficiency_at_least": paper,
                }));
            } else {
                println!(
                    "{:>6} {:>8} {:>10.0} {:>12.1} {:>9.2} {:>10.2}{}",
                    w,
                    t,
                    per_thread,
                    r.garble_rate / 1e6,
                    speedup,
                    efficiency,
                    paper.map_or(String::new(), |p| format!(
                        "  (paper ≥ {})",
                        figure(Some(p), 1)
                    ))
                );
            }
        }
    }
    Ok(())
}
