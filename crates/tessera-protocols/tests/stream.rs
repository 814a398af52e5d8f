//! Streamed Yao between two parties: SHA-256 over a message of several blocks, garbled and
//! evaluated one compression function at a time, gives RustCrypto's digest to both parties for
//! every scheme, over memory and loopback TCP; a different step circuit stops both sides.

use sha2::Digest;
use std::thread;
use std::time::Duration;
use tessera_circuit::Circuit;
use tessera_circuit::eval::{bits_from_bytes, bytes_from_bits};
use tessera_circuit::library::{SHA256_IV, builtin, sha256_final_blocks};
use tessera_garble::SchemeKind;
use tessera_net::{NetConfig, Network, memory, tcp};
use tessera_protocols::yao::chain::{self as stream, StreamOutcome};
use tessera_protocols::{Error, Session, SessionConfig};

/// The padded blocks of `message`, as the generator hands them to the garbler.
fn blocks(message: &[u8]) -> Vec<[u8; 64]> {
    let whole = message.len() / 64 * 64;
    let mut b: Vec<[u8; 64]> = message[..whole]
        .chunks_exact(64)
        .map(|c| c.try_into().unwrap())
        .collect();
    b.extend(sha256_final_blocks(&message[whole..], message.len() as u64));
    b
}

type Both = (Result<StreamOutcome, Error>, Result<StreamOutcome, Error>);

fn run(
    nets: (Network, Network),
    (g, e): (Circuit, Circuit),
    scheme: SchemeKind,
    message: &[u8],
) -> Both {
    let (g_net, e_net) = nets;
    let evaluator = thread::spawn(move || {
        let mut s = Session::new(e_net, SessionConfig::default())?;
        stream::evaluate(&mut s, 0, (&e, scheme))
    });
    let padded = blocks(message);
    let garbler = (|| {
        let mut s = Session::new(g_net, SessionConfig::default())?;
        let fresh =
            |k: u64, out: &mut [bool]| out.copy_from_slice(&bits_from_bytes(&padded[k as usize]));
        let steps = (padded.len() as u64, fresh);
        stream::garble(&mut s, 1, (&g, scheme), &bits_from_bytes(&SHA256_IV), steps)
    })();
    (garbler, evaluator.join().unwrap())
}

fn sha256() -> Circuit {
    builtin("sha256").unwrap().unwrap()
}

#[test]
fn streamed_sha256_between_two_parties_gives_both_the_digest() {
    let message: Vec<u8> = (0..300u32).map(|k| (k * 37 + 1) as u8).collect();
    let digest = sha2::Sha256::digest(&message).to_vec();
    for scheme in SchemeKind::ALL {
        let (g, e) = run(
            memory::pair().unwrap(),
            (sha256(), sha256()),
            scheme,
            &message,
        );
        let (g, e) = (g.unwrap(), e.unwrap());
        assert_eq!(bytes_from_bits(&g.output), digest, "{scheme}: garbler");
        assert_eq!(bytes_from_bits(&e.output), digest, "{scheme}: evaluator");
        assert_eq!((g.steps, e.steps), (5, 5));
        assert_eq!(g.gates, 5 * sha256().gates.len() as u64);
    }
}

#[test]
fn streamed_sha256_over_tcp() {
    let message = vec![0xa5u8; 1000];
    let nets = tcp::loopback(2, None, Duration::from_secs(10), NetConfig::default()).unwrap();
    let mut nets = nets.into_iter();
    let pair = (nets.next().unwrap(), nets.next().unwrap());
    let (g, e) = run(pair, (sha256(), sha256()), SchemeKind::ALL[0], &message);
    let digest = sha2::Sha256::digest(&message).to_vec();
    assert_eq!(bytes_from_bits(&g.unwrap().output), digest);
    assert_eq!(bytes_from_bits(&e.unwrap().output), digest);
}

#[test]
fn a_different_step_circuit_stops_both_parties() {
    let other = builtin("sha256-lowdepth").unwrap().unwrap();
    let (g, e) = run(
        memory::pair().unwrap(),
        (sha256(), other),
        SchemeKind::ALL[0],
        b"abc",
    );
    assert!(matches!(g, Err(Error::Mismatch(_))), "{g:?}");
    assert!(matches!(e, Err(Error::Mismatch(_))), "{e:?}");
}
