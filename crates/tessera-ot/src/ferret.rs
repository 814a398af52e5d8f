//! Ferret silent OT (Yang, Weng, Lan, Zhang, Wang, "Ferret: Fast Extension for coRRElated
//! oT with small communication", CCS 2020), semi-honest or with its consistency check, as roles
//! without I/O ([`IterateSender`], [`IterateReceiver`]) and providers ([`FerretSender`],
//! [`FerretReceiver`]) that implement every OT trait of [`crate::traits`].
//!
//! One iteration turns M = k + t·h (+128 with the check) random correlated OTs into n = t·2^h
//! (§4-§6):
//! - **MPCOT over regular noise** (§4, Fig. 6): the n positions form t bins of 2^h; per bin the
//!   sender expands a GGM tree from a fresh root ([`crate::ggm`]), and for each level i sends
//!   both level sums masked with the TCCR hash of one base COT, K_i^0 ⊕ H(q) and
//!   K_i^1 ⊕ H(q ⊕ Δ), plus c = Δ ⊕ Σ_y v_y. The receiver opens the sum its random choice bit
//!   r_i selects, which defines the punctured point's bit i as ¬r_i (so it sends nothing), rebuilds
//!   every leaf but that point α and sets w_α = c ⊕ Σ_{y≠α} w_y = v_α ⊕ Δ (SPCOT, §4.1). Leaves
//!   have their least significant bit cleared, so w's low bit is the noise bit e.
//! - **LPN encoding** (§3, §6.1): both sides add A·x for the public local linear code of
//!   [`lpn`] (10 ones per row), x being k more base COTs: z = v ⊕ A·q and z ⊕ (e ⊕ A·u)·Δ. The
//!   outputs are correlated OTs whose choice bits e ⊕ A·u are pseudo-random under LPN with
//!   regular noise (Δ's low bit is 1, so the receiver's low bit is its choice).
//! - **Bootstrapping** (§6.2): the last M outputs of every iteration are the next iteration's
//!   base COTs; the rest are handed out. The very first base COTs come from SoftSpoken OT
//!   extension ([`crate::extension`], semi-honest or with the KOS check as the security asks),
//!   for a smaller set-up iteration whose outputs seed the main ones.
//! - **Consistency check** (§5, Fig. 7) against a malicious sender, which could otherwise send
//!   level sums or c of different trees so that the receiver's outputs are wrong in a pattern of
//!   its choosing: with χ_j ∈ GF(2^128) drawn from the hash of the transcript so far (Fiat-Shamir
//!   per group of trees, as EMP-OT does), the sender computes V = Σ χ_j·v_j and the receiver
//!   W = Σ χ_j·w_j and x* = Σ_j e_j·χ_j; 128 more base COTs turn x* into shares of x*·Δ after
//!   the receiver sends x* ⊕ its random choices (one block); the sender sends H(V ⊕ y*) and the
//!   receiver checks it equals H(W ⊕ z*). A failed check ends the iteration before any output
//!   is handed out. The check leaks at most a few bits of the noise positions (selective
//!   failure), which the paper's LPN parameters allow for.
//!
//! Memory is one iteration: n output blocks, M reserved blocks, and the scratch of one group
//! of trees (about 2^15 leaves). An iteration writes its rows straight into the caller's
//! buffer when that has room for all of them, so a large request is never copied; only a
//! request's tail passes through the iteration buffer.
//!
//! **Parameters** ([`Params::PAPER`], Table 2 of the paper, regular noise): the main iteration
//! n = 10,805,248 (t = 1,319 bins of 2^13), k = 589,760; the set-up iteration n = 649,728
//! (t = 1,269 bins of 2^9), k = 36,288. The paper estimates 128-bit computational security for
//! both against the known attacks on LPN with regular noise (§6.1, with s = 40 statistical
//! security for the check). Later algebraic and ISD analyses of regular noise (Briaud and
//! Øygarden, EUROCRYPT 2023; Liu, Wang, Yang, Yu, 2024) lowered such estimates by some bits;
//! EMP-OT now uses larger t and k = 2^19 at h = 13. [`Params`] takes any t, h, k.

pub mod lpn;

use crate::bits::{bit_mask, low_bits};
use crate::extension::{self, ExtensionReceiver, ExtensionSender, Protocol, Security};
use crate::flavours::{ProviderReceiver, ProviderSender};
use crate::ggm::{Ggm, Leaves};
use crate::traits::Flow;
use crate::{Error, out_of_turn};
use lpn::Lpn;
use sha2::{Digest as _, Sha256};
use std::borrow::Cow;
use subtle::ConstantTimeEq;
use tessera_core::{Block, Prg, gf128};
use tessera_net::role::{self, Decode, Encode, Next, Outbox, Role};
use tessera_net::{Channel, DecodeError, Kind, Space, Spaces};

/// A group of trees' masked level sums and c values.
pub const TREES: Kind = Kind::new(0x28, "ferret tree sums");
/// The receiver's check choices x* ⊕ r.
pub const CHOICES: Kind = Kind::new(0x29, "ferret check choices");
/// The sender's check digest.
pub const DIGEST: Kind = Kind::new(0x2a, "ferret check digest");

/// Base COTs the consistency check takes (x* has 128 bits).
const CHECK_COTS: usize = 128;
/// Leaves expanded per group of trees: one message, hashed, checked and LPN-encoded while in
/// cache.
const GROUP_LEAVES: usize = 1 << 15;
/// The largest iteration: 2^27 outputs (2 GiB per party).
const MAX_N: usize = 1 << 27;

/// One iteration's LPN with regular noise: t bins of 2^`depth` positions (n = t·2^depth
/// outputs) and a secret of k blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LpnParams {
    /// Noise weight: bins, one GGM tree each.
    pub t: usize,
    /// log2 of the bin size: each tree's depth.
    pub depth: usize,
    /// The LPN secret's length.
    pub k: usize,
}

impl LpnParams {
    /// Outputs: n = t·2^depth.
    pub const fn n(self) -> usize {
        self.t << self.depth
    }

    /// Base COTs an iteration takes: the check's 128 (malicious only), k for the LPN secret
    /// and `depth` per tree, laid out in that order.
    pub const fn reserve(self, security: Security) -> usize {
        let check = match security {
            Security::SemiHonest => 0,
            Security::Malicious => CHECK_COTS,
        };
        check + self.k + self.t * self.depth
    }

    /// Trees per group (per message).
    fn trees_per_group(self) -> usize {
        (GROUP_LEAVES >> self.depth).max(1)
    }

    /// The reserve's parts: check COTs, LPN secret, tree COTs.
    fn split(self, security: Security, reserve: &[Block]) -> (&[Block], &[Block], &[Block]) {
        let check = self.reserve(security) - self.k - self.t * self.depth;
        let (c, rest) = reserve.split_at(check);
        let (x, trees) = rest.split_at(self.k);
        (c, x, trees)
    }
}

/// Ferret's parameters: the main iterations' and the set-up iteration's, which turns base COTs
/// from OT extension into the main iteration's reserve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Every iteration after the first.
    pub main: LpnParams,
    /// The first iteration.
    pub setup: LpnParams,
}

impl Params {
    /// Table 2 of the paper (regular noise): main n = 10,805,248, t = 1,319, k = 589,760;
    /// set-up n = 649,728, t = 1,269, k = 36,288.
    pub const PAPER: Params = Params {
        main: LpnParams {
            t: 1319,
            depth: 13,
            k: 589_760,
        },
        setup: LpnParams {
            t: 1269,
            depth: 9,
            k: 36_288,
        },
    };

    /// EMP-OT's current parameters (its `tuning.h`, 2026), chosen with the LPN estimator for
    /// about 128-bit security against the published attacks on regular LPN, the hybrid attack
    /// binding: main iterations as its `ferret_b12` (t = 1,520 bins of 2^12, k = 2^18:
    /// n = 6,225,920), the set-up iteration as its `ferret_b10` (t = 850 bins of 2^10,
    /// k = 2^16: n = 870,400). The secret (4 MiB) stays in cache where the paper's (9.4 MiB)
    /// does not: `tessera bench ot --protocol ferret --flavour rcot --lpn emp-b12|paper` gave
    /// 29.4 and 12.5 M OT/s (medians of 5 alternating runs, 2-core Zen 3 guest).
    pub const EMP_B12: Params = Params {
        main: LpnParams {
            t: 1520,
            depth: 12,
            k: 1 << 18,
        },
        setup: LpnParams {
            t: 850,
            depth: 10,
            k: 1 << 16,
        },
    };

    /// EMP-OT's `ferret_b11` (its `tuning.h`, 2026; the same estimator and security level as
    /// [`Params::EMP_B12`]): main iterations of t = 1,170 bins of 2^11 with k = 2^17
    /// (n = 2,396,160), the set-up iteration as EMP's `ferret_b10`. The secret is 2 MiB.
    pub const EMP_B11: Params = Params {
        main: LpnParams {
            t: 1170,
            depth: 11,
            k: 1 << 17,
        },
        setup: LpnParams {
            t: 850,
            depth: 10,
            k: 1 << 16,
        },
    };

    /// EMP-OT's `ferret_b10` for every iteration: t = 850 bins of 2^10 with k = 2^16
    /// (n = 870,400), bootstrapped straight from OT extension as EMP does. The secret is
    /// 1 MiB, the size of a Zen 4 or Zen 5 core's L2, so the LPN encoding's random loads mostly
    /// hit L2 where b12's 4 MiB go to L3: `tessera bench ot --protocol ferret --flavour rcot
    /// --lpn emp-b10|emp-b11|emp-b12` gave 139.9, 131.4 and 108.2 M OT/s (medians of 5
    /// alternating runs, 2-core Zen 5 guest).
    pub const EMP_B10: Params = Params {
        main: LpnParams {
            t: 850,
            depth: 10,
            k: 1 << 16,
        },
        setup: LpnParams {
            t: 850,
            depth: 10,
            k: 1 << 16,
        },
    };

    /// Tiny parameters for tests that must cross many iterations quickly: iterations of 2^14
    /// OTs (t = 16 bins of 2^10, k = 2,000; set-up t = 8 bins of 2^9, k = 1,000). Far from
    /// any security level: never for use.
    pub const INSECURE_SMALL: Params = Params {
        main: LpnParams {
            t: 16,
            depth: 10,
            k: 2000,
        },
        setup: LpnParams {
            t: 8,
            depth: 9,
            k: 1000,
        },
    };

    /// An error unless every iteration yields more than it takes and fits in memory.
    pub fn validate(self, security: Security) -> Result<(), Error> {
        for (name, p) in [("main", self.main), ("set-up", self.setup)] {
            let sizes = p.t.checked_shl(p.depth as u32).map(|n| n >> p.depth == p.t);
            if p.t == 0
                || !(1..=MAX_N).contains(&p.k)
                || !(1..=20).contains(&p.depth)
                || sizes != Some(true)
                || p.n() > MAX_N
            {
                return Err(Error::Usage(format!(
                    "Ferret {name} parameters {p:?}: need t ≥ 1, 1 ≤ k ≤ 2^27, depth 1..=20 and \
                     n ≤ 2^27"
                )));
            }
        }
        let m = self.main.reserve(security);
        if self.main.n() <= m || self.setup.n() < m {
            return Err(Error::Usage(format!(
                "Ferret parameters {self:?}: an iteration must yield more than the {m} OTs the \
                 next one takes"
            )));
        }
        Ok(())
    }

    /// Outputs handed out per main iteration.
    pub fn yield_per_iteration(self, security: Security) -> usize {
        self.main.n() - self.main.reserve(security)
    }
}

/// A group of trees: per tree, 2·depth masked level sums (level 1 first, left then right)
/// and c.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trees<'a>(pub Cow<'a, [Block]>);
/// The receiver's check choices x* ⊕ r.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choices(pub Block);
/// The sender's check digest H(V ⊕ y*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Digest(pub [u8; 32]);

impl Encode for Trees<'_> {
    const KIND: Kind = TREES;
    fn encode<'a>(&'a self, _scratch: &'a mut Vec<u8>) -> &'a [u8] {
        bytemuck::cast_slice(&self.0)
    }
}

impl Encode for Choices {
    const KIND: Kind = CHOICES;
    fn encode<'a>(&'a self, scratch: &'a mut Vec<u8>) -> &'a [u8] {
        scratch.clear();
        scratch.extend_from_slice(&self.0.to_bytes());
        scratch
    }
}

impl Encode for Digest {
    const KIND: Kind = DIGEST;
    fn encode<'a>(&'a self, _scratch: &'a mut Vec<u8>) -> &'a [u8] {
        &self.0
    }
}

/// What the Ferret sender receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToSender {
    /// The check choices.
    Choices(Choices),
}

impl Decode<'_> for ToSender {
    fn decode(kind: u8, bytes: &[u8]) -> Result<Self, DecodeError> {
        match kind {
            k if k == CHOICES.id => Ok(ToSender::Choices(Choices(role::block(bytes)?))),
            k => Err(DecodeError(format!(
                "kind {k:#04x} is not a Ferret sender's message"
            ))),
        }
    }
}

/// What the Ferret receiver receives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToReceiver<'a> {
    /// A group of trees.
    Trees(Trees<'a>),
    /// The check digest.
    Digest(Digest),
}

impl<'a> Decode<'a> for ToReceiver<'a> {
    fn decode(kind: u8, bytes: &'a [u8]) -> Result<Self, DecodeError> {
        Ok(match kind {
            k if k == TREES.id => ToReceiver::Trees(Trees(role::blocks(bytes)?)),
            k if k == DIGEST.id => ToReceiver::Digest(Digest(role::array(bytes)?)),
            k => {
                return Err(DecodeError(format!(
                    "kind {k:#04x} is not a Ferret receiver's message"
                )));
            }
        })
    }
}

/// What both sides keep across iterations: parameters, the reserve and the scratch of one group
/// of trees.
struct State {
    params: Params,
    security: Security,
    /// Iterations done; the first uses the set-up parameters.
    iteration: u64,
    /// The base COTs of the next iteration.
    reserve: Vec<Block>,
    ggm: Ggm,
    /// The set-up and the main iterations' encoders.
    lpn: [Lpn; 2],
    /// The TCCR hash of the tree COTs, and its outputs for a group: the sender's pairs
    /// (H(q), H(q ⊕ Δ)), the receiver's H(t).
    hasher: extension::Hasher,
    pairs: Vec<(Block, Block)>,
    hashed: Vec<Block>,
    /// A group's message, and its check weights χ.
    message: Vec<Block>,
    chi: Vec<Block>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ferret")
            .field("params", &self.params)
            .field("security", &self.security)
            .field("iteration", &self.iteration)
            .finish_non_exhaustive()
    }
}

impl State {
    fn new(params: Params, security: Security, reserve: Vec<Block>) -> Self {
        State {
            params,
            security,
            iteration: 0,
            reserve,
            ggm: Ggm::default(),
            lpn: [Lpn::new(params.setup.k), Lpn::new(params.main.k)],
            hasher: extension::Hasher::new(),
            pairs: Vec::new(),
            hashed: Vec::new(),
            message: Vec::new(),
            chi: Vec::new(),
        }
    }

    /// This iteration's parameters.
    fn current(&self) -> LpnParams {
        if self.iteration == 0 {
            self.params.setup
        } else {
            self.params.main
        }
    }

    /// Blocks of a group's message.
    fn message_len(p: LpnParams, trees: usize) -> usize {
        trees * (2 * p.depth + 1)
    }

    /// The hash tweak of tree COT `slot` of this iteration's reserve: the top bit set, apart
    /// from the output indices that the OT flavours use as tweaks.
    fn tweak(&self, slot: usize) -> u128 {
        (1 << 127) | (u128::from(self.iteration) << 64) | slot as u128
    }

    /// y ← y ⊕ A·x on the rows `range` of this iteration (parameters `p`), held in `y`, x the
    /// reserve's LPN part.
    fn encode(&mut self, p: LpnParams, y: &mut [Block], range: std::ops::Range<usize>) {
        let (_, x, _) = p.split(self.security, &self.reserve);
        let lpn = &mut self.lpn[usize::from(self.iteration > 0)];
        lpn.encode(x, range.start as u64, &mut y[range]);
    }

    /// The weights χ of a group's `len` leaves, from the transcript so far.
    fn weights<'a>(chi: &'a mut Vec<Block>, transcript: &Sha256, len: usize) -> &'a [Block] {
        let digest = transcript.clone().finalize();
        let mut seed = [0u8; 16];
        seed.copy_from_slice(&digest[..16]);
        chi.resize(len, Block::ZERO);
        Prg::from_seed_block(Block::from_bytes(seed)).fill_blocks(chi);
        chi
    }

    /// Ends an iteration whose rows are `rows`: its last M rows become the next reserve;
    /// returns how many precede them, the new OTs.
    fn finish(&mut self, rows: &[Block]) -> usize {
        let n = self.current().n();
        let m = self.params.main.reserve(self.security);
        self.reserve.resize(m, Block::ZERO);
        self.reserve.copy_from_slice(&rows[n - m..n]);
        self.iteration += 1;
        n - m
    }

    /// Checks that `rows` can hold this iteration.
    fn check_rows(&self, rows: &[Block]) {
        let n = self.current().n();
        assert!(
            rows.len() >= n,
            "Ferret: {} rows for an iteration of {n}",
            rows.len()
        );
    }
}

/// The 128 base COTs of the check as one GF(2^128) element: Σ_l X^l·b_l, X^l being the block
/// with bit l set.
fn pack(blocks: &[Block]) -> Block {
    let powers: [Block; CHECK_COTS] = std::array::from_fn(|l| Block::new(1 << l));
    gf128::inner_product(&powers, blocks)
}

/// The digest of a check value, in a domain of its own.
fn digest(v: Block) -> [u8; 32] {
    tessera_core::digest::tagged(b"tessera-ot ferret check", &[&v.to_bytes()])
}

/// The Ferret sender's state across iterations: Δ and the shared state.
pub struct SenderCore {
    delta: Block,
    prg: Prg,
    state: State,
    roots: Vec<Block>,
    sums: Vec<[Block; 2]>,
}

impl SenderCore {
    /// The core for `params` (validated), with Δ (least significant bit taken as 1) and the
    /// set-up iteration's base COTs q_j.
    pub fn new(
        params: Params,
        security: Security,
        delta: Block,
        reserve: Vec<Block>,
        prg: Prg,
    ) -> Result<Self, Error> {
        params.validate(security)?;
        extension::check_len(
            "Ferret set-up",
            "base COTs",
            reserve.len(),
            params.setup.reserve(security),
        )?;
        Ok(SenderCore {
            delta: delta.with_lsb(true),
            prg,
            state: State::new(params, security, reserve),
            roots: Vec::new(),
            sums: Vec::new(),
        })
    }

    /// Rows the next iteration writes: [`Params::main`]'s n, or the set-up's for the first.
    pub fn rows(&self) -> usize {
        self.state.current().n()
    }

    /// One iteration into `rows` (at least [`SenderCore::rows`] blocks); its output is the
    /// number of new OTs q_j (least significant bit 0), the first rows. The rows after them
    /// are the next iteration's reserve, kept by the core.
    ///
    /// # Panics
    /// If `rows` is too short.
    pub fn iterate<'a>(&'a mut self, rows: &'a mut [Block]) -> IterateSender<'a> {
        self.state.check_rows(rows);
        IterateSender {
            core: self,
            rows,
            transcript: Sha256::new(),
            check: Block::ZERO,
            sent: false,
        }
    }

    /// Trees `first..first + trees` of this iteration: leaves into `rows`, the message into
    /// `state.message`.
    fn group(&mut self, p: LpnParams, first: usize, trees: usize, rows: &mut [Block]) {
        let d = p.depth;
        let delta = self.delta;
        self.roots.resize(trees, Block::ZERO);
        self.prg.fill_blocks(&mut self.roots);
        self.sums.resize(trees * d, [Block::ZERO; 2]);
        let state = &mut self.state;
        let tweak = state.tweak(first * d);
        let leaves = &mut rows[first << d..(first + trees) << d];
        state.ggm.expand(&self.roots, d, leaves, &mut self.sums);
        // q and q ⊕ Δ of the trees' base COTs, hashed.
        let (_, _, tree_cots) = p.split(state.security, &state.reserve);
        let q = &tree_cots[first * d..(first + trees) * d];
        state.pairs.resize(q.len(), (Block::ZERO, Block::ZERO));
        extension::hash_pairs(&mut state.hasher, q, tweak, delta, &mut state.pairs);
        state
            .message
            .resize(State::message_len(p, trees), Block::ZERO);
        for (((msg, tree), sums), hashes) in state
            .message
            .chunks_exact_mut(2 * d + 1)
            .zip(leaves.chunks_exact_mut(1 << d))
            .zip(self.sums.chunks_exact(d))
            .zip(state.pairs.chunks_exact(d))
        {
            for (i, (&[k0, k1], &(x0, x1))) in sums.iter().zip(hashes).enumerate() {
                msg[2 * i] = k0 ^ x0;
                msg[2 * i + 1] = k1 ^ x1;
            }
            let mut c = delta;
            for leaf in tree.iter_mut() {
                *leaf = leaf.with_lsb(false);
                c ^= *leaf;
            }
            msg[2 * d] = c;
        }
    }
}

/// One Ferret iteration, sender side: posts the trees group by group (each checked and
/// LPN-encoded while in cache) and, with the check, answers the receiver's choices with its
/// digest. Its output is the number of new OTs.
pub struct IterateSender<'a> {
    core: &'a mut SenderCore,
    rows: &'a mut [Block],
    transcript: Sha256,
    /// V = Σ χ_j·v_j.
    check: Block,
    sent: bool,
}

impl Role for IterateSender<'_> {
    type Incoming<'m> = ToSender;
    type Output = usize;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToSender>,
        out: &mut O,
    ) -> Result<Next<usize>, Error> {
        let malicious = self.core.state.security == Security::Malicious;
        match incoming {
            None if !self.sent => {
                let p = self.core.state.current();
                let per = p.trees_per_group();
                for first in (0..p.t).step_by(per) {
                    let trees = per.min(p.t - first);
                    self.core.group(p, first, trees, self.rows);
                    let state = &mut self.core.state;
                    out.post(&Trees(Cow::Borrowed(&state.message)))?;
                    let range = first << p.depth..(first + trees) << p.depth;
                    if malicious {
                        self.transcript
                            .update(bytemuck::cast_slice::<Block, u8>(&state.message));
                        let chi = State::weights(&mut state.chi, &self.transcript, range.len());
                        self.check ^= gf128::inner_product(chi, &self.rows[range.clone()]);
                    }
                    state.encode(p, self.rows, range);
                }
                self.sent = true;
                out.flush()?;
                Ok(if malicious {
                    Next::exact(CHOICES, 16)
                } else {
                    Next::Done(self.core.state.finish(self.rows))
                })
            }
            Some(ToSender::Choices(Choices(x))) if self.sent && malicious => {
                let state = &mut self.core.state;
                let (check, _, _) = state.current().split(state.security, &state.reserve);
                let delta = self.core.delta;
                let y: [Block; CHECK_COTS] = std::array::from_fn(|l| {
                    check[l] ^ (bit_mask((x.as_u128() >> l) & 1 == 1) & delta)
                });
                out.post(&Digest(digest(self.check ^ pack(&y))))?;
                Ok(Next::Done(state.finish(self.rows)))
            }
            _ => Err(out_of_turn("Ferret", "a message")),
        }
    }
}

/// The Ferret receiver's state across iterations.
pub struct ReceiverCore {
    state: State,
    points: Vec<u64>,
    known: Vec<Block>,
    /// Each tree's c.
    sums: Vec<Block>,
}

impl ReceiverCore {
    /// The core for `params` (validated), with the set-up iteration's base COTs
    /// t_j = q_j ⊕ r_j·Δ (r_j the least significant bit).
    pub fn new(params: Params, security: Security, reserve: Vec<Block>) -> Result<Self, Error> {
        params.validate(security)?;
        extension::check_len(
            "Ferret set-up",
            "base COTs",
            reserve.len(),
            params.setup.reserve(security),
        )?;
        Ok(ReceiverCore {
            state: State::new(params, security, reserve),
            points: Vec::new(),
            known: Vec::new(),
            sums: Vec::new(),
        })
    }

    /// Rows the next iteration writes: [`Params::main`]'s n, or the set-up's for the first.
    pub fn rows(&self) -> usize {
        self.state.current().n()
    }

    /// One iteration into `rows` (at least [`ReceiverCore::rows`] blocks); its output is the
    /// number of new OTs q_j ⊕ e_j·Δ, the choice e_j as least significant bit, the first rows.
    /// The rows after them are the next iteration's reserve, kept by the core.
    ///
    /// # Panics
    /// If `rows` is too short.
    pub fn iterate<'a>(&'a mut self, rows: &'a mut [Block]) -> IterateReceiver<'a> {
        self.state.check_rows(rows);
        IterateReceiver {
            core: self,
            rows,
            next_tree: 0,
            transcript: Sha256::new(),
            check: Block::ZERO,
            weight: Block::ZERO,
        }
    }

    /// Rebuilds trees `first..` from their message: leaves into `rows`.
    fn group(&mut self, p: LpnParams, first: usize, message: &[Block], rows: &mut [Block]) {
        let d = p.depth;
        let trees = message.len() / (2 * d + 1);
        let state = &mut self.state;
        let tweak = state.tweak(first * d);
        let (_, _, tree_cots) = p.split(state.security, &state.reserve);
        let t = &tree_cots[first * d..(first + trees) * d];
        let h = &mut state.hashed;
        h.resize(t.len(), Block::ZERO);
        extension::hash_rows(&state.hasher, t, tweak, h);
        // The sum each random choice opens is off the path: the point's bit is its negation.
        self.points.clear();
        self.known.clear();
        for (msg, (t, h)) in message
            .chunks_exact(2 * d + 1)
            .zip(t.chunks_exact(d).zip(h.chunks_exact(d)))
        {
            let mut point = 0u64;
            for (i, (&t, &h)) in t.iter().zip(h).enumerate() {
                let r = t.lsb();
                let (m0, m1) = (msg[2 * i], msg[2 * i + 1]);
                self.known.push(m0 ^ (bit_mask(r) & (m0 ^ m1)) ^ h);
                point |= u64::from(!r) << i;
            }
            self.points.push(point);
        }
        // Leaves with their low bit cleared, and w_α = c ⊕ Σ_{y≠α} w_y, as the last level is
        // written.
        self.sums.clear();
        self.sums
            .extend(message.chunks_exact(2 * d + 1).map(|msg| msg[2 * d]));
        let leaves = &mut rows[first << d..(first + trees) << d];
        let finish = Leaves {
            mask: Block::ONES.with_lsb(false),
            sums: Some(&self.sums),
        };
        state
            .ggm
            .puncture_with(&self.points, &self.known, d, leaves, finish);
    }
}

/// One Ferret iteration, receiver side: rebuilds the trees group by group as they arrive
/// (each checked and LPN-encoded while in cache) and, with the check, sends its choices and
/// verifies the sender's digest. Its output is the number of new OTs.
pub struct IterateReceiver<'a> {
    core: &'a mut ReceiverCore,
    rows: &'a mut [Block],
    next_tree: usize,
    transcript: Sha256,
    /// W = Σ χ_j·w_j.
    check: Block,
    /// x* = Σ_j e_j·χ_j.
    weight: Block,
}

impl IterateReceiver<'_> {
    fn expect_trees(&self, p: LpnParams) -> Next<usize> {
        let trees = p.trees_per_group().min(p.t - self.next_tree);
        Next::exact(TREES, 16 * State::message_len(p, trees))
    }
}

impl Role for IterateReceiver<'_> {
    type Incoming<'m> = ToReceiver<'m>;
    type Output = usize;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToReceiver<'_>>,
        out: &mut O,
    ) -> Result<Next<usize>, Error> {
        let p = self.core.state.current();
        let malicious = self.core.state.security == Security::Malicious;
        match incoming {
            None if self.next_tree == 0 => Ok(self.expect_trees(p)),
            Some(ToReceiver::Trees(Trees(message))) if self.next_tree < p.t => {
                let first = self.next_tree;
                self.core.group(p, first, &message, self.rows);
                let trees = message.len() / (2 * p.depth + 1);
                self.next_tree += trees;
                let state = &mut self.core.state;
                let range = first << p.depth..self.next_tree << p.depth;
                if malicious {
                    self.transcript
                        .update(bytemuck::cast_slice::<Block, u8>(&message));
                    let chi = State::weights(&mut state.chi, &self.transcript, range.len());
                    let w = &self.rows[range.clone()];
                    self.check ^= gf128::inner_product(chi, w);
                    for (&c, w) in chi.iter().zip(w) {
                        self.weight ^= bit_mask(w.lsb()) & c;
                    }
                }
                state.encode(p, self.rows, range);
                if self.next_tree < p.t {
                    Ok(self.expect_trees(p))
                } else if malicious {
                    let (check, _, _) = p.split(state.security, &state.reserve);
                    out.post(&Choices(self.weight ^ Block::new(low_bits(check))))?;
                    self.check ^= pack(check);
                    Ok(Next::exact(DIGEST, 32))
                } else {
                    Ok(Next::Done(state.finish(self.rows)))
                }
            }
            Some(ToReceiver::Digest(Digest(theirs))) if self.next_tree == p.t && malicious => {
                if bool::from(digest(self.check).ct_eq(&theirs)) {
                    Ok(Next::Done(self.core.state.finish(self.rows)))
                } else {
                    Err(Error::FerretCheckFailed)
                }
            }
            _ => Err(out_of_turn("Ferret", "a message")),
        }
    }
}

/// An iterating core, sender or receiver.
trait Core {
    /// Runs one iteration into `rows` with the peer; returns the number of new OTs, the first
    /// rows.
    fn run(
        &mut self,
        channel: &mut dyn Channel,
        space: Space,
        rows: &mut [Block],
    ) -> Result<usize, Error>;
    /// The state both sides keep.
    fn state(&self) -> &State;
}

impl Core for SenderCore {
    fn run(
        &mut self,
        channel: &mut dyn Channel,
        space: Space,
        rows: &mut [Block],
    ) -> Result<usize, Error> {
        role::drive(&mut self.iterate(rows), channel, space)
    }
    fn state(&self) -> &State {
        &self.state
    }
}

impl Core for ReceiverCore {
    fn run(
        &mut self,
        channel: &mut dyn Channel,
        space: Space,
        rows: &mut [Block],
    ) -> Result<usize, Error> {
        role::drive(&mut self.iterate(rows), channel, space)
    }
    fn state(&self) -> &State {
        &self.state
    }
}

/// The SoftSpoken extension whose random COTs seed the set-up iteration, once `params` are
/// known to be usable (before any base OT is run).
fn bootstrap(params: Params, security: Security) -> Result<Protocol, Error> {
    params.validate(security)?;
    Protocol::softspoken(Protocol::DEFAULT_K, security)
}

/// What both providers keep: the core, the buffer of an iteration whose OTs are not all handed
/// out yet (`buffer[next..made]`) and the OTs made ahead with `prepare`.
struct Provider<C> {
    core: C,
    space: Space,
    buffer: Vec<Block>,
    next: usize,
    made: usize,
    stock: extension::Stock,
}

impl<C: Core> std::fmt::Debug for Provider<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.core.state().fmt(f)
    }
}

impl<C: Core> Provider<C> {
    fn new(core: C, space: Space) -> Self {
        Provider {
            core,
            space,
            buffer: Vec::new(),
            next: 0,
            made: 0,
            stock: extension::Stock::default(),
        }
    }

    /// Random correlated OTs: those left from the last iteration, then whole iterations
    /// written straight into `out` while it has room for all their rows (the reserve rows
    /// after the new OTs are overwritten by what follows), then one into the buffer.
    fn fresh(&mut self, channel: &mut dyn Channel, out: &mut [Block]) -> Result<(), Error> {
        let mut done = 0;
        while done < out.len() {
            if self.next == self.made {
                let rows = self.core.state().current().n();
                if out.len() - done >= rows {
                    done += self.core.run(channel, self.space, &mut out[done..])?;
                    continue;
                }
                self.buffer.resize(rows, Block::ZERO);
                self.made = self.core.run(channel, self.space, &mut self.buffer)?;
                self.next = 0;
            }
            let take = (out.len() - done).min(self.made - self.next);
            out[done..done + take].copy_from_slice(&self.buffer[self.next..][..take]);
            self.next += take;
            done += take;
        }
        Ok(())
    }

    /// The next random correlated OTs, made ahead first.
    fn draw(&mut self, channel: &mut dyn Channel, out: &mut [Block]) -> Result<(), Error> {
        let ahead = self.stock.draw(out.len());
        let (made, fresh) = out.split_at_mut(ahead.len());
        made.copy_from_slice(ahead);
        self.fresh(channel, fresh)
    }

    fn prepare(&mut self, channel: &mut dyn Channel, n: usize) -> Result<(), Error> {
        let mut stock = std::mem::take(&mut self.stock);
        let result = stock.refill(n, |len, rows| {
            let at = rows.len();
            rows.resize(at + len, Block::ZERO);
            self.fresh(channel, &mut rows[at..])
        });
        self.stock = stock;
        result
    }
}

/// The Ferret sender over a channel (it holds Δ). Implements the sender side of every OT
/// trait: correlated OT by one flip bit per OT from the receiver, random and chosen-message OT
/// by hashing those with the TCCR hash (two more blocks per chosen OT).
#[derive(Debug)]
pub struct FerretSender(Provider<SenderCore>);

impl FerretSender {
    /// Sets up with the peer's [`FerretReceiver::setup`]: SoftSpoken OT extension (taking two
    /// spaces, as the peer does; with the KOS check for [`Security::Malicious`]) makes the
    /// set-up iteration's base COTs; Ferret takes a third space.
    pub fn setup(
        channel: &mut dyn Channel,
        spaces: &mut Spaces,
        params: Params,
        security: Security,
        prg: Prg,
    ) -> Result<Self, Error> {
        FerretSender::setup_with_delta(channel, spaces, (params, security), None, prg)
    }

    /// [`FerretSender::setup`] with the global Δ `delta` (its least significant bit taken as
    /// 1; the bootstrapping extension's, which Ferret keeps), or a random one for `None`.
    pub fn setup_with_delta(
        channel: &mut dyn Channel,
        spaces: &mut Spaces,
        (params, security): (Params, Security),
        delta: Option<Block>,
        mut prg: Prg,
    ) -> Result<Self, Error> {
        let protocol = bootstrap(params, security)?;
        let base_prg = Prg::from_seed_block(prg.random_block());
        let mut base =
            ExtensionSender::setup_with_delta(channel, spaces, protocol, delta, base_prg)?;
        let space = spaces.allocate()?;
        let mut reserve = vec![Block::ZERO; params.setup.reserve(security)];
        base.draw(channel, &mut reserve)?;
        let core = SenderCore::new(params, security, base.delta(), reserve, prg)?;
        Ok(FerretSender(Provider::new(core, space)))
    }
}

impl ProviderSender for FerretSender {
    fn delta(&self) -> Block {
        self.0.core.delta
    }

    fn space(&self) -> Space {
        self.0.space
    }

    fn draw(&mut self, channel: &mut dyn Channel, out: &mut [Block]) -> Result<(), Error> {
        self.0.draw(channel, out)
    }

    fn prepare(&mut self, channel: &mut dyn Channel, n: usize) -> Result<(), Error> {
        self.0.prepare(channel, n)
    }
}

/// The Ferret receiver over a channel. Implements the receiver side of every OT trait (see
/// [`FerretSender`]).
#[derive(Debug)]
pub struct FerretReceiver(Provider<ReceiverCore>);

impl FerretReceiver {
    /// Sets up with the peer's [`FerretSender::setup`].
    pub fn setup(
        channel: &mut dyn Channel,
        spaces: &mut Spaces,
        params: Params,
        security: Security,
        mut prg: Prg,
    ) -> Result<Self, Error> {
        let protocol = bootstrap(params, security)?;
        let base_prg = Prg::from_seed_block(prg.random_block());
        let mut base = ExtensionReceiver::setup(channel, spaces, protocol, base_prg)?;
        let space = spaces.allocate()?;
        let mut reserve = vec![Block::ZERO; params.setup.reserve(security)];
        base.draw(channel, &mut reserve)?;
        let core = ReceiverCore::new(params, security, reserve)?;
        Ok(FerretReceiver(Provider::new(core, space)))
    }
}

impl ProviderReceiver for FerretReceiver {
    fn flow(&self) -> Flow {
        match self.0.core.state.security {
            // The trees are the only message.
            Security::SemiHonest => Flow::SenderToReceiver,
            Security::Malicious => Flow::Both,
        }
    }

    fn space(&self) -> Space {
        self.0.space
    }

    fn draw(&mut self, channel: &mut dyn Channel, out: &mut [Block]) -> Result<(), Error> {
        self.0.draw(channel, out)
    }

    fn prepare(&mut self, channel: &mut dyn Channel, n: usize) -> Result<(), Error> {
        self.0.prepare(channel, n)
    }
}

#[cfg(test)]
mod tests;
