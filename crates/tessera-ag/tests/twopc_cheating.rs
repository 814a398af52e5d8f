//! Two-party authenticated garbling against a cheating peer: every message kind of either
//! party, flipped at a random bit, replaced by random bytes, replayed from another run or cut,
//! stops the run with an error naming a check before the party it was sent to learns an output,
//! or (a garbled row the evaluator's masked value does not select) leaves every output equal to
//! plaintext; and a garbler that corrupts the row an evaluator input selects is caught with a
//! probability that does not depend on the evaluator's input bit.

use tessera_ag::twopc::{Material, Outputs, Program, evaluator, garbler};
use tessera_ag::{Error, wire};
use tessera_circuit::library::aes128;
use tessera_circuit::{Circuit, Gate, GateKind, eval};
use tessera_core::{Block, Prg};
use tessera_net::role::{self, Side};
use tessera_net::{Kind, NetConfig, memory};
use tessera_ot::OtChoice;
use tessera_ot::extension::{Protocol, Security};
use tessera_protocols::{Session, SessionConfig};

/// Both parties' function-independent material for `program`, drawn over SoftSpoken.
fn materials(program: &Program) -> [Material; 2] {
    let ot = OtChoice::Extension(Protocol::softspoken(8, Security::Malicious).unwrap());
    let nets = memory::mesh(2, NetConfig::default()).unwrap();
    std::thread::scope(|s| {
        let handles: Vec<_> = nets
            .into_iter()
            .map(|net| {
                s.spawn(move || {
                    let mut session = Session::new(net, SessionConfig { ot }).unwrap();
                    let peer = 1 - session.id();
                    Material::generate(&mut session, peer, program).unwrap()
                })
            })
            .collect();
        let mut m = handles.into_iter().map(|h| h.join().unwrap());
        [m.next().unwrap(), m.next().unwrap()]
    })
}

type Outcome = [Option<Result<Option<Vec<bool>>, Error>>; 2];

/// One run of `program` between the two parties' roles on `values`, `edit` applied to every
/// message on the way.
fn stepped(
    program: &Program,
    [g, e]: &[Material; 2],
    values: &[Vec<bool>; 2],
    seed: u128,
    mut edit: impl FnMut(Side, Kind, &mut Vec<u8>),
) -> Outcome {
    let prg = Prg::from_seed_block(Block::new(seed));
    let mut g_prep = garbler::Prep::new(program, g.clone(), prg);
    let mut e_prep = evaluator::Prep::new(program, e.clone());
    let (gp, ep) = role::run_pair(&mut g_prep, &mut e_prep, &mut edit);
    let (gp, ep) = match (gp, ep) {
        (Some(Ok(gp)), Some(Ok(ep))) => (gp, ep),
        (gp, ep) => {
            return [stopped(gp), stopped(ep)];
        }
    };
    let mut g_on = garbler::Online::new(program, gp, &values[0], Outputs::All).unwrap();
    let mut e_on = evaluator::Online::new(program, ep, &values[1], Outputs::All).unwrap();
    let (a, b) = role::run_pair(&mut g_on, &mut e_on, &mut edit);
    [a, b]
}

/// A prep phase's end as the run's: an error, or left waiting (no output either way).
fn stopped<T>(r: Option<Result<T, Error>>) -> Option<Result<Option<Vec<bool>>, Error>> {
    r.map(|r| r.map(|_| None))
}

/// How a test tampers with one message.
#[derive(Clone, Copy, Debug)]
enum Tamper {
    Flip(usize),
    Random,
    Replay,
    Cut,
}

fn aes_values(prg: &mut Prg) -> [Vec<bool>; 2] {
    [0, 1].map(|_| (0..128).map(|_| prg.random_block().lsb()).collect())
}

#[test]
fn every_tampered_message_is_caught() {
    let circuit = aes128().unwrap();
    let program = Program::new(&circuit).unwrap();
    let (mine, other) = (materials(&program), materials(&program));
    let mut prg = Prg::from_seed_block(Block::new(3));
    let values = aes_values(&mut prg);
    let expect = eval::evaluate(&circuit, &values).unwrap().concat();
    // Another run's messages, to replay.
    let mut earlier = Vec::new();
    let honest = stepped(&program, &other, &values, 1, |side, kind, bytes| {
        earlier.push((side, kind, bytes.clone()));
    });
    assert!(matches!(&honest[1], Some(Ok(Some(z))) if *z == expect));
    let kinds: Vec<(Side, Kind)> = earlier.iter().map(|(s, k, _)| (*s, *k)).collect();
    for &(from, kind) in &kinds {
        for trial in 0..20u128 {
            let at = (prg.random_block().low() % (1 << 24)) as usize;
            for tamper in [
                Tamper::Flip(at),
                Tamper::Random,
                Tamper::Replay,
                Tamper::Cut,
            ] {
                let what = format!("{} from {from:?}, {tamper:?}", kind.name);
                let outcome = stepped(&program, &mine, &values, 100 + trial, |side, k, bytes| {
                    if side == from && k == kind {
                        tamper_with(bytes, tamper, &earlier, (side, k), trial);
                    }
                });
                assert_caught(&outcome, from, kind, &expect, &what);
            }
        }
    }
}

fn tamper_with(
    bytes: &mut Vec<u8>,
    tamper: Tamper,
    earlier: &[(Side, Kind, Vec<u8>)],
    (side, kind): (Side, Kind),
    trial: u128,
) {
    match tamper {
        Tamper::Flip(at) => {
            let bit = at % (bytes.len() * 8).max(1);
            if let Some(b) = bytes.get_mut(bit / 8) {
                *b ^= 1 << (bit % 8);
            }
        }
        Tamper::Random => {
            let mut prg = Prg::from_seed_block(Block::new(trial + 7));
            for x in bytes.iter_mut() {
                *x = prg.random_block().low() as u8;
            }
        }
        Tamper::Replay => {
            if let Some((_, _, old)) = earlier.iter().find(|(s, k, _)| *s == side && *k == kind) {
                *bytes = old.clone();
            }
        }
        Tamper::Cut => {
            bytes.pop();
        }
    }
}

/// The party `from`'s message was tampered with: the other party never learns an output
/// that differs from plaintext, and unless both learn the right outputs (an edit nothing
/// reads) some party stopped with an error naming a check or the message.
fn assert_caught(outcome: &Outcome, from: Side, kind: Kind, expect: &[bool], what: &str) {
    let victim = usize::from(from == Side::First);
    for (p, r) in outcome.iter().enumerate() {
        if let Some(Ok(Some(z))) = r {
            assert_eq!(z, expect, "{what}: party {p} learned a wrong output");
        }
    }
    let all_right = outcome
        .iter()
        .all(|r| matches!(r, Some(Ok(Some(z))) if z == expect));
    if all_right {
        // Only a garbled row nobody selects can be edited unseen.
        assert!(kind == wire::TABLES, "{what}: not caught");
        return;
    }
    assert!(
        !matches!(outcome[victim], Some(Ok(_))),
        "{what}: party {victim} finished"
    );
    let named = outcome.iter().any(|r| match r {
        Some(Err(e)) => {
            let t = e.to_string();
            t.contains("check") || t.contains(kind.name) || t.contains("labels")
        }
        _ => false,
    });
    assert!(named, "{what}: no error names a check: {outcome:?}");
}

/// z = x ∧ y: the garbler's bit and the evaluator's.
fn and_circuit() -> Circuit {
    Circuit {
        num_wires: 3,
        inputs: vec![1, 1],
        outputs: vec![1],
        gates: vec![Gate {
            kind: GateKind::And,
            a: 0,
            b: 1,
            out: 2,
        }],
    }
}

/// The garbler flips row G_1 of the one AND gate, which the evaluator uses exactly when its
/// input wire's masked value is 1: whether the run stops must not depend on its input bit.
#[test]
fn corrupting_the_row_of_an_evaluator_input_aborts_independently_of_the_input() {
    let program = Program::new(&and_circuit()).unwrap();
    const RUNS: usize = 40;
    let mut aborts = [0usize; 2];
    for y in [false, true] {
        for run in 0..RUNS {
            let m = materials(&program);
            let outcome = stepped(
                &program,
                &m,
                &[vec![true], vec![y]],
                run as u128,
                |_, k, b| {
                    if k == wire::TABLES {
                        b[16 + run % 16] ^= 1 << (run % 8);
                    }
                },
            );
            let finished = matches!(&outcome[1], Some(Ok(Some(z))) if *z == vec![y]);
            if !finished {
                assert!(
                    !matches!(outcome[1], Some(Ok(_))),
                    "wrong output: {outcome:?}"
                );
                aborts[usize::from(y)] += 1;
            }
        }
    }
    // Each count is Binomial(40, 1/2) when the abort depends only on the masked value: their
    // difference has standard deviation 4.5, and 18 is four of them (false alarm < 10^-4).
    let [a0, a1] = aborts;
    assert!(
        a0.abs_diff(a1) <= 18,
        "aborts with y = 0: {a0}, y = 1: {a1}"
    );
    for a in aborts {
        assert!(
            (6..=34).contains(&a),
            "aborts {a} of {RUNS}: not about half"
        );
    }
}
