//! Every protocol frame of a hybrid program, set-up and online, edited on the wire by the
//! tamper harness (`tessera_testkit::tamper`): a bit flipped, random bytes, the frame cut off
//! with the connection, a byte more or less, another kind, the previous frame replayed. Semi-honest parties
//! cannot notice a changed value, but nothing a peer sends may make them panic or hang: a
//! frame of the wrong size or kind, or a connection cut, stops the receiving party with an
//! error that names the peer's misbehaviour or the network, and a peer still waiting is told
//! and stops too (no party is left to its timeout); a flipped bit or a replayed frame of the
//! same size either passes (a wrong result, the semi-honest model's limit) or is refused the
//! same way.

use std::time::Duration;
use tessera_core::{Block, Failure, Fault, Prg};
use tessera_net::NetConfig;
use tessera_protocols::hybrid::{
    Kind, LinearMap, LinearMethod, LinearWeights, Plain, Program, Reveal, Sharing, Type, Value,
};
use tessera_protocols::{Error, Session, SessionConfig};
use tessera_testkit::tamper::{self, Edit, Target, Which};

const N: usize = 3;

/// x + y in α, its square, the comparison with t in B, x + y in Y XORed with u, party 0's
/// linear map of two rows on two columns of x + y by Gilboa's products and by homomorphic
/// ones, and ReLU(x + y) by the millionaires' sign and selection on OT, truncated exactly:
/// every kind of set-up (triples, mask products, tables, the stated coefficient widths,
/// Gilboa's products, the public key, ciphertexts and answers, random 1-out-of-N OTs) and
/// online step (openings, circuits, labels, the comparison's choices and tables, the
/// selections' bits and corrections, outputs).
fn program() -> (Program, [Vec<(Value, Plain)>; 2]) {
    let t = |sharing, kind| Type {
        sharing,
        kind,
        n: N,
    };
    let mut p = Program::new();
    let x = p.input(0, t(Sharing::A, Kind::Ring(32))).unwrap();
    let y = p.input(1, t(Sharing::Alpha, Kind::Ring(32))).unwrap();
    let th = p.input(1, t(Sharing::B, Kind::Bits(32))).unwrap();
    let u = p.input(0, t(Sharing::Y, Kind::Bits(32))).unwrap();
    let xa = p.convert(x, Sharing::Alpha).unwrap();
    let sum = p.add(xa, y).unwrap();
    let square = p.mul(sum, sum).unwrap();
    let sum_b = p.convert(sum, Sharing::B).unwrap();
    let lt = tessera_circuit::library::builtin("lt32").unwrap().unwrap();
    let below = p.circuit(&lt, &[sum_b, th]).unwrap()[0];
    let sum_y = p.convert(sum, Sharing::Y).unwrap();
    let mixed = p.xor(sum_y, u).unwrap();
    let map = LinearMap::new(2, 2, 2, N, vec![0, 1, 2, 0]).unwrap();
    let mapped = p
        .linear(sum, map.clone(), 0, LinearMethod::Products)
        .unwrap();
    let encrypted = p.linear(sum, map, 0, LinearMethod::Lattice).unwrap();
    let sum_a = p.convert(sum, Sharing::A).unwrap();
    let sign = p.sign_by_comparison(sum_a, Sharing::B, 4).unwrap();
    let selected = p.select(sign, sum_a).unwrap();
    let truncated = p.truncate_nonnegative(selected, 3).unwrap();
    p.output(square, Reveal::To(0)).unwrap();
    p.output(below, Reveal::Both).unwrap();
    p.output(mixed, Reveal::To(1)).unwrap();
    p.output(mapped, Reveal::To(1)).unwrap();
    p.output(encrypted, Reveal::To(1)).unwrap();
    p.output(truncated, Reveal::To(1)).unwrap();
    let mut prg = Prg::from_seed_block(Block::new(45));
    let mut ring = || {
        (0..N)
            .map(|_| prg.random_block().low() & 0xffff_ffff)
            .collect()
    };
    let bits = |v: Vec<u64>| {
        Plain::Bits(
            v.iter()
                .map(|&x| (0..32).map(|i| x >> i & 1 == 1).collect())
                .collect(),
        )
    };
    let inputs = [
        vec![(x, Plain::Ring(ring())), (u, bits(ring()))],
        vec![(y, Plain::Ring(ring())), (th, bits(ring()))],
    ];
    (p, inputs)
}

type Outcome = Result<Vec<Option<Plain>>, Error>;

/// Both parties of `p` through the interposer, editing `target`; their results and the
/// frames each sent.
fn run(
    p: &Program,
    inputs: &[Vec<(Value, Plain)>; 2],
    target: Option<Target>,
) -> ([Outcome; 2], [usize; 2]) {
    let config = NetConfig::with_timeout(Duration::from_secs(20));
    let (zero, one, frames) = tamper::pair(target, config);
    let session = SessionConfig::default().seeded(Block::new(7));
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = [zero, one]
            .into_iter()
            .zip(inputs)
            .map(|(net, x)| {
                s.spawn(move || -> Outcome {
                    let net_id = net.id();
                    let peer = 1 - net_id;
                    let mut session = Session::new(net, session)?;
                    // Party 0's coefficients: 13 bits each, the width it states.
                    let weights = LinearWeights {
                        matrix: vec![4095, 3, 4096u64.wrapping_neg() & 0xffff_ffff, 7],
                        bias: vec![1, 2],
                    };
                    let weights = match net_id {
                        0 => vec![weights.clone(), weights],
                        _ => Vec::new(),
                    };
                    session.run(|s| {
                        let prepared = p.setup_with(s, peer, &weights)?;
                        p.online(s, peer, prepared, x)
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no party panics"))
            .collect::<Vec<_>>()
    });
    let [a, b]: [Outcome; 2] = results.try_into().expect("two parties");
    ([a, b], [frames.sent_by(0), frames.sent_by(1)])
}

/// The kinds of failure an edited frame may cause at either party: the peer's misbehaviour
/// seen, the peer's abort heard, the connection gone, or (an edited hello) a peer set up for
/// something else. Never a timeout (a party left waiting), an internal fault or the caller's
/// misuse.
const ALLOWED: [Fault; 4] = [
    Fault::PeerMisbehaved,
    Fault::PeerAborted,
    Fault::Network,
    Fault::Mismatch,
];

#[test]
fn every_edited_frame_stops_both_parties_cleanly_or_passes() {
    let (p, inputs) = program();
    let (honest, sent) = run(&p, &inputs, None);
    let [a, b] = honest.map(|r| r.expect("an honest run through the interposer"));
    assert_eq!(a[1], b[1], "both learn the comparison");
    assert_eq!(b[3], b[4], "both methods make the same map");
    assert!(sent[0] > 5 && sent[1] > 5, "frames sent: {sent:?}");
    let mut stopped = 0;
    for from in 0..2 {
        for index in 0..sent[from] {
            for edit in Edit::ALL {
                let target = Target {
                    from,
                    which: Which::Index(index),
                    edit,
                };
                let (results, _) = run(&p, &inputs, Some(target));
                let faults: Vec<Option<Fault>> = results
                    .iter()
                    .map(|r| r.as_ref().err().map(Failure::fault))
                    .collect();
                for f in faults.iter().flatten() {
                    assert!(ALLOWED.contains(f), "{target:?}: {faults:?}");
                }
                match edit {
                    // A frame of another size or kind, or none, never passes.
                    Edit::Cut | Edit::Extend | Edit::Truncate | Edit::ChangeKind => {
                        assert!(faults[1 - from].is_some(), "{target:?} passed: {faults:?}");
                    }
                    _ => {}
                }
                stopped += usize::from(faults.iter().any(Option::is_some));
            }
        }
    }
    eprintln!("frames sent {sent:?}; of the edited runs {stopped} stopped");
    assert!(stopped >= 4 * (sent[0] + sent[1]), "{stopped} runs stopped");
}
