//! `tessera relay`: the link emulator of `tessera_net::relay` as a command, for any TCP
//! program (Tessera or not): a one-way delay and a bandwidth per direction.

use crate::CliError;
use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use serde_json::json;
use std::time::{Duration, Instant};
use tessera_net::relay::{ALIASES, LinkSpec, PROFILES, Profile, Relay, RelayStats, profile};
use tessera_net::tcp;

/// Options of `tessera relay`.
#[derive(Args)]
pub struct RelayArgs {
    /// The address to listen on (`127.0.0.1:0` picks a port, printed on stderr).
    #[arg(long)]
    listen: String,
    /// The address every accepted connection is forwarded to.
    #[arg(long)]
    to: String,
    /// A named network condition (each direction); see the values.
    #[arg(long, conflicts_with_all = ["delay_ms", "rate_mbit"], value_parser = profiles())]
    profile: Option<Profile>,
    /// The one-way delay added to each direction, in milliseconds.
    #[arg(long)]
    delay_ms: Option<f64>,
    /// Each direction's bandwidth in Mbit/s (default: no limit).
    #[arg(long)]
    rate_mbit: Option<f64>,
    /// Stop after this many seconds and print the counters (default: run until killed).
    #[arg(long)]
    max_seconds: Option<u64>,
    /// Stop once this many connections have been accepted and have closed, and print the
    /// counters: a run of a program through the relay, measured (at most `--max-seconds`).
    #[arg(long, value_name = "CONNECTIONS", value_parser = clap::value_parser!(u64).range(1..))]
    stop_after: Option<u64>,
    /// The counters as one JSON object when it stops.
    #[arg(long)]
    json: bool,
}

/// `--profile`'s values, with their sources as help, from the one list of profiles.
pub(crate) fn profiles() -> impl TypedValueParser<Value = Profile> {
    let names = PROFILES
        .iter()
        .map(|p| PossibleValue::new(p.name).help(p.source))
        .chain(
            ALIASES
                .iter()
                .map(|(a, p)| PossibleValue::new(*a).help(format!("the same as {p}"))),
        );
    PossibleValuesParser::new(names)
        .try_map(|name| profile(&name).ok_or_else(|| format!("no profile {name}")))
}

/// The link `args` asks for.
fn link(args: &RelayArgs) -> Result<LinkSpec, CliError> {
    if let Some(p) = args.profile {
        return Ok(p.link);
    }
    let delay = args.delay_ms.unwrap_or(0.0);
    if !(0.0..=60_000.0).contains(&delay) {
        return Err(CliError::Usage(format!(
            "--delay-ms {delay}: 0 to 60000 milliseconds"
        )));
    }
    let rate = match args.rate_mbit {
        None => None,
        Some(r) if r.is_finite() && r > 0.0 && r <= 1e6 => Some((r * 1e6) as u64),
        Some(r) => {
            return Err(CliError::Usage(format!(
                "--rate-mbit {r}: more than 0 and at most 10^6 Mbit/s"
            )));
        }
    };
    Ok(LinkSpec {
        delay: Duration::from_secs_f64(delay / 1e3),
        rate_bps: rate,
    })
}

/// Runs `tessera relay`.
pub fn run(args: &RelayArgs) -> Result<(), CliError> {
    let link = link(args)?;
    let listener = tcp::listen(&args.listen)?;
    let relay = Relay::start(listener, &args.to, link)
        .map_err(|e| CliError::Usage(format!("--to {}: {e}", args.to)))?;
    eprintln!(
        "tessera: relay listening on {} for {} ({:.3} ms one way, {})",
        relay.local_addr(),
        args.to,
        link.delay.as_secs_f64() * 1e3,
        link.rate_bps
            .map_or("no rate limit".to_owned(), |r| format!(
                "{} Mbit/s",
                r as f64 / 1e6
            ))
    );
    wait_for_stop(args, &relay);
    report(args, link, &relay.stop());
    Ok(())
}

/// How often the counters are looked at for `--stop-after`.
const POLL: Duration = Duration::from_millis(20);

/// Returns when `--max-seconds` have passed or `--stop-after` connections have closed; never
/// without either.
fn wait_for_stop(args: &RelayArgs, relay: &Relay) {
    if args.max_seconds.is_none() && args.stop_after.is_none() {
        loop {
            std::thread::park();
        }
    }
    // A deadline past what the clock can hold is no deadline.
    let deadline = args
        .max_seconds
        .and_then(|s| Instant::now().checked_add(Duration::from_secs(s)));
    loop {
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d)
            || args.stop_after.is_some_and(|n| relay.stats().closed >= n)
        {
            return;
        }
        let left = deadline.map_or(POLL, |d| d - now);
        std::thread::sleep(left.min(POLL));
    }
}

fn report(args: &RelayArgs, link: LinkSpec, s: &RelayStats) {
    if args.json {
        println!(
            "{}",
            json!({
                "profile": args.profile.map(|p| p.name),
                "delay_ms": link.delay.as_secs_f64() * 1e3,
                "rate_mbit": link.rate_bps.map(|r| r as f64 / 1e6),
                "connections": s.connections,
                "closed": s.closed,
                "forward": s.forward,
                "backward": s.backward,
            })
        );
    } else {
        for (dir, d) in [("forward", s.forward), ("backward", s.backward)] {
            println!(
                "{dir}: {} bytes in {} chunks, at most {} bytes buffered",
                d.bytes, d.chunks, d.peak_buffered
            );
        }
        println!("{} connections, {} closed", s.connections, s.closed);
    }
}
