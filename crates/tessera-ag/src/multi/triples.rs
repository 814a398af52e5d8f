//! Authenticated AND triples among n parties (WRK17b §3, Fig. 8), with the circuit's masks
//! drawn beside them so that one consistency check covers both:
//!
//! 1. **Shares**: random \[x\], \[y\], \[r\] for ℓ·B leaky triples, the masks and 128 more
//!    ([`share::random`]).
//! 2. **Half-authenticated ANDs**: each pair i < j computes shares of x^i·y^j ⊕ x^j·y^i, P_i
//!    sending two bits per triple: u = H(K\[x^j\]) ⊕ H(K\[x^j\] ⊕ Δ_i) ⊕ y^i (low bits) and the
//!    same for y^j with x^i. Each party's share of xy is x^i·y^i ⊕ its cross shares; it tells
//!    every peer e = that ⊕ r^i, and \[z\] = \[r\] ⊕ e.
//! 3. **The leaky triples' check**: with Φ_i = y^i·Δ_i ⊕ ⊕_j (K_i\[y^j\] ⊕ M_j\[y^i\]), every
//!    party sends each peer U = H(K\[x^j\]) ⊕ H(K\[x^j\] ⊕ Δ_i) ⊕ Φ_i (in the round of step 2), so
//!    that each pair holds shares of x^j·Φ_i; each party's sum H_i of its shares, its z-terms
//!    and x^i·Φ_i ⊕ z^i·Δ_i adds up over the parties to (xy ⊕ z)·ΣΔ. After a tossed coin each
//!    party commits to a random linear combination of its H_i and opens it: the openings must
//!    add to 0. A wrong bit in step 2 passes only when the honest party's x- or y-share hides
//!    it (probability 1/2), and then leaks that share.
//! 4. **Consistency** ([`share::Consistency`], after the same coin): each party opens a random
//!    linear combination over GF(2^128) of all its shares to every peer, MAC-checked, and the
//!    parties compare a digest of all openings: a party that told peers differences to
//!    different bits, or different e, is caught but with probability 2^-128.
//! 5. **Bucketing** as in the two-party [`crate::triples`]: B layers of ℓ, cyclically shifted
//!    by the coin, each bucket folded into one triple by opening y_1 ⊕ y_i (MAC-checked).
//!
//! One coin serves steps 3 to 5: every message a cheater could choose is sent before it.

use super::share::{self, CHECK_SHARES, Consistency, NShares, Party, xor_entry};
use super::{Exchange, Round};
use crate::Error;
use crate::checks::{self, Check};
use crate::combine::Combination;
use crate::triples::{below, bucket_size, rotated};
use crate::wire::{self as kinds, unpack_bits};
use subtle::ConstantTimeEq;
use tessera_core::{Block, FixedKeyHash, Prg};
use tessera_net::role::pack_bits;
use tessera_protocols::Session;

/// The high 64 bits of this module's hash tweaks: bit 60 keeps them apart from the two-party
/// leaky AND's (bit 61) and the OT providers' (below 2^64, bits 126 and 127).
const TWEAK_HIGH: u64 = 1 << 60;

/// What the hashes of one key are for.
#[derive(Clone, Copy)]
enum Use {
    AndX = 0,
    AndY = 1,
    Check = 2,
}

fn tweak(u: Use, k: usize) -> Block {
    Block::from_halves(TWEAK_HIGH | u as u64, k as u64)
}

/// Keys or MACs hashed at a time.
const CHUNK: usize = 1024;

/// One party's preprocessing: authenticated AND triples and the circuit's masks.
#[derive(Debug)]
pub struct Preprocessed {
    /// Shares of the triples' x.
    pub x: NShares,
    /// Shares of y.
    pub y: NShares,
    /// Shares of z = x ∧ y.
    pub z: NShares,
    /// Random shares for the masks of the circuit's input and AND output wires.
    pub masks: NShares,
}

/// The leaky triples' state between the steps: shares laid out as \[x\] | \[y\] | \[r\] |
/// masks | ρ check bits, ℓ leaky triples.
struct Leaky {
    party: Party,
    sh: NShares,
    l: usize,
    hash: FixedKeyHash,
}

/// Generates `count` triples and `masks` masks; see the module documentation.
pub fn generate(
    s: &mut Session,
    ex: &mut Exchange,
    party: Party,
    count: usize,
    masks: usize,
) -> Result<Preprocessed, Error> {
    let bucket = if count == 0 { 1 } else { bucket_size(count) };
    let l = count * bucket;
    let sh = share::random(s, ex, party, 3 * l + masks + CHECK_SHARES)?;
    let mut leaky = Leaky {
        party,
        sh,
        l,
        hash: FixedKeyHash::default(),
    };
    let h = leaky.multiply(s, ex)?;
    let mut prg = s.fork_prg();
    let coin = share::coin(s, ex, party, &mut prg)?;
    leaky.check(s, ex, &h, coin, &mut prg)?;
    let (x, y, z) = leaky.bucket(s, ex, count, bucket, coin)?;
    let masks = leaky.sh.slice(3 * l..3 * l + masks);
    Ok(Preprocessed { x, y, z, masks })
}

impl Leaky {
    /// Steps 2 and 3's messages: returns each triple's H_i (before the z-terms, which change
    /// with e).
    fn multiply(&mut self, s: &mut Session, ex: &mut Exchange) -> Result<Vec<Block>, Error> {
        let (party, l) = (self.party, self.l);
        let phi: Vec<Block> = (0..l)
            .map(|k| {
                let e = self.sh.entry(l + k);
                e.iter()
                    .fold(party.delta & Block::mask(self.sh.bit(l + k)), |a, &b| a ^ b)
            })
            .collect();
        let mut cross = vec![false; l];
        let mut h: Vec<Block> = (0..l)
            .map(|k| phi[k] & Block::mask(self.sh.bit(k)))
            .collect();
        let mut out = vec![None; party.n];
        for j in party.peers() {
            let mut msg = Vec::new();
            if party.me < j {
                msg = self.half_and_rows(j, &mut cross);
            }
            msg.extend(self.check_rows(j, &phi, &mut h));
            out[j] = Some(msg);
        }
        let bits = (2 * l).div_ceil(8);
        let expect = (0..party.n)
            .map(|j| (j != party.me).then(|| 16 * l + if j < party.me { bits } else { 0 }))
            .collect();
        let got = ex.round(s, Round::new(kinds::N_LEAKY, out, expect))?;
        for (j, msg) in got.iter().enumerate() {
            let Some(msg) = msg else { continue };
            let rows = if j < party.me {
                self.half_and_eval(j, &msg[..bits], &mut cross)?;
                &msg[bits..]
            } else {
                &msg[..]
            };
            self.check_eval(j, rows, &mut h)?;
        }
        self.fix_products(s, ex, &cross)?;
        Ok(h)
    }

    /// H(v ⊕ offset, tweak(u, k)) for the values `v` of shares `at..` (`key`: this party's keys
    /// for peer `j`'s shares, else its MACs under `j`'s Δ), k counting from `at`, chunk by
    /// chunk: `f` gets each chunk's first k and hashes.
    fn hashes(
        &self,
        j: usize,
        key: bool,
        (u, at): (Use, usize),
        offset: Block,
        mut f: impl FnMut(usize, &[Block]),
    ) {
        let mut v = vec![Block::ZERO; CHUNK];
        let mut h = vec![Block::ZERO; CHUNK];
        for start in (0..self.l).step_by(CHUNK) {
            let end = (start + CHUNK).min(self.l);
            let (v, h) = (&mut v[..end - start], &mut h[..end - start]);
            for (x, k) in v.iter_mut().zip(start..end) {
                *x = if key {
                    self.sh.key(at + k, j)
                } else {
                    self.sh.mac(at + k, j)
                };
            }
            self.hash.tccr_counter(v, offset, tweak(u, start), h);
            f(start, h);
        }
    }

    /// Low bits of H(K ⊕ Δ) ⊕ H(K) and of H(K) for this party's keys of peer `j`'s shares `at..`.
    fn key_pads(&self, j: usize, (u, at): (Use, usize)) -> (Vec<bool>, Vec<bool>) {
        let (mut zero, mut one) = (vec![false; self.l], vec![false; self.l]);
        self.hashes(j, true, (u, at), Block::ZERO, |s, h| {
            for (z, x) in zero[s..].iter_mut().zip(h) {
                *z = x.lsb();
            }
        });
        self.hashes(j, true, (u, at), self.party.delta, |s, h| {
            for ((o, x), z) in one[s..].iter_mut().zip(h).zip(&zero[s..]) {
                *o = x.lsb() ^ z;
            }
        });
        (one, zero)
    }

    /// This party's half-authenticated AND rows for peer `j` (for whose shares it holds keys),
    /// adding its own shares of the cross terms to `cross`.
    fn half_and_rows(&self, j: usize, cross: &mut [bool]) -> Vec<u8> {
        let l = self.l;
        let (dx, hx) = self.key_pads(j, (Use::AndX, 0));
        let (dy, hy) = self.key_pads(j, (Use::AndY, l));
        let mut bits = Vec::with_capacity(2 * l);
        for k in 0..l {
            bits.push(dx[k] ^ self.sh.bit(l + k));
            bits.push(dy[k] ^ self.sh.bit(k));
            cross[k] ^= hx[k] ^ hy[k];
        }
        pack_bits(bits.into_iter())
    }

    /// Evaluates peer `j`'s half-authenticated AND rows with this party's MACs.
    fn half_and_eval(&self, j: usize, rows: &[u8], cross: &mut [bool]) -> Result<(), Error> {
        let l = self.l;
        let bits = unpack_bits(rows, 2 * l, kinds::N_LEAKY.name)?;
        for (u, at, row) in [(Use::AndX, 0, 0), (Use::AndY, l, 1)] {
            self.hashes(j, false, (u, at), Block::ZERO, |s, h| {
                for (k, x) in (s..).zip(h) {
                    cross[k] ^= x.lsb() ^ (self.sh.bit(at + k) & bits[2 * k + row]);
                }
            });
        }
        Ok(())
    }

    /// The check's rows U for peer `j`, adding H(K\[x^j\]) to `h`.
    fn check_rows(&self, j: usize, phi: &[Block], h: &mut [Block]) -> Vec<u8> {
        let mut u = phi.to_vec();
        self.hashes(j, true, (Use::Check, 0), Block::ZERO, |s, hs| {
            for ((a, b), x) in u[s..].iter_mut().zip(&mut h[s..]).zip(hs) {
                *a ^= *x;
                *b ^= *x;
            }
        });
        self.hashes(j, true, (Use::Check, 0), self.party.delta, |s, hs| {
            for (a, x) in u[s..].iter_mut().zip(hs) {
                *a ^= *x;
            }
        });
        bytemuck::cast_slice::<Block, u8>(&u).to_vec()
    }

    /// Takes peer `j`'s check rows: adds H(M\[x^i\]) ⊕ x^i·U to `h`.
    fn check_eval(&self, j: usize, rows: &[u8], h: &mut [Block]) -> Result<(), Error> {
        let u = kinds::blocks(rows, kinds::N_LEAKY.name)?;
        self.hashes(j, false, (Use::Check, 0), Block::ZERO, |s, hs| {
            for (k, x) in (s..).zip(hs) {
                h[k] ^= *x ^ (u[k] & Block::mask(self.sh.bit(k)));
            }
        });
        Ok(())
    }

    /// Tells every peer e = (this party's share of xy) ⊕ r and moves \[r\] to \[z\].
    fn fix_products(
        &mut self,
        s: &mut Session,
        ex: &mut Exchange,
        cross: &[bool],
    ) -> Result<(), Error> {
        let (party, l) = (self.party, self.l);
        let e: Vec<bool> = (0..l)
            .map(|k| (self.sh.bit(k) & self.sh.bit(l + k)) ^ cross[k] ^ self.sh.bit(2 * l + k))
            .collect();
        for (k, &d) in e.iter().enumerate() {
            let entry = self.sh.entry_mut(2 * l + k);
            entry
                .iter_mut()
                .step_by(2)
                .for_each(|mac| share::fix_mac(mac, d));
        }
        let msg = pack_bits(e.into_iter());
        let out = party.peers().fold(vec![None; party.n], |mut o, j| {
            o[j] = Some(msg.clone());
            o
        });
        let expect = share::expect_from(party, |_| true, l.div_ceil(8));
        let got = ex.round(s, Round::new(kinds::N_PRODUCTS, out, expect))?;
        for (j, msg) in got.iter().enumerate() {
            let Some(msg) = msg else { continue };
            let e = unpack_bits(msg, l, kinds::N_PRODUCTS.name)?;
            let at = 2 * party.slot(j) + 1;
            for (k, d) in e.into_iter().enumerate() {
                share::fix_key(&mut self.sh.entry_mut(2 * l + k)[at], party.delta, d);
            }
        }
        Ok(())
    }

    /// Steps 3 and 4's checks, after the coin: the combination of the H_i (committed, then
    /// opened) and the consistency openings with their echo.
    fn check(
        &self,
        s: &mut Session,
        ex: &mut Exchange,
        h: &[Block],
        coin: Block,
        prg: &mut Prg,
    ) -> Result<(), Error> {
        let (party, l) = (self.party, self.l);
        let mut comb = Combination::new(b"tessera-ag n-party leaky AND check", &[&coin.to_bytes()]);
        for (k, &hk) in h.iter().enumerate() {
            let e = self.sh.entry(2 * l + k);
            let z = e.iter().fold(
                party.delta & Block::mask(self.sh.bit(2 * l + k)),
                |a, &b| a ^ b,
            );
            comb.push(hk ^ z);
        }
        let c = comb.finish().to_bytes();
        let nonce = prg.random_block().to_bytes();
        let commit =
            tessera_core::digest::tagged(b"tessera-ag leaky AND check commitment", &[&c, &nonce]);
        let consistency = Consistency::new(&self.sh, coin)?;
        let out = party.peers().fold(vec![None; party.n], |mut o, j| {
            o[j] = Some([consistency.opening(j), commit.to_vec()].concat());
            o
        });
        let expect = share::expect_from(party, |_| true, Consistency::LEN + 32);
        let got = ex.round(s, Round::new(kinds::N_CHECK, out, expect))?;
        let mut seen = vec![Block::ZERO; party.n];
        for (j, msg) in got.iter().enumerate() {
            let Some(msg) = msg else { continue };
            seen[j] = consistency.check(j, &msg[..Consistency::LEN])?;
        }
        let echo = consistency.echo(&seen);
        let mine = [&c[..], &nonce, &echo].concat();
        let out = party.peers().fold(vec![None; party.n], |mut o, j| {
            o[j] = Some(mine.clone());
            o
        });
        let opened = ex.round(
            s,
            Round::new(
                kinds::N_CHECK_OPEN,
                out,
                share::expect_from(party, |_| true, 64),
            ),
        )?;
        let mut sum = Block::from_bytes(c);
        for (j, o) in opened.iter().enumerate() {
            let (Some(o), Some(g)) = (o, &got[j]) else {
                continue;
            };
            let again = tessera_core::digest::tagged(
                b"tessera-ag leaky AND check commitment",
                &[&o[..16], &o[16..32]],
            );
            let opens = bool::from(again.ct_eq(&g[Consistency::LEN..]));
            checks::require(Check::LeakyCommitment, opens)?;
            sum ^= Block::from_bytes(o[..16].try_into().unwrap_or_default());
        }
        checks::require(Check::LeakyCheck, sum == Block::ZERO)?;
        let echoes: Vec<Option<Vec<u8>>> = opened
            .iter()
            .map(|o| o.as_ref().map(|o| o[32..].to_vec()))
            .collect();
        share::check_echo(&echo, &echoes, Check::ShareConsistency)
    }

    /// Step 5: folds the ℓ·B leaky triples into ℓ/B… `count` triples, buckets drawn by `coin`.
    fn bucket(
        &self,
        s: &mut Session,
        ex: &mut Exchange,
        count: usize,
        bucket: usize,
        coin: Block,
    ) -> Result<(NShares, NShares, NShares), Error> {
        let (party, l) = (self.party, self.l);
        let mut prg = share::seeded(coin, b"tessera-ag bucket shifts");
        let shifts: Vec<usize> = (1..bucket)
            .map(|_| below(prg.random_block(), count))
            .collect();
        let mut diffs = NShares::with_capacity(party, shifts.len() * count);
        for (i, &shift) in shifts.iter().enumerate() {
            let layer = (i + 1) * count;
            for (j, other) in rotated(count, shift).enumerate() {
                diffs.push_from(&self.sh, l + j);
                let at = diffs.len() - 1;
                diffs.xor_from(at, &self.sh, l + layer + other);
            }
        }
        let d = share::open_all(s, ex, &diffs, (kinds::N_BUCKETS, Check::BucketMacs))?;
        let take = |from: usize| self.sh.slice(from..from + count);
        let (mut x, y, mut z) = (take(0), take(l), take(2 * l));
        let folded = if checks::on(Check::Bucketing) {
            &shifts[..]
        } else {
            &[]
        };
        let mut scaled = vec![Block::ZERO; party.width()];
        for (i, &shift) in folded.iter().enumerate() {
            let layer = (i + 1) * count;
            for (j, other) in rotated(count, shift).enumerate() {
                let other = layer + other;
                let m = Block::mask(d[i * count + j]);
                x.xor_from(j, &self.sh, other);
                z.xor_from(j, &self.sh, 2 * l + other);
                for (s, &v) in scaled.iter_mut().zip(self.sh.entry(other)) {
                    *s = v & m;
                }
                xor_entry(z.entry_mut(j), &scaled);
            }
        }
        Ok((x, y, z))
    }
}
