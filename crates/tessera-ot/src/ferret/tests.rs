use super::*;
use proptest::prelude::*;
use tessera_net::role::{Side, run_pair};

/// Iterations of 2^14 OTs, several per test.
const SMALL: Params = Params::INSECURE_SMALL;

/// Base COTs as the extension would give them: Δ, q_j with low bit 0, t_j = q_j ⊕ r_j·Δ.
fn base_cots(n: usize, seed: u128) -> (Block, Vec<Block>, Vec<Block>) {
    let mut prg = Prg::from_seed_block(Block::new(seed));
    let delta = prg.random_block().with_lsb(true);
    let q: Vec<Block> = (0..n).map(|_| prg.random_block().with_lsb(false)).collect();
    let t = q
        .iter()
        .map(|&q| q ^ (Block::mask(prg.random_block().lsb()) & delta))
        .collect();
    (delta, q, t)
}

fn cores(params: Params, security: Security, seed: u128) -> Pair {
    let (delta, q, t) = base_cots(params.setup.reserve(security), seed);
    let prg = Prg::from_seed_block(Block::new(seed + 1));
    Pair {
        s: SenderCore::new(params, security, delta, q, prg).unwrap(),
        r: ReceiverCore::new(params, security, t).unwrap(),
        q: Vec::new(),
        t: Vec::new(),
    }
}

/// Two cores and the rows of their last iterations.
struct Pair {
    s: SenderCore,
    r: ReceiverCore,
    q: Vec<Block>,
    t: Vec<Block>,
}

/// Runs one iteration with `edit` applied to the messages; the outcomes (the rows are in `q`
/// and `t`, the new OTs first).
fn iterate(
    pair: &mut Pair,
    edit: impl FnMut(Side, Kind, &mut Vec<u8>),
) -> (Result<usize, Error>, Result<usize, Error>) {
    pair.q.resize(pair.s.rows(), Block::ONES);
    pair.t.resize(pair.r.rows(), Block::ZERO);
    let (a, b) = run_pair(
        &mut pair.s.iterate(&mut pair.q),
        &mut pair.r.iterate(&mut pair.t),
        edit,
    );
    (a.expect("sender finished"), b.expect("receiver finished"))
}

#[test]
fn iterations_give_correlated_ots_with_random_choices() {
    for security in [Security::SemiHonest, Security::Malicious] {
        let mut pair = cores(SMALL, security, 10);
        let delta = pair.s.delta;
        let mut seen = Vec::new();
        for iteration in 0..5 {
            let (a, b) = iterate(&mut pair, |_, _, _| {});
            let n = a.unwrap();
            assert_eq!(b.unwrap(), n);
            let want = if iteration == 0 {
                SMALL.setup.n()
            } else {
                SMALL.main.n()
            } - SMALL.main.reserve(security);
            assert_eq!(n, want);
            let (q, t) = (&pair.q[..n], &pair.t[..n]);
            let mut ones = 0;
            for (j, (&q, &t)) in q.iter().zip(t).enumerate() {
                assert!(!q.lsb(), "{security:?} iteration {iteration} j={j}");
                assert_eq!(t, q ^ (Block::mask(t.lsb()) & delta), "{iteration} j={j}");
                ones += usize::from(t.lsb());
            }
            // LPN outputs: balanced choice bits (n ≥ 2288, far from 0 or n).
            let fraction = ones as f64 / n as f64;
            assert!((fraction - 0.5).abs() < 0.1, "{iteration}: {fraction}");
            seen.extend_from_slice(q);
        }
        seen.sort_by_key(|b| b.as_u128());
        seen.dedup();
        assert_eq!(
            seen.len(),
            SMALL.setup.n() + 4 * SMALL.main.n() - 5 * SMALL.main.reserve(security)
        );
    }
}

/// Edits block `index` of a tree message's payload.
fn flip_block(bytes: &mut [u8], index: usize) {
    bytes[16 * index + 3] ^= 0x10;
}

#[test]
fn the_check_catches_inconsistent_trees() {
    // In the first tree (whose leaves are outputs, not the next reserve): c, and both sums of
    // a level (whatever the receiver's choice, it opens a wrong one).
    let d = SMALL.main.depth;
    let edits: [&[usize]; 3] = [&[2 * d], &[4, 5], &[0, 1]];
    for blocks in edits {
        for security in [Security::SemiHonest, Security::Malicious] {
            let mut pair = cores(SMALL, security, 20);
            let (a, b) = iterate(&mut pair, |_, _, _| {});
            assert!(a.is_ok() && b.is_ok());
            let mut first = true;
            let (a, b) = iterate(&mut pair, |side, kind, bytes| {
                if side == Side::First && kind == TREES && first {
                    first = false;
                    for &i in blocks {
                        flip_block(bytes, i);
                    }
                }
            });
            match security {
                Security::Malicious => {
                    assert_eq!(b, Err(Error::FerretCheckFailed), "edit {blocks:?}");
                    assert!(a.is_ok(), "the sender finishes once it has sent its digest");
                }
                Security::SemiHonest => {
                    // Not caught, and the outputs are no longer correlated OTs.
                    let n = a.unwrap();
                    assert_eq!(b, Ok(n));
                    let delta = pair.s.delta;
                    let wrong = pair.q[..n]
                        .iter()
                        .zip(&pair.t[..n])
                        .filter(|&(&q, &t)| t != q ^ (Block::mask(t.lsb()) & delta))
                        .count();
                    assert!(wrong > 0, "edit {blocks:?}");
                }
            }
        }
    }
}

#[test]
fn the_check_catches_edited_choices_and_digests() {
    for kind_edited in [CHOICES, DIGEST] {
        let mut pair = cores(SMALL, Security::Malicious, 30);
        let (_, b) = iterate(&mut pair, |_, kind, bytes| {
            if kind == kind_edited {
                bytes[0] ^= 1;
            }
        });
        assert_eq!(b, Err(Error::FerretCheckFailed), "{}", kind_edited.name);
    }
}

#[test]
fn a_short_tree_message_is_refused() {
    let mut pair = cores(SMALL, Security::SemiHonest, 40);
    let (_, b) = iterate(&mut pair, |_, kind, bytes| {
        if kind == TREES {
            bytes.truncate(bytes.len() - 16);
        }
    });
    assert!(b.is_err());
}

#[test]
fn parameters_that_cannot_bootstrap_are_refused() {
    let mut p = SMALL;
    p.main.k = p.main.n();
    assert!(p.validate(Security::SemiHonest).is_err());
    let mut p = SMALL;
    p.setup.t = 2;
    assert!(p.validate(Security::SemiHonest).is_err());
    let mut p = SMALL;
    p.setup.k = 1 << 40;
    assert!(p.validate(Security::SemiHonest).is_err());
    let mut p = SMALL;
    p.main.t = usize::MAX >> 3;
    assert!(p.validate(Security::SemiHonest).is_err());
    let mut p = SMALL;
    p.main.depth = 0;
    assert!(p.validate(Security::SemiHonest).is_err());
    assert!(SMALL.validate(Security::Malicious).is_ok());
    assert!(Params::PAPER.validate(Security::Malicious).is_ok());
    assert_eq!(Params::PAPER.main.n(), 10_805_248);
    assert_eq!(Params::PAPER.setup.n(), 649_728);
}

/// The matrix of the documented index stream, built densely (repeated indices cancel).
fn dense_rows(k: usize, first: u64, n: usize) -> Vec<Vec<bool>> {
    let mut prg = Prg::from_seed_block(lpn::LPN_KEY);
    let words_before = first as usize * lpn::D;
    let mut bytes = vec![0u8; 4 * (words_before + n * lpn::D)];
    rand_core::RngCore::fill_bytes(&mut prg, &mut bytes);
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect();
    (0..n)
        .map(|i| {
            let mut row = vec![false; k];
            for &w in &words[words_before + i * lpn::D..][..lpn::D] {
                let col = ((u64::from(w) * k as u64) >> 32) as usize;
                row[col] = !row[col];
            }
            row
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// y ⊕ A·x, computed from the dense matrix, equals the encoder's output on any range of
    /// rows, in one call or split in two.
    #[test]
    fn lpn_encoding_is_the_matrix_product(
        k in 1usize..40,
        first in 0u64..3000,
        n in 1usize..120,
        split in 0usize..120,
        seed in any::<u64>(),
    ) {
        let mut prg = Prg::from_seed_block(Block::new(u128::from(seed)));
        let x = prg.random_blocks(k);
        let y = prg.random_blocks(n);
        let a = dense_rows(k, first, n);
        let want: Vec<Block> = y
            .iter()
            .zip(&a)
            .map(|(&y, row)| {
                row.iter().zip(&x).fold(y, |acc, (&bit, &x)| acc ^ (Block::mask(bit) & x))
            })
            .collect();
        let mut lpn = Lpn::new(k);
        let mut got = y.clone();
        lpn.encode(&x, first, &mut got);
        prop_assert_eq!(&got, &want);
        let split = split.min(n);
        let mut parts = y.clone();
        let (head, tail) = parts.split_at_mut(split);
        lpn.encode(&x, first, head);
        lpn.encode(&x, first + split as u64, tail);
        prop_assert_eq!(&parts, &want);
    }
}
