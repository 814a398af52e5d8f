//! `tessera bench triples`: Boolean, arithmetic and matrix triples between two threads over
//! loopback TCP, each party both OT sender and receiver, against the loopback bandwidth
//! measured in the same run.

use super::ot_select::{OtSelect, ProtocolArg};
use super::{
    BENCH, CommonArgs, Exchange, NetCondition, SampleStats, annotate_link, emit, loopback,
    loopback_bandwidth,
};
use crate::CliError;
use clap::{Args, ValueEnum};
use serde_json::json;
use std::thread;
use std::time::Instant;
use tessera_core::Prg;
use tessera_net::{Channel, Kind, Network, Spaces, Stats, Traffic};
use tessera_ot::OtChoice;
use tessera_ot::triples::{Links, Ring, TripleGenerator};

/// Options of `tessera bench triples`.
#[derive(Args)]
pub struct TriplesArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Which triples.
    #[arg(long, value_enum, default_value_t = KindArg::All)]
    kind: KindArg,
    /// Triples per timed sample (matrix: matrix triples per sample).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    count: Option<u64>,
    /// The matrix shape ROWSxINNERxCOLS: A is ROWS×INNER, B is INNER×COLS.
    #[arg(long, default_value = "128x784x1", value_parser = parse_shape)]
    shape: (usize, usize, usize),
    #[command(flatten)]
    ot: OtSelect,
    #[command(flatten)]
    net: NetCondition,
}

fn parse_shape(s: &str) -> Result<(usize, usize, usize), String> {
    let dims: Vec<usize> = s
        .split('x')
        .map(|d| d.parse::<usize>().map_err(|e| format!("{d:?}: {e}")))
        .collect::<Result<_, _>>()?;
    match dims[..] {
        [r, i, c] if r * i * c > 0 && r * i * c <= 1 << 26 => Ok((r, i, c)),
        _ => Err(format!(
            "{s:?} is not ROWSxINNERxCOLS with 1 to 2^26 entries in all"
        )),
    }
}

/// `--kind`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
enum KindArg {
    Bool,
    Arith8,
    Arith16,
    Arith32,
    Arith64,
    Matrix,
    All,
}

impl KindArg {
    fn name(self) -> &'static str {
        match self {
            KindArg::Bool => "bool",
            KindArg::Arith8 => "arith8",
            KindArg::Arith16 => "arith16",
            KindArg::Arith32 => "arith32",
            KindArg::Arith64 => "arith64",
            KindArg::Matrix => "matrix",
            KindArg::All => "all",
        }
    }

    fn default_count(self) -> u64 {
        match self {
            KindArg::Bool => 1 << 24,
            KindArg::Arith8 | KindArg::Arith16 => 1 << 20,
            KindArg::Arith32 | KindArg::Arith64 => 1 << 18,
            _ => 4,
        }
    }
}

const GO: Kind = Kind::new(0x72, "bench start");

/// One sample's work: `count` triples of `kind`.
fn make(
    g: &mut TripleGenerator,
    links: &mut Links<'_>,
    kind: KindArg,
    count: usize,
    shape: (usize, usize, usize),
) -> Result<(), CliError> {
    fn arith<R: Ring>(
        g: &mut TripleGenerator,
        l: &mut Links<'_>,
        n: usize,
    ) -> Result<(), CliError> {
        g.arithmetic::<R>(l, n)?;
        Ok(())
    }
    match kind {
        KindArg::Bool => {
            g.boolean(links, count)?;
        }
        KindArg::Arith8 => arith::<u8>(g, links, count)?,
        KindArg::Arith16 => arith::<u16>(g, links, count)?,
        KindArg::Arith32 => arith::<u32>(g, links, count)?,
        KindArg::Arith64 => arith::<u64>(g, links, count)?,
        _ => {
            for _ in 0..count {
                g.matrix::<u64>(links, shape)?;
            }
        }
    }
    Ok(())
}

/// One party: OT set-up both ways (party 0 sender first), then `samples` timed rounds.
/// Returns each sample's rate and the traffic of all samples.
fn party(
    net: &mut Network,
    me: usize,
    protocol: OtChoice,
    kind: KindArg,
    count: usize,
    shape: (usize, usize, usize),
    samples: u32,
) -> Result<(Vec<f64>, Stats), CliError> {
    let ch = &mut net.peer(1 - me);
    let mut spaces = Spaces::default();
    let (mut s, mut r) = protocol.pair(ch, &mut spaces, me == 0, &mut Prg::from_os()?)?;
    let mut g = TripleGenerator::new(&mut spaces, me == 0, Prg::from_os()?)?;
    let mut rates = Vec::new();
    let before = ch.traffic();
    for _ in 0..samples {
        // Both start together: party 0 says go, party 1 waits for it.
        if me == 0 {
            ch.send(BENCH.tag(GO), &[])?;
            ch.flush()?;
        } else {
            ch.recv_bounded(BENCH.tag(GO), 0)?;
        }
        let t = Instant::now();
        let mut links = Links {
            channel: ch,
            sender: s.as_mut(),
            receiver: r.as_mut(),
        };
        make(&mut g, &mut links, kind, count, shape)?;
        rates.push(count as f64 / t.elapsed().as_secs_f64());
    }
    Ok((rates, ch.traffic().since(&before)))
}

fn measure_triples(
    protocol: OtChoice,
    kind: KindArg,
    count: usize,
    shape: (usize, usize, usize),
    samples: u32,
    net: NetCondition,
) -> Result<serde_json::Value, CliError> {
    let ((mut a, mut b), wire) = loopback(net)?;
    let other = thread::spawn(move || party(&mut b, 1, protocol, kind, count, shape, samples));
    let (rates, traffic) = party(&mut a, 0, protocol, kind, count, shape, samples)?;
    let (_, theirs) = other
        .join()
        .map_err(|_| CliError::Usage("party 1's thread panicked".into()))??;
    let rate_stats = SampleStats::of(rates);
    let rate = rate_stats.median;
    let per_sample = |v: u64| v / u64::from(samples);
    let mut v = json!({
        "kind": kind.name(),
        "ot": protocol.name(),
        "count": count,
        "shape": if kind == KindArg::Matrix { json!([shape.0, shape.1, shape.2]) } else { json!(null) },
        "triples_per_sec": rate,
        "triples_per_sec_stats": rate_stats,
        "bytes_sent": per_sample(traffic.bytes_sent),
        "bytes_received": per_sample(traffic.bytes_received),
        "samples": samples,
    });
    wire.describe(&mut v);
    let per_sample = Exchange::of_pair(&traffic, &theirs).per(f64::from(samples));
    wire.judge(&mut v, "sample", count as f64 / rate * 1e3, per_sample);
    Ok(v)
}

/// Runs `tessera bench triples`.
pub fn run(args: &TriplesArgs) -> Result<(), CliError> {
    let bandwidth = loopback_bandwidth()?;
    let kinds = match args.kind {
        KindArg::All => vec![
            KindArg::Bool,
            KindArg::Arith8,
            KindArg::Arith16,
            KindArg::Arith32,
            KindArg::Arith64,
            KindArg::Matrix,
        ],
        k => vec![k],
    };
    if !args.common.json {
        println!(
            "{:<8} {:<20} {:>10} {:>14} {:>16} {:>8} {:>12}",
            "kind", "ot", "count", "triples/s", "bytes/triple", "link", "/net bound"
        );
    }
    let protocols = args.ot.choices(ProtocolArg::Softspoken)?;
    for (protocol, kind) in protocols
        .iter()
        .flat_map(|&p| kinds.iter().map(move |&k| (p, k)))
    {
        let count = args.count.unwrap_or(kind.default_count()) as usize;
        let samples = args.common.samples;
        let mut v = measure_triples(protocol, kind, count, args.shape, samples, args.net)?;
        let rate = v["triples_per_sec"].as_f64().unwrap_or(0.0);
        let (per_triple, link) = annotate_link(&mut v, count as f64, rate, bandwidth);
        if args.common.json {
            emit(v);
        } else {
            println!(
                "{:<8} {:<20} {:>10} {:>14.0} {:>16.1} {:>8.2} {:>12}",
                kind.name(),
                protocol.name(),
                count,
                rate,
                per_triple,
                link,
                v["sample_over_net_bound"]
                    .as_f64()
                    .map_or("-".to_owned(), |r| format!("{r:.2}")),
            );
        }
    }
    Ok(())
}
