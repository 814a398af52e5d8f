//! Inter-party parallel Yao: both parties garble some partitions and evaluate the others, the
//! outputs crossing into the tail as XOR shares; the output equals plaintext for both parties,
//! for every free-XOR scheme, on the UltraSFE circuits (many partitions) and AES-128 (mostly
//! tail); the work is shared; a scheme without free XOR is refused.

use std::thread;
use tessera_circuit::Circuit;
use tessera_circuit::eval::evaluate;
use tessera_circuit::library::{builtin, ultrasfe};
use tessera_core::{Block, Prg};
use tessera_garble::{SchemeKind, XorGates};
use tessera_net::memory;
use tessera_protocols::yao::ipp::{self, IppOutcome};
use tessera_protocols::{Error, Session, SessionConfig};

fn bits(prg: &mut Prg, n: u32) -> Vec<bool> {
    (0..n).map(|_| prg.random_block().lsb()).collect()
}

fn run(
    c: &Circuit,
    scheme: SchemeKind,
    x: &[bool],
    y: &[bool],
) -> (Result<IppOutcome, Error>, Result<IppOutcome, Error>) {
    let (na, nb) = memory::pair().unwrap();
    let (cb, yb) = (c.clone(), y.to_vec());
    let b = thread::spawn(move || {
        let mut s = Session::new(nb, SessionConfig::default())?;
        ipp::run(&mut s, 0, &cb, scheme, &yb)
    });
    let a = (|| {
        let mut s = Session::new(na, SessionConfig::default())?;
        ipp::run(&mut s, 1, c, scheme, x)
    })();
    (a, b.join().unwrap())
}

#[test]
fn both_parties_garble_and_learn_the_plaintext_output() {
    let mut prg = Prg::from_seed_block(Block::new(17));
    let circuits = [
        ("biomatch", ultrasfe::biomatch(64, 2, 16).unwrap()),
        ("mvmul", ultrasfe::mvmul(4, 4, 16).unwrap()),
        ("aes128", builtin("aes128").unwrap().unwrap()),
    ];
    for (name, c) in &circuits {
        for scheme in SchemeKind::ALL
            .into_iter()
            .filter(|s| s.xor_gates() == XorGates::Free)
        {
            let (x, y) = (bits(&mut prg, c.inputs[0]), bits(&mut prg, c.inputs[1]));
            let expect = evaluate(c, &[x.clone(), y.clone()]).unwrap().concat();
            let (a, b) = run(c, scheme, &x, &y);
            let (a, b) = (a.unwrap(), b.unwrap());
            assert_eq!(a.output, expect, "{name} {scheme}: A");
            assert_eq!(b.output, expect, "{name} {scheme}: B");
            assert_eq!(a.garbled_and, b.evaluated_and, "{name}");
            assert_eq!(b.garbled_and, a.evaluated_and, "{name}");
            if *name != "aes128" {
                assert!(
                    b.garbled_and * 4 > a.garbled_and,
                    "{name}: B garbles {} of A's {}",
                    b.garbled_and,
                    a.garbled_and
                );
            }
        }
    }
}

#[test]
fn a_scheme_without_free_xor_is_refused() {
    let c = ultrasfe::mvmul(2, 2, 8).unwrap();
    let prf = SchemeKind::ALL
        .into_iter()
        .find(|s| s.xor_gates() == XorGates::Garbled)
        .unwrap();
    let (x, y) = (
        vec![false; c.inputs[0] as usize],
        vec![true; c.inputs[1] as usize],
    );
    let (a, b) = run(&c, prf, &x, &y);
    assert!(matches!(a, Err(Error::Input(_))), "{a:?}");
    assert!(b.is_err());
}
