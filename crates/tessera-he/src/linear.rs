//! The two roles of a product of the server's matrix by the client's vector, without I/O
//! (Cheetah §4: the client's vector encrypted, the server's answer its products less a random
//! share): afterwards the client holds W·x − r and the server r, in Z_2^ℓ. The matrix is any
//! [`Encoding`]: a convolution ([`crate::conv::ConvEncoding`]) or a dense layer
//! ([`crate::fc::FcEncoding`]).

use rayon::prelude::*;
use tessera_core::{Block, Prg};

use crate::wire::{pack, unpack};
use crate::{
    AnswerPlan, Ciphertext, Context, Error, Plain, PublicKey, RnsPoly, Rounding, SecretKey,
    SeededCiphertext, decrypt_answer, encrypt,
};

/// How a matrix and its vector become polynomials, and where the products land.
pub trait Encoding: Sync {
    /// The vector's polynomials.
    fn input_blocks(&self) -> usize;
    /// The matrix's polynomials.
    fn weight_blocks(&self) -> usize;
    /// The answer's polynomials.
    fn output_blocks(&self) -> usize;
    /// The vector's length.
    fn inputs(&self) -> usize;
    /// The matrix's number of coefficients.
    fn weights(&self) -> usize;
    /// The product's length.
    fn outputs(&self) -> usize;
    /// Input polynomial `block` of `x`.
    fn input(&self, x: &[u64], block: usize) -> Vec<u64>;
    /// Matrix polynomial `block` of `w`.
    fn weight(&self, w: &[i64], block: usize) -> Vec<i64>;
    /// The (input block, weight block) pairs summed into output polynomial `block`.
    fn output_terms(&self, block: usize) -> Vec<(usize, usize)>;
    /// The (coefficient, output index) pairs output polynomial `block` holds.
    fn output_places(&self, block: usize) -> Vec<(usize, usize)>;
    /// How many consecutive output polynomials read the same matrix polynomials (a
    /// convolution's spatial blocks; 1 for a dense layer): the server makes those once per
    /// run and drops them after it.
    fn weight_run(&self) -> usize;
}

/// The client's message: its vector's polynomials encrypted, c1 of each from its seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// Every c0, packed at the primes' widths, one after the other.
    pub bodies: Vec<u8>,
    /// Each ciphertext's seed.
    pub seeds: Vec<Block>,
}

/// The server's message: the number of primes kept, then each output polynomial's c1 whole
/// and c0 where outputs are, packed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// Primes kept (1 to the parameters' count).
    pub primes: u8,
    /// The output polynomials' words, packed, one after the other.
    pub words: Vec<u8>,
}

impl Query {
    /// The query on the wire ([`query_bytes`] long): the bodies, then each ciphertext's seed.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = self.bodies.clone();
        bytes.extend(self.seeds.iter().flat_map(|s| s.to_bytes()));
        bytes
    }

    /// A query for `encoding` as received: exactly [`query_bytes`] long (its words are checked
    /// when the server expands it).
    pub fn from_bytes(
        ctx: &Context,
        encoding: &impl Encoding,
        bytes: &[u8],
    ) -> Result<Self, Error> {
        if bytes.len() != query_bytes(ctx, encoding) {
            return Err(malformed(format!("a query of {} bytes", bytes.len())));
        }
        let seeds_at = bytes.len() - 16 * encoding.input_blocks();
        let seeds = bytes[seeds_at..]
            .chunks_exact(16)
            .map(|s| {
                let mut b = [0u8; 16];
                b.copy_from_slice(s);
                Block::from_bytes(b)
            })
            .collect();
        Ok(Query {
            bodies: bytes[..seeds_at].to_vec(),
            seeds,
        })
    }
}

/// The bytes of a query for `encoding` under `ctx`: each input block's c0 packed, and its seed.
pub fn query_bytes(ctx: &Context, encoding: &impl Encoding) -> usize {
    let body = crate::wire::packed_len(&ctx.rows(ctx.top_level(), ctx.degree()));
    (body.unwrap_or(usize::MAX) + 16).saturating_mul(encoding.input_blocks())
}

/// The bytes of an answer for `encoding` that keeps `primes` primes: each output block's c1
/// whole and c0 at its outputs, rounded ([`Rounding`]) and packed.
pub fn answer_bytes(ctx: &Context, encoding: &impl Encoding, primes: usize) -> usize {
    let rounding = Rounding::of(ctx, primes);
    (0..encoding.output_blocks())
        .map(|block| {
            let kept = encoding.output_places(block).len();
            let runs = rounding.runs(ctx, primes, kept);
            crate::wire::packed_len(&runs).unwrap_or(usize::MAX)
        })
        .fold(0, usize::saturating_add)
}

/// The words an input block and an output block send, as the encodings' `cheapest` weigh
/// them: N words at the full modulus' bits, and c1's N at the `primes` kept less the bits
/// [`Rounding`] drops.
pub fn block_costs(ctx: &Context, primes: usize) -> (usize, usize) {
    let n = ctx.degree();
    let bits = |primes: usize| ctx.params().modulus_bits(primes) as usize;
    let answer = bits(primes) - Rounding::of(ctx, primes).c1 as usize;
    (bits(ctx.top_level()) * n / 64, answer * n / 64)
}

/// The client's side: encrypts its vector, opens the answer to its share.
pub struct Client<'a, E: Encoding> {
    ctx: &'a Context,
    sk: &'a SecretKey,
    encoding: &'a E,
}

/// The server's side: its matrix, the plan its norms give the answers, and how it answers.
/// The matrix's polynomials are made while answering, one run of output polynomials at a
/// time ([`Encoding::weight_run`]), on rayon's threads, and dropped after the run: the
/// memory grows with the threads, not with the layer (a 1 × 1 convolution of ResNet-50's
/// first stage has 16384 of them: 1 GiB in the evaluation form).
pub struct Server<'a, E: Encoding> {
    ctx: &'a Context,
    pk: &'a PublicKey,
    encoding: &'a E,
    matrix: &'a [i64],
    plan: AnswerPlan,
}

/// A run's matrix polynomials: (weight block, its factor), ordered by block.
struct RunWeights(Vec<(usize, Weight)>);

/// A matrix polynomial as the products take it: a constant (a 1 × 1 kernel of one channel
/// and one out channel) as it is, any other in the evaluation form.
enum Weight {
    Constant(i64),
    Poly(RnsPoly),
}

impl<'a, E: Encoding> Client<'a, E> {
    /// The client of `encoding` under `sk`.
    pub fn new(ctx: &'a Context, sk: &'a SecretKey, encoding: &'a E) -> Self {
        Client { ctx, sk, encoding }
    }

    /// The query for the vector `x` (elements of Z_2^ℓ).
    pub fn query(&self, x: &[u64], prg: &mut Prg) -> Result<Query, Error> {
        check_len("vector", self.encoding.inputs(), x.len())?;
        let runs = self.ctx.rows(self.ctx.top_level(), self.ctx.degree());
        // One PRG per block, seeded in order: the blocks are encrypted on rayon's threads.
        let seeds: Vec<Block> = (0..self.encoding.input_blocks())
            .map(|_| prg.random_block())
            .collect();
        let cts = seeds
            .par_iter()
            .enumerate()
            .map(|(block, &seed)| {
                let input = self.encoding.input(x, block);
                encrypt(self.ctx, self.sk, &input, &mut Prg::from_seed_block(seed))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let mut query = Query {
            bodies: Vec::new(),
            seeds: Vec::new(),
        };
        for ct in cts {
            query.bodies.extend(pack(ct.body(), &runs));
            query.seeds.push(ct.seed());
        }
        Ok(query)
    }

    /// The client's share of W·x from the server's answer.
    pub fn open(&self, answer: &Answer) -> Result<Vec<u64>, Error> {
        let ctx = self.ctx;
        let primes = usize::from(answer.primes);
        if primes == 0 || primes > ctx.top_level() {
            return Err(malformed(format!("{primes} primes kept")));
        }
        // Cut the answer into its output polynomials first, then open them on rayon's threads.
        let rounding = Rounding::of(ctx, primes);
        let mut at = 0usize;
        let mut parts = Vec::with_capacity(self.encoding.output_blocks());
        for block in 0..self.encoding.output_blocks() {
            let kept: Vec<usize> = self
                .encoding
                .output_places(block)
                .iter()
                .map(|&(c, _)| c)
                .collect();
            let runs = rounding.runs(ctx, primes, kept.len());
            let len = crate::wire::packed_len(&runs).unwrap_or(usize::MAX);
            let bytes = answer
                .words
                .get(at..at.saturating_add(len))
                .ok_or_else(|| malformed("cut short".into()))?;
            at += len;
            parts.push((block, bytes, runs, kept));
        }
        if at != answer.words.len() {
            return Err(malformed(format!(
                "{} bytes beyond the last output",
                answer.words.len() - at
            )));
        }
        let opened = parts
            .into_par_iter()
            .map(|(block, bytes, runs, kept)| {
                let mut words = unpack(bytes, &runs)
                    .ok_or_else(|| malformed(format!("output {block}'s padding")))?;
                rounding.restore(ctx, &mut words);
                decrypt_answer(ctx, self.sk, primes, words, &kept)
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let mut share = vec![0u64; self.encoding.outputs()];
        for (block, values) in opened.into_iter().enumerate() {
            for ((_, out), v) in self.encoding.output_places(block).into_iter().zip(values) {
                share[out] = v;
            }
        }
        Ok(share)
    }
}

impl<'a, E: Encoding> Server<'a, E> {
    /// The server of `encoding` with the matrix `w` (signed, as the encoding lays it out).
    pub fn new(
        ctx: &'a Context,
        pk: &'a PublicKey,
        encoding: &'a E,
        w: &'a [i64],
    ) -> Result<Self, Error> {
        check_len("matrix", encoding.weights(), w.len())?;
        let norms: Vec<u128> = (0..encoding.weight_blocks())
            .into_par_iter()
            .map(|b| {
                let coefficients = encoding.weight(w, b);
                coefficients
                    .iter()
                    .map(|v| u128::from(v.unsigned_abs()))
                    .sum()
            })
            .collect();
        // Each output sums one weight polynomial per term: their norms bound its error.
        let l1 = (0..encoding.output_blocks())
            .map(|b| {
                encoding
                    .output_terms(b)
                    .iter()
                    .map(|&(_, k)| norms[k])
                    .sum::<u128>()
            })
            .max()
            .unwrap_or(0);
        let plan = AnswerPlan::new(ctx, l1)?;
        Ok(Server {
            ctx,
            pk,
            encoding,
            matrix: w,
            plan,
        })
    }

    /// The answers to `queries` (a batch's vectors, each its own query under the one key), and
    /// for each the server's share r of W·x (the client's is W·x − r). The matrix's
    /// polynomials are made once for the batch.
    pub fn answer(
        &self,
        queries: &[Query],
        prg: &mut Prg,
    ) -> Result<Vec<(Answer, Vec<u64>)>, Error> {
        let enc = self.encoding;
        let inputs = queries
            .iter()
            .map(|q| self.expand(q))
            .collect::<Result<Vec<_>, Error>>()?;
        // One PRG per output block and query, seeded in order from `prg`: the blocks run on
        // rayon's threads and the answer does not depend on how they are scheduled.
        let (blocks, count) = (enc.output_blocks(), queries.len());
        let seeds: Vec<Block> = (0..blocks * count).map(|_| prg.random_block()).collect();
        let run = enc.weight_run().max(1);
        let answered = (0..blocks.div_ceil(run))
            .into_par_iter()
            .map(|r| {
                let range = r * run..((r + 1) * run).min(blocks);
                let weights = self.run_weights(range.clone());
                range
                    .flat_map(|b| (0..count).map(move |q| (b, q)))
                    .collect::<Vec<_>>()
                    .into_par_iter()
                    .map(|(b, q)| {
                        let mut prg = Prg::from_seed_block(seeds[b * count + q]);
                        self.answer_block(&inputs[q], b, &weights, &mut prg)
                    })
                    .collect::<Result<Vec<_>, Error>>()
            })
            .collect::<Result<Vec<_>, Error>>()?;
        // Blocks come block by block, each block's queries in order.
        let mut out: Vec<(Answer, Vec<u64>)> = (0..count)
            .map(|_| {
                let answer = Answer {
                    primes: self.plan.primes as u8,
                    words: Vec::new(),
                };
                (answer, vec![0u64; enc.outputs()])
            })
            .collect();
        for (i, AnsweredBlock { words, shares }) in answered.into_iter().flatten().enumerate() {
            let (answer, share) = &mut out[i % count];
            answer.words.extend(words);
            for (o, r) in shares {
                share[o] = r;
            }
        }
        Ok(out)
    }
}

impl<E: Encoding> Server<'_, E> {
    /// A query's ciphertexts, checked for their number, length and range, in the evaluation
    /// form.
    fn expand(&self, query: &Query) -> Result<Vec<Ciphertext>, Error> {
        let (ctx, n, enc) = (self.ctx, self.ctx.degree(), self.encoding);
        if query.seeds.len() != enc.input_blocks() {
            return Err(malformed(format!(
                "{} ciphertexts, not {}",
                query.seeds.len(),
                enc.input_blocks()
            )));
        }
        let runs = ctx.rows(ctx.top_level(), n);
        let len = crate::wire::packed_len(&runs).unwrap_or(usize::MAX);
        if query.bodies.len() != len.saturating_mul(query.seeds.len()) {
            return Err(malformed(format!(
                "{} bytes of ciphertexts",
                query.bodies.len()
            )));
        }
        query
            .bodies
            .par_chunks_exact(len)
            .zip(query.seeds.par_iter())
            .map(|(bytes, &seed)| {
                let words = unpack(bytes, &runs)
                    .ok_or_else(|| malformed("a ciphertext's padding".into()))?;
                Ok(SeededCiphertext::from_parts(ctx, words, seed)?.expand(ctx))
            })
            .collect()
    }

    /// The matrix polynomials the output polynomials `blocks` read.
    fn run_weights(&self, blocks: std::ops::Range<usize>) -> RunWeights {
        let mut needed: Vec<usize> = blocks
            .flat_map(|b| self.encoding.output_terms(b))
            .map(|(_, k)| k)
            .collect();
        needed.sort_unstable();
        needed.dedup();
        let ctx = self.ctx;
        RunWeights(
            needed
                .into_par_iter()
                .map(|k| {
                    let coefficients = self.encoding.weight(self.matrix, k);
                    let weight = if coefficients[1..].iter().all(|&v| v == 0) {
                        Weight::Constant(coefficients[0])
                    } else {
                        let mut p = RnsPoly::from_signed(ctx, ctx.top_level(), &coefficients);
                        p.to_evaluations(ctx);
                        Weight::Poly(p)
                    };
                    (k, weight)
                })
                .collect(),
        )
    }

    /// Output polynomial `block` from one query's `inputs`: its packed words and the server's
    /// share at each output.
    fn answer_block(
        &self,
        inputs: &[Ciphertext],
        block: usize,
        weights: &RunWeights,
        prg: &mut Prg,
    ) -> Result<AnsweredBlock, Error> {
        let (ctx, enc) = (self.ctx, self.encoding);
        let mask = plain_mask(ctx);
        let terms: Vec<(&Ciphertext, Plain<'_>)> = enc
            .output_terms(block)
            .into_iter()
            .filter_map(|(input, k)| match weights.get(k) {
                Weight::Constant(0) => None,
                &Weight::Constant(v) => Some((&inputs[input], Plain::Constant(v))),
                Weight::Poly(p) => Some((&inputs[input], Plain::Poly(p))),
            })
            .collect();
        let mut acc = Ciphertext::sum_of_products(ctx, ctx.top_level(), &terms);
        // The server's share r, the flooding and c0 only where outputs are: the rest of c0
        // is never sent.
        let places = enc.output_places(block);
        let kept: Vec<usize> = places.iter().map(|&(c, _)| c).collect();
        let r: Vec<u64> = kept
            .iter()
            .map(|_| rand_core::RngCore::next_u64(prg) & mask)
            .collect();
        let minus_r: Vec<(usize, u64)> = kept
            .iter()
            .zip(&r)
            .map(|(&c, v)| (c, v.wrapping_neg() & mask))
            .collect();
        // Re-randomised while the products are still evaluations: one transform back, after
        // which the share and the flooding are added to coefficients.
        acc.rerandomize(ctx, self.pk, prg, (self.plan.flood_bits, &kept));
        acc.add_plain(ctx, &minus_r)?;
        acc.drop_to(ctx, self.plan.primes);
        let rounding = Rounding::of(ctx, self.plan.primes);
        let runs = rounding.runs(ctx, self.plan.primes, kept.len());
        let mut words = acc.answer_words(ctx, &kept);
        rounding.shrink(ctx, &mut words);
        let words = pack(&words, &runs);
        let shares = places
            .into_iter()
            .zip(r)
            .map(|((_, out), r)| (out, r))
            .collect();
        Ok(AnsweredBlock { words, shares })
    }
}

impl RunWeights {
    /// Weight block `k`, which the run made.
    fn get(&self, k: usize) -> &Weight {
        let at = self.0.binary_search_by_key(&k, |(b, _)| *b);
        // The run made every block its output polynomials' terms name.
        &self.0[at.unwrap_or_else(|_| unreachable!("weight block {k} outside its run"))].1
    }
}

/// One output polynomial answered: its packed words, and the server's share at each output.
struct AnsweredBlock {
    words: Vec<u8>,
    /// (output index, r).
    shares: Vec<(usize, u64)>,
}

fn plain_mask(ctx: &Context) -> u64 {
    let bits = ctx.params().plain_bits();
    if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), Error> {
    if expected == got {
        Ok(())
    } else {
        Err(Error::Length {
            what,
            expected,
            got,
        })
    }
}

fn malformed(detail: String) -> Error {
    Error::Malformed {
        what: "linear-layer message",
        detail,
    }
}
