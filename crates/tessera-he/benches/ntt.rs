//! The transform chosen against one written here: tfhe-ntt's negacyclic NTT (the library's)
//! beside a Harvey-style radix-2 transform (Harvey, "Faster arithmetic for number-theoretic
//! transforms", 2014: Shoup's precomputed twiddles, lazy reduction in [0, 4p)), forward and
//! inverse at N = 4096 and 8192 for primes of 50 and 60 bits. The Harvey transform is checked
//! against tfhe-ntt's product before it is timed.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rand_core::RngCore;
use std::hint::black_box;
use tessera_core::{Block, Prg};
use tessera_he::{Context, ParamSpec};

/// A negacyclic transform with twiddles in bit-reversed order (Longa-Naehrig's layout).
struct Harvey {
    p: u64,
    twiddles: Vec<(u64, u64)>,
    inverse_twiddles: Vec<(u64, u64)>,
    n_inverse: (u64, u64),
}

fn mul_mod(a: u64, b: u64, p: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) % u128::from(p)) as u64
}

fn pow_mod(b: u64, e: u64, p: u64) -> u64 {
    (0..64).rev().fold(1, |r, i| {
        let r = mul_mod(r, r, p);
        if (e >> i) & 1 == 1 {
            mul_mod(r, b, p)
        } else {
            r
        }
    })
}

fn shoup(w: u64, p: u64) -> (u64, u64) {
    (w, ((u128::from(w) << 64) / u128::from(p)) as u64)
}

#[inline(always)]
fn mul_shoup(x: u64, (w, ws): (u64, u64), p: u64) -> u64 {
    let q = ((u128::from(x) * u128::from(ws)) >> 64) as u64;
    x.wrapping_mul(w).wrapping_sub(q.wrapping_mul(p))
}

impl Harvey {
    fn new(n: usize, p: u64) -> Self {
        let order = 2 * n as u64;
        let psi = (2..p)
            .map(|g| pow_mod(g, (p - 1) / order, p))
            .find(|&r| pow_mod(r, n as u64, p) == p - 1)
            .expect("p is 1 modulo 2n");
        let psi_inverse = pow_mod(psi, p - 2, p);
        let bits = n.trailing_zeros();
        let table = |root| {
            (0..n)
                .map(|i| {
                    shoup(
                        pow_mod(root, (i.reverse_bits() >> (usize::BITS - bits)) as u64, p),
                        p,
                    )
                })
                .collect()
        };
        Harvey {
            p,
            twiddles: table(psi),
            inverse_twiddles: table(psi_inverse),
            n_inverse: shoup(pow_mod(n as u64, p - 2, p), p),
        }
    }

    fn forward(&self, a: &mut [u64]) {
        let (n, p, p2) = (a.len(), self.p, 2 * self.p);
        let (mut t, mut m) = (n, 1);
        while m < n {
            t >>= 1;
            for i in 0..m {
                let w = self.twiddles[m + i];
                let (lo, hi) = a[2 * i * t..2 * (i + 1) * t].split_at_mut(t);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    let u = if *x >= p2 { *x - p2 } else { *x };
                    let v = mul_shoup(*y, w, p);
                    *x = u + v;
                    *y = u + p2 - v;
                }
            }
            m <<= 1;
        }
        for x in a.iter_mut() {
            *x %= p;
        }
    }

    fn inverse(&self, a: &mut [u64]) {
        let (n, p, p2) = (a.len(), self.p, 2 * self.p);
        let (mut t, mut m) = (1, n);
        while m > 1 {
            let h = m >> 1;
            for i in 0..h {
                let w = self.inverse_twiddles[h + i];
                let (lo, hi) = a[2 * i * t..2 * (i + 1) * t].split_at_mut(t);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    let (u, v) = (*x, *y);
                    let s = u + v;
                    *x = if s >= p2 { s - p2 } else { s };
                    *y = mul_shoup(u + p2 - v, w, p);
                }
            }
            t <<= 1;
            m = h;
        }
        for x in a.iter_mut() {
            *x = mul_shoup(*x, self.n_inverse, p) % p;
        }
    }

    /// The negacyclic product through this transform, to check it.
    fn product(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        let (mut x, mut y) = (a.to_vec(), b.to_vec());
        self.forward(&mut x);
        self.forward(&mut y);
        for (u, v) in x.iter_mut().zip(&y) {
            *u = mul_mod(*u, *v, self.p);
        }
        self.inverse(&mut x);
        x
    }
}

fn transforms(c: &mut Criterion) {
    let mut g = c.benchmark_group("ntt_forward_inverse");
    for (degree, bits) in [(4096, 50), (4096, 60), (8192, 50), (8192, 60)] {
        let spec = ParamSpec {
            degree,
            prime_bits: vec![bits],
            plain_bits: 16,
        };
        let ctx = Context::new(&spec).expect("parameters");
        let p = ctx.moduli()[0];
        let mut prg = Prg::from_seed_block(Block::new(9));
        let mut random = || {
            (0..degree)
                .map(|_| prg.next_u64() % p)
                .collect::<Vec<u64>>()
        };
        let (a, b) = (random(), random());
        let harvey = Harvey::new(degree, p);
        let plan = tfhe_ntt::prime64::Plan::try_new(degree, p).expect("plan");
        let (mut x, mut y) = (a.clone(), b.clone());
        plan.fwd(&mut x);
        plan.fwd(&mut y);
        plan.mul_assign_normalize(&mut x, &y);
        plan.inv(&mut x);
        assert_eq!(harvey.product(&a, &b), x, "the Harvey transform's product");
        g.throughput(Throughput::Elements(1));
        let id = format!("n{degree}-p{bits}");
        let mut buf = a.clone();
        g.bench_function(BenchmarkId::new("tfhe-ntt", &id), |bench| {
            bench.iter(|| {
                plan.fwd(black_box(&mut buf));
                plan.inv(&mut buf);
                plan.normalize(&mut buf);
            })
        });
        g.bench_function(BenchmarkId::new("harvey", &id), |bench| {
            bench.iter(|| {
                harvey.forward(black_box(&mut buf));
                harvey.inverse(&mut buf);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, transforms);
criterion_main!(benches);
