//! Multiplication triples between two parties from random correlated OT, vectorised: Boolean
//! AND triples, arithmetic triples over Z_2^ℓ for ℓ ∈ {8, 16, 32, 64}, and matrix triples
//! A·B = C for the linear layers of neural networks. Semi-honest (the setup phase of GMW and
//! ABY2.0: Demmler, Schneider, Zohner, NDSS 2015, §III-C and §IV-C; Patra, Schneider, Suresh,
//! Yalame, USENIX Security 2021, §3).
//!
//! Each party is the OT sender in one direction and the receiver in the other, so a party's
//! triple shares are its own random a (and A), the choice bits of the OTs it receives as b (and
//! B), and c made of its own product plus one share of each cross product. The two directions
//! run at once where the OT provider's messages flow one way ([`Flow`]): both parties then draw
//! their OTs in the same order, and both post their corrections before reading the peer's.
//!
//! - Boolean (ALSZ, CCS 2013, §5.1 "R-OT for AND triples"): one random OT per direction per
//!   triple. The sender's messages are the low bits of H(q_j) and H(q_j ⊕ Δ); their XOR is its
//!   bit of a and the first is its share of the cross product; the receiver's message is its
//!   share. Two random OTs per triple, nothing sent beyond the OTs.
//! - Arithmetic and matrix (Gilboa, CRYPTO 1999; the correlated-OT form of Demmler et al.
//!   §IV-C2): for a product x·y with x ∈ Z_2^ℓ^m held by the sender and y ∈ Z_2^ℓ by the
//!   receiver, one OT per bit y_i of y. With x0 = H(q) and x1 = H(q ⊕ Δ) read as m elements of
//!   Z_2^(ℓ−i), the sender sends τ = x0 + x − x1 and keeps −2^i·x0; the receiver, with z = H(t),
//!   keeps 2^i·(z + y_i·τ). Summed over i the shares add up to x·y. τ is sent in whole bytes of
//!   its ℓ − i bits. Matrix triples take x as a column of A and y as an entry of B, and sum
//!   the products into the columns of C.
//!
//! H is the core's TCCR hash (Guo, Katz, Wang, Yu, S&P 2020, §7) tweaked by a counter of the
//! blocks this generator has hashed in that direction, in a domain of its own ([`TWEAKS`]). The
//! receiver's y is random (the OT's choice bits, in its blocks' low bits): triples need no
//! derandomisation. Vector products may instead take the receiver's own multipliers
//! ([`Multipliers::Chosen`]): a multiplier of w bits in two's complement takes w OTs, the
//! top one weighing −2^(w−1), each random choice flipped to the multiplier's bit by one bit
//! the receiver sends ([`FLIPS`]), so a short multiplier (a network's weight) costs its own
//! bits rather than the ring's.

use crate::bits::low_bits;
use crate::traits::{Flow, RcotReceiver, RcotSender};
use crate::{Error, out_of_turn, spread};
use rayon::prelude::*;
use std::borrow::Cow;
use std::ops::Range;
use tessera_core::{Block, FixedKeyHash, Prg};
use tessera_net::role::{self, Decode, Encode, Next, Outbox, Role};
use tessera_net::{Channel, DecodeError, Kind, Space, Spaces};

/// The sender's corrections τ for a batch of products.
pub const CORRECTIONS: Kind = Kind::new(0x30, "gilboa corrections");

/// The receiver's choice flips for a batch of products with chosen multipliers: its random
/// OTs' choices XOR its multipliers' bits, packed eight to a byte.
pub const FLIPS: Kind = Kind::new(0x37, "gilboa choice flips");

/// OTs per batch of vector products: memory is bounded by one batch's rows and hashes.
const BATCH_OTS: usize = 1 << 16;

/// Boolean triples per window: within one, each party draws all of one direction's batches
/// before any of the other's, so a window costs the link one latency, not one per batch of
/// [`BATCH_OTS`] (at one per batch, the 39 million Boolean triples of CrypTFlow2's CIFAR
/// SqueezeNet took 600 rounds of its setup's 643). Memory still holds one batch's rows and
/// hashes, and the window's bits; the messages in flight are one window's corrections.
const WINDOW_OTS: usize = 1 << 20;

/// The first tweak of a generator's hashes in each direction: bit 126 set keeps them apart
/// from the tweaks of the OT providers' own hashed flavours (the OT's index, below 2^64) and of
/// Ferret's tree OTs (bit 127 set).
pub const TWEAKS: u128 = 1 << 126;

/// Gilboa's corrections for one multiplier of `width` bits in Z_2^ℓ (ℓ = `bits`) and one
/// element: Σ_{i<width} ⌈(ℓ − i)/8⌉ bytes (τ of OT i in whole bytes of its ℓ − i bits).
fn gilboa_bytes(bits: u32, width: u32) -> u64 {
    (0..width).map(|i| u64::from(bits - i).div_ceil(8)).sum()
}

/// The bytes both parties send for `n` Boolean triples ([`TripleGenerator::boolean`]) when a
/// random correlated OT costs `cot_bytes`: two random OTs each, nothing more.
pub fn boolean_bytes(n: usize, cot_bytes: f64) -> f64 {
    2.0 * n as f64 * cot_bytes
}

/// The bytes both parties send for `n` arithmetic triples over Z_2^`bits`
/// ([`TripleGenerator::arithmetic`]): per direction ℓ OTs and Gilboa's corrections.
pub fn arithmetic_bytes(bits: u32, n: usize, cot_bytes: f64) -> f64 {
    2.0 * n as f64 * (f64::from(bits) * cot_bytes + gilboa_bytes(bits, bits) as f64)
}

/// The bytes both parties send for `multipliers` multipliers in Z_2^ℓ (ℓ = `bits`), each times
/// a vector of `len` elements ([`TripleGenerator::vector_products_send`]): per multiplier one
/// OT per bit (ℓ random ones, or the `width` of chosen ones with their flips) and Gilboa's
/// corrections per element.
pub fn vector_products_bytes(
    bits: u32,
    multipliers: Multipliers,
    (count, len): (usize, usize),
    cot_bytes: f64,
) -> f64 {
    let (width, flips) = match multipliers {
        Multipliers::Random => (bits, 0.0),
        Multipliers::Chosen { width } => (width, f64::from(width) / 8.0),
    };
    let corrections = (len as u64 * gilboa_bytes(bits, width)) as f64;
    count as f64 * (f64::from(width) * cot_bytes + flips + corrections)
}

/// The bytes both parties send for one matrix triple over Z_2^`bits` of `(rows, inner, cols)`
/// ([`TripleGenerator::matrix`]): per direction, `inner·cols` random multipliers each times a
/// column of `rows` elements.
pub fn matrix_bytes(bits: u32, (rows, inner, cols): (usize, usize, usize), cot_bytes: f64) -> f64 {
    let products = (inner * cols, rows);
    2.0 * vector_products_bytes(bits, Multipliers::Random, products, cot_bytes)
}

/// The receiver's multipliers in Gilboa's vector products, as both parties agree on them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Multipliers {
    /// Random elements of Z_2^ℓ, the random OTs' choice bits, learnt by the receiver.
    Random,
    /// The receiver's own, each in `width` bits of two's complement (−2^(width−1) ≤ y <
    /// 2^(width−1)): `width` OTs per multiplier instead of ℓ, the top one weighing −2^(width−1),
    /// and fewer corrections (a short multiplier, such as a network's weight, costs its own
    /// bits, not the ring's); each random OT's choice is flipped to the multiplier's bit by one
    /// bit sent.
    Chosen {
        /// Bits per multiplier, sign included: 1 to ℓ.
        width: u32,
    },
}

impl Multipliers {
    /// OTs per multiplier in Z_2^`bits`; an error for a width of none or more than ℓ.
    fn width(self, bits: usize) -> Result<usize, Error> {
        match self {
            Multipliers::Random => Ok(bits),
            Multipliers::Chosen { width } if (1..=bits).contains(&(width as usize)) => {
                Ok(width as usize)
            }
            Multipliers::Chosen { width } => Err(Error::Usage(format!(
                "multipliers of {width} bits in a ring of {bits}"
            ))),
        }
    }
}

/// An element of Z_2^ℓ for ℓ = 8, 16, 32 or 64, computed on as a `u64` modulo 2^ℓ.
pub trait Ring: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// ℓ.
    const BITS: usize;
    /// The value modulo 2^ℓ.
    fn from_u64(v: u64) -> Self;
    /// The value, zero-extended.
    fn to_u64(self) -> u64;
}

macro_rules! ring {
    ($($t:ty),*) => {$(
        impl Ring for $t {
            const BITS: usize = <$t>::BITS as usize;
            fn from_u64(v: u64) -> Self {
                v as $t
            }
            fn to_u64(self) -> u64 {
                u64::from(self)
            }
        }
    )*};
}
ring!(u8, u16, u32, u64);

/// The sender's corrections for one batch: bytes, τ by τ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Corrections<'a>(pub Cow<'a, [u8]>);

impl Encode for Corrections<'_> {
    const KIND: Kind = CORRECTIONS;
    fn encode<'a>(&'a self, _scratch: &'a mut Vec<u8>) -> &'a [u8] {
        &self.0
    }
}

impl<'a> Decode<'a> for Corrections<'a> {
    fn decode(kind: u8, bytes: &'a [u8]) -> Result<Self, DecodeError> {
        if kind == CORRECTIONS.id {
            Ok(Corrections(Cow::Borrowed(bytes)))
        } else {
            Err(DecodeError(format!(
                "kind {kind:#04x} is not a triple generator's message"
            )))
        }
    }
}

/// Boolean triples, one party's shares, packed 128 to a block (triple j is bit j % 128 of
/// block j / 128): a ∧ b = c across the two parties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoolTriples {
    /// How many.
    pub len: usize,
    /// Shares of a.
    pub a: Vec<Block>,
    /// Shares of b.
    pub b: Vec<Block>,
    /// Shares of c.
    pub c: Vec<Block>,
}

/// Arithmetic triples over Z_2^ℓ, one party's shares: a·b = c across the two parties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArithTriples<R> {
    /// Shares of a.
    pub a: Vec<R>,
    /// Shares of b.
    pub b: Vec<R>,
    /// Shares of c.
    pub c: Vec<R>,
}

/// Gilboa's products by chosen multipliers, started by [`TripleGenerator::start_chosen`]: the
/// OTs of the multipliers' bits drawn and their flips sent (or the multipliers still to draw,
/// `waiting`), the sender's corrections to come in [`TripleGenerator::finish_chosen`].
#[derive(Debug)]
pub struct ChosenProducts {
    /// ℓ of the ring.
    bits: usize,
    /// Elements per vector.
    m: usize,
    /// Bits per multiplier.
    width: usize,
    /// The multipliers whose OTs are still to draw, at the finish.
    waiting: Vec<u64>,
    /// The batches drawn.
    drawn: Vec<DrawnBatch>,
}

/// One batch of [`ChosenProducts`] drawn: its OTs' rows, the choice bits as masks, the
/// receiver's first hash tweak.
#[derive(Debug)]
struct DrawnBatch {
    rows: Vec<Block>,
    choices: Vec<u64>,
    first: u128,
}

/// A matrix triple over Z_2^ℓ, one party's shares, row-major: A (rows × inner) times
/// B (inner × cols) = C (rows × cols) across the two parties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixTriple<R> {
    /// (rows, inner, cols).
    pub shape: (usize, usize, usize),
    /// Shares of A.
    pub a: Vec<R>,
    /// Shares of B.
    pub b: Vec<R>,
    /// Shares of C.
    pub c: Vec<R>,
}

/// Bytes of τ for bit i of an ℓ-bit multiplier: the ℓ − i bits that matter.
const fn tau_bytes(bits: usize, i: usize) -> usize {
    (bits - i).div_ceil(8)
}

/// Correction bytes per product of vectors of `m` elements in Z_2^`bits` by a multiplier of
/// `width` bits.
const fn product_bytes(bits: usize, width: usize, m: usize) -> usize {
    let (mut sum, mut i) = (0, 0);
    while i < width {
        sum += tau_bytes(bits, i);
        i += 1;
    }
    m * sum
}

/// Hash blocks per OT for `m` elements of `bits` bits.
fn hash_blocks(bits: usize, m: usize) -> usize {
    (m * bits).div_ceil(128)
}

/// Element `e` of `bits` bits (8, 16, 32 or 64: no element straddles a word) from hash
/// blocks read as little-endian 64-bit words, with whatever lies above it in its word: sums
/// and products modulo 2^ℓ never look there.
#[inline(always)]
fn element(words: &[u64], bits: usize, e: usize) -> u64 {
    words[e * bits / 64] >> (e * bits % 64)
}

/// Gilboa's products of one element of `B` bits each (the arithmetic triples), one product at
/// a time with every τ's place known at compile time: each τ is moved as a whole word (its
/// bytes past ℓ − i belong to the next τ or to slack, and only ever reach bits above ℓ once
/// shifted), and the share is summed in a register.
struct OneElement<const B: usize>;

/// A product's corrections and 8 bytes of slack, for every `B`: staging for the last
/// products of a batch, whose words would reach past the message.
const STAGE: usize = OneElement::<64>::BYTES + 8;

impl<const B: usize> OneElement<B> {
    /// Where bit i's τ starts among a product's corrections.
    const AT: [usize; B] = {
        let mut at = [0; B];
        let mut i = 1;
        while i < B {
            at[i] = at[i - 1] + tau_bytes(B, i - 1);
            i += 1;
        }
        at
    };

    /// A product's correction bytes.
    const BYTES: usize = product_bytes(B, B, 1);

    /// Sender: with `x0`, `x1` the hashes H(q), H(q ⊕ Δ) of each product's `B` OTs (one block
    /// per OT), writes τ for every product into `tau` and subtracts Σ_i 2^i·x0_i from its
    /// share.
    fn send<R: Ring>(x: &[R], x0: &[Block], x1: &[Block], shares: &mut [R], tau: &mut [u8]) {
        let mut stage = [0u8; STAGE];
        let products = x0.as_chunks::<B>().0.iter().zip(x1.as_chunks::<B>().0);
        let starts = (0..).step_by(Self::BYTES);
        for (((x, share), (x0, x1)), start) in x.iter().zip(shares).zip(products).zip(starts) {
            let (x, mut acc) = (x.to_u64(), share.to_u64());
            // From this product's first τ on: the later products' bytes are overwritten by
            // them.
            let tau = &mut tau[start..];
            let out = match tau.first_chunk_mut::<STAGE>() {
                Some(out) => out,
                None => &mut stage,
            };
            for i in 0..B {
                let (a, b) = (x0[i].low(), x1[i].low());
                let t = a.wrapping_add(x).wrapping_sub(b);
                out[Self::AT[i]..][..8].copy_from_slice(&t.to_le_bytes());
                acc = acc.wrapping_sub(a << i);
            }
            if tau.len() < STAGE {
                let n = tau.len().min(Self::BYTES);
                tau[..n].copy_from_slice(&stage[..n]);
            }
            *share = R::from_u64(acc);
        }
    }

    /// Receiver: with `z` the hashes H(t) of each product's `B` OTs and `chosen` their choice
    /// bits y_i as masks, adds Σ_i 2^i·(z_i + y_i·τ_i) to its share.
    fn receive<R: Ring>(chosen: &[u64], z: &[Block], tau: &[u8], shares: &mut [R]) {
        let mut stage = [0u8; STAGE];
        let products = chosen.as_chunks::<B>().0.iter().zip(z.as_chunks::<B>().0);
        let starts = (0..).step_by(Self::BYTES);
        for ((share, (chosen, z)), start) in shares.iter_mut().zip(products).zip(starts) {
            // From this product's first τ on, or staged where fewer bytes remain.
            let tau = tau.get(start..).unwrap_or_default();
            let tau = match tau.first_chunk::<STAGE>() {
                Some(tau) => tau,
                None => {
                    let n = tau.len().min(STAGE);
                    stage[..n].copy_from_slice(&tau[..n]);
                    &stage
                }
            };
            let mut acc = share.to_u64();
            for i in 0..B {
                let word =
                    u64::from_le_bytes(*tau[Self::AT[i]..].first_chunk::<8>().unwrap_or(&[0; 8]));
                acc = acc.wrapping_add(z[i].low().wrapping_add(word & chosen[i]) << i);
            }
            *share = R::from_u64(acc);
        }
    }
}

/// Writes the low `out.len() / t.len()` bytes (1 to 8) of each of `t`, little-endian, one
/// after another: one bit's corrections of a product.
fn pack(out: &mut [u8], t: &[u64]) {
    fn put<const N: usize>(out: &mut [u8], t: &[u64]) {
        for (o, v) in out.chunks_exact_mut(N).zip(t) {
            o.copy_from_slice(&v.to_le_bytes()[..N]);
        }
    }
    match out.len().checked_div(t.len()).unwrap_or(0) {
        1 => put::<1>(out, t),
        2 => put::<2>(out, t),
        3 => put::<3>(out, t),
        4 => put::<4>(out, t),
        5 => put::<5>(out, t),
        6 => put::<6>(out, t),
        7 => put::<7>(out, t),
        _ => put::<8>(out, t),
    }
}

/// The inverse of [`pack`]: each of `t` from its bytes, zero-extended.
fn unpack(bytes: &[u8], t: &mut [u64]) {
    fn get<const N: usize>(bytes: &[u8], t: &mut [u64]) {
        for (b, v) in bytes.chunks_exact(N).zip(t) {
            let mut w = [0u8; 8];
            w[..N].copy_from_slice(b);
            *v = u64::from_le_bytes(w);
        }
    }
    match bytes.len().checked_div(t.len()).unwrap_or(0) {
        1 => get::<1>(bytes, t),
        2 => get::<2>(bytes, t),
        3 => get::<3>(bytes, t),
        4 => get::<4>(bytes, t),
        5 => get::<5>(bytes, t),
        6 => get::<6>(bytes, t),
        7 => get::<7>(bytes, t),
        _ => get::<8>(bytes, t),
    }
}

/// The low bits of `blocks`, packed 128 to a block into `out` (zero beyond the last).
fn pack_low_bits(blocks: &[Block], out: &mut [Block]) {
    out.fill(Block::ZERO);
    for (o, chunk) in out.iter_mut().zip(blocks.chunks(128)) {
        *o = Block::new(low_bits(chunk));
    }
}

/// Scratch space of the triple roles, kept across batches: the TCCR hashes of OT rows, and the
/// corrections.
#[derive(Debug, Default)]
pub struct Scratch {
    hash: FixedKeyHash,
    /// The receiver's choice bits as masks, for a batch.
    chosen: Vec<u64>,
    /// H(rows) and H(rows ⊕ Δ).
    h: [Vec<Block>; 2],
    tau: Vec<u8>,
}

impl Scratch {
    /// `per` pseudorandom blocks per row into `h[which]`: for one block, H(rows[j] ⊕ offset,
    /// TWEAKS + first + j); for more, the seed s = H(rows[j] ⊕ offset, TWEAKS + first + j·per)
    /// expanded as π(s ⊕ k) ⊕ s ⊕ k for k < per (the fixed-key stream of
    /// [`FixedKeyHash::cr_counter`], as SoftSpoken's leaves are expanded): one AES call per
    /// block after the seed instead of the TCCR hash's two. `first` counts the blocks hashed
    /// before in this direction. Rows are hashed in chunks of [`HASH_ROWS`], spread over the
    /// party's pool from two chunks on ([`spread`]).
    fn hash(&mut self, which: usize, rows: &[Block], offset: Block, first: u128, per: usize) {
        let hash = &self.hash;
        let out = &mut self.h[which];
        out.resize(rows.len() * per, Block::ZERO);
        let tweak = |row: usize| TWEAKS.wrapping_add(first + (row * per) as u128);
        let chunks = out
            .par_chunks_mut(HASH_ROWS * per)
            .zip(rows.par_chunks(HASH_ROWS));
        // Per task, its rows under the offset, their tweaks and seeds: kept across its chunks.
        let scratch = || (Vec::new(), Vec::new(), Vec::new());
        let tasks = spread::min_len(rows.len().div_ceil(HASH_ROWS), rows.len(), 2 * HASH_ROWS);
        chunks.enumerate().with_min_len(tasks).for_each_init(
            scratch,
            |(inputs, tweaks, seeds), (c, (out, rows))| {
                let row = c * HASH_ROWS;
                if per == 1 {
                    hash.tccr_counter(rows, offset, Block::new(tweak(row)), out);
                    return;
                }
                inputs.clear();
                inputs.extend(rows.iter().map(|&r| r ^ offset));
                tweaks.clear();
                tweaks.extend((row..row + rows.len()).map(|j| Block::new(tweak(j))));
                seeds.resize(rows.len(), Block::ZERO);
                hash.tccr(inputs, tweaks, seeds);
                for (s, o) in seeds.iter().zip(out.chunks_exact_mut(per)) {
                    hash.cr_counter(*s, Block::ZERO, o);
                }
            },
        );
    }
}

/// OT rows per chunk of [`Scratch::hash`]'s parallel hashing.
const HASH_ROWS: usize = 1 << 12;

/// Element-OTs (one multiplier's bit times one element of its vector) from which a batch's
/// Gilboa products spread over the party's pool ([`spread`]).
const SPREAD_OTS: usize = 1 << 14;

/// A batch of a window of [`TripleGenerator::boolean`].
struct Batch {
    /// Its OTs.
    len: usize,
    /// Its words of the triples (128 OTs each).
    at: Range<usize>,
    /// Its words of the window's.
    local: Range<usize>,
}

/// The batches of [`BATCH_OTS`] of a window's OTs `ots` (from a multiple of 128).
fn batches(ots: Range<usize>) -> impl Iterator<Item = Batch> {
    let first = ots.start / 128;
    ots.clone().step_by(BATCH_OTS).map(move |start| {
        let len = BATCH_OTS.min(ots.end - start);
        let at = start / 128..(start + len).div_ceil(128);
        let local = at.start - first..at.end - first;
        Batch { len, at, local }
    })
}

/// An error unless a batch's vectors, rows and outputs agree in size, `width` bits per
/// multiplier in Z_2^`bits`.
fn check_batch(
    what: &str,
    (bits, width): (usize, usize),
    m: usize,
    rows: usize,
    out: usize,
) -> Result<(), Error> {
    if (1..=bits).contains(&width) && m > 0 && out.is_multiple_of(m) && rows == out / m * width {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "{what}: {rows} OTs and {out} outputs do not make products of {m} elements by \
             multipliers of {width} of {bits} bits"
        )))
    }
}

/// The fewest bits that hold every one of `values` (elements of Z_2^`bits`) in two's
/// complement, the width of [`Multipliers::Chosen`] they need: at least 1, at most ℓ. Every
/// value is read, whatever it holds.
pub fn multiplier_width(values: impl IntoIterator<Item = u64>, bits: u32) -> u32 {
    let mask = u64::MAX >> (64 - bits);
    let widest = values.into_iter().fold(0u64, |acc, v| {
        let v = v & mask;
        // A negative value's ones' complement has as many significant bits.
        let negative = 0u64.wrapping_sub(v >> (bits - 1));
        acc | ((v ^ negative) & mask)
    });
    (64 - widest.leading_zeros() + 1).min(bits)
}

/// The weight of bit `i` of a `width`-bit multiplier in two's complement: 2^i, and −2^i for
/// the top bit (modulo 2^ℓ, equal to 2^i where the width is the ring's).
fn place(i: usize, width: usize) -> u64 {
    let power = 1u64 << i;
    if i + 1 == width {
        power.wrapping_neg()
    } else {
        power
    }
}

/// Bytes of corrections per message of a batch ([`products_per_message`]): τ leaves in
/// pieces of about this size, each sent as soon as it is made and used as soon as it comes,
/// so that the link carries one piece while the sender makes the next and the receiver adds
/// the last (on a WAN, a batch's computation no longer waits beside an idle link).
const PIECE_BYTES: usize = 1 << 22;

/// Products per message of corrections for products of `m` elements of Z_2^`bits` by
/// multipliers of `width` bits: as many as fill `PIECE_BYTES`, at least one. Both roles of
/// a batch must use the same.
pub fn products_per_message(bits: usize, width: usize, m: usize) -> usize {
    (PIECE_BYTES / product_bytes(bits, width, m).max(1)).max(1)
}

/// Gilboa's multiplication, sender side, for one batch: `x` holds one vector of `m`
/// elements per product, `rows` the `width` correlated OTs per product (product-major).
/// Posts τ, [`products_per_message`] products per message (made one message after the
/// other), and adds the sender's shares into `out` (one vector per product).
pub struct GilboaSender<'a, R: Ring> {
    /// The sender's vectors, product-major.
    pub x: &'a [R],
    /// Elements per vector.
    pub m: usize,
    /// Bits per multiplier, in two's complement: ℓ for any element of the ring.
    pub width: usize,
    /// The OTs' rows q.
    pub rows: &'a [Block],
    /// Δ.
    pub delta: Block,
    /// The blocks hashed before in this direction, for the hash tweaks.
    pub first: u128,
    /// Where the shares are added.
    pub out: &'a mut [R],
    /// Scratch space.
    pub scratch: &'a mut Scratch,
}

impl<R: Ring> GilboaSender<'_, R> {
    /// τ for `products` (a range of the batch's), their shares subtracted from `out`.
    fn corrections(&mut self, products: Range<usize>) -> &[u8] {
        let (bits, m, width) = (R::BITS, self.m, self.width);
        let per = hash_blocks(bits, m);
        let rows = &self.rows[products.start * width..products.end * width];
        let first = self.first + (products.start * width * per) as u128;
        let x = &self.x[products.start * m..products.end * m];
        let out = &mut self.out[products.start * m..products.end * m];
        let scratch = &mut *self.scratch;
        scratch.hash(0, rows, Block::ZERO, first, per);
        scratch.hash(1, rows, self.delta, first, per);
        let ([h0, h1], tau) = (&scratch.h, &mut scratch.tau);
        let product = product_bytes(bits, width, m);
        let total = products.len() * product;
        tau.clear();
        tau.resize(total + 8, 0);
        if m == 1 && width == bits {
            match bits {
                8 => OneElement::<8>::send(x, h0, h1, out, tau),
                16 => OneElement::<16>::send(x, h0, h1, out, tau),
                32 => OneElement::<32>::send(x, h0, h1, out, tau),
                _ => OneElement::<64>::send(x, h0, h1, out, tau),
            }
            return &tau[..total];
        }
        let (h0, h1): (&[u64], &[u64]) = (bytemuck::cast_slice(h0), bytemuck::cast_slice(h1));
        let words = 2 * per;
        // One product per task: its shares and its corrections' own part of τ.
        let each = tau[..total]
            .par_chunks_mut(product)
            .zip(x.par_chunks_exact(m))
            .zip(out.par_chunks_exact_mut(m));
        let tasks = spread::min_len(products.len(), x.len() * width, SPREAD_OTS);
        each.enumerate().with_min_len(tasks).for_each_init(
            || vec![0u64; m],
            |t, (p, ((tau, x), share))| {
                let mut at = 0;
                for i in 0..width {
                    let ot = p * width + i;
                    let (x0, x1) = (&h0[ot * words..][..words], &h1[ot * words..][..words]);
                    let weight = place(i, width);
                    for (e, ((&x_e, s), t)) in
                        x.iter().zip(share.iter_mut()).zip(t.iter_mut()).enumerate()
                    {
                        let (a, b) = (element(x0, bits, e), element(x1, bits, e));
                        *t = a.wrapping_add(x_e.to_u64()).wrapping_sub(b);
                        *s = R::from_u64(s.to_u64().wrapping_sub(a.wrapping_mul(weight)));
                    }
                    // Copies of a constant width.
                    let n = tau_bytes(bits, i);
                    pack(&mut tau[at..at + m * n], t);
                    at += m * n;
                }
            },
        );
        &tau[..total]
    }
}

impl<R: Ring> Role for GilboaSender<'_, R> {
    type Incoming<'m> = Corrections<'m>;
    type Output = ();
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<Corrections<'_>>,
        out: &mut O,
    ) -> Result<Next<()>, Error> {
        if incoming.is_some() {
            return Err(out_of_turn("Gilboa multiplication", "a message"));
        }
        let (bits, m, width) = (R::BITS, self.m, self.width);
        check_batch(
            "Gilboa sender",
            (bits, width),
            m,
            self.rows.len(),
            self.out.len(),
        )?;
        if self.x.len() != self.out.len() {
            return Err(Error::Usage(
                "Gilboa sender: one output per input element".into(),
            ));
        }
        let (products, piece) = (self.x.len() / m, products_per_message(bits, width, m));
        for start in (0..products).step_by(piece) {
            let end = products.min(start + piece);
            let tau = self.corrections(start..end);
            out.post(&Corrections(Cow::Borrowed(tau)))?;
        }
        Ok(Next::Done(()))
    }
}

/// Gilboa's multiplication, receiver side, for one batch: `rows` the `width` random
/// correlated OTs per product, whose choice bits make the multipliers y. Takes τ in messages
/// of [`products_per_message`] products, each used as it comes: the fields then describe the products still
/// to come. Adds the receiver's shares into `out` (one vector of `m` elements per product).
pub struct GilboaReceiver<'a, R: Ring> {
    /// Elements per vector.
    pub m: usize,
    /// Bits per multiplier, in two's complement: ℓ for any element of the ring.
    pub width: usize,
    /// The OTs' rows t (random choice bits in the low bits).
    pub rows: &'a [Block],
    /// The choice bits as masks (all ones for 1), one per OT, where they are not the rows'
    /// low bits (chosen multipliers: the random choices flipped).
    pub choices: Option<&'a [u64]>,
    /// The blocks hashed before in this direction, for the hash tweaks.
    pub first: u128,
    /// Where the shares are added.
    pub out: &'a mut [R],
    /// Scratch space.
    pub scratch: &'a mut Scratch,
}

impl<R: Ring> GilboaReceiver<'_, R> {
    /// The next message's length, or `None` when every product has its corrections.
    fn next_message(&self) -> Result<Option<usize>, Error> {
        let (bits, m, width) = (R::BITS, self.m, self.width);
        check_batch(
            "Gilboa receiver",
            (bits, width),
            m,
            self.rows.len(),
            self.out.len(),
        )?;
        if self.choices.is_some_and(|c| c.len() != self.rows.len()) {
            return Err(Error::Usage("Gilboa receiver: one choice per OT".into()));
        }
        let products = (self.out.len() / m).min(products_per_message(bits, width, m));
        Ok((products > 0).then(|| products * product_bytes(bits, width, m)))
    }

    /// Adds the shares of the next products, whose corrections `tau` are, and moves past them.
    fn add(&mut self, tau: &[u8]) {
        let (bits, m, width) = (R::BITS, self.m, self.width);
        let products = tau.len() / product_bytes(bits, width, m);
        let per = hash_blocks(bits, m);
        let (rows, later) = self.rows.split_at(products * width);
        let (out, rest) = std::mem::take(&mut self.out).split_at_mut(products * m);
        self.scratch.hash(0, rows, Block::ZERO, self.first, per);
        // The choice bits as masks, hidden from the optimiser once per piece: a plain mask
        // per OT let the compiler skip the read of τ below by branching on the bit.
        let chosen = &mut self.scratch.chosen;
        chosen.clear();
        match self.choices {
            Some(given) => chosen.extend_from_slice(&given[..rows.len()]),
            None => chosen.extend(rows.iter().map(|r| 0u64.wrapping_sub(r.low() & 1))),
        }
        self.rows = later;
        self.out = rest;
        self.choices = self.choices.map(|c| &c[products * width..]);
        self.first += (products * width * per) as u128;
        let chosen = core::hint::black_box(&chosen[..]);
        if m == 1 && width == bits {
            let z = &self.scratch.h[0];
            match bits {
                8 => OneElement::<8>::receive(chosen, z, tau, out),
                16 => OneElement::<16>::receive(chosen, z, tau, out),
                32 => OneElement::<32>::receive(chosen, z, tau, out),
                _ => OneElement::<64>::receive(chosen, z, tau, out),
            }
            return;
        }
        let h: &[u64] = bytemuck::cast_slice(&self.scratch.h[0]);
        let words = 2 * per;
        // One product per task, reading its own part of τ.
        let tasks = spread::min_len(products, out.len() * width, SPREAD_OTS);
        let each = tau
            .par_chunks(product_bytes(bits, width, m))
            .zip(out.par_chunks_exact_mut(m));
        each.enumerate().with_min_len(tasks).for_each_init(
            || vec![0u64; m],
            |t, (p, (tau, share))| {
                let mut at = 0;
                for i in 0..width {
                    let ot = p * width + i;
                    let z = &h[ot * words..][..words];
                    let n = tau_bytes(bits, i);
                    unpack(&tau[at..at + m * n], t);
                    at += m * n;
                    let weight = place(i, width);
                    for (e, (s, &t)) in share.iter_mut().zip(t.iter()).enumerate() {
                        // The bits of τ past its ℓ − i, like those past z's element, only
                        // reach bits above ℓ once multiplied by 2^i.
                        let w = element(z, bits, e).wrapping_add(t & chosen[ot]);
                        *s = R::from_u64(s.to_u64().wrapping_add(w.wrapping_mul(weight)));
                    }
                }
            },
        );
    }
}

impl<R: Ring> Role for GilboaReceiver<'_, R> {
    type Incoming<'m> = Corrections<'m>;
    type Output = ();
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<Corrections<'_>>,
        _out: &mut O,
    ) -> Result<Next<()>, Error> {
        let Some(bytes) = self.next_message()? else {
            return match incoming {
                None => Ok(Next::Done(())),
                Some(_) => Err(out_of_turn("Gilboa multiplication", "a message")),
            };
        };
        if let Some(Corrections(tau)) = incoming {
            if tau.len() != bytes {
                return Err(Error::Usage(format!(
                    "Gilboa receiver: {} bytes of corrections where {bytes} were due",
                    tau.len()
                )));
            }
            self.add(&tau);
        }
        Ok(match self.next_message()? {
            Some(bytes) => Next::exact(CORRECTIONS, bytes),
            None => Next::Done(()),
        })
    }
}

/// Makes triples with one peer from this party's random correlated OT sender to it and
/// receiver from it, and the channel to it. Both parties call the same methods in the same
/// order.
#[derive(Debug)]
pub struct TripleGenerator {
    space: Space,
    sender_first: bool,
    prg: Prg,
    scratch: Scratch,
    /// A batch's OTs as the sender and as the receiver.
    sent_rows: Vec<Block>,
    received_rows: Vec<Block>,
    /// Blocks hashed so far as the sender and as the receiver: the hash tweaks.
    sent: u128,
    received: u128,
}

/// The two OT directions with one peer and the channel to it.
pub struct Links<'a> {
    /// The channel to the peer.
    pub channel: &'a mut dyn Channel,
    /// This party's random correlated OT sender to the peer.
    pub sender: &'a mut dyn RcotSender,
    /// This party's random correlated OT receiver from the peer.
    pub receiver: &'a mut dyn RcotReceiver,
}

impl Links<'_> {
    /// Whether this party draws as the sender first: where the provider's messages go one
    /// way, the direction whose draws only send (both parties do it first, and neither waits
    /// for the other's before it has sent its own); where they go both ways, as
    /// `sender_first` says (it must differ between the two parties).
    pub fn sender_first(&self, sender_first: bool) -> bool {
        match self.receiver.flow() {
            Flow::ReceiverToSender => false,
            Flow::SenderToReceiver => true,
            Flow::Both => sender_first,
        }
    }

    /// Random correlated OTs in both directions at once: `sent.len()` as the sender and
    /// `received.len()` as the receiver, in the order the provider's [`Flow`] allows, so the
    /// two directions overlap where it can. `sender_first` must differ between the two parties:
    /// the one with it set draws as the sender first where messages go both ways
    /// ([`Flow::Both`]).
    pub fn draw(
        &mut self,
        sender_first: bool,
        sent: &mut [Block],
        received: &mut [Block],
    ) -> Result<(), Error> {
        if self.sender_first(sender_first) {
            self.sender.send_random_correlated(self.channel, sent)?;
            self.receiver
                .receive_random_correlated(self.channel, received)
        } else {
            self.receiver
                .receive_random_correlated(self.channel, received)?;
            self.sender.send_random_correlated(self.channel, sent)
        }
    }
}

impl TripleGenerator {
    /// A generator whose messages go in a space from `spaces` (the peer takes its own at the
    /// same point). `sender_first` must differ between the two parties: the one with it set
    /// draws its sender's OTs first where the provider's messages go both ways ([`Flow::Both`]).
    pub fn new(spaces: &mut Spaces, sender_first: bool, prg: Prg) -> Result<Self, Error> {
        Ok(TripleGenerator {
            space: spaces.allocate()?,
            sender_first,
            prg,
            scratch: Scratch::default(),
            sent_rows: Vec::new(),
            received_rows: Vec::new(),
            sent: 0,
            received: 0,
        })
    }

    /// `n` random correlated OTs in each direction into the row buffers.
    fn draw(&mut self, links: &mut Links<'_>, n: usize) -> Result<(), Error> {
        let (sent, received) = (&mut self.sent_rows, &mut self.received_rows);
        sent.resize(n, Block::ZERO);
        received.resize(n, Block::ZERO);
        links.draw(self.sender_first, sent, received)
    }

    /// `n` Boolean triples: two random OTs each, nothing else sent. In windows of
    /// `WINDOW_OTS`, each of batches of `BATCH_OTS`.
    pub fn boolean(&mut self, links: &mut Links<'_>, n: usize) -> Result<BoolTriples, Error> {
        let words = n.div_ceil(128);
        let mut t = BoolTriples {
            len: n,
            a: vec![Block::ZERO; words],
            b: vec![Block::ZERO; words],
            c: vec![Block::ZERO; words],
        };
        // Per window: the sender's cross-product shares u, the receiver's v.
        let words = WINDOW_OTS.min(n).div_ceil(128);
        let (mut u, mut v) = (vec![Block::ZERO; words], vec![Block::ZERO; words]);
        let sender_first = links.sender_first(self.sender_first);
        for window in (0..n).step_by(WINDOW_OTS) {
            let ots = window..n.min(window + WINDOW_OTS);
            let at = window / 128..ots.end.div_ceil(128);
            let (u, v) = (&mut u[..at.len()], &mut v[..at.len()]);
            if sender_first {
                self.boolean_sent(links, ots.clone(), &mut t.a, u)?;
                self.boolean_received(links, ots, &mut t.b, v)?;
            } else {
                self.boolean_received(links, ots.clone(), &mut t.b, v)?;
                self.boolean_sent(links, ots, &mut t.a, u)?;
            }
            for (((c, &a), &b), (&u, &v)) in t.c[at.clone()]
                .iter_mut()
                .zip(&t.a[at.clone()])
                .zip(&t.b[at])
                .zip(u.iter().zip(v.iter()))
            {
                *c = (a & b) ^ u ^ v;
            }
        }
        Ok(t)
    }

    /// A window's OTs `ots` of [`TripleGenerator::boolean`] as the sender, batch by batch:
    /// u = H(q) (the window's, from its first word) and a = H(q) ⊕ H(q ⊕ Δ) into `a`.
    fn boolean_sent(
        &mut self,
        links: &mut Links<'_>,
        ots: Range<usize>,
        a: &mut [Block],
        u: &mut [Block],
    ) -> Result<(), Error> {
        for Batch { len, at, local } in batches(ots) {
            let rows = &mut self.sent_rows;
            rows.resize(len, Block::ZERO);
            links.sender.send_random_correlated(links.channel, rows)?;
            let s = &mut self.scratch;
            s.hash(0, rows, Block::ZERO, self.sent, 1);
            s.hash(1, rows, links.sender.delta(), self.sent, 1);
            self.sent += len as u128;
            let u = &mut u[local];
            pack_low_bits(&s.h[0], u);
            pack_low_bits(&s.h[1], &mut a[at.clone()]);
            for (a, &u) in a[at].iter_mut().zip(u.iter()) {
                *a ^= u;
            }
        }
        Ok(())
    }

    /// A window's OTs `ots` of [`TripleGenerator::boolean`] as the receiver, batch by batch:
    /// the choice bits into `b`, v = H(t) (the window's, from its first word).
    fn boolean_received(
        &mut self,
        links: &mut Links<'_>,
        ots: Range<usize>,
        b: &mut [Block],
        v: &mut [Block],
    ) -> Result<(), Error> {
        for Batch { len, at, local } in batches(ots) {
            let rows = &mut self.received_rows;
            rows.resize(len, Block::ZERO);
            links
                .receiver
                .receive_random_correlated(links.channel, rows)?;
            let s = &mut self.scratch;
            s.hash(0, rows, Block::ZERO, self.received, 1);
            self.received += len as u128;
            pack_low_bits(rows, &mut b[at.clone()]);
            pack_low_bits(&s.h[0], &mut v[local]);
        }
        Ok(())
    }

    /// One batch of products of vectors of `m` elements: this party's vectors `x` (as the
    /// sender) times the peer's random multipliers, and the peer's vectors times this party's
    /// random multipliers, which it returns; shares of both products are added into `out`.
    /// Both parties post their corrections before reading the peer's.
    fn products<R: Ring>(
        &mut self,
        links: &mut Links<'_>,
        x: &[R],
        m: usize,
        out: &mut [R],
    ) -> Result<Vec<R>, Error> {
        let ots = x.len() / m * R::BITS;
        let hashed = (ots * hash_blocks(R::BITS, m)) as u128;
        self.draw(links, ots)?;
        let mut send = GilboaSender {
            x,
            m,
            width: R::BITS,
            rows: &self.sent_rows,
            delta: links.sender.delta(),
            first: self.sent,
            out: &mut *out,
            scratch: &mut self.scratch,
        };
        role::drive(&mut send, links.channel, self.space)?;
        self.sent += hashed;
        let mut receive = GilboaReceiver {
            m,
            width: R::BITS,
            rows: &self.received_rows,
            choices: None,
            first: self.received,
            out,
            scratch: &mut self.scratch,
        };
        role::drive(&mut receive, links.channel, self.space)?;
        self.received += hashed;
        Ok(self
            .received_rows
            .chunks_exact(R::BITS)
            .map(|bits| R::from_u64(low_bits(bits) as u64))
            .collect())
    }

    /// `n` arithmetic triples over Z_2^ℓ: ℓ random OTs per triple in each direction and
    /// Σ_i ⌈(ℓ − i)/8⌉ bytes of corrections (288 for ℓ = 64).
    pub fn arithmetic<R: Ring>(
        &mut self,
        links: &mut Links<'_>,
        n: usize,
    ) -> Result<ArithTriples<R>, Error> {
        let mut t = ArithTriples {
            a: self.random(n),
            b: Vec::with_capacity(n),
            c: vec![R::default(); n],
        };
        let per = BATCH_OTS / R::BITS;
        for start in (0..n).step_by(per) {
            let end = n.min(start + per);
            let b = self.products(links, &t.a[start..end], 1, &mut t.c[start..end])?;
            t.b.extend_from_slice(&b);
        }
        for ((c, &a), &b) in t.c.iter_mut().zip(&t.a).zip(&t.b) {
            *c = R::from_u64(c.to_u64().wrapping_add(a.to_u64().wrapping_mul(b.to_u64())));
        }
        Ok(t)
    }

    /// A matrix triple of `shape` (rows, inner, cols): inner·cols products of columns of A
    /// (rows elements) by entries of B, ℓ random OTs each in each direction.
    pub fn matrix<R: Ring>(
        &mut self,
        links: &mut Links<'_>,
        shape: (usize, usize, usize),
    ) -> Result<MatrixTriple<R>, Error> {
        let (rows, inner, cols) = shape;
        let a = self.random(rows * inner);
        let mut b = vec![R::default(); inner * cols];
        let mut c = vec![R::default(); rows * cols];
        // Product (p, q): column p of A times B[p][q], into column q of C.
        let column: Vec<R> = (0..inner)
            .flat_map(|p| (0..rows).map(move |r| (r, p)))
            .map(|(r, p)| a[r * inner + p])
            .collect();
        let per = (BATCH_OTS / R::BITS).max(1);
        let all: Vec<(usize, usize)> = (0..inner)
            .flat_map(|p| (0..cols).map(move |q| (p, q)))
            .collect();
        for batch in all.chunks(per) {
            let x: Vec<R> = batch
                .iter()
                .flat_map(|&(p, _)| column[p * rows..(p + 1) * rows].iter().copied())
                .collect();
            let mut shares = vec![R::default(); x.len()];
            let y = self.products(links, &x, rows, &mut shares)?;
            for ((&(p, q), share), y) in batch.iter().zip(shares.chunks_exact(rows)).zip(y) {
                b[p * cols + q] = y;
                for (r, &s) in share.iter().enumerate() {
                    let cell = &mut c[r * cols + q];
                    *cell = R::from_u64(cell.to_u64().wrapping_add(s.to_u64()));
                }
            }
        }
        // This party's own product A·B.
        for r in 0..rows {
            for p in 0..inner {
                let a = a[r * inner + p].to_u64();
                for q in 0..cols {
                    let cell = &mut c[r * cols + q];
                    let v = a.wrapping_mul(b[p * cols + q].to_u64());
                    *cell = R::from_u64(cell.to_u64().wrapping_add(v));
                }
            }
        }
        Ok(MatrixTriple { shape, a, b, c })
    }

    /// One direction of Gilboa's products, sender side: this party's vectors `x` (`m`
    /// elements each) times multipliers of the peer (`multipliers`, as the peer states them),
    /// which calls [`TripleGenerator::vector_products_receive`] or
    /// [`TripleGenerator::vector_products_chosen`] at the same point. Returns this party's
    /// shares, one vector per product: one OT per multiplier bit and Σ_i ⌈(ℓ − i)/8⌉ bytes per
    /// element sent. A private matrix times the peer's shared vector is this with random
    /// multipliers plus the peer sending its matrix minus them (a vector OLE with random
    /// multipliers), or, with the matrix's own entries chosen, this alone.
    pub fn vector_products_send<R: Ring>(
        &mut self,
        links: &mut Links<'_>,
        x: &[R],
        m: usize,
        multipliers: Multipliers,
    ) -> Result<Vec<R>, Error> {
        let mut out = vec![R::default(); x.len()];
        if m == 0 {
            return Ok(out);
        }
        let width = multipliers.width(R::BITS)?;
        let per = (BATCH_OTS / width).max(1);
        let delta = links.sender.delta();
        for (x, out) in x.chunks(per * m).zip(out.chunks_mut(per * m)) {
            let ots = x.len() / m * width;
            self.sent_rows.resize(ots, Block::ZERO);
            links
                .sender
                .send_random_correlated(links.channel, &mut self.sent_rows)?;
            if multipliers != Multipliers::Random {
                // q ⊕ d·Δ: the receiver's t = q ⊕ c·Δ is then q' ⊕ (c ⊕ d)·Δ.
                let mut flips = vec![0u8; ots.div_ceil(8)];
                links.channel.recv_into(self.space.tag(FLIPS), &mut flips)?;
                for (j, row) in self.sent_rows.iter_mut().enumerate() {
                    *row ^= Block::mask(flips[j / 8] >> (j % 8) & 1 == 1) & delta;
                }
            }
            let mut send = GilboaSender {
                x,
                m,
                width,
                rows: &self.sent_rows,
                delta,
                first: self.sent,
                out,
                scratch: &mut self.scratch,
            };
            role::drive(&mut send, links.channel, self.space)?;
            self.sent += (ots * hash_blocks(R::BITS, m)) as u128;
        }
        Ok(out)
    }

    /// The other side of [`TripleGenerator::vector_products_send`] with random multipliers:
    /// `products` random multipliers y of this party and its shares of the peer's vectors
    /// times them (`m` elements each), as `(y, shares)`.
    pub fn vector_products_receive<R: Ring>(
        &mut self,
        links: &mut Links<'_>,
        m: usize,
        products: usize,
    ) -> Result<(Vec<R>, Vec<R>), Error> {
        let mut y = Vec::with_capacity(products);
        let shares = self.receive_products(links, m, products, |rows| {
            y.extend(
                rows.chunks_exact(R::BITS)
                    .map(|bits| R::from_u64(low_bits(bits) as u64)),
            );
        })?;
        y.resize(products, R::default());
        Ok((y, shares))
    }

    /// The other side of [`TripleGenerator::vector_products_send`] with chosen multipliers:
    /// this party's shares of the peer's vectors (`m` elements each) times `y`, each of
    /// `width` bits in two's complement (an error where they take more: [`multiplier_width`]).
    pub fn vector_products_chosen<R: Ring>(
        &mut self,
        links: &mut Links<'_>,
        m: usize,
        y: &[R],
        width: u32,
    ) -> Result<Vec<R>, Error> {
        let started = self.start_chosen(links, m, y, width)?;
        self.finish_chosen(links, started)
    }

    /// [`TripleGenerator::vector_products_chosen`] in two halves, so that a caller can start
    /// its next products before it finishes these and the sender finds their OTs waiting when
    /// it has sent these corrections (one latency less per call, and the two parties' work
    /// overlapping). Draws the OTs of `y`'s bits and sends their flips where the OT
    /// provider's draws only send ([`Flow::ReceiverToSender`]); other providers' draws need
    /// the sender's messages, which would come after its corrections, so each of their
    /// batches is drawn in [`TripleGenerator::finish_chosen`] just before its corrections are
    /// read. The peer calls [`TripleGenerator::vector_products_send`] once per start, in the
    /// order of the starts; this party finishes them in that order.
    pub fn start_chosen<R: Ring>(
        &mut self,
        links: &mut Links<'_>,
        m: usize,
        y: &[R],
        width: u32,
    ) -> Result<ChosenProducts, Error> {
        let w = Multipliers::Chosen { width }.width(R::BITS)?;
        let needed = multiplier_width(y.iter().map(|v| v.to_u64()), R::BITS as u32);
        if needed > width {
            return Err(Error::Usage(format!(
                "the multipliers of a vector product take {needed} bits, not {width}"
            )));
        }
        let mut started = ChosenProducts {
            bits: R::BITS,
            m,
            width: w,
            waiting: Vec::new(),
            drawn: Vec::new(),
        };
        if m == 0 {
            // The sender sends nothing for vectors of no elements.
            return Ok(started);
        }
        let y: Vec<u64> = y.iter().map(|v| v.to_u64()).collect();
        if links.receiver.flow() != Flow::ReceiverToSender {
            started.waiting = y;
            return Ok(started);
        }
        for y in y.chunks((BATCH_OTS / w).max(1)) {
            let batch = self.draw_chosen(links, &started, y)?;
            started.drawn.push(batch);
        }
        Ok(started)
    }

    /// This party's shares of products started by [`TripleGenerator::start_chosen`] (with
    /// the same ring), once the sender's corrections come.
    pub fn finish_chosen<R: Ring>(
        &mut self,
        links: &mut Links<'_>,
        started: ChosenProducts,
    ) -> Result<Vec<R>, Error> {
        if started.bits != R::BITS {
            return Err(Error::Usage(format!(
                "products started in Z_2^{} finished in Z_2^{}",
                started.bits,
                R::BITS
            )));
        }
        let (m, width) = (started.m, started.width);
        let per = (BATCH_OTS / width).max(1);
        let drawn: usize = started.drawn.iter().map(|b| b.rows.len() / width).sum();
        let mut out = vec![R::default(); (drawn + started.waiting.len()) * m];
        let mut outs = out.chunks_mut((per * m).max(1));
        for (batch, out) in started.drawn.iter().zip(&mut outs) {
            self.receive_chosen(links, &started, batch, out)?;
        }
        for (y, out) in started.waiting.chunks(per).zip(outs) {
            let batch = self.draw_chosen(links, &started, y)?;
            self.receive_chosen(links, &started, &batch, out)?;
        }
        Ok(out)
    }

    /// Draws the OTs of one batch of multipliers `y` of `products` and sends their flips:
    /// each choice bit ⊕ the random OT's.
    fn draw_chosen(
        &mut self,
        links: &mut Links<'_>,
        products: &ChosenProducts,
        y: &[u64],
    ) -> Result<DrawnBatch, Error> {
        let (bits, m, width) = (products.bits, products.m, products.width);
        let mut rows = vec![Block::ZERO; y.len() * width];
        links
            .receiver
            .receive_random_correlated(links.channel, &mut rows)?;
        // The choice bits as masks (all ones for 1).
        let choices: Vec<u64> = y
            .iter()
            .flat_map(|v| (0..width).map(move |i| (v >> i & 1).wrapping_neg()))
            .collect();
        let mut flips = vec![0u8; rows.len().div_ceil(8)];
        for (j, (row, &mask)) in rows.iter().zip(&choices).enumerate() {
            flips[j / 8] |= (((row.low() ^ mask) & 1) as u8) << (j % 8);
        }
        links.channel.send(self.space.tag(FLIPS), &flips)?;
        links.channel.flush()?;
        let first = self.received;
        self.received += (rows.len() * hash_blocks(bits, m)) as u128;
        Ok(DrawnBatch {
            first,
            choices,
            rows,
        })
    }

    /// The shares of one drawn batch of `products`, from the sender's corrections, into `out`.
    fn receive_chosen<R: Ring>(
        &mut self,
        links: &mut Links<'_>,
        products: &ChosenProducts,
        batch: &DrawnBatch,
        out: &mut [R],
    ) -> Result<(), Error> {
        let (m, width) = (products.m, products.width);
        let mut receive = GilboaReceiver {
            m,
            width,
            rows: &batch.rows,
            choices: Some(&batch.choices),
            first: batch.first,
            out,
            scratch: &mut self.scratch,
        };
        role::drive(&mut receive, links.channel, self.space)
    }

    /// The receiving side's batches of Gilboa's products by random multipliers: `products`
    /// multipliers of ℓ bits, their shares of vectors of `m` elements. `drawn` sees each
    /// batch's random OTs, whose choice bits are the multipliers.
    fn receive_products<R: Ring>(
        &mut self,
        links: &mut Links<'_>,
        m: usize,
        products: usize,
        mut drawn: impl FnMut(&[Block]),
    ) -> Result<Vec<R>, Error> {
        let width = R::BITS;
        let mut out = vec![R::default(); products * m];
        if m == 0 {
            return Ok(out);
        }
        let per = (BATCH_OTS / width).max(1);
        for out in out.chunks_mut(per * m) {
            let ots = out.len() / m * width;
            self.received_rows.resize(ots, Block::ZERO);
            links
                .receiver
                .receive_random_correlated(links.channel, &mut self.received_rows)?;
            drawn(&self.received_rows);
            let mut receive = GilboaReceiver {
                m,
                width,
                rows: &self.received_rows,
                choices: None,
                first: self.received,
                out,
                scratch: &mut self.scratch,
            };
            role::drive(&mut receive, links.channel, self.space)?;
            self.received += (ots * hash_blocks(R::BITS, m)) as u128;
        }
        Ok(out)
    }

    fn random<R: Ring>(&mut self, n: usize) -> Vec<R> {
        let mut blocks = vec![Block::ZERO; n.div_ceil(2)];
        self.prg.fill_blocks(&mut blocks);
        blocks
            .iter()
            .flat_map(|b| [b.low(), b.high()])
            .take(n)
            .map(R::from_u64)
            .collect()
    }
}

#[cfg(test)]
mod tests;
