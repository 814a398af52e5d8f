//! The one choice point for OT providers: which protocol a party runs with a peer
//! ([`OtChoice`]), and its sender and receiver as trait objects offering every flavour.

use crate::Error;
use crate::extension::{ExtensionReceiver, ExtensionSender, Protocol, Security};
use crate::ferret::{FerretReceiver, FerretSender, Params};
use crate::flavours::Flavours;
use crate::traits::{
    CotReceiver, CotSender, OtReceiver, OtSender, RcotReceiver, RotReceiver, RotSender,
};
use tessera_core::{Block, Prg};
use tessera_net::{Channel, Spaces};

/// An OT provider's sender side: every flavour.
pub trait OtSending: CotSender + RotSender + OtSender + Send {}
impl<T: CotSender + RotSender + OtSender + Send> OtSending for T {}

/// An OT provider's receiver side: every flavour.
pub trait OtReceiving: RcotReceiver + CotReceiver + RotReceiver + OtReceiver + Send {}
impl<T: RcotReceiver + CotReceiver + RotReceiver + OtReceiver + Send> OtReceiving for T {}

/// A party's sender to a peer and receiver from it.
pub type OtPair = (Box<dyn OtSending>, Box<dyn OtReceiving>);

/// Which OT a party runs with a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OtChoice {
    /// OT extension: SoftSpoken with some k (IKNP is k = 1), semi-honest or with the KOS check.
    Extension(Protocol),
    /// Ferret silent OT with these LPN parameters, bootstrapped from SoftSpoken.
    Ferret(Params, Security),
    /// The ideal OT of the tests ([`crate::ideal`]): no security at all.
    #[cfg(feature = "ideal")]
    InsecureIdeal,
}

impl OtChoice {
    /// The bytes both parties send per random correlated OT, amortised over long runs (the
    /// base OTs, a set-up iteration and a consistency check's constant left out): OT extension
    /// sends one row of 128/k bits per OT (SoftSpoken, k = 1 for IKNP and KOS); Ferret sends per
    /// main iteration 2·depth + 1 blocks per tree (the masked level sums and c) for the
    /// iteration's yield.
    pub fn bytes_per_cot(self) -> f64 {
        match self {
            OtChoice::Extension(p) => 16.0 / p.k() as f64,
            OtChoice::Ferret(params, security) => {
                let main = params.main;
                let sent = main.t * 16 * (2 * main.depth + 1);
                sent as f64 / params.yield_per_iteration(security).max(1) as f64
            }
            #[cfg(feature = "ideal")]
            OtChoice::InsecureIdeal => 0.0,
        }
    }

    /// The adversary the provider is secure against (the ideal OT of the tests counts as
    /// semi-honest, though it is secure against none).
    pub fn security(self) -> Security {
        match self {
            OtChoice::Extension(p) => p.security(),
            OtChoice::Ferret(_, s) => s,
            #[cfg(feature = "ideal")]
            OtChoice::InsecureIdeal => Security::SemiHonest,
        }
    }

    /// The extension's name ([`Protocol::name`]), or `ferret` / `ferret-malicious`.
    pub fn name(self) -> String {
        match self {
            OtChoice::Extension(p) => p.name(),
            OtChoice::Ferret(_, Security::SemiHonest) => "ferret".into(),
            OtChoice::Ferret(_, Security::Malicious) => "ferret-malicious".into(),
            #[cfg(feature = "ideal")]
            OtChoice::InsecureIdeal => "insecure-ideal".into(),
        }
    }

    /// Sets up the sender with the peer's [`OtChoice::receiver`], taking its spaces from
    /// `spaces` as the peer does.
    pub fn sender(
        self,
        channel: &mut dyn Channel,
        spaces: &mut Spaces,
        prg: Prg,
    ) -> Result<Box<dyn OtSending>, Error> {
        self.sender_with_delta(channel, spaces, None, prg)
    }

    /// [`OtChoice::sender`] with the global Δ `delta` (its least significant bit taken as 1), or
    /// a random one for `None`.
    pub fn sender_with_delta(
        self,
        channel: &mut dyn Channel,
        spaces: &mut Spaces,
        delta: Option<Block>,
        prg: Prg,
    ) -> Result<Box<dyn OtSending>, Error> {
        Ok(match self {
            OtChoice::Extension(p) => Box::new(Flavours::new(ExtensionSender::setup_with_delta(
                channel, spaces, p, delta, prg,
            )?)),
            OtChoice::Ferret(p, s) => Box::new(Flavours::new(FerretSender::setup_with_delta(
                channel,
                spaces,
                (p, s),
                delta,
                prg,
            )?)),
            #[cfg(feature = "ideal")]
            OtChoice::InsecureIdeal => Box::new(Flavours::new(crate::ideal::IdealSender::setup(
                channel, spaces, delta, prg,
            )?)),
        })
    }

    /// Sets up the receiver with the peer's [`OtChoice::sender`].
    pub fn receiver(
        self,
        channel: &mut dyn Channel,
        spaces: &mut Spaces,
        prg: Prg,
    ) -> Result<Box<dyn OtReceiving>, Error> {
        Ok(match self {
            OtChoice::Extension(p) => Box::new(Flavours::new(ExtensionReceiver::setup(
                channel, spaces, p, prg,
            )?)),
            OtChoice::Ferret(p, s) => Box::new(Flavours::new(FerretReceiver::setup(
                channel, spaces, p, s, prg,
            )?)),
            #[cfg(feature = "ideal")]
            OtChoice::InsecureIdeal => Box::new(Flavours::new(crate::ideal::IdealReceiver::setup(
                channel, spaces,
            )?)),
        })
    }

    /// This party's sender to a peer and receiver from it, set up in an order both agree on:
    /// the party with `sender_first` sets up its sender first, the peer its receiver.
    pub fn pair(
        self,
        channel: &mut dyn Channel,
        spaces: &mut Spaces,
        sender_first: bool,
        prg: &mut Prg,
    ) -> Result<OtPair, Error> {
        let (s_prg, r_prg) = (
            Prg::from_seed_block(prg.random_block()),
            Prg::from_seed_block(prg.random_block()),
        );
        if sender_first {
            let s = self.sender(channel, spaces, s_prg)?;
            Ok((s, self.receiver(channel, spaces, r_prg)?))
        } else {
            let r = self.receiver(channel, spaces, r_prg)?;
            Ok((self.sender(channel, spaces, s_prg)?, r))
        }
    }
}
