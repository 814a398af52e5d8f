//! The OT flavours every provider offers, sender and receiver, so that protocols take any
//! implementation (IKNP, KOS, SoftSpoken, Ferret): random correlated OT and
//! correlated OT with a global offset Δ, random OT, and chosen-message OT. Every call draws the next OTs of the
//! provider's stream, any number of them: a provider may extend on demand or hand out OTs it
//! made in large batches ahead of use ([`CotSender::prepare`]).

use crate::Error;
use crate::choices::Choices;
use tessera_core::Block;
use tessera_net::Channel;

/// Random correlated OT with a global offset Δ, sender side: the receiver's choices are
/// random, and nothing beyond the OTs' own traffic is sent.
pub trait RcotSender {
    /// The global offset Δ (least significant bit 1, so it can serve as a free-XOR offset).
    /// Secret.
    fn delta(&self) -> Block;
    /// The next `out.len()` OTs: `out[j]` = q_j with least significant bit 0; the receiver
    /// gets q_j ⊕ b_j·Δ for a random bit b_j, which is therefore its block's least
    /// significant bit.
    fn send_random_correlated(
        &mut self,
        channel: &mut dyn Channel,
        out: &mut [Block],
    ) -> Result<(), Error>;
}

/// Which way a provider's messages go while it makes random correlated OTs. A party that runs
/// a sender and a receiver toward the same peer (both parties running the same provider) orders
/// the two by it, so that the directions overlap instead of taking turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Only from the receiver to the sender (semi-honest OT extension): both parties run their
    /// receivers first, which never wait, then their senders.
    ReceiverToSender,
    /// Only from the sender to the receiver (semi-honest Ferret): both run their senders first.
    SenderToReceiver,
    /// Both ways (the malicious checks' round trips): the parties take opposite orders, so one
    /// direction runs at a time.
    Both,
}

/// Random correlated OT, receiver side.
pub trait RcotReceiver {
    /// How this provider's messages flow while it makes random correlated OTs.
    fn flow(&self) -> Flow {
        Flow::Both
    }

    /// The next `out.len()` OTs: `out[j]` = q_j ⊕ b_j·Δ, with the random choice b_j as its
    /// least significant bit.
    fn receive_random_correlated(
        &mut self,
        channel: &mut dyn Channel,
        out: &mut [Block],
    ) -> Result<(), Error>;
}

/// Correlated OT with a global offset Δ ([`RcotSender::delta`]), sender side.
pub trait CotSender: RcotSender {
    /// The next `out.len()` OTs: `out[j]` = q_j; the receiver gets q_j if it chose 0 and
    /// q_j ⊕ Δ if it chose 1.
    fn send_correlated(
        &mut self,
        channel: &mut dyn Channel,
        out: &mut [Block],
    ) -> Result<(), Error>;
    /// Makes `n` correlated OTs ahead of use (with the peer's [`CotReceiver::prepare`]), for an
    /// offline phase: the next correlated draws take them first, whatever their sizes.
    fn prepare(&mut self, channel: &mut dyn Channel, n: usize) -> Result<(), Error>;
}

/// Correlated OT with a global offset Δ, receiver side.
pub trait CotReceiver {
    /// The next `choices.len()` OTs: `out[j]` = q_j ⊕ c_j·Δ for choice bit c_j.
    fn receive_correlated(
        &mut self,
        channel: &mut dyn Channel,
        choices: Choices<'_>,
        out: &mut [Block],
    ) -> Result<(), Error>;
    /// Makes `n` correlated OTs ahead of use, with choices not yet known (with the peer's
    /// [`CotSender::prepare`]): the next correlated draws take them first.
    fn prepare(&mut self, channel: &mut dyn Channel, n: usize) -> Result<(), Error>;
}

/// Random OT, sender side.
pub trait RotSender {
    /// The next `out.len()` OTs: two random messages each, of which the receiver gets the one
    /// it chose.
    fn send_random(
        &mut self,
        channel: &mut dyn Channel,
        out: &mut [(Block, Block)],
    ) -> Result<(), Error>;
}

/// Random OT, receiver side.
pub trait RotReceiver {
    /// The next `choices.len()` OTs: `out[j]` = the sender's message c_j.
    fn receive_random(
        &mut self,
        channel: &mut dyn Channel,
        choices: Choices<'_>,
        out: &mut [Block],
    ) -> Result<(), Error>;
}

/// Chosen-message OT, sender side.
pub trait OtSender {
    /// The receiver gets `messages[j].0` or `.1`, as it chose.
    fn send_chosen(
        &mut self,
        channel: &mut dyn Channel,
        messages: &[(Block, Block)],
    ) -> Result<(), Error>;
}

/// Chosen-message OT, receiver side.
pub trait OtReceiver {
    /// `out[j]` = the sender's `messages[j]` component c_j.
    fn receive_chosen(
        &mut self,
        channel: &mut dyn Channel,
        choices: Choices<'_>,
        out: &mut [Block],
    ) -> Result<(), Error>;
}
