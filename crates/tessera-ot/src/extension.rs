//! OT extension: IKNP with the ALSZ optimisations, and KOS.
//!
//! Setup: 128 base OTs with the roles reversed. The extension sender draws Δ (its choice bits
//! s_i = bit i of Δ, bit 0 forced to 1 so that Δ can serve as a free-XOR offset) and learns
//! k_i^{s_i}; the extension receiver learns both seeds k_i^0, k_i^1. Each seed keys an AES-CTR
//! PRG G.
//!
//! Extending m OTs with choice vector r (IKNP §4; ALSZ §3.1: only one matrix is sent): the
//! receiver sets column t^i = G(k_i^0) and sends u^i = t^i ⊕ G(k_i^1) ⊕ r; the sender computes
//! q^i = G(k_i^{s_i}) ⊕ s_i·u^i = t^i ⊕ s_i·r. Transposed into rows: q_j = t_j ⊕ r_j·Δ.
//! That is a correlated OT with global offset Δ ([`OtSender::correlated`]): the sender holds
//! q_j and q_j ⊕ Δ, the receiver the one it chose. Hashing both ends with a tweakable
//! circular-correlation-robust hash (TCCR, Guo-Katz-Wang-Yu S&P 2020, tweak = the OT's
//! index) gives random OT ([`OtSender::random`]; ALSZ's R-OT, no further message), and
//! masking two chosen messages with the random ones gives chosen-message OT
//! ([`OtSender::send`], two blocks per OT).
//!
//! KOS (Keller, Orsini, Scholl, CRYPTO 2015, §3 and Fig. 7): the receiver extends
//! `KOS_EXTRA` more rows with random choice bits, and after the matrix both run the
//! consistency check: for random χ_j ∈ GF(2^128) from a coin toss (the receiver commits to its
//! seed before the sender reveals its own), the receiver sends x = Σ r_j·χ_j and
//! t = Σ t_j·χ_j, and the sender checks Σ q_j·χ_j = t ⊕ x·Δ. A receiver that used different
//! choice vectors in different columns fails except with probability 2^-(number of affected
//! columns with s_i = 1); the extra random rows keep x and t from revealing r. The extra rows
//! are then dropped. Nothing is hashed or sent before the check passes.
//!
//! The matrix goes out in messages of `CHUNK` rows (256 KiB), so the sender works on one
//! chunk while the next is in flight; requests are processed in batches of `BATCH` OTs, so
//! memory stays bounded however many OTs are asked for.

use crate::{Error, abort, base};
use sha2::{Digest, Sha256};
use tessera_core::transpose::transpose_128xm_to_blocks;
use tessera_core::{Block, FixedKeyHash, Prg, gf128};
use tessera_net::{Channel, Tag};

const MATRIX: Tag = Tag::new(0x20, "ot-extension matrix u");
const COMMIT: Tag = Tag::new(0x21, "kos sender seed commitment");
const SEED: Tag = Tag::new(0x22, "kos receiver seed");
const PROOF: Tag = Tag::new(0x23, "kos check values");
const OPEN: Tag = Tag::new(0x25, "kos sender seed opening");
const MESSAGES: Tag = Tag::new(0x24, "ot masked messages");

/// Rows per matrix message (a multiple of 128).
const CHUNK: usize = 1 << 14;
/// OTs per extension batch: per KOS check, and per hashing pass.
const BATCH: usize = 1 << 20;
/// Extra rows KOS extends and drops: κ + s = 128 + 64, rounded up to whole 128-row tiles.
const KOS_EXTRA: usize = 256;
/// Columns of the matrix: the computational security parameter κ.
const KAPPA: usize = 128;

/// The security an extension provides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Security {
    /// IKNP with the ALSZ optimisations: secure against semi-honest parties.
    SemiHonest,
    /// KOS: IKNP plus the consistency check, secure against a malicious receiver (and,
    /// like IKNP, a malicious sender).
    Malicious,
}

impl Security {
    /// The protocol's name: `iknp` or `kos`.
    pub fn name(self) -> &'static str {
        match self {
            Security::SemiHonest => "iknp",
            Security::Malicious => "kos",
        }
    }

    /// Rows extended for `n` OTs: whole 128-row tiles, plus KOS's extra rows.
    fn rows(self, n: usize) -> usize {
        n.next_multiple_of(KAPPA)
            + match self {
                Security::SemiHonest => 0,
                Security::Malicious => KOS_EXTRA,
            }
    }
}

/// Buffers both sides reuse from batch to batch.
#[derive(Default)]
struct Scratch {
    /// The current batch's rows (q_j or t_j), padded.
    rows: Vec<Block>,
    /// One chunk's 128 columns, `CHUNK / 128` blocks each.
    matrix: Vec<Block>,
    /// One PRG column, or hash inputs.
    column: Vec<Block>,
    /// Hash tweaks.
    tweaks: Vec<Block>,
    /// H(row_j, j) for one chunk.
    hashed: Vec<Block>,
    /// H(row_j ⊕ Δ, j) for one chunk (the sender's second message).
    hashed_delta: Vec<Block>,
    /// One chunk of masked message pairs, interleaved.
    masked: Vec<Block>,
}

impl Scratch {
    fn new() -> Self {
        Scratch {
            rows: Vec::new(),
            matrix: vec![Block::ZERO; CHUNK],
            column: vec![Block::ZERO; CHUNK],
            tweaks: vec![Block::ZERO; CHUNK],
            hashed: vec![Block::ZERO; CHUNK],
            hashed_delta: vec![Block::ZERO; CHUNK],
            masked: vec![Block::ZERO; 2 * CHUNK],
        }
    }

    /// Hashes the `len ≤ CHUNK` rows from `start` under tweaks `first_index + start ..`: into
    /// `hashed[..len]`, and with `delta` XORed in into `hashed_delta[..len]`.
    fn hash_chunk(
        &mut self,
        hash: &FixedKeyHash,
        start: usize,
        len: usize,
        first_index: u64,
        delta: Option<Block>,
    ) {
        let first = first_index + start as u64;
        for (k, t) in self.tweaks[..len].iter_mut().enumerate() {
            *t = Block::new(u128::from(first + k as u64));
        }
        let rows = &self.rows[start..start + len];
        hash.tccr(rows, &self.tweaks[..len], &mut self.hashed[..len]);
        if let Some(delta) = delta {
            for (x, &r) in self.column[..len].iter_mut().zip(rows) {
                *x = r ^ delta;
            }
            hash.tccr(
                &self.column[..len],
                &self.tweaks[..len],
                &mut self.hashed_delta[..len],
            );
        }
    }
}

fn check_len(what: &str, got: usize, want: usize) -> Result<(), Error> {
    if got == want {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "{what}: {got} outputs for {want} OTs"
        )))
    }
}

/// The sender of OT extension: holds Δ.
pub struct OtSender {
    security: Security,
    delta: Block,
    /// G(k_i^{s_i}) for each column i.
    columns: Vec<Prg>,
    hash: FixedKeyHash,
    prg: Prg,
    next_index: u64,
    scratch: Scratch,
}

impl std::fmt::Debug for OtSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtSender")
            .field("security", &self.security)
            .field("next_index", &self.next_index)
            .finish_non_exhaustive()
    }
}

impl OtSender {
    /// Runs the base OTs (as their receiver) with the peer's [`OtReceiver::setup`].
    pub fn setup<C: Channel + ?Sized>(
        channel: &mut C,
        security: Security,
        mut prg: Prg,
    ) -> Result<Self, Error> {
        let delta = prg.random_block().with_lsb(true);
        let bits: Vec<bool> = (0..KAPPA)
            .map(|i| (delta.as_u128() >> i) & 1 == 1)
            .collect();
        let seeds = base::receive_random(channel, &bits, &mut prg)?;
        Ok(OtSender {
            security,
            delta,
            columns: seeds.into_iter().map(Prg::from_seed_block).collect(),
            hash: FixedKeyHash::default(),
            prg,
            next_index: 0,
            scratch: Scratch::new(),
        })
    }

    /// The global offset Δ of the correlated OTs (least significant bit 1). Secret.
    pub fn delta(&self) -> Block {
        self.delta
    }

    /// Which protocol this extension runs.
    pub fn security(&self) -> Security {
        self.security
    }

    /// Correlated OT: `out[j]` = q_j, where the receiver gets q_j if it chose 0 and q_j ⊕ Δ
    /// if it chose 1.
    pub fn correlated<C: Channel + ?Sized>(
        &mut self,
        channel: &mut C,
        out: &mut [Block],
    ) -> Result<(), Error> {
        for part in out.chunks_mut(BATCH) {
            self.extend(channel, part.len())?;
            part.copy_from_slice(&self.scratch.rows[..part.len()]);
        }
        Ok(())
    }

    /// Random OT: `out[j]` = (x0_j, x1_j), of which the receiver gets the one it chose:
    /// x0_j = H(q_j, j), x1_j = H(q_j ⊕ Δ, j).
    pub fn random<C: Channel + ?Sized>(
        &mut self,
        channel: &mut C,
        out: &mut [(Block, Block)],
    ) -> Result<(), Error> {
        for part in out.chunks_mut(BATCH) {
            let first = self.extend(channel, part.len())?;
            for (c, chunk) in part.chunks_mut(CHUNK).enumerate() {
                let s = &mut self.scratch;
                s.hash_chunk(&self.hash, c * CHUNK, chunk.len(), first, Some(self.delta));
                for (o, (&x0, &x1)) in chunk.iter_mut().zip(s.hashed.iter().zip(&s.hashed_delta)) {
                    *o = (x0, x1);
                }
            }
        }
        Ok(())
    }

    /// Chosen-message OT: the receiver gets `messages[j].0` or `.1` as it chose. Each
    /// chunk goes out as one message of interleaved pairs (m0 ⊕ x0, m1 ⊕ x1).
    pub fn send<C: Channel + ?Sized>(
        &mut self,
        channel: &mut C,
        messages: &[(Block, Block)],
    ) -> Result<(), Error> {
        for part in messages.chunks(BATCH) {
            let first = self.extend(channel, part.len())?;
            for (c, chunk) in part.chunks(CHUNK).enumerate() {
                let s = &mut self.scratch;
                s.hash_chunk(&self.hash, c * CHUNK, chunk.len(), first, Some(self.delta));
                let masked = &mut s.masked[..2 * chunk.len()];
                for ((pair, &(m0, m1)), (&x0, &x1)) in masked
                    .chunks_exact_mut(2)
                    .zip(chunk)
                    .zip(s.hashed.iter().zip(&s.hashed_delta))
                {
                    pair[0] = m0 ^ x0;
                    pair[1] = m1 ^ x1;
                }
                channel.send_blocks(MESSAGES, masked)?;
            }
        }
        channel.flush()?;
        Ok(())
    }

    /// Extends one batch of `n` OTs into `scratch.rows` (checked, for KOS) and returns the
    /// index of its first OT.
    fn extend<C: Channel + ?Sized>(&mut self, channel: &mut C, n: usize) -> Result<u64, Error> {
        self.extend_tampered(channel, n, &mut ())
    }

    /// [`OtSender::extend`], with `tamper` applied to the seed opening before it goes out.
    fn extend_tampered<C: Channel + ?Sized>(
        &mut self,
        channel: &mut C,
        n: usize,
        tamper: &mut impl Tamper,
    ) -> Result<u64, Error> {
        let total = self.security.rows(n);
        let s = &mut self.scratch;
        s.rows.resize(total, Block::ZERO);
        // KOS: commit to this batch's coin-toss seed before the matrix arrives.
        let seed = match self.security {
            Security::Malicious => {
                let seed = self.prg.random_block();
                channel.send(COMMIT, &Sha256::digest(seed.to_bytes()))?;
                channel.flush()?;
                Some(seed)
            }
            Security::SemiHonest => None,
        };
        for start in (0..total).step_by(CHUNK) {
            let rows = CHUNK.min(total - start);
            let width = rows / KAPPA;
            let matrix = &mut s.matrix[..rows];
            channel.recv_blocks(MATRIX, matrix)?;
            for (i, (column, prg)) in matrix
                .chunks_exact_mut(width)
                .zip(&mut self.columns)
                .enumerate()
            {
                // q^i = G(k_i^{s_i}) ⊕ s_i·u^i, selected by a mask.
                let s_i = Block::mask((self.delta.as_u128() >> i) & 1 == 1);
                let pad = &mut s.column[..width];
                prg.fill_blocks(pad);
                for (q, &g) in column.iter_mut().zip(pad.iter()) {
                    *q = g ^ (s_i & *q);
                }
            }
            transpose_128xm_to_blocks(
                bytemuck::cast_slice(matrix),
                rows,
                &mut s.rows[start..start + rows],
            )?;
        }
        if let Some(seed) = seed {
            self.check(channel, total, seed, tamper)?;
        }
        let first = self.next_index;
        self.next_index += n as u64;
        Ok(first)
    }

    /// The sender's half of the KOS consistency check over the batch's `total` rows, with its
    /// committed coin-toss seed.
    fn check<C: Channel + ?Sized>(
        &mut self,
        channel: &mut C,
        total: usize,
        seed: Block,
        tamper: &mut impl Tamper,
    ) -> Result<(), Error> {
        let mut theirs = [Block::ZERO];
        channel.recv_blocks(SEED, &mut theirs)?;
        let mut opening = seed;
        tamper.opening(&mut opening);
        channel.send_blocks(OPEN, &[opening])?;
        channel.flush()?;
        // Σ χ_j q_j while the receiver computes its half.
        let q = weighted_sum(
            seed ^ theirs[0],
            &self.scratch.rows[..total],
            &mut self.scratch.column,
        );
        let mut proof = [Block::ZERO; 2];
        channel.recv_blocks(PROOF, &mut proof)?;
        let [x, t] = proof;
        if q != t ^ gf128::mul(x, self.delta) {
            return Err(abort(channel, Error::CheckFailed));
        }
        Ok(())
    }
}

/// Σ χ_j·rows_j in GF(2^128) with χ the PRG stream of `seed`, chunk by chunk in `buffer`.
fn weighted_sum(seed: Block, rows: &[Block], buffer: &mut [Block]) -> Block {
    let mut chi = Prg::from_seed_block(seed);
    rows.chunks(buffer.len()).fold(Block::ZERO, |acc, part| {
        let weights = &mut buffer[..part.len()];
        chi.fill_blocks(weights);
        acc ^ gf128::inner_product(weights, part)
    })
}

/// What a cheating party does to its messages before sending them; honest parties use `()`,
/// which changes nothing. The tests drive the KOS check and coin toss with it.
trait Tamper {
    /// Changes the sender's seed opening.
    fn opening(&mut self, _seed: &mut Block) {}
    /// Changes the matrix message u of the chunk starting at row `start`.
    fn matrix(&mut self, _start: usize, _u: &mut [Block]) {}
    /// Changes the KOS check values (x, t).
    fn proof(&mut self, _proof: &mut [Block; 2]) {}
}

impl Tamper for () {}

/// The receiver of OT extension: holds the choice bits.
pub struct OtReceiver {
    security: Security,
    /// (G(k_i^0), G(k_i^1)) for each column i.
    columns: Vec<(Prg, Prg)>,
    hash: FixedKeyHash,
    prg: Prg,
    next_index: u64,
    scratch: Scratch,
    /// The current batch's choice vector r, packed 128 rows per block, padded with random
    /// bits.
    choices: Vec<Block>,
}

impl std::fmt::Debug for OtReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtReceiver")
            .field("security", &self.security)
            .field("next_index", &self.next_index)
            .finish_non_exhaustive()
    }
}

impl OtReceiver {
    /// Runs the base OTs (as their sender) with the peer's [`OtSender::setup`].
    pub fn setup<C: Channel + ?Sized>(
        channel: &mut C,
        security: Security,
        mut prg: Prg,
    ) -> Result<Self, Error> {
        let seeds = base::send_random(channel, KAPPA, &mut prg)?;
        Ok(OtReceiver {
            security,
            columns: seeds
                .into_iter()
                .map(|(k0, k1)| (Prg::from_seed_block(k0), Prg::from_seed_block(k1)))
                .collect(),
            hash: FixedKeyHash::default(),
            prg,
            next_index: 0,
            scratch: Scratch::new(),
            choices: Vec::new(),
        })
    }

    /// Which protocol this extension runs.
    pub fn security(&self) -> Security {
        self.security
    }

    /// Correlated OT: `out[j]` = q_j ⊕ choices[j]·Δ.
    pub fn correlated<C: Channel + ?Sized>(
        &mut self,
        channel: &mut C,
        choices: &[bool],
        out: &mut [Block],
    ) -> Result<(), Error> {
        check_len("correlated OT", out.len(), choices.len())?;
        for (part, c) in out.chunks_mut(BATCH).zip(choices.chunks(BATCH)) {
            self.extend(channel, c)?;
            part.copy_from_slice(&self.scratch.rows[..part.len()]);
        }
        Ok(())
    }

    /// Random OT: `out[j]` = the sender's x_{choices[j]} = H(t_j, j).
    pub fn random<C: Channel + ?Sized>(
        &mut self,
        channel: &mut C,
        choices: &[bool],
        out: &mut [Block],
    ) -> Result<(), Error> {
        check_len("random OT", out.len(), choices.len())?;
        for (part, c) in out.chunks_mut(BATCH).zip(choices.chunks(BATCH)) {
            let first = self.extend(channel, c)?;
            for (k, chunk) in part.chunks_mut(CHUNK).enumerate() {
                let s = &mut self.scratch;
                s.hash_chunk(&self.hash, k * CHUNK, chunk.len(), first, None);
                chunk.copy_from_slice(&s.hashed[..chunk.len()]);
            }
        }
        Ok(())
    }

    /// Chosen-message OT: `out[j]` = the sender's `messages[j]` component `choices[j]`.
    pub fn receive<C: Channel + ?Sized>(
        &mut self,
        channel: &mut C,
        choices: &[bool],
        out: &mut [Block],
    ) -> Result<(), Error> {
        check_len("chosen-message OT", out.len(), choices.len())?;
        for (part, c) in out.chunks_mut(BATCH).zip(choices.chunks(BATCH)) {
            let first = self.extend(channel, c)?;
            for (k, (chunk, bits)) in part.chunks_mut(CHUNK).zip(c.chunks(CHUNK)).enumerate() {
                let s = &mut self.scratch;
                s.hash_chunk(&self.hash, k * CHUNK, chunk.len(), first, None);
                let masked = &mut s.masked[..2 * chunk.len()];
                channel.recv_blocks(MESSAGES, masked)?;
                for ((o, pair), (&h, &bit)) in chunk
                    .iter_mut()
                    .zip(masked.chunks_exact(2))
                    .zip(s.hashed.iter().zip(bits))
                {
                    // Branch-free selection of the chosen pair element.
                    *o = h ^ pair[0] ^ (Block::mask(bit) & (pair[0] ^ pair[1]));
                }
            }
        }
        Ok(())
    }

    /// Packs `choices` into `self.choices` (bit j of the vector is bit j % 128 of block
    /// j / 128), padding with random bits up to `total` rows.
    fn pack(&mut self, choices: &[bool], total: usize) {
        self.choices.resize(total / KAPPA, Block::ZERO);
        self.prg.fill_blocks(&mut self.choices);
        for (block, bits) in self.choices.iter_mut().zip(choices.chunks(KAPPA)) {
            let packed = bits
                .iter()
                .enumerate()
                .fold(0u128, |acc, (k, &b)| acc | (u128::from(b) << k));
            let keep = if bits.len() == KAPPA {
                0
            } else {
                u128::MAX << bits.len()
            };
            *block = Block::new((block.as_u128() & keep) | packed);
        }
    }

    /// Extends one batch with these choices into `scratch.rows` (and runs the KOS check) and
    /// returns the index of its first OT.
    fn extend<C: Channel + ?Sized>(
        &mut self,
        channel: &mut C,
        choices: &[bool],
    ) -> Result<u64, Error> {
        self.extend_tampered(channel, choices, &mut ())
    }

    /// [`OtReceiver::extend`], with `tamper` applied to the messages before they go out.
    fn extend_tampered<C: Channel + ?Sized>(
        &mut self,
        channel: &mut C,
        choices: &[bool],
        tamper: &mut impl Tamper,
    ) -> Result<u64, Error> {
        let total = self.security.rows(choices.len());
        self.pack(choices, total);
        let s = &mut self.scratch;
        s.rows.resize(total, Block::ZERO);
        for start in (0..total).step_by(CHUNK) {
            let rows = CHUNK.min(total - start);
            let width = rows / KAPPA;
            let r = &self.choices[start / KAPPA..start / KAPPA + width];
            // t^i = G(k_i^0) into `matrix`; u^i = t^i ⊕ G(k_i^1) ⊕ r into `column`.
            for (i, (g0, g1)) in self.columns.iter_mut().enumerate() {
                let t = &mut s.matrix[i * width..(i + 1) * width];
                g0.fill_blocks(t);
                let u = &mut s.column[i * width..(i + 1) * width];
                g1.fill_blocks(u);
                for ((u, &t), &r) in u.iter_mut().zip(t.iter()).zip(r) {
                    *u ^= t ^ r;
                }
            }
            tamper.matrix(start, &mut s.column[..rows]);
            channel.send_blocks(MATRIX, &s.column[..rows])?;
            transpose_128xm_to_blocks(
                bytemuck::cast_slice(&s.matrix[..rows]),
                rows,
                &mut s.rows[start..start + rows],
            )?;
        }
        if self.security == Security::Malicious {
            // The sender's commitment was sent before the matrix, so it is here by now, and
            // it binds the sender before it sees our seed.
            let mut commitment = [0u8; 32];
            channel.recv_into(COMMIT, &mut commitment)?;
            let seed = self.prg.random_block();
            channel.send_blocks(SEED, &[seed])?;
            channel.flush()?;
            let mut theirs = [Block::ZERO];
            channel.recv_blocks(OPEN, &mut theirs)?;
            if Sha256::digest(theirs[0].to_bytes()).as_slice() != commitment {
                return Err(abort(channel, Error::BadCommitment));
            }
            // x = Σ r_j·χ_j and t = Σ χ_j·t_j in one pass over χ.
            let mut chi = Prg::from_seed_block(seed ^ theirs[0]);
            let (mut x, mut t) = (Block::ZERO, Block::ZERO);
            for (rows, packed) in s.rows.chunks(CHUNK).zip(self.choices.chunks(CHUNK / KAPPA)) {
                let weights = &mut s.hashed[..rows.len()];
                chi.fill_blocks(weights);
                t ^= gf128::inner_product(weights, rows);
                for (w, &r) in weights.chunks_exact(KAPPA).zip(packed) {
                    for (bit, &w) in w.iter().enumerate() {
                        x ^= Block::mask((r.as_u128() >> bit) & 1 == 1) & w;
                    }
                }
            }
            let mut proof = [x, t];
            tamper.proof(&mut proof);
            channel.send_blocks(PROOF, &proof)?;
        }
        channel.flush()?;
        let first = self.next_index;
        self.next_index += choices.len() as u64;
        Ok(first)
    }
}

#[cfg(test)]
mod tests;
