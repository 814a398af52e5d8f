//! Protocol cores without I/O and the one driver that moves them over a channel (the shape of
//! mpz's `ot/mpz-ot-core` cores and `ot/mpz-ot` drivers).
//!
//! A protocol's messages are typed values that encode and decode themselves ([`Encode`],
//! [`Decode`]), checking their own bounds. Each role of a protocol is a state machine
//! ([`Role`]): a step takes the peer's message (none for the first step), posts the messages
//! it produces to an [`Outbox`], and says what it expects next or that it is done. [`drive`]
//! runs a role over a [`Channel`]: it posts through the channel, receives exactly the message
//! the role expects (tag and length checked before the payload is read), decodes it and steps
//! again. Tests step two roles against each other with no channel at all, and cheat by
//! editing a message value on the way ([`Recorder`]).

use crate::wire::{Frame, Kind, Len, Space};
use crate::{Channel, DecodeError, Error};
use std::borrow::Cow;
use tessera_core::Block;

/// A payload of blocks, read without a copy where the bytes are 16-byte aligned (as a
/// received [`Frame`] is) and copied otherwise.
pub fn blocks(bytes: &[u8]) -> Result<Cow<'_, [Block]>, DecodeError> {
    if !bytes.len().is_multiple_of(16) {
        return Err(DecodeError(format!(
            "{} bytes is not a whole number of blocks",
            bytes.len()
        )));
    }
    Ok(match bytemuck::try_cast_slice(bytes) {
        Ok(b) => Cow::Borrowed(b),
        Err(_) => Cow::Owned(
            bytes
                .chunks_exact(16)
                .map(|c| Block::from_bytes(c.try_into().unwrap_or_default()))
                .collect(),
        ),
    })
}

/// A payload of exactly `N` bytes.
pub fn array<const N: usize>(bytes: &[u8]) -> Result<[u8; N], DecodeError> {
    bytes
        .try_into()
        .map_err(|_| DecodeError(format!("{} bytes, expected {N}", bytes.len())))
}

/// Bits packed eight to a byte, least significant first (the payload of bit messages).
pub fn pack_bits(bits: impl ExactSizeIterator<Item = bool>) -> Vec<u8> {
    let mut bytes = vec![0u8; bits.len().div_ceil(8)];
    for (k, b) in bits.enumerate() {
        bytes[k / 8] |= u8::from(b) << (k % 8);
    }
    bytes
}

/// Bit `k` of bits packed by [`pack_bits`] (the caller checks the length).
pub fn packed_bit(bytes: &[u8], k: usize) -> bool {
    (bytes[k / 8] >> (k % 8)) & 1 == 1
}

/// A payload of exactly one block.
pub fn block(bytes: &[u8]) -> Result<Block, DecodeError> {
    array::<16>(bytes).map(Block::from_bytes)
}

/// A message a role sends.
pub trait Encode {
    /// Its kind within the protocol.
    const KIND: Kind;
    /// Its payload: borrowed where the message is already bytes (blocks), else written into
    /// `scratch`.
    fn encode<'a>(&'a self, scratch: &'a mut Vec<u8>) -> &'a [u8];
}

/// A message a role receives, read from its payload (borrowing it where it can).
pub trait Decode<'a>: Sized {
    /// The message of kind id `kind` from `bytes`, or why the bytes are not one.
    fn decode(kind: u8, bytes: &'a [u8]) -> Result<Self, DecodeError>;
}

/// Where a role posts its messages: a channel when driven, a [`Recorder`] in tests.
pub trait Outbox {
    /// Posts one message.
    fn post<M: Encode>(&mut self, message: &M) -> Result<(), Error>;
    /// Lets everything posted so far go out before the role goes on computing (a hint for
    /// pipelining; a channel flushes).
    fn flush(&mut self) -> Result<(), Error>;
}

/// What a role does after a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next<T> {
    /// It waits for a message of this kind and length.
    Expect(Expect),
    /// It is done, with this result.
    Done(T),
}

/// The message a role waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expect {
    /// Its kind.
    pub kind: Kind,
    /// Its length.
    pub len: Len,
}

impl<T> Next<T> {
    /// Waits for a message of kind `kind` of exactly `len` bytes.
    pub fn exact(kind: Kind, len: usize) -> Self {
        Next::Expect(Expect {
            kind,
            len: Len::Exact(len),
        })
    }
}

/// One role of a protocol, as a state machine; see the module documentation.
pub trait Role {
    /// The messages this role receives.
    type Incoming<'a>: Decode<'a>;
    /// The role's result.
    type Output;
    /// What a step can fail with (a peer's misbehaviour, a network error on the way).
    type Error: From<Error>;

    /// One step: `incoming` is `None` on the first step and then the message the last step
    /// expected.
    fn step<O: Outbox>(
        &mut self,
        incoming: Option<Self::Incoming<'_>>,
        out: &mut O,
    ) -> Result<Next<Self::Output>, Self::Error>;
}

/// Posts through a channel, in one protocol instance's space.
struct ChannelOutbox<'c, C: ?Sized> {
    channel: &'c mut C,
    space: Space,
    scratch: Vec<u8>,
}

impl<C: Channel + ?Sized> Outbox for ChannelOutbox<'_, C> {
    fn post<M: Encode>(&mut self, message: &M) -> Result<(), Error> {
        let payload = message.encode(&mut self.scratch);
        self.channel.send(self.space.tag(M::KIND), payload)
    }
    fn flush(&mut self) -> Result<(), Error> {
        self.channel.flush()
    }
}

/// Runs `role` to its end over `channel`, its messages in `space`.
pub fn drive<R: Role, C: Channel + ?Sized>(
    role: &mut R,
    channel: &mut C,
    space: Space,
) -> Result<R::Output, R::Error> {
    let mut out = ChannelOutbox {
        channel,
        space,
        scratch: Vec::new(),
    };
    let mut frame = Frame::new();
    let mut next = role.step(None, &mut out)?;
    loop {
        match next {
            Next::Done(result) => {
                out.flush()?;
                return Ok(result);
            }
            Next::Expect(e) => {
                out.channel
                    .recv_frame(space.tag(e.kind), e.len, &mut frame)?;
                let message = R::Incoming::decode(e.kind.id, frame.bytes()).map_err(|d| {
                    Error::Malformed {
                        party: out.channel.peer(),
                        name: e.kind.name,
                        what: d.0,
                    }
                })?;
                next = role.step(Some(message), &mut out)?;
            }
        }
    }
}

/// An outbox that keeps what is posted, for stepping roles without a channel.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    /// The messages posted, oldest first: kind and payload.
    pub posted: Vec<(Kind, Vec<u8>)>,
}

impl Recorder {
    /// Takes the oldest message posted, if any.
    pub fn take(&mut self) -> Option<(Kind, Vec<u8>)> {
        (!self.posted.is_empty()).then(|| self.posted.remove(0))
    }
}

impl Outbox for Recorder {
    fn post<M: Encode>(&mut self, message: &M) -> Result<(), Error> {
        let mut scratch = Vec::new();
        let payload = message.encode(&mut scratch).to_vec();
        self.posted.push((M::KIND, payload));
        Ok(())
    }
    fn flush(&mut self) -> Result<(), Error> {
        Ok(())
    }
}

/// What [`run_pair`] gives back for each role: its result if it finished or failed, `None`
/// if it was left waiting.
pub type Finished<R> = Option<Result<<R as Role>::Output, <R as Role>::Error>>;

/// Which of two roles stepped by [`run_pair`] posted a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The first role.
    First,
    /// The second role.
    Second,
}

/// Steps two roles against each other with no channel: each message one posts is handed,
/// after `edit` may change its payload, to the other when it expects one. The kind and length
/// are checked as a channel would. Ends when both are done or one fails (the other then
/// stops where it is); panics if neither can move (a protocol bug).
pub fn run_pair<A: Role, B: Role>(
    a: &mut A,
    b: &mut B,
    mut edit: impl FnMut(Side, Kind, &mut Vec<u8>),
) -> (Finished<A>, Finished<B>) {
    let (mut to_a, mut to_b) = (Recorder::default(), Recorder::default());
    let mut next_a = a.step(None, &mut to_b).map_err(Some);
    let mut next_b = b.step(None, &mut to_a).map_err(Some);
    loop {
        let (a_waits, b_waits) = (
            matches!(next_a, Ok(Next::Expect(_))),
            matches!(next_b, Ok(Next::Expect(_))),
        );
        if next_a.is_err() || next_b.is_err() || (!a_waits && !b_waits) {
            break;
        }
        let mut moved = false;
        if let Ok(Next::Expect(e)) = &next_a {
            let e = *e;
            if let Some((kind, mut bytes)) = to_a.take() {
                edit(Side::Second, kind, &mut bytes);
                next_a = deliver(a, e, kind, &bytes, &mut to_b);
                moved = true;
            }
        }
        if let Ok(Next::Expect(e)) = &next_b {
            let e = *e;
            if let Some((kind, mut bytes)) = to_b.take() {
                edit(Side::First, kind, &mut bytes);
                next_b = deliver(b, e, kind, &bytes, &mut to_a);
                moved = true;
            }
        }
        assert!(moved, "neither role can move: both wait for a message");
    }
    (finished(next_a), finished(next_b))
}

/// A role's result if it finished, or failed.
fn finished<T, E>(n: Result<Next<T>, Option<E>>) -> Option<Result<T, E>> {
    match n {
        Ok(Next::Done(v)) => Some(Ok(v)),
        Err(Some(e)) => Some(Err(e)),
        _ => None,
    }
}

fn deliver<R: Role>(
    role: &mut R,
    e: Expect,
    kind: Kind,
    bytes: &[u8],
    out: &mut Recorder,
) -> Result<Next<R::Output>, Option<R::Error>> {
    let fail = |what: String| {
        Some(R::Error::from(Error::Malformed {
            party: 0,
            name: e.kind.name,
            what,
        }))
    };
    if kind.id != e.kind.id {
        return Err(fail(format!("got message '{}' instead", kind.name)));
    }
    let fits = match e.len {
        Len::Exact(n) => bytes.len() == n,
        Len::AtMost(n) => bytes.len() <= n,
    };
    if !fits {
        return Err(fail(format!(
            "{} bytes do not fit {:?}",
            bytes.len(),
            e.len
        )));
    }
    // A received frame is 16-byte aligned; so is this copy.
    let mut frame = Frame::new();
    frame.prepare(bytes.len()).copy_from_slice(bytes);
    let message = R::Incoming::decode(kind.id, frame.bytes()).map_err(|d| fail(d.0))?;
    role.step(Some(message), out).map_err(Some)
}
