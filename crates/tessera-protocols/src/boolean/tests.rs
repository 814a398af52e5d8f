//! The cores stepped against each other with triples from a trusted dealer: every circuit
//! shape, SIMD width and output mode against plaintext, and malformed messages refused.

use super::*;
use tessera_circuit::eval::evaluate;
use tessera_circuit::library::builtin;
use tessera_core::{Block, Prg};
use tessera_net::role::{Side, run_pair};

/// Boolean triples for both sides of `n` AND gates, from a dealer.
fn dealt(prg: &mut Prg, n: usize) -> [BoolTriples; 2] {
    let blocks = n.div_ceil(128);
    let draw = |prg: &mut Prg| {
        let mut v = prg.random_blocks(blocks);
        if let Some(last) = v.last_mut()
            && !n.is_multiple_of(128)
        {
            *last = Block::new(last.as_u128() & ((1u128 << (n % 128)) - 1));
        }
        v
    };
    let (a0, a1, b0, b1, c0) = (draw(prg), draw(prg), draw(prg), draw(prg), draw(prg));
    let c1 = (0..blocks)
        .map(|i| c0[i] ^ ((a0[i] ^ a1[i]) & (b0[i] ^ b1[i])))
        .collect();
    [
        BoolTriples {
            len: n,
            a: a0,
            b: b0,
            c: c0,
        },
        BoolTriples {
            len: n,
            a: a1,
            b: b1,
            c: c1,
        },
    ]
}

fn random_bits(prg: &mut Prg, n: u32) -> Vec<bool> {
    (0..n).map(|_| prg.random_block().lsb()).collect()
}

/// Setup and online of `c` between two cores; returns both sides' outputs.
fn execute(
    c: &BoolCircuit,
    reveal: Reveal,
    inputs: [&[Vec<Vec<bool>>]; 2],
    seed: u128,
) -> [Option<Outputs>; 2] {
    let mut prg = Prg::from_seed_block(Block::new(seed));
    let [t0, t1] = dealt(&mut prg, c.triples_needed());
    let (mut s0, mut s1) = (
        c.setup_role(0, reveal, &t0, Prg::from_seed_block(Block::new(seed + 1))),
        c.setup_role(1, reveal, &t1, Prg::from_seed_block(Block::new(seed + 2))),
    );
    let (p0, p1) = run_pair(&mut s0, &mut s1, |_, _, _| {});
    let (p0, p1) = (p0.unwrap().unwrap(), p1.unwrap().unwrap());
    let mut o0 = c.online_role(1, p0, inputs[0], reveal).unwrap();
    let mut o1 = c.online_role(0, p1, inputs[1], reveal).unwrap();
    let (r0, r1) = run_pair(&mut o0, &mut o1, |_, _, _| {});
    [r0.unwrap().unwrap(), r1.unwrap().unwrap()]
}

/// Random inputs of `simd` copies for side `side`.
fn inputs_for(c: &Circuit, side: usize, simd: usize, prg: &mut Prg) -> Vec<Vec<Vec<bool>>> {
    (0..simd)
        .map(|_| {
            (0..c.inputs.len())
                .filter(|v| v % 2 == side)
                .map(|v| random_bits(prg, c.inputs[v]))
                .collect()
        })
        .collect()
}

/// The plaintext outputs of every copy.
fn expected(c: &Circuit, x: &[Vec<Vec<bool>>], y: &[Vec<Vec<bool>>]) -> Outputs {
    x.iter()
        .zip(y)
        .map(|(x, y)| {
            let mut all = Vec::new();
            let (mut xs, mut ys) = (x.iter(), y.iter());
            for v in 0..c.inputs.len() {
                let next = if v % 2 == 0 { xs.next() } else { ys.next() };
                all.push(next.unwrap().clone());
            }
            evaluate(c, &all).unwrap()
        })
        .collect()
}

#[test]
fn every_shape_and_width_equals_plaintext() {
    let mut prg = Prg::from_seed_block(Block::new(7));
    for name in ["aes128", "add8", "mul8", "lt16", "eq4", "sub1"] {
        let c = builtin(name).unwrap().unwrap();
        for simd in [1, 3, 64, 65, 130] {
            if name == "aes128" && simd > 64 {
                continue;
            }
            for sharing in BoolSharing::ALL {
                let bc = BoolCircuit::new(c.clone(), sharing, simd).unwrap();
                let (x, y) = (
                    inputs_for(&c, 0, simd, &mut prg),
                    inputs_for(&c, 1, simd, &mut prg),
                );
                let [o0, o1] = execute(&bc, Reveal::Both, [&x, &y], 100);
                let expect = expected(&c, &x, &y);
                assert_eq!(o0.as_ref(), Some(&expect), "{name} {sharing:?} simd {simd}");
                assert_eq!(o1.as_ref(), Some(&expect), "{name} {sharing:?} simd {simd}");
            }
        }
    }
}

#[test]
fn constants_inversions_and_copies() {
    // Outputs ¬a, 1, 0 ⊕ (a ∧ ¬b), a: every free gate kind, at side 0 and side 1.
    use tessera_circuit::{Gate, GateKind::*};
    let gate = |kind, a, b, out| Gate { kind, a, b, out };
    let c = Circuit {
        num_wires: 11,
        inputs: vec![1, 1],
        outputs: vec![4],
        gates: vec![
            gate(Inv, 0, 0, 2),
            gate(Inv, 1, 0, 3),
            gate(Eq, 0, 0, 4),
            gate(And, 0, 3, 5),
            gate(Xor, 4, 5, 6),
            gate(Eqw, 2, 0, 7),
            gate(Eq, 1, 0, 8),
            gate(Eqw, 6, 0, 9),
            gate(Eqw, 0, 0, 10),
        ],
    };
    for sharing in BoolSharing::ALL {
        let bc = BoolCircuit::new(c.clone(), sharing, 2).unwrap();
        let x = vec![vec![vec![false]], vec![vec![true]]];
        let y = vec![vec![vec![false]], vec![vec![false]]];
        let [o0, _] = execute(&bc, Reveal::To(0), [&x, &y], 5);
        assert_eq!(o0.unwrap(), expected(&c, &x, &y), "{sharing:?}");
    }
}

#[test]
fn outputs_go_only_to_who_learns_them() {
    let c = builtin("add8").unwrap().unwrap();
    let mut prg = Prg::from_seed_block(Block::new(3));
    for sharing in BoolSharing::ALL {
        let bc = BoolCircuit::new(c.clone(), sharing, 4).unwrap();
        let (x, y) = (
            inputs_for(&c, 0, 4, &mut prg),
            inputs_for(&c, 1, 4, &mut prg),
        );
        let expect = expected(&c, &x, &y);
        for side in 0..2 {
            let out = execute(&bc, Reveal::To(side), [&x, &y], 9);
            assert_eq!(out[side].as_ref(), Some(&expect));
            assert_eq!(out[1 - side], None);
        }
    }
}

#[test]
fn bits_past_a_message_end_are_refused() {
    // One output bit in 3 copies: a 1-byte message with 5 spare bits.
    let c = builtin("lt16").unwrap().unwrap();
    for sharing in BoolSharing::ALL {
        let bc = BoolCircuit::new(c.clone(), sharing, 3).unwrap();
        let mut prg = Prg::from_seed_block(Block::new(1));
        let [t0, t1] = dealt(&mut prg, bc.triples_needed());
        let mut s0 = bc.setup_role(0, Reveal::Both, &t0, Prg::from_seed_block(Block::new(2)));
        let mut s1 = bc.setup_role(1, Reveal::Both, &t1, Prg::from_seed_block(Block::new(3)));
        let (p0, p1) = run_pair(&mut s0, &mut s1, |_, _, _| {});
        let (x, y) = (
            inputs_for(&c, 0, 3, &mut prg),
            inputs_for(&c, 1, 3, &mut prg),
        );
        let mut o0 = bc
            .online_role(1, p0.unwrap().unwrap(), &x, Reveal::Both)
            .unwrap();
        let mut o1 = bc
            .online_role(0, p1.unwrap().unwrap(), &y, Reveal::Both)
            .unwrap();
        let (_, r1) = run_pair(&mut o0, &mut o1, |side, kind, bytes| {
            if side == Side::First && kind == OUTPUT {
                bytes[0] |= 0x80;
            }
        });
        let err = r1.unwrap().unwrap_err().to_string();
        assert!(
            err.contains("output shares") && err.contains("past its 3 bits"),
            "{sharing:?}: {err}"
        );
    }
}

#[test]
fn a_setup_for_another_circuit_is_refused() {
    let (a, b) = (
        builtin("add8").unwrap().unwrap(),
        builtin("sub8").unwrap().unwrap(),
    );
    let (ca, cb) = (
        BoolCircuit::new(a, BoolSharing::Gmw, 1).unwrap(),
        BoolCircuit::new(b, BoolSharing::Gmw, 1).unwrap(),
    );
    let mut prg = Prg::from_seed_block(Block::new(1));
    let [t0, t1] = dealt(&mut prg, ca.triples_needed());
    let mut s0 = ca.setup_role(0, Reveal::Both, &t0, Prg::from_seed_block(Block::new(2)));
    let mut s1 = ca.setup_role(1, Reveal::Both, &t1, Prg::from_seed_block(Block::new(3)));
    let (p0, _) = run_pair(&mut s0, &mut s1, |_, _, _| {});
    let x = vec![vec![vec![false; 8]]];
    assert!(
        cb.online_role(1, p0.unwrap().unwrap(), &x, Reveal::Both)
            .is_err()
    );
}

/// A layer wide enough to be split across threads gives the same outputs as plaintext, for a
/// SIMD width that is and one that is not a multiple of 64.
#[test]
fn wide_layers_split_across_threads_equal_plaintext() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let mut g = tessera_circuit::builder::Builder::new();
    let (a, b) = (g.input(300), g.input(300));
    let and = g.and_bits(&a, &b);
    let c = g.finish(&[and]).unwrap();
    let mut prg = Prg::from_seed_block(Block::new(12));
    for simd in [1000, 1024] {
        assert!(300 * simd / 64 >= super::layers::PARALLEL_WORDS);
        for sharing in BoolSharing::ALL {
            let bc = BoolCircuit::new(c.clone(), sharing, simd).unwrap();
            let (x, y) = (
                inputs_for(&c, 0, simd, &mut prg),
                inputs_for(&c, 1, simd, &mut prg),
            );
            let [o0, _] = pool.install(|| execute(&bc, Reveal::To(0), [&x, &y], 77));
            assert_eq!(o0.unwrap(), expected(&c, &x, &y), "{sharing:?} simd {simd}");
        }
    }
}
