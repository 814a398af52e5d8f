//! `tessera bench vasa`: VASA's Table 8 (seed `000_43950d4e73a4a867.txt`, §5.2) on Tessera:
//! garbling and evaluation time of AES-128 ×65, SHA-1 ×63, SCS-PSI and Phasing-PSI for every
//! garbling scheme and AES backend, with the geometric mean over the four circuits (Table 4's
//! layout). Each line also gives the time the scheme's AES work takes at the backend's
//! roofline measured in the same run (`*_roofline_ratio`: measured over that bound), and the
//! paper's VAES figure for the same cell. Every circuit's garbled output is checked against
//! its plaintext evaluation before timing.

use super::local::{LocalRun, parse_schemes, with_scheme};
use super::{CommonArgs, cpu_model, measure, roofline_rate};
use crate::CliError;
use clap::Args;
use serde_json::json;
use tessera_circuit::eval::evaluate;
use tessera_circuit::library::vasa::{self, Benchmark};
use tessera_core::{Backend, Prg};
use tessera_garble::{Batching, Scheme, SchemeKind};

/// Options of `tessera bench vasa`.
#[derive(Args)]
pub struct VasaArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Garbling schemes, comma-separated (prp, mi, circ, prf, 3h), or `all`.
    #[arg(long, default_value = "all", value_parser = parse_schemes)]
    scheme: std::vec::Vec<SchemeKind>,
    /// AES backends, comma-separated, or `hardware` (every one this CPU has but portable).
    #[arg(long, default_value = "hardware")]
    backend: String,
    /// Circuits, comma-separated (aes128x65, sha1x63, scs-psi, phasing-psi), or `all`.
    #[arg(long, default_value = "all")]
    circuit: String,
}

/// VASA Table 8, VAES rows: (garbling, evaluation) ms per circuit, schemes PRP, MI, CIRC, PRF.
const PAPER_VAES_MS: [(&str, [f64; 4], [f64; 4]); 4] = [
    (
        "aes128x65",
        [16.6, 19.0, 20.8, 66.2],
        [8.6, 11.7, 10.2, 25.1],
    ),
    (
        "sha1x63",
        [69.8, 79.3, 87.9, 378.3],
        [38.2, 51.5, 52.3, 151.3],
    ),
    (
        "scs-psi",
        [63.9, 74.2, 79.7, 192.7],
        [33.1, 43.5, 41.9, 78.0],
    ),
    (
        "phasing-psi",
        [25.3, 26.1, 30.7, 59.6],
        [25.0, 28.4, 31.1, 41.0],
    ),
];

fn paper(circuit: &str, scheme: SchemeKind) -> Option<(f64, f64)> {
    let k = SchemeKind::ALL.iter().position(|&s| s == scheme)?;
    PAPER_VAES_MS
        .iter()
        .find(|(c, _, _)| *c == circuit)
        .and_then(|(_, g, e)| Some((*g.get(k)?, *e.get(k)?)))
}

/// One cell of the table.
struct Cell {
    garble_ms: f64,
    eval_ms: f64,
    and_gates: usize,
    xor_gates: usize,
    table_bytes: usize,
}

fn measure_cell<S: Scheme + Clone>(
    common: &CommonArgs,
    b: &Benchmark,
    backend: Backend,
    expect: &[bool],
) -> Result<Cell, CliError> {
    let bits = b.inputs.concat();
    let mut local = LocalRun::<S>::new(
        &b.circuit,
        Batching::default_for(&b.circuit),
        backend,
        &bits,
    )?;
    if local.output()? != expect {
        return Err(CliError::Usage(format!(
            "{} with {} on {backend}: the garbled output differs from plaintext",
            b.name,
            S::NAME
        )));
    }
    let stats = local.plan().stats();
    let mut failure = None;
    let garble = measure(common, 1.0, || {
        if let Err(e) = local.garble() {
            failure = Some(e);
        }
    });
    let eval = measure(common, 1.0, || {
        if let Err(e) = local.evaluate() {
            failure = Some(e);
        }
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(Cell {
            garble_ms: 1e3 / garble,
            eval_ms: 1e3 / eval,
            and_gates: stats.and_gates,
            xor_gates: stats.xor_gates,
            table_bytes: 16 * local.plan().table_blocks::<S>(),
        }),
    }
}

/// Runs `tessera bench vasa`.
pub fn run(args: &VasaArgs) -> Result<(), CliError> {
    let c = &args.common;
    let backends: Vec<Backend> = if args.backend == "hardware" {
        Backend::available()
            .into_iter()
            .filter(|&b| b != Backend::Portable)
            .collect()
    } else {
        args.backend
            .split(',')
            .map(|b| b.parse().map_err(CliError::from))
            .collect::<Result<_, _>>()?
    };
    let names: Vec<&str> = if args.circuit == "all" {
        vasa::NAMES.to_vec()
    } else {
        args.circuit.split(',').collect()
    };
    let mut prg = Prg::from_os()?;
    let mut benchmarks = Vec::new();
    for name in names {
        let b = vasa::benchmark(name, &mut prg).ok_or_else(|| {
            CliError::Usage(format!("{name} is not one of {}", vasa::NAMES.join(", ")))
        })??;
        let expect = evaluate(&b.circuit, &b.inputs)?.concat();
        benchmarks.push((b, expect));
    }
    if !c.json {
        println!(
            "{:<12} {:<5} {:<8} {:>9} {:>9} {:>9} {:>10} {:>10} {:>7} {:>7} {:>9} {:>9}",
            "circuit",
            "scheme",
            "backend",
            "AND",
            "XOR",
            "table MB",
            "garble ms",
            "eval ms",
            "g/roof",
            "e/roof",
            "paper g",
            "paper e"
        );
    }
    for &backend in &backends {
        let roofline = roofline_rate(c, backend)?;
        for &scheme in &args.scheme {
            let mut logs = (0.0, 0.0);
            for (b, expect) in &benchmarks {
                let cell = with_scheme!(scheme, S => measure_cell::<S>(c, b, backend, expect))?;
                let (g_work, e_work) = scheme.cost().circuit(cell.and_gates, cell.xor_gates);
                let (g_roof, e_roof) = (g_work / roofline * 1e3, e_work / roofline * 1e3);
                let (pg, pe) = paper(b.name, scheme).unzip();
                logs.0 += cell.garble_ms.ln();
                logs.1 += cell.eval_ms.ln();
                let line = json!({
                    "bench": "vasa",
                    "circuit": b.name,
                    "scheme": scheme.name(),
                    "backend": backend.name(),
                    "garble_ms": cell.garble_ms,
                    "eval_ms": cell.eval_ms,
                    "and_gates": cell.and_gates,
                    "xor_gates": cell.xor_gates,
                    "table_bytes": cell.table_bytes,
                    "garble_roofline_ms": g_roof,
                    "eval_roofline_ms": e_roof,
                    "garble_roofline_ratio": cell.garble_ms / g_roof,
                    "eval_roofline_ratio": cell.eval_ms / e_roof,
                    "roofline_blocks_per_sec": roofline.round(),
                    "paper_vaes_garble_ms": pg,
                    "paper_vaes_eval_ms": pe,
                    "cpu": cpu_model(),
                });
                if c.json {
                    println!("{line}");
                } else {
                    println!(
                        "{:<12} {:<5} {:<8} {:>9} {:>9} {:>9.2} {:>10.1} {:>10.1} {:>7.2} {:>7.2} {:>9.1} {:>9.1}",
                        b.name,
                        scheme.name(),
                        backend.name(),
                        cell.and_gates,
                        cell.xor_gates,
                        cell.table_bytes as f64 / 1e6,
                        cell.garble_ms,
                        cell.eval_ms,
                        cell.garble_ms / g_roof,
                        cell.eval_ms / e_roof,
                        pg.unwrap_or(f64::NAN),
                        pe.unwrap_or(f64::NAN),
                    );
                }
            }
            let n = benchmarks.len().max(1) as f64;
            let (g_mean, e_mean) = ((logs.0 / n).exp(), (logs.1 / n).exp());
            if c.json {
                println!(
                    "{}",
                    json!({
                        "bench": "vasa",
                        "circuit": "geomean",
                        "scheme": scheme.name(),
                        "backend": backend.name(),
                        "garble_ms": g_mean,
                        "eval_ms": e_mean,
                        "circuits": benchmarks.len(),
                    })
                );
            } else {
                println!(
                    "{:<12} {:<5} {:<8} {:>9} {:>9} {:>9} {:>10.1} {:>10.1}",
                    "geomean",
                    scheme.name(),
                    backend.name(),
                    "",
                    "",
                    "",
                    g_mean,
                    e_mean
                );
            }
        }
    }
    Ok(())
}
