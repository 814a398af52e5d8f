//! Base oblivious transfer: the "simplest OT" of Chou and Orlandi (LATINCRYPT 2015,
//! ePrint 2015/267) over the prime-order group Ristretto255, in batches, as two roles without
//! I/O ([`BaseSender`], [`BaseReceiver`]) and their drivers ([`send_random`],
//! [`receive_random`], [`send`], [`receive`]).
//!
//! The sender draws a and sends A = a·G. For each OT i with choice c_i the receiver draws b_i
//! and sends B_i = b_i·G + c_i·A (the addend selected in constant time); it keeps
//! k_i = H(i, A, B_i, b_i·A). The sender derives k0_i = H(i, A, B_i, a·B_i) and
//! k1_i = H(i, A, B_i, a·(B_i − A)), so k_i = k_{c_i}, while A and B_i hide c_i perfectly.
//!
//! H is SHA-256 under a domain separator, over a fresh per-run session id, the index and the
//! transcript (A, B_i). Hashing the transcript and index is the fix later versions of the paper
//! and Hauck and Loss (ePrint 2017/1011) apply to the original's key derivation; in Ristretto
//! every point is in the prime-order group, so no small-subgroup checks are needed, and the
//! identity point is refused. Security: the random-oracle model and CDH, against a semi-honest
//! sender and a malicious receiver. Against a malicious sender the protocol is not
//! UC-simulatable (Genç, Iovino, Rial, ePrint 2017/370); Tessera's actively secure extension
//! (KOS) protects the OT *sender* of the extension, who is the base OT's receiver.

use crate::bits::bit_mask;
use crate::{Error, out_of_turn};
use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoBasepointTable, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::Identity;
use rand_core::RngCore;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use subtle::ConditionallySelectable;
use tessera_core::{Block, Prg};
use tessera_net::role::{self, Decode, Encode, Next, Outbox, Role};
use tessera_net::{Channel, DecodeError, Kind, Space};

/// The sender's point A and the run's session id.
pub const HELLO: Kind = Kind::new(0x10, "base-ot sender point A and session id");
/// A batch of the receiver's points B_i.
pub const POINTS: Kind = Kind::new(0x11, "base-ot receiver points B");
/// The chosen-message sender's two ciphertexts per OT.
pub const CIPHERTEXTS: Kind = Kind::new(0x13, "base-ot ciphertexts");

/// Receiver points per message: the sender starts on the first batch while the receiver
/// computes the next.
pub const POINTS_PER_MESSAGE: usize = 32;

/// The sender's first message: A and a fresh session id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hello {
    /// A = a·G, compressed.
    pub point: [u8; 32],
    /// The session id the keys are derived under.
    pub session: [u8; 16],
}

impl Encode for Hello {
    const KIND: Kind = HELLO;
    fn encode<'a>(&'a self, scratch: &'a mut Vec<u8>) -> &'a [u8] {
        scratch.clear();
        scratch.extend_from_slice(&self.point);
        scratch.extend_from_slice(&self.session);
        scratch
    }
}

/// A batch of the receiver's compressed points, 32 bytes each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Points<'a>(pub Cow<'a, [u8]>);

impl Encode for Points<'_> {
    const KIND: Kind = POINTS;
    fn encode<'a>(&'a self, _scratch: &'a mut Vec<u8>) -> &'a [u8] {
        &self.0
    }
}

/// The chosen-message sender's ciphertexts: (m0 ⊕ k0, m1 ⊕ k1) per OT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ciphertexts<'a>(pub Cow<'a, [Block]>);

impl Encode for Ciphertexts<'_> {
    const KIND: Kind = CIPHERTEXTS;
    fn encode<'a>(&'a self, _scratch: &'a mut Vec<u8>) -> &'a [u8] {
        bytemuck::cast_slice(&self.0)
    }
}

/// What the sender receives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToSender<'a> {
    /// A batch of points.
    Points(Points<'a>),
}

impl<'a> Decode<'a> for ToSender<'a> {
    fn decode(kind: u8, bytes: &'a [u8]) -> Result<Self, DecodeError> {
        match kind {
            k if k == POINTS.id && bytes.len().is_multiple_of(32) => {
                Ok(ToSender::Points(Points(Cow::Borrowed(bytes))))
            }
            k if k == POINTS.id => Err(DecodeError(format!(
                "{} bytes is not a whole number of 32-byte points",
                bytes.len()
            ))),
            k => Err(DecodeError(format!(
                "kind {k:#04x} is not a base-OT sender's message"
            ))),
        }
    }
}

/// What the receiver receives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToReceiver<'a> {
    /// The sender's point and session id.
    Hello(Hello),
    /// The chosen-message ciphertexts.
    Ciphertexts(Ciphertexts<'a>),
}

impl<'a> Decode<'a> for ToReceiver<'a> {
    fn decode(kind: u8, bytes: &'a [u8]) -> Result<Self, DecodeError> {
        match kind {
            k if k == HELLO.id => {
                let b = role::array::<48>(bytes)?;
                let (point, session) = b.split_at(32);
                Ok(ToReceiver::Hello(Hello {
                    point: point.try_into().unwrap_or_default(),
                    session: session.try_into().unwrap_or_default(),
                }))
            }
            k if k == CIPHERTEXTS.id => {
                Ok(ToReceiver::Ciphertexts(Ciphertexts(role::blocks(bytes)?)))
            }
            k => Err(DecodeError(format!(
                "kind {k:#04x} is not a base-OT receiver's message"
            ))),
        }
    }
}

fn random_scalar(prg: &mut Prg) -> Scalar {
    let mut wide = [0u8; 64];
    prg.fill_bytes(&mut wide);
    Scalar::from_bytes_mod_order_wide(&wide)
}

fn decode_point(bytes: &[u8], what: &'static str, index: usize) -> Result<RistrettoPoint, Error> {
    CompressedRistretto::from_slice(bytes)
        .ok()
        .and_then(|c| c.decompress())
        .filter(|p| *p != RistrettoPoint::identity())
        .ok_or(Error::BadPoint { what, index })
}

/// The key derivation H(sid, i, A, B, 2P): the shared point enters doubled, because dalek
/// compresses 2P for a whole batch with one field inversion.
fn derive(
    session: &[u8; 16],
    index: usize,
    a: &[u8; 32],
    b: &[u8],
    p2: &CompressedRistretto,
) -> Block {
    let digest = Sha256::new()
        .chain_update(b"tessera/base-ot/chou-orlandi/v1")
        .chain_update(session)
        .chain_update((index as u64).to_le_bytes())
        .chain_update(a)
        .chain_update(b)
        .chain_update(p2.as_bytes())
        .finalize();
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    Block::from_bytes(key)
}

/// The sender of `n` base OTs: random OT (two keys per OT), or chosen-message OT when given
/// the messages.
pub struct BaseSender<'m> {
    n: usize,
    prg: Prg,
    messages: Option<&'m [(Block, Block)]>,
    a: Scalar,
    a_bytes: [u8; 32],
    a_times_a: RistrettoPoint,
    session: [u8; 16],
    points: Vec<u8>,
    shared: Vec<RistrettoPoint>,
}

impl<'m> BaseSender<'m> {
    /// Random OT: `n` pairs of keys.
    pub fn random(n: usize, prg: Prg) -> Self {
        BaseSender {
            n,
            prg,
            messages: None,
            a: Scalar::ZERO,
            a_bytes: [0; 32],
            a_times_a: RistrettoPoint::identity(),
            session: [0; 16],
            points: Vec::with_capacity(32 * n),
            shared: Vec::with_capacity(2 * n),
        }
    }

    /// Chosen-message OT of `messages`.
    pub fn chosen(messages: &'m [(Block, Block)], prg: Prg) -> Self {
        BaseSender {
            messages: Some(messages),
            ..BaseSender::random(messages.len(), prg)
        }
    }

    fn expect_points(&self) -> Next<Vec<(Block, Block)>> {
        let done = self.points.len() / 32;
        Next::exact(POINTS, 32 * (self.n - done).min(POINTS_PER_MESSAGE))
    }
}

impl Role for BaseSender<'_> {
    type Incoming<'a> = ToSender<'a>;
    /// The key pairs (k0_i, k1_i).
    type Output = Vec<(Block, Block)>;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToSender<'_>>,
        out: &mut O,
    ) -> Result<Next<Self::Output>, Error> {
        let Some(ToSender::Points(Points(batch))) = incoming else {
            self.a = random_scalar(&mut self.prg);
            let big_a = RISTRETTO_BASEPOINT_TABLE * &self.a;
            self.a_bytes = big_a.compress().to_bytes();
            self.a_times_a = big_a * self.a;
            self.prg.fill_bytes(&mut self.session);
            out.post(&Hello {
                point: self.a_bytes,
                session: self.session,
            })?;
            return Ok(if self.n == 0 {
                Next::Done(Vec::new())
            } else {
                self.expect_points()
            });
        };
        let first = self.points.len() / 32;
        for (k, b) in batch.chunks_exact(32).enumerate() {
            let big_b = decode_point(b, "receiver point B", first + k)?;
            let ab = big_b * self.a;
            self.shared.push(ab);
            self.shared.push(ab - self.a_times_a);
        }
        self.points.extend_from_slice(&batch);
        if self.points.len() < 32 * self.n {
            return Ok(self.expect_points());
        }
        let doubled = RistrettoPoint::double_and_compress_batch(&self.shared);
        let keys: Vec<(Block, Block)> = self
            .points
            .chunks_exact(32)
            .zip(doubled.chunks_exact(2))
            .enumerate()
            .map(|(i, (b, p))| {
                (
                    derive(&self.session, i, &self.a_bytes, b, &p[0]),
                    derive(&self.session, i, &self.a_bytes, b, &p[1]),
                )
            })
            .collect();
        if let Some(messages) = self.messages {
            let cipher: Vec<Block> = keys
                .iter()
                .zip(messages)
                .flat_map(|(&(k0, k1), &(m0, m1))| [m0 ^ k0, m1 ^ k1])
                .collect();
            out.post(&Ciphertexts(Cow::Owned(cipher)))?;
        }
        Ok(Next::Done(keys))
    }
}

/// The receiver of base OTs for `choices`: random OT (the chosen key per OT), or
/// chosen-message OT (the chosen message per OT).
pub struct BaseReceiver<'c> {
    choices: &'c [bool],
    prg: Prg,
    chosen: bool,
    keys: Vec<Block>,
}

impl<'c> BaseReceiver<'c> {
    /// Random OT.
    pub fn random(choices: &'c [bool], prg: Prg) -> Self {
        BaseReceiver {
            choices,
            prg,
            chosen: false,
            keys: Vec::new(),
        }
    }

    /// Chosen-message OT.
    pub fn chosen(choices: &'c [bool], prg: Prg) -> Self {
        BaseReceiver {
            chosen: true,
            ..BaseReceiver::random(choices, prg)
        }
    }
}

impl Role for BaseReceiver<'_> {
    type Incoming<'a> = ToReceiver<'a>;
    /// k_{c_i} (random OT) or m_{c_i} (chosen-message OT).
    type Output = Vec<Block>;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToReceiver<'_>>,
        out: &mut O,
    ) -> Result<Next<Vec<Block>>, Error> {
        match incoming {
            None => Ok(Next::exact(HELLO, 48)),
            Some(ToReceiver::Hello(hello)) => {
                let big_a = decode_point(&hello.point, "sender point A", 0)?;
                let mut points = Vec::with_capacity(32 * self.choices.len());
                let mut scalars = Vec::with_capacity(self.choices.len());
                for batch in self.choices.chunks(POINTS_PER_MESSAGE) {
                    let first = points.len();
                    for &c in batch {
                        let b = random_scalar(&mut self.prg);
                        let addend = RistrettoPoint::conditional_select(
                            &RistrettoPoint::identity(),
                            &big_a,
                            subtle::Choice::from(c as u8),
                        );
                        let big_b = RISTRETTO_BASEPOINT_TABLE * &b + addend;
                        points.extend_from_slice(big_b.compress().as_bytes());
                        scalars.push(b);
                    }
                    out.post(&Points(Cow::Borrowed(&points[first..])))?;
                    out.flush()?;
                }
                // b_i·A for every i, from a table for A (constant time in b_i), while the
                // sender works.
                let table_a = RistrettoBasepointTable::create(&big_a);
                let shared: Vec<RistrettoPoint> = scalars.iter().map(|b| &table_a * b).collect();
                let doubled = RistrettoPoint::double_and_compress_batch(&shared);
                self.keys = doubled
                    .iter()
                    .zip(points.chunks_exact(32))
                    .enumerate()
                    .map(|(i, (p, b))| derive(&hello.session, i, &hello.point, b, p))
                    .collect();
                Ok(if self.chosen {
                    Next::exact(CIPHERTEXTS, 32 * self.choices.len())
                } else {
                    Next::Done(std::mem::take(&mut self.keys))
                })
            }
            Some(ToReceiver::Ciphertexts(Ciphertexts(cipher))) if self.chosen => Ok(Next::Done(
                self.keys
                    .iter()
                    .zip(cipher.chunks_exact(2))
                    .zip(self.choices)
                    .map(|((&k, pair), &c)| k ^ pair[0] ^ (bit_mask(c) & (pair[0] ^ pair[1])))
                    .collect(),
            )),
            Some(ToReceiver::Ciphertexts(_)) => Err(out_of_turn("base OT", "ciphertexts")),
        }
    }
}

/// Random OT, sender side, over `channel` in `space`: `n` key pairs.
pub fn send_random<C: Channel + ?Sized>(
    channel: &mut C,
    space: Space,
    n: usize,
    prg: Prg,
) -> Result<Vec<(Block, Block)>, Error> {
    role::drive(&mut BaseSender::random(n, prg), channel, space)
}

/// Random OT, receiver side: the key k_{c_i} for each choice c_i.
pub fn receive_random<C: Channel + ?Sized>(
    channel: &mut C,
    space: Space,
    choices: &[bool],
    prg: Prg,
) -> Result<Vec<Block>, Error> {
    role::drive(&mut BaseReceiver::random(choices, prg), channel, space)
}

/// Chosen-message OT, sender side: the receiver gets `messages[i].0` or `.1`.
pub fn send<C: Channel + ?Sized>(
    channel: &mut C,
    space: Space,
    messages: &[(Block, Block)],
    prg: Prg,
) -> Result<(), Error> {
    role::drive(&mut BaseSender::chosen(messages, prg), channel, space).map(drop)
}

/// Chosen-message OT, receiver side: `messages[i].c_i` for each choice.
pub fn receive<C: Channel + ?Sized>(
    channel: &mut C,
    space: Space,
    choices: &[bool],
    prg: Prg,
) -> Result<Vec<Block>, Error> {
    role::drive(&mut BaseReceiver::chosen(choices, prg), channel, space)
}
