//! An ideal OT for tests, behind the `ideal` feature: the sender hands the receiver its seed and
//! Δ in the clear at set-up, and both expand the seed into the same random correlated OTs, with
//! nothing more sent. It has no security at all; it lets the tests of the protocols above run
//! without the cost of OT extension and check that they use the flavours correctly, every one
//! derived by [`crate::Flavours`] as for the real providers.

use crate::Error;
use crate::choices::Choices;
use crate::flavours::{ProviderReceiver, ProviderSender};
use crate::traits::Flow;
use tessera_core::{Block, Prg};
use tessera_net::role::{self, Decode, Encode, Next, Outbox, Role};
use tessera_net::{Channel, DecodeError, Kind, Space, Spaces};

/// The sender's seed and Δ, in the clear.
pub const KEYS: Kind = Kind::new(0x2b, "ideal ot seed and delta");

/// The set-up message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keys {
    /// The seed both sides expand.
    pub seed: Block,
    /// The sender's Δ.
    pub delta: Block,
}

impl Encode for Keys {
    const KIND: Kind = KEYS;
    fn encode<'a>(&'a self, scratch: &'a mut Vec<u8>) -> &'a [u8] {
        scratch.clear();
        scratch.extend_from_slice(&self.seed.to_bytes());
        scratch.extend_from_slice(&self.delta.to_bytes());
        scratch
    }
}

impl Decode<'_> for Keys {
    fn decode(kind: u8, bytes: &[u8]) -> Result<Self, DecodeError> {
        if kind != KEYS.id {
            return Err(DecodeError(format!(
                "kind {kind:#04x} is not an ideal OT's message"
            )));
        }
        let b = role::array::<32>(bytes)?;
        Ok(Keys {
            seed: role::block(&b[..16])?,
            delta: role::block(&b[16..])?,
        })
    }
}

/// The random correlated OTs both sides expand from one seed: row j = (q_j, b_j) with q_j's
/// least significant bit cleared and b_j the bit it had.
#[derive(Debug)]
struct Stream {
    prg: Prg,
    delta: Block,
    space: Space,
    /// OTs made ahead: only counted, since the stream is the same either way.
    stocked: usize,
}

impl Stream {
    /// The next `out.len()` rows: the sender's q_j for `None`, else the receiver's
    /// q_j ⊕ c_j·Δ with c_j the choice bit j, or the random b_j beyond the choices.
    fn fill(&mut self, out: &mut [Block], choices: Option<Choices<'_>>) {
        self.prg.fill_blocks(out);
        for (j, row) in out.iter_mut().enumerate() {
            let b = row.lsb();
            *row = row.with_lsb(false);
            if let Some(choices) = choices {
                let c = if j < choices.len() { choices.get(j) } else { b };
                *row ^= self.delta & Block::mask(c);
            }
        }
        self.stocked = self.stocked.saturating_sub(out.len());
    }
}

/// The sender of the ideal OT.
#[derive(Debug)]
pub struct IdealSender(Stream);

/// The receiver of the ideal OT.
#[derive(Debug)]
pub struct IdealReceiver(Stream);

struct SendKeys(Keys);

impl Role for SendKeys {
    type Incoming<'a> = Keys;
    type Output = ();
    type Error = Error;
    fn step<O: Outbox>(&mut self, _: Option<Keys>, out: &mut O) -> Result<Next<()>, Error> {
        out.post(&self.0)?;
        Ok(Next::Done(()))
    }
}

struct ReceiveKeys;

impl Role for ReceiveKeys {
    type Incoming<'a> = Keys;
    type Output = Keys;
    type Error = Error;
    fn step<O: Outbox>(&mut self, keys: Option<Keys>, _: &mut O) -> Result<Next<Keys>, Error> {
        Ok(match keys {
            None => Next::exact(KEYS, 32),
            Some(keys) => Next::Done(keys),
        })
    }
}

impl IdealSender {
    /// Sets up with the peer's [`IdealReceiver::setup`] (one space from `spaces`): Δ is `delta`
    /// (its least significant bit taken as 1) or random.
    pub fn setup(
        channel: &mut dyn Channel,
        spaces: &mut Spaces,
        delta: Option<Block>,
        mut prg: Prg,
    ) -> Result<Self, Error> {
        let space = spaces.allocate()?;
        let delta = delta.unwrap_or_else(|| prg.random_block()).with_lsb(true);
        let keys = Keys {
            seed: prg.random_block(),
            delta,
        };
        role::drive(&mut SendKeys(keys), channel, space)?;
        Ok(IdealSender(Stream {
            prg: Prg::from_seed_block(keys.seed),
            delta,
            space,
            stocked: 0,
        }))
    }
}

impl IdealReceiver {
    /// Sets up with the peer's [`IdealSender::setup`].
    pub fn setup(channel: &mut dyn Channel, spaces: &mut Spaces) -> Result<Self, Error> {
        let space = spaces.allocate()?;
        let keys = role::drive(&mut ReceiveKeys, channel, space)?;
        Ok(IdealReceiver(Stream {
            prg: Prg::from_seed_block(keys.seed),
            delta: keys.delta,
            space,
            stocked: 0,
        }))
    }
}

impl ProviderSender for IdealSender {
    fn delta(&self) -> Block {
        self.0.delta
    }

    fn space(&self) -> Space {
        self.0.space
    }

    fn draw(&mut self, _: &mut dyn Channel, out: &mut [Block]) -> Result<(), Error> {
        self.0.fill(out, None);
        Ok(())
    }

    /// Only the OTs made ahead take flip bits; fresh ones are made with the choices.
    fn draw_chosen(&mut self, _: &mut dyn Channel, out: &mut [Block]) -> Result<usize, Error> {
        let k = self.0.stocked.min(out.len());
        self.0.fill(out, None);
        Ok(k)
    }

    fn prepare(&mut self, _: &mut dyn Channel, n: usize) -> Result<(), Error> {
        self.0.stocked += n;
        Ok(())
    }
}

impl ProviderReceiver for IdealReceiver {
    fn flow(&self) -> Flow {
        Flow::SenderToReceiver
    }

    fn space(&self) -> Space {
        self.0.space
    }

    fn draw(&mut self, _: &mut dyn Channel, out: &mut [Block]) -> Result<(), Error> {
        self.0.fill(out, Some(Choices::EMPTY));
        Ok(())
    }

    /// The OTs made ahead are random (adjusted by flip bits); the rest take `choices`: the
    /// ideal functionality hands the receiver q_j ⊕ c_j·Δ directly.
    fn draw_chosen(
        &mut self,
        _: &mut dyn Channel,
        choices: Choices<'_>,
        out: &mut [Block],
    ) -> Result<usize, Error> {
        let k = self.0.stocked.min(out.len());
        let (made, fresh) = out.split_at_mut(k);
        self.0.fill(made, Some(Choices::EMPTY));
        self.0.fill(fresh, Some(choices.skip(k)));
        Ok(k)
    }

    fn prepare(&mut self, _: &mut dyn Channel, n: usize) -> Result<(), Error> {
        self.0.stocked += n;
        Ok(())
    }
}
