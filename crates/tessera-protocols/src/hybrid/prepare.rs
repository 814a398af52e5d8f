//! The setup phase of a hybrid program: one walk over its operations that fixes the masks of
//! ABY2.0 values (local randomness and linear functions of it) and states what each operation
//! needs from the setup (GMW triples, products of masks, arithmetic sharings of Boolean
//! masks, daBits) as vectors of the [`Algebra`]; then the triples are drawn by OT and the
//! algebra resolved.

use super::algebra::{Algebra, Field, Id, Needs, Peer, Pool, matrix_triple_bytes, triple_bytes};
use super::linear::{LinearMap, LinearMethod, LinearWeights};
use super::matrix::MatShape;
use super::{CROSS, LINEAR, Program, SETUP, Sharing, TABLES, WIDTHS, ring};
use crate::boolean::bits::{self, words};
use crate::hello::{self, Hello, Names};
use crate::{Error, Session};
use std::ops::Range;
use tessera_core::{Block, FixedKeyHash, Prg};
use tessera_net::Channel;
use tessera_ot::one_of_n::{Fields, OneOfN};
use tessera_ot::triples::{Links, Multipliers, Ring, TripleGenerator, multiplier_width};

/// One party's setup of a program, for one online phase.
#[derive(Debug)]
pub struct Prepared {
    pub(super) fingerprint: [u8; 32],
    pub(super) side: usize,
    /// Per operation, its vectors from the setup, in the order the online phase reads them.
    pub(super) material: Vec<Vec<Vec<u64>>>,
    /// Per value, this party's share of its mask (β, α; empty for Y, B, A).
    pub(super) masks: Vec<Vec<u64>>,
    /// Y: the garbler's free-XOR offset, its OT sender's Δ (zero at the evaluator).
    pub(super) delta: Block,
}

/// Where an operation's setup vector comes from.
pub(super) enum Slot {
    /// A triple for a vector of this field: its three vectors.
    Triple(Field),
    /// A circuit's triples, one per AND gate and copy, laid out in its layer segments.
    CircuitTriples(usize),
    /// Matrix triples over Z_2^`bits` for a batch of products of `shape`: its three vectors
    /// (the batch's A, B and C matrices one after another).
    MatrixTriples { bits: u32, shape: MatShape },
    /// A vector of the algebra.
    Vector(Id),
    /// Y: this many random correlated OTs, the garbler sending (its q, lsb 0), the evaluator
    /// receiving (q ⊕ c·Δ, its random choice c in the lsb); two words per block.
    Cots(usize),
    /// Random 1-out-of-N OTs ([`tessera_ot::one_of_n`]): `instances` of `shape`, party
    /// `sender` sending; the sender's messages (one vector of fields), or the receiver's
    /// choices and the messages it chose (two).
    OneOfN {
        shape: OneOfN,
        instances: usize,
        sender: usize,
    },
    /// Y: a garbled circuit's tables (two words per block), sent by the garbler in the
    /// setup (and, once received, the evaluator's).
    Tables(Vec<u64>),
    /// Y at the evaluator: the words of tables to receive (allocated only when they come, so
    /// that a walk for the costs allocates nothing of their size).
    TablesToCome(usize),
    /// A private linear map on a value whose mask share here is `mask`: the owner's
    /// coefficients, bias and share of W·δ; the other party's share (see [`super::linear`]).
    Linear {
        map: usize,
        owner: usize,
        method: LinearMethod,
        bits: u32,
        mask: Vec<u64>,
    },
}

/// The setup walk's state: what [`super::op::Operation::setup`] reads and fixes.
pub(super) struct Walk<'p> {
    pub(super) p: &'p Program,
    /// 0 for the lower-numbered party, 1 for the other.
    pub(super) side: usize,
    pub(super) prg: Prg,
    /// The shared random vectors the operations need, resolved after the walk.
    pub(super) algebra: Algebra,
    /// Per value: this party's share of its mask (β, α), or the garbler's zero-labels (Y;
    /// empty at the evaluator); empty for B and A.
    pub(super) masks: Vec<Vec<u64>>,
    /// Y: the garbler's free-XOR offset, its OT sender's Δ (zero at the evaluator).
    pub(super) delta: Block,
    /// The first error an operation's setup met (the walk goes on; the setup stops after it).
    error: Option<Error>,
}

/// Random shares of a vector of `field` (bits beyond each wire's `n` zero).
pub(super) fn random(prg: &mut Prg, field: Field) -> Vec<u64> {
    let mut v = vec![0u64; field.words()];
    match field {
        Field::Bits { n, .. } => {
            for wire in v.chunks_mut(words(n)) {
                bits::random(prg, n, wire);
            }
        }
        Field::Ring { .. } => {
            for pair in v.chunks_mut(2) {
                let b = prg.random_block();
                pair[0] = b.low();
                if let Some(h) = pair.get_mut(1) {
                    *h = b.high();
                }
            }
        }
    }
    v
}

/// The bits of a Boolean vector (`width` wires of `n` copies) as ring elements 0 or 1, wire
/// after wire.
pub(super) fn bits_as_ring(v: &[u64], width: usize, n: usize) -> Vec<u64> {
    let w = words(n);
    (0..width)
        .flat_map(|j| (0..n).map(move |k| u64::from(bits::bit(&v[j * w..(j + 1) * w], k))))
        .collect()
}

impl Walk<'_> {
    pub(super) fn ty(&self, v: usize) -> super::Type {
        self.p.types[v]
    }

    /// The setup of a Y value `v` made from bits online (an input, B → Y): the garbler's
    /// fresh zero-labels, and a random correlated OT per bit at both parties.
    pub(super) fn y_labels(&mut self, v: usize) -> Vec<Slot> {
        let t = self.ty(v);
        let labels = t.width() * t.n;
        if self.side == 0 {
            let mut blocks = vec![Block::ZERO; labels];
            self.prg.fill_blocks(&mut blocks);
            self.masks[v] = bytemuck::cast_slice(&blocks).to_vec();
        }
        vec![Slot::Cots(labels)]
    }

    /// Records an error of an operation's setup: the setup stops with the first after the walk.
    pub(super) fn fail(&mut self, e: Error) {
        self.error.get_or_insert(e);
    }

    /// A fresh random mask share for value `v`.
    pub(super) fn fresh(&mut self, v: usize) -> Vec<u64> {
        let f = self.ty(v).field();
        random(&mut self.prg, f)
    }

    /// This party's private ring vector `v` as an entry: its own at `owner`, zero at the other.
    pub(super) fn private(&mut self, field: Field, owner: usize, v: Vec<u64>) -> Id {
        let v = if owner == self.side {
            v
        } else {
            vec![0; v.len()]
        };
        self.algebra.known(field, v)
    }

    /// The arithmetic sharing in Z_2^`ring` of the Boolean vector with this party's share
    /// `b` (`width` wires of `n`): b₀ + b₁ − 2·b₀b₁, the cross product by one correlated OT per
    /// bit.
    pub(super) fn lift(&mut self, b: &[u64], width: usize, n: usize, ring: u32) -> Id {
        let field = Field::Ring {
            bits: ring,
            n: width * n,
        };
        let mine = bits_as_ring(b, width, n);
        let p0 = self.private(field, 0, mine.clone());
        let p1 = self.private(field, 1, mine);
        let both = self.algebra.cross(0, p0, p1);
        self.algebra
            .sum(vec![(1, p0), (1, p1), (2u64.wrapping_neg(), both)])
    }

    /// Shares of b·y for the bits b (this party's XOR share `b`, one wire of `y.len()` copies)
    /// and the ring elements y (this party's additive share `y`): with b = b₀ + b₁ − 2b₀b₁,
    /// b·y = b₀y₀ + b₁y₁ + b₁·y₀(1 − 2b₀) + b₀·y₁(1 − 2b₁), two cross products.
    pub(super) fn bit_times(&mut self, b: &[u64], y: &[u64], ring: u32) -> Id {
        let n = y.len();
        let field = Field::Ring { bits: ring, n };
        let bits = bits_as_ring(b, 1, n);
        let own: Vec<u64> = bits
            .iter()
            .zip(y)
            .map(|(b, y)| b.wrapping_mul(*y))
            .collect();
        let scaled: Vec<u64> = bits
            .iter()
            .zip(y)
            .map(|(b, y)| y.wrapping_mul(1u64.wrapping_sub(2 * b)))
            .collect();
        let local = self.algebra.known(field, own);
        let mut terms = vec![(1, local)];
        for from in 0..2 {
            let x = self.private(field, from, scaled.clone());
            let bit = self.private(field, 1 - from, bits.clone());
            terms.push((1, self.algebra.cross(from, x, bit)));
        }
        self.algebra.sum(terms)
    }

    /// γ = δa·δb + δz for a batch of matrix products of `shape` over Z_2^`bits` whose output
    /// gets the fresh mask `dz`.
    pub(super) fn matrix_gamma(
        &mut self,
        (bits, shape): (u32, MatShape),
        [da, db, dz]: [Vec<u64>; 3],
    ) -> Id {
        let field = |n: usize| Field::Ring { bits, n };
        let a = self.algebra.known(field(da.len()), da);
        let b = self.algebra.known(field(db.len()), db);
        let ab = self.algebra.matrix_product(a, b, bits, shape);
        let z = self.algebra.known(field(dz.len()), dz);
        self.algebra.sum(vec![(1, ab), (1, z)])
    }

    /// γ = δa·δb + δz (bits: ⊕) for a product whose output gets the fresh mask `dz`.
    pub(super) fn gamma(&mut self, field: Field, da: Vec<u64>, db: Vec<u64>, dz: Vec<u64>) -> Id {
        let (a, b) = (self.algebra.known(field, da), self.algebra.known(field, db));
        let ab = self.algebra.product(a, b);
        let z = self.algebra.known(field, dz);
        self.algebra.sum(vec![(1, ab), (1, z)])
    }
}

/// The triples of circuit `circuit` in B: one per AND gate and copy.
fn circuit_field(p: &Program, circuit: usize) -> Field {
    Field::Bits {
        width: 1,
        n: p.circuits[circuit].triples_needed(),
    }
}

/// The setup's link to the peer: Beaver openings and cross products by correlated OT.
pub(super) struct SetupLink<'s> {
    pub(super) session: &'s mut Session,
    pub(super) peer: usize,
    pub(super) space: tessera_net::Space,
    side: usize,
    hash: &'s FixedKeyHash,
    /// The tweak of the next cross product, counted from [`CROSS_TWEAKS`] over the setup.
    tweak: &'s mut u128,
}

/// Cross products per batch of correlated OTs: what bounds the blocks a batch holds.
const CROSS_BATCH: usize = 1 << 18;

/// The first tweak of the cross products' hashes (each the next): bit 125 keeps them apart
/// from the OT providers' own (below 2^64), the triples' (bit 126) and Ferret's (bit 127).
const CROSS_TWEAKS: u128 = 1 << 125;

impl Peer for SetupLink<'_> {
    fn malformed(&self, what: &str) -> Error {
        Error::Net(tessera_net::Error::Malformed {
            party: self.peer,
            name: SETUP.name,
            what: what.into(),
        })
    }

    fn exchange(&mut self, mine: &[u8]) -> Result<Vec<u8>, Error> {
        let mut ch = self.session.channel(self.peer);
        ch.send(self.space.tag(SETUP), mine)?;
        ch.flush()?;
        let mut theirs = vec![0u8; mine.len()];
        ch.recv_into(self.space.tag(SETUP), &mut theirs)?;
        Ok(theirs)
    }

    /// Gilboa with a one-bit multiplier: the sender (party `from`) takes correlated OTs q_j
    /// (the receiver choosing b_j gets q_j ⊕ b_j·Δ), sends τ_j = H(q_j) − H(q_j ⊕ Δ) + x_j and
    /// keeps −H(q_j); the receiver keeps H(t_j) + b_j·τ_j. H is the TCCR hash with the OT's
    /// index as tweak, read as a ring element.
    fn cross(
        &mut self,
        from: usize,
        x: &[u64],
        choices: &[bool],
        bits: &[u32],
    ) -> Result<Vec<u64>, Error> {
        let mut out = Vec::with_capacity(bits.len());
        for start in (0..bits.len()).step_by(CROSS_BATCH) {
            let end = bits.len().min(start + CROSS_BATCH);
            let batch = (&x[start..end], &choices[start..end], &bits[start..end]);
            out.extend(self.cross_batch(from, batch)?);
        }
        Ok(out)
    }
}

impl SetupLink<'_> {
    /// [`Peer::cross`] of at most [`CROSS_BATCH`] elements.
    fn cross_batch(
        &mut self,
        from: usize,
        (x, choices, bits): (&[u64], &[bool], &[u32]),
    ) -> Result<Vec<u64>, Error> {
        let n = bits.len();
        let (hash, space, side) = (self.hash, self.space, self.side);
        let first = Block::new(CROSS_TWEAKS + *self.tweak);
        *self.tweak += n as u128;
        let tau_bytes: usize = bits.iter().map(|&l| ring::bytes_per(l)).sum();
        let packed = tessera_ot::ChoiceBits::from_bools(choices);
        self.session
            .with_ot_pair(self.peer, |sender, receiver, ch| {
                let mut q = vec![Block::ZERO; n];
                let mut h = vec![Block::ZERO; n];
                if side == from {
                    sender.send_correlated(ch, &mut q)?;
                    let mut h1 = vec![Block::ZERO; n];
                    hash.tccr_counter(&q, Block::ZERO, first, &mut h);
                    hash.tccr_counter(&q, sender.delta(), first, &mut h1);
                    let mut tau = Vec::with_capacity(tau_bytes);
                    for j in 0..n {
                        let t = h[j].low().wrapping_sub(h1[j].low()).wrapping_add(x[j]);
                        tau.extend_from_slice(&t.to_le_bytes()[..ring::bytes_per(bits[j])]);
                    }
                    ch.send(space.tag(CROSS), &tau)?;
                    ch.flush()?;
                    Ok(h.iter().map(|h| h.low().wrapping_neg()).collect())
                } else {
                    receiver.receive_correlated(ch, packed.as_choices(), &mut q)?;
                    hash.tccr_counter(&q, Block::ZERO, first, &mut h);
                    let mut tau = vec![0u8; tau_bytes];
                    ch.recv_into(space.tag(CROSS), &mut tau)?;
                    let mut at = 0;
                    Ok((0..n)
                        .map(|j| {
                            let per = ring::bytes_per(bits[j]);
                            let mut w = [0u8; 8];
                            w[..per].copy_from_slice(&tau[at..at + per]);
                            at += per;
                            let mask = 0u64.wrapping_sub(u64::from(choices[j]));
                            h[j].low().wrapping_add(u64::from_le_bytes(w) & mask)
                        })
                        .collect())
                }
            })
    }
}

/// How the hybrid programs' hello names its fields.
const NAMES: Names = Names {
    protocol: "hybrid program",
    variant: None,
    side: |side| {
        if side == 0 { "on side 0" } else { "on side 1" }
    },
    fingerprint: "the peer runs another hybrid program (fingerprints differ)",
};

/// Both parties' hello ([`crate::hello`]): the program's fingerprint.
fn hello(
    session: &mut Session,
    (peer, space): (usize, tessera_net::Space),
    side: usize,
    fingerprint: [u8; 32],
) -> Result<(), Error> {
    let ours = Hello {
        version: super::PROTOCOL_VERSION,
        variant: 0,
        side: side as u8,
        fingerprint,
        nonce: Block::ZERO,
    };
    hello::exchange(session, (peer, space), ours, NAMES).map(|_| ())
}

/// The random correlated OTs of Y's slots, all at once, as words (two per block).
fn draw_cots(
    session: &mut Session,
    peer: usize,
    side: usize,
    slots: &[Vec<Slot>],
) -> Result<Vec<u64>, Error> {
    let count: usize = slots
        .iter()
        .flatten()
        .map(|s| if let Slot::Cots(c) = s { *c } else { 0 })
        .sum();
    if count == 0 {
        return Ok(Vec::new());
    }
    let mut blocks = vec![Block::ZERO; count];
    session.with_ot_pair(peer, |sender, receiver, ch| {
        if side == 0 {
            Ok(sender.send_random_correlated(ch, &mut blocks)?)
        } else {
            Ok(receiver.receive_random_correlated(ch, &mut blocks)?)
        }
    })?;
    Ok(blocks.iter().flat_map(|b| [b.low(), b.high()]).collect())
}

/// Random 1-out-of-N OTs made per batch of this many instances: bounds the correlated OTs a
/// party holds at once.
const ONE_OF_N_BATCH: usize = 1 << 16;

/// The random 1-out-of-N OTs of the slots, slot after slot: each made from correlated OTs in
/// batches and hashed into its compact messages at once ([`OneOfN`]), so that a party holds
/// one batch's blocks and the messages. `position` counts the OTs hashed so far (both
/// parties alike), the tweaks' positions.
fn draw_one_of_n(
    link: &mut SetupLink<'_>,
    slots: &[Vec<Slot>],
    position: &mut u64,
) -> Result<Vec<Vec<Vec<u64>>>, Error> {
    let (hash, side) = (link.hash, link.side);
    let mut out = Vec::new();
    for slot in slots.iter().flatten() {
        let &Slot::OneOfN {
            shape,
            instances,
            sender,
        } = slot
        else {
            continue;
        };
        let n = shape.messages();
        let material = link.session.with_ot_pair(link.peer, |s, r, ch| {
            // This party's side only: the sender's messages, or the receiver's choices and
            // chosen messages; one batch's blocks, reused.
            let sending = side == sender;
            let mut messages =
                Fields::zeros(shape.message_bits, if sending { instances * n } else { 0 });
            let receiving = if sending { 0 } else { instances };
            let mut choices = Fields::zeros(shape.choice_bits, receiving);
            let mut chosen = Fields::zeros(shape.message_bits, receiving);
            let mut blocks = vec![Block::ZERO; shape.cots(ONE_OF_N_BATCH.min(instances))];
            for at in (0..instances).step_by(ONE_OF_N_BATCH) {
                let blocks = &mut blocks[..shape.cots(ONE_OF_N_BATCH.min(instances - at))];
                if sending {
                    s.send_random_correlated(ch, blocks)?;
                    let keys = (hash, s.delta());
                    shape.send(keys, blocks, *position, (&mut messages, at));
                } else {
                    r.receive_random_correlated(ch, blocks)?;
                    let into = (&mut choices, &mut chosen, at);
                    shape.receive(hash, blocks, *position, into);
                }
                *position += blocks.len() as u64;
            }
            Ok(if sending {
                vec![messages.into_words()]
            } else {
                vec![choices.into_words(), chosen.into_words()]
            })
        })?;
        out.push(material);
    }
    Ok(out)
}

/// Y's offset: the garbler's (party 0's) OT sender's Δ, which its correlated OTs carry; zero
/// at the evaluator and for a program without Y values. Both parties set up their OT with the
/// peer here.
fn offset(p: &Program, session: &mut Session, peer: usize, side: usize) -> Result<Block, Error> {
    if !p.types.iter().any(|t| t.sharing == Sharing::Y) {
        return Ok(Block::ZERO);
    }
    let delta = session.with_ot_pair(peer, |sender, _, _| Ok(sender.delta()))?;
    Ok(if side == 0 { delta } else { Block::ZERO })
}

/// The garbled circuits' tables, garbler to evaluator, one message per circuit: the
/// evaluator's slots filled.
fn send_tables(link: &mut SetupLink<'_>, slots: &mut [Vec<Slot>]) -> Result<(), Error> {
    let tag = link.space.tag(TABLES);
    let mut ch = link.session.channel(link.peer);
    for slot in slots.iter_mut().flatten() {
        match slot {
            Slot::Tables(words) => {
                ch.send(tag, bytemuck::cast_slice(words))?;
                // The garbler keeps nothing of them.
                *words = Vec::new();
            }
            Slot::TablesToCome(n) => {
                let mut words = vec![0u64; *n];
                ch.recv_into(tag, bytemuck::cast_slice_mut(&mut words))?;
                *slot = Slot::Tables(words);
            }
            _ => {}
        }
    }
    Ok(ch.flush()?)
}

/// A part of the setup, timed: one linear map (`op`: its operation) or a part shared by all
/// operations (the hello and the walk; the OTs, triples and mask products).
#[derive(Clone, Debug)]
pub struct SetupStep {
    /// The linear map's operation, or none for a shared part.
    pub op: Option<usize>,
    /// What the part did.
    pub name: &'static str,
    /// Milliseconds.
    pub ms: f64,
    /// This party's traffic in it.
    pub traffic: tessera_net::Stats,
}

/// The setup's parts, timed one after another.
struct Laps {
    steps: Vec<SetupStep>,
    timer: tessera_net::PhaseTimer,
}

impl Laps {
    fn start(session: &mut Session) -> Self {
        Laps {
            steps: Vec::new(),
            timer: tessera_net::PhaseTimer::start("", session.network()),
        }
    }

    /// Ends the part running since the last lap as `name` (of operation `op`, if its own):
    /// a shared part met again (in a later segment) adds to its first.
    fn lap(&mut self, session: &mut Session, op: Option<usize>, name: &'static str) {
        let next = tessera_net::PhaseTimer::start("", session.network());
        let phase = std::mem::replace(&mut self.timer, next).stop(session.network());
        let again = op.is_none().then(|| {
            let same = |s: &&mut SetupStep| s.op.is_none() && s.name == name;
            self.steps.iter_mut().find(same)
        });
        match again.flatten() {
            Some(step) => {
                step.ms += phase.ms;
                step.traffic = [step.traffic, phase.traffic].into_iter().sum();
            }
            None => self.steps.push(SetupStep {
                op,
                name,
                ms: phase.ms,
                traffic: phase.traffic,
            }),
        }
    }

    /// Starts the next part now: what ran since the last lap (another phase) is not the
    /// setup's.
    fn restart(&mut self, session: &mut Session) {
        self.timer = tessera_net::PhaseTimer::start("", session.network());
    }
}

impl<'p> Walk<'p> {
    /// The walk of `p` at `side` before its first operation.
    fn new(p: &'p Program, side: usize, prg: Prg, delta: Block) -> Self {
        Walk {
            p,
            side,
            prg,
            algebra: Algebra::default(),
            masks: vec![Vec::new(); p.types.len()],
            delta,
            error: None,
        }
    }

    /// The setups of operations `ops`, in order: what each needs.
    fn walk(&mut self, ops: Range<usize>) -> Result<Vec<Vec<Slot>>, Error> {
        let p = self.p;
        let slots = p.ops[ops]
            .iter()
            .map(|op| op.operation().setup(self))
            .collect();
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(slots),
        }
    }
}

/// The triples the walk's slots and algebra need, drawn by OT.
fn draw_triples(
    p: &Program,
    session: &mut Session,
    peer: usize,
    walk: &Walk<'_>,
    slots: &[Vec<Slot>],
) -> Result<Pool, Error> {
    let mut needs = Needs::default();
    walk.algebra.needs(&mut needs);
    for slot in slots.iter().flatten() {
        match *slot {
            Slot::Triple(f) => needs.add(f),
            Slot::CircuitTriples(c) => needs.add(circuit_field(p, c)),
            Slot::MatrixTriples { bits, shape } => needs.add_matrices(bits, shape),
            _ => {}
        }
    }
    session.with_triples(peer, |g, links| {
        let b = g.boolean(links, needs.bits)?;
        let [n8, n16, n32, n64] = needs.ring;
        let mut pool = Pool::new(
            b,
            [
                Pool::ring_of(g.arithmetic::<u8>(links, n8)?),
                Pool::ring_of(g.arithmetic::<u16>(links, n16)?),
                Pool::ring_of(g.arithmetic::<u32>(links, n32)?),
                Pool::ring_of(g.arithmetic::<u64>(links, n64)?),
            ],
        );
        for (&(bits, shape), &count) in &needs.matrices {
            for _ in 0..count {
                let t = match bits {
                    8 => matrix_triple::<u8>(g, links, shape)?,
                    16 => matrix_triple::<u16>(g, links, shape)?,
                    32 => matrix_triple::<u32>(g, links, shape)?,
                    _ => matrix_triple::<u64>(g, links, shape)?,
                };
                pool.add_matrix(bits, shape, t);
            }
        }
        Ok(pool)
    })
}

/// One matrix triple of `shape` over `R`, as `u64`s.
fn matrix_triple<R: Ring>(
    g: &mut TripleGenerator,
    links: &mut Links<'_>,
    shape: (usize, usize, usize),
) -> Result<[Vec<u64>; 3], Error> {
    let t = g.matrix::<R>(links, shape)?;
    let up = |v: Vec<R>| v.into_iter().map(R::to_u64).collect();
    Ok([up(t.a), up(t.b), up(t.c)])
}

/// Each operation's vectors that do not wait for the algebra, in slot order: GMW's triples,
/// Y's correlated OTs, the garbled tables.
fn first_material(
    p: &Program,
    slots: &mut [Vec<Slot>],
    pool: &mut Pool,
    (mut cots, one_of_n): (Vec<u64>, Vec<Vec<Vec<u64>>>),
) -> Result<Vec<Vec<Vec<u64>>>, Error> {
    let mut one_of_n = one_of_n.into_iter();
    let mut material = Vec::with_capacity(slots.len());
    for ops in slots {
        let mut m = Vec::new();
        for slot in ops.iter_mut() {
            match slot {
                Slot::Triple(f) => m.extend(pool.take(*f)?),
                Slot::CircuitTriples(c) => {
                    let t = pool.take(circuit_field(p, *c))?;
                    m.extend(t.iter().map(|v| p.circuits[*c].segment_bits(v)));
                }
                Slot::MatrixTriples { bits, shape } => m.extend(pool.take_matrices(*bits, *shape)?),
                Slot::Cots(count) => {
                    let rest = cots.split_off(2 * *count);
                    m.push(std::mem::replace(&mut cots, rest));
                }
                Slot::OneOfN { .. } => m.extend(one_of_n.next().unwrap_or_default()),
                Slot::Tables(words) => m.push(std::mem::take(words)),
                Slot::Vector(_) | Slot::Linear { .. } | Slot::TablesToCome(_) => {}
            }
        }
        material.push(m);
    }
    Ok(material)
}

/// The setup's peer after the hello: the program's message space with it and this party's
/// side (0 for the lower-numbered party); the setup's parts so far.
pub(super) struct Greeted {
    peer: usize,
    space: tessera_net::Space,
    side: usize,
    pub(super) fingerprint: [u8; 32],
    laps: Laps,
}

/// Both parties' hello, then the widths of the linear maps' coefficients ([`stated_widths`]):
/// what the setup's size depends on.
pub(super) fn greet(
    p: &Program,
    session: &mut Session,
    peer: usize,
    weights: &[LinearWeights],
) -> Result<(Greeted, Vec<u32>), Error> {
    let mut laps = Laps::start(session);
    let side = usize::from(session.id() > peer);
    let space = session.space(peer)?;
    let fingerprint = p.fingerprint();
    hello(session, (peer, space), side, fingerprint)?;
    let widths = stated_widths(p, session, (peer, space, side), weights)?;
    laps.lap(session, None, "hello and widths");
    let greeted = Greeted {
        peer,
        space,
        side,
        fingerprint,
        laps,
    };
    Ok((greeted, widths))
}

/// Whether a map's products are Gilboa's with its owner's coefficients as multipliers
/// ([`by_rows`]), whose width the owner states.
fn stated(map: &LinearMap, method: LinearMethod) -> bool {
    method == LinearMethod::Products && !by_columns_suits(map)
}

/// The width of each linear map's coefficients as far as `weights` (each map's owner's, map
/// by map) tell: the fewest bits that hold them where its owner states them, ℓ otherwise.
pub(super) fn widths(p: &Program, weights: &[LinearWeights]) -> Vec<u32> {
    let maps = p.linear_maps();
    maps.iter()
        .enumerate()
        .map(|(map, &(_, bits, method))| match weights.get(map) {
            Some(w) if stated(&p.maps[map], method) => {
                multiplier_width(w.matrix.iter().copied(), bits)
            }
            _ => bits,
        })
        .collect()
}

/// The width of each linear map's coefficients, map by map: each party states, in one message
/// of a byte per map, the fewest bits that hold the coefficients of the maps it owns whose
/// multipliers they are ([`by_rows`]: see [`super::linear`]); ℓ for the other maps. A width
/// the peer states beyond its ring is malformed.
fn stated_widths(
    p: &Program,
    session: &mut Session,
    (peer, space, side): (usize, tessera_net::Space, usize),
    weights: &[LinearWeights],
) -> Result<Vec<u32>, Error> {
    let maps = p.linear_maps();
    let mut widths: Vec<u32> = maps.iter().map(|&(_, bits, _)| bits).collect();
    let mut own = weights.iter();
    let (mut mine, mut theirs) = (Vec::new(), Vec::new());
    for (map, &(owner, bits, method)) in maps.iter().enumerate() {
        let coefficients = if owner == side {
            let w = own.next().ok_or_else(|| no_weights(map))?;
            Some(&w.matrix)
        } else {
            None
        };
        match coefficients {
            _ if !stated(&p.maps[map], method) => {}
            Some(w) => {
                widths[map] = multiplier_width(w.iter().copied(), bits);
                mine.push(widths[map] as u8);
            }
            None => theirs.push(map),
        }
    }
    let mut ch = session.channel(peer);
    if !mine.is_empty() {
        ch.send(space.tag(WIDTHS), &mine)?;
        ch.flush()?;
    }
    if !theirs.is_empty() {
        let mut told = vec![0u8; theirs.len()];
        ch.recv_into(space.tag(WIDTHS), &mut told)?;
        for (&map, &width) in theirs.iter().zip(&told) {
            let width = u32::from(width);
            if !(1..=maps[map].1).contains(&width) {
                return Err(Error::Net(tessera_net::Error::Malformed {
                    party: peer,
                    name: WIDTHS.name,
                    what: format!("a width of {width} bits for linear map {map}"),
                }));
            }
            widths[map] = width;
        }
    }
    Ok(widths)
}

/// The error of an owner without the weights of a map.
fn no_weights(map: usize) -> Error {
    Error::Input(format!("no weights for linear map {map}"))
}

/// The setup between its segments ([`Setup::segment`]): the peer, the walk's randomness and
/// Y offset, the linear maps' weights still to use, and the parts timed so far.
pub(super) struct Setup<'p, 'w> {
    peer: usize,
    space: tessera_net::Space,
    laps: Laps,
    widths: Vec<u32>,
    walk: Walk<'p>,
    weights: std::slice::Iter<'w, LinearWeights>,
    /// The cross products' hash and the tweak of the next.
    hash: FixedKeyHash,
    tweak: u128,
    /// The random 1-out-of-N OTs' correlated OTs hashed so far ([`draw_one_of_n`]).
    position: u64,
}

impl<'p, 'w> Setup<'p, 'w> {
    /// The setup of `p` after the hello and the linear maps' `widths`: Y's offset fixed; this
    /// party's `weights` for the maps it owns, in their order.
    pub(super) fn start(
        p: &'p Program,
        session: &mut Session,
        greeted: Greeted,
        widths: Vec<u32>,
        weights: &'w [LinearWeights],
    ) -> Result<Self, Error> {
        let Greeted {
            peer,
            space,
            side,
            fingerprint: _,
            laps,
        } = greeted;
        let mut laps = laps;
        let delta = offset(p, session, peer, side)?;
        laps.lap(session, None, "masks");
        Ok(Setup {
            peer,
            space,
            laps,
            widths,
            walk: Walk::new(p, side, session.fork_prg(), delta),
            weights: weights.iter(),
            hash: FixedKeyHash::default(),
            tweak: 0,
            position: 0,
        })
    }

    /// This party's side (0 for the lower-numbered party) and Y's offset.
    pub(super) fn side_and_offset(&self) -> (usize, Block) {
        (self.walk.side, self.walk.delta)
    }

    /// The setup of operations `ops` (the next after the last segment's): their vectors, in
    /// order; the masks of values they write are fixed in `masks` (per value, read for
    /// the values they read).
    pub(super) fn segment(
        &mut self,
        session: &mut Session,
        ops: Range<usize>,
        masks: &mut Vec<Vec<u64>>,
    ) -> Result<Vec<Vec<Vec<u64>>>, Error> {
        self.laps.restart(session);
        self.walk.masks = std::mem::take(masks);
        let material = self.walked_segment(session, ops);
        *masks = std::mem::take(&mut self.walk.masks);
        material
    }

    fn walked_segment(
        &mut self,
        session: &mut Session,
        ops: Range<usize>,
    ) -> Result<Vec<Vec<Vec<u64>>>, Error> {
        let (p, side, first) = (self.walk.p, self.walk.side, ops.start);
        self.walk.algebra = Algebra::default();
        let mut slots = self.walk.walk(ops)?;
        self.laps.lap(session, None, "masks");
        let mut link = SetupLink {
            session,
            peer: self.peer,
            space: self.space,
            side,
            hash: &self.hash,
            tweak: &mut self.tweak,
        };
        send_tables(&mut link, &mut slots)?;
        self.laps.lap(link.session, None, "garbled tables");
        let cots = draw_cots(link.session, self.peer, side, &slots)?;
        let one_of_n = draw_one_of_n(&mut link, &slots, &mut self.position)?;
        let mut pool = draw_triples(p, link.session, self.peer, &self.walk, &slots)?;
        // GMW's triples first, operation by operation, then the algebra's products.
        let mut material = first_material(p, &mut slots, &mut pool, (cots, one_of_n))?;
        self.walk.algebra.resolve(side, &mut pool, &mut link)?;
        self.laps
            .lap(link.session, None, "triples and mask products");
        for (index, (m, ops)) in (first..).zip(material.iter_mut().zip(&slots)) {
            for slot in ops {
                match slot {
                    Slot::Vector(id) => m.push(self.walk.algebra.take(*id)),
                    Slot::Linear {
                        map,
                        owner,
                        method,
                        bits,
                        mask,
                    } => {
                        let mine = if *owner == side {
                            Some(self.weights.next().ok_or_else(|| no_weights(*map))?)
                        } else {
                            None
                        };
                        let width = self.widths[*map];
                        let map = &p.maps[*map];
                        link.session.position().at(index);
                        let setup = (*method, *bits, width);
                        m.extend(linear_setup(&mut link, map, setup, mask, mine)?);
                        self.laps.lap(link.session, Some(index), "linear map");
                    }
                    _ => {}
                }
            }
        }
        Ok(material)
    }

    /// The setup's parts, once every segment is done; an error if this party gave weights
    /// for more maps than it owns.
    pub(super) fn finish(mut self) -> Result<Vec<SetupStep>, Error> {
        if self.weights.next().is_some() {
            return Err(Error::Input(
                "more linear weights than linear maps this party owns".into(),
            ));
        }
        Ok(self.laps.steps)
    }
}

/// The whole setup of `p` in one segment, after the hello and the linear maps' `widths`.
pub(super) fn setup(
    p: &Program,
    session: &mut Session,
    greeted: Greeted,
    weights: &[LinearWeights],
    widths: &[u32],
) -> Result<(Prepared, Vec<SetupStep>), Error> {
    let fingerprint = greeted.fingerprint;
    let mut setup = Setup::start(p, session, greeted, widths.to_vec(), weights)?;
    let mut masks = vec![Vec::new(); p.types.len()];
    let material = setup.segment(session, 0..p.ops.len(), &mut masks)?;
    let (side, delta) = setup.side_and_offset();
    let prepared = Prepared {
        fingerprint,
        side,
        material,
        masks,
        delta,
    };
    Ok((prepared, setup.finish()?))
}

/// One walk over `p` as [`setup`] makes it (the evaluator's, with masks from a fixed seed: no
/// length depends on them), each operation's algebra entries and slots given to `measure`
/// and then dropped, as the masks of values used for the last time are.
fn measured<T>(p: &Program, mut measure: impl FnMut(&Algebra, &[Slot]) -> T) -> Vec<T> {
    // The evaluator's walk: the same slots, no garbling.
    let mut walk = Walk::new(p, 1, Prg::from_seed_block(Block::ZERO), Block::ZERO);
    p.ops
        .iter()
        .zip(p.last_uses())
        .map(|(op, last)| {
            walk.algebra = Algebra::default();
            let slots = op.operation().setup(&mut walk);
            for v in last {
                walk.masks[v] = Vec::new();
            }
            measure(&walk.algebra, &slots)
        })
        .collect()
}

/// One operation's setup ([`setup_sizes`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct SetupSize {
    /// The words it holds ([`Algebra::words`] and [`slot_words`]).
    pub words: usize,
    /// The bytes it sends, both parties together, estimated.
    pub bytes: f64,
}

/// Each operation's setup, in one walk ([`measured`]): the words it holds, and its bytes
/// when a random correlated OT costs `cot_bytes`: what its slots take (GMW's triples, Y's
/// random correlated OTs, a linear map's products) and the algebra entries its setup added.
/// The hello and the base OTs are left out, and so are the widths of the linear maps'
/// coefficients, given (`widths`, map by map).
pub(super) fn setup_sizes(p: &Program, cot_bytes: f64, widths: &[u32]) -> Vec<SetupSize> {
    measured(p, |algebra, slots| SetupSize {
        words: algebra.words() + slots.iter().map(|s| slot_words(p, s)).sum::<usize>(),
        bytes: algebra.bytes(0..algebra.len(), cot_bytes)
            + slots
                .iter()
                .map(|s| slot_bytes(p, s, cot_bytes, widths))
                .sum::<f64>(),
    })
}

/// Consecutive ranges of the operations of setups `sizes`, in order, each holding at most
/// `budget` words (an operation over it alone): the segments a streamed run sets up one at a
/// time.
pub(super) fn segments(sizes: &[SetupSize], budget: usize) -> Vec<Range<usize>> {
    let (mut out, mut start, mut held) = (Vec::new(), 0, 0);
    for (i, size) in sizes.iter().enumerate() {
        if held + size.words > budget && i > start {
            out.push(start..i);
            (start, held) = (i, 0);
        }
        held += size.words;
    }
    out.push(start..sizes.len());
    out
}

/// The words one of an operation's slots holds in the setup (its algebra vectors are
/// counted with the algebra): a linear map's share of its product, its coefficients and the
/// mask it multiplies.
fn slot_words(p: &Program, slot: &Slot) -> usize {
    match *slot {
        Slot::Triple(f) => 3 * f.words(),
        Slot::CircuitTriples(c) => 3 * circuit_field(p, c).words(),
        Slot::MatrixTriples { shape, .. } => {
            let (r, i, c) = shape.one();
            shape.batch * (r * i + i * c + r * c)
        }
        Slot::Cots(n) => 2 * n,
        Slot::OneOfN {
            shape, instances, ..
        } => (instances * shape.messages() * shape.message_bits as usize).div_ceil(64),
        Slot::Vector(_) => 0,
        Slot::Tables(ref words) => words.len(),
        Slot::TablesToCome(n) => n,
        Slot::Linear { map, .. } => {
            let (rows, inner, cols) = p.maps[map].shape();
            rows * cols + rows * inner + inner * cols
        }
    }
}

/// The bytes both parties send for one of an operation's slots (its algebra vectors are
/// counted with the algebra); a linear map's with its coefficients' width from `widths`.
fn slot_bytes(p: &Program, slot: &Slot, cot_bytes: f64, widths: &[u32]) -> f64 {
    match *slot {
        Slot::Triple(f) => triple_bytes(f, cot_bytes),
        Slot::CircuitTriples(c) => triple_bytes(circuit_field(p, c), cot_bytes),
        Slot::MatrixTriples { bits, shape } => matrix_triple_bytes(bits, shape, cot_bytes),
        Slot::Cots(n) => n as f64 * cot_bytes,
        Slot::OneOfN {
            shape, instances, ..
        } => shape.cots(instances) as f64 * cot_bytes,
        Slot::Vector(_) => 0.0,
        Slot::Tables(ref words) => (8 * words.len() + tessera_net::FRAME_HEADER) as f64,
        Slot::TablesToCome(n) => (8 * n + tessera_net::FRAME_HEADER) as f64,
        Slot::Linear {
            map, bits, method, ..
        } => {
            let width = widths.get(map).copied().unwrap_or(bits);
            linear_bytes(&p.maps[map], (method, bits, width), cot_bytes)
        }
    }
}

/// The bytes both parties send for the products of a map in Z_2^`bits` by `method`, its
/// coefficients of `width` bits (Gilboa's products where the owner's coefficients are the
/// multipliers), when a random correlated OT costs `cot_bytes`.
pub(super) fn linear_bytes(
    map: &LinearMap,
    (method, bits, width): (LinearMethod, u32, u32),
    cot_bytes: f64,
) -> f64 {
    if method == LinearMethod::Lattice {
        return super::lattice::bytes(map, bits).unwrap_or(f64::INFINITY);
    }
    let (rows, inner, cols) = map.shape();
    let (count, len) = if by_columns_suits(map) {
        (inner, rows)
    } else {
        (rows * inner, cols)
    };
    // Random multipliers are corrected by E, an element each.
    let (multipliers, corrections) = if stated(map, method) {
        (Multipliers::Chosen { width }, 0)
    } else {
        (Multipliers::Random, count * ring::bytes_per(bits))
    };
    let products = (count, len);
    tessera_ot::triples::vector_products_bytes(bits, multipliers, products, cot_bytes)
        + corrections as f64
}

/// Whether a linear map's random multipliers go on the other party's side, one per input
/// element ([`by_columns`]: a map of one column, a dense layer), rather than the owner's, one
/// per coefficient ([`by_rows`]): on the side with fewer of them.
fn by_columns_suits(map: &LinearMap) -> bool {
    let (rows, _, cols) = map.shape();
    cols == 1 && rows > 1 && map.groups() == 1
}

/// Rows of `W` per batch of Gilboa's products: at most 2^20 elements of `cols(δ)` repeated.
fn rows_per_batch(map: &LinearMap) -> usize {
    let (rows, inner, cols) = map.shape();
    ((1 << 20) / (inner * cols)).clamp(1, rows)
}

/// The setup of a private linear map (see [`super::linear`]) in Z_2^`bits` by `method`, its
/// coefficients' stated `width` (Gilboa's): at the owner (`weights` given) its coefficients,
/// bias and share of W·cols(δ); at the other party its share.
fn linear_setup(
    link: &mut SetupLink<'_>,
    map: &LinearMap,
    (method, bits, width): (LinearMethod, u32, u32),
    mask: &[u64],
    weights: Option<&LinearWeights>,
) -> Result<Vec<Vec<u64>>, Error> {
    if method == LinearMethod::Lattice {
        let share = super::lattice::share(link, map, bits, mask, weights)?;
        // cols(δₒ) at the owner only: the other party's share needs none.
        let own = if weights.is_some() {
            map.gather(mask)
        } else {
            Vec::new()
        };
        return Ok(with_own_product(map, &own, weights, share));
    }
    match bits {
        8 => linear_setup_in::<u8>(link, map, width, mask, weights),
        16 => linear_setup_in::<u16>(link, map, width, mask, weights),
        32 => linear_setup_in::<u32>(link, map, width, mask, weights),
        _ => linear_setup_in::<u64>(link, map, width, mask, weights),
    }
}

fn linear_setup_in<R: Ring>(
    link: &mut SetupLink<'_>,
    map: &LinearMap,
    width: u32,
    mask: &[u64],
    weights: Option<&LinearWeights>,
) -> Result<Vec<Vec<u64>>, Error> {
    if let Some(w) = weights {
        map.check(w)?;
    }
    let c = map.gather(mask);
    // The multipliers on the side with fewer of them.
    let share = if stated(map, LinearMethod::Products) {
        by_rows::<R>(link, map, width, &c, weights)?
    } else {
        by_columns::<R>(link, map, &c, weights)?
    };
    Ok(with_own_product(map, &c, weights, share))
}

/// A map's setup vectors from this party's `share` of W·cols(δₚ): at the owner its
/// coefficients, bias and W·cols(δₒ) + share (`cols` = cols(δₒ), its own mask gathered); at
/// the other party the share.
fn with_own_product(
    map: &LinearMap,
    cols: &[u64],
    weights: Option<&LinearWeights>,
    mut share: Vec<u64>,
) -> Vec<Vec<u64>> {
    match weights {
        Some(w) => {
            let own = map.multiply(&w.matrix, cols, None);
            for (s, o) in share.iter_mut().zip(own) {
                *s = s.wrapping_add(o);
            }
            vec![w.matrix.clone(), w.bias.clone(), share]
        }
        None => vec![share],
    }
}

/// Shares of W·c (the other party's `c`), the multipliers on the owner's side: for each row r
/// of `W`, the other party's rows of `c` (of r's group) times the owner's W[r, k] as chosen
/// multipliers of the `width` the owner stated ([`stated_widths`]: one OT per bit). For maps
/// with many columns (convolutions).
fn by_rows<R: Ring>(
    link: &mut SetupLink<'_>,
    map: &LinearMap,
    width: u32,
    c: &[u64],
    weights: Option<&LinearWeights>,
) -> Result<Vec<u64>, Error> {
    let (rows, inner, cols) = map.shape();
    let batch = rows_per_batch(map);
    link.session.with_triples(link.peer, |g, links| {
        let mut share = vec![0u64; rows * cols];
        // Adds each product's shares (k-th of a row's inner products) into its row.
        let accumulate = |share: &mut [u64], first_row: usize, s: &[R]| {
            for (i, s) in s.chunks_exact(inner * cols).enumerate() {
                let row = &mut share[(first_row + i) * cols..][..cols];
                for sk in s.chunks_exact(cols) {
                    for (o, v) in row.iter_mut().zip(sk) {
                        *o = o.wrapping_add(v.to_u64());
                    }
                }
            }
        };
        if let Some(w) = weights {
            // Each batch's OTs drawn before the last batch's corrections are read: the
            // other party finds them waiting when it has sent those.
            let start = |g: &mut TripleGenerator, links: &mut Links<'_>, first: usize| {
                let n = batch.min(rows - first);
                let wrows = &w.matrix[first * inner..(first + n) * inner];
                let y: Vec<R> = wrows.iter().map(|&v| R::from_u64(v)).collect();
                g.start_chosen::<R>(links, cols, &y, width)
            };
            let mut firsts = (0..rows).step_by(batch);
            let mut next = |g: &mut TripleGenerator, links: &mut Links<'_>| {
                let first = firsts.next();
                first
                    .map(|f| start(g, links, f).map(|s| (f, s)))
                    .transpose()
            };
            let mut pending = next(g, links)?;
            while let Some((first, started)) = pending {
                pending = next(g, links)?;
                let s = g.finish_chosen::<R>(links, started)?;
                accumulate(&mut share, first, &s);
            }
        } else {
            // Each row's group's block of `c`, row after row.
            let x: Vec<R> = c.iter().map(|&v| R::from_u64(v)).collect();
            let block = inner * cols;
            let chosen = Multipliers::Chosen { width };
            for first in (0..rows).step_by(batch) {
                let n = batch.min(rows - first);
                let repeated: Vec<R> = (first..first + n)
                    .flat_map(|r| {
                        let g = map.group_of(r);
                        x[g * block..(g + 1) * block].iter().copied()
                    })
                    .collect();
                let s = g.vector_products_send::<R>(links, &repeated, cols, chosen)?;
                accumulate(&mut share, first, &s);
            }
        }
        Ok(share)
    })
}

/// Shares of W·c for a map of one column (a dense layer), the other party's multipliers
/// random: the owner's columns of `W` times random y[k] of the other party, which then sends
/// E = c − y. ℓ random OTs per input element instead of per coefficient.
fn by_columns<R: Ring>(
    link: &mut SetupLink<'_>,
    map: &LinearMap,
    c: &[u64],
    weights: Option<&LinearWeights>,
) -> Result<Vec<u64>, Error> {
    let (rows, inner, _) = map.shape();
    let bits = R::BITS as u32;
    let batch = ((1 << 20) / rows).clamp(1, inner);
    let space = link.space;
    let malformed = link.malformed("linear map multipliers");
    link.session.with_triples(link.peer, |g, links| {
        let mut share = vec![0u64; rows];
        let accumulate = |share: &mut [u64], s: &[R]| {
            for sk in s.chunks_exact(rows) {
                for (o, v) in share.iter_mut().zip(sk) {
                    *o = o.wrapping_add(v.to_u64());
                }
            }
        };
        if let Some(w) = weights {
            for first in (0..inner).step_by(batch) {
                let n = batch.min(inner - first);
                let columns: Vec<R> = (first..first + n)
                    .flat_map(|k| (0..rows).map(move |r| R::from_u64(w.matrix[r * inner + k])))
                    .collect();
                let s = g.vector_products_send::<R>(links, &columns, rows, Multipliers::Random)?;
                accumulate(&mut share, &s);
            }
            let e = receive_elements(links, space, inner, bits, malformed)?;
            let theirs = map.multiply(&w.matrix, &e, None);
            for (s, t) in share.iter_mut().zip(theirs) {
                *s = s.wrapping_add(t);
            }
        } else {
            let mut e = Vec::with_capacity(inner);
            for first in (0..inner).step_by(batch) {
                let n = batch.min(inner - first);
                let (y, s) = g.vector_products_receive::<R>(links, rows, n)?;
                accumulate(&mut share, &s);
                e.extend(
                    c[first..first + n]
                        .iter()
                        .zip(&y)
                        .map(|(c, y)| c.wrapping_sub(y.to_u64())),
                );
            }
            send_elements(links, space, &e, bits)?;
        }
        Ok(share)
    })
}

/// Ring elements of `bits` to the peer in one LINEAR message.
fn send_elements(
    links: &mut tessera_ot::triples::Links<'_>,
    space: tessera_net::Space,
    e: &[u64],
    bits: u32,
) -> Result<(), Error> {
    let mut bytes = Vec::with_capacity(e.len() * ring::bytes_per(bits));
    ring::put(e, bits, &mut bytes);
    links.channel.send(space.tag(LINEAR), &bytes)?;
    links.channel.flush()?;
    Ok(())
}

/// `n` ring elements of `bits` from the peer in one LINEAR message.
fn receive_elements(
    links: &mut tessera_ot::triples::Links<'_>,
    space: tessera_net::Space,
    n: usize,
    bits: u32,
    malformed: Error,
) -> Result<Vec<u64>, Error> {
    let mut bytes = vec![0u8; n * ring::bytes_per(bits)];
    links.channel.recv_into(space.tag(LINEAR), &mut bytes)?;
    if bytes.len() != n * ring::bytes_per(bits) {
        return Err(malformed);
    }
    let mut e = vec![0u64; n];
    ring::get(&bytes, bits, &mut e);
    Ok(e)
}
