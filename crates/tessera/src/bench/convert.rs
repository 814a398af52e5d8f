//! `tessera bench convert`: every conversion among the five sharings of hybrid programs
//! (Y, B, A, β, α) on `count` values of `bits` bits between two threads over loopback TCP, and
//! for reference 32-bit MUL in A and α. Per row: the median over the samples of the setup and of
//! the conversion's online operations (after a barrier that follows the inputs, so neither the
//! input's sharing nor a peer still busy with it is counted; the output's opening is left out
//! too), their bytes and rounds, and values per second online; every output is checked against
//! the input.

use super::{Exchange, NetCondition, SampleStats, cpu_model, emit, loopback};
use crate::CliError;
use serde_json::json;
use std::thread;
use std::time::Instant;
use tessera_core::{Backend, Prg};
use tessera_net::{Network, Stats};
use tessera_protocols::hybrid::{Kind, Plain, Program, Reveal, Sharing, Step, Type, route};
use tessera_protocols::{Session, SessionConfig};

/// Options of `tessera bench convert`.
#[derive(clap::Args)]
pub struct ConvertArgs {
    /// Values per conversion (SIMD copies).
    #[arg(long, default_value_t = 1 << 16, value_parser = clap::value_parser!(u32).range(1..=1 << 24))]
    count: u32,
    /// Bits per value: 8, 16, 32 or 64.
    #[arg(long, default_value_t = 32, value_parser = parse_bits)]
    bits: u32,
    /// Timed executions per row after one warm-up; medians are reported.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    samples: u32,
    /// One JSON object per line instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    net: NetCondition,
}

fn parse_bits(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(b) if [8, 16, 32, 64].contains(&b) => Ok(b),
        _ => Err(format!("{s}: bits must be 8, 16, 32 or 64")),
    }
}

/// One row: a conversion `from → to`, or MUL in `from` (`to` = None).
#[derive(Clone, Copy)]
struct Row {
    from: Sharing,
    to: Option<Sharing>,
}

impl Row {
    fn all() -> Vec<Row> {
        let mut rows: Vec<Row> = Sharing::ALL
            .into_iter()
            .flat_map(|from| {
                Sharing::ALL
                    .into_iter()
                    .filter(move |&to| to != from)
                    .map(move |to| Row { from, to: Some(to) })
            })
            .collect();
        rows.extend([Sharing::A, Sharing::Alpha].map(|from| Row { from, to: None }));
        rows
    }

    fn name(self) -> String {
        match self.to {
            Some(to) => format!("{} → {}", self.from.name(), to.name()),
            None => format!("mul {}", self.from.name()),
        }
    }

    fn ty(sharing: Sharing, bits: u32, n: usize) -> Type {
        let kind = if sharing.is_boolean() {
            Kind::Bits(bits)
        } else {
            Kind::Ring(bits)
        };
        Type { sharing, kind, n }
    }

    /// The program and its input values (party 0's, then party 1's if any).
    fn program(
        self,
        bits: u32,
        n: usize,
    ) -> Result<(Program, Vec<tessera_protocols::hybrid::Value>), CliError> {
        let mut p = Program::new();
        let t = Self::ty(self.from, bits, n);
        let x = p.input(0, t)?;
        match self.to {
            Some(to) => {
                p.barrier();
                let y = p.convert(x, to)?;
                p.output(y, Reveal::Both)?;
                Ok((p, vec![x]))
            }
            None => {
                let y = p.input(1, t)?;
                p.barrier();
                let z = p.mul(x, y)?;
                p.output(z, Reveal::Both)?;
                Ok((p, vec![x, y]))
            }
        }
    }
}

fn plain(sharing: Sharing, bits: u32, v: &[u64]) -> Plain {
    if sharing.is_boolean() {
        Plain::Bits(
            v.iter()
                .map(|&x| (0..bits).map(|j| (x >> j) & 1 == 1).collect())
                .collect(),
        )
    } else {
        Plain::Ring(v.to_vec())
    }
}

/// One timed execution at party 0: setup time and traffic, then the online steps.
struct Sample {
    setup_ms: f64,
    setup: Stats,
    steps: Vec<Step>,
}

/// One party's run over all rows; party 0 returns the samples per row.
fn party(
    net: Network,
    rows: &[Row],
    args: &ConvertArgs,
    values: &[[Vec<u64>; 2]],
) -> Result<Vec<Vec<Sample>>, CliError> {
    let side = net.id();
    let peer = 1 - side;
    let n = args.count as usize;
    let mut s = Session::new(net, SessionConfig::default())?;
    let mut all = Vec::with_capacity(rows.len());
    for (row, v) in rows.iter().zip(values) {
        let (p, inputs) = row.program(args.bits, n)?;
        let mine: Vec<(tessera_protocols::hybrid::Value, Plain)> = inputs
            .get(side)
            .map(|&x| vec![(x, plain(row.from, args.bits, &v[side]))])
            .unwrap_or_default();
        let expect = match row.to {
            Some(to) => plain(to, args.bits, &v[0]),
            None => {
                let m = if args.bits == 64 {
                    !0
                } else {
                    (1u64 << args.bits) - 1
                };
                let prod: Vec<u64> = v[0]
                    .iter()
                    .zip(&v[1])
                    .map(|(a, b)| a.wrapping_mul(*b) & m)
                    .collect();
                plain(row.from, args.bits, &prod)
            }
        };
        let mut samples = Vec::new();
        for _ in 0..=args.samples {
            let (t, before) = (Instant::now(), s.network().stats());
            let prepared = p.setup(&mut s, peer)?;
            let setup_ms = t.elapsed().as_secs_f64() * 1e3;
            let setup = s.network().stats().since(&before);
            let (out, steps) = p.online_steps(&mut s, peer, prepared, &mine)?;
            if out.first().cloned().flatten() != Some(expect.clone()) {
                return Err(CliError::Usage(format!(
                    "{}: the output differs from the input",
                    row.name()
                )));
            }
            samples.push(Sample {
                setup_ms,
                setup,
                steps,
            });
        }
        // The first is the warm-up.
        samples.remove(0);
        all.push(samples);
    }
    Ok(all)
}

/// Runs `tessera bench convert`.
pub fn run(args: &ConvertArgs) -> Result<(), CliError> {
    let rows = Row::all();
    let n = args.count as usize;
    let mut prg = Prg::from_os()?;
    let m = if args.bits == 64 {
        !0
    } else {
        (1u64 << args.bits) - 1
    };
    let values: Vec<[Vec<u64>; 2]> = rows
        .iter()
        .map(|_| [0, 1].map(|_| (0..n).map(|_| prg.random_block().low() & m).collect()))
        .collect();
    let ((n0, n1), wire) = loopback(args.net)?;
    let results = thread::scope(|scope| {
        let other = scope.spawn(|| party(n1, &rows, args, &values));
        let mine = party(n0, &rows, args, &values);
        let theirs = other
            .join()
            .map_err(|_| CliError::Usage("party 1 panicked".into()))?;
        Ok::<_, CliError>((mine?, theirs?))
    })?;
    for ((row, samples), their) in rows.iter().zip(&results.0).zip(&results.1) {
        // The operations between the barrier after the inputs and the output.
        let inner = |s: &Sample| -> Vec<Step> {
            let k = s.steps.len();
            let skip = if row.to.is_some() { 2 } else { 3 };
            s.steps[skip..k - 1].to_vec()
        };
        let online_stats = SampleStats::of(
            samples
                .iter()
                .map(|s| inner(s).iter().map(|st| st.ms).sum()),
        );
        let online_ms = online_stats.median;
        let bytes: u64 = inner(&samples[0])
            .iter()
            .map(|st| st.traffic.bytes_sent + st.traffic.bytes_received)
            .sum();
        let waits = |s: &Sample| -> usize { inner(s).iter().map(|st| st.waits).sum() };
        let rounds = waits(&samples[0]);
        // The online steps' traffic at one party, summed.
        let online = |s: &Sample| -> Stats { inner(s).iter().map(|st| st.traffic).sum::<Stats>() };
        let online_exchange = Exchange {
            rounds: rounds.max(waits(&their[0])) as f64,
            ..Exchange::of_pair(&online(&samples[0]), &online(&their[0]))
        };
        let setup = samples[0].setup;
        let setup_exchange = Exchange::of_pair(&setup, &their[0].setup);
        let setup_bytes = setup.bytes_sent + setup.bytes_received;
        let setup_stats = SampleStats::of(samples.iter().map(|s| s.setup_ms));
        let setup_ms = setup_stats.median;
        let path: Vec<&str> = match row.to {
            Some(to) => std::iter::once(row.from)
                .chain(route(row.from, to).iter().copied())
                .map(Sharing::name)
                .collect(),
            None => vec![row.from.name()],
        };
        let per_s = n as f64 / (online_ms / 1e3).max(1e-12);
        let mut v = json!({
            "conversion": row.name(),
            "from": row.from.name(),
            "to": row.to.map(Sharing::name),
            "route": path,
            "count": n,
            "bits": args.bits,
            "samples": samples.len(),
            "online_ms": online_ms,
            "online_ms_stats": online_stats,
            "values_per_s": per_s,
            "online_bytes": bytes,
            "online_bytes_per_value": bytes as f64 / n as f64,
            "online_rounds": rounds,
            "setup_ms": setup_ms,
            "setup_ms_stats": setup_stats,
            "setup_bytes": setup_bytes,
            "backend": Backend::active().name(),
            "cpu": cpu_model(),
        });
        wire.describe(&mut v);
        let judged = wire.judge(&mut v, "online", online_ms, online_exchange)
            + &wire.judge(&mut v, "setup", setup_ms, setup_exchange);
        if args.json {
            emit(v);
        } else {
            println!(
                "{:<14} via {:<22} online {online_ms:9.3} ms {per_s:12.0} values/s {:>10} B {rounds:>3} rounds | setup {setup_ms:9.2} ms {:>11} B{judged}",
                row.name(),
                path.join(" → "),
                bytes,
                setup_bytes
            );
        }
    }
    Ok(())
}
