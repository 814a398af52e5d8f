//! Authenticated XOR shares between two parties (WRK17 §2.2, KRRW18 §2): a bit x = x_0 ⊕ x_1
//! of which each party holds its share with a MAC under the peer's Δ and a key for the peer's
//! share under its own Δ. Party i holds x_i, M_i\[x_i\] = K_j\[x_i\] ⊕ x_i·Δ_j and K_i\[x_j\]. XOR
//! is local; adding a public constant moves one share and the other party's key.

use crate::abit::{self, AuthBits, AuthKeys};
use tessera_core::Block;

/// One party's side of a pair: its global Δ (least significant bit 1) and whether it is the
/// first of the two (the party with the lower id). The first party's share moves when a public
/// constant is added; the second party's key does.
#[derive(Clone, Copy)]
pub struct Keyring {
    /// This party's global Δ. Secret.
    pub delta: Block,
    /// Whether this party is the first of the pair.
    pub first: bool,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyring")
            .field("first", &self.first)
            .finish_non_exhaustive()
    }
}

/// One party's authenticated shares of a vector of bits: share i's MAC (least significant
/// bit = the share) and its key for the peer's share (least significant bit 0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shares {
    macs: Vec<Block>,
    keys: Vec<Block>,
}

impl Shares {
    /// Shares from this party's authenticated bits and its keys for the peer's, index by
    /// index (random shares: [`crate::abit::random`]).
    ///
    /// # Panics
    /// If the lengths differ.
    pub fn from_bits(bits: AuthBits, keys: AuthKeys) -> Self {
        let (macs, keys) = (bits.into_macs(), keys.into_keys());
        assert_eq!(macs.len(), keys.len(), "as many MACs as keys");
        Shares { macs, keys }
    }

    /// Shares of `n` zeros (each party's shares and keys 0).
    pub fn zeroed(n: usize) -> Self {
        Shares {
            macs: vec![Block::ZERO; n],
            keys: vec![Block::ZERO; n],
        }
    }

    /// Sets bit `i`'s MAC and key.
    pub fn set(&mut self, i: usize, (mac, key): (Block, Block)) {
        self.macs[i] = mac;
        self.keys[i] = key;
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.macs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.macs.is_empty()
    }

    /// This party's share of bit `i`. Secret.
    pub fn bit(&self, i: usize) -> bool {
        self.macs[i].lsb()
    }

    /// The MACs of this party's shares. Secret.
    pub fn macs(&self) -> &[Block] {
        &self.macs
    }

    /// The keys for the peer's shares. Secret.
    pub fn keys(&self) -> &[Block] {
        &self.keys
    }

    /// Bit `i`'s MAC and key.
    pub fn get(&self, i: usize) -> (Block, Block) {
        (self.macs[i], self.keys[i])
    }

    /// Bit `i` ⊕= `other`'s (local: MACs and keys add).
    pub fn xor_at(&mut self, i: usize, (mac, key): (Block, Block)) {
        self.macs[i] ^= mac;
        self.keys[i] ^= key;
    }

    /// Bit `i` ⊕= the public bit `c`: the first party flips its share (its MAC's least
    /// significant bit), the second moves its key by c·(Δ ⊕ 1), so that the MAC relation holds
    /// and keys keep least significant bit 0. Constant time in `c`.
    pub fn add_public(&mut self, ring: Keyring, i: usize, c: bool) {
        let m = Block::mask(c);
        if ring.first {
            self.macs[i] ^= Block::new(1) & m;
        } else {
            self.keys[i] ^= (ring.delta ^ Block::new(1)) & m;
        }
    }

    /// The message that opens this party's shares to the peer ([`abit::open_macs`]).
    pub fn opening(&self) -> Vec<u8> {
        abit::open_macs(self.macs.iter().copied(), 0)
    }

    /// The peer's shares, from its opening in the message called `message`, checked against
    /// this party's keys under `delta` by `check` ([`abit::check_macs`]).
    pub fn check_opening(
        &self,
        delta: Block,
        msg: &[u8],
        opening: (&'static str, crate::checks::Check),
    ) -> Result<Vec<bool>, crate::Error> {
        abit::check_macs(delta, (self.keys.iter().copied(), 0), msg, opening)
    }

    /// Shares `range`, copied.
    pub fn slice(&self, range: std::ops::Range<usize>) -> Shares {
        Shares {
            macs: self.macs[range.clone()].to_vec(),
            keys: self.keys[range].to_vec(),
        }
    }

    /// The shares at `positions`, in order.
    pub fn gather(&self, positions: &[u32]) -> Shares {
        Shares {
            macs: gather(&self.macs, positions),
            keys: gather(&self.keys, positions),
        }
    }

    /// Puts `from`'s shares at `positions`, first growing to `size` shares.
    pub fn scatter(&mut self, positions: &[u32], from: &Shares, size: usize) {
        scatter(&mut self.macs, positions, &from.macs, size);
        scatter(&mut self.keys, positions, &from.keys, size);
    }

    /// The MACs and keys, taken.
    pub(crate) fn into_parts(self) -> (Vec<Block>, Vec<Block>) {
        (self.macs, self.keys)
    }

    /// The MACs and keys, resized to `n` shares, to be overwritten whole: what was there
    /// before is left as it was (not zeroed: the caller writes every share), the buffers'
    /// capacity kept.
    pub(crate) fn resized(&mut self, n: usize) -> (&mut [Block], &mut [Block]) {
        for v in [&mut self.macs, &mut self.keys] {
            v.resize(n, Block::ZERO);
        }
        (&mut self.macs, &mut self.keys)
    }

    /// `into` becomes a copy of shares `range`, its buffers reused.
    pub(crate) fn copy_into(&self, range: std::ops::Range<usize>, into: &mut Shares) {
        into.macs.clear();
        into.macs.extend_from_slice(&self.macs[range.clone()]);
        into.keys.clear();
        into.keys.extend_from_slice(&self.keys[range]);
    }

    /// Drops the shares from `at` on.
    pub(crate) fn truncate(&mut self, at: usize) {
        self.macs.truncate(at);
        self.keys.truncate(at);
    }

    /// Drops every share and makes room for `n`, the buffers kept.
    pub(crate) fn clear_for(&mut self, n: usize) {
        self.truncate(0);
        self.macs.reserve(n);
        self.keys.reserve(n);
    }

    /// Splits off the shares from `at` on (copying only those).
    pub fn split_off(&mut self, at: usize) -> Shares {
        Shares {
            macs: self.macs.split_off(at),
            keys: self.keys.split_off(at),
        }
    }

    /// Inserts `other`'s shares before share `at`.
    pub fn insert(&mut self, at: usize, other: Shares) {
        self.macs.splice(at..at, other.macs);
        self.keys.splice(at..at, other.keys);
    }

    /// Appends `other`'s shares (taking them whole, no copy, when there are none yet).
    pub fn append(&mut self, mut other: Shares) {
        if self.is_empty() {
            *self = other;
            return;
        }
        self.macs.append(&mut other.macs);
        self.keys.append(&mut other.keys);
    }

    /// Appends share (mac, key).
    pub fn push(&mut self, (mac, key): (Block, Block)) {
        self.macs.push(mac);
        self.keys.push(key);
    }
}

/// The values of `v` at `positions`, in order.
pub fn gather<T: Copy>(v: &[T], positions: &[u32]) -> Vec<T> {
    positions.iter().map(|&p| v[p as usize]).collect()
}

/// Puts `from` at `positions` of `v`, first growing it to at least `size`.
pub fn scatter<T: Copy + Default>(v: &mut Vec<T>, positions: &[u32], from: &[T], size: usize) {
    if v.len() < size {
        v.resize(size, T::default());
    }
    for (&p, &x) in positions.iter().zip(from) {
        v[p as usize] = x;
    }
}
