//! Two convolutions of ResNet-50 through the linear-layer roles at ℓ = 32: the client's
//! query, the server's answer (its kernel polynomials made and transformed, the products,
//! re-randomisation and flooding), the client's opening; bytes each way printed once.
//! - stage 3's 3 × 3 convolution: 256 channels of 14 × 14, padded to 16 × 16, 256 kernels;
//! - stage 1's 1 × 1 expansion: 64 channels of 56 × 56 to 256, whose blocks hold one channel
//!   and one out channel, so that its kernel polynomials are constants (no transform).

use criterion::{Criterion, criterion_group, criterion_main};
use rand_core::RngCore;
use std::hint::black_box;
use tessera_core::{Block, Prg};
use tessera_he::conv::{ConvEncoding, ConvShape};
use tessera_he::linear::{Client, Encoding, Server};
use tessera_he::{Context, ParamSpec, PublicKey, SecretKey};

fn resnet_convs(c: &mut Criterion) {
    let ctx = Context::new(&ParamSpec::for_ring(32)).expect("parameters");
    let n = ctx.degree();
    let mut prg = Prg::from_seed_block(Block::new(41));
    let sk = SecretKey::generate(&ctx, &mut prg);
    let pk = PublicKey::generate(&ctx, &sk, &mut prg);
    let layers = [
        (
            "stage3_3x3",
            ConvShape {
                channels: 256,
                height: 16,
                width: 16,
                out_channels: 256,
                kernel: [3, 3],
                stride: [1, 1],
            },
        ),
        (
            "stage1_1x1",
            ConvShape {
                channels: 64,
                height: 56,
                width: 56,
                out_channels: 256,
                kernel: [1, 1],
                stride: [1, 1],
            },
        ),
    ];
    let mut g = c.benchmark_group("he_linear");
    g.sample_size(10);
    for (name, shape) in layers {
        let enc = ConvEncoding::cheapest(shape, n, 109 * n / 64, 49 * n / 64).expect("encoding");
        let x: Vec<u64> = (0..enc.inputs()).map(|_| prg.next_u64() >> 32).collect();
        let w: Vec<i64> = (0..enc.weights())
            .map(|_| (prg.next_u64() % 2049) as i64 - 1024)
            .collect();
        let client = Client::new(&ctx, &sk, &enc);
        let server = Server::new(&ctx, &pk, &enc, &w).expect("server");
        let query = [client.query(&x, &mut prg).expect("query")];
        let answered = server.answer(&query, &mut prg).expect("answer");
        let answer = &answered[0].0;
        println!(
            "{{\"layer\":\"{name}\",\"shape\":\"{shape:?}\",\"partition\":\"{:?}\",\"query_bytes\":{},\"answer_bytes\":{}}}",
            enc.partition(),
            query[0].bodies.len() + 16 * query[0].seeds.len(),
            answer.words.len() + 1
        );
        g.bench_function(format!("{name}/query"), |b| {
            b.iter(|| client.query(black_box(&x), &mut prg))
        });
        g.bench_function(format!("{name}/answer"), |b| {
            b.iter(|| server.answer(black_box(&query), &mut prg))
        });
        g.bench_function(format!("{name}/open"), |b| {
            b.iter(|| client.open(black_box(answer)))
        });
    }
    g.finish();
}

criterion_group!(benches, resnet_convs);
criterion_main!(benches);
