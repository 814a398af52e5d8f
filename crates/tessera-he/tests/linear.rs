//! The client's and the server's roles of a linear layer, stepped directly: their shares add
//! up to W·x mod 2^ℓ, and every edited, cut or padded message is refused as the peer's fault.

mod common;

use rand_core::RngCore;
use tessera_core::{Failure, Fault};
use tessera_he::conv::{ConvEncoding, ConvShape};
use tessera_he::fc::FcEncoding;
use tessera_he::linear::{Answer, Client, Encoding, Query, Server, answer_bytes};
use tessera_he::{Error, Rounding};

use common::{Keys, keys};

fn mask(bits: u32) -> u64 {
    if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

fn random_weights<E: Encoding>(run: &mut Keys, e: &E) -> Vec<i64> {
    (0..e.weights())
        .map(|_| (run.prg.next_u64() % 4001) as i64 - 2000)
        .collect()
}

/// A batch of two vectors through the roles with the matrix `w`: each query's shares add up
/// to W·x. Returns the first query and its answer.
fn shares_add_up_with<E: Encoding>(run: &mut Keys, e: &E, bits: u32, w: &[i64]) -> (Query, Answer) {
    let xs: Vec<Vec<u64>> = (0..2)
        .map(|_| {
            (0..e.inputs())
                .map(|_| run.prg.next_u64() & mask(bits))
                .collect()
        })
        .collect();
    let client = Client::new(&run.ctx, &run.sk, e);
    let server = Server::new(&run.ctx, &run.pk, e, w).unwrap();
    let queries: Vec<Query> = xs
        .iter()
        .map(|x| client.query(x, &mut run.prg).unwrap())
        .collect();
    let answered = server.answer(&queries, &mut run.prg).unwrap();
    assert_eq!(answered.len(), 2);
    for (x, (answer, theirs)) in xs.iter().zip(&answered) {
        let ours = client.open(answer).unwrap();
        let want = common::through_blocks(e, x, w);
        for ((a, b), c) in ours.iter().zip(theirs).zip(&want) {
            assert_eq!(a.wrapping_add(*b) & mask(bits), c & mask(bits));
        }
    }
    let (answer, _) = answered.into_iter().next().unwrap();
    (queries.into_iter().next().unwrap(), answer)
}

fn shares_add_up<E: Encoding>(run: &mut Keys, e: &E, bits: u32) -> (Query, Answer) {
    let w = random_weights(run, e);
    shares_add_up_with(run, e, bits, &w)
}

/// A 1 × 1 convolution whose blocks hold one channel and one out channel (an image larger
/// than half of N): its kernel polynomials are constants, multiplied without a transform, and
/// those of zero are left out; the shares still add up.
#[test]
fn constant_kernel_polynomials_end_in_additive_shares() {
    let mut run = keys(32, 35);
    let n = run.ctx.degree();
    let conv = ConvEncoding::cheapest(
        ConvShape {
            channels: 3,
            height: 50,
            width: 50,
            out_channels: 4,
            kernel: [1, 1],
            stride: [1, 1],
        },
        n,
        n,
        n,
    )
    .unwrap();
    let p = conv.partition();
    assert_eq!((p.channels, p.out_channels), (1, 1), "{p:?}");
    let mut w = random_weights(&mut run, &conv);
    w[1] = 0;
    w[5] = 0;
    shares_add_up_with(&mut run, &conv, 32, &w);
}

#[test]
fn a_convolution_and_a_dense_layer_end_in_additive_shares() {
    let mut run = keys(32, 31);
    let n = run.ctx.degree();
    let conv = ConvEncoding::cheapest(
        ConvShape {
            channels: 48,
            height: 10,
            width: 10,
            out_channels: 5,
            kernel: [3, 3],
            stride: [1, 1],
        },
        n,
        n,
        n,
    )
    .unwrap();
    let (query, answer) = shares_add_up(&mut run, &conv, 32);
    assert!(query.seeds.len() > 1 && answer.primes == 1);
    // One prime of 49 bits kept at ℓ = 32: 16 bits of room for the error, of which c1's words
    // give up 7 (σ of 15 units per bit, 7.5σ within a quarter) and c0's 15.
    assert_eq!(Rounding::of(&run.ctx, 1), Rounding { c1: 7, c0: 15 });
    let outputs: usize = (0..conv.output_blocks())
        .map(|b| conv.output_places(b).len())
        .sum();
    let bits = conv.output_blocks() * 42 * n + 34 * outputs;
    assert!(answer.words.len() <= bits.div_ceil(8) + conv.output_blocks());
    assert_eq!(answer.words.len(), answer_bytes(&run.ctx, &conv, 1));
    let fc = FcEncoding::cheapest(100, 5000, n, n, n).unwrap();
    shares_add_up(&mut run, &fc, 32);
    let mut wide = keys(64, 32);
    let conv = ConvEncoding::cheapest(
        ConvShape {
            channels: 3,
            height: 20,
            width: 20,
            out_channels: 2,
            kernel: [5, 5],
            stride: [2, 2],
        },
        wide.ctx.degree(),
        1,
        1,
    )
    .unwrap();
    shares_add_up(&mut wide, &conv, 64);
}

#[test]
fn edited_cut_and_padded_messages_are_the_peers_fault() {
    let mut run = keys(32, 33);
    let n = run.ctx.degree();
    let fc = FcEncoding::cheapest(40, 6000, n, n, n).unwrap();
    let (query, answer) = shares_add_up(&mut run, &fc, 32);
    let w = vec![1i64; fc.weights()];
    let server = Server::new(&run.ctx, &run.pk, &fc, &w).unwrap();
    let client = Client::new(&run.ctx, &run.sk, &fc);
    let peer = |e: Error| {
        assert!(matches!(e, Error::Malformed { .. }), "{e}");
        assert_eq!(e.fault(), Fault::PeerMisbehaved);
    };
    let mut queries = Vec::new();
    let mut q = query.clone();
    q.seeds.pop();
    queries.push(q);
    let mut q = query.clone();
    q.bodies.pop();
    queries.push(q);
    let mut q = query.clone();
    q.bodies.push(0);
    queries.push(q);
    // A word of the 49-bit prime's row set to all ones: beyond the prime.
    let mut q = query.clone();
    q.bodies[..8].fill(0xff);
    queries.push(q);
    for q in queries {
        peer(
            server
                .answer(&[query.clone(), q], &mut run.prg)
                .unwrap_err(),
        );
    }
    let mut answers = Vec::new();
    for primes in [0, 3, 200] {
        answers.push(Answer {
            primes,
            ..answer.clone()
        });
    }
    let mut a = answer.clone();
    a.words.pop();
    answers.push(a);
    let mut a = answer.clone();
    a.words.push(0);
    answers.push(a);
    // (A word of all ones is no error here: an answer of one prime travels rounded, and
    // every value of its narrower words is some residue; tests/rlwe.rs edits whole words.)
    assert_ne!(Rounding::of(&run.ctx, 1).c1, 0);
    for a in answers {
        peer(client.open(&a).unwrap_err());
    }
    // The caller's own mistakes are its own.
    assert_eq!(
        client.query(&[0; 3], &mut run.prg).unwrap_err().fault(),
        Fault::Misuse
    );
    assert!(Server::new(&run.ctx, &run.pk, &fc, &[0; 3]).is_err());
}
