//! Rounds among n parties: in one round every party sends a message of one kind to some
//! peers and then reads a message of a length it knows from some peers. Protocols that talk
//! only in such rounds (oblivious AES, authenticated garbling among n parties) speak through
//! [`Exchange`], so their cores hold no I/O of their own and run over a [`Network`]
//! ([`Links`]) or over a test's [`Tampered`] view of one.
//!
//! Every message is sent before any is read, and the network's one event loop reads what
//! every peer sends while it waits, so parties that all send to all at once never deadlock.

use crate::{AbortCode, Error, Kind, Network, Space};

/// What a party sends in a round.
#[derive(Clone, Copy, Debug)]
pub enum Out<'a> {
    /// The same message to every peer.
    All(&'a [u8]),
    /// `each[j]` to peer j (`each[me]` unused).
    Each(&'a [Vec<u8>]),
    /// `some[j]` to each peer j that has one, nothing to the others.
    Some(&'a [Option<Vec<u8>>]),
}

impl<'a> Out<'a> {
    /// The message for peer `j`, if it gets one.
    pub fn to(&self, j: usize) -> Option<&'a [u8]> {
        match *self {
            Out::All(m) => Some(m),
            Out::Each(each) => Some(each.get(j).map_or(&[][..], |m| &m[..])),
            Out::Some(some) => some.get(j).and_then(|m| m.as_deref()),
        }
    }
}

/// What a party reads in a round.
#[derive(Clone, Copy, Debug)]
pub enum Expect<'a> {
    /// A message of this length from every peer.
    All(usize),
    /// A message of length `some[j]` from each peer j that has one, nothing from the others.
    Some(&'a [Option<usize>]),
}

impl Expect<'_> {
    /// The length expected from peer `j`, if any.
    pub fn from(&self, j: usize) -> Option<usize> {
        match *self {
            Expect::All(len) => Some(len),
            Expect::Some(some) => some.get(j).copied().flatten(),
        }
    }
}

/// One party's side of the rounds.
pub trait Exchange {
    /// This party's id.
    fn me(&self) -> usize;
    /// The number of parties.
    fn parties(&self) -> usize;
    /// One round of messages of `kind`: sends what `out` names, then reads what `expect`
    /// names, each of exactly its length, into `received[j]` (left empty for this party and
    /// for every peer nothing is expected from).
    fn round(
        &mut self,
        kind: Kind,
        out: Out<'_>,
        expect: Expect<'_>,
        received: &mut [Vec<u8>],
    ) -> Result<(), Error>;
    /// Tells every peer, once, that this party stops and why.
    fn abort(&mut self, code: AbortCode);
}

/// A network's links, each in the message space the run holds on it.
pub struct Links<'n, 's> {
    net: &'n mut Network,
    spaces: Spaces<'s>,
}

/// The spaces of a run's links.
enum Spaces<'s> {
    /// One space on every link.
    Same(Space),
    /// `per_link[j]` on the link to peer j.
    PerLink(&'s [Option<Space>]),
}

impl<'n> Links<'n, 'static> {
    /// `net`'s links, all in `space` (a tool or test that runs one protocol on a network).
    pub fn in_space(net: &'n mut Network, space: Space) -> Self {
        Links {
            net,
            spaces: Spaces::Same(space),
        }
    }
}

impl<'n, 's> Links<'n, 's> {
    /// `net`'s links, the link to peer j in `spaces[j]` (as a session hands spaces out, link
    /// by link).
    pub fn per_link(net: &'n mut Network, spaces: &'s [Option<Space>]) -> Self {
        Links {
            net,
            spaces: Spaces::PerLink(spaces),
        }
    }

    /// The space of the link to peer `j`.
    fn space(&self, j: usize) -> Option<Space> {
        match self.spaces {
            Spaces::Same(s) => Some(s),
            Spaces::PerLink(per) => per.get(j).copied().flatten(),
        }
    }
}

impl Exchange for Links<'_, '_> {
    fn me(&self) -> usize {
        self.net.id()
    }

    fn parties(&self) -> usize {
        self.net.parties()
    }

    fn round(
        &mut self,
        kind: Kind,
        out: Out<'_>,
        expect: Expect<'_>,
        received: &mut [Vec<u8>],
    ) -> Result<(), Error> {
        let me = self.net.id();
        let peers = (0..self.net.parties()).filter(|&j| j != me);
        for j in peers.clone() {
            if let (Some(m), Some(space)) = (out.to(j), self.space(j)) {
                self.net.send(j, space.tag(kind), m)?;
            }
        }
        self.net.flush()?;
        received.iter_mut().for_each(Vec::clear);
        for j in peers {
            let (Some(len), Some(space), Some(r)) =
                (expect.from(j), self.space(j), received.get_mut(j))
            else {
                continue;
            };
            r.resize(len, 0);
            self.net.recv_into(j, space.tag(kind), r)?;
        }
        Ok(())
    }

    fn abort(&mut self, code: AbortCode) {
        self.net.abort(code)
    }
}

/// A message as a test's edit sees it: its kind, the round it belongs to (counted from 0
/// among this party's rounds), this party, the peer it goes to or came from, and which way
/// it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// This party's id.
    pub me: usize,
    /// The round's kind.
    pub kind: Kind,
    /// The round's index among this party's rounds.
    pub round: usize,
    /// The peer.
    pub peer: usize,
    /// Whether this party received it (after the round) rather than sends it.
    pub received: bool,
}

/// What an [`Editor`] does to each message.
pub type Edit<'e> = dyn FnMut(&Message, &mut Vec<u8>) + 'e;

/// A cheating party's hand in its rounds: for tests and fault injection, it may change any
/// message the party sends (and, to model a cheater that keeps its own view consistent with
/// what it sent, any it received), byte by byte or in length.
pub struct Editor<'e> {
    edit: Box<Edit<'e>>,
    rounds: usize,
}

impl std::fmt::Debug for Editor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Editor")
            .field("rounds", &self.rounds)
            .finish_non_exhaustive()
    }
}

impl<'e> Editor<'e> {
    /// An editor that applies `edit` to every message (it leaves alone what it need not
    /// change).
    pub fn new(edit: impl FnMut(&Message, &mut Vec<u8>) + 'e) -> Self {
        Editor {
            edit: Box::new(edit),
            rounds: 0,
        }
    }

    /// The editor that adds `error` (XOR) from byte `offset` on to the messages of round
    /// `round` that go to the peers in `to` (all where empty): the common attack of the
    /// cheating tests. With `consistent`, the same error also goes into what the party
    /// received from its first peer in that round, so that its own view of an opening (its
    /// share plus the others') matches the view it gave the honest parties.
    pub fn xor_at(
        round: usize,
        offset: usize,
        error: Vec<u8>,
        to: Vec<usize>,
        consistent: bool,
    ) -> Self {
        Editor::new(move |m, bytes| {
            let hit = m.round == round
                && if m.received {
                    consistent && m.peer == usize::from(m.me == 0)
                } else {
                    to.is_empty() || to.contains(&m.peer)
                };
            if hit {
                for (b, e) in bytes.iter_mut().skip(offset).zip(&error) {
                    *b ^= e;
                }
            }
        })
    }

    /// `inner`, its messages passing through this editor.
    pub fn over<'a, X: Exchange>(&'a mut self, inner: &'a mut X) -> Tampered<'a, 'e, X> {
        Tampered {
            inner,
            editor: self,
        }
    }
}

/// An exchange whose messages pass through an [`Editor`].
pub struct Tampered<'a, 'e, X> {
    inner: &'a mut X,
    editor: &'a mut Editor<'e>,
}

impl<X: Exchange> Exchange for Tampered<'_, '_, X> {
    fn me(&self) -> usize {
        self.inner.me()
    }

    fn parties(&self) -> usize {
        self.inner.parties()
    }

    fn round(
        &mut self,
        kind: Kind,
        out: Out<'_>,
        expect: Expect<'_>,
        received: &mut [Vec<u8>],
    ) -> Result<(), Error> {
        let round = self.editor.rounds;
        self.editor.rounds += 1;
        let me = self.inner.me();
        let edited: Vec<Option<Vec<u8>>> = (0..self.inner.parties())
            .map(|peer| {
                let mut m = out.to(peer).filter(|_| peer != me)?.to_vec();
                let message = Message {
                    me,
                    kind,
                    round,
                    peer,
                    received: false,
                };
                (self.editor.edit)(&message, &mut m);
                Some(m)
            })
            .collect();
        self.inner
            .round(kind, Out::Some(&edited), expect, received)?;
        for (peer, r) in received.iter_mut().enumerate() {
            if peer != me && expect.from(peer).is_some() {
                let message = Message {
                    me,
                    kind,
                    round,
                    peer,
                    received: true,
                };
                (self.editor.edit)(&message, r);
            }
        }
        Ok(())
    }

    fn abort(&mut self, code: AbortCode) {
        self.inner.abort(code)
    }
}
