//! Authenticated shares among n parties (WRK17b §3, "authenticated shares"): a bit
//! x = x^0 ⊕ … ⊕ x^{n−1} of which party i holds x^i with a MAC M_j\[x^i\] = K_j\[x^i\] ⊕ x^i·Δ_j
//! under every peer j's global Δ_j, and a key K_i\[x^j\] for every peer's share under its own.
//! XOR is local; a public constant is added by party 0 flipping its share and every other party
//! moving its key for party 0's share (the two-party rule of [`crate::share::Shares::add_public`]
//! on each link with party 0).
//!
//! Fresh shares come from pairwise random correlated OT with every party's OT senders fixed to
//! its one Δ ([`tessera_protocols::Session::fix_ot_delta`]): party i takes its random bits from
//! its OT with its first peer as its shares, and tells every other peer the difference to the
//! bits of their OT. A party could tell different peers differences to different bits; the
//! consistency check ([`consistency`]) catches that.

use super::{Exchange, Round};
use crate::abit::{self, AuthKeys};
use crate::checks::{self, Check};
use crate::wire::{self as kinds, unpack_bits};
use crate::{Error, combine};
use subtle::ConstantTimeEq;
use tessera_core::{Block, Prg};
use tessera_net::role::pack_bits;
use tessera_protocols::Session;

/// The statistical security parameter of the consistency check: a party that authenticated
/// different bits to different peers passes with probability 2^-ρ.
pub const RHO: usize = 40;

/// Who this party is among n, and its global Δ (least significant bit 1).
#[derive(Clone, Copy)]
pub struct Party {
    /// This party's id.
    pub me: usize,
    /// How many parties.
    pub n: usize,
    /// This party's global Δ. Secret.
    pub delta: Block,
}

impl std::fmt::Debug for Party {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Party")
            .field("me", &self.me)
            .field("n", &self.n)
            .finish_non_exhaustive()
    }
}

impl Party {
    /// The peers, in order.
    pub fn peers(&self) -> impl Iterator<Item = usize> + use<> {
        let me = self.me;
        (0..self.n).filter(move |&j| j != me)
    }

    /// Peer `j`'s slot among this party's peers.
    pub fn slot(&self, j: usize) -> usize {
        if j < self.me { j } else { j - 1 }
    }

    /// Blocks per shared bit: a MAC and a key per peer.
    pub fn width(&self) -> usize {
        2 * (self.n - 1)
    }
}

/// One party's authenticated shares of a vector of bits, bit-major: for bit i and peer slot s,
/// the MAC of this party's share under the peer's Δ, then its key for the peer's share.
#[derive(Clone, Debug)]
pub struct NShares {
    party: Party,
    v: Vec<Block>,
}

impl NShares {
    /// Shares of `len` zeros.
    pub fn zeroed(party: Party, len: usize) -> Self {
        NShares {
            party,
            v: vec![Block::ZERO; len * party.width()],
        }
    }

    /// How many bits.
    pub fn len(&self) -> usize {
        self.v.len() / self.party.width()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    /// The party these shares belong to.
    pub fn party(&self) -> Party {
        self.party
    }

    /// Bit `i`'s blocks (MAC and key per peer slot).
    pub fn entry(&self, i: usize) -> &[Block] {
        let w = self.party.width();
        &self.v[i * w..(i + 1) * w]
    }

    /// Bit `i`'s blocks, to change.
    pub fn entry_mut(&mut self, i: usize) -> &mut [Block] {
        let w = self.party.width();
        &mut self.v[i * w..(i + 1) * w]
    }

    /// This party's share of bit `i`. Secret.
    pub fn bit(&self, i: usize) -> bool {
        self.v[i * self.party.width()].lsb()
    }

    /// The MAC of this party's share of bit `i` under peer `j`'s Δ.
    pub fn mac(&self, i: usize, j: usize) -> Block {
        self.v[i * self.party.width() + 2 * self.party.slot(j)]
    }

    /// This party's key for peer `j`'s share of bit `i`.
    pub fn key(&self, i: usize, j: usize) -> Block {
        self.v[i * self.party.width() + 2 * self.party.slot(j) + 1]
    }

    /// Bit `i` ⊕= `other`'s bit `k`.
    pub fn xor_from(&mut self, i: usize, other: &NShares, k: usize) {
        xor_entry(self.entry_mut(i), other.entry(k));
    }

    /// Appends bit `k` of `other`.
    pub fn push_from(&mut self, other: &NShares, k: usize) {
        self.v.extend_from_slice(other.entry(k));
    }

    /// Appends an entry.
    pub fn push(&mut self, entry: &[Block]) {
        self.v.extend_from_slice(entry);
    }

    /// Bit `i` ⊕= the public bit `c`; constant time in `c`.
    pub fn add_public(&mut self, i: usize, c: bool) {
        let party = self.party;
        add_public(party, self.entry_mut(i), c);
    }

    /// This party's MACs under peer `j`'s Δ of `range`.
    fn macs_for(&self, j: usize, range: std::ops::Range<usize>) -> Vec<Block> {
        range.map(|i| self.mac(i, j)).collect()
    }

    /// This party's keys for peer `j`'s shares of `range`.
    fn keys_for(&self, j: usize, range: std::ops::Range<usize>) -> Vec<Block> {
        range.map(|i| self.key(i, j)).collect()
    }
}

/// `dst` ⊕= `src`, block by block.
pub fn xor_entry(dst: &mut [Block], src: &[Block]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= *s;
    }
}

/// Adds the public bit `c` to one shared bit's entry (see the module documentation).
pub fn add_public(party: Party, entry: &mut [Block], c: bool) {
    let m = Block::mask(c);
    if party.me == 0 {
        for mac in entry.iter_mut().step_by(2) {
            *mac ^= Block::new(1) & m;
        }
    } else {
        entry[1] ^= (party.delta ^ Block::new(1)) & m;
    }
}

/// Moves a share's MAC (this party's bit) or a key (a peer's bit) by the public difference `d`
/// told between the bit authenticated and the bit meant: the holder flips the MAC's least
/// significant bit, the key holder moves its key by d·(Δ ⊕ 1).
fn fix_mac(mac: &mut Block, d: bool) {
    *mac ^= Block::new(1) & Block::mask(d);
}

fn fix_key(key: &mut Block, delta: Block, d: bool) {
    *key ^= (delta ^ Block::new(1)) & Block::mask(d);
}

/// This party's first peer: the one whose OT gives its shares their bits.
fn first_peer(me: usize) -> usize {
    usize::from(me == 0)
}

/// `len` fresh random authenticated shares (not yet checked for consistency: the caller runs
/// [`consistency`] over them with ρ more).
pub fn random(
    s: &mut Session,
    ex: &mut Exchange,
    party: Party,
    len: usize,
) -> Result<NShares, Error> {
    let mut shares = NShares::zeroed(party, len);
    let mut bits: Vec<Vec<bool>> = vec![Vec::new(); party.n];
    for j in party.peers() {
        let (held, keys) = abit::random(s, j, len)?;
        if keys.delta() != party.delta {
            return Err(Error::Usage("the OT sender's Δ is not this party's".into()));
        }
        fill(&mut shares, j, held.macs(), &keys);
        bits[j] = held.macs().iter().map(|m| m.lsb()).collect();
    }
    let mine = std::mem::take(&mut bits[first_peer(party.me)]);
    let mut out = vec![None; party.n];
    for j in party.peers().filter(|&j| j != first_peer(party.me)) {
        let diffs = mine.iter().zip(&bits[j]).map(|(a, b)| a ^ b);
        for (i, d) in diffs.clone().enumerate() {
            fix_mac(&mut shares.entry_mut(i)[2 * party.slot(j)], d);
        }
        out[j] = Some(pack_bits(diffs.collect::<Vec<_>>().into_iter()));
    }
    let expect = expect_from(party, |j| first_peer(j) != party.me, len.div_ceil(8));
    let got = ex.round(s, Round::new(kinds::N_FIXES, out, expect))?;
    for (j, msg) in got.iter().enumerate() {
        let Some(msg) = msg else { continue };
        let d = unpack_bits(msg, len).ok_or(Error::CheckFailed {
            check: "the share fixes' format check",
        })?;
        let s = party.slot(j);
        for (i, d) in d.into_iter().enumerate() {
            fix_key(&mut shares.entry_mut(i)[2 * s + 1], party.delta, d);
        }
    }
    Ok(shares)
}

/// The expected lengths: `len` from each peer `j` for which `from(j)`.
pub fn expect_from(party: Party, from: impl Fn(usize) -> bool, len: usize) -> Vec<Option<usize>> {
    (0..party.n)
        .map(|j| (j != party.me && from(j)).then_some(len))
        .collect()
}

/// Puts the MACs from the OT with `j` and the keys for `j`'s bits into `shares`.
fn fill(shares: &mut NShares, j: usize, macs: &[Block], keys: &AuthKeys) {
    let s = shares.party.slot(j);
    for (i, (&m, &k)) in macs.iter().zip(keys.keys()).enumerate() {
        let e = shares.entry_mut(i);
        e[2 * s] = m;
        e[2 * s + 1] = k;
    }
}

/// Opens `shares` to every party, each share's MAC checked by the party it is authenticated
/// to (an opening per link: the bits and a digest of their MACs, [`abit::open_macs`]).
pub fn open_all(
    s: &mut Session,
    ex: &mut Exchange,
    shares: &NShares,
    kind: tessera_net::Kind,
) -> Result<Vec<bool>, Error> {
    open_to(s, ex, shares, kind, None)
}

/// Opens `shares` to party `to` only (`None`: to every party). Returns the bits, or (for a
/// party that learns nothing) an empty vector.
pub fn open_to(
    s: &mut Session,
    ex: &mut Exchange,
    shares: &NShares,
    kind: tessera_net::Kind,
    to: Option<usize>,
) -> Result<Vec<bool>, Error> {
    let party = shares.party;
    let len = shares.len();
    let mut out = vec![None; party.n];
    for j in party.peers().filter(|&j| to.is_none_or(|t| t == j)) {
        out[j] = Some(abit::open_macs(&shares.macs_for(j, 0..len), 0));
    }
    let learns = to.is_none_or(|t| t == party.me);
    let expect = expect_from(party, |_| learns, len.div_ceil(8) + abit::DIGEST);
    let got = ex.round(s, Round::new(kind, out, expect))?;
    if !learns {
        return Ok(Vec::new());
    }
    let mut bits: Vec<bool> = (0..len).map(|i| shares.bit(i)).collect();
    for (j, msg) in got.iter().enumerate() {
        let Some(msg) = msg else { continue };
        let theirs = abit::check_macs(party.delta, &shares.keys_for(j, 0..len), 0, msg)?;
        for (b, t) in bits.iter_mut().zip(theirs) {
            *b ^= t;
        }
    }
    Ok(bits)
}

/// Bytes of a commitment, a coin's seed and a commitment's nonce.
const DIGEST: usize = 32;
const SEED: usize = 16;

/// A coin no coalition of fewer than n parties can bias: every party commits to a random seed,
/// then all open, and the coin is the XOR of the seeds (two rounds).
pub fn coin(
    s: &mut Session,
    ex: &mut Exchange,
    party: Party,
    prg: &mut Prg,
) -> Result<Block, Error> {
    let (seed, nonce) = (prg.random_block().to_bytes(), prg.random_block().to_bytes());
    let commit = combine::hash(b"tessera-ag n-party coin", &[&seed, &nonce]);
    let all = |msg: &[u8]| -> Vec<Option<Vec<u8>>> {
        (0..party.n)
            .map(|j| (j != party.me).then(|| msg.to_vec()))
            .collect()
    };
    let commits = ex.round(
        s,
        Round::new(
            kinds::COIN_COMMIT,
            all(&commit),
            expect_from(party, |_| true, DIGEST),
        ),
    )?;
    let opened = ex.round(
        s,
        Round::new(
            kinds::COIN_OPEN,
            all(&[seed, nonce].concat()),
            expect_from(party, |_| true, 2 * SEED),
        ),
    )?;
    let mut coin = Block::from_bytes(seed);
    for (c, o) in commits.iter().zip(&opened) {
        let (Some(c), Some(o)) = (c, o) else { continue };
        let again = combine::hash(b"tessera-ag n-party coin", &[&o[..SEED], &o[SEED..]]);
        if !bool::from(again.ct_eq(c.as_slice())) {
            return Err(Error::CheckFailed {
                check: "the coin's commitment check",
            });
        }
        coin ^= Block::from_bytes(o[..SEED].try_into().unwrap_or_default());
    }
    Ok(coin)
}

/// A PRG for one use (`tag`) of a tossed coin.
pub fn seeded(coin: Block, tag: &[u8]) -> Prg {
    let seed = combine::hash(tag, &[&coin.to_bytes()]);
    Prg::from_seed_block(Block::from_bytes(seed[..16].try_into().unwrap_or_default()))
}

/// The consistency check's ρ combinations of `shares` (the last ρ shares only as masks): for
/// combination r, ⊕_k χ_{r,k}·x_k ⊕ x_{ℓ+r} with the χ drawn from `coin`. Returns the
/// combined entries (MACs and keys added alike).
fn combinations(shares: &NShares, coin: Block) -> Result<NShares, Error> {
    let l = shares.len().checked_sub(RHO).ok_or_else(|| {
        Error::Usage("the consistency check needs ρ more shares than it checks".into())
    })?;
    let mut prg = seeded(coin, b"tessera-ag consistency coefficients");
    let w = shares.party.width();
    let mut out = NShares::zeroed(shares.party, RHO);
    for r in 0..RHO {
        out.xor_from(r, shares, l + r);
    }
    let mut chi = [0u64; 2];
    for (k, entry) in shares.v[..l * w].chunks_exact(w).enumerate() {
        if k % 2 == 0 {
            let b = prg.random_block();
            chi = [b.low(), b.high()];
        }
        let mut bits = chi[k % 2] & ((1 << RHO) - 1);
        while bits != 0 {
            let r = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            xor_entry(&mut out.v[r * w..(r + 1) * w], entry);
        }
    }
    Ok(out)
}

/// What the consistency check sends each peer: the combinations opened to it.
pub struct Consistency {
    combined: NShares,
}

impl Consistency {
    /// The combinations of `shares` under `coin` (WRK17b §3's check that every party
    /// authenticated the same bits to every peer).
    pub fn new(shares: &NShares, coin: Block) -> Result<Self, Error> {
        Ok(Consistency {
            combined: combinations(shares, coin)?,
        })
    }

    /// The opening for peer `j`.
    pub fn opening(&self, j: usize) -> Vec<u8> {
        abit::open_macs(&self.combined.macs_for(j, 0..RHO), 0)
    }

    /// Bytes of an opening.
    pub const LEN: usize = RHO.div_ceil(8) + abit::DIGEST;

    /// Checks peer `j`'s opening against this party's keys; returns the bits it showed.
    pub fn check(&self, j: usize, msg: &[u8]) -> Result<Vec<bool>, Error> {
        let keys = self.combined.keys_for(j, 0..RHO);
        abit::check_macs(self.combined.party.delta, &keys, 0, msg)
    }

    /// The digest of every party's combinations as this party saw them (its own and the
    /// checked openings `seen`, by party): equal at every party when each showed all peers the
    /// same bits.
    pub fn echo(&self, seen: &[Vec<bool>]) -> [u8; DIGEST] {
        let mine: Vec<bool> = (0..RHO).map(|r| self.combined.bit(r)).collect();
        let packed: Vec<Vec<u8>> = seen
            .iter()
            .enumerate()
            .map(|(j, s)| {
                let s = if j == self.combined.party.me {
                    &mine
                } else {
                    s
                };
                pack_bits(s.iter().copied())
            })
            .collect();
        let parts: Vec<&[u8]> = packed.iter().map(Vec::as_slice).collect();
        combine::hash(b"tessera-ag consistency echo", &parts)
    }
}

/// Compares this party's echo with every peer's (`theirs`, by party).
pub fn check_echo(
    mine: &[u8],
    theirs: &[Option<Vec<u8>>],
    check: &'static str,
) -> Result<(), Error> {
    let mut same = subtle::Choice::from(1);
    for t in theirs.iter().flatten() {
        same &= mine.ct_eq(t.as_slice());
    }
    if bool::from(same) || !checks::on(Check::Consistency) {
        Ok(())
    } else {
        Err(Error::CheckFailed { check })
    }
}
