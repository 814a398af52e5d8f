//! `tessera bench ot`: OT extension and Ferret throughput, both parties in one process over
//! loopback TCP (one thread each), against the loopback bandwidth measured in the same run.

use super::ot_select::{OtSelect, ProtocolArg};
use super::{
    BENCH, CommonArgs, Exchange, NetCondition, SampleStats, annotate_link, emit, loopback,
    loopback_bandwidth,
};
use crate::CliError;
use crate::twoparty::phases_json;
use clap::{Args, ValueEnum};
use serde_json::json;
use std::thread;
use std::time::Instant;
use tessera_core::{Block, Prg};
use tessera_net::{Channel, Kind, PhaseTimer, Spaces, Stats, Traffic};
use tessera_ot::ChoiceBits;
use tessera_ot::OtChoice;

/// Options of `tessera bench ot`.
#[derive(Args)]
pub struct OtArgs {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    ot: OtSelect,
    /// The OT flavour: chosen-message, correlated, random correlated (random choices) or random.
    #[arg(long, value_enum, default_value_t = FlavourArg::All)]
    flavour: FlavourArg,
    /// OTs per timed sample.
    #[arg(long, default_value_t = 1 << 24, value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    count: u64,
    #[command(flatten)]
    net: NetCondition,
}

/// `--flavour`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
enum FlavourArg {
    Ot,
    Cot,
    Rcot,
    Rot,
    All,
}

impl FlavourArg {
    fn name(self) -> &'static str {
        match self {
            FlavourArg::Ot => "ot",
            FlavourArg::Cot => "cot",
            FlavourArg::Rcot => "rcot",
            FlavourArg::Rot => "rot",
            FlavourArg::All => "all",
        }
    }
}

const GO: Kind = Kind::new(0x70, "bench start");
const DONE: Kind = Kind::new(0x71, "bench done");

/// One protocol × flavour: setup, then `samples` timed runs of `count` OTs.
fn measure(
    protocol: OtChoice,
    flavour: FlavourArg,
    count: usize,
    samples: u32,
    net: NetCondition,
) -> Result<serde_json::Value, CliError> {
    let ((mut s_net, mut r_net), wire) = loopback(net)?;
    let receiver = thread::spawn(move || -> Result<[Stats; 2], CliError> {
        let ch = &mut r_net.peer(0);
        let before = ch.traffic();
        let mut r = protocol.receiver(ch, &mut Spaces::default(), Prg::from_os()?)?;
        let after_setup = ch.traffic();
        let mut prg = Prg::from_os()?;
        let choices: ChoiceBits = (0..count).map(|_| prg.random_block().lsb()).collect();
        let choices = choices.as_choices();
        let mut out = vec![Block::ZERO; count];
        for _ in 0..samples {
            ch.recv_bounded(BENCH.tag(GO), 0)?;
            match flavour {
                FlavourArg::Cot => r.receive_correlated(ch, choices, &mut out)?,
                FlavourArg::Rcot => r.receive_random_correlated(ch, &mut out)?,
                FlavourArg::Rot => r.receive_random(ch, choices, &mut out)?,
                _ => r.receive_chosen(ch, choices, &mut out)?,
            }
            ch.send(BENCH.tag(DONE), &[])?;
            ch.flush()?;
        }
        Ok([after_setup.since(&before), ch.traffic().since(&after_setup)])
    });
    let s_ch = &mut s_net.peer(1);
    let timer = PhaseTimer::start("base-ot", s_ch);
    let mut s = protocol.sender(s_ch, &mut Spaces::default(), Prg::from_os()?)?;
    let setup = timer.stop(s_ch);
    let mut prg = Prg::from_os()?;
    let messages: Vec<(Block, Block)> = match flavour {
        FlavourArg::Ot => (0..count)
            .map(|_| (prg.random_block(), prg.random_block()))
            .collect(),
        _ => Vec::new(),
    };
    let correlated = matches!(flavour, FlavourArg::Cot | FlavourArg::Rcot);
    let mut cot = vec![Block::ZERO; if correlated { count } else { 0 }];
    let mut rot =
        vec![(Block::ZERO, Block::ZERO); if flavour == FlavourArg::Rot { count } else { 0 }];
    let mut rates = Vec::new();
    let timer = PhaseTimer::start("extension", s_ch);
    for _ in 0..samples {
        s_ch.send(BENCH.tag(GO), &[])?;
        s_ch.flush()?;
        let t = Instant::now();
        match flavour {
            FlavourArg::Cot => s.send_correlated(s_ch, &mut cot)?,
            FlavourArg::Rcot => s.send_random_correlated(s_ch, &mut cot)?,
            FlavourArg::Rot => s.send_random(s_ch, &mut rot)?,
            _ => s.send_chosen(s_ch, &messages)?,
        }
        s_ch.recv_bounded(BENCH.tag(DONE), 0)?;
        rates.push(count as f64 / t.elapsed().as_secs_f64());
    }
    let extension = timer.stop(s_ch);
    let traffic = extension.traffic;
    let theirs = receiver
        .join()
        .map_err(|_| CliError::Usage("receiver thread panicked".into()))??;
    let rate_stats = SampleStats::of(rates);
    let rate = rate_stats.median;
    let per_run = |v: u64| v / u64::from(samples);
    let mut v = json!({
        "protocol": protocol.name(),
        "flavour": flavour.name(),
        "count": count,
        "ots_per_sec": rate,
        "ots_per_sec_stats": rate_stats,
        "setup_ms": setup.ms,
        "bytes_sent": per_run(traffic.bytes_sent),
        "bytes_received": per_run(traffic.bytes_received),
        "rounds": per_run(traffic.rounds),
        "samples": samples,
    });
    wire.describe(&mut v);
    let setup_exchange = Exchange::of_pair(&setup.traffic, &theirs[0]);
    wire.judge(&mut v, "setup", setup.ms, setup_exchange);
    let sample_ms = count as f64 / rate * 1e3;
    let per_sample = Exchange::of_pair(&traffic, &theirs[1]).per(f64::from(samples));
    wire.judge(&mut v, "sample", sample_ms, per_sample);
    v["phases"] = phases_json(&[setup, extension]);
    Ok(v)
}

/// Runs `tessera bench ot`.
pub fn run(args: &OtArgs) -> Result<(), CliError> {
    let bandwidth = loopback_bandwidth()?;
    let protocols = args.ot.choices(ProtocolArg::All)?;
    let flavours = match args.flavour {
        FlavourArg::All => vec![
            FlavourArg::Ot,
            FlavourArg::Cot,
            FlavourArg::Rcot,
            FlavourArg::Rot,
        ],
        f => vec![f],
    };
    if !args.common.json {
        println!(
            "{:<24} {:<5} {:>10} {:>10} {:>10} {:>14} {:>8} {:>12}",
            "proto", "kind", "count", "M OT/s", "setup ms", "bytes sent", "link", "/net bound"
        );
    }
    for &protocol in &protocols {
        for &flavour in &flavours {
            let (count, samples) = (args.count as usize, args.common.samples);
            let mut v = measure(protocol, flavour, count, samples, args.net)?;
            let rate = v["ots_per_sec"].as_f64().unwrap_or(0.0);
            let (_, link) = annotate_link(&mut v, args.count as f64, rate, bandwidth);
            if args.common.json {
                emit(v);
            } else {
                println!(
                    "{:<24} {:<5} {:>10} {:>10.2} {:>10.2} {:>14} {:>8.2} {:>12}",
                    protocol.name(),
                    flavour.name(),
                    args.count,
                    rate / 1e6,
                    v["setup_ms"].as_f64().unwrap_or(0.0),
                    v["bytes_sent"],
                    link,
                    v["sample_over_net_bound"]
                        .as_f64()
                        .map_or("-".to_owned(), |r| format!("{r:.2}")),
                );
            }
        }
    }
    Ok(())
}
