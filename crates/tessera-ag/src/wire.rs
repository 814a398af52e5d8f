//! The messages of this crate's protocols: one table of kinds, one message type.

use crate::Error;
use std::borrow::Cow;
use tessera_core::Block;
use tessera_net::role::{Decode, Encode};
use tessera_net::{DecodeError, Kind};

/// Each party's garbled rows of a batch's leaky ANDs ([`crate::triples`]).
pub const GARBLED: Kind = Kind::new(0x10, "leaky AND garbled rows");
/// The low bits of each party's S.
pub const SHARES: Kind = Kind::new(0x11, "leaky AND output shares");
/// The first party's commitment to its equality digest and coin.
pub const COMMIT: Kind = Kind::new(0x12, "equality check commitment");
/// The second party's equality digest and coin.
pub const REVEAL: Kind = Kind::new(0x13, "equality check digest");
/// The first party's digest, coin and the commitment's nonce.
pub const OPEN: Kind = Kind::new(0x14, "equality check opening");
/// Each party's opening of its bucket differences y_1 ⊕ y_i.
pub const BUCKETS: Kind = Kind::new(0x15, "bucket differences opened");
/// Each party's openings of its shares of λ_α ⊕ x and λ_β ⊕ y, and of the masks of the peer's
/// input wires ([`crate::twopc`]).
pub const OPENINGS: Kind = Kind::new(0x20, "mask and Beaver openings");
/// The evaluator's masked input bits.
pub const MASKED_INPUTS: Kind = Kind::new(0x21, "masked inputs");
/// The garbler's input labels.
pub const INPUT_LABELS: Kind = Kind::new(0x22, "input labels");
/// The garbler's authenticated half-gates tables.
pub const TABLES: Kind = Kind::new(0x23, "garbled tables");
/// The garbler's label flips, one bit per AND gate.
pub const FLIPS: Kind = Kind::new(0x24, "garbled label flips");
/// The evaluator's masked values of the AND gates and its commitment to the digest of their
/// labels.
pub const MASKED_VALUES: Kind = Kind::new(0x25, "masked AND values");
/// The garbler's digest of the AND labels the evaluator must hold.
pub const EXPECTED_LABELS: Kind = Kind::new(0x29, "expected AND labels");
/// The evaluator's digest of its AND labels and the commitment's nonce.
pub const LABELS_OPENED: Kind = Kind::new(0x2a, "AND label digest opened");
/// The garbler's digest of its consistency-check MACs.
pub const CONSISTENCY: Kind = Kind::new(0x26, "consistency check digest");
/// The garbler's opening of its output masks.
pub const OUTPUT_MASKS: Kind = Kind::new(0x27, "output mask opening");
/// The evaluator's output labels and the opening of its output masks.
pub const OUTPUT_LABELS: Kind = Kind::new(0x28, "output labels");

/// n parties ([`crate::multi`]): the differences that fix a party's authenticated shares.
pub const N_FIXES: Kind = Kind::new(0x40, "authenticated share fixes");
/// The half-authenticated AND rows and the leaky AND check's rows.
pub const N_LEAKY: Kind = Kind::new(0x41, "half-authenticated ANDs");
/// Each party's difference between its share of xy and of r.
pub const N_PRODUCTS: Kind = Kind::new(0x42, "leaky AND product fixes");
/// A coin's commitment.
pub const COIN_COMMIT: Kind = Kind::new(0x43, "coin commitment");
/// A coin's opening.
pub const COIN_OPEN: Kind = Kind::new(0x44, "coin opening");
/// The consistency combinations opened and the commitment to the leaky AND check.
pub const N_CHECK: Kind = Kind::new(0x45, "consistency and leaky AND check");
/// The leaky AND check opened and the consistency echo.
pub const N_CHECK_OPEN: Kind = Kind::new(0x46, "leaky AND check opening");
/// The bucket differences opened.
pub const N_BUCKETS: Kind = Kind::new(0x47, "bucket differences");
/// Beaver's differences of the AND gates' masks opened.
pub const N_BEAVER: Kind = Kind::new(0x48, "Beaver openings");
/// A garbler's rows.
pub const N_TABLES: Kind = Kind::new(0x49, "distributed garbled rows");
/// Input masks opened to their owner.
pub const N_INPUT_MASKS: Kind = Kind::new(0x4a, "input masks");
/// An input owner's masked inputs.
pub const N_MASKED: Kind = Kind::new(0x4b, "masked inputs (n parties)");
/// The masked inputs' echo and the garblers' input labels.
pub const N_INPUT_LABELS: Kind = Kind::new(0x4c, "input labels (n parties)");
/// The evaluator's masked outputs and output label digest.
pub const N_OUTPUT_LABELS: Kind = Kind::new(0x4d, "output labels (n parties)");
/// The output masks opened.
pub const N_OUTPUT_MASKS: Kind = Kind::new(0x4e, "output masks (n parties)");

/// Every kind, for looking one up by its id.
const KINDS: [Kind; 32] = [
    GARBLED,
    SHARES,
    COMMIT,
    REVEAL,
    OPEN,
    BUCKETS,
    OPENINGS,
    MASKED_INPUTS,
    INPUT_LABELS,
    TABLES,
    FLIPS,
    MASKED_VALUES,
    EXPECTED_LABELS,
    LABELS_OPENED,
    CONSISTENCY,
    OUTPUT_MASKS,
    OUTPUT_LABELS,
    N_FIXES,
    N_LEAKY,
    N_PRODUCTS,
    COIN_COMMIT,
    COIN_OPEN,
    N_CHECK,
    N_CHECK_OPEN,
    N_BUCKETS,
    N_BEAVER,
    N_TABLES,
    N_INPUT_MASKS,
    N_MASKED,
    N_INPUT_LABELS,
    N_OUTPUT_LABELS,
    N_OUTPUT_MASKS,
];

/// The kind of id `id` (an unknown id, which no message here has, names the first kind).
const fn kind(id: u8) -> Kind {
    let mut k = 0;
    while k < KINDS.len() {
        if KINDS[k].id == id {
            return KINDS[k];
        }
        k += 1;
    }
    KINDS[0]
}

/// A message of kind id `ID` with its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message<'a, const ID: u8>(pub Cow<'a, [u8]>);

impl<const ID: u8> Encode for Message<'_, ID> {
    const KIND: Kind = kind(ID);
    fn encode<'a>(&'a self, _scratch: &'a mut Vec<u8>) -> &'a [u8] {
        &self.0
    }
}

/// A message received: its kind's id and its payload (the driver has checked both against
/// what the role expects).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incoming<'a> {
    /// The kind's id.
    pub kind: u8,
    /// The payload.
    pub bytes: &'a [u8],
}

impl<'a> Decode<'a> for Incoming<'a> {
    fn decode(kind: u8, bytes: &'a [u8]) -> Result<Self, DecodeError> {
        if KINDS.iter().any(|k| k.id == kind) {
            Ok(Incoming { kind, bytes })
        } else {
            Err(DecodeError(format!(
                "kind {kind:#04x} is not an authenticated-garbling message"
            )))
        }
    }
}

/// `n` bits packed least significant first ([`tessera_net::role::pack_bits`]) from the message
/// called `message` (a kind's name), or [`Error::Malformed`] if a padding bit past the last is
/// set or the bytes are too few.
pub fn unpack_bits(bytes: &[u8], n: usize, message: &'static str) -> Result<Vec<bool>, Error> {
    let padded = !n.is_multiple_of(8) && bytes.get(n / 8).is_some_and(|b| b >> (n % 8) != 0);
    if padded || bytes.len() < n.div_ceil(8) {
        return Err(Error::Malformed { message });
    }
    Ok((0..n)
        .map(|k| tessera_net::role::packed_bit(bytes, k))
        .collect())
}

/// The blocks of the message called `message`, or [`Error::Malformed`] if it is not a whole
/// number of them.
pub fn blocks<'a>(bytes: &'a [u8], message: &'static str) -> Result<Cow<'a, [Block]>, Error> {
    tessera_net::role::blocks(bytes).map_err(|_| Error::Malformed { message })
}
