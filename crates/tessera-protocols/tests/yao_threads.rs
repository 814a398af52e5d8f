//! Yao with several threads per party (fine- and coarse-grained) equals the plaintext
//! evaluation with every scheme, whatever thread count each party picks, over several
//! executions of one session; parties naming different strategies stop each other.

use std::thread;
use tessera_circuit::Circuit;
use tessera_circuit::eval::evaluate;
use tessera_circuit::library::{builtin, ultrasfe};
use tessera_core::{Block, Prg};
use tessera_garble::SchemeKind;
use tessera_net::{Network, memory};
use tessera_protocols::yao::{OutputTo, Parallel, Strategy, Yao, YaoRole};
use tessera_protocols::{Error, Session, SessionConfig};

type Outputs = Result<Vec<Option<Vec<Vec<bool>>>>, Error>;

/// One party: set-up with `parallel`, then one execution per input.
fn party(
    net: Network,
    role: YaoRole,
    c: Circuit,
    modes: (SchemeKind, OutputTo, Parallel),
    inputs: Vec<Vec<bool>>,
) -> Outputs {
    let peer = 1 - net.id();
    let mut s = Session::new(net, SessionConfig::default())?;
    let mut yao = Yao::setup_parallel(&mut s, (peer, role), c, modes)?;
    inputs
        .iter()
        .map(|x| yao.run(&mut s, x).map(|o| o.output))
        .collect()
}

/// A session of one execution per pair of `runs`: the garbler with `g`, the evaluator with
/// `e`; returns each side's outputs.
fn session(
    c: &Circuit,
    (scheme, outputs): (SchemeKind, OutputTo),
    (g, e): (Parallel, Parallel),
    runs: &[(Vec<bool>, Vec<bool>)],
) -> (Outputs, Outputs) {
    let (g_net, e_net) = memory::pair().unwrap();
    let (gx, ex): (Vec<_>, Vec<_>) = runs.iter().cloned().unzip();
    let e_circuit = c.clone();
    let evaluator = thread::spawn(move || {
        party(
            e_net,
            YaoRole::Evaluator,
            e_circuit,
            (scheme, outputs, e),
            ex,
        )
    });
    let garbler = party(g_net, YaoRole::Garbler, c.clone(), (scheme, outputs, g), gx);
    (garbler, evaluator.join().unwrap())
}

fn random_bits(prg: &mut Prg, n: u32) -> Vec<bool> {
    (0..n).map(|_| prg.random_block().lsb()).collect()
}

fn on(strategy: Strategy, threads: usize) -> Parallel {
    Parallel { strategy, threads }
}

/// Circuits with many independent partitions (MVMul, BioMatch on small parameters), with
/// none (AES-128), and with a tail of more than one message under the PRF scheme (SHA-256).
fn circuits() -> Vec<(&'static str, Circuit)> {
    vec![
        ("mvmul", ultrasfe::mvmul(4, 4, 16).unwrap()),
        ("biomatch", ultrasfe::biomatch(16, 2, 16).unwrap()),
        ("aes128", builtin("aes128").unwrap().unwrap()),
        ("sha256", builtin("sha256").unwrap().unwrap()),
    ]
}

#[test]
fn every_strategy_scheme_and_thread_count_equals_plaintext() {
    let mut prg = Prg::from_seed_block(Block::new(17));
    // Each party picks its own thread count: the messages do not depend on it.
    let pairs = [(1, 1), (2, 1), (1, 3), (7, 2)];
    for (name, c) in circuits() {
        let runs: Vec<_> = (0..2)
            .map(|_| {
                (
                    random_bits(&mut prg, c.inputs[0]),
                    random_bits(&mut prg, c.inputs[1]),
                )
            })
            .collect();
        let expect: Vec<Vec<Vec<bool>>> = runs
            .iter()
            .map(|(x, y)| evaluate(&c, &[x.clone(), y.clone()]).unwrap())
            .collect();
        for strategy in [Strategy::Fgp, Strategy::Cgp] {
            for (k, &(gt, et)) in pairs.iter().enumerate() {
                // Every scheme on one pair of thread counts, the prp scheme on the others.
                let schemes: &[SchemeKind] = if k == 1 {
                    &SchemeKind::ALL
                } else {
                    &[SchemeKind::Prp]
                };
                for &scheme in schemes {
                    let parallel = (on(strategy, gt), on(strategy, et));
                    let modes = (scheme, OutputTo::Both);
                    let (g, e) = session(&c, modes, parallel, &runs);
                    let what = format!("{name} {strategy:?} {gt}/{et} threads {scheme:?}");
                    for got in [g.expect(&what), e.expect(&what)] {
                        let got: Vec<_> = got.into_iter().map(Option::unwrap).collect();
                        assert_eq!(got, expect, "{what}");
                    }
                }
            }
        }
    }
}

#[test]
fn every_output_mode_under_cgp() {
    let c = ultrasfe::mvmul(4, 4, 16).unwrap();
    let mut prg = Prg::from_seed_block(Block::new(5));
    let run = (
        random_bits(&mut prg, c.inputs[0]),
        random_bits(&mut prg, c.inputs[1]),
    );
    let expect = evaluate(&c, &[run.0.clone(), run.1.clone()]).unwrap();
    for outputs in [OutputTo::Evaluator, OutputTo::Garbler] {
        let parallel = (on(Strategy::Cgp, 2), on(Strategy::Cgp, 3));
        let (g, e) = session(
            &c,
            (SchemeKind::Mi, outputs),
            parallel,
            std::slice::from_ref(&run),
        );
        let (g, e) = (g.unwrap().remove(0), e.unwrap().remove(0));
        let (learner, other) = match outputs {
            OutputTo::Evaluator => (e, g),
            _ => (g, e),
        };
        assert_eq!(learner, Some(expect.clone()), "{outputs:?}");
        assert_eq!(other, None, "{outputs:?}");
    }
}

#[test]
fn different_strategies_stop_both_parties() {
    let c = ultrasfe::mvmul(2, 2, 8).unwrap();
    let run = (
        vec![false; c.inputs[0] as usize],
        vec![true; c.inputs[1] as usize],
    );
    let parallel = (on(Strategy::Fgp, 1), on(Strategy::Cgp, 1));
    let (g, e) = session(
        &c,
        (SchemeKind::Prp, OutputTo::Both),
        parallel,
        std::slice::from_ref(&run),
    );
    for (who, r) in [("garbler", g), ("evaluator", e)] {
        let text = r.expect_err(who).to_string();
        assert!(text.contains("fingerprint"), "{who}: {text}");
    }
}

/// A partition of XOR gates only has no table message: the evaluator hands it to a thread
/// with an empty stream as the next partition's messages start (or the tail's).
#[test]
fn partitions_without_tables_under_cgp() {
    use tessera_circuit::builder::Builder;
    use tessera_garble::{Partitions, Plan, XorGates};
    let mut g = Builder::new();
    let (x, y) = (g.input(1500), g.input(1500));
    // A parity of 3000 bits (free XOR gates only), then a product of 16-bit words.
    let parity = x
        .iter()
        .chain(&y)
        .copied()
        .reduce(|a, b| g.xor(a, b))
        .unwrap();
    let product = g.mul(&x[..16], &y[..16]);
    let c = g.finish(&[vec![parity], product]).unwrap();
    let compile = |c: &Circuit| Plan::default_for(c, XorGates::Free);
    let parts = Partitions::new(&c, 1, compile).unwrap();
    let ands = parts.and_gates();
    assert!(
        ands[..ands.len() - 1].contains(&0) && ands.iter().any(|&n| n > 0),
        "{ands:?}"
    );
    let mut prg = Prg::from_seed_block(Block::new(9));
    let runs: Vec<_> = (0..2)
        .map(|_| (random_bits(&mut prg, 1500), random_bits(&mut prg, 1500)))
        .collect();
    for threads in [(1, 1), (2, 3)] {
        let parallel = (on(Strategy::Cgp, threads.0), on(Strategy::Cgp, threads.1));
        let (g, e) = session(&c, (SchemeKind::Prp, OutputTo::Both), parallel, &runs);
        for (k, (x, y)) in runs.iter().enumerate() {
            let expect = evaluate(&c, &[x.clone(), y.clone()]).unwrap();
            let (g, e) = (g.as_ref().unwrap(), e.as_ref().unwrap());
            assert_eq!(g[k].as_ref(), Some(&expect), "{threads:?} garbler, run {k}");
            assert_eq!(
                e[k].as_ref(),
                Some(&expect),
                "{threads:?} evaluator, run {k}"
            );
        }
    }
}
