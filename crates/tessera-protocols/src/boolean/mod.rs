//! Boolean circuits in the two secret-sharing protocols of MOTION2NX (Braun et al.) App.
//! A.2, with a setup phase independent of the inputs and an online
//! phase of one round per AND layer ([`Layered`]), every gate SIMD over `simd` copies:
//!
//! - **B**, Boolean GMW (Goldreich, Micali, Wigderson, STOC 1987; ABY, NDSS 2015, §III-B):
//!   x = x₀ ⊕ x₁. XOR, INV and constants are local (party 0 applies INV and constants). An AND
//!   gate z = x ∧ y uses a Beaver triple c = a ∧ b from the setup: both parties open
//!   d = x ⊕ a and e = y ⊕ b, and z_i = c_i ⊕ d·b_i ⊕ e·a_i (⊕ d·e at party 0): 2 bits per AND
//!   and party, one round per layer. An input's owner has sent a random mask r as the peer's
//!   share in the setup and keeps x ⊕ r: inputs cost no online message.
//! - **β**, ABY2.0's Boolean sharing (Patra, Schneider, Suresh, Yalame, USENIX Security 2021,
//!   §3): x is held as a public Δx = x ⊕ δx and shares of the mask δx, which the setup fixes
//!   for every wire: random at inputs (known in full to the owner) and AND outputs, the XOR of
//!   the inputs' masks at XOR gates, unchanged by INV (which flips Δ), zero at constants. The
//!   setup also shares δxy = δx ∧ δy for every AND gate, all at once by Beaver's method (the
//!   masks do not depend on the layers, so one round for the whole circuit). Online, each party
//!   computes its share of Δz = Δx·Δy ⊕ Δx·δy ⊕ Δy·δx ⊕ δxy ⊕ δz (the first term at party 0)
//!   and both open it: 1 bit per AND and party, one round per layer. Inputs: the owner sends
//!   Δx = x ⊕ δx, one message.
//!
//! Outputs are opened to one party or both ([`Reveal`]): the other sends its shares (B) or
//! its mask shares (β). A party owns input value v of the circuit if v is even and it is the
//! lower-numbered party of the two, or v is odd and it is the higher-numbered one.
//!
//! Messages are packed bit vectors, gate after gate, `simd` bits each. Their lengths follow
//! from the circuit; bits past a message's end must be zero. Both parties first exchange a
//! hello with SHA-256 of the circuit, sharing, SIMD width and output mode.

pub(crate) mod bits;
pub(crate) mod layers;
mod online;
mod setup;

use crate::hello::{self, Hello, Names, Variants};
use crate::{Error, Session};
use online::Online;
use setup::SetupRole;
use sha2::Digest;
use tessera_circuit::Circuit;
use tessera_circuit::layered::Layered;
use tessera_net::{Kind, role};
use tessera_ot::triples::BoolTriples;

/// The version both parties' hellos must agree on.
pub const PROTOCOL_VERSION: u8 = 1;

/// The hello ([`crate::hello`]): version, sharing, the sender's side and the fingerprint.
pub use crate::hello::HELLO;
/// B setup: the owner's random masks of its input bits, the peer's shares.
pub const MASKS: Kind = Kind::new(0x41, "gmw input masks");
/// β setup: the Beaver openings of every AND gate's masks.
pub const PRODUCTS: Kind = Kind::new(0x42, "aby2 mask products");
/// β online: the owner's masked inputs Δx.
pub const INPUTS: Kind = Kind::new(0x43, "aby2 masked inputs");
/// Online: one AND layer's openings.
pub const OPEN: Kind = Kind::new(0x44, "and layer openings");
/// Online: the shares that open the outputs.
pub const OUTPUT: Kind = Kind::new(0x45, "output shares");

/// Which Boolean secret sharing a circuit runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoolSharing {
    /// Boolean GMW: XOR shares, Beaver triples.
    Gmw,
    /// ABY2.0: public masked values, shared masks.
    Aby2,
}

impl BoolSharing {
    /// Both, in the order of MOTION2NX's notation.
    pub const ALL: [BoolSharing; 2] = [BoolSharing::Gmw, BoolSharing::Aby2];

    /// The name as in MOTION2NX and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            BoolSharing::Gmw => "b",
            BoolSharing::Aby2 => "beta",
        }
    }

    /// The sharing called `name`.
    pub fn from_name(name: &str) -> Option<BoolSharing> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    const fn code(self) -> u8 {
        match self {
            BoolSharing::Gmw => 1,
            BoolSharing::Aby2 => 2,
        }
    }
}

/// How the Boolean protocols' hello names its fields.
const NAMES: Names = Names {
    protocol: "Boolean circuit",
    variant: Some(Variants {
        what: "sharing",
        name: |code| match BoolSharing::ALL.into_iter().find(|s| s.code() == code) {
            Some(s) => s.name(),
            None => "an unknown sharing",
        },
    }),
    side: |side| {
        if side == 0 { "on side 0" } else { "on side 1" }
    },
    fingerprint: "a different circuit, SIMD width or output mode at the peer (fingerprints differ)",
};

/// Who learns the outputs: a party's side (0: the lower-numbered of the two) or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reveal {
    /// The party on this side.
    To(usize),
    /// Both parties.
    Both,
}

impl Reveal {
    fn learns(self, side: usize) -> bool {
        self == Reveal::Both || self == Reveal::To(side)
    }

    fn code(self) -> u8 {
        match self {
            Reveal::To(0) => 0,
            Reveal::To(_) => 1,
            Reveal::Both => 2,
        }
    }
}

/// The outputs of an execution: per SIMD copy, per output value, its bits.
pub type Outputs = Vec<Vec<Vec<bool>>>;

/// The largest SIMD width: 2^24 copies, a bit each per wire (2 MiB a wire), so that an
/// ImageNet network's widest activation (MobileNetV2's 96 × 112 × 112, 1.2 million) takes one
/// circuit; messages and wire values stay inside memory for the small circuits run that wide.
pub const MAX_SIMD: usize = 1 << 24;

/// A circuit compiled for one Boolean sharing and SIMD width; see the module documentation.
#[derive(Clone, Debug)]
pub struct BoolCircuit {
    circuit: Circuit,
    layered: Layered,
    sharing: BoolSharing,
    simd: usize,
    /// Words of the setup's per-AND vectors before layer `l` (index `l - 1`), layer after
    /// layer, each layer's bits starting a word.
    segments: Vec<usize>,
}

/// One party's setup for one execution: it must not be used twice.
#[derive(Debug)]
pub struct Prepared {
    /// The fingerprint of the circuit it is for.
    fingerprint: [u8; 32],
    /// This party's side.
    side: usize,
    /// Per AND gate, layer segment by layer segment: B the triple's a, b, c; β the shares of
    /// δx, δy and δxy ⊕ δz.
    and: [Vec<u64>; 3],
    /// Per input wire, `simd` bits each: B this party's share before its own input is added
    /// (its mask r, or the peer's mask); β its share of δ (δ itself on its own inputs, zero
    /// on the peer's).
    inputs: Vec<u64>,
    /// β: per output wire, this party's share of δ.
    outputs: Vec<u64>,
}

impl BoolCircuit {
    /// Compiles `circuit` for `sharing` over `simd` copies (1 to [`MAX_SIMD`]).
    pub fn new(circuit: Circuit, sharing: BoolSharing, simd: usize) -> Result<Self, Error> {
        circuit.check()?;
        if !(1..=MAX_SIMD).contains(&simd) {
            return Err(Error::Input(format!(
                "SIMD width {simd}: it must be 1 to {MAX_SIMD}"
            )));
        }
        let layered = Layered::new(&circuit);
        let mut segments = vec![0];
        for l in 1..=layered.depth() {
            let at = segments[l - 1] + bits::words(layered.ands(l).len() * simd);
            segments.push(at);
        }
        Ok(BoolCircuit {
            circuit,
            layered,
            sharing,
            simd,
            segments,
        })
    }

    /// The circuit.
    pub fn circuit(&self) -> &Circuit {
        &self.circuit
    }

    /// The sharing.
    pub fn sharing(&self) -> BoolSharing {
        self.sharing
    }

    /// The SIMD width.
    pub fn simd(&self) -> usize {
        self.simd
    }

    /// The AND-depth: rounds of AND layers.
    pub fn depth(&self) -> usize {
        self.layered.depth()
    }

    /// The online rounds: one per AND layer, one for β's inputs, one for the outputs.
    pub fn online_rounds(&self) -> usize {
        self.layered.depth() + 1 + usize::from(self.sharing == BoolSharing::Aby2)
    }

    /// The Boolean triples the setup draws: one per AND gate and copy.
    pub fn triples_needed(&self) -> usize {
        self.layered.and_count() * self.simd
    }

    /// SHA-256 of what both parties must agree on.
    pub fn fingerprint(&self, reveal: Reveal) -> [u8; 32] {
        hello::fingerprint(b"tessera/boolean", |h| {
            h.update([PROTOCOL_VERSION, self.sharing.code(), reveal.code()]);
            h.update((self.simd as u64).to_le_bytes());
            crate::yao::hash_circuit(h, &self.circuit);
        })
    }

    /// The input value indices owned by `side`.
    fn owned(&self, side: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.circuit.inputs.len()).filter(move |v| v % 2 == side)
    }

    /// The input wires of `side`'s values, in order.
    fn input_wires(&self, side: usize) -> Vec<usize> {
        self.owned(side)
            .flat_map(|v| {
                let start = self.circuit.input_start(v) as usize;
                start..start + self.circuit.inputs[v] as usize
            })
            .collect()
    }

    /// The side of this party with `peer`: 0 if it is the lower-numbered.
    fn side(session: &Session, peer: usize) -> usize {
        usize::from(session.id() > peer)
    }

    /// The setup with `peer` for one execution revealing to `reveal`: the hello, the
    /// Boolean triples from the session's OT with the peer, and the sharing's own exchange.
    /// A failure stops the peer too ([`Session::run`]).
    pub fn setup(
        &self,
        session: &mut Session,
        peer: usize,
        reveal: Reveal,
    ) -> Result<Prepared, Error> {
        session.run(|session| self.setup_in(session, peer, reveal))
    }

    fn setup_in(
        &self,
        session: &mut Session,
        peer: usize,
        reveal: Reveal,
    ) -> Result<Prepared, Error> {
        let side = Self::side(session, peer);
        let space = session.space(peer)?;
        let fingerprint = self.fingerprint(reveal);
        let ours = Hello {
            version: PROTOCOL_VERSION,
            variant: self.sharing.code(),
            side: side as u8,
            fingerprint,
            nonce: tessera_core::Block::ZERO,
        };
        hello::exchange(session, (peer, space), ours, NAMES)?;
        let triples =
            session.with_triples(
                peer,
                |g, links| Ok(g.boolean(links, self.triples_needed())?),
            )?;
        let prg = session.fork_prg();
        let mut role = SetupRole::new(self, side, fingerprint, &triples, prg);
        role::drive(&mut role, &mut session.channel(peer), space)
    }

    /// The setup's core without I/O, for tests: `triples` from the peer's generator.
    pub fn setup_role(
        &self,
        side: usize,
        reveal: Reveal,
        triples: &BoolTriples,
        prg: tessera_core::Prg,
    ) -> impl role::Role<Output = Prepared, Error = Error> + '_ {
        SetupRole::new(self, side, self.fingerprint(reveal), triples, prg)
    }

    /// The online phase with `peer` on this party's `inputs` (per SIMD copy, the values it
    /// owns in order), with the setup `prepared` for the same `reveal`. Returns the outputs
    /// if this party learns them. A failure stops the peer too ([`Session::run`]).
    pub fn online(
        &self,
        session: &mut Session,
        peer: usize,
        prepared: Prepared,
        inputs: &[Vec<Vec<bool>>],
        reveal: Reveal,
    ) -> Result<Option<Outputs>, Error> {
        session.run(|session| {
            let space = session.space(peer)?;
            let mut role = self.online_role(peer, prepared, inputs, reveal)?;
            role::drive(&mut role, &mut session.channel(peer), space)
        })
    }

    /// The online phase's core without I/O, for tests; `peer` only names the peer in errors.
    pub fn online_role(
        &self,
        peer: usize,
        prepared: Prepared,
        inputs: &[Vec<Vec<bool>>],
        reveal: Reveal,
    ) -> Result<impl role::Role<Output = Option<Outputs>, Error = Error> + '_, Error> {
        if prepared.fingerprint != self.fingerprint(reveal) {
            return Err(Error::Input(
                "the setup was made for another circuit, sharing, width or output mode".into(),
            ));
        }
        Online::new(self, peer, prepared, inputs, reveal)
    }
}

/// Reads a message of `n` packed bits into `out`, refusing bits set past its end.
fn read_bits(
    peer: usize,
    kind: Kind,
    bytes: &[u8],
    n: usize,
    out: &mut [u64],
) -> Result<(), Error> {
    out.fill(0);
    for (i, &b) in bytes.iter().enumerate() {
        out[i / 8] |= u64::from(b) << (8 * (i % 8));
    }
    let last = bits::words(n);
    if last > 0 && out[last - 1] & !bits::tail_mask(n) != 0 {
        return Err(Error::Net(tessera_net::Error::Malformed {
            party: peer,
            name: kind.name,
            what: format!("bits set past its {n} bits"),
        }));
    }
    Ok(())
}

/// Bytes of a message of `n` packed bits.
fn bytes_of(n: usize) -> usize {
    n.div_ceil(8)
}

/// A message of packed bits of kind `K`.
struct Packed<'a, const K: u8> {
    bits: usize,
    words: &'a [u64],
}

/// The message kind of `id` (the output's for an id of no other).
const fn kind(id: u8) -> Kind {
    let all = [MASKS, PRODUCTS, INPUTS, OPEN];
    let mut i = 0;
    while i < all.len() {
        if all[i].id == id {
            return all[i];
        }
        i += 1;
    }
    OUTPUT
}

impl<const K: u8> role::Encode for Packed<'_, K> {
    const KIND: Kind = kind(K);
    fn encode<'a>(&'a self, scratch: &'a mut Vec<u8>) -> &'a [u8] {
        scratch.clear();
        scratch.extend(self.words.iter().flat_map(|w| w.to_le_bytes()));
        scratch.truncate(bytes_of(self.bits));
        scratch
    }
}

/// A message the setup or online roles receive: its kind and payload.
struct Incoming<'a> {
    kind: u8,
    bytes: &'a [u8],
}

impl<'a> role::Decode<'a> for Incoming<'a> {
    fn decode(kind: u8, bytes: &'a [u8]) -> Result<Self, tessera_net::DecodeError> {
        Ok(Incoming { kind, bytes })
    }
}

#[cfg(test)]
mod tests;
