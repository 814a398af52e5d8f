//! RLWE encryption with a plaintext modulus t = 2^ℓ (Fan-Vercauteren, ePrint 2012/144, §3, with
//! m encoded as ⌊q·m/t⌉ so that a product by a plaintext keeps no multiple of q mod t: Cheetah,
//! Huang et al., USENIX Security 2022, §2.3 and §3): the client's symmetric encryption with its
//! random half drawn from a seed, the server's products by plaintext polynomials,
//! re-randomisation under the public key with noise flooding, and dropping primes before the
//! answer goes back.

use tessera_core::{Block, Prg};

use crate::poly::{Form, RnsPoly};
use crate::{Context, Error, sample};

/// The secret key s, ternary, in the evaluation form over every prime.
#[derive(Clone, Debug)]
pub struct SecretKey {
    s: RnsPoly,
}

impl SecretKey {
    /// A fresh key.
    pub fn generate(ctx: &Context, prg: &mut Prg) -> Self {
        let mut s = RnsPoly::from_signed(ctx, ctx.top_level(), &sample::ternary(prg, ctx.degree()));
        s.to_evaluations(ctx);
        SecretKey { s }
    }
}

/// The public key (b, a) = (-a·s + e, a), in the evaluation form: what re-randomises a
/// ciphertext without the secret. `a` is drawn from a seed, so the key travels as b and
/// the seed ([`PublicKey::to_bytes`]).
#[derive(Clone, Debug)]
pub struct PublicKey {
    b: RnsPoly,
    a: RnsPoly,
    seed: Block,
}

impl PublicKey {
    /// The public key of `sk`.
    pub fn generate(ctx: &Context, sk: &SecretKey, prg: &mut Prg) -> Self {
        let seed = prg.random_block();
        let a = Self::a_from(ctx, seed);
        let mut b = RnsPoly::from_signed(ctx, ctx.top_level(), &sample::error(prg, ctx.degree()));
        b.to_evaluations(ctx);
        b.sub_assign(ctx, &a.product(ctx, &sk.s));
        PublicKey { b, a, seed }
    }

    fn a_from(ctx: &Context, seed: Block) -> RnsPoly {
        let mut prg = Prg::from_seed_block(seed);
        RnsPoly::uniform(ctx, ctx.top_level(), &mut prg, Form::Evaluations)
    }

    /// The key on the wire: b's words packed at the primes' widths, then a's seed.
    pub fn to_bytes(&self, ctx: &Context) -> Vec<u8> {
        let runs = ctx.rows(ctx.top_level(), ctx.degree());
        let mut bytes = crate::wire::pack(self.b.words(), &runs);
        bytes.extend_from_slice(&self.seed.to_bytes());
        bytes
    }

    /// The length of [`PublicKey::to_bytes`] under `ctx`.
    pub fn byte_len(ctx: &Context) -> usize {
        let runs = ctx.rows(ctx.top_level(), ctx.degree());
        crate::wire::packed_len(&runs).unwrap_or(usize::MAX) + 16
    }

    /// A key as received: its exact length, zero padding and every word below its prime
    /// checked.
    pub fn from_bytes(ctx: &Context, bytes: &[u8]) -> Result<Self, Error> {
        let what = "public key";
        let body = bytes
            .len()
            .checked_sub(16)
            .filter(|&n| n + 16 == Self::byte_len(ctx))
            .ok_or_else(|| malformed(what, format!("{} bytes", bytes.len())))?;
        let runs = ctx.rows(ctx.top_level(), ctx.degree());
        let words = crate::wire::unpack(&bytes[..body], &runs)
            .ok_or_else(|| malformed(what, "its padding".into()))?;
        let b = RnsPoly::from_words(ctx, Form::Evaluations, words)
            .ok_or_else(|| malformed(what, "a word beyond its prime".into()))?;
        let mut seed = [0u8; 16];
        seed.copy_from_slice(&bytes[body..]);
        let seed = Block::from_bytes(seed);
        Ok(PublicKey {
            b,
            a: Self::a_from(ctx, seed),
            seed,
        })
    }
}

/// A plaintext factor of [`Ciphertext::sum_of_products`]: a polynomial in the evaluation form,
/// or a constant polynomial (its one coefficient small and signed), whose evaluations are all
/// that constant: a 1 × 1 kernel block of one channel and one out channel is one (Cheetah's
/// HomConv at C_w = M_w = 1), and needs no transform.
#[derive(Clone, Copy, Debug)]
pub enum Plain<'a> {
    /// Evaluations.
    Poly(&'a RnsPoly),
    /// The constant polynomial of this value.
    Constant(i64),
}

/// A ciphertext (c0, c1) with c0 + c1·s = ⌊q·m/t⌉ + e over the primes it still has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ciphertext {
    c0: RnsPoly,
    c1: RnsPoly,
}

/// A fresh encryption whose c1 is uniform from `seed`: half the words of a [`Ciphertext`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeededCiphertext {
    c0: RnsPoly,
    seed: Block,
}

/// Encrypts the plaintext polynomial `message` (coefficients below t; fewer than N are padded
/// with zeros) under `sk`, c1 drawn from a seed of `prg`'s.
pub fn encrypt(
    ctx: &Context,
    sk: &SecretKey,
    message: &[u64],
    prg: &mut Prg,
) -> Result<SeededCiphertext, Error> {
    check_message(ctx, message)?;
    let seed = prg.random_block();
    let a = RnsPoly::uniform(
        ctx,
        ctx.top_level(),
        &mut Prg::from_seed_block(seed),
        Form::Evaluations,
    );
    let mut a_s = a.product(ctx, &sk.s);
    a_s.to_coefficients(ctx);
    let mut c0 = RnsPoly::from_signed(ctx, ctx.top_level(), &sample::error(prg, ctx.degree()));
    add_encoded(ctx, &mut c0, message);
    c0.sub_assign(ctx, &a_s);
    Ok(SeededCiphertext { c0, seed })
}

/// Decrypts `ct` (at any level, in either form): ⌊t·(c0 + c1·s)/q⌉ mod t per coefficient.
pub fn decrypt(ctx: &Context, sk: &SecretKey, ct: &Ciphertext) -> Vec<u64> {
    let mut c0 = ct.c0.clone();
    c0.to_coefficients(ctx);
    let all: Vec<usize> = (0..ctx.degree()).collect();
    open(ctx, sk, ct.c1.clone(), |i, k| c0.row(i)[k], &all)
}

/// ⌊t·(c0 + c1·s)/q⌉ mod t at the coefficients `kept`, c0's word of prime i at the k-th of
/// them from `c0(i, k)`.
fn open(
    ctx: &Context,
    sk: &SecretKey,
    mut c1: RnsPoly,
    c0: impl Fn(usize, usize) -> u64,
    kept: &[usize],
) -> Vec<u64> {
    let primes = c1.primes();
    let mut s = sk.s.clone();
    s.truncate(primes);
    c1.to_evaluations(ctx);
    let mut phase = c1.product(ctx, &s);
    phase.to_coefficients(ctx);
    let level = ctx.level(primes);
    kept.iter()
        .enumerate()
        .map(|(k, &j)| {
            let residues = (0..primes).map(|i| {
                let p = ctx.moduli()[i];
                crate::arith::add_mod(phase.row(i)[j], c0(i, k), p)
            });
            level.decode(residues)
        })
        .collect()
}

impl SeededCiphertext {
    /// The full ciphertext, c1 regenerated from the seed; both parts in the evaluation form.
    pub fn expand(&self, ctx: &Context) -> Ciphertext {
        let c1 = RnsPoly::uniform(
            ctx,
            self.c0.primes(),
            &mut Prg::from_seed_block(self.seed),
            Form::Evaluations,
        );
        let mut c0 = self.c0.clone();
        c0.to_evaluations(ctx);
        Ciphertext { c0, c1 }
    }

    /// The words sent: c0's coefficients, prime after prime.
    pub fn body(&self) -> &[u64] {
        self.c0.words()
    }

    /// The seed of c1.
    pub fn seed(&self) -> Block {
        self.seed
    }

    /// A seeded ciphertext as received: every prime's row of N words, each below its prime.
    pub fn from_parts(ctx: &Context, body: Vec<u64>, seed: Block) -> Result<Self, Error> {
        let expected = ctx.top_level() * ctx.degree();
        if body.len() != expected {
            return Err(malformed(
                "seeded ciphertext",
                format!("{} words, not {expected}", body.len()),
            ));
        }
        let c0 = RnsPoly::from_words(ctx, Form::Coefficients, body)
            .ok_or_else(|| malformed("seeded ciphertext", "a word beyond its prime".into()))?;
        Ok(SeededCiphertext { c0, seed })
    }
}

impl Ciphertext {
    /// The encryption of zero with no noise, to accumulate products into.
    pub fn zero(ctx: &Context, primes: usize, form: Form) -> Self {
        Ciphertext {
            c0: RnsPoly::zero(ctx, primes, form),
            c1: RnsPoly::zero(ctx, primes, form),
        }
    }

    /// The number of primes left.
    pub fn primes(&self) -> usize {
        self.c0.primes()
    }

    /// `self += ct · plain`: `plain` a plaintext polynomial with small signed coefficients
    /// (`RnsPoly::from_signed`) in the evaluation form, `self` and `ct` there too.
    pub fn mul_plain_accumulate(&mut self, ctx: &Context, ct: &Ciphertext, plain: &RnsPoly) {
        self.c0.mul_accumulate(ctx, &ct.c0, plain);
        self.c1.mul_accumulate(ctx, &ct.c1, plain);
    }

    /// Σ ct_k · plain_k over `terms`, every ciphertext (and every [`Plain::Poly`]) in the
    /// evaluation form over `primes` primes at least: each coefficient's products summed in
    /// 128 bits and reduced once per run of as many as the sum holds (2^7 for a prime below
    /// 2^60), not once each ([`Ciphertext::mul_plain_accumulate`]'s way). A
    /// [`Plain::Constant`] multiplies every evaluation by its value: no transform of it.
    pub fn sum_of_products(
        ctx: &Context,
        primes: usize,
        terms: &[(&Ciphertext, Plain<'_>)],
    ) -> Self {
        let mut out = Ciphertext::zero(ctx, primes, Form::Evaluations);
        let n = ctx.degree();
        let level = ctx.level(primes);
        let mut acc = vec![0u128; n];
        for (i, &p) in ctx.moduli()[..primes].iter().enumerate() {
            let reduce = level.reducer(i);
            let bits = 64 - p.leading_zeros();
            let run = 1usize << (127 - 2 * bits).min(20);
            for part in 0..2 {
                acc.fill(0);
                for chunk in terms.chunks(run) {
                    for &(ct, plain) in chunk {
                        let c = if part == 0 { &ct.c0 } else { &ct.c1 };
                        match plain {
                            Plain::Poly(plain) => {
                                for ((a, &x), &w) in acc.iter_mut().zip(c.row(i)).zip(plain.row(i))
                                {
                                    *a += u128::from(x) * u128::from(w);
                                }
                            }
                            Plain::Constant(v) => {
                                let w = u128::from(crate::arith::reduce_signed(v, p));
                                for (a, &x) in acc.iter_mut().zip(c.row(i)) {
                                    *a += u128::from(x) * w;
                                }
                            }
                        }
                    }
                    acc.iter_mut()
                        .for_each(|a| *a = u128::from(reduce.wide(*a, p)));
                }
                let poly = if part == 0 { &mut out.c0 } else { &mut out.c1 };
                let row = poly.rows_mut().nth(i);
                for (w, &a) in row.into_iter().flatten().zip(&acc) {
                    *w = a as u64;
                }
            }
        }
        out
    }

    /// `self += ⌊q·m/t⌉` for the plaintext m whose coefficients are given at `places`
    /// ((coefficient, value) pairs) and zero elsewhere; in the coefficient form.
    pub fn add_plain(&mut self, ctx: &Context, places: &[(usize, u64)]) -> Result<(), Error> {
        if let Some(&(j, _)) = places.iter().find(|&&(j, _)| j >= ctx.degree()) {
            return Err(Error::Length {
                what: "plaintext coefficient",
                expected: ctx.degree(),
                got: j,
            });
        }
        check_bits(ctx, places.iter().map(|&(_, m)| m))?;
        self.to_coefficients(ctx);
        let level = ctx.level(self.c0.primes());
        for (i, (row, &p)) in self.c0.rows_mut().zip(ctx.moduli()).enumerate() {
            for &(j, m) in places {
                row[j] = crate::arith::add_mod(row[j], level.encode(m, i, p), p);
            }
        }
        Ok(())
    }

    /// Hides what the products made of the ciphertext (Cheetah §3.1, circuit privacy): adds an
    /// encryption of zero under `pk` (c1 becomes pseudo-random) and noise uniform in
    /// [-2^`flood_bits`, 2^`flood_bits`) to c0 at the coefficients `kept`, which hides an error
    /// below 2^(`flood_bits` - σ) to within 2^-σ per coefficient. Only the coefficients of c0
    /// an answer sends need it ([`Ciphertext::answer_words`]: the others never leave the
    /// server). Leaves the coefficient form.
    pub fn rerandomize(
        &mut self,
        ctx: &Context,
        pk: &PublicKey,
        prg: &mut Prg,
        (flood_bits, kept): (u32, &[usize]),
    ) {
        let primes = self.primes();
        let n = ctx.degree();
        let mut u = RnsPoly::from_signed(ctx, primes, &sample::ternary(prg, n));
        u.to_evaluations(ctx);
        self.to_evaluations(ctx);
        self.c0.mul_accumulate(ctx, &pk.b, &u);
        self.c1.mul_accumulate(ctx, &pk.a, &u);
        self.to_coefficients(ctx);
        // The encryption of zero's e1 and the flooding added to coefficients: no transform.
        let e1 = sample::error(prg, n);
        for (row, &p) in self.c1.rows_mut().zip(ctx.moduli()) {
            for (w, &e) in row.iter_mut().zip(&e1) {
                *w = crate::arith::add_mod(*w, crate::arith::reduce_signed(e, p), p);
            }
        }
        let flood = sample::flooding(prg, kept.len(), flood_bits);
        let level = ctx.level(primes);
        for (i, (row, &p)) in self.c0.rows_mut().zip(ctx.moduli()).enumerate() {
            let reduce = level.reducer(i);
            for (&j, &f) in kept.iter().zip(&flood) {
                row[j] = crate::arith::add_mod(row[j], reduce.signed_wide(f, p), p);
            }
        }
    }

    /// Drops primes from the last down to `primes` left, dividing by each and rounding
    /// (noise and modulus shrink together; what is left is sent back). Leaves the coefficient
    /// form.
    pub fn drop_to(&mut self, ctx: &Context, primes: usize) {
        self.to_coefficients(ctx);
        let n = ctx.degree();
        for have in (primes + 1..=self.primes()).rev() {
            let level = ctx.level(have);
            for poly in [&mut self.c0, &mut self.c1] {
                let mut column = vec![0u64; have];
                for j in 0..n {
                    for (i, w) in column.iter_mut().enumerate() {
                        *w = poly.row(i)[j];
                    }
                    level.drop_last(&mut column, ctx.moduli());
                    for (i, row) in poly.rows_mut().take(have - 1).enumerate() {
                        row[j] = column[i];
                    }
                }
                poly.truncate(have - 1);
            }
        }
    }

    /// Into the evaluation form.
    pub fn to_evaluations(&mut self, ctx: &Context) {
        self.c0.to_evaluations(ctx);
        self.c1.to_evaluations(ctx);
    }

    /// Into the coefficient form.
    pub fn to_coefficients(&mut self, ctx: &Context) {
        self.c0.to_coefficients(ctx);
        self.c1.to_coefficients(ctx);
    }

    /// The words of an answer: c1's coefficients whole, then c0's at the coefficients `kept`
    /// only (each prime's in `kept`'s order), which is all a receiver needs to open those
    /// (Cheetah §4.1: the other coefficients of c0 are never sent). Coefficients beyond N are
    /// the caller's error.
    pub fn answer_words(&self, ctx: &Context, kept: &[usize]) -> Vec<u64> {
        let mut ct = self.clone();
        ct.to_coefficients(ctx);
        let mut words = ct.c1.words().to_vec();
        for i in 0..ct.primes() {
            words.extend(kept.iter().map(|&j| ct.c0.row(i)[j]));
        }
        words
    }
}

/// Decrypts an answer sent by [`Ciphertext::answer_words`] with `primes` primes and the
/// coefficients `kept`: their plaintext coefficients, in `kept`'s order.
pub fn decrypt_answer(
    ctx: &Context,
    sk: &SecretKey,
    primes: usize,
    mut words: Vec<u64>,
    kept: &[usize],
) -> Result<Vec<u64>, Error> {
    let n = ctx.degree();
    let expected = primes.checked_mul(n + kept.len());
    if primes == 0 || primes > ctx.top_level() || Some(words.len()) != expected {
        return Err(malformed(
            "answer",
            format!(
                "{} words for {primes} primes and {} kept",
                words.len(),
                kept.len()
            ),
        ));
    }
    if let Some(&j) = kept.iter().find(|&&j| j >= n) {
        return Err(Error::Length {
            what: "kept coefficient",
            expected: n,
            got: j,
        });
    }
    let c0 = words.split_off(primes * n);
    let beyond = c0
        .chunks_exact(kept.len().max(1))
        .zip(ctx.moduli())
        .any(|(row, &p)| row.iter().any(|&w| w >= p));
    let c1 = RnsPoly::from_words(ctx, Form::Coefficients, words)
        .filter(|_| !beyond)
        .ok_or_else(|| malformed("answer", "a word beyond its prime".into()))?;
    let width = kept.len();
    Ok(open(ctx, sk, c1, |i, k| c0[i * width + k], kept))
}

fn add_encoded(ctx: &Context, c0: &mut RnsPoly, message: &[u64]) {
    let level = ctx.level(c0.primes());
    for (i, (row, &p)) in c0.rows_mut().zip(ctx.moduli()).enumerate() {
        for (w, &m) in row.iter_mut().zip(message) {
            *w = crate::arith::add_mod(*w, level.encode(m, i, p), p);
        }
    }
}

fn check_message(ctx: &Context, message: &[u64]) -> Result<(), Error> {
    if message.len() > ctx.degree() {
        return Err(Error::Length {
            what: "plaintext coefficients",
            expected: ctx.degree(),
            got: message.len(),
        });
    }
    check_bits(ctx, message.iter().copied())
}

/// An error unless every plaintext coefficient is below 2^ℓ.
fn check_bits(ctx: &Context, mut values: impl Iterator<Item = u64>) -> Result<(), Error> {
    let bits = ctx.params().plain_bits();
    if bits < 64 && values.any(|m| m >> bits != 0) {
        return Err(Error::Length {
            what: "plaintext coefficient bits",
            expected: bits as usize,
            got: 64,
        });
    }
    Ok(())
}

fn malformed(what: &'static str, detail: String) -> Error {
    Error::Malformed { what, detail }
}
