//! The online phase of a hybrid program: each operation on this party's shares (B, A) or
//! public masked values (β, α), with the setup's vectors; an interactive operation sends its
//! message and reads the peer's, of a length the program fixes.

use super::algebra::{self, Field};
use super::prepare::Prepared;
use super::{
    EXCHANGE, Hop, Kind, Op, Plain, Program, Reveal, Sharing, Type, Value, ring, select_wires,
};
use crate::boolean::bits::{self, tail_mask, words};
use crate::boolean::layers::Layers;
use crate::{Error, Session};
use std::time::Instant;
use tessera_core::{Block, Prg};
use tessera_garble::{Evaluator, Garbler, Prp, Scheme, TableReader, table_blocks};
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
struct Link<'s> {
    session: &'s mut Session,
    peer: usize,
    space: Space,
    /// Messages this party has waited for.
    waits: usize,
}

impl Link<'_> {
    fn send(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let mut ch = self.session.channel(self.peer);
        ch.send(self.space.tag(EXCHANGE), bytes)?;
        Ok(ch.flush()?)
    }

    fn recv(&mut self, len: usize) -> Result<Vec<u8>, Error> {
        self.waits += 1;
        let mut out = vec![0u8; len];
        self.session
            .channel(self.peer)
            .recv_into(self.space.tag(EXCHANGE), &mut out)?;
        Ok(out)
    }

    fn malformed(&self) -> Error {
        Error::Net(tessera_net::Error::Malformed {
            party: self.peer,
            name: EXCHANGE.name,
            what: "bits set past the copies of a Boolean value".into(),
        })
    }

    /// Sends this party's vectors of `fields` and returns the peer's, added (XORed) in.
    fn swap(&mut self, parts: &mut [(&mut Vec<u64>, Field)]) -> Result<(), Error> {
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
fn words_plain(t: Type, v: &[u64]) -> Plain {
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
fn wire_words(t: Type) -> usize {
    if t.sharing == Sharing::Y {
        2 * t.n
    } else {
        words(t.n)
    }
}

/// Words as bytes, little-endian.
fn bits_bytes(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Bytes as little-endian words.
fn read_words(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
        .collect()
}

/// Y's labels, two words per block, wire `j` copy `k` at block `j·n + k`.
struct Garbling {
    delta: Block,
    n: usize,
}

impl Garbling {
    /// K ⊕ x·Δ for each label K and bit x of `x` (bits of the labels' wires, `words(n)`
    /// each), without branching on x.
    fn select(&self, labels: &[u64], x: &[u64]) -> Vec<u64> {
        let (n, w) = (self.n, words(self.n));
        let (lo, hi) = (self.delta.low(), self.delta.high());
        let mut out = labels.to_vec();
        for (wire, xw) in out.chunks_exact_mut(2 * n).zip(x.chunks_exact(w)) {
            for (k, pair) in wire.chunks_exact_mut(2).enumerate() {
                let m = 0u64.wrapping_sub((xw[k / 64] >> (k % 64)) & 1);
                pair[0] ^= lo & m;
                pair[1] ^= hi & m;
            }
        }
        out
    }

    /// K ⊕ Δ for every label.
    fn flip_all(&self, labels: &[u64]) -> Vec<u64> {
        let mut out = labels.to_vec();
        for pair in out.chunks_exact_mut(2) {
            pair[0] ^= self.delta.low();
            pair[1] ^= self.delta.high();
        }
        out
    }

    /// The labels' least significant bits as bits of their wires.
    fn colours(&self, labels: &[u64], width: usize) -> Vec<u64> {
        let (n, w) = (self.n, words(self.n));
        let mut out = vec![0u64; width * w];
        for (wire, ow) in labels.chunks_exact(2 * n).zip(out.chunks_exact_mut(w)) {
            for (k, pair) in wire.chunks_exact(2).enumerate() {
                ow[k / 64] |= (pair[0] & 1) << (k % 64);
            }
        }
        out
    }

    /// Y labels of x₀ ⊕ x₁ for bits x₀ of the garbler (party 0) and x₁ of the evaluator,
    /// from random correlated OTs of the setup (`ots`: the garbler's q, the evaluator's
    /// t = q ⊕ c·Δ): the evaluator sends e = x₁ ⊕ c and keeps t; the garbler takes
    /// K₀ = q ⊕ (e ⊕ x₀)·Δ as the zero-label, so t = K₀ ⊕ (x₀ ⊕ x₁)·Δ. One message of one
    /// bit per bit, evaluator to garbler; `mine` is this party's bits.
    fn share(
        &self,
        link: &mut Link<'_>,
        garbler: bool,
        ots: &[u64],
        mine: &[u64],
        width: usize,
    ) -> Result<Vec<u64>, Error> {
        if garbler {
            let e = read_words(&link.recv(8 * width * words(self.n))?);
            Ok(self.select(ots, &zip_map(&e, mine, |e, x| e ^ x)))
        } else {
            let e = zip_map(&self.colours(ots, width), mine, |c, x| c ^ x);
            link.send(&bits_bytes(&e))?;
            Ok(ots.to_vec())
        }
    }
}

/// Zeroes the bits of each wire past its `n` copies.
fn clear_tails(v: &mut [u64], n: usize) {
    let w = words(n);
    for wire in v.chunks_mut(w) {
        if let Some(last) = wire.last_mut() {
            *last &= tail_mask(n);
        }
    }
}

fn zip_map(a: &[u64], b: &[u64], f: impl Fn(u64, u64) -> u64) -> Vec<u64> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

/// The one-wire Boolean value `v` (`n` copies) as 0/1 per copy.
fn bit_of(v: &[u64], k: usize) -> u64 {
    u64::from(bits::bit(v, k))
}

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
        mut material,
        masks,
        delta,
        ..
    } = prepared;
    let first = side == 0;
    let space = session.space(peer)?;
    let mut prg: Prg = session.fork_prg();
    let mut link = Link {
        session,
        peer,
        space,
        waits: 0,
    };
    let mut data: Vec<Vec<u64>> = vec![Vec::new(); p.types.len()];
    let mut outputs = Vec::with_capacity(p.outputs.len());
    let mut steps = Vec::with_capacity(p.ops.len());
    for (k, op) in p.ops.iter().enumerate() {
        let (start, before, waits) = (Instant::now(), link.session.network().stats(), link.waits);
        let m = std::mem::take(&mut material[k]);
        let ty = |v: usize| p.types[v];
        match *op {
            Op::Input { out, owner } if ty(out).sharing == Sharing::Y => {
                let t = ty(out);
                // The owner's bits on its side, zero bits on the other.
                let x = if owner == side {
                    let x = inputs.iter().find(|(v, _)| v.0 == out).ok_or_else(|| {
                        Error::Input(format!("no plaintext for input value {out}"))
                    })?;
                    plain_words(t, &x.1)?
                } else {
                    vec![0; t.width() * words(t.n)]
                };
                data[out] =
                    Garbling { delta, n: t.n }.share(&mut link, first, &m[0], &x, t.width())?;
            }
            Op::Input { out, owner } => {
                let t = ty(out);
                let field = t.field();
                data[out] = if owner == side {
                    let x = inputs.iter().find(|(v, _)| v.0 == out).ok_or_else(|| {
                        Error::Input(format!("no plaintext for input value {out}"))
                    })?;
                    let x = plain_words(t, &x.1)?;
                    let (sent, kept) = match t.sharing {
                        // The peer's share r; this party keeps x − r (x ⊕ r). (Y: above.)
                        Sharing::B | Sharing::A | Sharing::Y => {
                            let mut r = vec![0u64; field.words()];
                            match field {
                                Field::Bits { n, .. } => {
                                    for wire in r.chunks_mut(words(n)) {
                                        bits::random(&mut prg, n, wire);
                                    }
                                }
                                Field::Ring { bits, .. } => {
                                    for e in r.iter_mut() {
                                        *e = prg.random_block().low() & ring::mask(bits);
                                    }
                                }
                            }
                            let kept = match field {
                                Field::Bits { .. } => zip_map(&x, &r, |x, r| x ^ r),
                                Field::Ring { .. } => zip_map(&x, &r, u64::wrapping_sub),
                            };
                            (r, kept)
                        }
                        // Δ = x + δ (x ⊕ δ), public.
                        Sharing::Beta => {
                            let d = zip_map(&x, &masks[out], |x, d| x ^ d);
                            (d.clone(), d)
                        }
                        Sharing::Alpha => {
                            let d = zip_map(&x, &masks[out], u64::wrapping_add);
                            (d.clone(), d)
                        }
                    };
                    let mut bytes = Vec::new();
                    algebra::encode(field, &sent, &mut bytes);
                    link.send(&bytes)?;
                    kept
                } else {
                    let bytes = link.recv(algebra::wire_bytes(field))?;
                    let mut v = vec![0u64; field.words()];
                    if !algebra::combine(field, &mut v, &bytes) {
                        return Err(link.malformed());
                    }
                    if let Field::Bits { n, .. } = field {
                        clear_tails(&mut v, n);
                    }
                    v
                };
            }
            Op::Xor { a, b, out } => data[out] = zip_map(&data[a], &data[b], |x, y| x ^ y),
            Op::Not { a, out } => {
                let t = ty(a);
                let mut v = data[a].clone();
                // Y: the garbler's zero-labels become the one-labels.
                if t.sharing == Sharing::Y {
                    if first {
                        v = Garbling { delta, n: t.n }.flip_all(&v);
                    }
                // B: party 0 flips its share; β: both flip the public Δ.
                } else if first || t.sharing == Sharing::Beta {
                    v.iter_mut().for_each(|x| *x = !*x);
                    clear_tails(&mut v, t.n);
                }
                data[out] = v;
            }
            Op::Wires {
                a,
                start,
                len,
                repeat,
                out,
            } => {
                data[out] = select_wires(&data[a], wire_words(ty(a)), start, len, repeat);
            }
            Op::Add { a, b, out } => data[out] = zip_map(&data[a], &data[b], u64::wrapping_add),
            Op::Sub { a, b, out } => data[out] = zip_map(&data[a], &data[b], u64::wrapping_sub),
            Op::AddConst { a, c, out } => {
                // A: party 0 adds c; α: both add c to the public Δ.
                let add = if first || ty(a).sharing == Sharing::Alpha {
                    c
                } else {
                    0
                };
                data[out] = data[a].iter().map(|x| x.wrapping_add(add)).collect();
            }
            Op::MulConst { a, c, out } => {
                data[out] = data[a].iter().map(|x| x.wrapping_mul(c)).collect();
            }
            Op::And { a, b, out } | Op::Mul { a, b, out } => {
                let t = ty(out);
                let f = t.field();
                let boolean = t.sharing.is_boolean();
                let (x, y) = (&data[a], &data[b]);
                data[out] = if t.sharing.is_masked() {
                    // This party's share of Δz, opened.
                    let (da, db, gamma) = (&masks[a], &masks[b], &m[0]);
                    let mut z: Vec<u64> = (0..x.len())
                        .map(|i| {
                            if boolean {
                                let xy = if first { x[i] & y[i] } else { 0 };
                                xy ^ (x[i] & db[i]) ^ (y[i] & da[i]) ^ gamma[i]
                            } else {
                                let xy = if first { x[i].wrapping_mul(y[i]) } else { 0 };
                                xy.wrapping_sub(x[i].wrapping_mul(db[i]))
                                    .wrapping_sub(y[i].wrapping_mul(da[i]))
                                    .wrapping_add(gamma[i])
                            }
                        })
                        .collect();
                    link.swap(&mut [(&mut z, f)])?;
                    z
                } else {
                    // Beaver: open d = x − a, e = y − b.
                    let (ta, tb, tc) = (&m[0], &m[1], &m[2]);
                    let sub = |u: u64, v: u64| if boolean { u ^ v } else { u.wrapping_sub(v) };
                    let mut d = zip_map(x, ta, sub);
                    let mut e = zip_map(y, tb, sub);
                    link.swap(&mut [(&mut d, f), (&mut e, f)])?;
                    (0..x.len())
                        .map(|i| {
                            if boolean {
                                let de = if first { d[i] & e[i] } else { 0 };
                                tc[i] ^ (d[i] & tb[i]) ^ (e[i] & ta[i]) ^ de
                            } else {
                                let de = if first { d[i].wrapping_mul(e[i]) } else { 0 };
                                tc[i]
                                    .wrapping_add(d[i].wrapping_mul(tb[i]))
                                    .wrapping_add(e[i].wrapping_mul(ta[i]))
                                    .wrapping_add(de)
                            }
                        })
                        .collect()
                };
            }
            Op::BitMul { bit, x, out } => {
                let t = ty(x);
                let (b, xv) = (&data[bit], &data[x]);
                data[out] = if t.sharing == Sharing::A {
                    // Open c = b ⊕ r and d = x − a; z = c·x + (1 − 2c)·(d·r + r·a).
                    let (rb, ra, av, rav) = (&m[0], &m[1], &m[2], &m[3]);
                    let mut c = zip_map(b, rb, |u, v| u ^ v);
                    let mut d = zip_map(xv, av, u64::wrapping_sub);
                    let bf = ty(bit).field();
                    link.swap(&mut [(&mut c, bf), (&mut d, t.field())])?;
                    (0..t.n)
                        .map(|k| {
                            let c = bit_of(&c, k);
                            let rx = d[k].wrapping_mul(ra[k]).wrapping_add(rav[k]);
                            c.wrapping_mul(xv[k])
                                .wrapping_add(1u64.wrapping_sub(2 * c).wrapping_mul(rx))
                        })
                        .collect()
                } else {
                    // [z] = Δb·Δx − Δb·[δx] + (1 − 2Δb)(Δx·[δb] − [δb·δx]), plus [δz].
                    let (lifted, product, dz) = (&m[0], &m[1], &m[2]);
                    let dx = &masks[x];
                    let mut z: Vec<u64> = (0..t.n)
                        .map(|k| {
                            let db = bit_of(b, k);
                            let both = if first { db.wrapping_mul(xv[k]) } else { 0 };
                            both.wrapping_sub(db.wrapping_mul(dx[k]))
                                .wrapping_add(1u64.wrapping_sub(2 * db).wrapping_mul(
                                    xv[k].wrapping_mul(lifted[k]).wrapping_sub(product[k]),
                                ))
                                .wrapping_add(dz[k])
                        })
                        .collect();
                    link.swap(&mut [(&mut z, t.field())])?;
                    z
                };
            }
            Op::BitProduct { a, b, out } => {
                // b_i = Δi + (1 − 2Δi)·δi: the product expanded, plus [δz].
                let t = ty(out);
                let (la, lb, product, dz) = (&m[0], &m[1], &m[2], &m[3]);
                let mut z: Vec<u64> = (0..t.n)
                    .map(|k| {
                        let (d1, d2) = (bit_of(&data[a], k), bit_of(&data[b], k));
                        let (s1, s2) = (1u64.wrapping_sub(2 * d1), 1u64.wrapping_sub(2 * d2));
                        let both = if first { d1 * d2 } else { 0 };
                        both.wrapping_add(d1.wrapping_mul(s2).wrapping_mul(lb[k]))
                            .wrapping_add(d2.wrapping_mul(s1).wrapping_mul(la[k]))
                            .wrapping_add(s1.wrapping_mul(s2).wrapping_mul(product[k]))
                            .wrapping_add(dz[k])
                    })
                    .collect();
                link.swap(&mut [(&mut z, t.field())])?;
                data[out] = z;
            }
            Op::Convert { hop, a, out } => {
                let (ta, to) = (ty(a), ty(out));
                let x = &data[a];
                data[out] = match hop {
                    Hop::BToBeta => {
                        let mut d = zip_map(x, &masks[out], |x, d| x ^ d);
                        link.swap(&mut [(&mut d, to.field())])?;
                        d
                    }
                    Hop::AToAlpha => {
                        let mut d = zip_map(x, &masks[out], u64::wrapping_add);
                        link.swap(&mut [(&mut d, to.field())])?;
                        d
                    }
                    // Party 0: Δ ⊕ δ₀ (Δ − δ₀); party 1: δ₁ (−δ₁).
                    Hop::BetaToB if first => zip_map(x, &masks[a], |x, d| x ^ d),
                    Hop::BetaToB => masks[a].clone(),
                    Hop::AlphaToA if first => zip_map(x, &masks[a], u64::wrapping_sub),
                    Hop::AlphaToA => masks[a].iter().map(|d| d.wrapping_neg()).collect(),
                    Hop::YToB => Garbling { delta, n: ta.n }.colours(x, ta.width()),
                    Hop::BToY => {
                        Garbling { delta, n: ta.n }.share(&mut link, first, &m[0], x, ta.width())?
                    }
                    Hop::BToA | Hop::BetaToA => {
                        // Per bit: [x] = c + (1 − 2c)·[r] with c public (B: x ⊕ r opened
                        // against a daBit; β: Δ against the lifted mask); Σ 2^j x_j.
                        let (c, lifted) = if hop == Hop::BToA {
                            let mut c = zip_map(x, &m[0], |u, v| u ^ v);
                            link.swap(&mut [(&mut c, ta.field())])?;
                            (c, &m[1])
                        } else {
                            (x.clone(), &m[0])
                        };
                        let (n, w) = (ta.n, words(ta.n));
                        (0..n)
                            .map(|k| {
                                (0..ta.width()).fold(0u64, |acc, j| {
                                    let cj = bit_of(&c[j * w..(j + 1) * w], k);
                                    let bit = (if first { cj } else { 0 }).wrapping_add(
                                        1u64.wrapping_sub(2 * cj).wrapping_mul(lifted[j * n + k]),
                                    );
                                    acc.wrapping_add(bit << j)
                                })
                            })
                            .collect()
                    }
                };
            }
            Op::Split { a, out } => {
                let t = ty(out[0]);
                let w = words(t.n);
                let mut own = vec![0u64; t.field().words()];
                for (k, x) in data[a].iter().enumerate() {
                    for j in 0..t.width() {
                        own[j * w + k / 64] |= ((x >> j) & 1) << (k % 64);
                    }
                }
                let zero = vec![0u64; own.len()];
                let (o0, o1) = if first { (own, zero) } else { (zero, own) };
                data[out[0]] = o0;
                data[out[1]] = o1;
            }
            Op::Circuit {
                circuit,
                ref inputs,
                ref outputs,
            } => {
                let c = &p.circuits[circuit];
                let w = words(c.simd());
                let mut v = vec![0u64; c.circuit().num_wires as usize * w];
                let mut at = 0;
                for &i in inputs {
                    v[at..at + data[i].len()].copy_from_slice(&data[i]);
                    at += data[i].len();
                }
                let and: [Vec<u64>; 3] = [m[0].clone(), m[1].clone(), m[2].clone()];
                let mut layers = Layers::new(c);
                let depth = c.depth();
                for d in 0..=depth {
                    Layers::free(c, side, d, &mut v);
                    if d == depth {
                        break;
                    }
                    let mine = layers.open(c, side, d + 1, &v, &and);
                    let mut bytes = Vec::with_capacity(8 * mine.len());
                    bytes.extend(mine.iter().flat_map(|x| x.to_le_bytes()));
                    link.send(&bytes)?;
                    let got = link.recv(bytes.len())?;
                    for (t, b) in layers.theirs(c, d + 1).iter_mut().zip(got.chunks_exact(8)) {
                        *t = u64::from_le_bytes(b.try_into().unwrap_or_default());
                    }
                    layers.close(c, side, d + 1, &mut v, &and);
                }
                let mut at = c.circuit().output_start() as usize * w;
                for &o in outputs {
                    let len = ty(o).field().words();
                    data[o] = v[at..at + len].to_vec();
                    at += len;
                }
            }
            Op::Barrier => {
                link.send(&[1])?;
                link.recv(1)?;
            }
            Op::Linear { x, map, owner, out } => {
                let map = &p.maps[map];
                data[out] = match &m[..] {
                    // W·cols(Δx) + bias − (W·cols(δₒ) + its share of W·cols(δₚ)).
                    [w, bias, c] if owner == side => {
                        let y = map.multiply(w, &map.gather(&data[x]), Some(bias));
                        zip_map(&y, c, u64::wrapping_sub)
                    }
                    [share] => share.iter().map(|s| s.wrapping_neg()).collect(),
                    _ => return Err(Error::Input("a linear map's setup is missing".into())),
                };
            }
            Op::Gather { a, indices, out } => {
                let v = &data[a];
                data[out] = p.gathers[indices].iter().map(|&i| v[i as usize]).collect();
            }
            Op::Truncate {
                a,
                f,
                unsigned,
                out,
            } => {
                let bits = ty(a).ring_bits();
                let mask = super::ring::mask(bits);
                data[out] = data[a]
                    .iter()
                    .map(|&s| {
                        if unsigned {
                            (s & mask) >> f
                        } else {
                            super::linear::truncate_share(s, bits, f, side)
                        }
                    })
                    .collect();
            }
            Op::TopBits { a, out } => {
                let top = ty(a).ring_bits() - 1;
                let n = ty(a).n;
                let mine: Vec<u64> = data[a].iter().map(|&s| (s >> top) & 1).collect();
                let zero = vec![0u64; n];
                let mut bit = vec![0u64; words(n)];
                if !first {
                    for (k, &m) in mine.iter().enumerate() {
                        bit[k / 64] |= m << (k % 64);
                    }
                }
                data[out[0]] = bit;
                let (a0, a1) = if first { (mine, zero) } else { (zero, mine) };
                data[out[1]] = a0;
                data[out[2]] = a1;
            }
            Op::Garbled {
                circuit,
                ref inputs,
                ref outputs,
            } => {
                let y = &p.garbled[circuit];
                let (n, backend) = (y.n, tessera_core::Backend::active());
                let scheme = Prp::with_backend(backend, Block::ZERO)?;
                // The copies side by side: wire j of copy k of value v is widened wire
                // start_v + k·w_v + j.
                let mut labels = Vec::with_capacity(y.widened.num_input_wires() as usize);
                for (&v, &w) in inputs.iter().zip(&y.inputs) {
                    let blocks: &[Block] = bytemuck::cast_slice(&data[v]);
                    for k in 0..n {
                        labels.extend((0..w as usize).map(|j| blocks[j * n + k]));
                    }
                }
                let out_labels = if first {
                    let Some(secret) = Prp::with_offset(delta, &mut prg).map(|o| o.secret) else {
                        return Err(Error::Input("half-gates takes any offset".into()));
                    };
                    let mut tables: Vec<Block> = Vec::new();
                    let out = Garbler::new(scheme)
                        .garble(&y.plan, &secret, &labels, &mut tables)?
                        .to_vec();
                    link.send(bytemuck::cast_slice(&tables))?;
                    out
                } else {
                    let bytes = link.recv(16 * table_blocks::<Prp>(&y.plan))?;
                    let tables: Vec<Block> = bytes
                        .chunks_exact(16)
                        .map(|b| Block::from_bytes(b.try_into().unwrap_or_default()))
                        .collect();
                    Evaluator::new(scheme)
                        .evaluate(&y.plan, &labels, &mut TableReader::new(&tables))?
                        .to_vec()
                };
                let mut at = 0;
                for (&o, &w) in outputs.iter().zip(&y.outputs) {
                    let w = w as usize;
                    let mut v = vec![0u64; 2 * w * n];
                    for k in 0..n {
                        for j in 0..w {
                            let b = out_labels[at + k * w + j];
                            v[2 * (j * n + k)] = b.low();
                            v[2 * (j * n + k) + 1] = b.high();
                        }
                    }
                    at += w * n;
                    data[o] = v;
                }
            }
            Op::Output { a, reveal } => {
                let t = ty(a);
                let f = t.field();
                // Y opens as the B sharing of its labels' colours.
                if t.sharing == Sharing::Y {
                    data[a] = Garbling { delta, n: t.n }.colours(&data[a], t.width());
                }
                // B, A: the share; β, α: the mask share.
                let share = if t.sharing.is_masked() {
                    &masks[a]
                } else {
                    &data[a]
                };
                if reveal != Reveal::To(side) {
                    let mut bytes = Vec::new();
                    algebra::encode(f, share, &mut bytes);
                    link.send(&bytes)?;
                }
                outputs.push(if reveal != Reveal::To(1 - side) {
                    let mut theirs = vec![0u64; f.words()];
                    let bytes = link.recv(algebra::wire_bytes(f))?;
                    if !algebra::combine(f, &mut theirs, &bytes) {
                        return Err(link.malformed());
                    }
                    let x: Vec<u64> = match t.sharing {
                        Sharing::B | Sharing::Y => zip_map(&data[a], &theirs, |x, y| x ^ y),
                        Sharing::A => zip_map(&data[a], &theirs, u64::wrapping_add),
                        Sharing::Beta => (0..theirs.len())
                            .map(|i| data[a][i] ^ masks[a][i] ^ theirs[i])
                            .collect(),
                        Sharing::Alpha => (0..theirs.len())
                            .map(|i| data[a][i].wrapping_sub(masks[a][i]).wrapping_sub(theirs[i]))
                            .collect(),
                    };
                    Some(words_plain(t, &x))
                } else {
                    None
                });
            }
        }
        steps.push(Step {
            op: op.name(),
            ms: start.elapsed().as_secs_f64() * 1e3,
            traffic: link.session.network().stats().since(&before),
            waits: link.waits - waits,
        });
    }
    Ok((outputs, steps))
}
