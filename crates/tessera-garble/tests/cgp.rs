//! Coarse-grained parallel garbling against plaintext for every scheme and thread count (1,
//! 2, 3, 7), on random circuits cut at several partition sizes and on the UltraSFE circuits;
//! the tables do not depend on the thread count; the compiler finds the partitions of
//! BioMatch, MExp and MVMul with a small tail.

mod common;

use proptest::prelude::*;
use tessera_circuit::Circuit;
use tessera_circuit::eval::evaluate;
use tessera_circuit::library::ultrasfe;
use tessera_core::{Backend, Block, Prg};
use tessera_garble::{
    Batching, CgpEvaluator, CgpGarbler, CgpStreamEvaluator, InputEncoding, Partitions, Plan,
    Scheme, SchemeKind, SchemeVisitor, TableBuffer, TableSink, decode, decoding_bits,
};

const THREADS: [usize; 4] = [1, 2, 3, 7];

fn compile<S: Scheme>(c: &Circuit) -> Plan {
    Plan::with_xor(c, Batching::default_for(c), S::XOR_GATES)
}

fn random_bits(prg: &mut Prg, n: u32) -> Vec<bool> {
    (0..n).map(|_| prg.random_block().lsb()).collect()
}

/// Garbles and evaluates `c` cut by `parts` on every thread count; checks the output against
/// plaintext and the tables against one thread's.
struct Check<'a> {
    c: &'a Circuit,
    parts: Option<usize>,
    seed: u64,
}

impl SchemeVisitor for &Check<'_> {
    type Output = ();
    fn visit<S: Scheme>(self) {
        let c = self.c;
        let p = match self.parts {
            Some(limit) => Partitions::with_limit(c, (limit, 3), compile::<S>).unwrap(),
            None => Partitions::new(c, 2, compile::<S>).unwrap(),
        };
        let mut prg = Prg::from_seed_block(Block::new(u128::from(self.seed)));
        let inputs: Vec<Vec<bool>> = c.inputs.iter().map(|&w| random_bits(&mut prg, w)).collect();
        let expect = evaluate(c, &inputs).unwrap().concat();
        let bits = inputs.concat();
        let enc = InputEncoding::<S>::random(&mut prg, p.num_inputs());
        let active = enc.encode(0, &bits);
        let scheme = S::with_backend(Backend::active(), Block::new(77)).unwrap();
        let mut first: Option<Vec<Vec<Block>>> = None;
        for threads in THREADS {
            let mut g = CgpGarbler::new(scheme.clone(), threads);
            let mut tables = vec![TableBuffer::new(); p.len()];
            let decoding =
                decoding_bits::<S>(g.garble(&p, &enc.secret, &enc.wires, &mut tables).unwrap());
            let mut e = CgpEvaluator::new(scheme.clone(), threads);
            let out = decode(e.evaluate(&p, &active, &tables).unwrap(), &decoding);
            assert_eq!(
                out,
                expect,
                "{} threads {threads} parts {:?} seed {}",
                S::NAME,
                self.parts,
                self.seed
            );
            // Evaluated as the streams come, each partition handed over once complete.
            let parts = std::sync::Arc::new(p.clone());
            let mut se = CgpStreamEvaluator::new(scheme.clone(), threads);
            let mut run = se.start(&parts, &active).unwrap();
            for (k, t) in tables[..p.len() - 1].iter().enumerate() {
                let mut buffer = run.buffer();
                buffer.put(t.as_slice()).unwrap();
                run.evaluate(k, buffer).unwrap();
            }
            let streamed = run.finish(tables[p.len() - 1].as_slice()).unwrap();
            assert_eq!(decode(streamed, &decoding), expect, "{} streamed", S::NAME);
            // Streamed, the partitions' tables go out in index order, the tail's last.
            let mut sent = Vec::new();
            let send = |t: &[Block]| {
                sent.push(t.to_vec());
                Ok(())
            };
            let mut streams = vec![TableBuffer::new(); p.len()];
            CgpGarbler::new(scheme.clone(), threads)
                .garble_streaming(&p, (&enc.secret, &enc.wires), &mut streams, send)
                .unwrap();
            assert!(
                sent.iter().eq(tables.iter().map(TableBuffer::as_slice)),
                "{}: streamed on {threads} threads",
                S::NAME
            );
            match &first {
                None => first = Some(tables.iter().map(|t| t.as_slice().to_vec()).collect()),
                Some(t) => assert!(
                    t.iter().zip(&tables).all(|(a, b)| a[..] == *b.as_slice()),
                    "{}: tables differ on {threads} threads",
                    S::NAME
                ),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn random_circuits_in_partitions_equal_plaintext((c, seed) in common::random_circuit(300, Some(24))) {
        for parts in [Some(1), Some(3), Some(16), None] {
            for kind in SchemeKind::ALL {
                kind.visit(&Check { c: &c, parts, seed });
            }
        }
    }
}

/// The share of AND gates in the tail, and the number of partitions besides it.
fn tail_share(c: &Circuit) -> (f64, usize) {
    let p = Partitions::new(c, 1, compile::<tessera_garble::Prp>).unwrap();
    let and = p.and_gates();
    let total: usize = and.iter().sum();
    (*and.last().unwrap() as f64 / total as f64, p.len() - 1)
}

#[test]
fn ultrasfe_circuits_split_into_partitions_with_a_small_tail() {
    for (name, c, max_tail) in [
        ("biomatch", ultrasfe::biomatch(128, 2, 16).unwrap(), 0.08),
        ("mexp", ultrasfe::mexp(8, 12).unwrap(), 0.05),
        ("mvmul", ultrasfe::mvmul(8, 8, 16).unwrap(), 0.05),
    ] {
        let (tail, parts) = tail_share(&c);
        assert!(
            parts >= 4 && tail <= max_tail,
            "{name}: {parts} partitions, tail {tail:.3} of the AND gates"
        );
        let share = Partitions::independent_share(&c);
        assert!(
            (share - (1.0 - tail)).abs() < 1e-9,
            "{name}: independent share {share}, compiled tail {tail}"
        );
        for kind in [
            SchemeKind::ALL[0],
            SchemeKind::ALL[SchemeKind::ALL.len() - 1],
        ] {
            kind.visit(&Check {
                c: &c,
                parts: None,
                seed: 3,
            });
        }
    }
}

/// A circuit whose rounds depend on each other keeps most AND gates in the tail (AES-128:
/// only pieces of the first round and key schedule are independent).
#[test]
fn aes_has_no_independent_share() {
    let aes = tessera_circuit::library::builtin("aes128")
        .unwrap()
        .unwrap();
    let share = Partitions::independent_share(&aes);
    assert!(share < 0.25, "AES-128: independent share {share}");
}

/// Compiling on several threads gives the partitions and plans of one thread.
#[test]
fn partitions_compile_alike_on_every_thread_count() {
    let circuits = [
        ultrasfe::mvmul(4, 4, 16).unwrap(),
        ultrasfe::biomatch(16, 2, 16).unwrap(),
        tessera_circuit::library::builtin("sha256")
            .unwrap()
            .unwrap(),
    ];
    for c in &circuits {
        for limit in [1, 50, 1024] {
            let one = Partitions::with_limit(c, (limit, 1), compile::<tessera_garble::Prp>);
            let one = format!("{:?}", one.unwrap());
            for threads in [2, 3, 7] {
                let many =
                    Partitions::with_limit(c, (limit, threads), compile::<tessera_garble::Prp>);
                assert_eq!(one, format!("{:?}", many.unwrap()), "{limit} {threads}");
            }
        }
    }
}

/// A failed send stops a streamed garbling: its error comes back, and nothing more is sent.
#[test]
fn a_failed_send_stops_the_streamed_garbling() {
    let c = ultrasfe::mvmul(4, 4, 16).unwrap();
    let p = Partitions::new(&c, 1, compile::<tessera_garble::Prp>).unwrap();
    assert!(p.len() > 3, "{} partitions", p.len());
    let mut prg = Prg::from_seed_block(Block::new(5));
    let enc = InputEncoding::<tessera_garble::Prp>::random(&mut prg, p.num_inputs());
    let scheme = tessera_garble::Prp::with_backend(Backend::active(), Block::new(7)).unwrap();
    for threads in [1, 2, 3] {
        let mut calls = 0;
        let send = |_: &[Block]| {
            calls += 1;
            match calls {
                2 => Err(tessera_garble::Error::Stream(
                    tessera_garble::StreamError::text("peer gone"),
                )),
                _ => Ok(()),
            }
        };
        let mut streams = vec![TableBuffer::new(); p.len()];
        let mut g = CgpGarbler::new(scheme.clone(), threads);
        let got = g.garble_streaming(&p, (&enc.secret, &enc.wires), &mut streams, send);
        assert!(
            matches!(got, Err(tessera_garble::Error::Stream(ref e)) if e.to_string() == "peer gone"),
            "{threads} threads: {:?}",
            got.err()
        );
        assert_eq!(calls, 2, "{threads} threads");
    }
}

/// A streamed evaluation refuses a partition handed twice or out of range, a finish with a
/// partition missing, and labels for another circuit, with an error.
#[test]
fn a_streamed_evaluation_refuses_what_does_not_fit() {
    let c = ultrasfe::mvmul(4, 4, 16).unwrap();
    let p = std::sync::Arc::new(Partitions::new(&c, 1, compile::<tessera_garble::Prp>).unwrap());
    let scheme = tessera_garble::Prp::with_backend(Backend::active(), Block::new(7)).unwrap();
    let mut e = CgpStreamEvaluator::new(scheme, 2);
    let labels = vec![Block::ZERO; p.num_inputs()];
    assert!(e.start(&p, &labels[1..]).is_err());
    let mut run = e.start(&p, &labels).unwrap();
    let tail = p.len() - 1;
    assert!(run.evaluate(tail, TableBuffer::new()).is_err());
    // Partition 0 with no tables: its thread reports the stream too short, which this call
    // may already hear. Handed again, it is refused first.
    let _ = run.evaluate(0, TableBuffer::new());
    let again = run.evaluate(0, TableBuffer::new()).unwrap_err().to_string();
    assert!(again.contains("partition 0 handed again"), "{again}");
    let err = run.finish(&[]).unwrap_err().to_string();
    assert!(err.contains("partition 1 got no tables"), "{err}");
    // Every partition without tables: whichever call hears of it, a thread's error comes back.
    let mut run = e.start(&p, &labels).unwrap();
    let handed = (0..tail).try_for_each(|k| run.evaluate(k, TableBuffer::new()));
    let err = handed
        .and_then(|()| run.finish(&[]).map(drop))
        .unwrap_err()
        .to_string();
    assert!(err.contains("garbled tables end"), "{err}");
}
