//! Triples checked by opening them: both parties' generators over an in-memory pair, with
//! providers of every [`Flow`] (IKNP and SoftSpoken one way, Ferret the other, KOS both), for
//! sizes that are and are not multiples of 128 and of the batch; and Gilboa's roles stepped
//! against each other with an edited correction.

use super::*;
use crate::{OtChoice, Protocol, Security};
use std::thread;
use tessera_net::memory;
use tessera_net::role::{Side, run_pair};

/// Runs `f` as both parties (party 0 sender-first) with fresh providers both ways; returns both
/// results.
fn pair<T: Send + 'static>(
    protocol: OtChoice,
    f: impl Fn(&mut TripleGenerator, &mut Links<'_>) -> T + Send + Sync + Copy + 'static,
) -> (T, T) {
    let (mut a, mut b) = memory::pair().unwrap();
    let party = move |net: &mut tessera_net::Network, me: usize| {
        let ch = &mut net.peer(1 - me);
        let mut spaces = Spaces::default();
        let prg = |s: u128| Prg::from_seed_block(Block::new(s + 10 * me as u128));
        let (mut s, mut r) = protocol
            .pair(ch, &mut spaces, me == 0, &mut prg(1))
            .unwrap();
        let mut g = TripleGenerator::new(&mut spaces, me == 0, prg(3)).unwrap();
        let mut links = Links {
            channel: ch,
            sender: s.as_mut(),
            receiver: r.as_mut(),
        };
        f(&mut g, &mut links)
    };
    let other = thread::spawn(move || party(&mut b, 1));
    let mine = party(&mut a, 0);
    (mine, other.join().unwrap())
}

/// Providers of every flow: receiver to sender, sender to receiver, both ways.
fn every_flow() -> [OtChoice; 4] {
    [
        OtChoice::Extension(Protocol::IKNP),
        OtChoice::Extension(Protocol::softspoken(4, Security::SemiHonest).unwrap()),
        OtChoice::Ferret(crate::ferret::Params::INSECURE_SMALL, Security::SemiHonest),
        OtChoice::Extension(Protocol::KOS),
    ]
}

fn bit(v: &[Block], j: usize) -> bool {
    (v[j / 128].as_u128() >> (j % 128)) & 1 == 1
}

#[test]
fn boolean_triples_open_to_products() {
    for protocol in every_flow() {
        for n in [1, 128, 1000, WINDOW_OTS + BATCH_OTS + 300] {
            let (x, y) = pair(protocol, move |g, l| g.boolean(l, n).unwrap());
            let mut ones = [0; 2];
            for j in 0..n {
                let a = bit(&x.a, j) ^ bit(&y.a, j);
                let b = bit(&x.b, j) ^ bit(&y.b, j);
                assert_eq!(bit(&x.c, j) ^ bit(&y.c, j), a & b, "n={n} j={j}");
                ones[0] += usize::from(a);
                ones[1] += usize::from(b);
            }
            if n >= 1000 {
                assert!(ones.iter().all(|&o| o > n / 3 && o < 2 * n / 3), "{ones:?}");
            }
        }
    }
}

fn check_arithmetic<R: Ring>(protocol: OtChoice, n: usize) {
    let (x, y) = pair(protocol, move |g, l| g.arithmetic::<R>(l, n).unwrap());
    let add = |p: R, q: R| p.to_u64().wrapping_add(q.to_u64());
    let mut distinct = std::collections::HashSet::new();
    for j in 0..n {
        let (a, b) = (add(x.a[j], y.a[j]), add(x.b[j], y.b[j]));
        let c = R::from_u64(add(x.c[j], y.c[j]));
        assert_eq!(c, R::from_u64(a.wrapping_mul(b)), "ℓ={} j={j}", R::BITS);
        distinct.insert(R::from_u64(b).to_u64());
    }
    assert!(
        distinct.len() > n.min(1 << R::BITS.min(16)) / 2,
        "b is not random"
    );
}

#[test]
fn arithmetic_triples_open_to_products_for_every_width() {
    let softspoken = OtChoice::Extension(Protocol::softspoken(2, Security::SemiHonest).unwrap());
    check_arithmetic::<u8>(softspoken, 1000);
    check_arithmetic::<u16>(softspoken, 700);
    check_arithmetic::<u32>(softspoken, 3000);
    for protocol in every_flow() {
        check_arithmetic::<u64>(protocol, BATCH_OTS / 64 + 5);
    }
}

fn check_matrix<R: Ring>(shape: (usize, usize, usize)) {
    let (x, y) = pair(OtChoice::Extension(Protocol::IKNP), move |g, l| {
        g.matrix::<R>(l, shape).unwrap()
    });
    let (rows, inner, cols) = shape;
    let add = |p: R, q: R| p.to_u64().wrapping_add(q.to_u64());
    for r in 0..rows {
        for q in 0..cols {
            let want = (0..inner).fold(0u64, |acc, p| {
                let a = add(x.a[r * inner + p], y.a[r * inner + p]);
                let b = add(x.b[p * cols + q], y.b[p * cols + q]);
                acc.wrapping_add(a.wrapping_mul(b))
            });
            let got = add(x.c[r * cols + q], y.c[r * cols + q]);
            assert_eq!(R::from_u64(got), R::from_u64(want), "{shape:?} ({r}, {q})");
        }
    }
}

#[test]
fn matrix_triples_open_to_matrix_products() {
    check_matrix::<u32>((3, 5, 2));
    check_matrix::<u64>((16, 40, 3));
    check_matrix::<u8>((1, 1, 1));
    check_matrix::<u16>((7, 300, 5));
}

/// Gilboa's roles on made-up correlated rows, τ in one message or in pieces: the shares add up
/// to x·y; a correction edited on the way gives a wrong product (semi-honest: nothing detects
/// it, and opening shows it), and a piece of the wrong length is refused.
#[test]
fn gilboa_roles_multiply_and_an_edit_shows() {
    let mut prg = Prg::from_seed_block(Block::new(99));
    let delta = prg.random_block().with_lsb(true);
    // One element per product (τ written word by word), vectors (copied by width), and
    // vectors long enough that τ goes in three pieces (12 products of 4096 elements each).
    for (m, products) in [(1, 5), (3, 4), (4096, 25usize)] {
        let q: Vec<Block> = (0..products * 32)
            .map(|_| prg.random_block().with_lsb(false))
            .collect();
        let t: Vec<Block> = q
            .iter()
            .map(|&q| q ^ (Block::mask(prg.random_block().lsb()) & delta))
            .collect();
        let x: Vec<u32> = (0..products * m)
            .map(|_| prg.random_block().low() as u32)
            .collect();
        let (mut s_scratch, mut r_scratch) = (Scratch::default(), Scratch::default());
        let pieces = products.div_ceil(products_per_message(32, 32, m));
        assert_eq!(pieces, if m == 4096 { 3 } else { 1 });
        // No edit, a flipped bit, a byte short, a byte too many (in the first message).
        for edit in 0..4 {
            let (mut s_out, mut r_out) = (vec![0u32; x.len()], vec![0u32; x.len()]);
            let mut sender = GilboaSender {
                x: &x,
                m,
                width: 32,
                rows: &q,
                delta,
                first: 7,
                out: &mut s_out,
                scratch: &mut s_scratch,
            };
            let mut receiver = GilboaReceiver {
                m,
                width: 32,
                rows: &t,
                choices: None,
                first: 7,
                out: &mut r_out,
                scratch: &mut r_scratch,
            };
            let mut messages = 0;
            let (a, b) = run_pair(&mut sender, &mut receiver, |side, kind, bytes| {
                if side == Side::First && kind == CORRECTIONS {
                    messages += 1;
                }
                if side == Side::First && kind == CORRECTIONS && messages == 1 {
                    match edit {
                        1 => bytes[0] ^= 1,
                        2 => drop(bytes.pop()),
                        3 => bytes.push(0),
                        _ => {}
                    }
                }
            });
            assert!(matches!(a, Some(Ok(()))));
            if edit < 2 {
                assert_eq!(messages, pieces, "m {m}");
            }
            if edit >= 2 {
                assert!(matches!(b, Some(Err(_))), "m {m} edit {edit}");
                continue;
            }
            assert!(matches!(b, Some(Ok(()))));
            let mut right = true;
            for p in 0..products {
                let y = (0..32).fold(0u32, |y, i| y | (u32::from(t[p * 32 + i].lsb()) << i));
                for e in 0..m {
                    let k = p * m + e;
                    right &= s_out[k].wrapping_add(r_out[k]) == x[k].wrapping_mul(y);
                }
            }
            assert_eq!(right, edit == 0 || !t[0].lsb(), "m {m} edit {edit}");
        }
    }
}

/// Like [`pair`], with the party's index passed to `f`.
fn pair_sides<T: Send + 'static>(
    protocol: OtChoice,
    f: impl Fn(usize, &mut TripleGenerator, &mut Links<'_>) -> T + Send + Sync + Copy + 'static,
) -> (T, T) {
    let (mut a, mut b) = memory::pair().unwrap();
    let party = move |net: &mut tessera_net::Network, me: usize| {
        let ch = &mut net.peer(1 - me);
        let mut spaces = Spaces::default();
        let prg = |s: u128| Prg::from_seed_block(Block::new(s + 10 * me as u128));
        let (mut s, mut r) = protocol
            .pair(ch, &mut spaces, me == 0, &mut prg(1))
            .unwrap();
        let mut g = TripleGenerator::new(&mut spaces, me == 0, prg(3)).unwrap();
        let mut links = Links {
            channel: ch,
            sender: s.as_mut(),
            receiver: r.as_mut(),
        };
        f(me, &mut g, &mut links)
    };
    let other = thread::spawn(move || party(&mut b, 1));
    let mine = party(&mut a, 0);
    (mine, other.join().unwrap())
}

fn check_vector_products<R: Ring>(protocol: OtChoice, products: usize, m: usize) {
    let x = |j: usize| R::from_u64((j as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    // Party 0 sends its vectors; party 1 multiplies them by its random multipliers.
    let (sent, received) = pair_sides(protocol, move |me, g, l| {
        if me == 0 {
            let x: Vec<R> = (0..products * m).map(x).collect();
            let random = Multipliers::Random;
            (
                Vec::new(),
                g.vector_products_send::<R>(l, &x, m, random).unwrap(),
            )
        } else {
            let (y, shares) = g.vector_products_receive::<R>(l, m, products).unwrap();
            (y, shares)
        }
    });
    let (y, theirs) = received;
    assert_eq!(
        (y.len(), theirs.len(), sent.1.len()),
        (products, products * m, products * m)
    );
    for (p, &yp) in y.iter().enumerate() {
        for e in 0..m {
            let j = p * m + e;
            let sum = sent.1[j].to_u64().wrapping_add(theirs[j].to_u64());
            let want = x(j).to_u64().wrapping_mul(yp.to_u64());
            assert_eq!(
                R::from_u64(sum),
                R::from_u64(want),
                "ℓ={} product {p} element {e}",
                R::BITS
            );
        }
    }
    if products >= 64 {
        let distinct: std::collections::HashSet<u64> = y.iter().map(|v| v.to_u64()).collect();
        assert!(distinct.len() > products / 2, "multipliers look random");
    }
}

#[test]
fn vector_products_one_way_open_to_products() {
    for protocol in every_flow() {
        check_vector_products::<u64>(protocol, 100, 7);
        check_vector_products::<u32>(protocol, 3, 1);
    }
    let big = BATCH_OTS / 64 + 5;
    check_vector_products::<u64>(OtChoice::Extension(Protocol::IKNP), big, 3);
    check_vector_products::<u8>(OtChoice::Extension(Protocol::IKNP), 50, 16);
    check_vector_products::<u16>(OtChoice::Extension(Protocol::IKNP), 0, 4);
    // Corrections in several messages: 12 products of 4096 elements fill a piece.
    let pieces = products_per_message(32, 32, 4096);
    assert_eq!(pieces, 12);
    check_vector_products::<u32>(OtChoice::Extension(Protocol::IKNP), 3 * pieces + 1, 4096);
}

/// Chosen multipliers of `width` bits (−2^(width−1), 2^(width−1) − 1, zero and random ones
/// between): the shares add up to x·y, with `width` OTs each; ℓ bits are chosen multipliers
/// too; a multiplier outside the width is refused.
fn check_chosen_products<R: Ring>(protocol: OtChoice, products: usize, (m, width): (usize, u32)) {
    let x = |j: usize| R::from_u64((j as u64 + 3).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let y = move |p: usize| {
        let top = 1i128 << (width - 1);
        let v = match p {
            0 => -top,
            1 => top - 1,
            2 => 0,
            _ => {
                i128::from((p as i64).wrapping_mul(0x2545_f491_4f6c_dd1d)).rem_euclid(2 * top) - top
            }
        };
        R::from_u64(v as u64)
    };
    let (sent, received) = pair_sides(protocol, move |me, g, l| {
        let chosen = Multipliers::Chosen { width };
        if me == 0 {
            let x: Vec<R> = (0..products * m).map(x).collect();
            g.vector_products_send::<R>(l, &x, m, chosen).unwrap()
        } else {
            let y: Vec<R> = (0..products).map(y).collect();
            g.vector_products_chosen::<R>(l, m, &y, width).unwrap()
        }
    });
    for p in 0..products {
        for e in 0..m {
            let j = p * m + e;
            let sum = sent[j].to_u64().wrapping_add(received[j].to_u64());
            let want = x(j).to_u64().wrapping_mul(y(p).to_u64());
            assert_eq!(
                R::from_u64(sum),
                R::from_u64(want),
                "ℓ={} width {width} product {p} element {e}",
                R::BITS
            );
        }
    }
}

#[test]
fn chosen_multipliers_of_few_bits_multiply_and_others_are_refused() {
    for protocol in every_flow() {
        check_chosen_products::<u32>(protocol, 40, (5, 14));
        check_chosen_products::<u64>(protocol, 9, (1, 64));
    }
    let ext = OtChoice::Extension(Protocol::IKNP);
    check_chosen_products::<u32>(ext, BATCH_OTS / 14 + 7, (2, 14));
    check_chosen_products::<u8>(ext, 20, (3, 1));
    check_chosen_products::<u16>(ext, 20, (4, 16));
    // Corrections in several messages, the chosen bits taken piece by piece.
    let pieces = products_per_message(32, 8, 4096);
    assert_eq!(pieces, 32);
    check_chosen_products::<u32>(ext, 3 * pieces + 5, (4096, 8));
    // 2^13 does not fit 14 bits; nor does a width beyond the ring.
    let (_, refused) = pair_sides(ext, |me, g, l| {
        (me == 1).then(|| {
            let too_big = g.vector_products_chosen::<u32>(l, 3, &[1 << 13], 14);
            let too_wide = g.vector_products_chosen::<u32>(l, 3, &[1], 33);
            (too_big.is_err(), too_wide.is_err())
        })
    });
    assert_eq!(refused, Some((true, true)));
}

/// Chosen products started ahead ([`TripleGenerator::start_chosen`]): three calls started
/// before the first is finished, with every provider's flow (those whose draws need the
/// sender's messages draw at the finish), equal x·y; a finish in another ring is refused.
#[test]
fn chosen_products_started_ahead_multiply() {
    // (products, m) per call: one batch, several batches of OTs, several pieces.
    const CALLS: [(usize, usize); 3] = [(5, 3), (BATCH_OTS / 6 + 9, 2), (70, 4096)];
    let x = |c: usize, j: usize| ((c * 1_000_003 + j) as u32).wrapping_mul(0x9e37_79b9);
    let y = |c: usize, p: usize| ((c * 7919 + p * 31) % 64) as u32;
    for protocol in every_flow() {
        let (sent, received) = pair_sides(protocol, move |me, g, l| {
            let chosen = Multipliers::Chosen { width: 7 };
            if me == 0 {
                let each = CALLS.iter().enumerate().map(|(c, &(products, m))| {
                    let x: Vec<u32> = (0..products * m).map(|j| x(c, j)).collect();
                    g.vector_products_send::<u32>(l, &x, m, chosen).unwrap()
                });
                return each.collect::<Vec<_>>();
            }
            let started: Vec<ChosenProducts> = CALLS
                .iter()
                .enumerate()
                .map(|(c, &(products, m))| {
                    let y: Vec<u32> = (0..products).map(|p| y(c, p)).collect();
                    g.start_chosen::<u32>(l, m, &y, 7).unwrap()
                })
                .collect();
            let finish = started
                .into_iter()
                .map(|s| g.finish_chosen::<u32>(l, s).unwrap());
            finish.collect()
        });
        for (c, &(products, m)) in CALLS.iter().enumerate() {
            for j in 0..products * m {
                let want = x(c, j).wrapping_mul(y(c, j / m));
                let got = sent[c][j].wrapping_add(received[c][j]);
                assert_eq!(got, want, "{protocol:?} call {c} element {j}");
            }
        }
    }
    let (_, refused) = pair_sides(OtChoice::Extension(Protocol::IKNP), |me, g, l| {
        (me == 1).then(|| {
            let started = g.start_chosen::<u32>(l, 3, &[], 8).unwrap();
            g.finish_chosen::<u64>(l, started).is_err()
        })
    });
    assert_eq!(refused, Some(true));
}
