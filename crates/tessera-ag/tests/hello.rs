//! The hello: parties set up for different computations (circuit, chain length, output choice,
//! correlated OT; among n parties one party's circuit) stop at once with a mismatch naming the
//! fingerprint, before any OT; and malformed messages (padding bits set) are the peer's
//! misbehaviour, not cheating.

mod common;

use common::{and_circuit, materials, n_parties, softspoken, stepped_2pc, two_parties};
use tessera_ag::twopc::{self, Outputs, Program};
use tessera_ag::{Error, multi, wire};
use tessera_circuit::{Circuit, Gate, GateKind};
use tessera_core::{Failure, Fault};
use tessera_net::role::Side;
use tessera_net::{NetConfig, memory};
use tessera_ot::OtChoice;
use tessera_protocols::{Session, SessionConfig};

/// z = x ⊕ y: the AND circuit's shape with another gate.
fn xor_circuit() -> Circuit {
    let mut c = and_circuit();
    c.gates[0] = Gate {
        kind: GateKind::Xor,
        ..c.gates[0]
    };
    c
}

/// That every party stopped, at least one with a mismatch of fingerprints, and that no OT ran
/// (the hello comes first).
fn assert_mismatch<T: std::fmt::Debug>(outcome: &[Result<T, Error>]) {
    let faults: Vec<Fault> = outcome
        .iter()
        .map(|r| r.as_ref().expect_err("a party ran on").fault())
        .collect();
    assert!(
        faults
            .iter()
            .all(|f| [Fault::Mismatch, Fault::PeerAborted].contains(f)),
        "{faults:?}"
    );
    let named = outcome.iter().any(|r| {
        r.as_ref()
            .err()
            .is_some_and(|e| e.fault() == Fault::Mismatch && e.to_string().contains("fingerprint"))
    });
    assert!(named, "{outcome:?}");
}

#[test]
fn two_parties_with_different_circuits_or_outputs_stop_at_the_hello() {
    let programs = [Program::new(&and_circuit()), Program::new(&xor_circuit())];
    let [a, b] = programs.map(Result::unwrap);
    let outcome = two_parties(softspoken(), |s| {
        let program = if s.id() == 0 { &a } else { &b };
        twopc::run(s, program, &[true], Outputs::All)
    });
    assert_mismatch(&outcome);
    let outcome = two_parties(softspoken(), |s| {
        let to = [Outputs::All, Outputs::Evaluator][s.id()];
        twopc::run(s, &a, &[true], to)
    });
    assert_mismatch(&outcome);
    // The same program and outputs: it runs.
    let outcome = two_parties(softspoken(), |s| twopc::run(s, &a, &[true], Outputs::All));
    for r in outcome {
        assert_eq!(r.unwrap(), Some(vec![true]));
    }
}

#[test]
fn two_parties_with_different_correlated_ots_stop_at_the_hello() {
    let program = Program::new(&and_circuit()).unwrap();
    let ots: [OtChoice; 2] = [softspoken(), tessera_ag::cot("kos").unwrap()];
    let nets = memory::mesh(2, NetConfig::default()).unwrap();
    let outcome: Vec<Result<Option<Vec<bool>>, Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = nets
            .into_iter()
            .zip(ots)
            .map(|(net, ot)| {
                let program = &program;
                scope.spawn(move || {
                    let mut s = Session::new(net, SessionConfig::with_ot(ot))?;
                    twopc::run(&mut s, program, &[true], Outputs::All)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_mismatch(&outcome);
}

#[test]
fn among_three_one_party_with_another_circuit_stops_them_all() {
    let (and, xor) = (and_circuit(), xor_circuit());
    let outcome = n_parties(3, softspoken(), |s| {
        let circuit = if s.id() == 2 { &xor } else { &and };
        let input = vec![true; circuit.inputs.get(s.id()).copied().unwrap_or(0) as usize];
        multi::run(s, circuit, &input)
    });
    assert_mismatch(&outcome);
}

#[test]
fn padding_bits_set_are_the_peers_misbehaviour_not_cheating() {
    let program = Program::new(&and_circuit()).unwrap();
    let m = materials(&program);
    let values = [vec![true], vec![true]];
    // The garbler's label flips (one bit in a byte) and the evaluator's masked inputs.
    for (from, kind, victim) in [
        (Side::First, wire::FLIPS, 1),
        (Side::Second, wire::MASKED_INPUTS, 0),
    ] {
        let outcome = stepped_2pc(&program, &m, &values, 5, |s, k, bytes| {
            if s == from && k == kind {
                bytes[0] |= 0x80;
            }
        });
        match &outcome[victim] {
            Some(Err(e @ Error::Malformed { message })) => {
                assert_eq!(*message, kind.name);
                assert_eq!(e.fault(), Fault::PeerMisbehaved);
            }
            other => panic!("{}: {other:?}", kind.name),
        }
    }
}
