//! The hello that opens every run of authenticated garbling, before the base OTs: each party
//! sends the protocol's version, its variant (KRRW18 between two parties, WRK17b among more),
//! its party number and the fingerprint of everything the parties must agree on (what runs —
//! a circuit's digest, a chain's step and length, a file's digest and window —, who learns the
//! outputs, the correlated OT), with the one hello of the two-party protocols
//! ([`tessera_protocols::hello`]). A difference stops the run with a message naming it
//! (`Fault::Mismatch`), where it would otherwise fail late and obscurely.

use crate::Error;
use sha2::{Digest, Sha256};
use tessera_core::Block;
use tessera_protocols::Session;
use tessera_protocols::hello::{self, Hello, Names, Variants};

/// The version of this crate's protocols, in the hello: 2 since a streamed file's digest is
/// BLAKE3 ([`tessera_circuit::bristol::stream::DIGEST_CONTEXT`]) rather than SHA-256.
pub const VERSION: u8 = 2;

/// Which protocol a run speaks, in the hello.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Two parties: KRRW18 ([`crate::twopc`]).
    Krrw18 = 0,
    /// n parties: WRK17b ([`crate::multi`]).
    Wrk17b = 1,
}

impl Variant {
    /// The variant's name from its code.
    fn name(code: u8) -> &'static str {
        match code {
            0 => "KRRW18 (two parties)",
            1 => "WRK17b (n parties)",
            _ => "an unknown protocol",
        }
    }
}

/// How the hello names its fields.
const NAMES: Names = Names {
    protocol: "authenticated garbling",
    variant: Some(Variants {
        what: "protocol",
        name: Variant::name,
    }),
    side: |_| "the same party",
    fingerprint: "a different circuit, chain, file or window, output choice, correlated OT or \
                  version",
};

/// What a run agrees on, for its fingerprint: the protocol's `variant`, the session's
/// correlated OT and what `feed` hashes (the run's job and outputs).
fn fingerprint(session: &Session, variant: Variant, feed: impl FnOnce(&mut Sha256)) -> [u8; 32] {
    hello::fingerprint(b"tessera-ag", |h| {
        h.update([VERSION, variant as u8]);
        let ot = session.ot_choice().name();
        h.update((ot.len() as u64).to_le_bytes());
        h.update(ot.as_bytes());
        feed(h);
    })
}

/// The hello with every peer of `session`, one after another in party order (each posts
/// before it waits, so no two wait on each other): every party's version, `variant`, party
/// number and fingerprint (of the OT and of what `feed` hashes) checked (phase "hello").
pub fn greet(
    session: &mut Session,
    variant: Variant,
    feed: impl FnOnce(&mut Sha256),
) -> Result<(), Error> {
    let ours = Hello {
        version: VERSION,
        variant: variant as u8,
        side: u8::try_from(session.id()).unwrap_or(u8::MAX),
        fingerprint: fingerprint(session, variant, feed),
        nonce: Block::ZERO,
    };
    let me = session.id();
    session.phase("hello", |s| {
        for peer in (0..s.parties()).filter(|&j| j != me) {
            let space = s.space(peer)?;
            hello::exchange(s, (peer, space), ours, NAMES)?;
        }
        Ok(())
    })
}
