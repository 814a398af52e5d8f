//! Cheetah's HomConv encoding: the convolution of the input blocks by the kernel blocks in
//! Z_2^ℓ[X]/(X^N + 1) holds the convolution's outputs where `output_places` says, in the clear
//! and under encryption.

mod common;

use common::through_blocks;
use rand_core::RngCore;
use tessera_core::{Block, Prg};
use tessera_he::conv::{ConvEncoding, ConvShape};
use tessera_he::linear::Encoding;
use tessera_he::{AnswerPlan, Ciphertext, Form, RnsPoly, decrypt_answer, encrypt};

/// The convolution, no padding, modulo 2^64.
fn convolution(shape: &ConvShape, x: &[u64], k: &[i64]) -> Vec<u64> {
    let ConvShape {
        channels,
        height,
        width,
        out_channels,
        kernel: [kh, kw],
        stride: [s0, s1],
    } = *shape;
    let [oh, ow] = shape.output();
    let mut y = vec![0u64; out_channels * oh * ow];
    for m in 0..out_channels {
        for i in 0..oh {
            for j in 0..ow {
                let mut acc = 0u64;
                for c in 0..channels {
                    for l in 0..kh {
                        for l2 in 0..kw {
                            let w = k[((m * channels + c) * kh + l) * kw + l2];
                            let v = x[(c * height + i * s0 + l) * width + j * s1 + l2];
                            acc = acc.wrapping_add(v.wrapping_mul(w as u64));
                        }
                    }
                }
                y[(m * oh + i) * ow + j] = acc;
            }
        }
    }
    y
}

fn random(prg: &mut Prg, n: usize, bits: u32) -> Vec<u64> {
    (0..n).map(|_| prg.next_u64() >> (64 - bits)).collect()
}

fn kernels(prg: &mut Prg, n: usize) -> Vec<i64> {
    (0..n)
        .map(|_| (prg.next_u64() % 8191) as i64 - 4095)
        .collect()
}

#[test]
fn blocks_multiplied_hold_the_convolution() {
    let shapes = [
        (
            ConvShape {
                channels: 5,
                height: 9,
                width: 7,
                out_channels: 3,
                kernel: [3, 3],
                stride: [1, 1],
            },
            64,
        ),
        (
            ConvShape {
                channels: 3,
                height: 12,
                width: 12,
                out_channels: 2,
                kernel: [5, 2],
                stride: [2, 2],
            },
            128,
        ),
        (
            ConvShape {
                channels: 16,
                height: 6,
                width: 6,
                out_channels: 4,
                kernel: [1, 1],
                stride: [1, 1],
            },
            64,
        ),
        (
            ConvShape {
                channels: 2,
                height: 4,
                width: 4,
                out_channels: 2,
                kernel: [4, 4],
                stride: [3, 1],
            },
            256,
        ),
        // A small image (ResNet-50's last stage, padded, scaled down): several out channels
        // per polynomial.
        (
            ConvShape {
                channels: 8,
                height: 9,
                width: 9,
                out_channels: 12,
                kernel: [3, 3],
                stride: [1, 1],
            },
            1024,
        ),
    ];
    let mut prg = Prg::from_seed_block(Block::new(21));
    let mut packed = 0;
    for (shape, degree) in shapes {
        let x = random(&mut prg, shape.channels * shape.height * shape.width, 64);
        let k = kernels(
            &mut prg,
            shape.out_channels * shape.channels * shape.kernel[0] * shape.kernel[1],
        );
        let want = convolution(&shape, &x, &k);
        for (inw, outw) in [(1, 1), (1, 8), (8, 1)] {
            let enc = ConvEncoding::cheapest(shape, degree, inw, outw).unwrap();
            let got = through_blocks(&enc, &x, &k);
            assert_eq!(got, want, "{shape:?} {:?}", enc.partition());
            packed += usize::from(enc.partition().out_channels > 1);
        }
    }
    assert!(
        packed >= 3,
        "{packed} encodings with several out channels a polynomial"
    );
}

#[test]
fn a_convolution_under_encryption_gives_additive_shares() {
    let common::Keys {
        ctx,
        sk,
        pk,
        mut prg,
    } = common::keys(32, 22);
    let n = ctx.degree();
    let shape = ConvShape {
        channels: 20,
        height: 18,
        width: 18,
        out_channels: 3,
        kernel: [3, 3],
        stride: [1, 1],
    };
    let x = random(&mut prg, shape.channels * shape.height * shape.width, 32);
    let k = kernels(&mut prg, shape.out_channels * shape.channels * 9);
    let enc = ConvEncoding::cheapest(shape, n, 2 * n, 2 * n).unwrap();
    // The largest ℓ1 norm of an output channel's kernels.
    let l1 = k
        .chunks(shape.channels * 9)
        .map(|c| c.iter().map(|w| w.unsigned_abs() as u128).sum::<u128>())
        .max()
        .unwrap();
    let plan = AnswerPlan::new(&ctx, l1).unwrap();
    assert_eq!(plan.primes, 1, "{plan:?}");
    assert!(enc.input_blocks() > 1, "{:?}", enc.partition());
    // The client's side: one seeded ciphertext per input block.
    let inputs: Vec<Ciphertext> = (0..enc.input_blocks())
        .map(|b| {
            encrypt(&ctx, &sk, &enc.input(&x, b), &mut prg)
                .unwrap()
                .expand(&ctx)
        })
        .collect();
    // The server's: kernels in the evaluation form, sums of products, its share r taken off.
    let plain: Vec<RnsPoly> = (0..enc.weight_blocks())
        .map(|b| {
            let mut p = RnsPoly::from_signed(&ctx, ctx.top_level(), &enc.weight(&k, b));
            p.to_evaluations(&ctx);
            p
        })
        .collect();
    let mask = (1u64 << 32) - 1;
    let mut server = vec![0u64; shape.out_channels * 16 * 16];
    let mut client = vec![0u64; server.len()];
    for block in 0..enc.output_blocks() {
        let mut acc = Ciphertext::zero(&ctx, ctx.top_level(), Form::Evaluations);
        for (input, kernel) in enc.output_terms(block) {
            acc.mul_plain_accumulate(&ctx, &inputs[input], &plain[kernel]);
        }
        let r = random(&mut prg, n, 32);
        let minus_r: Vec<u64> = r.iter().map(|v| v.wrapping_neg() & mask).collect();
        let all: Vec<usize> = (0..n).collect();
        let minus_r: Vec<(usize, u64)> = minus_r.into_iter().enumerate().collect();
        acc.add_plain(&ctx, &minus_r).unwrap();
        acc.rerandomize(&ctx, &pk, &mut prg, (plan.flood_bits, &all));
        acc.drop_to(&ctx, plan.primes);
        let places = enc.output_places(block);
        let kept: Vec<usize> = places.iter().map(|&(c, _)| c).collect();
        let words = acc.answer_words(&ctx, &kept);
        assert_eq!(words.len(), plan.primes * (n + kept.len()));
        // On the wire: c1's rows, then c0's kept words, each at its prime's width.
        let runs = [ctx.rows(plan.primes, n), ctx.rows(plan.primes, kept.len())].concat();
        let bytes = tessera_he::wire::pack(&words, &runs);
        assert_eq!(bytes.len(), (49 * (n + kept.len())).div_ceil(8));
        let words = tessera_he::wire::unpack(&bytes, &runs).unwrap();
        let opened = decrypt_answer(&ctx, &sk, plan.primes, words, &kept).unwrap();
        for ((coefficient, out), value) in places.into_iter().zip(opened) {
            server[out] = r[coefficient];
            client[out] = value;
        }
    }
    let want = convolution(&shape, &x, &k);
    for ((s, c), w) in server.iter().zip(&client).zip(&want) {
        assert_eq!(s.wrapping_add(*c) & mask, w & mask);
    }
}

#[test]
fn matrix_blocks_multiplied_hold_the_matrix_vector_product() {
    use tessera_he::fc::FcEncoding;
    let mut prg = Prg::from_seed_block(Block::new(23));
    for (rows, inputs, degree) in [
        (10, 7, 16),
        (3, 100, 64),
        (1000, 3, 64),
        (17, 17, 256),
        (1, 1, 16),
    ] {
        let x = random(&mut prg, inputs, 64);
        let w = kernels(&mut prg, rows * inputs);
        let want: Vec<u64> = (0..rows)
            .map(|r| {
                (0..inputs).fold(0u64, |a, j| {
                    a.wrapping_add(x[j].wrapping_mul(w[r * inputs + j] as u64))
                })
            })
            .collect();
        for (inw, outw) in [(1, 1), (1, 8), (8, 1)] {
            let enc = FcEncoding::cheapest(rows, inputs, degree, inw, outw).unwrap();
            let got = through_blocks(&enc, &x, &w);
            assert_eq!(
                got,
                want,
                "{rows} × {inputs} at {degree}: {:?}",
                enc.blocks()
            );
        }
    }
}
