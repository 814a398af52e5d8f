//! `tessera bench net`: all parties send to all others at once over a loopback TCP (or TLS)
//! mesh in this process, one thread per party; reports the aggregate throughput and what each
//! link carried, beside the bandwidth of one framed stream over loopback measured in the same
//! run. With `--net PROFILE` every connection passes through a relay under the profile, and
//! it reports the one-way delay (half the measured round trip) and each link's throughput
//! beside the profile's settings: the emulator checked, not trusted.

use super::{
    CommonArgs, Exchange, NetCondition, SampleStats, cpu_model, emit, loopback_bandwidth,
    loopback_mesh,
};
use crate::CliError;
use clap::Args;
use serde_json::json;
use std::time::Instant;
use tessera_net::tls::{TlsConfig, keygen};
use tessera_net::{Frame, Kind, Len, Network, Space};

const BENCH: Space = Space::new(1000);
const DATA: Kind = Kind::new(0x70, "bench data");
/// Bytes per message.
const MESSAGE: usize = 1 << 20;

/// Options of `tessera bench net`.
#[derive(Args)]
pub struct NetArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Parties in the mesh.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(2..=64))]
    parties: u16,
    /// Bytes each party sends to each other party per sample (in 1 MiB messages).
    #[arg(long, default_value_t = 64 << 20, value_parser = clap::value_parser!(u64).range(1..=1 << 34))]
    bytes: u64,
    /// Mutually authenticated TLS 1.3 instead of plain TCP.
    #[arg(long)]
    tls: bool,
    #[command(flatten)]
    net: NetCondition,
}

/// One party's part of a sample: send `bytes` to every peer, receive as much from each.
fn exchange(
    net: &mut Network,
    bytes: usize,
    payload: &[u8],
    frame: &mut Frame,
) -> Result<(), CliError> {
    let peers: Vec<usize> = net.peers().collect();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(MESSAGE);
        net.broadcast(BENCH.tag(DATA), &payload[..n])?;
        left -= n;
    }
    for &j in &peers {
        let mut left = bytes;
        while left > 0 {
            let n = left.min(MESSAGE);
            net.recv_frame(j, BENCH.tag(DATA), Len::Exact(n), frame)?;
            left -= n;
        }
    }
    net.flush()?;
    Ok(())
}

/// Keys for every party in a scratch directory, each pinning all the others.
fn tls_configs(n: usize) -> Result<Vec<TlsConfig>, CliError> {
    let dir = std::env::temp_dir().join(format!("tessera-bench-net-{}", std::process::id()));
    let certs = (0..n)
        .map(|i| keygen(&dir.join(i.to_string()), true))
        .collect::<Result<Vec<_>, _>>()?;
    let configs = (0..n)
        .map(|i| {
            let peers: Vec<(usize, &std::path::Path)> = (0..n)
                .filter(|&j| j != i)
                .map(|j| (j, certs[j].as_path()))
                .collect();
            TlsConfig::load(&dir.join(i.to_string()), &peers)
        })
        .collect::<Result<Vec<_>, _>>();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(configs?)
}

/// Runs `tessera bench net`.
pub fn run(args: &NetArgs) -> Result<(), CliError> {
    let n = usize::from(args.parties);
    let bytes = usize::try_from(args.bytes)
        .map_err(|_| CliError::Usage("--bytes is too large for this machine".into()))?;
    let bandwidth = loopback_bandwidth()?;
    let tls = if args.tls {
        Some(tls_configs(n)?)
    } else {
        None
    };
    let (mut nets, wire) = loopback_mesh(n, tls.as_deref(), args.net)?;
    let payload = vec![0xa5u8; MESSAGE.min(bytes)];
    let mut times = Vec::new();
    for _ in 0..args.common.samples {
        let start = Instant::now();
        std::thread::scope(|s| {
            let handles: Vec<_> = nets
                .iter_mut()
                .map(|net| {
                    let payload = &payload;
                    s.spawn(move || exchange(net, bytes, payload, &mut Frame::new()))
                })
                .collect();
            handles.into_iter().try_for_each(|h| {
                h.join()
                    .map_err(|_| CliError::Usage("a party's thread panicked".into()))?
            })
        })?;
        times.push(start.elapsed().as_secs_f64());
    }
    let sample_stats = SampleStats::of(times);
    let median = sample_stats.median;
    let moved = (n * (n - 1) * bytes) as f64;
    let aggregate = moved / median;
    let per_peer: Vec<Vec<u64>> = nets
        .iter()
        .map(|net| (0..n).map(|j| net.peer_stats(j).bytes_sent).collect())
        .collect();
    let mut report = json!({
        "bench": "net",
        "parties": n,
        "tls": args.tls,
        "bytes_per_pair": bytes,
        "samples": args.common.samples,
        "median_s": median,
        "seconds_stats": sample_stats,
        "aggregate_bytes_per_sec": aggregate,
        "per_party_sent_bytes_per_sec": aggregate / n as f64,
        "loopback_bytes_per_sec": bandwidth,
        "aggregate_over_loopback": aggregate / bandwidth,
        "bytes_sent_per_peer": per_peer,
        "cpu": cpu_model(),
    });
    wire.describe(&mut report);
    let link = bytes as f64 / median;
    let checked = args.net.profile.map_or(String::new(), |p| {
        let one_way = wire.rtt_ms() / 2.0;
        let setting = p.link.delay.as_secs_f64() * 1e3;
        report["one_way_ms"] = json!(one_way);
        report["link_bytes_per_sec"] = json!(link);
        let rate = p.link.rate_bps.map(|r| r as f64 / 8.0);
        report["link_over_rate"] = json!(rate.map(|r| link / r));
        // Each party sends to every peer at once, then reads: half a round trip and the bytes.
        let x = Exchange {
            rounds: 0.5,
            busier_bytes: bytes as f64,
        };
        wire.judge(&mut report, "sample", median * 1e3, x)
            + &format!(
                "; {}: one way {one_way:.3} ms (set {setting:.3}), each link {:.1} Mbit/s (set {})",
                p.name,
                link * 8.0 / 1e6,
                rate.map_or("no limit".to_owned(), |r| format!(
                    "{:.0} Mbit/s",
                    r * 8.0 / 1e6
                ))
            )
    });
    if args.common.json {
        emit(report);
    } else {
        println!(
            "{n} parties{}, {} MiB to every peer: {:.2} GB/s in all ({:.2} GB/s sent per party), one loopback stream {:.2} GB/s, ratio {:.2}{checked}",
            if args.tls { " over TLS" } else { "" },
            bytes >> 20,
            aggregate / 1e9,
            aggregate / n as f64 / 1e9,
            bandwidth / 1e9,
            aggregate / bandwidth
        );
    }
    Ok(())
}
