//! Authenticated bits (WRK17 §2.2, KRRW18 §2). A bit b that one party holds is authenticated to a
//! peer that holds a key K under its global offset Δ: the holder's MAC is M = K ⊕ b·Δ. Keys have
//! least significant bit 0 and Δ has it 1, so a MAC's least significant bit is its bit, and an
//! authenticated bit costs one block on each side.
//!
//! They are random correlated OTs with the peer as the sender: the receiver's outputs are MACs,
//! the sender's are keys and its Δ is the global one. With an actively secure provider (the KOS
//! check on IKNP or SoftSpoken, malicious Ferret) a cheating peer cannot make the correlation
//! inconsistent without being caught, which is what WRK17's F_aBit asks of it.
//!
//! Opening: the holder sends the bits and a digest of their MACs; the peer recomputes the MACs
//! from its keys and Δ and compares. To open a flipped bit the holder must produce K ⊕ (b⊕1)·Δ
//! without knowing Δ: it succeeds with probability 2^-127 per bit (Δ's least significant bit is
//! public).

use crate::Error;
use crate::checks::{self, Check};
use crate::combine::Combination;
use crate::share::Shares;
use std::ops::Range;
use subtle::ConstantTimeEq;
use tessera_core::Block;
use tessera_ot::extension::Security;
use tessera_ot::triples::Links;
use tessera_protocols::{OtChoice, Session};

/// Bytes of an opening's digest: one random linear combination of the MACs over GF(2^128)
/// ([`crate::combine`]).
pub const DIGEST: usize = 16;

/// Bits this party holds, each authenticated to one peer (their MACs under the peer's Δ).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthBits {
    macs: Vec<Block>,
}

impl AuthBits {
    /// Authenticated bits from their MACs (each MAC's least significant bit is its bit).
    pub fn from_macs(macs: Vec<Block>) -> Self {
        AuthBits { macs }
    }

    /// How many bits.
    pub fn len(&self) -> usize {
        self.macs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.macs.is_empty()
    }

    /// Bit `i`. Secret.
    pub fn bit(&self, i: usize) -> bool {
        self.macs[i].lsb()
    }

    /// The MACs. Secret.
    pub fn macs(&self) -> &[Block] {
        &self.macs
    }

    /// The MACs, taken.
    pub fn into_macs(self) -> Vec<Block> {
        self.macs
    }
}

/// The keys this party holds for a peer's authenticated bits, under this party's global Δ.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthKeys {
    delta: Block,
    keys: Vec<Block>,
}

impl std::fmt::Debug for AuthKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthKeys")
            .field("len", &self.keys.len())
            .finish_non_exhaustive()
    }
}

impl AuthKeys {
    /// Keys under `delta` (least significant bit 1; every key's is 0).
    pub fn new(delta: Block, keys: Vec<Block>) -> Self {
        AuthKeys { delta, keys }
    }

    /// How many keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// This party's global Δ. Secret.
    pub fn delta(&self) -> Block {
        self.delta
    }

    /// The keys. Secret.
    pub fn keys(&self) -> &[Block] {
        &self.keys
    }

    /// The keys, taken.
    pub fn into_keys(self) -> Vec<Block> {
        self.keys
    }

    /// The MAC the holder of bit `i` must show if the bit is `bit`: K ⊕ bit·Δ.
    pub fn mac_for(&self, i: usize, bit: bool) -> Block {
        self.keys[i] ^ (self.delta & Block::mask(bit))
    }
}

/// Refuses an OT that is not actively secure: authenticated bits from it would let a cheating
/// peer break the MACs' correlation unnoticed.
pub fn check_provider(choice: OtChoice) -> Result<(), Error> {
    match choice.security() {
        Security::Malicious => Ok(()),
        Security::SemiHonest => Err(Error::Usage(format!(
            "authenticated garbling needs an actively secure OT; {} is semi-honest",
            choice.name()
        ))),
    }
}

/// `n` fresh random authenticated bits each way with `peer`: this party's, authenticated to the
/// peer, and the keys for the peer's, under this party's Δ (its OT sender's).
pub fn random(session: &mut Session, peer: usize, n: usize) -> Result<(AuthBits, AuthKeys), Error> {
    let mut into = Shares::default();
    let delta = random_into(session, peer, n, &mut into)?;
    let (macs, keys) = into.into_parts();
    Ok((AuthBits { macs }, AuthKeys { delta, keys }))
}

/// [`random`] into `into`, which becomes `n` random shares (this party's bits and its keys for
/// the peer's), its buffers reused: a party that draws batch after batch into the same shares
/// touches no fresh pages. Returns this party's Δ.
pub fn random_into(
    session: &mut Session,
    peer: usize,
    n: usize,
    into: &mut Shares,
) -> Result<Block, Error> {
    check_provider(session.ot_choice())?;
    let sender_first = session.id() < peer;
    let (macs, keys) = into.resized(n);
    session
        .with_ot_pair(peer, |sender, receiver, channel| {
            let delta = sender.delta();
            let mut links = Links {
                channel,
                sender,
                receiver,
            };
            links.draw(sender_first, keys, macs)?;
            Ok(delta)
        })
        .map_err(Error::from)
}

/// The digest of the MACs of an opening of `range`, bound to where the range starts.
fn digest(start: usize, bits: &[u8], macs: impl Iterator<Item = Block>) -> [u8; DIGEST] {
    let mut c = Combination::new(
        b"tessera-ag opening",
        &[&(start as u64).to_le_bytes(), bits],
    );
    for m in macs {
        c.push(m);
    }
    c.finish().to_bytes()
}

/// The message that opens bits `range` of `held` to the peer: the bits packed least significant
/// first, then a digest of their MACs ([`DIGEST`]).
pub fn opening(held: &AuthBits, range: Range<usize>) -> Result<Vec<u8>, Error> {
    let macs = held.macs.get(range.clone()).ok_or_else(|| {
        Error::Usage(format!(
            "opening {range:?} of {} authenticated bits",
            held.len()
        ))
    })?;
    Ok(open_macs(macs.iter().copied(), range.start))
}

/// The MACs or keys of an opening, in order: a slice's, or one peer's column of n-party shares.
pub trait Column: ExactSizeIterator<Item = Block> + Clone {}
impl<I: ExactSizeIterator<Item = Block> + Clone> Column for I {}

/// The message that opens the bits whose MACs are `macs`, the first being bit `start` of its
/// sequence: the bits packed least significant first, then a digest of the MACs ([`DIGEST`]).
pub fn open_macs(macs: impl Column, start: usize) -> Vec<u8> {
    let mut msg = tessera_net::role::pack_bits(macs.clone().map(|m| m.lsb()));
    let d = digest(start, &msg, macs);
    msg.extend_from_slice(&d);
    msg
}

/// The bits an opening of the peer's bits `range` shows, if it checks against this party's keys
/// ([`Check::OpenedMacs`]).
pub fn check_opening(keys: &AuthKeys, range: Range<usize>, msg: &[u8]) -> Result<Vec<bool>, Error> {
    let k = keys
        .keys
        .get(range.clone())
        .ok_or_else(|| Error::Usage(format!("checking {range:?} of {} keys", keys.len())))?;
    check_macs(
        keys.delta,
        (k.iter().copied(), range.start),
        msg,
        (OPENING, Check::OpenedMacs),
    )
}

/// The bits an opening shows of the peer's bits whose keys (under `delta`) are `keys`, the
/// first being bit `start` of its sequence, if the digest matches the MACs they make (else
/// `check` failed); [`Error::Malformed`] naming `message` (the kind it came in) for an opening
/// of the wrong length or with padding bits set.
pub fn check_macs(
    delta: Block,
    (keys, start): (impl Column, usize),
    msg: &[u8],
    (message, check): (&'static str, Check),
) -> Result<Vec<bool>, Error> {
    let n = keys.len();
    let at = n.div_ceil(8);
    if msg.len() != at + DIGEST {
        return Err(Error::Malformed { message });
    }
    let bits = crate::wire::unpack_bits(&msg[..at], n, message)?;
    let expected = digest(
        start,
        &msg[..at],
        bits.iter()
            .zip(keys)
            .map(|(&b, k)| k ^ (delta & Block::mask(b))),
    );
    checks::require(check, bool::from(expected.ct_eq(&msg[at..])))?;
    Ok(bits)
}

/// What an opening of authenticated bits on its own is called where it is malformed.
const OPENING: &str = "opening of authenticated bits";
