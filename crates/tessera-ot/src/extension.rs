//! OT extension: SoftSpoken (Roy, CRYPTO 2022) for any k from 1 to [`MAX_K`], of which IKNP
//! with the ALSZ optimisations is k = 1, semi-honest or with the KOS check, as roles without
//! I/O (setup: [`SetupSender`], [`SetupReceiver`]; one batch of extension each:
//! [`ExtendSender`], [`ExtendReceiver`]; chosen messages: [`MaskedSender`], [`MaskedReceiver`])
//! and the providers that drive them ([`ExtensionSender`], [`ExtensionReceiver`]), which
//! implement the OT traits of [`crate::traits`].
//!
//! Setup: 127 base OTs with the roles reversed, then one message. The extension sender draws Δ
//! (bit 0 forced to 1 so that Δ can serve as a free-XOR offset) and, group by group of k
//! columns, learns every GGM leaf of the receiver's tree but the one its bits of Δ name
//! (`vole`).
//!
//! Extending m OTs with choice vector r (IKNP §4; ALSZ §3.1; Roy §4): the receiver computes
//! its 128 columns t^i from the leaves' streams and sends one correction column per group
//! (128/k bits per OT); the sender computes q^i = t^i ⊕ Δ_i·r. Transposed into rows:
//! q_j = t_j ⊕ r_j·Δ. That is a correlated OT with global offset Δ: the sender holds q_j and
//! q_j ⊕ Δ, the receiver the one it chose. Column 0 is fixed so that q_j's least significant
//! bit is 0 and t_j's is r_j: random correlated OT needs no choice vector beside the blocks. Hashing both ends with a tweakable circular-correlation-robust hash (TCCR,
//! Guo-Katz-Wang-Yu S&P 2020, tweak = the OT's index) gives random OT (ALSZ's R-OT, no further
//! message), and masking two chosen messages with the random ones gives chosen-message OT
//! (two blocks per OT).
//!
//! KOS (Keller, Orsini, Scholl, CRYPTO 2015, §3 and Fig. 7; Roy §5 treats consistency checks
//! for SoftSpoken): the receiver extends
//! `KOS_EXTRA` more rows with random choice bits, and after the matrix both run the
//! consistency check: for random χ_j ∈ GF(2^128) from a coin toss (the sender commits to its
//! seed before the matrix, the receiver then reveals its own, the sender opens), the receiver
//! sends x = Σ r_j·χ_j and t = Σ t_j·χ_j, and the sender checks Σ q_j·χ_j = t ⊕ x·Δ. A receiver
//! that used different choice vectors in different columns fails except with probability
//! 2^-(number of affected columns with s_i = 1); the extra random rows keep x and t from
//! revealing r. The extra rows are then dropped. Nothing is hashed or sent before the check
//! passes. With groups of k columns a cheating receiver must guess k bits of Δ per group it
//! cheats in, so the check's soundness is as for KOS.
//!
//! The matrix goes out in messages of `CHUNK` rows (256 KiB), so the sender works on one
//! chunk while the next is in flight; requests are processed in batches of `BATCH` OTs, so
//! memory stays bounded however many OTs are asked for.

mod vole;

pub use vole::{MAX_K, ReceiverColumns, SenderColumns};

use crate::base;
use crate::bits::bit_mask;
use crate::choices::Choices;
use crate::flavours::{ProviderReceiver, ProviderSender};
use crate::traits::Flow;
use crate::{Error, out_of_turn};
use std::borrow::Cow;
use tessera_core::transpose::transpose_squares;
use tessera_core::{Block, FixedKeyHash, Prg, gf128};
use tessera_net::role::{self, Decode, Encode, Next, Outbox, Role};
use tessera_net::{Channel, DecodeError, Kind, Space, Spaces};

/// The receiver's matrix u, one chunk of rows.
pub const MATRIX: Kind = Kind::new(0x20, "ot-extension matrix u");
/// The sender's commitment to its coin-toss seed (KOS).
pub const COMMIT: Kind = Kind::new(0x21, "kos sender seed commitment");
/// The receiver's coin-toss seed (KOS).
pub const SEED: Kind = Kind::new(0x22, "kos receiver seed");
/// The receiver's check values x and t (KOS).
pub const PROOF: Kind = Kind::new(0x23, "kos check values");
/// The sender's masked chosen messages, one chunk.
pub const MESSAGES: Kind = Kind::new(0x24, "ot masked messages");
/// The sender's seed opening (KOS).
pub const OPEN: Kind = Kind::new(0x25, "kos sender seed opening");
/// The receiver's flip bits for OTs made ahead of use: chosen bit ⊕ random bit.
pub const FLIPS: Kind = Kind::new(0x26, "ot flip bits");
/// The receiver's GGM level sums, masked with the base OT keys (setup).
pub const TREE: Kind = Kind::new(0x27, "softspoken tree sums");

/// Rows per matrix chunk (a multiple of 128).
pub const CHUNK: usize = 1 << 14;
/// OTs per extension batch: per KOS check, and per hashing pass.
pub(crate) const BATCH: usize = 1 << 20;
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
    /// Rows extended for `n` OTs: whole 128-row tiles, plus KOS's extra rows.
    pub fn rows(self, n: usize) -> usize {
        n.next_multiple_of(KAPPA)
            + match self {
                Security::SemiHonest => 0,
                Security::Malicious => KOS_EXTRA,
            }
    }
}

/// Which extension: SoftSpoken with groups of `k` columns (k = 1 is IKNP) and its security
/// (the KOS check or none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Protocol {
    k: u8,
    security: Security,
}

impl Protocol {
    /// IKNP with the ALSZ optimisations: SoftSpoken with k = 1, semi-honest.
    pub const IKNP: Protocol = Protocol {
        k: 1,
        security: Security::SemiHonest,
    };
    /// KOS: IKNP with the consistency check.
    pub const KOS: Protocol = Protocol {
        k: 1,
        security: Security::Malicious,
    };
    /// SoftSpoken's default k. With `tessera bench ot --protocol softspoken --flavour cot` on
    /// a 2-core Zen 3 guest, k = 2 and k = 3 were equally fast and k ≥ 4 slower; 3 sends a third
    /// less than 2.
    pub const DEFAULT_K: usize = 3;

    /// SoftSpoken with groups of `k` columns, 1 ≤ k ≤ [`MAX_K`].
    pub fn softspoken(k: usize, security: Security) -> Result<Self, Error> {
        match u8::try_from(k) {
            Ok(k) if (1..=MAX_K).contains(&usize::from(k)) => Ok(Protocol { k, security }),
            _ => Err(Error::Usage(format!(
                "SoftSpoken's k must be between 1 and {MAX_K}, not {k}"
            ))),
        }
    }

    /// Columns per group.
    pub fn k(self) -> usize {
        usize::from(self.k)
    }

    /// The security it gives.
    pub fn security(self) -> Security {
        self.security
    }

    /// `iknp`, `kos`, `softspoken-k4` or `softspoken-k4-malicious`.
    pub fn name(self) -> String {
        match (self.k, self.security) {
            (1, Security::SemiHonest) => "iknp".into(),
            (1, Security::Malicious) => "kos".into(),
            (k, Security::SemiHonest) => format!("softspoken-k{k}"),
            (k, Security::Malicious) => format!("softspoken-k{k}-malicious"),
        }
    }
}

/// A chunk of the matrix: one correction column per group, `rows / 128` blocks each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matrix<'a>(pub Cow<'a, [Block]>);
/// The receiver's tree message: per base OT, both level sums masked with its keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree<'a>(pub Cow<'a, [Block]>);
/// The sender's commitment: SHA-256 of its seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Commit(pub [u8; 32]);

/// The commitment to a batch's coin-toss seed (a fresh random block, its own hiding nonce).
fn coin_commitment(seed: Block) -> [u8; 32] {
    tessera_core::digest::commit(b"tessera-ot kos coin", &seed.to_bytes(), &[])
}
/// The receiver's coin-toss seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seed(pub Block);
/// The sender's seed opening.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Open(pub Block);
/// The receiver's check values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    /// x = Σ r_j·χ_j.
    pub x: Block,
    /// t = Σ t_j·χ_j.
    pub t: Block,
}
/// Flip bits d_j = c_j ⊕ r_j for OTs made ahead with random choices r_j, packed eight to a
/// byte, least significant first (Beaver's derandomisation: the sender adds d_j·Δ).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flips<'a>(pub Cow<'a, [u8]>);

impl Encode for Flips<'_> {
    const KIND: Kind = FLIPS;
    fn encode<'a>(&'a self, _scratch: &'a mut Vec<u8>) -> &'a [u8] {
        &self.0
    }
}

/// A chunk of masked chosen messages: (m0 ⊕ x0, m1 ⊕ x1) per OT, interleaved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Masked<'a>(pub Cow<'a, [Block]>);

macro_rules! blocks_message {
    ($($t:ident => $kind:expr),*) => {$(
        impl Encode for $t<'_> {
            const KIND: Kind = $kind;
            fn encode<'a>(&'a self, _scratch: &'a mut Vec<u8>) -> &'a [u8] {
                bytemuck::cast_slice(&self.0)
            }
        }
    )*};
}
blocks_message!(Matrix => MATRIX, Masked => MESSAGES, Tree => TREE);

macro_rules! block_message {
    ($($t:ident => $kind:expr),*) => {$(
        impl Encode for $t {
            const KIND: Kind = $kind;
            fn encode<'a>(&'a self, scratch: &'a mut Vec<u8>) -> &'a [u8] {
                scratch.clear();
                scratch.extend_from_slice(&self.0.to_bytes());
                scratch
            }
        }
    )*};
}
block_message!(Seed => SEED, Open => OPEN);

impl Encode for Commit {
    const KIND: Kind = COMMIT;
    fn encode<'a>(&'a self, _scratch: &'a mut Vec<u8>) -> &'a [u8] {
        &self.0
    }
}

impl Encode for Proof {
    const KIND: Kind = PROOF;
    fn encode<'a>(&'a self, scratch: &'a mut Vec<u8>) -> &'a [u8] {
        scratch.clear();
        scratch.extend_from_slice(&self.x.to_bytes());
        scratch.extend_from_slice(&self.t.to_bytes());
        scratch
    }
}

/// What the extension sender receives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToSender<'a> {
    /// A chunk of the matrix.
    Matrix(Matrix<'a>),
    /// The receiver's seed.
    Seed(Seed),
    /// The receiver's check values.
    Proof(Proof),
    /// The receiver's flip bits.
    Flips(Flips<'a>),
    /// The receiver's tree message.
    Tree(Tree<'a>),
}

impl<'a> Decode<'a> for ToSender<'a> {
    fn decode(kind: u8, bytes: &'a [u8]) -> Result<Self, DecodeError> {
        Ok(match kind {
            k if k == MATRIX.id => ToSender::Matrix(Matrix(role::blocks(bytes)?)),
            k if k == SEED.id => ToSender::Seed(Seed(role::block(bytes)?)),
            k if k == FLIPS.id => ToSender::Flips(Flips(Cow::Borrowed(bytes))),
            k if k == TREE.id => ToSender::Tree(Tree(role::blocks(bytes)?)),
            k if k == PROOF.id => {
                let b = role::array::<32>(bytes)?;
                ToSender::Proof(Proof {
                    x: role::block(&b[..16])?,
                    t: role::block(&b[16..])?,
                })
            }
            k => {
                return Err(DecodeError(format!(
                    "kind {k:#04x} is not an OT-extension sender's message"
                )));
            }
        })
    }
}

/// What the extension receiver receives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToReceiver<'a> {
    /// The sender's commitment.
    Commit(Commit),
    /// The sender's opening.
    Open(Open),
    /// A chunk of masked messages.
    Masked(Masked<'a>),
}

impl<'a> Decode<'a> for ToReceiver<'a> {
    fn decode(kind: u8, bytes: &'a [u8]) -> Result<Self, DecodeError> {
        Ok(match kind {
            k if k == COMMIT.id => ToReceiver::Commit(Commit(role::array(bytes)?)),
            k if k == OPEN.id => ToReceiver::Open(Open(role::block(bytes)?)),
            k if k == MESSAGES.id => ToReceiver::Masked(Masked(role::blocks(bytes)?)),
            k => {
                return Err(DecodeError(format!(
                    "kind {k:#04x} is not an OT-extension receiver's message"
                )));
            }
        })
    }
}

/// Σ χ_j·row_j over a batch's `total` rows (in `out` and `rows`, as [`target`] put them) in
/// GF(2^128), with χ the PRG stream of `seed`, chunk by chunk in `buffer` (a chunk long).
fn weighted_sum(
    seed: Block,
    (out, rows): (&[Block], &[Block]),
    total: usize,
    buffer: &mut [Block],
) -> Block {
    let mut chi = Prg::from_seed_block(seed);
    (0..total).step_by(CHUNK).fold(Block::ZERO, |acc, start| {
        let len = CHUNK.min(total - start);
        let weights = &mut buffer[..len];
        chi.fill_blocks(weights);
        acc ^ gf128::inner_product(weights, placed(out, rows, start, len))
    })
}

/// The extension sender's state across batches: Δ, its columns' leaves, the next OT index
/// and row block.
pub struct SenderCore {
    security: Security,
    delta: Block,
    columns: SenderColumns,
    prg: Prg,
    next_index: u64,
    next_block: u64,
    /// The current batch's rows q_j, padded.
    rows: Vec<Block>,
    /// One chunk of KOS check weights.
    weights: Vec<Block>,
}

impl SenderCore {
    /// The core once the base OT keys (chosen by [`SenderColumns::base_choices`] for `delta`)
    /// and the receiver's tree message are known. Δ's least significant bit is taken as 1.
    pub fn new(
        protocol: Protocol,
        delta: Block,
        keys: &[Block],
        tree: &[Block],
        prg: Prg,
    ) -> Result<Self, Error> {
        let delta = delta.with_lsb(true);
        Ok(SenderCore {
            security: protocol.security,
            delta,
            columns: SenderColumns::setup(protocol.k(), delta, keys, tree)?,
            prg,
            next_index: 0,
            next_block: 0,
            rows: Vec::new(),
            weights: vec![Block::ZERO; CHUNK],
        })
    }

    /// One batch of `n` OTs (rows in [`SenderCore::rows`] afterwards).
    pub fn extend(&mut self, n: usize) -> ExtendSender<'_> {
        self.extend_into(n, &mut [])
    }

    /// One batch of `n` OTs, rows into `out` if it is not empty (whole chunks transposed
    /// straight into it).
    pub fn extend_into<'a>(&'a mut self, n: usize, out: &'a mut [Block]) -> ExtendSender<'a> {
        ExtendSender {
            total: self.security.rows(n),
            core: self,
            n,
            done: 0,
            seed: None,
            check: None,
            out,
        }
    }

    /// The rows of the last batch that [`SenderCore::extend`] made: q_j for its OTs (padding
    /// after them). After [`SenderCore::extend_into`], only those past the whole chunks the
    /// caller's buffer took.
    pub fn rows(&self) -> &[Block] {
        &self.rows
    }
}

/// One batch of extension, sender side: processes the matrix chunk by chunk and, for KOS, runs
/// the coin toss and the check. Its output is the index of the batch's first OT.
pub struct ExtendSender<'a> {
    core: &'a mut SenderCore,
    n: usize,
    total: usize,
    /// Rows processed so far.
    done: usize,
    /// KOS: this batch's committed seed.
    seed: Option<Block>,
    /// KOS: Σ χ_j q_j, once the coin toss is over.
    check: Option<Block>,
    /// The caller's buffer for the rows, or empty.
    out: &'a mut [Block],
}

/// The first row of a batch that goes to the core's `rows` instead of the caller's `out`:
/// whole chunks that fit in `out` go there, the rest (a last part chunk and the padding) to
/// `rows`, which holds only those, so a batch into a caller's buffer touches no second copy.
fn spill(out: &[Block]) -> usize {
    out.len() / CHUNK * CHUNK
}

/// Where chunk `start..start + len` of a batch's rows goes (`start` a multiple of [`CHUNK`]):
/// straight into the caller's `out` below [`spill`], else into the core's `rows` (from which
/// [`copy_rest`] fills the rest of `out` once the batch is over).
fn target<'a>(
    out: &'a mut [Block],
    rows: &'a mut [Block],
    start: usize,
    len: usize,
) -> &'a mut [Block] {
    let at = spill(out);
    if start < at {
        &mut out[start..start + len]
    } else {
        &mut rows[start - at..start - at + len]
    }
}

/// The chunk that [`target`] placed.
fn placed<'a>(out: &'a [Block], rows: &'a [Block], start: usize, len: usize) -> &'a [Block] {
    let at = spill(out);
    if start < at {
        &out[start..start + len]
    } else {
        &rows[start - at..start - at + len]
    }
}

/// Copies into `out` the rows that [`target`] put in the core's `rows`.
fn copy_rest(out: &mut [Block], rows: &[Block]) {
    let at = spill(out);
    let n = out.len() - at;
    out[at..].copy_from_slice(&rows[..n]);
}

impl ExtendSender<'_> {
    fn expect_matrix(&self) -> Next<u64> {
        let width = CHUNK.min(self.total - self.done) / KAPPA;
        Next::exact(MATRIX, 16 * width * self.core.columns.corrections())
    }

    fn finish(&mut self) -> Next<u64> {
        copy_rest(self.out, &self.core.rows);
        let first = self.core.next_index;
        self.core.next_index += self.n as u64;
        Next::Done(first)
    }
}

impl Role for ExtendSender<'_> {
    type Incoming<'m> = ToSender<'m>;
    type Output = u64;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToSender<'_>>,
        out: &mut O,
    ) -> Result<Next<u64>, Error> {
        let core = &mut *self.core;
        match incoming {
            None => {
                core.rows.resize(self.total - spill(self.out), Block::ZERO);
                if core.security == Security::Malicious {
                    // Commit to this batch's coin-toss seed before the matrix arrives.
                    let seed = core.prg.random_block();
                    out.post(&Commit(coin_commitment(seed)))?;
                    self.seed = Some(seed);
                }
                Ok(self.expect_matrix())
            }
            Some(ToSender::Matrix(Matrix(u))) if self.done < self.total => {
                let rows = CHUNK.min(self.total - self.done);
                let q = target(self.out, &mut core.rows, self.done, rows);
                core.columns.chunk(core.next_block, &u, q);
                core.next_block += (rows / KAPPA) as u64;
                transpose_squares(q)?;
                self.done += rows;
                Ok(if self.done < self.total {
                    self.expect_matrix()
                } else if core.security == Security::Malicious {
                    Next::exact(SEED, 16)
                } else {
                    self.finish()
                })
            }
            Some(ToSender::Seed(Seed(theirs))) if self.done == self.total => {
                let seed = self
                    .seed
                    .ok_or_else(|| out_of_turn("OT extension", "a KOS seed"))?;
                out.post(&Open(seed))?;
                out.flush()?;
                // Σ χ_j q_j while the receiver computes its half.
                let rows = (&*self.out, &core.rows[..]);
                self.check = Some(weighted_sum(
                    seed ^ theirs,
                    rows,
                    self.total,
                    &mut core.weights,
                ));
                Ok(Next::exact(PROOF, 32))
            }
            Some(ToSender::Proof(Proof { x, t })) => {
                let q = self
                    .check
                    .ok_or_else(|| out_of_turn("OT extension", "a KOS proof"))?;
                if q != t ^ gf128::mul(x, core.delta) {
                    return Err(Error::CheckFailed);
                }
                Ok(self.finish())
            }
            Some(_) => Err(out_of_turn("OT extension", "a message")),
        }
    }
}

/// The extension receiver's state across batches: its columns' leaves, the next OT index and
/// row block.
pub struct ReceiverCore {
    security: Security,
    columns: ReceiverColumns,
    prg: Prg,
    next_index: u64,
    next_block: u64,
    /// The current batch's rows t_j, padded.
    rows: Vec<Block>,
    /// The current batch's choice vector r, packed 128 rows per block, padded with random
    /// bits.
    choices: Vec<Block>,
    /// One chunk of KOS check weights, and of corrections.
    weights: Vec<Block>,
    u: Vec<Block>,
}

impl ReceiverCore {
    /// The core once the base OTs gave the key pairs, and the tree message for the sender.
    pub fn new(
        protocol: Protocol,
        pairs: &[(Block, Block)],
        mut prg: Prg,
    ) -> Result<(Self, Vec<Block>), Error> {
        let (columns, tree) = ReceiverColumns::setup(protocol.k(), pairs, &mut prg)?;
        let u = vec![Block::ZERO; CHUNK / KAPPA * columns.corrections()];
        let core = ReceiverCore {
            security: protocol.security,
            columns,
            prg,
            next_index: 0,
            next_block: 0,
            rows: Vec::new(),
            choices: Vec::new(),
            weights: vec![Block::ZERO; CHUNK],
            u,
        };
        Ok((core, tree))
    }

    /// One batch with these choices (rows in [`ReceiverCore::rows`] afterwards).
    pub fn extend<'a>(&'a mut self, choices: Choices<'a>) -> ExtendReceiver<'a> {
        self.extend_into(choices.len(), choices, &mut [])
    }

    /// One batch of `n` OTs with random choices: each row's least significant bit.
    pub fn extend_random(&mut self, n: usize) -> ExtendReceiver<'_> {
        self.extend_into(n, Choices::EMPTY, &mut [])
    }

    /// One batch of `n` OTs, the first `choices.len()` with these choices and the rest random,
    /// rows into `out` if it is not empty (whole chunks transposed straight into it).
    pub fn extend_into<'a>(
        &'a mut self,
        n: usize,
        choices: Choices<'a>,
        out: &'a mut [Block],
    ) -> ExtendReceiver<'a> {
        ExtendReceiver {
            core: self,
            n,
            choices,
            commitment: None,
            seed: Block::ZERO,
            out,
        }
    }

    /// The rows of the last batch that [`ReceiverCore::extend`] or
    /// [`ReceiverCore::extend_random`] made: t_j = q_j ⊕ r_j·Δ for its OTs, r_j the least
    /// significant bit. After [`ReceiverCore::extend_into`], only those past the whole chunks
    /// the caller's buffer took.
    pub fn rows(&self) -> &[Block] {
        &self.rows
    }

    /// Packs `choices` (bit j of the vector is bit j % 128 of block j / 128), padding with
    /// random bits up to `total` rows.
    fn pack(&mut self, choices: Choices<'_>, total: usize) {
        self.choices.resize(total / KAPPA, Block::ZERO);
        self.prg.fill_blocks(&mut self.choices);
        for (k, block) in self.choices.iter_mut().enumerate() {
            let given = choices.len().saturating_sub(k * KAPPA).min(KAPPA);
            if given == 0 {
                break;
            }
            let keep = if given == KAPPA {
                0
            } else {
                u128::MAX << given
            };
            *block = Block::new((block.as_u128() & keep) | choices.bits128(k * KAPPA));
        }
    }
}

/// One batch of extension, receiver side: sends the matrix chunk by chunk and, for KOS, runs
/// the coin toss and sends the check values. Its output is the index of the batch's first OT.
pub struct ExtendReceiver<'a> {
    core: &'a mut ReceiverCore,
    n: usize,
    /// The chosen bits of the first OTs; the rest are random.
    choices: Choices<'a>,
    commitment: Option<[u8; 32]>,
    seed: Block,
    /// The caller's buffer for the rows, or empty.
    out: &'a mut [Block],
}

impl ExtendReceiver<'_> {
    fn finish(&mut self) -> Next<u64> {
        copy_rest(self.out, &self.core.rows);
        let first = self.core.next_index;
        self.core.next_index += self.n as u64;
        Next::Done(first)
    }
}

impl Role for ExtendReceiver<'_> {
    type Incoming<'m> = ToReceiver<'m>;
    type Output = u64;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToReceiver<'_>>,
        out: &mut O,
    ) -> Result<Next<u64>, Error> {
        let core = &mut *self.core;
        match incoming {
            None => {
                let total = core.security.rows(self.n);
                core.pack(self.choices, total);
                core.rows.resize(total - spill(self.out), Block::ZERO);
                for start in (0..total).step_by(CHUNK) {
                    let rows = CHUNK.min(total - start);
                    let width = rows / KAPPA;
                    let r = &core.choices[start / KAPPA..start / KAPPA + width];
                    let u = &mut core.u[..width * core.columns.corrections()];
                    let t = target(self.out, &mut core.rows, start, rows);
                    core.columns.chunk(core.next_block, r, t, u);
                    core.next_block += width as u64;
                    out.post(&Matrix(Cow::Borrowed(u)))?;
                    transpose_squares(t)?;
                }
                Ok(if core.security == Security::Malicious {
                    // The sender's commitment was sent before the matrix: it binds the sender
                    // before it sees this party's seed.
                    Next::exact(COMMIT, 32)
                } else {
                    self.finish()
                })
            }
            Some(ToReceiver::Commit(Commit(c))) if self.commitment.is_none() => {
                self.commitment = Some(c);
                self.seed = core.prg.random_block();
                out.post(&Seed(self.seed))?;
                Ok(Next::exact(OPEN, 16))
            }
            Some(ToReceiver::Open(Open(theirs))) => {
                let commitment = self
                    .commitment
                    .ok_or_else(|| out_of_turn("OT extension", "a KOS opening"))?;
                if coin_commitment(theirs) != commitment {
                    return Err(Error::BadCommitment);
                }
                // x = Σ r_j·χ_j and t = Σ χ_j·t_j in one pass over χ.
                let mut chi = Prg::from_seed_block(self.seed ^ theirs);
                let (mut x, mut t) = (Block::ZERO, Block::ZERO);
                let total = core.security.rows(self.n);
                for start in (0..total).step_by(CHUNK) {
                    let len = CHUNK.min(total - start);
                    let rows = placed(self.out, &core.rows, start, len);
                    let packed = &core.choices[start / KAPPA..(start + len) / KAPPA];
                    let weights = &mut core.weights[..len];
                    chi.fill_blocks(weights);
                    t ^= gf128::inner_product(weights, rows);
                    for (w, &r) in weights.chunks_exact(KAPPA).zip(packed) {
                        for (bit, &w) in w.iter().enumerate() {
                            x ^= bit_mask((r.as_u128() >> bit) & 1 == 1) & w;
                        }
                    }
                }
                out.post(&Proof { x, t })?;
                Ok(self.finish())
            }
            Some(_) => Err(out_of_turn("OT extension", "a message")),
        }
    }
}

/// Setup after the base OTs, sender side: waits for the receiver's tree message and builds
/// the core.
pub struct SetupSender<'a> {
    /// The protocol.
    pub protocol: Protocol,
    /// Δ (its least significant bit is taken as 1).
    pub delta: Block,
    /// The base OT keys, chosen by [`SenderColumns::base_choices`].
    pub keys: &'a [Block],
    /// The core's PRG, taken when the core is built.
    pub prg: Option<Prg>,
}

impl Role for SetupSender<'_> {
    type Incoming<'m> = ToSender<'m>;
    type Output = SenderCore;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToSender<'_>>,
        _out: &mut O,
    ) -> Result<Next<SenderCore>, Error> {
        match (incoming, self.prg.take()) {
            (None, prg) => {
                self.prg = prg;
                Ok(Next::exact(TREE, 32 * self.keys.len()))
            }
            (Some(ToSender::Tree(Tree(tree))), Some(prg)) => Ok(Next::Done(SenderCore::new(
                self.protocol,
                self.delta,
                self.keys,
                &tree,
                prg,
            )?)),
            _ => Err(out_of_turn("OT extension setup", "a message")),
        }
    }
}

/// Setup after the base OTs, receiver side: posts the tree message.
pub struct SetupReceiver<'a>(pub &'a [Block]);

impl Role for SetupReceiver<'_> {
    type Incoming<'m> = ToReceiver<'m>;
    type Output = ();
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToReceiver<'_>>,
        out: &mut O,
    ) -> Result<Next<()>, Error> {
        if incoming.is_some() {
            return Err(out_of_turn("OT extension setup", "a message"));
        }
        out.post(&Tree(Cow::Borrowed(self.0)))?;
        Ok(Next::Done(()))
    }
}

/// Drawing OTs made ahead, sender side: waits for the flip bits and adds d_j·Δ to each row
/// in place.
pub(crate) struct AdjustSender<'a> {
    pub(crate) rows: &'a mut [Block],
    pub(crate) delta: Block,
}

impl Role for AdjustSender<'_> {
    type Incoming<'m> = ToSender<'m>;
    type Output = ();
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToSender<'_>>,
        _out: &mut O,
    ) -> Result<Next<()>, Error> {
        match incoming {
            None => Ok(Next::exact(FLIPS, self.rows.len().div_ceil(8))),
            Some(ToSender::Flips(Flips(d))) => {
                for (j, q) in self.rows.iter_mut().enumerate() {
                    *q ^= Block::mask(role::packed_bit(&d, j)) & self.delta;
                }
                Ok(Next::Done(()))
            }
            Some(_) => Err(out_of_turn("OT extension", "a message")),
        }
    }
}

/// Drawing OTs made ahead, receiver side: posts the flip bits chosen ⊕ random (the random
/// bits are the stock rows' least significant bits).
pub(crate) struct AdjustReceiver<'a> {
    pub(crate) stock: &'a [Block],
    pub(crate) chosen: Choices<'a>,
}

impl Role for AdjustReceiver<'_> {
    type Incoming<'m> = ToReceiver<'m>;
    type Output = ();
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToReceiver<'_>>,
        out: &mut O,
    ) -> Result<Next<()>, Error> {
        if incoming.is_some() {
            return Err(out_of_turn("OT extension", "a message"));
        }
        let flips = role::pack_bits(self.chosen.iter().zip(self.stock).map(|(c, r)| c ^ r.lsb()));
        out.post(&Flips(Cow::Owned(flips)))?;
        Ok(Next::Done(()))
    }
}

/// Hashes rows into random-OT keys: H(row_j, j) and, for the sender, H(row_j ⊕ Δ, j), with
/// the TCCR hash and the OT's index as tweak, one chunk at a time.
pub(crate) struct Hasher {
    hash: FixedKeyHash,
    h0: Vec<Block>,
    h1: Vec<Block>,
}

impl Hasher {
    pub(crate) fn new() -> Self {
        Hasher {
            hash: FixedKeyHash::default(),
            h0: vec![Block::ZERO; CHUNK],
            h1: vec![Block::ZERO; CHUNK],
        }
    }

    /// Hashes `rows` (at most a chunk) whose first OT has index `first`: into `h0`, and with
    /// `delta` XORed in into `h1`.
    fn hash(&mut self, rows: &[Block], first: u128, delta: Option<Block>) -> (&[Block], &[Block]) {
        let (n, first) = (rows.len(), Block::new(first));
        self.hash
            .tccr_counter(rows, Block::ZERO, first, &mut self.h0[..n]);
        if let Some(delta) = delta {
            self.hash
                .tccr_counter(rows, delta, first, &mut self.h1[..n]);
        }
        (&self.h0[..n], &self.h1[..n])
    }
}

/// Random OT, sender side, from correlated `rows` of OTs `first..`: (H(q_j, j), H(q_j ⊕ Δ, j)).
pub(crate) fn hash_pairs(
    hasher: &mut Hasher,
    rows: &[Block],
    first: u128,
    delta: Block,
    out: &mut [(Block, Block)],
) {
    for (c, (rows, chunk)) in rows.chunks(CHUNK).zip(out.chunks_mut(CHUNK)).enumerate() {
        let (h0, h1) = hasher.hash(rows, first + (c * CHUNK) as u128, Some(delta));
        for (o, (&x0, &x1)) in chunk.iter_mut().zip(h0.iter().zip(h1)) {
            *o = (x0, x1);
        }
    }
}

/// Random OT, receiver side, from correlated `rows` of OTs `first..`: H(t_j, j), straight
/// into `out` (as long as `rows`).
pub(crate) fn hash_rows(hasher: &Hasher, rows: &[Block], first: u128, out: &mut [Block]) {
    hasher
        .hash
        .tccr_counter(rows, Block::ZERO, Block::new(first), out);
}

/// Chosen-message OT, sender side, after correlated OTs: posts the masked messages chunk by
/// chunk.
pub struct MaskedSender<'a> {
    rows: &'a [Block],
    delta: Block,
    first: u64,
    messages: &'a [(Block, Block)],
    hasher: &'a mut Hasher,
    masked: Vec<Block>,
}

impl<'a> MaskedSender<'a> {
    /// Masks `messages` with the hashes of the correlated `rows` (q_j, q_j ⊕ Δ) of OTs
    /// `first..`.
    pub(crate) fn new(
        rows: &'a [Block],
        delta: Block,
        first: u64,
        messages: &'a [(Block, Block)],
        hasher: &'a mut Hasher,
    ) -> Self {
        MaskedSender {
            rows,
            delta,
            first,
            messages,
            hasher,
            masked: Vec::new(),
        }
    }
}

impl Role for MaskedSender<'_> {
    type Incoming<'m> = ToSender<'m>;
    type Output = ();
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToSender<'_>>,
        out: &mut O,
    ) -> Result<Next<()>, Error> {
        if incoming.is_some() {
            return Err(out_of_turn("OT extension", "a message"));
        }
        for (c, chunk) in self.messages.chunks(CHUNK).enumerate() {
            let rows = &self.rows[c * CHUNK..c * CHUNK + chunk.len()];
            let (h0, h1) = self.hasher.hash(
                rows,
                u128::from(self.first) + (c * CHUNK) as u128,
                Some(self.delta),
            );
            self.masked.resize(2 * chunk.len(), Block::ZERO);
            for ((pair, &(m0, m1)), (&x0, &x1)) in self
                .masked
                .chunks_exact_mut(2)
                .zip(chunk)
                .zip(h0.iter().zip(h1))
            {
                pair[0] = m0 ^ x0;
                pair[1] = m1 ^ x1;
            }
            out.post(&Masked(Cow::Borrowed(&self.masked)))?;
        }
        Ok(Next::Done(()))
    }
}

/// Chosen-message OT, receiver side, after correlated OTs: unmasks the chosen messages chunk
/// by chunk into `out`.
pub struct MaskedReceiver<'a> {
    rows: &'a [Block],
    first: u64,
    choices: Choices<'a>,
    out: &'a mut [Block],
    hasher: &'a mut Hasher,
    done: usize,
}

impl<'a> MaskedReceiver<'a> {
    /// Unmasks the messages `choices` selects with the hashes of the correlated `rows` of OTs
    /// `first..`.
    pub(crate) fn new(
        rows: &'a [Block],
        first: u64,
        choices: Choices<'a>,
        out: &'a mut [Block],
        hasher: &'a mut Hasher,
    ) -> Self {
        MaskedReceiver {
            rows,
            first,
            choices,
            out,
            hasher,
            done: 0,
        }
    }

    fn expect(&self) -> Next<()> {
        if self.done == self.out.len() {
            Next::Done(())
        } else {
            Next::exact(MESSAGES, 32 * CHUNK.min(self.out.len() - self.done))
        }
    }
}

impl Role for MaskedReceiver<'_> {
    type Incoming<'m> = ToReceiver<'m>;
    type Output = ();
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToReceiver<'_>>,
        _out: &mut O,
    ) -> Result<Next<()>, Error> {
        match incoming {
            None => Ok(self.expect()),
            Some(ToReceiver::Masked(Masked(masked))) => {
                let n = masked.len() / 2;
                let at = self.done;
                let (h, _) = self.hasher.hash(
                    &self.rows[at..at + n],
                    u128::from(self.first) + at as u128,
                    None,
                );
                for ((o, pair), (&h, bit)) in self.out[at..at + n]
                    .iter_mut()
                    .zip(masked.chunks_exact(2))
                    .zip(h.iter().zip(self.choices.slice(at..at + n).iter()))
                {
                    // Branch-free selection of the chosen pair element.
                    *o = h ^ pair[0] ^ (bit_mask(bit) & (pair[0] ^ pair[1]));
                }
                self.done += n;
                Ok(self.expect())
            }
            Some(_) => Err(out_of_turn("OT extension", "a message")),
        }
    }
}

/// An error unless `got` equals `want`: "`what`: `got` `unit` for `want`".
pub(crate) fn check_len(what: &str, unit: &str, got: usize, want: usize) -> Result<(), Error> {
    if got == want {
        Ok(())
    } else {
        Err(Error::Usage(format!("{what}: {got} {unit} for {want}")))
    }
}

/// Rows of OTs made ahead of use (random choices, in the receiver's low bits) and how many
/// are drawn: the same on both sides.
#[derive(Default)]
pub(crate) struct Stock {
    rows: Vec<Block>,
    used: usize,
}

impl Stock {
    /// The next rows, at most `n`, marked drawn.
    pub(crate) fn draw(&mut self, n: usize) -> &[Block] {
        let k = n.min(self.rows.len() - self.used);
        self.used += k;
        &self.rows[self.used - k..self.used]
    }

    /// Drops the drawn rows and appends `n` more, batch by batch: `extend(len, rows)` runs
    /// one batch of `len` OTs and appends its rows.
    pub(crate) fn refill(
        &mut self,
        n: usize,
        mut extend: impl FnMut(usize, &mut Vec<Block>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.rows.drain(..self.used);
        self.used = 0;
        self.rows.reserve(n);
        for part in (0..n).step_by(BATCH) {
            extend(BATCH.min(n - part), &mut self.rows)?;
        }
        Ok(())
    }
}

/// The sender of an extension over a channel: holds Δ, its core and the protocol instance's
/// space. Implements the sender side of every OT trait.
pub struct ExtensionSender {
    core: SenderCore,
    space: Space,
    /// Rows q_j of OTs made ahead of use.
    stock: Stock,
}

impl std::fmt::Debug for ExtensionSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionSender")
            .field("security", &self.core.security)
            .field("next_index", &self.core.next_index)
            .finish_non_exhaustive()
    }
}

impl ExtensionSender {
    /// Runs the base OTs (as their receiver) and the setup with the peer's
    /// [`ExtensionReceiver::setup`], taking two spaces from `spaces` (base OT, extension) as
    /// the peer does.
    pub fn setup<C: Channel + ?Sized>(
        channel: &mut C,
        spaces: &mut Spaces,
        protocol: Protocol,
        prg: Prg,
    ) -> Result<Self, Error> {
        ExtensionSender::setup_with_delta(channel, spaces, protocol, None, prg)
    }

    /// [`ExtensionSender::setup`] with the global Δ `delta` (its least significant bit taken as
    /// 1), or a random one for `None`: for a party whose Δ must be the same toward every peer
    /// (n-party authenticated garbling, WRK17b).
    pub fn setup_with_delta<C: Channel + ?Sized>(
        channel: &mut C,
        spaces: &mut Spaces,
        protocol: Protocol,
        delta: Option<Block>,
        mut prg: Prg,
    ) -> Result<Self, Error> {
        let (base_space, space) = (spaces.allocate()?, spaces.allocate()?);
        let delta = delta.unwrap_or_else(|| prg.random_block()).with_lsb(true);
        let choices = SenderColumns::base_choices(protocol.k(), delta);
        let base_prg = Prg::from_seed_block(prg.random_block());
        let keys = base::receive_random(channel, base_space, &choices, base_prg)?;
        let mut setup = SetupSender {
            protocol,
            delta,
            keys: &keys,
            prg: Some(prg),
        };
        Ok(ExtensionSender {
            core: role::drive(&mut setup, channel, space)?,
            space,
            stock: Stock::default(),
        })
    }

    /// Fills `out` with OTs made ahead, as they are, then fresh ones; returns how many were
    /// made ahead.
    fn draw_for(&mut self, channel: &mut dyn Channel, out: &mut [Block]) -> Result<usize, Error> {
        let ahead = self.stock.draw(out.len());
        let (made, fresh) = out.split_at_mut(ahead.len());
        made.copy_from_slice(ahead);
        for part in fresh.chunks_mut(BATCH) {
            let mut extend = self.core.extend_into(part.len(), part);
            role::drive(&mut extend, channel, self.space)?;
        }
        Ok(made.len())
    }
}

impl ProviderSender for ExtensionSender {
    fn delta(&self) -> Block {
        self.core.delta
    }

    fn space(&self) -> Space {
        self.space
    }

    fn draw(&mut self, channel: &mut dyn Channel, out: &mut [Block]) -> Result<(), Error> {
        self.draw_for(channel, out).map(|_| ())
    }

    /// OTs made ahead (adjusted), then fresh ones, whose choices the receiver puts into its
    /// corrections.
    fn draw_chosen(
        &mut self,
        channel: &mut dyn Channel,
        out: &mut [Block],
    ) -> Result<usize, Error> {
        self.draw_for(channel, out)
    }

    fn prepare(&mut self, channel: &mut dyn Channel, n: usize) -> Result<(), Error> {
        let (core, space) = (&mut self.core, self.space);
        self.stock.refill(n, |len, rows| {
            role::drive(&mut core.extend(len), channel, space)?;
            rows.extend_from_slice(&core.rows[..len]);
            Ok(())
        })
    }
}

/// The receiver of an extension over a channel: holds its core and the protocol instance's
/// space. Implements the receiver side of every OT trait.
pub struct ExtensionReceiver {
    core: ReceiverCore,
    space: Space,
    /// Rows t_j of OTs made ahead of use.
    stock: Stock,
}

impl std::fmt::Debug for ExtensionReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionReceiver")
            .field("security", &self.core.security)
            .field("next_index", &self.core.next_index)
            .finish_non_exhaustive()
    }
}

impl ExtensionReceiver {
    /// Runs the base OTs (as their sender) and the setup with the peer's
    /// [`ExtensionSender::setup`], taking two spaces from `spaces` (base OT, extension) as the
    /// peer does.
    pub fn setup<C: Channel + ?Sized>(
        channel: &mut C,
        spaces: &mut Spaces,
        protocol: Protocol,
        mut prg: Prg,
    ) -> Result<Self, Error> {
        let (base_space, space) = (spaces.allocate()?, spaces.allocate()?);
        let base_prg = Prg::from_seed_block(prg.random_block());
        let pairs = base::send_random(channel, base_space, KAPPA - 1, base_prg)?;
        let (core, tree) = ReceiverCore::new(protocol, &pairs, prg)?;
        role::drive(&mut SetupReceiver(&tree), channel, space)?;
        Ok(ExtensionReceiver {
            core,
            space,
            stock: Stock::default(),
        })
    }

    /// Fills `out` with OTs made ahead, as they are, then fresh ones with `choices` (random
    /// where `choices` is shorter); returns how many were made ahead.
    fn draw_for(
        &mut self,
        channel: &mut dyn Channel,
        choices: Choices<'_>,
        out: &mut [Block],
    ) -> Result<usize, Error> {
        let ahead = self.stock.draw(out.len());
        let k = ahead.len();
        let (made, fresh) = out.split_at_mut(k);
        made.copy_from_slice(ahead);
        let chosen = choices.skip(k);
        for (j, part) in fresh.chunks_mut(BATCH).enumerate() {
            let c = chosen.skip(j * BATCH).take(part.len());
            let mut extend = self.core.extend_into(part.len(), c, part);
            role::drive(&mut extend, channel, self.space)?;
        }
        Ok(k)
    }
}

impl ProviderReceiver for ExtensionReceiver {
    fn flow(&self) -> Flow {
        match self.core.security {
            // The corrections u are the only message.
            Security::SemiHonest => Flow::ReceiverToSender,
            Security::Malicious => Flow::Both,
        }
    }

    fn space(&self) -> Space {
        self.space
    }

    fn draw(&mut self, channel: &mut dyn Channel, out: &mut [Block]) -> Result<(), Error> {
        self.draw_for(channel, Choices::EMPTY, out).map(|_| ())
    }

    /// OTs made ahead (to be adjusted), then fresh ones with `choices` in the corrections.
    fn draw_chosen(
        &mut self,
        channel: &mut dyn Channel,
        choices: Choices<'_>,
        out: &mut [Block],
    ) -> Result<usize, Error> {
        self.draw_for(channel, choices, out)
    }

    fn prepare(&mut self, channel: &mut dyn Channel, n: usize) -> Result<(), Error> {
        let (core, space) = (&mut self.core, self.space);
        self.stock.refill(n, |len, rows| {
            role::drive(&mut core.extend_random(len), channel, space)?;
            rows.extend_from_slice(&core.rows[..len]);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests;
