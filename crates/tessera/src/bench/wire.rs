//! The network a benchmark's parties run over: loopback TCP, or with `--net PROFILE` loopback
//! through [`tessera_net::relay`] relays under a profile from the literature (issue 43). Either
//! way the round trip between parties 0 and 1 is measured before the benchmark, and under a
//! profile every reported time is set beside the least time its traffic takes on that link:
//! rounds × the measured round trip + the bytes of the busiest direction / the rate.
//!
//! A round is what [`Stats::rounds`] counts, the times a party started sending after it had
//! received, and the bound takes the most any party counted as round trips. That is exact for
//! protocols that take turns (Yao, OT extension: k turns each way are k round trips); where
//! both parties send at once and then wait for each other (a GMW AND layer) a round costs one
//! one-way delay, so such protocols can come in at half their bound.

use super::{BENCH, PING};
use crate::CliError;
use clap::Args;
use serde_json::json;
use std::time::{Duration, Instant};
use tessera_net::relay::{Profile, Relay};
use tessera_net::{NetConfig, Network, Stats, tcp};

/// Round trips timed (the median is the round trip): at least the first number, and more
/// up to the second while they have taken less than [`PING_TIME`].
const PINGS: (usize, usize) = (9, 201);
const PING_TIME: Duration = Duration::from_millis(100);

/// `--net`: the link between a benchmark's parties.
#[derive(Args, Clone, Copy, Debug, Default)]
pub struct NetCondition {
    /// Run every connection between the parties through a relay under this profile (each
    /// direction; see `tessera relay --help` for the sources), and report each time beside
    /// rounds × the measured round trip + bytes / rate. Default: plain loopback.
    #[arg(long = "net", value_parser = crate::relay::profiles())]
    pub profile: Option<Profile>,
}

/// What a measured piece of work moved, as its bound counts it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Exchange {
    /// Round trips: the most rounds any party counted ([`Stats::rounds`]).
    pub rounds: f64,
    /// The bytes of the busiest direction of any link.
    pub busier_bytes: f64,
}

impl Exchange {
    /// The exchange of two parties whose traffic over the same work was `a` and `b`.
    pub fn of_pair(a: &Stats, b: &Stats) -> Exchange {
        Exchange {
            rounds: a.rounds.max(b.rounds) as f64,
            busier_bytes: a.bytes_sent.max(b.bytes_sent) as f64,
        }
    }

    /// The share of one of `n` equal repetitions.
    pub fn per(self, n: f64) -> Exchange {
        Exchange {
            rounds: self.rounds / n,
            busier_bytes: self.busier_bytes / n,
        }
    }
}

/// The network of a benchmark's mesh: its profile, its measured round trip, and the relays,
/// which must live as long as the mesh's networks are used.
pub struct Wire {
    profile: Option<Profile>,
    rtt: Duration,
    _relays: Vec<Relay>,
}

impl Wire {
    /// The median round trip of an empty message between parties 0 and 1.
    pub fn rtt_ms(&self) -> f64 {
        self.rtt.as_secs_f64() * 1e3
    }

    /// The profile's name, or `loopback`.
    pub fn name(&self) -> &'static str {
        self.profile.map_or("loopback", |p| p.name)
    }

    /// The least time in milliseconds that an exchange takes under the profile: its round
    /// trips and its busiest direction's bytes at the rate; `None` on plain loopback.
    pub fn bound_ms(&self, x: Exchange) -> Option<f64> {
        let profile = self.profile?;
        let transfer = profile
            .link
            .rate_bps
            .map_or(0.0, |r| x.busier_bytes * 8.0 / r as f64);
        Some(x.rounds * self.rtt_ms() + transfer * 1e3)
    }

    /// Adds the link's name and round trip to a report.
    pub fn describe(&self, v: &mut serde_json::Value) {
        v["net"] = json!(self.name());
        v["round_trip_ms"] = json!(self.rtt_ms());
        if let Some(p) = self.profile {
            v["net_one_way_ms"] = json!(p.link.delay.as_secs_f64() * 1e3);
            v["net_rate_mbit"] = json!(p.link.rate_bps.map(|r| r as f64 / 1e6));
        }
    }

    /// Under a profile, adds to a report the bound of the measurement `name`, which took `ms`
    /// for exchange `x`, and the ratio to it, and returns a few words for a table; nothing on
    /// plain loopback or for work that crossed no link.
    pub fn judge(&self, v: &mut serde_json::Value, name: &str, ms: f64, x: Exchange) -> String {
        // Work that crosses no link (a local conversion) has no bound to judge by.
        let Some(bound) = self.bound_ms(x).filter(|&b| b > 0.0) else {
            return String::new();
        };
        v[format!("{name}_net_bound_ms")] = json!(bound);
        v[format!("{name}_over_net_bound")] = json!(ms / bound);
        v[format!("{name}_round_trips")] = json!(x.rounds);
        format!(
            " [{name} on {}: bound {bound:.2} ms = {} x {:.2} ms + {:.0} B, ratio {:.2}]",
            self.name(),
            x.rounds,
            self.rtt_ms(),
            x.busier_bytes,
            ms / bound
        )
    }
}

/// An n-party TCP (or TLS) mesh over loopback, all parties in this process, through relays
/// under `net`'s profile if it names one; reads time out after two minutes. The round trip
/// between parties 0 and 1 is measured before it is returned.
pub fn loopback_mesh(
    n: usize,
    tls: Option<&[tessera_net::tls::TlsConfig]>,
    net: NetCondition,
) -> Result<(Vec<Network>, Wire), CliError> {
    let config = NetConfig::with_timeout(Duration::from_secs(120));
    let link = net.profile.map(|p| p.link);
    let mut mesh = tcp::loopback_through(n, tls, Duration::from_secs(30), config, link)?;
    let rtt = match &mut mesh.networks[..] {
        [a, b, ..] => round_trip(a, b)?,
        _ => Duration::ZERO,
    };
    let wire = Wire {
        profile: net.profile,
        rtt,
        _relays: mesh.relays,
    };
    Ok((mesh.networks, wire))
}

/// A two-party mesh as [`loopback_mesh`]: (party 0, party 1) and the wire.
pub fn loopback(net: NetCondition) -> Result<((Network, Network), Wire), CliError> {
    let (mut nets, wire) = loopback_mesh(2, None, net)?;
    let b = nets.pop();
    let a = nets.pop();
    let pair = a
        .zip(b)
        .ok_or_else(|| CliError::Usage("a mesh of two has two parties".into()))?;
    Ok((pair, wire))
}

/// The median round trip of an empty message from `a` to `b` and back.
fn round_trip(a: &mut Network, b: &mut Network) -> Result<Duration, CliError> {
    let (ida, idb) = (a.id(), b.id());
    // Each ping says whether another follows.
    let echo = |b: &mut Network| -> Result<(), tessera_net::Error> {
        let mut more = [1u8];
        while more[0] == 1 {
            b.recv_into(ida, BENCH.tag(PING), &mut more)?;
            b.send(ida, BENCH.tag(PING), &[])?;
            b.flush()?;
        }
        Ok(())
    };
    let mut times = Vec::with_capacity(PINGS.1);
    let start = Instant::now();
    std::thread::scope(|s| -> Result<(), CliError> {
        let echoer = s.spawn(|| echo(b));
        loop {
            let last = times.len() + 1 >= PINGS.1
                || (times.len() + 1 >= PINGS.0 && start.elapsed() >= PING_TIME);
            let t = Instant::now();
            a.send(idb, BENCH.tag(PING), &[u8::from(!last)])?;
            a.flush()?;
            a.recv_into(idb, BENCH.tag(PING), &mut [])?;
            times.push(t.elapsed());
            if last {
                break;
            }
        }
        echoer
            .join()
            .map_err(|_| CliError::Usage("the echoing party panicked".into()))??;
        Ok(())
    })?;
    times.sort();
    Ok(times[times.len() / 2])
}
