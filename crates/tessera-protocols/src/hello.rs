//! The one hello of the two-party protocols (Yao and its streamed, chained and inter-party
//! variants, Boolean circuits, hybrid programs): each party sends its version, its variant of
//! the protocol (Yao's garbling scheme, the Boolean sharing), its side and the fingerprint of
//! everything both must agree on, with a public random block; each checks the peer's and
//! names the first difference. The fingerprint is SHA-256 of the protocol's domain and what
//! it hashes ([`fingerprint`]).

use crate::{Error, Session};
use sha2::{Digest, Sha256};
use tessera_core::Block;
use tessera_net::role::{self, Decode, Encode, Next, Outbox, Role};
use tessera_net::{DecodeError, Kind, Space};

/// What a party says in its hello.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hello {
    /// The protocol's version.
    pub version: u8,
    /// The protocol's variant: Yao's garbling scheme, the Boolean sharing; 0 where it has none.
    pub variant: u8,
    /// The party's side (Yao: 0 the garbler, 1 the evaluator).
    pub side: u8,
    /// The fingerprint of everything both parties must agree on.
    pub fingerprint: [u8; 32],
    /// A public random block (Yao's garbler's session block), zero where there is none.
    pub nonce: Block,
}

/// The hello's kind, the same in every protocol's space (no protocol uses its id otherwise).
pub const HELLO: Kind = Kind::new(0x0f, "hello");

/// The length of a hello on the wire.
pub const HELLO_LEN: usize = 3 + 32 + 16;

/// How a protocol names what its hello carries, for the mismatch messages.
#[derive(Clone, Copy, Debug)]
pub struct Names {
    /// The protocol, as in "the peer speaks ... version 3".
    pub protocol: &'static str,
    /// The protocol's variants, or `None` where it has none.
    pub variant: Option<Variants>,
    /// A side's name, as in "both parties are the garbler".
    pub side: fn(u8) -> &'static str,
    /// What a different fingerprint means.
    pub fingerprint: &'static str,
}

/// How a protocol names its variants.
#[derive(Clone, Copy, Debug)]
pub struct Variants {
    /// What a variant is, as in "garbling scheme prf here, mi at the peer".
    pub what: &'static str,
    /// A variant's name from its code.
    pub name: fn(u8) -> &'static str,
}

/// A fingerprint: SHA-256 of the protocol's `domain` (length-prefixed) and of what `feed`
/// hashes after it: the one way every protocol fingerprints what both parties must agree on.
pub fn fingerprint(domain: &[u8], feed: impl FnOnce(&mut Sha256)) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update((domain.len() as u64).to_le_bytes());
    h.update(domain);
    feed(&mut h);
    h.finalize().into()
}

/// Sends `ours` to `peer` in the protocol instance's `space` and checks the peer's hello:
/// returns it, or [`Error::Mismatch`] naming the first difference.
pub fn exchange(
    session: &mut Session,
    (peer, space): (usize, Space),
    ours: Hello,
    names: Names,
) -> Result<Hello, Error> {
    let mut hello = Exchange { ours, names };
    role::drive(&mut hello, &mut session.channel(peer), space)
}

impl Encode for Hello {
    const KIND: Kind = HELLO;
    fn encode<'a>(&'a self, scratch: &'a mut Vec<u8>) -> &'a [u8] {
        scratch.clear();
        scratch.extend_from_slice(&[self.version, self.variant, self.side]);
        scratch.extend_from_slice(&self.fingerprint);
        scratch.extend_from_slice(&self.nonce.to_bytes());
        scratch
    }
}

impl Decode<'_> for Hello {
    fn decode(_kind: u8, bytes: &[u8]) -> Result<Self, DecodeError> {
        let b = role::array::<HELLO_LEN>(bytes)?;
        let mut fingerprint = [0u8; 32];
        fingerprint.copy_from_slice(&b[3..35]);
        Ok(Hello {
            version: b[0],
            variant: b[1],
            side: b[2],
            fingerprint,
            nonce: role::block(&b[35..])?,
        })
    }
}

/// Both parties' hello as a role: posts ours, checks theirs.
struct Exchange {
    ours: Hello,
    names: Names,
}

impl Exchange {
    /// The first difference between our hello and `theirs`, in words.
    fn problem(&self, theirs: &Hello) -> Option<String> {
        let (ours, names) = (&self.ours, &self.names);
        if theirs.version != ours.version {
            return Some(format!(
                "the peer speaks {} protocol version {}, this party version {}",
                names.protocol, theirs.version, ours.version
            ));
        }
        if theirs.side == ours.side {
            return Some(format!("both parties are {}", (names.side)(ours.side)));
        }
        if theirs.variant != ours.variant {
            let variants = names.variant.unwrap_or(Variants {
                what: "variant",
                name: |_| "another",
            });
            return Some(format!(
                "{} {} here, {} at the peer",
                variants.what,
                (variants.name)(ours.variant),
                (variants.name)(theirs.variant)
            ));
        }
        if theirs.fingerprint != ours.fingerprint {
            return Some(format!(
                "fingerprint {} here, {} at the peer: {}",
                short(&ours.fingerprint),
                short(&theirs.fingerprint),
                names.fingerprint
            ));
        }
        None
    }
}

fn short(fingerprint: &[u8; 32]) -> String {
    fingerprint[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Role for Exchange {
    type Incoming<'a> = Hello;
    type Output = Hello;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<Hello>,
        out: &mut O,
    ) -> Result<Next<Hello>, Error> {
        let Some(theirs) = incoming else {
            out.post(&self.ours)?;
            return Ok(Next::exact(HELLO, HELLO_LEN));
        };
        match self.problem(&theirs) {
            Some(problem) => Err(Error::Mismatch(problem)),
            None => Ok(Next::Done(theirs)),
        }
    }
}
