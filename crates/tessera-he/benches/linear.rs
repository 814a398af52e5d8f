//! One convolution of ResNet-50's third stage (256 channels of 14 × 14, padded to 16 × 16, 256
//! kernels of 3 × 3) through the linear-layer roles at ℓ = 32: the client's query, the server's
//! answer, the client's opening; bytes each way printed once.

use criterion::{Criterion, criterion_group, criterion_main};
use rand_core::RngCore;
use std::hint::black_box;
use tessera_core::{Block, Prg};
use tessera_he::conv::{ConvEncoding, ConvShape};
use tessera_he::linear::{Client, Server};
use tessera_he::{Context, ParamSpec, PublicKey, SecretKey};

fn resnet_stage3_conv(c: &mut Criterion) {
    let ctx = Context::new(&ParamSpec::for_ring(32)).expect("parameters");
    let n = ctx.degree();
    let shape = ConvShape {
        channels: 256,
        height: 16,
        width: 16,
        out_channels: 256,
        kernel: [3, 3],
        stride: [1, 1],
    };
    let enc = ConvEncoding::cheapest(shape, n, 109 * n / 64, 49 * n / 64).expect("encoding");
    let mut prg = Prg::from_seed_block(Block::new(41));
    let sk = SecretKey::generate(&ctx, &mut prg);
    let pk = PublicKey::generate(&ctx, &sk, &mut prg);
    let x: Vec<u64> = (0..256 * 16 * 16).map(|_| prg.next_u64() >> 32).collect();
    let w: Vec<i64> = (0..256 * 256 * 9)
        .map(|_| (prg.next_u64() % 2049) as i64 - 1024)
        .collect();
    let client = Client::new(&ctx, &sk, &enc);
    let server = Server::new(&ctx, &pk, &enc, &w).expect("server");
    let query = client.query(&x, &mut prg).expect("query");
    let (answer, _) = server.answer(&query, &mut prg).expect("answer");
    println!(
        "{{\"layer\":\"resnet50 stage 3 conv 3x3 256->256 14x14\",\"partition\":\"{:?}\",\"query_bytes\":{},\"answer_bytes\":{}}}",
        enc.partition(),
        query.bodies.len() + 16 * query.seeds.len(),
        answer.words.len() + 1
    );
    let mut g = c.benchmark_group("he_linear");
    g.sample_size(10);
    g.bench_function("query", |b| {
        b.iter(|| client.query(black_box(&x), &mut prg))
    });
    g.bench_function("answer", |b| {
        b.iter(|| server.answer(black_box(&query), &mut prg))
    });
    g.bench_function("open", |b| b.iter(|| client.open(black_box(&answer))));
    g.finish();
}

criterion_group!(benches, resnet_stage3_conv);
criterion_main!(benches);
