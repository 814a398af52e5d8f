//! The sign of A values by a millionaires' protocol on silent OT (Rathee et al., CrypTFlow2,
//! CCS 2020, §3.1; on random correlated OT as Huang et al., Cheetah, USENIX Security 2022,
//! §2.3 and §5): the most significant bit of x = x₀ + x₁ in Z_2^ℓ is msb(x₀) ⊕ msb(x₁) ⊕ c,
//! where the carry c = [x₀' + x₁' ≥ 2^(ℓ−1)] of the low ℓ − 1 bits is [y < x₁'] for party 0's
//! y = 2^(ℓ−1) − 1 − x₀' (its bits flipped): a comparison of two private numbers.
//!
//! The numbers are cut into chunks of [`CHUNK_BITS`] bits (the top one shorter where the bits
//! compared are odd; the lowest bits may be left out, [`Program::sign_by_comparison`]). Per chunk j, one random 1-out-of-2^m OT of the setup ([`Slot::OneOfN`], party 0
//! sending), derandomised online: party 1 sends its chunk b_j XOR its random choice, and
//! party 0 answers, for each possible b, the bits [y_j < b] and [y_j = b] XOR its random
//! shares, masked by the OT's messages. Both then hold B shares of lt_j and eq_j, which a
//! tree circuit ([`tree`]) combines (lt = lt_hi ⊕ eq_hi·lt_lo, eq = eq_hi·eq_lo) into c, and
//! XORs with the two top bits: at ℓ = 32, 16 chunks, 26 AND gates in 4 layers (11 chunks and
//! 16 gates with the low 10 bits skipped).
//!
//! Traffic at ℓ = 32: the leaves 31 bits from party 1 and 124 bits from party 0 online (two
//! messages), the tree's ANDs 4 bits each online; 31 correlated OTs and 52 Boolean triples in
//! the setup. The GMW sign ([`Program::sign`]) takes 86 ANDs.

use super::{OnlineCost, Op, Operation, Program, bad};
use crate::Error;
use crate::boolean::bits::words;
use crate::hybrid::online::Run;
use crate::hybrid::prepare::{Slot, Walk};
use crate::hybrid::{Kind, Sharing, Type, Value, ring};
use rayon::prelude::*;
use tessera_circuit::Circuit;
use tessera_circuit::builder::{Bit, Builder};
use tessera_core::{Block, Prg};
use tessera_ot::one_of_n::{Fields, OneOfN};

/// The bits of each chunk of the compared numbers: 1-out-of-4 OTs. At ℓ = 32 the online
/// traffic of leaves and tree together is least at 2 and 3 bits (259 bits a comparison; 1:
/// 375, 4: 315), and 2 takes half of 3's hashing (8 hashes a chunk against 24).
pub const CHUNK_BITS: u32 = 2;

/// Both bits a leaf's message carries: [y_j < b] and [y_j = b].
const LEAF_BITS: u32 = 2;

/// The leaves of the comparison of an A value's shares: a B value of 2q + 1 wires, lt_j for
/// j < q, then eq_j, then the top bits' XOR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Leaves {
    a: usize,
    compared: Compared,
    out: usize,
}

/// The bits compared: those of the low ℓ − 1 from `skip` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Compared {
    ring_bits: u32,
    skip: u32,
}

/// The chunks of ℓ − 1 bits: groups of chunks of one width, each one slot of OTs.
#[derive(Clone, Copy, Debug)]
struct Group {
    /// The width of its chunks (the OTs' choice bits).
    bits: u32,
    /// Its first chunk's index.
    first: usize,
    /// Its chunks.
    chunks: usize,
}

impl Group {
    /// Chunk `j` of the group's bits `number` ([`Compared::number`]).
    fn chunk(self, number: u64, j: usize) -> u64 {
        (number >> (j as u32 * self.bits)) & ring::mask(self.bits)
    }

    fn shape(self) -> OneOfN {
        OneOfN {
            choice_bits: self.bits,
            message_bits: LEAF_BITS,
        }
    }

    /// The bytes of party 1's choices and of party 0's tables for `n` elements.
    fn bytes(self, n: usize) -> [usize; 2] {
        let instances = n * self.chunks;
        let tables = instances * self.shape().messages() * LEAF_BITS as usize;
        [
            (instances * self.bits as usize).div_ceil(8),
            tables.div_ceil(8),
        ]
    }
}

impl Compared {
    /// The groups of the compared bits: whole chunks, then a shorter top chunk.
    fn groups(self) -> Vec<Group> {
        let compared = self.ring_bits - 1 - self.skip;
        let whole = (compared / CHUNK_BITS) as usize;
        let mut out = vec![Group {
            bits: CHUNK_BITS,
            first: 0,
            chunks: whole,
        }];
        if !compared.is_multiple_of(CHUNK_BITS) {
            out.push(Group {
                bits: compared % CHUNK_BITS,
                first: whole,
                chunks: 1,
            });
        }
        out
    }

    /// The chunks.
    fn chunks(self) -> usize {
        (self.ring_bits - 1 - self.skip).div_ceil(CHUNK_BITS) as usize
    }

    /// The bits of `group` of this party's number for element share `s`, chunk 0 lowest:
    /// party 0's y (its compared bits flipped), party 1's own bits.
    fn number(self, s: u64, first: bool, group: &Group) -> u64 {
        let number = if first { !s } else { s };
        let at = self.skip + group.first as u32 * CHUNK_BITS;
        (number >> at) & ring::mask(group.bits * group.chunks as u32)
    }
}

/// The tree over `q` leaves: input lt_0..lt_q, eq_0..eq_q and the top bits' XOR (chunk 0 the
/// least significant); output the sign. Pairs of neighbours are combined level by level;
/// the eq no output needs (the lowest node's) is left out by [`Builder::finish`].
pub(in crate::hybrid) fn tree(q: usize) -> Result<Circuit, Error> {
    let mut b = Builder::new();
    let wires = b.input(2 * q as u32 + 1);
    let mut nodes: Vec<(Bit, Bit)> = (0..q).map(|j| (wires[j], wires[q + j])).collect();
    while nodes.len() > 1 {
        nodes = nodes
            .chunks(2)
            .map(|pair| match *pair {
                [(lt_lo, eq_lo), (lt_hi, eq_hi)] => {
                    let below = b.and(eq_hi, lt_lo);
                    (b.xor(lt_hi, below), b.and(eq_hi, eq_lo))
                }
                _ => pair[0],
            })
            .collect();
    }
    let sign = b.xor(nodes[0].0, wires[2 * q]);
    b.finish(&[vec![sign]])
        .map_err(|e| Error::Input(format!("the comparison tree: {e}")))
}

impl Program {
    /// The most significant bit of an A value as a one-wire value of `to` (B, β or Y), by
    /// the millionaires' protocol of this module: online the leaves' two messages and the
    /// tree's 4 AND layers (at ℓ = 32; then B → β 1 round, or B → Y), about 32 bytes an
    /// element at ℓ = 32 where [`Program::sign`] sends 43; the setup 31 correlated OTs and 52
    /// Boolean triples where it takes 172 triples.
    ///
    /// With `skip` > 0 the low `skip` bits of the shares are left out of the comparison
    /// (the carry of the bits above them compared alone): cheaper by about `skip`/(ℓ − 1),
    /// and the sign may come out negative for x in [0, 2^skip), and positive for x in
    /// [−2^(ℓ−1), −2^(ℓ−1) + 2^skip) (as the skipped bits' carry falls), right everywhere
    /// else. For a value at scale 2^2f whose sign selects it
    /// (ReLU, a maximum), `skip` = f drops values below one unit in the last place of the
    /// truncated result.
    pub fn sign_by_comparison(&mut self, a: Value, to: Sharing, skip: u32) -> Result<Value, Error> {
        let t = self.ty(a)?;
        if t.sharing != Sharing::A || !to.is_boolean() || skip + 2 > t.ring_bits() {
            return Err(bad(format!(
                "the sign of a value in {} into {} skipping {skip} bits: an A value into B, β \
                 or Y, at most ℓ − 2 bits skipped",
                t.sharing.name(),
                to.name()
            )));
        }
        let compared = Compared {
            ring_bits: t.ring_bits(),
            skip,
        };
        let q = compared.chunks();
        let leaves = Type {
            sharing: Sharing::B,
            kind: Kind::Bits(2 * q as u32 + 1),
            n: t.n,
        };
        let a = a.0;
        let leaves = self.push(leaves, |out| Op::Leaves(Leaves { a, compared, out }));
        let sign = self.circuit(&tree(q)?, &[leaves])?[0];
        if to == Sharing::B {
            Ok(sign)
        } else {
            self.convert(sign, to)
        }
    }
}

impl Operation for Leaves {
    fn uses(&self) -> Vec<usize> {
        vec![self.a, self.out]
    }

    fn name(&self) -> &'static str {
        "comparison leaves"
    }

    fn traffic(&self, p: &Program) -> OnlineCost {
        let t = p.types[self.a];
        let [choices, tables] = self
            .compared
            .groups()
            .iter()
            .map(|g| g.bytes(t.n))
            .fold([0, 0], |acc, b| [acc[0] + b[0], acc[1] + b[1]]);
        OnlineCost::one_way(1, choices).then(OnlineCost::one_way(0, tables))
    }

    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        let t = walk.ty(self.a);
        self.compared
            .groups()
            .into_iter()
            .map(|g| Slot::OneOfN {
                shape: g.shape(),
                instances: t.n * g.chunks,
                sender: 0,
            })
            .collect()
    }

    fn online(&self, run: &mut Run<'_, '_>, material: Vec<Vec<u64>>) -> Result<(), Error> {
        let t = run.ty(self.a);
        let q = self.compared.chunks();
        let mut out = vec![0u64; (2 * q + 1) * words(t.n)];
        if run.first() {
            tables(run, (self.a, self.compared), material, &mut out)?;
        } else {
            choose(run, (self.a, self.compared), material, &mut out)?;
        }
        // The top bits: each party's own.
        let (top, w) = (t.ring_bits() - 1, words(t.n));
        for (k, &s) in run.data[self.a].iter().enumerate() {
            out[2 * q * w + k / 64] |= ((s >> top) & 1) << (k % 64);
        }
        run.data[self.out] = out;
        Ok(())
    }
}

/// Elements per block of the parallel loops: a multiple of 64, so that a block's fields and
/// output bits start on a word.
const BLOCK: usize = 1 << 12;

/// A block's output bits: per wire of its group (lt_j, then eq_j), the block's words.
struct BlockBits {
    words_per_wire: usize,
    bits: Vec<u64>,
}

impl BlockBits {
    fn new(chunks: usize, elements: usize) -> Self {
        let words_per_wire = words(elements);
        BlockBits {
            words_per_wire,
            bits: vec![0; 2 * chunks * words_per_wire],
        }
    }

    /// Element `k`'s lt and eq of chunk `j` of `chunks`: the low two bits of `leaf`.
    fn put(&mut self, (j, chunks): (usize, usize), k: usize, leaf: u64) {
        let (w, bit) = (self.words_per_wire, k % 64);
        self.bits[j * w + k / 64] |= (leaf & 1) << bit;
        self.bits[(chunks + j) * w + k / 64] |= ((leaf >> 1) & 1) << bit;
    }

    /// The blocks' bits into the leaves' value `out` (`n` copies, `q` chunks), for `group`.
    fn scatter(blocks: &[BlockBits], out: &mut [u64], (group, q, n): (&Group, usize, usize)) {
        let w = words(n);
        for (b, block) in blocks.iter().enumerate() {
            let at = b * BLOCK / 64;
            for j in 0..group.chunks {
                for (wire, from) in [
                    (group.first + j, j),
                    (q + group.first + j, group.chunks + j),
                ] {
                    let src = &block.bits[from * block.words_per_wire..][..block.words_per_wire];
                    out[wire * w + at..][..src.len()].copy_from_slice(src);
                }
            }
        }
    }
}

/// Party 0: receives party 1's choices, sends its tables, keeps its random shares of each
/// leaf's lt and eq.
fn tables(
    run: &mut Run<'_, '_>,
    (a, compared): (usize, Compared),
    material: Vec<Vec<u64>>,
    out: &mut [u64],
) -> Result<(), Error> {
    let t = run.ty(a);
    let (n, q, groups) = (t.n, compared.chunks(), compared.groups());
    let per_element = groups.iter().map(|g| (g.bits * g.chunks as u32, n));
    let choices = receive_fields(run, per_element)?;
    let mut sent = Vec::new();
    for ((group, pads), u) in groups.iter().zip(material).zip(choices) {
        let rows = Rows::of(group.shape());
        let pads = setup_fields(rows.bits, n * group.chunks, pads)?;
        let seeds: Vec<Block> = (0..n.div_ceil(BLOCK))
            .map(|_| run.prg.random_block())
            .collect();
        let shares = &run.data[a];
        let blocks: Vec<(Vec<u8>, BlockBits)> = shares
            .par_chunks(BLOCK)
            .zip(seeds)
            .enumerate()
            .map(|(b, (shares, seed))| {
                let mut prg = Prg::from_seed_block(seed);
                let (chunks, first) = (group.chunks, b * BLOCK);
                let mut table = Fields::zeros(rows.bits, shares.len() * chunks);
                let mut bits = BlockBits::new(chunks, shares.len());
                for (k, &s) in shares.iter().enumerate() {
                    let (y, u) = (compared.number(s, true, group), u.get(first + k));
                    let r = prg.random_block().low();
                    for j in 0..chunks {
                        let at = k * chunks + j;
                        let (y, u) = (group.chunk(y, j), group.chunk(u, j));
                        let pad = pads.get((first + k) * chunks + j);
                        let r = (r >> (2 * j)) & 3;
                        table.set(
                            at,
                            rows.leaves(y) ^ (r * rows.spread) ^ rows.permuted(pad, u),
                        );
                        bits.put((j, chunks), k, r);
                    }
                }
                // Every block but the last fills whole bytes (BLOCK elements), so the blocks'
                // bytes in order are the whole table's.
                (table.to_bytes(), bits)
            })
            .collect();
        let (tables, bits): (Vec<Vec<u8>>, Vec<BlockBits>) = blocks.into_iter().unzip();
        BlockBits::scatter(&bits, out, (group, q, n));
        tables.iter().for_each(|t| sent.extend_from_slice(t));
    }
    run.link.send(&sent)
}

/// The rows of a group's tables: an instance's N messages of [`LEAF_BITS`] bits in one word,
/// message b at bit b·[`LEAF_BITS`].
struct Rows {
    /// The bits of a row.
    bits: u32,
    /// One in the lowest bit of every message: r·spread puts r in each.
    spread: u64,
    /// Per choice bit i: half the bits of a block of 2^(i+1) messages, and the mask of every
    /// block's low half ([`Rows::permuted`]).
    halves: Vec<(u32, u64)>,
}

impl Rows {
    fn of(shape: OneOfN) -> Rows {
        let n = shape.messages() as u64;
        let bits = n as u32 * LEAF_BITS;
        let halves = (0..shape.choice_bits)
            .map(|i| {
                let half = (1u32 << i) * LEAF_BITS;
                let low = (0..bits / (2 * half)).fold(0u64, |m, block| {
                    m | (((1u64 << half) - 1) << (2 * half * block))
                });
                (half, low)
            })
            .collect();
        Rows {
            bits,
            spread: (0..n).fold(0, |row, b| row | 1 << (b * u64::from(LEAF_BITS))),
            halves,
        }
    }

    /// The row of the leaves [y < b] and [y = b] for every b, for party 0's secret chunk y:
    /// from the signs of y − b, with no branch or load that depends on y.
    fn leaves(&self, y: u64) -> u64 {
        let n = u64::from(self.bits / LEAF_BITS);
        (0..n).fold(0, |row, b| {
            let below = y.wrapping_sub(b) >> 63;
            let equal = (y ^ b).wrapping_sub(1) >> 63;
            row | (below | equal << 1) << (b * u64::from(LEAF_BITS))
        })
    }

    /// The row whose message b is message b ⊕ u of `row`: for each bit i of u, the halves of
    /// every block of 2^(i+1) messages swapped.
    fn permuted(&self, mut row: u64, u: u64) -> u64 {
        for (i, &(half, low)) in self.halves.iter().enumerate() {
            let swapped = ((row & low) << half) | ((row >> half) & low);
            let take = 0u64.wrapping_sub((u >> i) & 1);
            row = (row & !take) | (swapped & take);
        }
        row
    }

    /// Message `b` of `row`.
    fn message(&self, row: u64, b: u64) -> u64 {
        (row >> (b * u64::from(LEAF_BITS))) & ring::mask(LEAF_BITS)
    }
}

/// Party 1: sends its chunks XOR its random choices, receives party 0's tables, and reads
/// its shares of each leaf's lt and eq off them.
fn choose(
    run: &mut Run<'_, '_>,
    (a, compared): (usize, Compared),
    material: Vec<Vec<u64>>,
    out: &mut [u64],
) -> Result<(), Error> {
    let t = run.ty(a);
    let (n, q, groups) = (t.n, compared.chunks(), compared.groups());
    let mut material = material.into_iter();
    let mut held = Vec::with_capacity(groups.len());
    let mut sent = Vec::new();
    for group in &groups {
        // One field per element: its chunks' choices, their chosen messages.
        let (choice_bits, message_bits) =
            (group.bits * group.chunks as u32, 2 * group.chunks as u32);
        let mut next = || material.next().unwrap_or_default();
        let choices = setup_fields(choice_bits, n, next())?;
        let chosen = setup_fields(message_bits, n, next())?;
        let mut u = Fields::zeros(choice_bits, n);
        for (k, &s) in run.data[a].iter().enumerate() {
            u.set(k, compared.number(s, false, group) ^ choices.get(k));
        }
        sent.extend(u.to_bytes());
        held.push(chosen);
    }
    run.link.send(&sent)?;
    let rows: Vec<Rows> = groups.iter().map(|g| Rows::of(g.shape())).collect();
    let sizes = groups
        .iter()
        .zip(&rows)
        .map(|(g, r)| (r.bits, n * g.chunks));
    let received = receive_fields(run, sizes)?;
    for (((group, rows), table), chosen) in groups.iter().zip(&rows).zip(received).zip(held) {
        let blocks: Vec<BlockBits> = run.data[a]
            .par_chunks(BLOCK)
            .enumerate()
            .map(|(b, shares)| {
                let (chunks, first) = (group.chunks, b * BLOCK);
                let mut bits = BlockBits::new(chunks, shares.len());
                for (k, &s) in shares.iter().enumerate() {
                    let (number, mine) = (compared.number(s, false, group), chosen.get(first + k));
                    for j in 0..chunks {
                        let row = table.get((first + k) * chunks + j);
                        let leaf = rows.message(row, group.chunk(number, j));
                        bits.put((j, chunks), k, leaf ^ (mine >> (2 * j)));
                    }
                }
                bits
            })
            .collect();
        BlockBits::scatter(&blocks, out, (group, q, n));
    }
    Ok(())
}

/// One message of fields, part after part (`sizes`: each part's width and count), each part
/// in whole bytes ([`Fields::to_bytes`]); malformed if a bit past a part's fields is set.
fn receive_fields(
    run: &mut Run<'_, '_>,
    sizes: impl Iterator<Item = (u32, usize)> + Clone,
) -> Result<Vec<Fields>, Error> {
    let part_bytes = |(w, count): (u32, usize)| (w as usize * count).div_ceil(8);
    let bytes = run.link.recv(sizes.clone().map(part_bytes).sum())?;
    let mut at = 0;
    let mut out = Vec::new();
    for (width, count) in sizes {
        let part = &bytes[at..at + part_bytes((width, count))];
        at += part.len();
        out.push(Fields::from_bytes(width, count, part).ok_or_else(|| run.link.malformed())?);
    }
    Ok(out)
}

/// Fields of the setup's material (this party's own: a mismatch means a setup of another
/// program, the caller's misuse).
fn setup_fields(width: u32, count: usize, words: Vec<u64>) -> Result<Fields, Error> {
    Fields::from_words(width, count, words)
        .ok_or_else(|| Error::Input("the setup's OTs do not fit the comparison".into()))
}
