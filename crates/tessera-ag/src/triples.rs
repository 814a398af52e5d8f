//! Authenticated AND triples between two parties: \[x\], \[y\], \[z\] with z = x ∧ y, every share
//! authenticated ([`crate::share`]). Made batch by batch as a circuit needs them, never all at
//! once, in three steps:
//!
//! 1. **Leaky AND** (KRRW18 §4, Fig. 5: one garbled row each way per triple). From random
//!    authenticated \[x\], \[y\], \[r\] each party, as a garbler under its own Δ, sends
//!    G = H(K\[x_peer\]) ⊕ H(K\[x_peer\] ⊕ Δ) ⊕ C with C = y_me·Δ ⊕ K\[y_peer\] ⊕ M\[y_me\]; as the
//!    evaluator of the peer's row it computes S with S_0 ⊕ S_1 = (xy ⊕ r)·(Δ_0 ⊕ Δ_1). The low
//!    bits of S are opened: d = xy ⊕ r, and \[z\] = \[r\] ⊕ d. Both Δ have low bit 1, so the second
//!    party works under Δ_1 ⊕ 1 (the first clears the low bit of its MACs to match, a public
//!    change that reveals nothing) and Δ_0 ⊕ Δ_1 ⊕ 1 has low bit 1.
//! 2. **Equality check** (KRRW18 §4, F_EQ): L = S ⊕ d·Δ is the same on both sides exactly when
//!    the rows were honest, except that a wrong row goes unseen when the honest party's x-share
//!    is 0: each cheat is caught with probability 1/2 and otherwise leaks that share. The first
//!    party commits to the SHA-256 of its L, the second shows its digest, the first opens.
//! 3. **Bucketing** (WRK17 §3, with the buckets drawn as cyclic shifts of layers, as the 2026
//!    EMP-AG2PC does): the ℓ·B leaky triples of a batch are B layers of ℓ; after the check the
//!    parties toss a coin for B − 1 shifts r_i, and bucket j takes triple j of layer 0 and
//!    triple (j + r_i) mod ℓ of layer i. Each bucket is folded into one triple, opening
//!    y_1 ⊕ y_i with MACs: (x, y, z) = (x_1 ⊕ x_i, y_1, z_1 ⊕ z_i ⊕ (y_1 ⊕ y_i)·x_i). One
//!    unleaked triple in a bucket hides its x. Every pass over the layers is sequential, so
//!    bucketing costs no cache misses however large the batch. [`bucket_size`] picks B for ℓ.

use crate::Error;
use crate::abit;
use crate::checks::{self, Check};
use crate::share::{Keyring, Shares};
use crate::wire::{BUCKETS, COMMIT, GARBLED, Incoming, Message, OPEN, REVEAL, SHARES};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use subtle::ConstantTimeEq;
use tessera_core::{Block, FixedKeyHash, Prg};
use tessera_net::Space;
use tessera_net::role::{self, Next, Outbox, Role};
use tessera_protocols::Session;

/// The statistical security parameter ρ: a cheating party gets a bad triple past the checks
/// with probability at most 2^-ρ per batch.
pub const RHO: u32 = 40;

/// The high 64 bits of the leaky AND's hash tweaks: bit 61 (tweak bit 125) keeps them apart
/// from the OT providers' tweaks (below 2^64 and bits 126, 127).
const TWEAK_HIGH: u64 = 1 << 61;

/// log2 of a bound on the chance that a cheating party gets a bad triple into the output of
/// a batch of ℓ buckets of B. The cheater corrupts s_i triples of layer i, before the shifts are
/// tossed; each passes the equality check with probability 1/2, independently (it must guess
/// the honest party's x-share), and bucket j is all corrupted with probability
/// Π_{i ≥ 1} s_i/ℓ for j in the corrupted set of layer 0. So the expected number of buckets
/// all corrupted and unseen is s_0 · Π_{i ≥ 1} (s_i/ℓ) · 2^-Σ s_i ≤ 2^-B · ℓ^-(B-1), since
/// s·2^-s ≤ 1/2; by Markov's inequality this bounds the chance of one.
pub fn log2_bad_bucket(l: usize, b: usize) -> f64 {
    -(b as f64) - (b as f64 - 1.0) * (l.max(1) as f64).log2()
}

/// The smallest bucket size B ≥ 2 for which [`log2_bad_bucket`] of a batch of `l` triples is
/// at most −[`RHO`]. For ρ = 40:
///
/// | ℓ from | B |
/// |---|---|
/// | 370 728 (2^18.5) | 3 |
/// | 4 096 (2^12) | 4 |
/// | 431 (2^8.75) | 5 |
/// | 112 (2^6.8) | 6 |
///
/// WRK17 §3 (and the classic EMP-AG2PC's `fpre.h`), bucketing by a random permutation, use
/// B = 3 from ℓ = 280 000, 4 from 3 100, 5 below; the 2026 EMP-AG2PC's cyclic shifts take the
/// smallest B with ℓ^(B−1) > 2^40.
pub fn bucket_size(l: usize) -> usize {
    (2..64)
        .find(|&b| log2_bad_bucket(l, b) <= -f64::from(RHO))
        .unwrap_or(64)
}

/// One party's authenticated AND triples.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Triples {
    /// Shares of x.
    pub x: Shares,
    /// Shares of y.
    pub y: Shares,
    /// Shares of z = x ∧ y.
    pub z: Shares,
}

impl Triples {
    /// How many.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
}

/// Leaky triples hashed at a time.
const CHUNK: usize = 1024;

/// Bytes of a SHA-256 digest.
const DIGEST: usize = 32;

/// Where a batch stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Start,
    Garbled,
    Shared,
    Committed,
    Revealed,
    Bucketed,
}

/// One batch of the triple protocol, one party's role (no I/O; [`Generator`] drives it).
pub struct TripleBatch {
    ring: Keyring,
    /// The batch's number, which separates its hash tweaks and digests from other batches'.
    batch: u64,
    bucket: usize,
    hash: FixedKeyHash,
    prg: Prg,
    /// The ℓ·B leaky triples: \[x\] (the first n shares), \[y\] (the next n) and \[r\] (the last
    /// n), which becomes \[z\].
    leaky: Shares,
    n: usize,
    /// Per leaky triple: C, then after the peer's rows S (and L after the opening).
    c: Vec<Block>,
    /// Per leaky triple: the part of S known before the peer's row, then S.
    s: Vec<Block>,
    digest: [u8; DIGEST],
    coin: Block,
    nonce: Block,
    commitment: [u8; DIGEST],
    /// Bucket differences y_1 ⊕ y_i, layer by layer (ℓ per layer past the first), and the
    /// layers' shifts.
    diffs: Shares,
    shifts: Vec<usize>,
    stage: Stage,
    /// This party's garbled rows, and the folded triples' buffers.
    rows: Vec<Block>,
    out: Triples,
}

/// The buffers of a batch, which its [`Generator`] keeps from batch to batch (and gets back
/// from whoever used the batch's triples and masks) so that a batch touches no fresh pages:
/// the leaky triples' shares, the rows, S and C, the bucket differences, the folded triples
/// and the random masks drawn with them.
#[derive(Debug, Default)]
struct Buffers {
    leaky: Shares,
    rows: Vec<Block>,
    s: Vec<Block>,
    c: Vec<Block>,
    diffs: Shares,
    out: Triples,
    masks: Shares,
}

impl std::fmt::Debug for TripleBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TripleBatch")
            .field("batch", &self.batch)
            .field("leaky", &self.n)
            .field("bucket", &self.bucket)
            .field("stage", &self.stage)
            .finish_non_exhaustive()
    }
}

impl TripleBatch {
    /// Batch number `batch` of ℓ triples in buckets of `bucket` from the random shares
    /// `leaky` of the n = ℓ·B leaky triples: \[x\] (the first n), \[y\] (the next n) and \[r\] (the
    /// last n), with randomness for the coin and the commitment from `prg`.
    ///
    /// # Panics
    /// If `leaky` is not 3·ℓ·B shares for a whole ℓ.
    pub fn new(ring: Keyring, batch: u64, bucket: usize, leaky: Shares, prg: Prg) -> Self {
        let n = leaky.len() / 3;
        assert!(
            leaky.len() == 3 * n && bucket > 0 && n.is_multiple_of(bucket),
            "a batch is ℓ·B leaky triples"
        );
        TripleBatch {
            ring,
            batch,
            bucket,
            hash: FixedKeyHash::default(),
            prg,
            leaky,
            n,
            c: Vec::new(),
            s: Vec::new(),
            digest: [0; DIGEST],
            coin: Block::ZERO,
            nonce: Block::ZERO,
            commitment: [0; DIGEST],
            diffs: Shares::default(),
            shifts: Vec::new(),
            stage: Stage::Start,
            rows: Vec::new(),
            out: Triples::default(),
        }
    }

    /// This batch with the buffers of `spare` (all but the leaky shares, which
    /// [`TripleBatch::new`] takes).
    fn reusing(mut self, spare: &mut Buffers) -> Self {
        self.rows = std::mem::take(&mut spare.rows);
        self.s = std::mem::take(&mut spare.s);
        self.c = std::mem::take(&mut spare.c);
        self.diffs = std::mem::take(&mut spare.diffs);
        self.out = std::mem::take(&mut spare.out);
        self
    }

    /// Gives its buffers back to `spare`.
    fn give_back(self, spare: &mut Buffers) {
        spare.leaky = self.leaky;
        spare.rows = self.rows;
        spare.s = self.s;
        spare.c = self.c;
        spare.diffs = self.diffs;
    }

    /// The Δ this party works under in the leaky AND: Δ_0, or Δ_1 ⊕ 1.
    fn work_delta(&self) -> Block {
        self.ring.delta ^ Block::new(u128::from(!self.ring.first))
    }

    /// Garbles this party's rows into `rows`: G = H(K\[x\]) ⊕ H(K\[x\] ⊕ Δ) ⊕ C, hashing a
    /// chunk at a time (H(K\[x\]) goes straight into S, H(K\[x\] ⊕ Δ) into the rows).
    fn garble(&mut self) {
        let (n, first, batch) = (self.n, self.ring.first, self.batch);
        let d = self.work_delta();
        let (rows, s, c) = (&mut self.rows, &mut self.s, &mut self.c);
        // Every row and S is written by the hashes below: the old values need no zeroing.
        for v in [&mut *rows, &mut *s] {
            v.resize(n, Block::ZERO);
        }
        let keys = &self.leaky.keys()[..n];
        for at in (0..n).step_by(CHUNK) {
            let end = (at + CHUNK).min(n);
            let t = row_tweak(batch, first, at);
            self.hash
                .tccr_counter(&keys[at..end], Block::ZERO, t, &mut s[at..end]);
            self.hash
                .tccr_counter(&keys[at..end], d, t, &mut rows[at..end]);
        }
        c.clear();
        c.reserve(n);
        for k in 0..n {
            let (ym, yk) = self.leaky.get(n + k);
            let ck = (d & Block::mask(ym.lsb())) ^ yk ^ work_mac(first, ym);
            rows[k] ^= s[k] ^ ck;
            c.push(ck);
            // S's part known now: H(K[x]) ⊕ K[r] ⊕ M[r] ⊕ r·Δ.
            let (rm, rk) = self.leaky.get(2 * n + k);
            s[k] ^= rk ^ work_mac(first, rm) ^ (d & Block::mask(rm.lsb()));
        }
    }

    /// Evaluates the peer's rows: S ⊕= H(M\[x\]) ⊕ x·(G ⊕ C), a chunk at a time. Returns the low
    /// bits of S.
    fn evaluate(&mut self, rows: &[Block]) -> Vec<u8> {
        let n = self.n;
        let (mut macs, mut hm) = ([Block::ZERO; CHUNK], [Block::ZERO; CHUNK]);
        for at in (0..n).step_by(CHUNK) {
            let len = CHUNK.min(n - at);
            for (i, m) in macs[..len].iter_mut().enumerate() {
                *m = work_mac(self.ring.first, self.leaky.macs()[at + i]);
            }
            let t = row_tweak(self.batch, !self.ring.first, at);
            self.hash
                .tccr_counter(&macs[..len], Block::ZERO, t, &mut hm[..len]);
            for (i, h) in hm[..len].iter().enumerate() {
                let k = at + i;
                let xm = Block::mask(self.leaky.bit(k));
                self.s[k] ^= *h ^ ((rows[k] ^ self.c[k]) & xm);
            }
        }
        role::pack_bits(self.s.iter().map(|s| s.lsb()))
    }

    /// Takes the peer's low bits: d = xy ⊕ r, \[z\] = \[r\] ⊕ d, and the digest of L = S ⊕ d·Δ.
    fn open_products(&mut self, theirs: &[u8]) -> Result<(), Error> {
        let n = self.n;
        let theirs = crate::wire::unpack_bits(theirs, n, SHARES.name)?;
        let d = self.work_delta();
        let mut h = Sha256::new();
        h.update(b"tessera-ag leaky AND equality");
        h.update(self.batch.to_le_bytes());
        let mut l = [Block::ZERO; CHUNK];
        for at in (0..n).step_by(CHUNK) {
            let len = CHUNK.min(n - at);
            for (i, l) in l[..len].iter_mut().enumerate() {
                let k = at + i;
                let open = self.s[k].lsb() ^ theirs[k];
                self.leaky.add_public(self.ring, 2 * n + k, open);
                *l = self.s[k] ^ (d & Block::mask(open));
            }
            h.update(bytemuck::cast_slice::<Block, u8>(&l[..len]));
        }
        self.digest = h.finalize().into();
        Ok(())
    }

    /// Checks the peer's equality digest against this party's.
    fn compare(&self, theirs: &[u8]) -> Result<(), Error> {
        checks::require(Check::LeakyEquality, bool::from(self.digest.ct_eq(theirs)))
    }

    /// Draws the layers' shifts from the tossed coin and opens this party's bucket
    /// differences.
    fn bucket_opening(&mut self, their_coin: Block) -> Result<Vec<u8>, Error> {
        let (n, b) = (self.n, self.bucket);
        let l = n / b;
        let mut prg = Prg::from_seed_block(self.coin ^ their_coin);
        let mut draws = vec![Block::ZERO; b - 1];
        prg.fill_blocks(&mut draws);
        self.shifts = draws.iter().map(|&r| below(r, l)).collect();
        self.diffs.clear_for((b - 1) * l);
        for (i, &shift) in self.shifts.iter().enumerate() {
            let layer = (i + 1) * l;
            for (j, other) in rotated(l, shift).enumerate() {
                let (m1, k1) = self.leaky.get(n + j);
                let (m, k) = self.leaky.get(n + layer + other);
                self.diffs.push((m1 ^ m, k1 ^ k));
            }
        }
        Ok(self.diffs.opening())
    }

    /// Posts this party's bucket differences, drawn with the tossed coin; waits for the peer's.
    fn open_buckets<O: Outbox>(
        &mut self,
        their_coin: Block,
        out: &mut O,
    ) -> Result<Next<Triples>, Error> {
        let opening = self.bucket_opening(their_coin)?;
        out.post(&Message::<{ BUCKETS.id }>(Cow::Owned(opening)))?;
        out.flush()?;
        self.stage = Stage::Bucketed;
        Ok(Next::exact(
            BUCKETS,
            self.diffs.len().div_ceil(8) + abit::DIGEST,
        ))
    }

    /// Checks the peer's opening of its differences and folds each bucket into one triple.
    fn fold(&mut self, theirs: &[u8]) -> Result<Triples, Error> {
        let (n, b) = (self.n, self.bucket);
        let l = n / b;
        let their_bits =
            self.diffs
                .check_opening(self.ring.delta, theirs, (BUCKETS.name, Check::BucketMacs))?;
        let mut out = std::mem::take(&mut self.out);
        self.leaky.copy_into(0..l, &mut out.x);
        self.leaky.copy_into(n..n + l, &mut out.y);
        self.leaky.copy_into(2 * n..2 * n + l, &mut out.z);
        let folded = if checks::on(Check::Bucketing) {
            &self.shifts[..]
        } else {
            &[]
        };
        for (i, &shift) in folded.iter().enumerate() {
            let layer = (i + 1) * l;
            for (j, other) in rotated(l, shift).enumerate() {
                let at = i * l + j;
                let d = Block::mask(self.diffs.bit(at) ^ their_bits[at]);
                let other = layer + other;
                let (xm, xk) = self.leaky.get(other);
                let (zm, zk) = self.leaky.get(2 * n + other);
                out.x.xor_at(j, (xm, xk));
                out.z.xor_at(j, (zm ^ (xm & d), zk ^ (xk & d)));
            }
        }
        Ok(out)
    }
}

/// A MAC of the `first` party's or the second's under the peer's working Δ: the first clears
/// its low bit.
fn work_mac(first: bool, m: Block) -> Block {
    m & Block::new(!u128::from(first))
}

/// The tweak of leaky triple `k`'s row in batch `batch`, garbled by the first party
/// (`by_first`) or the second.
fn row_tweak(batch: u64, by_first: bool, k: usize) -> Block {
    Block::from_halves(TWEAK_HIGH | batch << 1 | u64::from(by_first), k as u64)
}

/// (j + shift) mod l for j = 0, 1, …, l − 1: a layer cyclically shifted, as two runs.
pub(crate) fn rotated(l: usize, shift: usize) -> impl Iterator<Item = usize> {
    (shift..l).chain(0..shift)
}

/// ⌊r·bound / 2^128⌋ for a random 128-bit r: a draw below `bound` off uniform by less than
/// bound·2^-128.
pub(crate) fn below(r: Block, bound: usize) -> usize {
    let bound = bound as u128;
    let high = u128::from(r.high()) * bound;
    let low = (u128::from(r.low()) * bound) >> 64;
    ((high + low) >> 64) as usize
}

/// The first party's commitment to its equality digest and coin, under a random nonce.
fn commitment(batch: u64, digest: &[u8], coin: Block, nonce: Block) -> [u8; DIGEST] {
    let parts: [&[u8]; 4] = [
        &batch.to_le_bytes(),
        digest,
        &coin.to_bytes(),
        &nonce.to_bytes(),
    ];
    tessera_core::digest::tagged(b"tessera-ag equality commitment", &parts)
}

/// The block at byte `at` of a payload whose length the driver has checked.
fn block_at(bytes: &[u8], at: usize) -> Block {
    Block::from_bytes(bytes[at..at + 16].try_into().unwrap_or_default())
}

/// The protocol steps out of order (a bug, not the peer: the driver checks kinds).
fn out_of_turn(stage: Stage) -> Error {
    Error::Usage(format!(
        "AND triple batch: no message expected at {stage:?}"
    ))
}

impl Role for TripleBatch {
    type Incoming<'a> = Incoming<'a>;
    type Output = Triples;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<Incoming<'_>>,
        out: &mut O,
    ) -> Result<Next<Triples>, Error> {
        let n = self.n;
        let bytes = incoming.map(|m| m.bytes);
        match (self.stage, bytes) {
            (Stage::Start, None) => {
                self.garble();
                out.post(&Message::<{ GARBLED.id }>(Cow::Borrowed(
                    bytemuck::cast_slice(&self.rows),
                )))?;
                out.flush()?;
                self.stage = Stage::Garbled;
                Ok(Next::exact(GARBLED, n * 16))
            }
            (Stage::Garbled, Some(bytes)) => {
                let rows = crate::wire::blocks(bytes, GARBLED.name)?;
                let low = self.evaluate(&rows);
                out.post(&Message::<{ SHARES.id }>(Cow::Owned(low)))?;
                out.flush()?;
                self.stage = Stage::Shared;
                Ok(Next::exact(SHARES, n.div_ceil(8)))
            }
            (Stage::Shared, Some(bytes)) => {
                self.open_products(bytes)?;
                self.coin = self.prg.random_block();
                self.stage = Stage::Committed;
                if self.ring.first {
                    self.nonce = self.prg.random_block();
                    let c = commitment(self.batch, &self.digest, self.coin, self.nonce);
                    out.post(&Message::<{ COMMIT.id }>(Cow::Owned(c.to_vec())))?;
                    out.flush()?;
                    Ok(Next::exact(REVEAL, DIGEST + 16))
                } else {
                    Ok(Next::exact(COMMIT, DIGEST))
                }
            }
            (Stage::Committed, Some(bytes)) if self.ring.first => {
                self.compare(&bytes[..DIGEST])?;
                let their_coin = block_at(bytes, DIGEST);
                let mut open = self.digest.to_vec();
                open.extend_from_slice(&self.coin.to_bytes());
                open.extend_from_slice(&self.nonce.to_bytes());
                out.post(&Message::<{ OPEN.id }>(Cow::Owned(open)))?;
                self.open_buckets(their_coin, out)
            }
            (Stage::Committed, Some(bytes)) => {
                self.commitment.copy_from_slice(bytes);
                let mut reveal = self.digest.to_vec();
                reveal.extend_from_slice(&self.coin.to_bytes());
                out.post(&Message::<{ REVEAL.id }>(Cow::Owned(reveal)))?;
                out.flush()?;
                self.stage = Stage::Revealed;
                Ok(Next::exact(OPEN, DIGEST + 32))
            }
            (Stage::Revealed, Some(bytes)) => {
                let (digest, their_coin) = (&bytes[..DIGEST], block_at(bytes, DIGEST));
                let opened =
                    commitment(self.batch, digest, their_coin, block_at(bytes, DIGEST + 16));
                checks::require(
                    Check::EqualityCommitment,
                    bool::from(opened.ct_eq(&self.commitment)),
                )?;
                self.compare(digest)?;
                self.open_buckets(their_coin, out)
            }
            (Stage::Bucketed, Some(bytes)) => Ok(Next::Done(self.fold(bytes)?)),
            (stage, _) => Err(out_of_turn(stage)),
        }
    }
}

/// Makes a party's triples with one peer, batch by batch, over the session's actively secure
/// random correlated OT.
#[derive(Debug)]
pub struct Generator {
    peer: usize,
    space: Space,
    batches: u64,
    spare: Buffers,
}

impl Generator {
    /// A generator with `peer` (the peer makes its own at the same point of its session).
    pub fn new(session: &mut Session, peer: usize) -> Result<Self, Error> {
        abit::check_provider(session.ot_choice())?;
        Ok(Generator {
            peer,
            space: session.space(peer)?,
            batches: 0,
            spare: Buffers::default(),
        })
    }

    /// Takes back triples of an earlier batch that are used up, for their buffers.
    pub fn recycle_triples(&mut self, used: Triples) {
        self.spare.out = used;
    }

    /// Takes back masks of an earlier [`Generator::batch_and_bits`] that are used up, for
    /// their buffers.
    pub fn recycle_masks(&mut self, used: Shares) {
        self.spare.masks = used;
    }

    /// One batch of `l` triples (with ℓ·B leaky ones, B = [`bucket_size`]`(l)`), and this
    /// party's keyring.
    pub fn batch(&mut self, session: &mut Session, l: usize) -> Result<(Triples, Keyring), Error> {
        let (triples, ring, _) = self.batch_and_bits(session, l, 0)?;
        Ok((triples, ring))
    }

    /// [`Generator::batch`], and `extra` more random authenticated shares drawn in the same
    /// OT call (one round trip fewer than two draws).
    pub fn batch_and_bits(
        &mut self,
        session: &mut Session,
        l: usize,
        extra: usize,
    ) -> Result<(Triples, Keyring, Shares), Error> {
        let b = bucket_size(l);
        let n = l * b;
        let mut leaky = std::mem::take(&mut self.spare.leaky);
        let delta = abit::random_into(session, self.peer, 3 * n + extra, &mut leaky)?;
        let ring = Keyring {
            delta,
            first: session.id() < self.peer,
        };
        let mut more = std::mem::take(&mut self.spare.masks);
        leaky.copy_into(3 * n..3 * n + extra, &mut more);
        leaky.truncate(3 * n);
        let mut role = TripleBatch::new(ring, self.batches, b, leaky, session.fork_prg())
            .reusing(&mut self.spare);
        self.batches += 1;
        let triples = role::drive(&mut role, &mut session.channel(self.peer), self.space)?;
        role.give_back(&mut self.spare);
        Ok((triples, ring, more))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_below_a_bound_are_even() {
        let mut prg = Prg::from_seed_block(Block::new(9));
        let mut counts = [0usize; 6];
        for _ in 0..60_000 {
            counts[below(prg.random_block(), 6)] += 1;
        }
        // Each about 10 000 (sd 91).
        assert!(
            counts.iter().all(|c| (9_500..10_500).contains(c)),
            "{counts:?}"
        );
        assert_eq!(below(Block::ONES, 6), 5);
        assert_eq!(below(Block::ZERO, 6), 0);
    }
}
