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
//! consistency check ([`Consistency`]) catches that.

use super::{Exchange, Round};
use crate::Error;
use crate::abit;
use crate::checks::{self, Check};
use crate::wire::{self as kinds, unpack_bits};
use subtle::ConstantTimeEq;
use tessera_core::{Block, Prg, gf128};
use tessera_net::role::pack_bits;
use tessera_protocols::Session;

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

    /// The peers in the order this party meets them for pairwise work (OT setup and draws): a
    /// round-robin tournament by the circle method, so that every round pairs the parties off
    /// (one sits out when n is odd) and a party's link of round r waits only for its own and
    /// its peer's links of the rounds before. Taken link after link, every pair is done after
    /// n − 1 rounds (n when n is odd), where the peers in id order took up to 2n − 3 links' time.
    pub fn meetings(&self) -> Vec<usize> {
        meetings(self.n, self.me)
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

    /// Room for `len` shares, none yet (for shares pushed one by one).
    pub fn with_capacity(party: Party, len: usize) -> Self {
        NShares {
            party,
            v: Vec::with_capacity(len * party.width()),
        }
    }

    /// A copy of the shares in `range`.
    pub fn slice(&self, range: std::ops::Range<usize>) -> NShares {
        let w = self.party.width();
        NShares {
            party: self.party,
            v: self.v[range.start * w..range.end * w].to_vec(),
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

    /// Bit `i` ⊕= the public bit `c`; constant time in `c`.
    pub fn add_public(&mut self, i: usize, c: bool) {
        let party = self.party;
        add_public(party, self.entry_mut(i), c);
    }

    /// The shares at `positions`, in order.
    pub fn gather(&self, positions: &[u32]) -> NShares {
        let mut out = NShares::with_capacity(self.party, positions.len());
        for &p in positions {
            out.push_from(self, p as usize);
        }
        out
    }

    /// Puts `from`'s shares at `positions`, first growing to `size` shares.
    pub fn scatter(&mut self, positions: &[u32], from: &NShares, size: usize) {
        if self.len() < size {
            self.v.resize(size * self.party.width(), Block::ZERO);
        }
        for (k, &p) in positions.iter().enumerate() {
            self.entry_mut(p as usize).copy_from_slice(from.entry(k));
        }
    }

    /// This party's MACs under peer `j`'s Δ, share by share.
    fn macs_for(&self, j: usize) -> impl abit::Column + '_ {
        let at = 2 * self.party.slot(j);
        self.v.chunks_exact(self.party.width()).map(move |e| e[at])
    }

    /// This party's keys for peer `j`'s shares, share by share.
    fn keys_for(&self, j: usize) -> impl abit::Column + '_ {
        let at = 2 * self.party.slot(j) + 1;
        self.v.chunks_exact(self.party.width()).map(move |e| e[at])
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
    if party.me == 0 {
        entry.iter_mut().step_by(2).for_each(|mac| fix_mac(mac, c));
    } else {
        fix_key(&mut entry[1], party.delta, c);
    }
}

/// Moves a share's MAC (this party's bit) or a key (a peer's bit) by the public difference `d`
/// told between the bit authenticated and the bit meant: the holder flips the MAC's least
/// significant bit, the key holder moves its key by d·(Δ ⊕ 1).
pub(super) fn fix_mac(mac: &mut Block, d: bool) {
    *mac ^= Block::new(1) & Block::mask(d);
}

pub(super) fn fix_key(key: &mut Block, delta: Block, d: bool) {
    *key ^= (delta ^ Block::new(1)) & Block::mask(d);
}

/// Rounds of the round-robin among `n` parties: one more player, who sits out, when n is odd.
fn rounds(n: usize) -> usize {
    n + n % 2 - 1
}

/// Whom party `me` of `n` meets in round `r` ([`Party::meetings`]), if anyone. Players are the
/// parties shifted by one (party 0 is player 1, so the evaluator, party 0, is never the one to
/// sit out the first round); with k rounds, the last player meets the i with 2i ≡ r (mod k),
/// and every other player i meets r − i (mod k).
fn partner(n: usize, me: usize, r: usize) -> Option<usize> {
    let k = rounds(n);
    let i = (me + 1) % n;
    let j = if i == k {
        r * k.div_ceil(2) % k
    } else if 2 * i % k == r {
        k
    } else {
        (r + k - i) % k
    };
    (j < n).then(|| (j + n - 1) % n)
}

/// The peers party `me` of `n` meets, round by round.
fn meetings(n: usize, me: usize) -> Vec<usize> {
    (0..rounds(n)).filter_map(|r| partner(n, me, r)).collect()
}

/// Party `me`'s first peer: the one whose OT gives its shares their bits.
fn first_peer(n: usize, me: usize) -> Option<usize> {
    (0..rounds(n)).find_map(|r| partner(n, me, r))
}

/// `len` fresh random authenticated shares (not yet checked for consistency: the caller runs
/// [`Consistency`] over them with [`CHECK_SHARES`] more).
///
/// The links' correlated OTs are drawn one after another into one buffer, each placed in the
/// shares as it comes, so a party touches one link's OT memory however many peers it has.
pub fn random(
    s: &mut Session,
    ex: &mut Exchange,
    party: Party,
    len: usize,
) -> Result<NShares, Error> {
    let w = party.width();
    let mut v = vec![Block::ZERO; len * w];
    let mut link = crate::share::Shares::default();
    // This party's bits are those of its OT with its first peer; on every other link it tells
    // the peer the differences, and fixes its own MACs by them.
    let mut mine = Vec::new();
    let mut out = vec![None; party.n];
    for (i, j) in party.meetings().into_iter().enumerate() {
        let slot = party.slot(j);
        if abit::random_into(s, j, len, &mut link)? != party.delta {
            return Err(Error::Usage("the OT sender's Δ is not this party's".into()));
        }
        let (macs, keys) = (link.macs(), link.keys());
        if i == 0 {
            mine = macs.iter().map(|m| m.lsb()).collect();
        }
        let diffs = mine.iter().zip(macs).map(|(&a, m)| a ^ m.lsb());
        if i != 0 {
            out[j] = Some(pack_bits(diffs.clone()));
        }
        let entries = v.chunks_exact_mut(w).zip(macs.iter().zip(keys));
        for ((e, (&mac, &key)), d) in entries.zip(diffs) {
            e[2 * slot] = mac;
            fix_mac(&mut e[2 * slot], d);
            e[2 * slot + 1] = key;
        }
    }
    let mut shares = NShares { party, v };
    let expect = expect_from(
        party,
        |j| first_peer(party.n, j) != Some(party.me),
        len.div_ceil(8),
    );
    let got = ex.round(s, Round::new(kinds::N_FIXES, out, expect))?;
    let mut fixes = Vec::new();
    for (j, msg) in got.iter().enumerate() {
        if let Some(msg) = msg {
            fixes.push((party.slot(j), unpack_bits(msg, len, kinds::N_FIXES.name)?));
        }
    }
    for i in 0..len {
        let e = shares.entry_mut(i);
        for (slot, d) in &fixes {
            fix_key(&mut e[2 * slot + 1], party.delta, d[i]);
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

/// Opens `shares` to every party in messages of `kind`, each share's MAC checked by the party
/// it is authenticated to by `check` (an opening per link: the bits and a digest of their MACs,
/// [`abit::open_macs`]).
pub fn open_all(
    s: &mut Session,
    ex: &mut Exchange,
    shares: &NShares,
    (kind, check): (tessera_net::Kind, Check),
) -> Result<Vec<bool>, Error> {
    let each = vec![Some(shares); shares.party.n];
    open_each(s, ex, shares.party, &each, (kind, check))
}

/// Opens, in one round, `each[p]` to each party p that has an entry (of `party`'s run), each
/// share's MAC checked by the party it is authenticated to by `check`. Returns the bits of this
/// party's own entry, or an empty vector if it has none.
pub fn open_each(
    s: &mut Session,
    ex: &mut Exchange,
    party: Party,
    each: &[Option<&NShares>],
    (kind, check): (tessera_net::Kind, Check),
) -> Result<Vec<bool>, Error> {
    let entry = |j: usize| each.get(j).copied().flatten();
    let mut out = vec![None; party.n];
    for j in party.peers() {
        if let Some(shares) = entry(j) {
            out[j] = Some(abit::open_macs(shares.macs_for(j), 0));
        }
    }
    let mine = entry(party.me);
    let len = mine.map_or(0, NShares::len);
    let expect = expect_from(party, |_| mine.is_some(), len.div_ceil(8) + abit::DIGEST);
    let got = ex.round(s, Round::new(kind, out, expect))?;
    let Some(shares) = mine else {
        return Ok(Vec::new());
    };
    let mut bits: Vec<bool> = (0..len).map(|i| shares.bit(i)).collect();
    for (j, msg) in got.iter().enumerate() {
        let Some(msg) = msg else { continue };
        let theirs = abit::check_macs(
            party.delta,
            (shares.keys_for(j), 0),
            msg,
            (kind.name, check),
        )?;
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
    let commit = tessera_core::digest::tagged(b"tessera-ag n-party coin", &[&seed, &nonce]);
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
        let again =
            tessera_core::digest::tagged(b"tessera-ag n-party coin", &[&o[..SEED], &o[SEED..]]);
        checks::require(Check::CoinCommitment, bool::from(again.ct_eq(c.as_slice())))?;
        coin ^= Block::from_bytes(o[..SEED].try_into().unwrap_or_default());
    }
    Ok(coin)
}

/// A PRG for one use (`tag`) of a tossed coin.
pub fn seeded(coin: Block, tag: &[u8]) -> Prg {
    let seed = tessera_core::digest::tagged(tag, &[&coin.to_bytes()]);
    Prg::from_seed_block(Block::from_bytes(seed[..16].try_into().unwrap_or_default()))
}

/// What the consistency check sends each peer, and checks of what each peer sends: one random
/// linear combination over GF(2^128) of all the shares, X = Σ_k χ_k·x_k ⊕ Σ_t x_{ℓ+t}·X^t (the
/// last [`CHECK_SHARES`] shares only as a uniform mask), with its MAC under the peer's Δ,
/// Σ_k χ_k·M\[x_k\] ⊕ Σ_t X^t·M\[x_{ℓ+t}\] = Σ (the same of the keys) ⊕ X·Δ (WRK17b §3's
/// check that every party authenticated the same bits to every peer, with the combination in
/// the field instead of ρ bit combinations: a party whose bits toward two peers differ by e ≠ 0
/// shows them the same X only if Σ χ_k·e_k = 0, probability 2^-128 over the coin, and a
/// different X to one only with a MAC it must forge).
pub struct Consistency {
    party: Party,
    x: Block,
    /// Per peer: the combination of this party's MACs, and of its keys for the peer's shares.
    macs: Vec<Block>,
    keys: Vec<Block>,
}

/// The shares the consistency check uses up as its mask.
pub const CHECK_SHARES: usize = 128;

impl Consistency {
    /// The combinations of `shares` under `coin`.
    pub fn new(shares: &NShares, coin: Block) -> Result<Self, Error> {
        let party = shares.party;
        let l = shares.len().checked_sub(CHECK_SHARES).ok_or_else(|| {
            Error::Usage("the consistency check needs 128 more shares than it checks".into())
        })?;
        let mut prg = seeded(coin, b"tessera-ag consistency coefficients");
        let (w, n) = (party.width(), party.n);
        let mut x = Block::ZERO;
        let (mut macs, mut keys) = (vec![Block::ZERO; n], vec![Block::ZERO; n]);
        let mut chi = vec![Block::ZERO; CHUNK];
        let mut column = vec![Block::ZERO; CHUNK];
        for start in (0..l + CHECK_SHARES).step_by(CHUNK) {
            let end = (start + CHUNK).min(l + CHECK_SHARES);
            let chi = &mut chi[..end - start];
            for (i, c) in (start..end).zip(chi.iter_mut()) {
                *c = if i < l {
                    prg.random_block()
                } else {
                    Block::new(1 << (i - l))
                };
                x ^= *c & Block::mask(shares.bit(i));
            }
            let column = &mut column[..end - start];
            for (s, j) in party.peers().enumerate() {
                for half in 0..2 {
                    for (c, i) in column.iter_mut().zip(start..end) {
                        *c = shares.v[i * w + 2 * s + half];
                    }
                    let sum = if half == 0 {
                        &mut macs[j]
                    } else {
                        &mut keys[j]
                    };
                    *sum ^= gf128::inner_product(chi, column);
                }
            }
        }
        Ok(Consistency {
            party,
            x,
            macs,
            keys,
        })
    }

    /// The opening for peer `j`: X and its MAC under j's Δ.
    pub fn opening(&self, j: usize) -> Vec<u8> {
        [self.x.to_bytes(), self.macs[j].to_bytes()].concat()
    }

    /// Bytes of an opening.
    pub const LEN: usize = 32;

    /// Checks peer `j`'s opening against this party's keys; returns the X it showed.
    pub fn check(&self, j: usize, msg: &[u8]) -> Result<Block, Error> {
        let x = Block::from_bytes(msg[..16].try_into().unwrap_or_default());
        let mac = Block::from_bytes(msg[16..32].try_into().unwrap_or_default());
        let want = self.keys[j] ^ gf128::mul(x, self.party.delta);
        let right = bool::from(want.to_bytes().ct_eq(&mac.to_bytes()));
        checks::require(Check::ShareConsistency, right).map(|()| x)
    }

    /// The digest of every party's X as this party saw them (its own and the checked openings
    /// `seen`, by party): equal at every party when each showed all peers the same.
    pub fn echo(&self, seen: &[Block]) -> [u8; DIGEST] {
        let all: Vec<u8> = seen
            .iter()
            .enumerate()
            .flat_map(|(j, x)| if j == self.party.me { self.x } else { *x }.to_bytes())
            .collect();
        tessera_core::digest::tagged(b"tessera-ag consistency echo", &[&all])
    }
}

/// Shares combined at a time.
const CHUNK: usize = 1024;

/// Compares this party's echo with every peer's (`theirs`, by party): `check`.
pub fn check_echo(mine: &[u8], theirs: &[Option<Vec<u8>>], check: Check) -> Result<(), Error> {
    let mut same = subtle::Choice::from(1);
    for t in theirs.iter().flatten() {
        same &= mine.ct_eq(t.as_slice());
    }
    checks::require(check, bool::from(same))
}

#[cfg(test)]
mod tests {
    use super::{meetings, partner, rounds};

    /// Every party meets every peer once, and every round pairs parties off: if i meets j in
    /// round r, j meets i in round r.
    #[test]
    fn meetings_are_a_round_robin() {
        for n in 2..=9 {
            for me in 0..n {
                let mut met = meetings(n, me);
                met.sort();
                let peers: Vec<usize> = (0..n).filter(|&j| j != me).collect();
                assert_eq!(met, peers, "n={n} me={me}");
                for r in 0..rounds(n) {
                    if let Some(j) = partner(n, me, r) {
                        assert_eq!(partner(n, j, r), Some(me), "n={n} me={me} round {r}");
                    }
                }
            }
        }
    }
}
