//! `tessera bench paper ...`: a source paper's tables run on this machine on the work the paper
//! ran, each figure printed beside the paper's published one with their ratio (issue 48; the
//! papers are mapped in `shared/seeds/INDEX.md`).

mod minimac;
mod motion2nx;
mod ultrasfe;
mod vasa;

use super::SampleStats;
use crate::CliError;
use clap::Subcommand;
use serde_json::Value;

/// Which paper's tables to reproduce.
#[derive(Subcommand)]
pub enum PaperCommand {
    /// VASA (ACSAC 2021, seed 000): Table 8 (ABY's AES ×65, SHA-1 ×63, SCS-PSI and
    /// Phasing-PSI garbled and evaluated per scheme, unbatched reference, AES-NI and VAES),
    /// Table 4 (its geometric means and VAES's improvement) and Table 5 (10 million OTs of
    /// IKNP, ALSZ and Ferret, AES-NI against VAES).
    Vasa(vasa::VasaArgs),
    /// UltraSFE (USENIX Security 2015, seed 002): Table 2 (BioMatch, MExp and MVMul at the
    /// paper's parameters: size, inputs and sequential garbling time) and Figure 5 (FGP's
    /// efficiency per level width at each of `--threads`).
    Ultrasfe(ultrasfe::UltrasfeArgs),
    /// Fast oblivious AES with MiniMac (seed 004): Fig. 2, the latency and time per block of
    /// Protocols 1-3 with and without the key expansion, and the pre-processed bytes per party.
    Minimac(minimac::MinimacArgs),
    /// MOTION2NX (seed 003): Tables 1-3, CryptoNets and MiniONN's MNIST network (setup and
    /// online) and MiniONN's CIFAR-10 network (online, ℓ = 32 and 64) per protocol pair, on
    /// each of `--nets` for the paper's LAN and WAN.
    Motion2nx(motion2nx::Motion2nxArgs),
}

/// Runs a `bench paper` subcommand.
pub fn run(cmd: PaperCommand) -> Result<(), CliError> {
    match cmd {
        PaperCommand::Vasa(args) => vasa::run(&args),
        PaperCommand::Ultrasfe(args) => ultrasfe::run(&args),
        PaperCommand::Minimac(args) => minimac::run(&args),
        PaperCommand::Motion2nx(args) => motion2nx::run(&args),
    }
}

/// The ratio of the paper's figure to ours where both exist: above 1, Tessera is faster (for
/// times) by that factor.
fn paper_over_ours(paper: Option<f64>, ours: f64) -> Option<f64> {
    paper.filter(|p| *p > 0.0 && ours > 0.0).map(|p| p / ours)
}

/// A cell of a printed table: the value with `digits` decimals, or `-` where there is none.
fn figure(v: Option<f64>, digits: usize) -> String {
    v.filter(|v| v.is_finite())
        .map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
}

/// The geometric mean of `values` (VASA Table 4's summary of Table 8).
fn geomean(values: &[f64]) -> f64 {
    let n = values.len().max(1) as f64;
    (values.iter().map(|v| v.ln()).sum::<f64>() / n).exp()
}

/// VASA's "Improv%": how much faster `faster` is than `slower`, in percent (times).
fn improvement_pct(slower: f64, faster: f64) -> f64 {
    (slower / faster - 1.0) * 100.0
}

/// Runs this binary with `args` (and the environment variables `env`) in a child process, as
/// the tables run the benchmark that measures a row: the JSON lines it printed, or an error
/// naming the command and what it said on standard error.
fn child_lines(args: &[String], env: &[(&str, &str)]) -> Result<Vec<Value>, CliError> {
    let out = std::process::Command::new(std::env::current_exe()?)
        .args(args)
        .envs(env.iter().copied())
        .output()?;
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    if !out.status.success() || lines.is_empty() {
        return Err(CliError::Usage(format!(
            "tessera {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(lines)
}

/// The sample statistics a child's JSON line gives under `key`.
fn stats_in(line: &Value, key: &str) -> Result<SampleStats, CliError> {
    serde_json::from_value(line[key].clone())
        .map_err(|_| CliError::Usage(format!("the benchmark printed no {key}")))
}

/// Owned command-line words.
fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| (*s).to_owned()).collect()
}
