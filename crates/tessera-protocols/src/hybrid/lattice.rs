//! The setup of a private linear map by homomorphic products (Cheetah, Huang et al., USENIX
//! Security 2022, §4): the party without the coefficients encrypts its mask share's images
//! under its RLWE key ([`crate::lattice::LatticeKeys`], sent once per session) with Cheetah's
//! coefficient encoding (HomConv for a convolution, HomFC for a dense layer, per group and
//! image); the owner multiplies them by its coefficients, takes a random share r off,
//! re-randomises and floods the noise ([`tessera_he::linear::Server`]) and sends the answer
//! back; the other party decrypts W·cols(δ) − r. One round trip per map, where Gilboa's
//! products take an OT per coefficient bit ([`super::linear`]); nothing about the weights
//! but the number of primes each answer keeps reaches the other party.

use super::linear::{LinearMap, LinearWeights};
use super::prepare::SetupLink;
use crate::Error;
use crate::lattice::{KEYS, LatticeKeys, context, local, peers};
use tessera_core::Prg;
use tessera_he::conv::{ConvEncoding, ConvShape};
use tessera_he::fc::FcEncoding;
use tessera_he::linear::{
    Answer, Client, Encoding, Query, Server, answer_bytes, block_costs, query_bytes,
};
use tessera_he::{AnswerPlan, Context};
use tessera_net::{Channel, Kind as MessageKind, Space};

/// The setup of a map by homomorphic products: the other party's encrypted images, then the
/// owner's answers.
pub const CIPHERTEXTS: MessageKind = MessageKind::new(0x58, "hybrid linear map ciphertexts");

/// The share of W·cols(δ) (the other party's `mask` δ) of a map with the owner's `weights`
/// (given at the owner) in Z_2^`bits`: the owner's r, the other party's W·cols(δ) − r.
pub(super) fn share(
    link: &mut SetupLink<'_>,
    map: &LinearMap,
    bits: u32,
    mask: &[u64],
    weights: Option<&LinearWeights>,
) -> Result<Vec<u64>, Error> {
    let (peer, space) = (link.peer, link.space);
    link.session.with_lattice(peer, bits, |keys, channel, prg| {
        let mut party = Party {
            keys,
            channel,
            space,
            peer,
            prg,
        };
        if dense(map) {
            let enc = fc_encoding(party.keys.context(), map)?;
            party.share(map, &enc, mask, weights)
        } else {
            let enc = conv_encoding(party.keys.context(), map)?;
            party.share(map, &enc, mask, weights)
        }
    })
}

/// The bytes both parties send for a map's products in Z_2^`bits` (the public key, sent once
/// per session, left out), its answers estimated at [`nominal_primes`]; `None` if the
/// parameters cannot hold the map.
pub(super) fn bytes(map: &LinearMap, bits: u32) -> Option<f64> {
    let ctx = &context(bits).ok()?;
    let primes = nominal_primes(ctx, map);
    let units = units(map) as f64;
    let (query, answer) = if dense(map) {
        let enc = fc_encoding(ctx, map).ok()?;
        (query_bytes(ctx, &enc), answer_bytes(ctx, &enc, primes))
    } else {
        let enc = conv_encoding(ctx, map).ok()?;
        (query_bytes(ctx, &enc), answer_bytes(ctx, &enc, primes))
    };
    let frames = 2 * tessera_net::FRAME_HEADER;
    Some(units * (query + answer + 1) as f64 + frames as f64)
}

/// Whether a map is a dense layer: one column, one group, encoded by HomFC on cols(x) (a
/// convolution with one output place too: its images may be larger than its one window).
fn dense(map: &LinearMap) -> bool {
    map.shape().2 == 1 && map.groups() == 1
}

/// The (group, image) pairs a map's encoding is used for, each its own query and answer.
fn units(map: &LinearMap) -> usize {
    map.groups() * map.geometry().1
}

/// The primes an answer is estimated to keep before the owner's coefficients are known:
/// those of coefficients up to 2^(ℓ/2) in magnitude over the map's `inner` products.
fn nominal_primes(ctx: &Context, map: &LinearMap) -> usize {
    let half = ctx.params().plain_bits() / 2;
    let l1 = (map.shape().1 as u128) << half;
    AnswerPlan::new(ctx, l1).map_or(ctx.top_level(), |plan| plan.primes)
}

fn fc_encoding(ctx: &Context, map: &LinearMap) -> Result<FcEncoding, Error> {
    let (rows, inner, _) = map.shape();
    let (input, output) = block_costs(ctx, nominal_primes(ctx, map));
    FcEncoding::cheapest(rows, inner, ctx.degree(), input, output).map_err(local)
}

fn conv_encoding(ctx: &Context, map: &LinearMap) -> Result<ConvEncoding, Error> {
    let (g, _) = map.geometry();
    let shape = ConvShape {
        channels: g.channels,
        height: g.height,
        width: g.width,
        out_channels: map.shape().0 / map.groups(),
        kernel: g.kernel,
        stride: g.stride,
    };
    let (input, output) = block_costs(ctx, nominal_primes(ctx, map));
    ConvEncoding::cheapest(shape, ctx.degree(), input, output).map_err(local)
}

/// One party's side of a map's products, with its keys and link.
struct Party<'k, 'c, 'n> {
    keys: &'k mut LatticeKeys,
    channel: &'c mut tessera_net::PeerChannel<'n>,
    space: Space,
    peer: usize,
    prg: &'k mut Prg,
}

/// Where a unit's outputs go among the map's: its rows per group, columns, and places per
/// image.
struct Placement {
    rows_per_group: usize,
    cols: usize,
    places: usize,
}

impl Placement {
    fn of(map: &LinearMap) -> Self {
        let (rows, _, cols) = map.shape();
        Placement {
            rows_per_group: rows / map.groups(),
            cols,
            places: cols / map.geometry().1,
        }
    }

    /// Output `o` of unit (`group`, `image`)'s encoding, as an output of the map: row
    /// `group·rows/groups + o / places`, column `image·places + o % places`.
    fn at(&self, (group, image): (usize, usize), o: usize) -> usize {
        let row = group * self.rows_per_group + o / self.places;
        row * self.cols + image * self.places + o % self.places
    }
}

impl Party<'_, '_, '_> {
    fn share<E: Encoding>(
        &mut self,
        map: &LinearMap,
        enc: &E,
        mask: &[u64],
        weights: Option<&LinearWeights>,
    ) -> Result<Vec<u64>, Error> {
        match weights {
            Some(w) => self.answer(map, enc, w),
            None => self.ask(map, enc, mask),
        }
    }

    /// The other party's side: every unit's query in one message, then its share of each
    /// answer.
    fn ask<E: Encoding>(
        &mut self,
        map: &LinearMap,
        enc: &E,
        mask: &[u64],
    ) -> Result<Vec<u64>, Error> {
        let tag = self.space.tag(CIPHERTEXTS);
        let (ctx, sk) = self
            .keys
            .asking(self.channel, self.space.tag(KEYS), self.prg)?;
        let client = Client::new(ctx, sk, enc);
        let ring = super::ring::mask(ctx.params().plain_bits());
        // A dense layer's vector is cols(δ); a convolution's, its images.
        let vectors = if dense(map) {
            map.gather(mask)
        } else {
            map.images(mask)
        };
        let images: Vec<u64> = vectors.iter().map(|v| v & ring).collect();
        let mut message = Vec::with_capacity(units(map) * query_bytes(ctx, enc));
        for unit in images.chunks_exact(enc.inputs()) {
            let query = client.query(unit, self.prg).map_err(local)?;
            message.extend(query.to_bytes());
        }
        self.channel.send(tag, &message)?;
        self.channel.flush()?;
        // An answer's length for each number of primes it may keep, made once.
        let lengths: Vec<usize> = (1..=ctx.top_level())
            .map(|primes| answer_bytes(ctx, enc, primes))
            .collect();
        let most = units(map) * (1 + lengths.iter().max().copied().unwrap_or(0));
        let message = self.channel.recv_bounded(tag, most)?;
        let mut share = vec![0u64; map.outputs()];
        let mut rest = &message[..];
        let (count, placement) = (map.geometry().1, Placement::of(map));
        let peer = self.peer;
        let theirs = |e| peers(e, peer, CIPHERTEXTS);
        for unit in 0..units(map) {
            let answer = cut_answer(&lengths, &mut rest).map_err(theirs)?;
            let opened = client.open(&answer).map_err(theirs)?;
            for (o, v) in opened.into_iter().enumerate() {
                share[placement.at((unit / count, unit % count), o)] = v;
            }
        }
        if !rest.is_empty() {
            let e = malformed(format!("{} bytes after the last answer", rest.len()));
            return Err(theirs(e));
        }
        Ok(share)
    }

    /// The owner's side: the queries, then every unit's answer in one message; its share r.
    fn answer<E: Encoding>(
        &mut self,
        map: &LinearMap,
        enc: &E,
        w: &LinearWeights,
    ) -> Result<Vec<u64>, Error> {
        map.check(w)?;
        let tag = self.space.tag(CIPHERTEXTS);
        let (ctx, pk) = self
            .keys
            .answering(self.channel, self.space.tag(KEYS), self.peer)?;
        let peer = self.peer;
        let unit_bytes = query_bytes(ctx, enc);
        let mut message = vec![0u8; units(map) * unit_bytes];
        self.channel.recv_into(tag, &mut message)?;
        let bits = ctx.params().plain_bits();
        let (rows, inner, _) = map.shape();
        let per_group = rows / map.groups() * inner;
        let (count, placement) = (map.geometry().1, Placement::of(map));
        let mut share = vec![0u64; map.outputs()];
        let mut reply = Vec::new();
        for (group, coefficients) in w.matrix.chunks_exact(per_group).enumerate() {
            let signed: Vec<i64> = coefficients.iter().map(|&v| signed(v, bits)).collect();
            let server = Server::new(ctx, pk, enc, &signed).map_err(local)?;
            let theirs = |e| peers(e, peer, CIPHERTEXTS);
            // The group's images answered together: its kernel polynomials made once.
            let queries = message[group * count * unit_bytes..(group + 1) * count * unit_bytes]
                .chunks_exact(unit_bytes)
                .map(|bytes| Query::from_bytes(ctx, enc, bytes))
                .collect::<Result<Vec<_>, _>>()
                .map_err(theirs)?;
            let answered = server.answer(&queries, self.prg).map_err(theirs)?;
            for (image, (answer, r)) in answered.into_iter().enumerate() {
                reply.push(answer.primes);
                reply.extend_from_slice(&answer.words);
                for (o, v) in r.into_iter().enumerate() {
                    share[placement.at((group, image), o)] = v;
                }
            }
        }
        self.channel.send(tag, &reply)?;
        self.channel.flush()?;
        Ok(share)
    }
}

/// A coefficient of Z_2^`bits` as the signed integer its two's complement is.
fn signed(v: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((v << shift) as i64) >> shift
}

/// The next unit's answer off the front of `rest`: its primes byte, then the words that many
/// primes take (`lengths[primes − 1]` bytes).
fn cut_answer(lengths: &[usize], rest: &mut &[u8]) -> Result<Answer, tessera_he::Error> {
    let (&primes, after) = rest
        .split_first()
        .ok_or_else(|| malformed("cut short before an answer".into()))?;
    let Some(&len) = usize::from(primes)
        .checked_sub(1)
        .and_then(|i| lengths.get(i))
    else {
        return Err(malformed(format!("{primes} primes kept")));
    };
    if after.len() < len {
        return Err(malformed("an answer cut short".into()));
    }
    let (words, after) = after.split_at(len);
    *rest = after;
    Ok(Answer {
        primes,
        words: words.to_vec(),
    })
}

fn malformed(detail: String) -> tessera_he::Error {
    tessera_he::Error::Malformed {
        what: "linear-map answers",
        detail,
    }
}
