//! Boolean circuits in GMW (B) and ABY2.0 (β) between two sessions, with triples from the
//! sessions' OT: AES-128 on FIPS-197 and SHA-256 on "abc" over memory and TCP, equal to Yao's
//! outputs and to plaintext; the inputs exist only after both setups finished; a peer running
//! another circuit or sharing stops both sides with a named error.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;
use tessera_circuit::Circuit;
use tessera_circuit::eval::{bits_from_hex, bits_to_hex, evaluate};
use tessera_circuit::library::builtin;
use tessera_garble::SchemeKind;
use tessera_net::{NetConfig, Network, memory, tcp};
use tessera_protocols::boolean::{BoolCircuit, BoolSharing, Outputs, Reveal};
use tessera_protocols::yao::{OutputTo, Yao, YaoRole};
use tessera_protocols::{Error, Session, SessionConfig};

fn circuit(name: &str) -> Circuit {
    builtin(name).unwrap().unwrap()
}

/// One party: the setup, then (once `inputs` delivers them) the online phase.
fn party(
    net: Network,
    bc: BoolCircuit,
    reveal: Reveal,
    ready: mpsc::Sender<()>,
    inputs: mpsc::Receiver<Vec<Vec<Vec<bool>>>>,
) -> Result<Option<Outputs>, Error> {
    let peer = 1 - net.id();
    let mut s = Session::new(net, SessionConfig::default())?;
    s.run(|s| {
        let prepared = bc.setup(s, peer, reveal)?;
        ready.send(()).ok();
        let x = inputs
            .recv()
            .map_err(|_| Error::Input("no inputs".into()))?;
        bc.online(s, peer, prepared, &x, reveal)
    })
}

/// Both parties of `c` in `sharing`; the inputs are handed over only after both setups.
fn run(
    (n0, n1): (Network, Network),
    c: &Circuit,
    sharing: BoolSharing,
    reveal: Reveal,
    x: [Vec<Vec<Vec<bool>>>; 2],
) -> [Result<Option<Outputs>, Error>; 2] {
    let bc = BoolCircuit::new(c.clone(), sharing, x[0].len()).unwrap();
    let (ready_tx, ready_rx) = mpsc::channel();
    let mut input_tx = Vec::new();
    let handles: Vec<_> = [n0, n1]
        .into_iter()
        .map(|net| {
            let (tx, rx) = mpsc::channel();
            input_tx.push(tx);
            let (bc, ready) = (bc.clone(), ready_tx.clone());
            thread::spawn(move || party(net, bc, reveal, ready, rx))
        })
        .collect();
    for _ in 0..2 {
        ready_rx.recv().unwrap();
    }
    for (tx, x) in input_tx.iter().zip(x) {
        tx.send(x).unwrap();
    }
    let mut out = handles.into_iter().map(|h| h.join().unwrap());
    [out.next().unwrap(), out.next().unwrap()]
}

fn yao_outputs(c: &Circuit, x: &[Vec<bool>; 2]) -> Vec<Vec<bool>> {
    let (g, e) = memory::pair().unwrap();
    let (cg, ce) = (c.clone(), c.clone());
    let xe = x[1].clone();
    let evaluator = thread::spawn(move || {
        let mut s = Session::new(e, SessionConfig::default()).unwrap();
        let mut yao = Yao::setup(
            &mut s,
            0,
            YaoRole::Evaluator,
            ce,
            SchemeKind::Prp,
            OutputTo::Both,
        )
        .unwrap();
        yao.run(&mut s, &xe).unwrap().output.unwrap()
    });
    let mut s = Session::new(g, SessionConfig::default()).unwrap();
    let mut yao = Yao::setup(
        &mut s,
        1,
        YaoRole::Garbler,
        cg,
        SchemeKind::Prp,
        OutputTo::Both,
    )
    .unwrap();
    let ours = yao.run(&mut s, &x[0]).unwrap().output.unwrap();
    assert_eq!(ours, evaluator.join().unwrap());
    ours
}

fn tcp_pair() -> (Network, Network) {
    let mut nets = tcp::loopback(2, None, Duration::from_secs(10), NetConfig::default()).unwrap();
    let n1 = nets.pop().unwrap();
    (nets.pop().unwrap(), n1)
}

fn sha256_abc() -> [Vec<bool>; 2] {
    let mut block = [0u8; 64];
    block[..3].copy_from_slice(b"abc");
    block[3] = 0x80;
    block[63] = 24;
    let iv: Vec<u8> = [
        0x6a09e667u32,
        0xbb67ae85,
        0x3c6ef372,
        0xa54ff53a,
        0x510e527f,
        0x9b05688c,
        0x1f83d9ab,
        0x5be0cd19,
    ]
    .iter()
    .flat_map(|w| w.to_be_bytes())
    .collect();
    let bits = |bytes: &[u8]| {
        bytes
            .iter()
            .flat_map(|b| (0..8).map(move |i| (b >> i) & 1 == 1))
            .collect()
    };
    [bits(&block), bits(&iv)]
}

#[test]
fn aes128_and_sha256_in_b_and_beta_equal_yao_and_the_standards() {
    let aes = [
        bits_from_hex("000102030405060708090a0b0c0d0e0f", 128).unwrap(),
        bits_from_hex("00112233445566778899aabbccddeeff", 128).unwrap(),
    ];
    let cases = [
        ("aes128", aes, "69c4e0d86a7b0430d8cdb78070b4c55a"),
        (
            "sha256",
            sha256_abc(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        ),
    ];
    for (name, x, hex) in cases {
        let c = circuit(name);
        let yao = yao_outputs(&c, &x);
        assert_eq!(bits_to_hex(&yao[0]), hex, "{name} in Y");
        for sharing in BoolSharing::ALL {
            for (net, nets) in [("memory", memory::pair().unwrap()), ("tcp", tcp_pair())] {
                let inputs = [vec![vec![x[0].clone()]], vec![vec![x[1].clone()]]];
                let [o0, o1] = run(nets, &c, sharing, Reveal::Both, inputs);
                for o in [o0, o1] {
                    let o = o.unwrap().unwrap();
                    assert_eq!(o, vec![yao.clone()], "{name} {sharing:?} {net}");
                }
            }
        }
    }
}

#[test]
fn simd_copies_of_aes_equal_plaintext() {
    let c = circuit("aes128");
    let mut prg = tessera_core::Prg::from_seed_block(tessera_core::Block::new(11));
    let mut random = |n: u32| -> Vec<bool> { (0..n).map(|_| prg.random_block().lsb()).collect() };
    let x: Vec<Vec<Vec<bool>>> = (0..16).map(|_| vec![random(128)]).collect();
    let y: Vec<Vec<Vec<bool>>> = (0..16).map(|_| vec![random(128)]).collect();
    for sharing in BoolSharing::ALL {
        let [o0, o1] = run(
            memory::pair().unwrap(),
            &c,
            sharing,
            Reveal::To(1),
            [x.clone(), y.clone()],
        );
        assert_eq!(o0.unwrap(), None);
        let o1 = o1.unwrap().unwrap();
        for (k, out) in o1.iter().enumerate() {
            let expect = evaluate(&c, &[x[k][0].clone(), y[k][0].clone()]).unwrap();
            assert_eq!(out, &expect, "{sharing:?} copy {k}");
        }
    }
}

#[test]
fn a_peer_with_another_circuit_or_sharing_stops_both_sides() {
    let (add, sub) = (circuit("add8"), circuit("sub8"));
    let x = vec![vec![vec![false; 8]]];
    for (c1, s1, what) in [
        (sub, BoolSharing::Gmw, "fingerprints differ"),
        (
            add.clone(),
            BoolSharing::Aby2,
            "sharing b here, beta at the peer",
        ),
    ] {
        let (n0, n1) = memory::pair().unwrap();
        let (b0, b1) = (
            BoolCircuit::new(add.clone(), BoolSharing::Gmw, 1).unwrap(),
            BoolCircuit::new(c1, s1, 1).unwrap(),
        );
        let (x0, x1) = (x.clone(), x.clone());
        let go = move |net: Network, bc: BoolCircuit, x: Vec<Vec<Vec<bool>>>| {
            thread::spawn(move || {
                let peer = 1 - net.id();
                let mut s = Session::new(net, SessionConfig::default())?;
                s.run(|s| {
                    let p = bc.setup(s, peer, Reveal::Both)?;
                    bc.online(s, peer, p, &x, Reveal::Both)
                })
            })
        };
        let (h0, h1) = (go(n0, b0, x0), go(n1, b1, x1));
        let (e0, e1) = (h0.join().unwrap(), h1.join().unwrap());
        let e0 = e0.unwrap_err().to_string();
        assert!(e0.contains(what), "{e0}");
        assert!(e1.is_err());
    }
}
