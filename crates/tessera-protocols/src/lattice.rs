//! The RLWE keys of the lattice-based linear layers with one peer (Cheetah, Huang et al.,
//! USENIX Security 2022, §3): per plaintext ring, this party's secret key for the products it
//! asks for, made on first use and its public key sent to the peer once; and the peer's public
//! key for the products it answers, received once. Kept by the [`crate::Session`], so a
//! session's programs (a batch of inferences) share them.

use crate::Error;
use std::sync::Mutex;
use tessera_core::Prg;
use tessera_he::{Context, ParamSpec, PublicKey, SecretKey};
use tessera_net::{Channel, Kind as MessageKind, Tag};

/// The public keys, sent once per session, ring and direction.
pub const KEYS: MessageKind = MessageKind::new(0x57, "lattice public key");

/// The keys with one peer for one plaintext ring 2^ℓ.
pub struct LatticeKeys {
    ctx: Context,
    /// Ours, and whether its public key has been sent.
    own: Option<(SecretKey, bool)>,
    /// The peer's.
    theirs: Option<PublicKey>,
}

impl std::fmt::Debug for LatticeKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LatticeKeys")
            .field("plain_bits", &self.ctx.params().plain_bits())
            .field("own", &self.own.is_some())
            .field("theirs", &self.theirs.is_some())
            .finish()
    }
}

impl LatticeKeys {
    /// No keys yet, under the parameters for the ring 2^`plain_bits`
    /// ([`ParamSpec::for_ring`]).
    pub fn new(plain_bits: u32) -> Result<Self, Error> {
        let ctx = context(plain_bits)?;
        Ok(LatticeKeys {
            ctx,
            own: None,
            theirs: None,
        })
    }

    /// The ring 2^ℓ's ℓ.
    pub fn plain_bits(&self) -> u32 {
        self.ctx.params().plain_bits()
    }

    /// The parameters.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Our secret key, to ask for products with: made from `prg` on first use, its public key
    /// then sent on `tag` (the peer reads it in [`LatticeKeys::answering`]).
    pub fn asking(
        &mut self,
        channel: &mut impl Channel,
        tag: Tag,
        prg: &mut Prg,
    ) -> Result<(&Context, &SecretKey), Error> {
        let ctx = &self.ctx;
        let (sk, sent) = self
            .own
            .get_or_insert_with(|| (SecretKey::generate(ctx, prg), false));
        if !*sent {
            let pk = PublicKey::generate(ctx, sk, prg);
            channel.send(tag, &pk.to_bytes(ctx))?;
            *sent = true;
        }
        Ok((ctx, sk))
    }

    /// The peer's public key, to answer its products with: received on `tag` the first time
    /// and checked ([`PublicKey::from_bytes`]: a malformed key is the peer's fault).
    pub fn answering(
        &mut self,
        channel: &mut impl Channel,
        tag: Tag,
        peer: usize,
    ) -> Result<(&Context, &PublicKey), Error> {
        let ctx = &self.ctx;
        if self.theirs.is_none() {
            let mut bytes = vec![0u8; PublicKey::byte_len(ctx)];
            channel.recv_into(tag, &mut bytes)?;
            let pk = PublicKey::from_bytes(ctx, &bytes).map_err(|e| peers(e, peer, KEYS))?;
            self.theirs = Some(pk);
        }
        match &self.theirs {
            Some(pk) => Ok((ctx, pk)),
            None => Err(Error::Input("no public key from the peer".into())),
        }
    }
}

/// The parameters for the ring 2^`plain_bits` ([`ParamSpec::for_ring`]), made once per
/// process (their primes found and transform plans built) and cloned after: the cost model
/// asks for them per linear map.
pub fn context(plain_bits: u32) -> Result<Context, Error> {
    static MADE: Mutex<Vec<(u32, Context)>> = Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, ctx)) = made.iter().find(|(bits, _)| *bits == plain_bits) {
        return Ok(ctx.clone());
    }
    let ctx = Context::new(&ParamSpec::for_ring(plain_bits)).map_err(local)?;
    made.push((plain_bits, ctx.clone()));
    Ok(ctx)
}

/// A lattice error of ours (parameters, lengths, a noise budget the weights exceed): the
/// caller's.
pub fn local(e: tessera_he::Error) -> Error {
    Error::Input(format!("lattice: {e}"))
}

/// A lattice error on what `peer` sent in a message of `kind`: malformed words are the peer's
/// fault; any other error is ours ([`local`]).
pub fn peers(e: tessera_he::Error, peer: usize, kind: MessageKind) -> Error {
    match e {
        tessera_he::Error::Malformed { what, detail } => {
            Error::Net(tessera_net::Error::Malformed {
                party: peer,
                name: kind.name,
                what: format!("{what}: {detail}"),
            })
        }
        e => local(e),
    }
}
