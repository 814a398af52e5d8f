//! Every OT flavour derived once from a provider's random correlated OT: a provider (OT
//! extension, Ferret, the ideal OT of the tests) implements [`ProviderSender`] and
//! [`ProviderReceiver`], and [`Flavours`] gives it every trait of [`crate::traits`].
//!
//! - Correlated OT with chosen choices from random ones by Beaver's derandomisation (CRYPTO
//!   1995): the receiver sends d_j = c_j ⊕ r_j, one bit per OT, and the sender adds d_j·Δ. A
//!   provider that can take the choices while it makes the OTs (OT extension puts them into its
//!   corrections, IKNP §3) says so, and only its OTs made ahead are adjusted.
//! - Random OT by hashing the correlated rows with the tweakable correlation-robust hash of
//!   Guo, Katz, Wang and Yu (S&P 2020, §7.2), the OT's position as tweak: (H(q_j, j),
//!   H(q_j ⊕ Δ, j)) for the sender, H(q_j ⊕ c_j·Δ, j) for the receiver.
//! - Chosen-message OT by masking the two messages with those keys (two blocks per OT).

use crate::Error;
use crate::choices::Choices;
use crate::extension::{
    AdjustReceiver, AdjustSender, BATCH, Hasher, MaskedReceiver, MaskedSender, check_len,
    hash_pairs, hash_rows,
};
use crate::traits::{
    CotReceiver, CotSender, Flow, OtReceiver, OtSender, RcotReceiver, RcotSender, RotReceiver,
    RotSender,
};
use tessera_core::Block;
use tessera_net::{Channel, Space, role};

/// What an OT provider's sender implements: random correlated OT with a global Δ, made on
/// demand or ahead of use. [`Flavours`] derives the rest.
pub trait ProviderSender: Send {
    /// The global offset Δ (least significant bit 1). Secret.
    fn delta(&self) -> Block;
    /// The space of the provider's protocol instance, which the derived flavours' messages
    /// (flip bits, masked messages) share.
    fn space(&self) -> Space;
    /// The next `out.len()` random correlated OTs: q_j with least significant bit 0.
    fn draw(&mut self, channel: &mut dyn Channel, out: &mut [Block]) -> Result<(), Error>;
    /// The next `out.len()` OTs whose choices the receiver picks; returns how many from the
    /// front were made with random choices, to be adjusted by flip bits (the peer's
    /// [`ProviderReceiver::draw_chosen`] returns the same). By default all of them.
    fn draw_chosen(
        &mut self,
        channel: &mut dyn Channel,
        out: &mut [Block],
    ) -> Result<usize, Error> {
        self.draw(channel, out)?;
        Ok(out.len())
    }
    /// Makes `n` OTs ahead of use, with the peer's [`ProviderReceiver::prepare`]: the next
    /// draws take them first.
    fn prepare(&mut self, channel: &mut dyn Channel, n: usize) -> Result<(), Error>;
}

/// What an OT provider's receiver implements (see [`ProviderSender`]).
pub trait ProviderReceiver: Send {
    /// How the provider's messages flow while it makes random correlated OTs.
    fn flow(&self) -> Flow;
    /// The space of the provider's protocol instance (see [`ProviderSender::space`]).
    fn space(&self) -> Space;
    /// The next `out.len()` random correlated OTs: q_j ⊕ b_j·Δ with the random choice b_j as
    /// the least significant bit.
    fn draw(&mut self, channel: &mut dyn Channel, out: &mut [Block]) -> Result<(), Error>;
    /// The next `out.len()` OTs for `choices` (as long as `out`): returns k, the number from
    /// the front made with random choices (to be adjusted by flip bits); the rest are
    /// q_j ⊕ c_j·Δ already. By default all are random.
    fn draw_chosen(
        &mut self,
        channel: &mut dyn Channel,
        choices: Choices<'_>,
        out: &mut [Block],
    ) -> Result<usize, Error> {
        let _ = choices;
        self.draw(channel, out)?;
        Ok(out.len())
    }
    /// Makes `n` OTs ahead of use, with the peer's [`ProviderSender::prepare`].
    fn prepare(&mut self, channel: &mut dyn Channel, n: usize) -> Result<(), Error>;
}

/// A provider with every OT flavour derived from its random correlated OT: the same on both
/// sides, so the sender's `Flavours` talks to the receiver's.
pub struct Flavours<P> {
    provider: P,
    hasher: Hasher,
    /// OTs hashed so far (random and chosen-message OT): the next one's tweak.
    hashed: u64,
    /// Correlated rows of the OTs being hashed.
    rows: Vec<Block>,
}

impl<P: std::fmt::Debug> std::fmt::Debug for Flavours<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flavours")
            .field("provider", &self.provider)
            .field("hashed", &self.hashed)
            .finish_non_exhaustive()
    }
}

impl<P> Flavours<P> {
    /// Every flavour of `provider`.
    pub fn new(provider: P) -> Self {
        Flavours {
            provider,
            hasher: Hasher::new(),
            hashed: 0,
            rows: Vec::new(),
        }
    }

    /// The tweak of the next `n` hashed OTs, counted as hashed.
    fn tweak(&mut self, n: usize) -> u64 {
        let first = self.hashed;
        self.hashed += n as u64;
        first
    }
}

impl<P: ProviderSender> Flavours<P> {
    /// Correlated OTs the receiver chooses into `out`: the provider's, adjusted to the flip
    /// bits where it made them with random choices.
    fn correlated(
        provider: &mut P,
        channel: &mut dyn Channel,
        out: &mut [Block],
    ) -> Result<(), Error> {
        let k = provider.draw_chosen(channel, out)?;
        if k > 0 {
            let mut adjust = AdjustSender {
                rows: &mut out[..k],
                delta: provider.delta(),
            };
            role::drive(&mut adjust, channel, provider.space())?;
        }
        Ok(())
    }
}

impl<P: ProviderSender> RcotSender for Flavours<P> {
    fn delta(&self) -> Block {
        self.provider.delta()
    }

    fn send_random_correlated(
        &mut self,
        channel: &mut dyn Channel,
        out: &mut [Block],
    ) -> Result<(), Error> {
        self.provider.draw(channel, out)
    }
}

impl<P: ProviderSender> CotSender for Flavours<P> {
    fn send_correlated(
        &mut self,
        channel: &mut dyn Channel,
        out: &mut [Block],
    ) -> Result<(), Error> {
        // In one piece: a provider that makes OTs in iterations (Ferret) writes whole ones
        // straight into `out`, and one flip-bit message covers them all.
        Self::correlated(&mut self.provider, channel, out)
    }

    fn prepare(&mut self, channel: &mut dyn Channel, n: usize) -> Result<(), Error> {
        self.provider.prepare(channel, n)
    }
}

impl<P: ProviderSender> RotSender for Flavours<P> {
    fn send_random(
        &mut self,
        channel: &mut dyn Channel,
        out: &mut [(Block, Block)],
    ) -> Result<(), Error> {
        let mut rows = std::mem::take(&mut self.rows);
        for part in out.chunks_mut(BATCH) {
            rows.resize(part.len(), Block::ZERO);
            Self::correlated(&mut self.provider, channel, &mut rows)?;
            let first = self.tweak(part.len());
            let delta = self.provider.delta();
            hash_pairs(&mut self.hasher, &rows, first.into(), delta, part);
        }
        self.rows = rows;
        Ok(())
    }
}

impl<P: ProviderSender> OtSender for Flavours<P> {
    fn send_chosen(
        &mut self,
        channel: &mut dyn Channel,
        messages: &[(Block, Block)],
    ) -> Result<(), Error> {
        let mut rows = std::mem::take(&mut self.rows);
        for part in messages.chunks(BATCH) {
            rows.resize(part.len(), Block::ZERO);
            Self::correlated(&mut self.provider, channel, &mut rows)?;
            let first = self.tweak(part.len());
            let (delta, space) = (self.provider.delta(), self.provider.space());
            let mut masked = MaskedSender::new(&rows, delta, first, part, &mut self.hasher);
            role::drive(&mut masked, channel, space)?;
        }
        self.rows = rows;
        Ok(())
    }
}

impl<P: ProviderReceiver> Flavours<P> {
    /// Correlated OTs for `choices` into `out` (as long): the provider's, the flip bits sent
    /// for those it made with random choices.
    fn correlated_for(
        provider: &mut P,
        channel: &mut dyn Channel,
        choices: Choices<'_>,
        out: &mut [Block],
    ) -> Result<(), Error> {
        let k = provider.draw_chosen(channel, choices, out)?;
        if k > 0 {
            let mut adjust = AdjustReceiver {
                stock: &out[..k],
                chosen: choices.take(k),
            };
            role::drive(&mut adjust, channel, provider.space())?;
            // q_j ⊕ r_j·Δ becomes q_j ⊕ c_j·Δ on the sender's side: the row stays.
        }
        Ok(())
    }
}

impl<P: ProviderReceiver> RcotReceiver for Flavours<P> {
    fn flow(&self) -> Flow {
        self.provider.flow()
    }

    fn receive_random_correlated(
        &mut self,
        channel: &mut dyn Channel,
        out: &mut [Block],
    ) -> Result<(), Error> {
        self.provider.draw(channel, out)
    }
}

impl<P: ProviderReceiver> CotReceiver for Flavours<P> {
    fn receive_correlated(
        &mut self,
        channel: &mut dyn Channel,
        choices: Choices<'_>,
        out: &mut [Block],
    ) -> Result<(), Error> {
        check_len("correlated OT", "outputs", out.len(), choices.len())?;
        Self::correlated_for(&mut self.provider, channel, choices, out)
    }

    fn prepare(&mut self, channel: &mut dyn Channel, n: usize) -> Result<(), Error> {
        self.provider.prepare(channel, n)
    }
}

impl<P: ProviderReceiver> RotReceiver for Flavours<P> {
    fn receive_random(
        &mut self,
        channel: &mut dyn Channel,
        choices: Choices<'_>,
        out: &mut [Block],
    ) -> Result<(), Error> {
        check_len("random OT", "outputs", out.len(), choices.len())?;
        let mut rows = std::mem::take(&mut self.rows);
        for (part, c) in out.chunks_mut(BATCH).zip(choices.chunks(BATCH)) {
            rows.resize(part.len(), Block::ZERO);
            Self::correlated_for(&mut self.provider, channel, c, &mut rows)?;
            let first = self.tweak(part.len());
            hash_rows(&self.hasher, &rows, first.into(), part);
        }
        self.rows = rows;
        Ok(())
    }
}

impl<P: ProviderReceiver> OtReceiver for Flavours<P> {
    fn receive_chosen(
        &mut self,
        channel: &mut dyn Channel,
        choices: Choices<'_>,
        out: &mut [Block],
    ) -> Result<(), Error> {
        check_len("chosen-message OT", "outputs", out.len(), choices.len())?;
        let mut rows = std::mem::take(&mut self.rows);
        for (part, c) in out.chunks_mut(BATCH).zip(choices.chunks(BATCH)) {
            rows.resize(part.len(), Block::ZERO);
            Self::correlated_for(&mut self.provider, channel, c, &mut rows)?;
            let first = self.tweak(part.len());
            let space = self.provider.space();
            let mut masked = MaskedReceiver::new(&rows, first, c, part, &mut self.hasher);
            role::drive(&mut masked, channel, space)?;
        }
        self.rows = rows;
        Ok(())
    }
}
