//! Criterion benchmarks of the AES core on every backend this CPU has (the same operations as
//! `tessera bench aes`, which also reports the ratio to the in-run roofline).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tessera_core::transpose::{TransposeBackend, transpose_with};
use tessera_core::{Aes, Backend, Block, FixedKeyAes, FixedKeyHash, Prg};

const BATCH: usize = 1024;

fn blocks(n: usize) -> Vec<Block> {
    Prg::from_seed_block(Block::new(3)).random_blocks(n)
}

fn aes(c: &mut Criterion) {
    let mut g = c.benchmark_group("aes");
    g.throughput(Throughput::Elements(BATCH as u64));
    for backend in Backend::available()
        .into_iter()
        .filter(|&b| b != Backend::Portable)
    {
        let name = backend.name();
        let key = Block::new(0x2b7e_1516);
        let fixed = FixedKeyAes::with_backend(key, backend).unwrap();
        let mut data = blocks(BATCH);
        g.bench_function(BenchmarkId::new("fixed_key_ecb", name), |b| {
            b.iter(|| fixed.encrypt_blocks(black_box(&mut data)))
        });
        let multi = Aes::with_backend(backend).unwrap();
        let keys = blocks(BATCH);
        g.bench_function(BenchmarkId::new("multi_key", name), |b| {
            b.iter(|| multi.encrypt_multi_key(black_box(&keys), &mut data))
        });
        let hash = FixedKeyHash::with_backend(key, backend).unwrap();
        let (x, t, mut out) = (blocks(BATCH), blocks(BATCH), vec![Block::ZERO; BATCH]);
        g.bench_function(BenchmarkId::new("prp_hash", name), |b| {
            b.iter(|| hash.tweakable(black_box(&x), &t, &mut out))
        });
        g.bench_function(BenchmarkId::new("ccr", name), |b| {
            b.iter(|| hash.ccr(black_box(&x), &mut out))
        });
        g.bench_function(BenchmarkId::new("tccr", name), |b| {
            b.iter(|| hash.tccr(black_box(&x), &t, &mut out))
        });
        let mut prg = Prg::with_backend(key, backend).unwrap();
        g.bench_function(BenchmarkId::new("prg", name), |b| {
            b.iter(|| prg.fill_blocks(black_box(&mut out)))
        });
    }
    g.finish();
}

fn transpose(c: &mut Criterion) {
    let cols = 1 << 14;
    let mut g = c.benchmark_group("transpose_128xm");
    g.throughput(Throughput::Bytes((16 * cols) as u64));
    let input: Vec<u8> = blocks(cols).iter().flat_map(|b| b.to_bytes()).collect();
    let mut out = vec![0u8; input.len()];
    for backend in TransposeBackend::available() {
        g.bench_function(backend.name(), |b| {
            b.iter(|| transpose_with(backend, black_box(&input), 128, cols, &mut out).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, aes, transpose);
criterion_main!(benches);
