//! `tessera bench vasa`: VASA's Table 8 (ACSAC 2021, §5.2) on Tessera:
//! garbling and evaluation time of AES-128 ×65, SHA-1 ×63, SCS-PSI and Phasing-PSI for every
//! garbling scheme and AES backend, with the geometric mean over the four circuits (Table 4's
//! layout). Each line also gives the time the scheme's AES work takes at the backend's
//! roofline measured in the same run (`*_roofline_ratio`: measured over that bound), and the
//! paper's VAES figure for the same cell. Every circuit's garbled output is checked against
//! its plaintext evaluation before timing.

use super::local::LocalRun;
use super::{CommonArgs, cpu_model, measure, roofline_rate};
use crate::CliError;
use clap::Args;
use serde_json::json;
use tessera_circuit::library::vasa::{self, Benchmark};
use tessera_core::{Backend, Prg};
use tessera_garble::{Batching, Scheme, SchemeKind, SchemeVisitor, table_blocks};

/// Options of `tessera bench vasa`.
#[derive(Args)]
pub struct VasaArgs {
    #[command(flatten)]
    common: CommonArgs,
    #[arg(long, default_value = "all", value_parser = crate::schemes::list, help = crate::schemes::list_help())]
    scheme: std::vec::Vec<SchemeKind>,
    /// AES backends, comma-separated, or `hardware` (every one this CPU has but portable).
    #[arg(long, default_value = "hardware")]
    backend: String,
    /// Circuits, comma-separated (aes128x65, sha1x63, scs-psi, phasing-psi), or `all`.
    #[arg(long, default_value = "all")]
    circuit: String,
}

/// VASA Table 8, VAES rows: (circuit, scheme, garbling ms, evaluation ms).
const PAPER_VAES_MS: [(&str, &str, f64, f64); 16] = [
    ("aes128x65", "prp", 16.6, 8.6),
    ("aes128x65", "mi", 19.0, 11.7),
    ("aes128x65", "circ", 20.8, 10.2),
    ("aes128x65", "prf", 66.2, 25.1),
    ("sha1x63", "prp", 69.8, 38.2),
    ("sha1x63", "mi", 79.3, 51.5),
    ("sha1x63", "circ", 87.9, 52.3),
    ("sha1x63", "prf", 378.3, 151.3),
    ("scs-psi", "prp", 63.9, 33.1),
    ("scs-psi", "mi", 74.2, 43.5),
    ("scs-psi", "circ", 79.7, 41.9),
    ("scs-psi", "prf", 192.7, 78.0),
    ("phasing-psi", "prp", 25.3, 25.0),
    ("phasing-psi", "mi", 26.1, 28.4),
    ("phasing-psi", "circ", 30.7, 31.1),
    ("phasing-psi", "prf", 59.6, 41.0),
];

fn paper(circuit: &str, scheme: SchemeKind) -> Option<(f64, f64)> {
    PAPER_VAES_MS
        .iter()
        .find(|(c, s, _, _)| *c == circuit && *s == scheme.name())
        .map(|&(_, _, g, e)| (g, e))
}

/// One cell of the table.
struct Cell {
    garble_ms: f64,
    eval_ms: f64,
    and_gates: usize,
    xor_gates: usize,
    table_bytes: usize,
}

/// One cell: a benchmark circuit with one scheme on one backend.
struct MeasureCell<'a> {
    common: &'a CommonArgs,
    benchmark: &'a Benchmark,
    backend: Backend,
}

impl SchemeVisitor for MeasureCell<'_> {
    type Output = Result<Cell, CliError>;
    fn visit<S: Scheme>(self) -> Result<Cell, CliError> {
        measure_cell::<S>(self)
    }
}

fn measure_cell<S: Scheme>(m: MeasureCell<'_>) -> Result<Cell, CliError> {
    let MeasureCell {
        common,
        benchmark: b,
        backend,
    } = m;
    let bits = b.inputs.concat();
    // `LocalRun` checks the garbled output against plaintext; the error names the circuit.
    let mut local = LocalRun::<S>::new(
        &b.circuit,
        Batching::default_for(&b.circuit),
        backend,
        &bits,
    )
    .map_err(|e| match e {
        CliError::Usage(m) => CliError::Usage(format!("{}: {m}", b.name)),
        e => e,
    })?;
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
            table_bytes: 16 * table_blocks::<S>(local.plan()),
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
        benchmarks.push(b);
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
            for b in &benchmarks {
                let cell = scheme.visit(MeasureCell {
                    common: c,
                    benchmark: b,
                    backend,
                })?;
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
