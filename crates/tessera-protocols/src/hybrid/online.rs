//! The online phase of a hybrid program: each operation on this party's shares (B, A) or
//! public masked values (β, α), with the setup's vectors; an interactive operation sends its
//! message and reads the peer's, of a length the program fixes.

use super::algebra::{self, Field};
use super::prepare::Prepared;
use super::{EXCHANGE, Kind, Plain, Program, Sharing, Type, Value, ring};
use crate::boolean::bits::{self, tail_mask, words};
use crate::{Error, Session};
use std::time::Instant;
use tessera_core::{Backend, Block, Prg};
use tessera_garble::{Evaluator, Prp, Scheme};
use tessera_net::{Channel, Space, Stats};

/// One operation of an online phase: its name, time and traffic.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The operation, as [`Program::describe`] names it.
    pub op: &'static str,
    /// Milliseconds.
    pub ms: f64,
    /// Bytes and messages.
    pub traffic: Stats,
    /// Messages this party waited for: the operation's rounds where both parties send at once.
    pub waits: usize,
}

/// The link to the peer for one online phase.
pub(super) struct Link<'s> {
    session: &'s mut Session,
    peer: usize,
    space: Space,
    /// Messages this party has waited for.
    waits: usize,
}

impl Link<'_> {
    pub(super) fn send(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let mut ch = self.session.channel(self.peer);
        ch.send(self.space.tag(EXCHANGE), bytes)?;
        Ok(ch.flush()?)
    }

    pub(super) fn recv(&mut self, len: usize) -> Result<Vec<u8>, Error> {
        let mut out = vec![0u8; len];
        self.recv_into(&mut out)?;
        Ok(out)
    }

    fn recv_into(&mut self, out: &mut [u8]) -> Result<(), Error> {
        self.waits += 1;
        Ok(self
            .session
            .channel(self.peer)
            .recv_into(self.space.tag(EXCHANGE), out)?)
    }

    /// Sends words in the byte order of the blocks on the wire (little-endian, as
    /// [`tessera_net::Channel::send_blocks`]), without a copy.
    fn send_words(&mut self, words: &[u64]) -> Result<(), Error> {
        self.send(bytemuck::cast_slice(words))
    }

    /// Receives a message of exactly `len` words straight into them.
    fn recv_words(&mut self, len: usize) -> Result<Vec<u64>, Error> {
        let mut out = vec![0u64; len];
        self.recv_into(bytemuck::cast_slice_mut(&mut out))?;
        Ok(out)
    }

    pub(super) fn malformed(&self) -> Error {
        Error::Net(tessera_net::Error::Malformed {
            party: self.peer,
            name: EXCHANGE.name,
            what: "bits set past the copies of a Boolean value".into(),
        })
    }

    /// Sends this party's vectors of `fields` and returns the peer's, added (XORed) in.
    pub(super) fn swap(&mut self, parts: &mut [(&mut Vec<u64>, Field)]) -> Result<(), Error> {
        let mut mine = Vec::new();
        for (v, f) in parts.iter() {
            algebra::encode(*f, v, &mut mine);
        }
        self.send(&mine)?;
        let theirs = self.recv(mine.len())?;
        let mut at = 0;
        for (v, f) in parts.iter_mut() {
            let len = algebra::wire_bytes(*f);
            if !algebra::combine(*f, v, &theirs[at..at + len]) {
                return Err(self.malformed());
            }
            at += len;
        }
        Ok(())
    }
}

/// A plaintext input as this party's vector of type `t`.
fn plain_words(t: Type, x: &Plain) -> Result<Vec<u64>, Error> {
    let bad = |what: String| Error::Input(what);
    match (t.kind, x) {
        (Kind::Bits(width), Plain::Bits(copies)) => {
            let w = words(t.n);
            let mut v = vec![0u64; width as usize * w];
            if copies.len() != t.n {
                return Err(bad(format!(
                    "{} copies, the value has {}",
                    copies.len(),
                    t.n
                )));
            }
            for (k, copy) in copies.iter().enumerate() {
                if copy.len() != width as usize {
                    return Err(bad(format!(
                        "copy {k} has {} bits, not {width}",
                        copy.len()
                    )));
                }
                for (j, &b) in copy.iter().enumerate() {
                    v[j * w + k / 64] |= u64::from(b) << (k % 64);
                }
            }
            Ok(v)
        }
        (Kind::Ring(l), Plain::Ring(v)) => {
            if v.len() != t.n {
                return Err(bad(format!("{} elements, the value has {}", v.len(), t.n)));
            }
            if let Some(k) = v.iter().position(|&x| x & !ring::mask(l) != 0) {
                return Err(bad(format!("element {k} does not fit in {l} bits")));
            }
            Ok(v.clone())
        }
        _ => Err(bad(format!("{t:?} given a plaintext of another kind"))),
    }
}

/// A value of type `t` in the clear from its words.
pub(super) fn words_plain(t: Type, v: &[u64]) -> Plain {
    match t.kind {
        Kind::Bits(width) => {
            let w = words(t.n);
            Plain::Bits(
                (0..t.n)
                    .map(|k| {
                        (0..width as usize)
                            .map(|j| bits::bit(&v[j * w..(j + 1) * w], k))
                            .collect()
                    })
                    .collect(),
            )
        }
        Kind::Ring(l) => Plain::Ring(v.iter().map(|x| x & ring::mask(l)).collect()),
    }
}

/// Words per wire of a value: labels take two per copy, bits `words(n)`.
pub(super) fn wire_words(t: Type) -> usize {
    if t.sharing == Sharing::Y {
        2 * t.n
    } else {
        words(t.n)
    }
}

/// Y's labels, two words per block, wire `j` copy `k` at block `j·n + k`.
pub(super) struct Garbling {
    delta: Block,
    n: usize,
}

impl Garbling {
    /// Labels of `n` copies under the garbler's offset `delta` (zero at the evaluator).
    pub(super) fn new(delta: Block, n: usize) -> Self {
        Garbling { delta, n }
    }

    /// K ⊕ x·Δ in place of each label K, for each bit x of `x` (bits of the labels' wires,
    /// `words(n)` each), without branching on x.
    fn select(&self, labels: &mut [u64], x: &[u64]) {
        let (n, w) = (self.n, words(self.n));
        let (lo, hi) = (self.delta.low(), self.delta.high());
        for (wire, xw) in labels.chunks_exact_mut(2 * n).zip(x.chunks_exact(w)) {
            for (k, pair) in wire.chunks_exact_mut(2).enumerate() {
                let m = 0u64.wrapping_sub((xw[k / 64] >> (k % 64)) & 1);
                pair[0] ^= lo & m;
                pair[1] ^= hi & m;
            }
        }
    }

    /// K ⊕ Δ for every label.
    pub(super) fn flip_all(&self, labels: &[u64]) -> Vec<u64> {
        let mut out = labels.to_vec();
        for pair in out.chunks_exact_mut(2) {
            pair[0] ^= self.delta.low();
            pair[1] ^= self.delta.high();
        }
        out
    }

    /// The labels' least significant bits as bits of their wires.
    pub(super) fn colours(&self, labels: &[u64], width: usize) -> Vec<u64> {
        let (n, w) = (self.n, words(self.n));
        let mut out = vec![0u64; width * w];
        for (wire, ow) in labels.chunks_exact(2 * n).zip(out.chunks_exact_mut(w)) {
            for (k, pair) in wire.chunks_exact(2).enumerate() {
                ow[k / 64] |= (pair[0] & 1) << (k % 64);
            }
        }
        out
    }

    /// Y labels of x₀ ⊕ x₁ for bits x₀ of the garbler (party 0) and x₁ of the evaluator, on
    /// the garbler's zero-labels K fixed in the setup (`zero`), by random correlated OTs of
    /// the setup (`ots`: the garbler's q, the evaluator's t = q ⊕ c·Δ) derandomised (Beaver's
    /// precomputed OT, in its correlated form): the evaluator sends e = x₁ ⊕ c, the garbler
    /// answers d = K ⊕ q ⊕ (e ⊕ x₀)·Δ, and d ⊕ t = K ⊕ (x₀ ⊕ x₁)·Δ is the evaluator's label
    /// (q pads K once). One bit per bit to the garbler, one block per bit back; `mine` is this
    /// party's bits. The garbler's values are its zero-labels.
    pub(super) fn share(
        &self,
        link: &mut Link<'_>,
        garbler: bool,
        (ots, zero): (&[u64], &[u64]),
        mine: &[u64],
        width: usize,
    ) -> Result<Vec<u64>, Error> {
        if garbler {
            let e = link.recv_words(width * words(self.n))?;
            let mut d = zip_map(zero, ots, |k, q| k ^ q);
            self.select(&mut d, &zip_map(&e, mine, |e, x| e ^ x));
            link.send_words(&d)?;
            Ok(zero.to_vec())
        } else {
            let e = zip_map(&self.colours(ots, width), mine, |c, x| c ^ x);
            link.send_words(&e)?;
            let mut labels = link.recv_words(2 * width * self.n)?;
            labels.iter_mut().zip(ots).for_each(|(d, t)| *d ^= t);
            Ok(labels)
        }
    }

    /// Y labels of the garbler's own bits `mine` (an input of party 0) on its zero-labels
    /// `zero`: it sends K ⊕ x·Δ, one block per bit; no OT.
    pub(super) fn own(
        &self,
        link: &mut Link<'_>,
        garbler: bool,
        zero: &[u64],
        mine: &[u64],
        width: usize,
    ) -> Result<Vec<u64>, Error> {
        if garbler {
            let mut labels = zero.to_vec();
            self.select(&mut labels, mine);
            link.send_words(&labels)?;
            Ok(zero.to_vec())
        } else {
            link.recv_words(2 * width * self.n)
        }
    }

    /// The bytes [`Garbling::share`] sends for `width` wires: the evaluator's bits, the
    /// garbler's blocks.
    pub(super) fn share_bytes(&self, width: usize) -> [usize; 2] {
        [16 * width * self.n, 8 * width * words(self.n)]
    }
}

/// Zeroes the bits of each wire past its `n` copies.
pub(super) fn clear_tails(v: &mut [u64], n: usize) {
    let w = words(n);
    for wire in v.chunks_mut(w) {
        if let Some(last) = wire.last_mut() {
            *last &= tail_mask(n);
        }
    }
}

pub(super) fn zip_map(a: &[u64], b: &[u64], f: impl Fn(u64, u64) -> u64) -> Vec<u64> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

/// The one-wire Boolean value `v` (`n` copies) as 0/1 per copy.
pub(super) fn bit_of(v: &[u64], k: usize) -> u64 {
    u64::from(bits::bit(v, k))
}

/// One party's values between segments of an online phase: every value's vector not yet
/// used for the last time, the setup's masks and Y offset, the outputs so far.
pub(super) struct Live {
    /// 0 for the lower-numbered party (Y's garbler), 1 for the other.
    side: usize,
    /// Per value: this party's share (B, A), the public Δ (β, α) or labels (Y).
    data: Vec<Vec<u64>>,
    /// Per value: this party's share of its mask (β, α), or the garbler's zero-labels (Y).
    pub(super) masks: Vec<Vec<u64>>,
    /// Y: the garbler's free-XOR offset (zero at the evaluator).
    delta: Block,
    prg: Prg,
    /// The outputs so far, in order: `None` where the peer alone learns it.
    outputs: Vec<Option<Plain>>,
    /// Per operation, the values to drop after it ([`Program::last_uses`]).
    last_uses: Vec<Vec<usize>>,
    /// Y: the evaluator's engine, see [`Run::evaluator`].
    evaluator: Option<Evaluator<Prp>>,
}

impl Live {
    /// Before the first operation of `p`, at `side`, with the setup's offset `delta`.
    pub(super) fn new(p: &Program, session: &mut Session, side: usize, delta: Block) -> Self {
        Live {
            side,
            data: vec![Vec::new(); p.types.len()],
            masks: vec![Vec::new(); p.types.len()],
            delta,
            prg: session.fork_prg(),
            outputs: Vec::with_capacity(p.outputs.len()),
            last_uses: p.last_uses(),
            evaluator: None,
        }
    }

    /// The outputs, once every operation has run.
    pub(super) fn outputs(self) -> Vec<Option<Plain>> {
        self.outputs
    }
}

/// One party's state while an online phase runs operations: the values so far, the setup's
/// masks and Y offset, and the link.
pub(super) struct Run<'p, 's> {
    pub(super) p: &'p Program,
    /// 0 for the lower-numbered party (Y's garbler), 1 for the other.
    pub(super) side: usize,
    /// Per value: this party's share (B, A), the public Δ (β, α) or labels (Y).
    pub(super) data: Vec<Vec<u64>>,
    /// Per value: this party's share of its mask (β, α).
    pub(super) masks: Vec<Vec<u64>>,
    /// Y: the garbler's free-XOR offset (zero at the evaluator).
    pub(super) delta: Block,
    pub(super) prg: &'s mut Prg,
    pub(super) link: Link<'s>,
    inputs: &'p [(Value, Plain)],
    /// The outputs so far, in order: `None` where the peer alone learns it.
    pub(super) outputs: Vec<Option<Plain>>,
    /// Y: the evaluator's engine, made at the first garbled operation and kept for the
    /// phase, so that its label slots grow once to the largest circuit instead of being
    /// allocated (and cleared by the kernel) anew for each.
    pub(super) evaluator: Option<Evaluator<Prp>>,
}

/// The engine in `slot`, made on first use (half-gates with the fixed-key hash on the
/// active AES backend).
pub(super) fn y_evaluator(slot: &mut Option<Evaluator<Prp>>) -> Result<&mut Evaluator<Prp>, Error> {
    let evaluator = match slot.take() {
        Some(evaluator) => evaluator,
        None => Evaluator::new(Prp::with_backend(Backend::active(), Block::ZERO)?),
    };
    Ok(slot.insert(evaluator))
}

impl Run<'_, '_> {
    /// Whether this party is the first (party 0's role in each operation).
    pub(super) fn first(&self) -> bool {
        self.side == 0
    }

    pub(super) fn ty(&self, v: usize) -> Type {
        self.p.types[v]
    }

    /// Y labels of value `v` for this party's bits `x` of it (B shares, or an input's bits
    /// at its owner and zeros elsewhere), by [`Garbling::share`] on the setup's correlated
    /// OTs `ots` and the garbler's zero-labels.
    pub(super) fn share_y(&mut self, v: usize, ots: &[u64], x: &[u64]) -> Result<Vec<u64>, Error> {
        let (t, garbler) = (self.ty(v), self.first());
        let zero = &self.masks[v];
        Garbling::new(self.delta, t.n).share(&mut self.link, garbler, (ots, zero), x, t.width())
    }

    /// Y labels of the garbler's input value `v` ([`Garbling::own`]), `x` its bits there.
    pub(super) fn own_y(&mut self, v: usize, x: &[u64]) -> Result<Vec<u64>, Error> {
        let (t, garbler) = (self.ty(v), self.first());
        let zero = &self.masks[v];
        Garbling::new(self.delta, t.n).own(&mut self.link, garbler, zero, x, t.width())
    }

    /// This party's plaintext of input value `v` as its vector.
    pub(super) fn plain_input(&self, v: usize) -> Result<Vec<u64>, Error> {
        let x = self
            .inputs
            .iter()
            .find(|(value, _)| value.0 == v)
            .ok_or_else(|| Error::Input(format!("no plaintext for input value {v}")))?;
        plain_words(self.ty(v), &x.1)
    }
}

/// The online phase: each operation's step in order ([`super::op::Operation::online`]), timed.
pub(super) fn run(
    p: &Program,
    session: &mut Session,
    peer: usize,
    prepared: Prepared,
    inputs: &[(Value, Plain)],
) -> Result<(Vec<Option<Plain>>, Vec<Step>), Error> {
    if prepared.fingerprint != p.fingerprint() {
        return Err(Error::Input(
            "the setup was made for another program".into(),
        ));
    }
    let Prepared {
        side,
        material,
        masks,
        delta,
        ..
    } = prepared;
    let mut live = Live::new(p, session, side, delta);
    live.masks = masks;
    let steps = run_ops(p, session, peer, &mut live, inputs, (0, material))?;
    Ok((live.outputs(), steps))
}

/// The online steps of the operations from `first` on, one per vector of setup `material`
/// (theirs, in order), on the values so far (`live`), timed; each value is dropped after
/// the last operation that uses it.
pub(super) fn run_ops(
    p: &Program,
    session: &mut Session,
    peer: usize,
    live: &mut Live,
    inputs: &[(Value, Plain)],
    (first, material): (usize, Vec<Vec<Vec<u64>>>),
) -> Result<Vec<Step>, Error> {
    let space = session.space(peer)?;
    let mut run = Run {
        p,
        side: live.side,
        data: std::mem::take(&mut live.data),
        masks: std::mem::take(&mut live.masks),
        delta: live.delta,
        prg: &mut live.prg,
        link: Link {
            session,
            peer,
            space,
            waits: 0,
        },
        inputs,
        outputs: std::mem::take(&mut live.outputs),
        evaluator: live.evaluator.take(),
    };
    let mut steps = Vec::with_capacity(material.len());
    for (index, m) in (first..).zip(material) {
        let operation = p.ops[index].operation();
        run.link.session.position().at(index);
        let (start, waits) = (Instant::now(), run.link.waits);
        let before = run.link.session.network().stats();
        operation.online(&mut run, m)?;
        for &v in &live.last_uses[index] {
            run.data[v] = Vec::new();
            run.masks[v] = Vec::new();
        }
        steps.push(Step {
            op: operation.name(),
            ms: start.elapsed().as_secs_f64() * 1e3,
            traffic: run.link.session.network().stats().since(&before),
            waits: run.link.waits - waits,
        });
    }
    (live.data, live.masks, live.outputs) = (run.data, run.masks, run.outputs);
    live.evaluator = run.evaluator;
    Ok(steps)
}
