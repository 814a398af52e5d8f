//! The online phase of Protocols 1, 2 and 3 (Damgård and Zakarias, "Fast Oblivious AES", §1 Fig. 5, §2
//! and §3 Fig. 8) for n parties, over any [`Exchange`].
//!
//! **Key.** Each party i holds a key share k_i; the key is Σ k_i. Party i broadcasts
//! ε_i = k_i + ρ_i, where ρ_i is its input mask (known to it alone, represented in the
//! pre-processing), and every party forms ⟦K⟧ = Σ_i (⟦ρ_i⟧ + ε_i), with K copied into every
//! block of the codeword. A key share is the party's own input: changing ε_i only changes it.
//!
//! **Rounds (Protocols 1, 2).** The state ⟦S⟧ of a codeword of blocks starts as plaintext +
//! ⟦K_0⟧. Round r opens δ = S + R_r (R_r a random mask), looks up, for every state byte q,
//! entry δ_q of table q, which represents SRMC·(0, .., S(δ_q + R_q), .., 0) =
//! SRMC·(0, .., S(s_q), .., 0), and adds them and the round key: one opening per round (the
//! last round's tables apply ShiftRows only). With a fresh key, the key schedule runs in the
//! same openings: δ_K = K + R'_r is opened beside the states, the next key is
//! KS-linear(δ_K) + [[KS-linear(R'_r)]] plus four table entries (the S-boxes of RotWord) plus
//! the round constant. So key expansion adds bytes, not rounds. Expanded keys ([`RoundKeys`])
//! can be kept for later blocks.
//!
//! **Rounds (Protocol 3).** The tables hold one byte per entry, S(x + R_q) + v_q, additively
//! shared with pairwise MACs: after the opening of δ, every party sends every peer its shares
//! of the entries δ_q with a MAC under that peer's key (a ∗ (x, .., x) + b, a ∈ GF(2^8)^8 fixed
//! per pair, b one-time), every party checks the MACs at once (a forgery succeeds with
//! probability 2^-64) and adds the shares: T = S(s) + v in the clear. ShiftRows and
//! MixColumns are applied to T in the clear and [[SRMC·v]] added. Two rounds per AES round; the
//! key schedule's four S-boxes go in the same messages.
//!
//! **Checks.** Every opened vector must be a codeword, or the party stops at once. Before any
//! output is opened, the openings are MAC-checked in one batch: coefficient vectors r_t come
//! from a PRG seeded with the hash of the transcript (every opened value and input), each
//! party commits to σ_i = Σ_t r_t ∗ m_{i,t} + α_i ∗ Σ_t r_t ∗ y_t and to its transcript hash,
//! then opens both; all σ must sum to zero and all hashes agree (so an inconsistent broadcast
//! is caught too). An error that passes the codeword check is a non-zero codeword, non-zero
//! in d = 256 − k positions, and goes undetected with probability about 2^-8d over the
//! unknown α ([`Protocol::combinations`]: 2^-1197 for Protocol 1, about 2^-127.9 for 2 and 3).
//! Then the ciphertexts are opened with a commitment to each party's α_i and output MACs,
//! which are opened next (the key is spent) and checked: Σ MAC = α ∗ y. Commitments are
//! SHA-256 over the value and a 128-bit random nonce. An abort is not unanimous: a party
//! that detects cheating tells every peer, but a peer that the cheater treated honestly in
//! the last exchange may already have its (correct) output.
//!
//! Rounds: 1 (hello, once per session) + [1 key input] + 10 (Protocol 3: 20) + 2 + 2.

use crate::code::{N, ReedSolomon};
use crate::error::{Cheat, Error, PrepError};
use crate::exchange::kinds;
use crate::layout::{self, BLOCK, KEY_SBOX_INPUTS, RCON, ROUNDS};
use crate::prep::{Material, PAIR_MAC, peer_slot};
use crate::protocol::{Protocol, Tables};
use crate::rep::{Rep, xor};
use rand_core::RngCore;
use sha2::{Digest, Sha256};
use tessera_core::{Block, Prg, gf256};
use tessera_net::exchange::{Exchange, Expect, Out};

/// Shares of the eleven round keys, each copied into every block of a codeword: the result
/// of key expansion, kept to encrypt more blocks under the same key.
#[derive(Clone)]
pub struct RoundKeys {
    keys: Vec<Rep>,
}

impl std::fmt::Debug for RoundKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RoundKeys(..)")
    }
}

/// The key an encryption uses.
#[derive(Clone, Copy, Debug)]
pub enum Key<'a> {
    /// This party's share of a fresh key: its expansion runs in the same openings.
    Share([u8; BLOCK]),
    /// Keys expanded earlier.
    Expanded(&'a RoundKeys),
}

/// What an encryption gives every party.
#[derive(Debug)]
pub struct Encryption {
    /// The ciphertexts, one per plaintext.
    pub ciphertexts: Vec<[u8; BLOCK]>,
    /// The expanded keys, where the key was fresh.
    pub round_keys: Option<RoundKeys>,
}

/// An opened vector and this party's MAC share of it, kept for the batched check.
struct Opened {
    y: [u8; N],
    mac: [u8; N],
}

/// One party of the online phase.
pub struct Party<'m> {
    mat: &'m Material,
    me: usize,
    n: usize,
    protocol: Protocol,
    code: &'static ReedSolomon,
    transcript: Sha256,
    log: Vec<Opened>,
    openings: usize,
    received: Vec<Vec<u8>>,
    scratch: Vec<Block>,
    indices: Vec<usize>,
    rng: Prg,
    key_used: bool,
    words_used: usize,
    spent: bool,
}

impl std::fmt::Debug for Party<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Party")
            .field("me", &self.me)
            .field("protocol", &self.protocol)
            .finish_non_exhaustive()
    }
}

/// A commitment: SHA-256 over a label, the party and the parts (the last a random nonce).
fn commit(label: &[u8], party: usize, parts: &[&[u8]]) -> [u8; 32] {
    let party = (party as u64).to_le_bytes();
    let all: Vec<&[u8]> = [label, &party[..]]
        .into_iter()
        .chain(parts.iter().copied())
        .collect();
    tessera_core::digest::tagged(b"tessera-oaes", &all)
}

/// The first eight bytes of `b` as a little-endian word.
fn u64_at(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[..8]);
    u64::from_le_bytes(w)
}

/// A pairwise MAC key a ∈ GF(2^8)^8 ready to multiply: its multiples by x^0..x^7, so that
/// a ∗ (x, .., x) is eight masked XORs, constant-time in x.
struct PairKey {
    planes: [u64; 8],
}

impl PairKey {
    fn new(key: &[u8]) -> PairKey {
        let mut planes = [0u64; 8];
        for (p, plane) in planes.iter_mut().enumerate() {
            let mut b = [0u8; 8];
            for (o, &k) in b.iter_mut().zip(key) {
                *o = gf256::mul(k, 1 << p);
            }
            *plane = u64::from_le_bytes(b);
        }
        PairKey { planes }
    }

    /// a ∗ (x, .., x) as a little-endian word.
    fn times(&self, x: u8) -> u64 {
        self.planes.iter().enumerate().fold(0, |acc, (p, &v)| {
            acc ^ (v & 0u64.wrapping_sub(((x >> p) & 1) as u64))
        })
    }
}

/// Stops with `r`'s error, telling the peers once.
fn guard<T, X: Exchange>(x: &mut X, r: Result<T, Error>) -> Result<T, Error> {
    if let Err(e) = &r
        && let Some(code) = tessera_net::Abort::abort_code(e)
    {
        x.abort(code);
    }
    r
}

impl<'m> Party<'m> {
    /// Starts a session: checks that every peer loaded the same dealing, each its own part.
    pub fn new<X: Exchange>(mat: &'m Material, x: &mut X) -> Result<Party<'m>, Error> {
        let r = Party::hello(mat, x);
        guard(x, r)
    }

    fn hello<X: Exchange>(mat: &'m Material, x: &mut X) -> Result<Party<'m>, Error> {
        let h = mat.header();
        let (me, n) = (x.me(), x.parties());
        if h.party != me || h.shape.parties != n {
            return Err(Error::Usage(format!(
                "this is party {me} of {n}, the pre-processing is party {}'s of {}",
                h.party, h.shape.parties
            )));
        }
        let digest = h.session_digest();
        let mut hello = digest.to_vec();
        hello.extend_from_slice(&(me as u16).to_le_bytes());
        let mut received = vec![Vec::new(); n];
        x.round(
            kinds::HELLO,
            Out::All(&hello),
            Expect::All(hello.len()),
            &mut received,
        )?;
        for (j, r) in received.iter().enumerate().filter(|&(j, _)| j != me) {
            if r[..32] != digest {
                return Err(PrepError::OtherSession { party: j }.into());
            }
            let claims = u16::from_le_bytes([r[32], r[33]]) as usize;
            if claims != j {
                return Err(PrepError::PeerHasOtherParty { party: j, claims }.into());
            }
        }
        let mut transcript = Sha256::new();
        transcript.update(digest);
        Ok(Party {
            mat,
            me,
            n,
            protocol: h.shape.protocol,
            code: h.shape.protocol.code(),
            transcript,
            log: Vec::new(),
            openings: 0,
            received,
            scratch: Vec::new(),
            indices: Vec::new(),
            rng: Prg::from_os()?,
            key_used: false,
            words_used: 0,
            spent: false,
        })
    }

    /// Expands a fresh key from this party's share (one input round and ten openings), to
    /// encrypt with later ([`Key::Expanded`]).
    pub fn expand_key<X: Exchange>(
        &mut self,
        x: &mut X,
        share: &[u8; BLOCK],
    ) -> Result<RoundKeys, Error> {
        let r = self.expand_key_inner(x, share);
        guard(x, r)
    }

    fn expand_key_inner<X: Exchange>(
        &mut self,
        x: &mut X,
        share: &[u8; BLOCK],
    ) -> Result<RoundKeys, Error> {
        let mut key = self.input_key(x, share)?;
        let mut keys = vec![key];
        let mut delta = vec![vec![0u8; self.code.k()]];
        for r in 0..ROUNDS {
            let mut o = key;
            self.add_reps(&[self.mat.header().shape.key_mask(r)], &mut o);
            self.open(x, &[o], &mut delta)?;
            let sboxes = match self.protocol.tables() {
                Tables::Reps => None,
                Tables::Bytes => {
                    let entries = self.key_entries(r, &delta[0]);
                    Some(self.open_entries(x, &entries)?)
                }
            };
            key = self.key_step(r, &delta[0], sboxes.as_deref());
            keys.push(key);
        }
        Ok(RoundKeys { keys })
    }

    /// Encrypts `plaintexts` under `key`; every party learns the ciphertexts, after the MAC
    /// checks.
    pub fn encrypt<X: Exchange>(
        &mut self,
        x: &mut X,
        key: Key<'_>,
        plaintexts: &[[u8; BLOCK]],
    ) -> Result<Encryption, Error> {
        let r = self.encrypt_inner(x, key, plaintexts);
        guard(x, r)
    }

    fn encrypt_inner<X: Exchange>(
        &mut self,
        x: &mut X,
        key: Key<'_>,
        plaintexts: &[[u8; BLOCK]],
    ) -> Result<Encryption, Error> {
        let shape = self.mat.header().shape;
        let bpw = self.protocol.blocks_per_word();
        if plaintexts.is_empty() {
            return Err(Error::Usage("no plaintext to encrypt".into()));
        }
        if self.spent {
            return Err(Error::Usage(
                "this session opened its MAC key with its output; load new pre-processing".into(),
            ));
        }
        let words = plaintexts.len().div_ceil(bpw);
        if self.words_used + words > shape.words() {
            return Err(PrepError::Exhausted {
                what: format!(
                    "{} blocks asked for, {} left",
                    plaintexts.len(),
                    (shape.words() - self.words_used) * bpw
                ),
            }
            .into());
        }
        let first = self.words_used;
        self.words_used += words;
        let (mut key_rep, fresh) = match key {
            Key::Share(s) => (self.input_key(x, &s)?, None),
            Key::Expanded(rk) => (rk.keys[0], Some(rk)),
        };
        let mut kept = vec![key_rep];
        // Blocks past the last plaintext repeat it, so their ciphertexts say nothing new.
        let mut data = vec![0u8; self.code.k()];
        let mut states: Vec<Rep> = (0..words)
            .map(|w| {
                for b in 0..bpw {
                    let p = plaintexts[(w * bpw + b).min(plaintexts.len() - 1)];
                    data[b * BLOCK..(b + 1) * BLOCK].copy_from_slice(&p);
                }
                let mut s = key_rep;
                self.add_public(&mut s, &data);
                s
            })
            .collect();
        let opened_per_round = words + usize::from(fresh.is_none());
        let per_word = shape.tables_per_word();
        let mut opened = Vec::with_capacity(opened_per_round);
        let mut deltas = vec![vec![0u8; self.code.k()]; opened_per_round];
        for r in 0..ROUNDS {
            opened.clear();
            for (w, s) in states.iter().enumerate() {
                let mut o = *s;
                self.add_reps(&[shape.word_mask(r, first + w)], &mut o);
                opened.push(o);
            }
            if fresh.is_none() {
                let mut o = key_rep;
                self.add_reps(&[shape.key_mask(r)], &mut o);
                opened.push(o);
            }
            self.open(x, &opened, &mut deltas)?;
            let key_sboxes = if fresh.is_none() { 4 } else { 0 };
            let sboxes = match self.protocol.tables() {
                Tables::Reps => None,
                Tables::Bytes => {
                    let mut entries = Vec::with_capacity(key_sboxes + words * per_word);
                    if fresh.is_none() {
                        entries.extend(self.key_entries(r, &deltas[words]));
                    }
                    for (w, d) in deltas[..words].iter().enumerate() {
                        entries.extend(
                            d[..per_word]
                                .iter()
                                .enumerate()
                                .map(|(q, &d)| shape.word_entry(r, first + w, q, d)),
                        );
                    }
                    Some(self.open_entries(x, &entries)?)
                }
            };
            key_rep = match fresh {
                None => {
                    let t = sboxes.as_deref().map(|t| &t[..4]);
                    self.key_step(r, &deltas[words], t)
                }
                Some(rk) => rk.keys[r + 1],
            };
            kept.push(key_rep);
            for (w, s) in states.iter_mut().enumerate() {
                let t = sboxes
                    .as_deref()
                    .map(|t| &t[key_sboxes + w * per_word..key_sboxes + (w + 1) * per_word]);
                *s = self.state_step(r, first + w, &deltas[w], t, &key_rep);
            }
        }
        self.check(x)?;
        let mut ciphertexts = self.output(x, &states)?;
        ciphertexts.truncate(plaintexts.len());
        Ok(Encryption {
            ciphertexts,
            round_keys: fresh.is_none().then_some(RoundKeys { keys: kept }),
        })
    }

    /// Protocol 3: the key schedule's four byte-table entries of round `r`, at the opened
    /// δ = K + R'.
    fn key_entries(&self, r: usize, delta: &[u8]) -> [usize; 4] {
        let shape = self.mat.header().shape;
        core::array::from_fn(|t| shape.key_entry(r, t, delta[KEY_SBOX_INPUTS[t]]))
    }

    fn add_reps(&mut self, indices: &[usize], out: &mut Rep) {
        self.mat.add_reps(indices, out, &mut self.scratch);
    }

    /// Adds the public data vector `data` (k entries).
    fn add_public(&self, rep: &mut Rep, data: &[u8]) {
        let mut c = [0u8; N];
        self.code.encode_public(data, &mut c);
        rep.add_public(&c, self.me, self.mat.alpha());
    }

    /// The key input round: [[K]] from every party's masked share.
    fn input_key<X: Exchange>(&mut self, x: &mut X, share: &[u8; BLOCK]) -> Result<Rep, Error> {
        if self.key_used {
            return Err(PrepError::Exhausted {
                what: "the key-schedule material was used by an earlier key".into(),
            }
            .into());
        }
        self.key_used = true;
        let mut eps = *share;
        xor(&mut eps, self.mat.input_mask());
        x.round(
            kinds::INPUT,
            Out::All(&eps),
            Expect::All(BLOCK),
            &mut self.received,
        )?;
        // [[K]] = Σ_p [[ρ_p]] + Σ_p ε_p: the masks' representations, then one public constant.
        let mut sum = [0u8; BLOCK];
        for p in 0..self.n {
            let e = if p == self.me {
                &eps[..]
            } else {
                &self.received[p][..BLOCK]
            };
            self.transcript.update(e);
            xor(&mut sum, e);
        }
        let shape = self.mat.header().shape;
        let inputs: Vec<usize> = (0..self.n).map(|p| shape.input(p)).collect();
        let mut key = Rep::ZERO;
        self.add_reps(&inputs, &mut key);
        let mut data = vec![0u8; self.code.k()];
        layout::replicate(&sum, self.protocol.blocks_per_word(), &mut data);
        self.add_public(&mut key, &data);
        Ok(key)
    }

    /// Opens `reps` in one exchange: their data into `data`, after the codeword check.
    fn open<X: Exchange>(
        &mut self,
        x: &mut X,
        reps: &[Rep],
        data: &mut [Vec<u8>],
    ) -> Result<(), Error> {
        let out: Vec<u8> = reps.iter().flat_map(|r| r.word).collect();
        x.round(
            kinds::OPEN,
            Out::All(&out),
            Expect::All(out.len()),
            &mut self.received,
        )?;
        for (t, rep) in reps.iter().enumerate() {
            let mut y = rep.word;
            for (j, r) in self.received.iter().enumerate() {
                if j != self.me {
                    xor(&mut y, &r[t * N..(t + 1) * N]);
                }
            }
            self.code
                .decode(&y, &mut data[t])
                .ok_or(Cheat::NotCodeword {
                    opening: self.openings,
                })?;
            self.openings += 1;
            self.transcript.update(y);
            self.log.push(Opened { y, mac: rep.mac });
        }
        Ok(())
    }

    /// The next round key from the opened δ = K + R' of round `r`; with byte tables
    /// (Protocol 3), `sboxes` are the four opened S(k_i) + v_t.
    fn key_step(&mut self, r: usize, delta: &[u8], sboxes: Option<&[u8]>) -> Rep {
        let shape = self.mat.header().shape;
        let mut next = Rep::ZERO;
        let first: [u8; BLOCK] = delta[..BLOCK].try_into().unwrap_or_default();
        let mut public = layout::key_linear(&first);
        for w in 0..4 {
            public[4 * w] ^= RCON[r];
        }
        match sboxes {
            None => {
                let mut indices = [shape.key_linear(r); 5];
                for (t, &i) in KEY_SBOX_INPUTS.iter().enumerate() {
                    indices[1 + t] = shape.key_table(r, t, delta[i]);
                }
                self.add_reps(&indices, &mut next);
            }
            Some(t) => {
                self.add_reps(&[shape.key_linear(r), shape.key_sbox_masks(r)], &mut next);
                xor(&mut public, &layout::apply(t, layout::key_sbox_column));
            }
        }
        let mut data = vec![0u8; self.code.k()];
        layout::replicate(&public, self.protocol.blocks_per_word(), &mut data);
        self.add_public(&mut next, &data);
        next
    }

    /// The state of codeword `w` after round `r` (`key` is the round's key) from its opened
    /// δ = S + R; with byte tables (Protocol 3), `sboxes` are the opened S(s_q) + v_q.
    fn state_step(
        &mut self,
        r: usize,
        w: usize,
        delta: &[u8],
        sboxes: Option<&[u8]>,
        key: &Rep,
    ) -> Rep {
        let shape = self.mat.header().shape;
        let mut next = *key;
        match sboxes {
            None => {
                let mut indices = std::mem::take(&mut self.indices);
                indices.clear();
                indices.extend(
                    delta[..shape.tables_per_word()]
                        .iter()
                        .enumerate()
                        .map(|(q, &d)| shape.word_table(r, w, q, d)),
                );
                self.add_reps(&indices, &mut next);
                self.indices = indices;
            }
            Some(t) => {
                self.add_reps(&[shape.word_sbox_masks(r, w)], &mut next);
                let mix = r + 1 < ROUNDS;
                let mut data = vec![0u8; self.code.k()];
                for (b, tb) in t.chunks_exact(BLOCK).enumerate() {
                    data[b * BLOCK..(b + 1) * BLOCK].copy_from_slice(&layout::round_map(tb, mix));
                }
                self.add_public(&mut next, &data);
            }
        }
        next
    }

    /// Protocol 3: opens byte-table entries `entries` (S(x) + v, additively shared): each
    /// party sends every peer its share and a MAC of it under that peer's key, and checks the
    /// MACs it receives at once.
    fn open_entries<X: Exchange>(
        &mut self,
        x: &mut X,
        entries: &[usize],
    ) -> Result<Vec<u8>, Error> {
        const UNIT: usize = 1 + PAIR_MAC;
        let (me, n, mat) = (self.me, self.n, self.mat);
        let messages: Vec<Vec<u8>> = (0..n)
            .map(|l| {
                if l == me {
                    return Vec::new();
                }
                let slot = 1 + PAIR_MAC * peer_slot(me, l);
                let mut m = Vec::with_capacity(entries.len() * UNIT);
                for &e in entries {
                    let entry = mat.entry(e);
                    m.push(entry[0]);
                    m.extend_from_slice(&entry[slot..slot + PAIR_MAC]);
                }
                m
            })
            .collect();
        x.round(
            kinds::TABLE,
            Out::Each(&messages),
            Expect::All(entries.len() * UNIT),
            &mut self.received,
        )?;
        let mut opened: Vec<u8> = entries.iter().map(|&e| mat.entry(e)[0]).collect();
        let keys_at = 1 + PAIR_MAC * (n - 1);
        for (m, received) in self.received.iter().enumerate() {
            if m == me {
                continue;
            }
            let key = PairKey::new(mat.pair_key(m));
            let slot = keys_at + PAIR_MAC * peer_slot(me, m);
            let mut wrong = 0u64;
            for ((t, &e), unit) in opened
                .iter_mut()
                .zip(entries)
                .zip(received.chunks_exact(UNIT))
            {
                let b = u64_at(&mat.entry(e)[slot..]);
                wrong |= key.times(unit[0]) ^ b ^ u64_at(&unit[1..]);
                *t ^= unit[0];
            }
            if wrong != 0 {
                return Err(Cheat::TableMac { party: m }.into());
            }
        }
        self.transcript.update(&opened);
        Ok(opened)
    }

    /// The batched MAC check of every opening since the last check.
    fn check<X: Exchange>(&mut self, x: &mut X) -> Result<(), Error> {
        let h: [u8; 32] = self.transcript.clone().finalize().into();
        let seed: [u8; 16] = h[..16].try_into().unwrap_or_default();
        let mut coefficients = Prg::from_seed_block(Block::from(seed));
        let c = self.protocol.combinations();
        let mut sigma = vec![0u8; c * N];
        let (mut ys, mut coef) = ([0u8; N], [0u8; N]);
        for sig in sigma.chunks_exact_mut(N) {
            ys.fill(0);
            for o in &self.log {
                coefficients.fill_bytes(&mut coef);
                gf256::fma(&mut ys, &coef, &o.y);
                gf256::fma(sig, &coef, &o.mac);
            }
            gf256::fma(sig, self.mat.alpha(), &ys);
        }
        let mut nonce = [0u8; 16];
        self.rng.fill_bytes(&mut nonce);
        let mine = commit(b"mac check", self.me, &[&h, &sigma, &nonce]);
        x.round(
            kinds::COMMIT,
            Out::All(&mine),
            Expect::All(32),
            &mut self.received,
        )?;
        let commitments = self.received.clone();
        let reveal: Vec<u8> = [&h[..], &sigma, &nonce].concat();
        x.round(
            kinds::REVEAL,
            Out::All(&reveal),
            Expect::All(reveal.len()),
            &mut self.received,
        )?;
        let mut total = sigma;
        for (j, r) in self.received.iter().enumerate() {
            if j == self.me {
                continue;
            }
            let (hj, rest) = r.split_at(32);
            let (sj, nj) = rest.split_at(c * N);
            if commit(b"mac check", j, &[hj, sj, nj])[..] != commitments[j][..] {
                return Err(Cheat::Commitment { party: j }.into());
            }
            if hj != h {
                return Err(Cheat::Transcript { party: j }.into());
            }
            xor(&mut total, sj);
        }
        if total.iter().any(|&b| b != 0) {
            return Err(Cheat::MacCheck {
                what: "the openings",
            }
            .into());
        }
        self.log.clear();
        Ok(())
    }

    /// Opens the states as ciphertexts, then opens the MAC key and checks the output MACs.
    fn output<X: Exchange>(
        &mut self,
        x: &mut X,
        states: &[Rep],
    ) -> Result<Vec<[u8; BLOCK]>, Error> {
        self.spent = true;
        let words = states.len();
        let macs: Vec<u8> = states.iter().flat_map(|s| s.mac).collect();
        let mut nonce = [0u8; 16];
        self.rng.fill_bytes(&mut nonce);
        let alpha = self.mat.alpha();
        let mine = commit(b"output", self.me, &[alpha, &macs, &nonce]);
        let mut out: Vec<u8> = states.iter().flat_map(|s| s.word).collect();
        out.extend_from_slice(&mine);
        x.round(
            kinds::OUTPUT,
            Out::All(&out),
            Expect::All(out.len()),
            &mut self.received,
        )?;
        let commitments: Vec<Vec<u8>> = self
            .received
            .iter()
            .map(|r| r.get(words * N..).unwrap_or_default().to_vec())
            .collect();
        let mut ys = vec![[0u8; N]; words];
        let mut data = vec![vec![0u8; self.code.k()]; words];
        for (w, (y, s)) in ys.iter_mut().zip(states).enumerate() {
            *y = s.word;
            for (j, r) in self.received.iter().enumerate() {
                if j != self.me {
                    xor(y, &r[w * N..(w + 1) * N]);
                }
            }
            self.code
                .decode(y, &mut data[w])
                .ok_or(Cheat::NotCodeword {
                    opening: self.openings + w,
                })?;
        }
        self.openings += words;
        let reveal: Vec<u8> = [&alpha[..], &macs, &nonce].concat();
        x.round(
            kinds::OUTPUT_CHECK,
            Out::All(&reveal),
            Expect::All(reveal.len()),
            &mut self.received,
        )?;
        let (mut alpha_sum, mut mac_sum) = (*alpha, macs);
        for (j, r) in self.received.iter().enumerate() {
            if j == self.me {
                continue;
            }
            let (aj, rest) = r.split_at(N);
            let (mj, nj) = rest.split_at(words * N);
            if commit(b"output", j, &[aj, mj, nj])[..] != commitments[j][..] {
                return Err(Cheat::Commitment { party: j }.into());
            }
            xor(&mut alpha_sum, aj);
            xor(&mut mac_sum, mj);
        }
        for (y, m) in ys.iter().zip(mac_sum.chunks_exact(N)) {
            let mut want = [0u8; N];
            gf256::mul_slices(&alpha_sum, y, &mut want);
            if want[..] != m[..] {
                return Err(Cheat::MacCheck { what: "the output" }.into());
            }
        }
        let bpw = self.protocol.blocks_per_word();
        Ok(data
            .iter()
            .flat_map(|d| {
                (0..bpw).map(move |b| d[b * BLOCK..(b + 1) * BLOCK].try_into().unwrap_or_default())
            })
            .collect())
    }
}
