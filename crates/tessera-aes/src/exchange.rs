//! How the online protocol talks: every step is one exchange in which each party sends one
//! message to every peer and receives one of known length from each. [`Exchange`] is that
//! and nothing more, so the protocol ([`crate::online`]) has no I/O of its own; it runs over a
//! [`Network`] (memory, TCP or TLS meshes) or over a wrapper that edits messages
//! ([`Tamper`], for the cheating tests).

use crate::Error;
use tessera_net::{Kind, Network, Space, Tag};

/// The oblivious-AES messages.
pub mod kinds {
    use tessera_net::Kind;
    /// The session digest and party id of each party's pre-processing.
    pub const HELLO: Kind = Kind::new(1, "oaes hello");
    /// Masked key shares.
    pub const INPUT: Kind = Kind::new(2, "oaes key input");
    /// Codeword shares of masked states and keys.
    pub const OPEN: Kind = Kind::new(3, "oaes opening");
    /// Commitments to the MAC check's values.
    pub const COMMIT: Kind = Kind::new(4, "oaes MAC-check commitment");
    /// The MAC check's values, opened.
    pub const REVEAL: Kind = Kind::new(5, "oaes MAC-check opening");
    /// Codeword shares of the ciphertexts, and a commitment to the MAC key and MACs.
    pub const OUTPUT: Kind = Kind::new(6, "oaes output");
    /// The MAC key and output MACs, opened.
    pub const OUTPUT_CHECK: Kind = Kind::new(7, "oaes output check");
    /// Protocol 3: table entries looked up, with a MAC for the recipient.
    pub const TABLE: Kind = Kind::new(8, "oaes table entries");
}

/// What a party sends in one exchange.
#[derive(Clone, Copy, Debug)]
pub enum Out<'a> {
    /// The same message to every peer.
    All(&'a [u8]),
    /// `each[j]` to peer j (`each[me]` unused).
    Each(&'a [Vec<u8>]),
}

impl<'a> Out<'a> {
    /// The message for peer `j`.
    pub fn to(&self, j: usize) -> &'a [u8] {
        match *self {
            Out::All(m) => m,
            Out::Each(each) => each.get(j).map_or(&[][..], |m| &m[..]),
        }
    }
}

/// The space oblivious-AES messages travel in.
pub const SPACE: Space = Space::new(1);

/// One party's side of the exchanges.
pub trait Exchange {
    /// This party's id.
    fn me(&self) -> usize;
    /// The number of parties.
    fn parties(&self) -> usize;
    /// Sends `out` to every peer and receives `len` bytes from each into `received[j]`
    /// (`received[me]` is left empty).
    fn exchange(
        &mut self,
        kind: Kind,
        out: Out<'_>,
        len: usize,
        received: &mut [Vec<u8>],
    ) -> Result<(), Error>;
    /// Tells every peer, once, that this party stops and why.
    fn abort(&mut self, code: tessera_net::AbortCode);
}

impl Exchange for Network {
    fn me(&self) -> usize {
        self.id()
    }

    fn parties(&self) -> usize {
        Network::parties(self)
    }

    fn exchange(
        &mut self,
        kind: Kind,
        out: Out<'_>,
        len: usize,
        received: &mut [Vec<u8>],
    ) -> Result<(), Error> {
        exchange_each(self, kind, |j| out.to(j), len, received)
    }

    fn abort(&mut self, code: tessera_net::AbortCode) {
        Network::abort(self, code)
    }
}

/// Sends `out(j)` to every peer j, then receives `len` bytes from each.
fn exchange_each<'a>(
    net: &mut Network,
    kind: Kind,
    out: impl Fn(usize) -> &'a [u8],
    len: usize,
    received: &mut [Vec<u8>],
) -> Result<(), Error> {
    let tag: Tag = SPACE.tag(kind);
    let me = net.id();
    for j in (0..Network::parties(net)).filter(|&j| j != me) {
        net.send(j, tag, out(j))?;
    }
    net.flush()?;
    for (j, r) in received.iter_mut().enumerate() {
        r.clear();
        if j != me {
            r.resize(len, 0);
            net.recv_into(j, tag, r)?;
        }
    }
    Ok(())
}

/// A party that cheats: adds `error` (XOR) at byte `offset` of the message it sends in
/// exchange number `at` (counted from 0, the hello included), to the peers in `to` (all where
/// empty). With `consistent`, it also adds the error to what it received from its first peer
/// in that exchange, so that its own view of an opening (its share plus the others') matches
/// the view it gave the honest parties, as a cheater who wants to stay undetected would. For
/// tests and fault injection.
pub struct Tamper<X> {
    /// The honest exchange underneath.
    pub inner: X,
    /// The exchange to edit.
    pub at: usize,
    /// Where in the message.
    pub offset: usize,
    /// What to add (XOR) from `offset` on.
    pub error: Vec<u8>,
    /// The peers who get the edited message; all where empty.
    pub to: Vec<usize>,
    /// Whether the cheater's own view follows the edit.
    pub consistent: bool,
    count: usize,
}

impl<X> Tamper<X> {
    /// A cheater over `inner`.
    pub fn new(inner: X, at: usize, offset: usize, error: Vec<u8>, to: Vec<usize>) -> Self {
        Tamper {
            inner,
            at,
            offset,
            error,
            to,
            consistent: false,
            count: 0,
        }
    }
}

impl<X: Exchange> Exchange for Tamper<X> {
    fn me(&self) -> usize {
        self.inner.me()
    }

    fn parties(&self) -> usize {
        self.inner.parties()
    }

    fn exchange(
        &mut self,
        kind: Kind,
        out: Out<'_>,
        len: usize,
        received: &mut [Vec<u8>],
    ) -> Result<(), Error> {
        let n = self.count;
        self.count += 1;
        if n != self.at {
            return self.inner.exchange(kind, out, len, received);
        }
        let edit = |m: &mut [u8]| {
            for (i, e) in self.error.iter().enumerate() {
                if let Some(b) = m.get_mut(self.offset + i) {
                    *b ^= e;
                }
            }
        };
        let edited: Vec<Vec<u8>> = (0..self.inner.parties())
            .map(|j| {
                let mut m = out.to(j).to_vec();
                if self.to.is_empty() || self.to.contains(&j) {
                    edit(&mut m);
                }
                m
            })
            .collect();
        self.inner
            .exchange(kind, Out::Each(&edited), len, received)?;
        let first = usize::from(self.inner.me() == 0);
        if self.consistent
            && let Some(r) = received.get_mut(first)
        {
            edit(r);
        }
        Ok(())
    }

    fn abort(&mut self, code: tessera_net::AbortCode) {
        self.inner.abort(code)
    }
}
