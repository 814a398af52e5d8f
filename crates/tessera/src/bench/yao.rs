//! `tessera bench yao`: semi-honest Yao between two threads over loopback TCP, with fresh
//! inputs and the output revealed to both parties in every execution. Reports set-up, first
//! execution and amortised time per execution, against the time the same circuit takes to
//! garble and evaluate in one thread without a network (measured in the same run).

use super::BENCH;
use super::local::LocalRun;
use super::{CommonArgs, Exchange, NetCondition, SampleStats, cpu_model, emit, loopback, measure};
use crate::CliError;
use crate::circuit::load;
use crate::twoparty::phases_json;
use clap::Args;
use serde_json::json;
use std::thread;
use std::time::Instant;
use tessera_circuit::eval::evaluate;
use tessera_core::{Backend, Prg};
use tessera_garble::{Batching, Scheme, SchemeKind, SchemeVisitor};
use tessera_net::{Channel, Kind};
use tessera_protocols::yao::{OutputTo, Yao, YaoRole};
use tessera_protocols::{Session, SessionConfig};

const READY: Kind = Kind::new(0x72, "bench evaluator ready");

/// Options of `tessera bench yao`.
#[derive(Args)]
pub struct YaoArgs {
    /// A built-in circuit or a Bristol file with two input values.
    #[arg(long, default_value = "aes128")]
    circuit: String,
    /// Garbling scheme.
    #[arg(long, default_value = "prp", value_parser = crate::schemes::one())]
    scheme: SchemeKind,
    /// Executions in the session (the first is reported apart).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    net: NetCondition,
}

/// Garbling plus evaluation in one thread, in milliseconds (the median of 5 samples of
/// [`measure`]).
pub(super) struct LocalMs<'a>(pub(super) &'a tessera_circuit::Circuit);

impl SchemeVisitor for LocalMs<'_> {
    type Output = Result<f64, CliError>;
    fn visit<S: Scheme>(self) -> Result<f64, CliError> {
        local_ms::<S>(self.0)
    }
}

fn local_ms<S: Scheme>(circuit: &tessera_circuit::Circuit) -> Result<f64, CliError> {
    let bits = vec![false; circuit.num_input_wires() as usize];
    let mut local = LocalRun::<S>::new(
        circuit,
        Batching::default_for(circuit),
        Backend::active(),
        &bits,
    )?;
    let mut failure = None;
    let common = CommonArgs {
        json: true,
        samples: 5,
        sample_ms: 30,
    };
    let per_sec = measure(&common, 1.0, || {
        if let Err(err) = local
            .garble()
            .map(drop)
            .and_then(|()| local.evaluate().map(drop))
        {
            failure = Some(err);
        }
    });
    match failure {
        Some(err) => Err(err),
        None => Ok(1e3 / per_sec.median()),
    }
}

/// Runs `tessera bench yao`.
pub fn run(args: &YaoArgs) -> Result<(), CliError> {
    let (circuit, _) = load(&args.circuit)?;
    if circuit.inputs.len() != 2 {
        return Err(CliError::Usage(format!(
            "{}: a two-party circuit needs two input values",
            args.circuit
        )));
    }
    let n = args.repeat as usize;
    let mut prg = Prg::from_os()?;
    let mut bits = |w: u32| -> Vec<bool> { (0..w).map(|_| prg.random_block().lsb()).collect() };
    let inputs: Vec<(Vec<bool>, Vec<bool>)> = (0..n)
        .map(|_| (bits(circuit.inputs[0]), bits(circuit.inputs[1])))
        .collect();
    let scheme = args.scheme;
    let bound_ms = scheme.visit(LocalMs(&circuit))?;

    let ((g_net, e_net), wire) = loopback(args.net)?;
    let before = g_net.stats();
    let evaluator_inputs: Vec<Vec<bool>> = inputs.iter().map(|i| i.1.clone()).collect();
    let e_circuit = circuit.clone();
    let evaluator = thread::spawn(move || -> Result<_, CliError> {
        let before = e_net.stats();
        let mut s = Session::new(e_net, SessionConfig::default())?;
        let mut e = Yao::setup(
            &mut s,
            0,
            YaoRole::Evaluator,
            e_circuit,
            scheme,
            OutputTo::Both,
        )?;
        // Set-up ends when both parties are ready, so the first execution is timed alone.
        s.network().send(0, BENCH.tag(READY), &[])?;
        s.network().flush()?;
        let after_setup = s.network().stats();
        let mut outputs = Vec::new();
        let mut phases = Vec::new();
        for x in &evaluator_inputs {
            let o = e.run(&mut s, x)?;
            outputs.push(o.output);
            phases = o.phases;
        }
        let traffic = [
            after_setup.since(&before),
            s.network().stats().since(&after_setup),
        ];
        Ok((outputs, phases, traffic))
    });
    let t = Instant::now();
    let mut s = Session::new(g_net, SessionConfig::default())?;
    let mut g = Yao::setup(
        &mut s,
        1,
        YaoRole::Garbler,
        circuit.clone(),
        scheme,
        OutputTo::Both,
    )?;
    s.network().peer(1).recv_bounded(BENCH.tag(READY), 0)?;
    let setup_ms = t.elapsed().as_secs_f64() * 1e3;
    let after_setup = s.network().stats();
    let setup_traffic = after_setup.since(&before);
    let mut times = Vec::with_capacity(n);
    let mut outputs = Vec::with_capacity(n);
    let mut last_phases = Vec::new();
    for (x, _) in &inputs {
        let t = Instant::now();
        let o = g.run(&mut s, x)?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        outputs.push(o.output);
        last_phases = o.phases;
    }
    let traffic = s.network().stats().since(&after_setup);
    let (e_outputs, e_phases, e_traffic) = evaluator
        .join()
        .map_err(|_| CliError::Usage("the evaluator thread panicked".into()))??;
    for (k, (x, y)) in inputs.iter().enumerate() {
        let expect = Some(evaluate(&circuit, &[x.clone(), y.clone()])?);
        if outputs[k] != expect || e_outputs[k] != expect {
            return Err(CliError::Usage(format!(
                "execution {k}: the 2PC output differs from plaintext"
            )));
        }
    }
    let first_ms = times[0];
    let amortised_ms = if n > 1 {
        times[1..].iter().sum::<f64>() / (n - 1) as f64
    } else {
        first_ms
    };
    let per_run = |v: u64| v / n as u64;
    let mut report = json!({
        "circuit": args.circuit,
        "scheme": scheme.name(),
        "repeat": n,
        "setup_ms": setup_ms,
        "first_ms": first_ms,
        "amortised_ms": amortised_ms,
        "amortised_ms_stats": SampleStats::of(times.iter().skip(1).copied()),
        "local_garble_eval_ms": bound_ms,
        "amortised_over_local": amortised_ms / bound_ms,
        "bytes_sent": per_run(traffic.bytes_sent),
        "bytes_received": per_run(traffic.bytes_received),
        "rounds": per_run(traffic.rounds),
        "setup_phases": phases_json(g.setup_phases()),
        "garbler_phases": phases_json(&last_phases),
        "evaluator_phases": phases_json(&e_phases),
        "outputs_checked": true,
        "backend": Backend::active().name(),
        "cpu": cpu_model(),
    });
    wire.describe(&mut report);
    let setup_exchange = Exchange::of_pair(&setup_traffic, &e_traffic[0]);
    let run_exchange = Exchange::of_pair(&traffic, &e_traffic[1]).per(n as f64);
    let judged = [
        ("setup", setup_ms, setup_exchange),
        ("first", first_ms, run_exchange),
        ("amortised", amortised_ms, run_exchange),
    ]
    .map(|(name, ms, x)| wire.judge(&mut report, name, ms, x))
    .concat();
    if args.json {
        emit(report);
    } else {
        println!(
            "{} ({scheme}): setup {setup_ms:.2} ms, first execution {first_ms:.3} ms, amortised {amortised_ms:.3} ms over {n} (local garble+evaluate {bound_ms:.3} ms); garbler sends {} bytes, receives {} per execution; outputs checked against plaintext; {} round trip {:.3} ms{judged}",
            args.circuit,
            per_run(traffic.bytes_sent),
            per_run(traffic.bytes_received),
            wire.name(),
            wire.rtt_ms(),
        );
    }
    Ok(())
}
