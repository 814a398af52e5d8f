//! Random 1-out-of-N OT (N = 2^m) with short messages, each made from m random correlated OTs
//! and no further traffic: Naor and Pinkas's 1-out-of-N OT from log N 1-out-of-2 OTs
//! (SODA 2001, §4.1), its keys' PRF replaced by the tweakable circular correlation robust
//! hash of Guo, Katz, Wang and Yu (S&P 2020, §7) as CrypTFlow2 and Cheetah do on silent OT
//! (Rathee et al., CCS 2020, §2.2; Huang et al., USENIX Security 2022, §2.3).
//!
//! Instance k takes the correlated OTs q_{k,s} (s < m) of one sender with offset Δ. The
//! sender's message i is M_i = ⊕_s H(q_{k,s} ⊕ i_s·Δ, t(k, s, i)) cut to w bits; the
//! receiver, whose blocks are q_{k,s} ⊕ c_s·Δ with its random choice bit c_s in their least
//! significant bit, computes M_c for its choice c = Σ c_s·2^s. For i ≠ c some s has
//! i_s ≠ c_s, so M_i takes H(x ⊕ Δ, t) at a tweak t that no other message uses: the messages
//! the receiver did not choose are pseudorandom to it. The tweak t(k, s, i) holds the OT's
//! position (`first` + k·m + s) and i, with bit 124 set, apart from the tweaks of
//! [`crate::flavours`] (below 2^64), of [`crate::triples`] (bit 126) and of Ferret (bit 127).
//!
//! A precomputed random OT is used on chosen choices by Beaver's derandomisation (CRYPTO
//! 1995): the receiver sends u = b ⊕ c for its choice b, and the sender's message for b is
//! masked by M_{b ⊕ u}, which the receiver holds.

use tessera_core::{Block, FixedKeyHash};

/// The high word of every tweak.
const DOMAIN: u64 = 1 << 60;
/// Instances hashed per batch: bounds the scratch memory.
const BATCH: usize = 1 << 12;
/// The largest choice: N ≤ 256.
pub const MAX_CHOICE_BITS: u32 = 8;

/// The shape of a batch of random 1-out-of-2^m OTs: m choice bits, messages of w bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OneOfN {
    /// m: each instance chooses one of 2^m messages and takes m correlated OTs.
    pub choice_bits: u32,
    /// w (1 to 64): the bits of each message.
    pub message_bits: u32,
}

/// A bit string of fixed-width fields, field k at bits k·w to k·w + w (w ≤ 64).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fields {
    width: u32,
    count: usize,
    words: Vec<u64>,
}

impl Fields {
    /// `count` fields of `width` bits (1 to 64), all zero.
    pub fn zeros(width: u32, count: usize) -> Self {
        assert!((1..=64).contains(&width), "fields of {width} bits");
        Fields {
            width,
            count,
            words: vec![0; (count * width as usize).div_ceil(64)],
        }
    }

    /// `count` fields of `width` bits over `words` (as [`Fields::words`] gives them); `None`
    /// unless the words hold exactly that many bits, the last one's unused bits zero.
    pub fn from_words(width: u32, count: usize, words: Vec<u64>) -> Option<Self> {
        let f = Fields {
            words,
            ..Fields::zeros(width, 0)
        };
        let bits = count * width as usize;
        let tail = bits % 64;
        let clean = tail == 0 || f.words.last().is_none_or(|&w| w >> tail == 0);
        (f.words.len() == bits.div_ceil(64) && clean).then_some(Fields { count, ..f })
    }

    /// `count` fields of `width` bits from their bytes on the wire ([`Fields::to_bytes`]);
    /// `None` unless there are exactly as many bytes as they fill, the unused bits zero.
    pub fn from_bytes(width: u32, count: usize, bytes: &[u8]) -> Option<Self> {
        if bytes.len() != (count * width as usize).div_ceil(8) {
            return None;
        }
        let words = bytes
            .chunks(8)
            .map(|b| {
                let mut word = [0u8; 8];
                word[..b.len()].copy_from_slice(b);
                u64::from_le_bytes(word)
            })
            .collect();
        Fields::from_words(width, count, words)
    }

    /// The words holding the fields, the last one's unused bits zero.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The words, taken.
    pub fn into_words(self) -> Vec<u64> {
        self.words
    }

    /// The fields' bytes on the wire: the words' little-endian bytes, as many as the fields
    /// fill.
    pub fn to_bytes(&self) -> Vec<u8> {
        let len = (self.count * self.width as usize).div_ceil(8);
        let bytes = self.words.iter().flat_map(|w| w.to_le_bytes());
        bytes.take(len).collect()
    }

    /// Field `k`.
    pub fn get(&self, k: usize) -> u64 {
        let (w, at) = (self.width as usize, k * self.width as usize);
        let (word, bit) = (at / 64, at % 64);
        let mut v = self.words[word] >> bit;
        if bit + w > 64 {
            v |= self.words[word + 1] << (64 - bit);
        }
        v & field_mask(self.width)
    }

    /// Sets field `k` to `v` (its bits beyond the width dropped).
    pub fn set(&mut self, k: usize, v: u64) {
        let (w, at) = (self.width as usize, k * self.width as usize);
        let (word, bit) = (at / 64, at % 64);
        let (v, mask) = (v & field_mask(self.width), field_mask(self.width));
        self.words[word] = (self.words[word] & !(mask << bit)) | (v << bit);
        if bit + w > 64 {
            let high = 64 - bit;
            self.words[word + 1] = (self.words[word + 1] & !(mask >> high)) | (v >> high);
        }
    }
}

/// The low `width` bits set.
fn field_mask(width: u32) -> u64 {
    if width == 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    }
}

impl OneOfN {
    /// N = 2^m, the messages per instance.
    pub fn messages(self) -> usize {
        1 << self.choice_bits
    }

    /// The correlated OTs `instances` instances take.
    pub fn cots(self, instances: usize) -> usize {
        instances * self.choice_bits as usize
    }

    fn check(self, cots: usize) -> usize {
        assert!(
            (1..=MAX_CHOICE_BITS).contains(&self.choice_bits)
                && (1..=64).contains(&self.message_bits),
            "1-out-of-N OT of {self:?}"
        );
        assert_eq!(cots % self.choice_bits as usize, 0, "{cots} correlated OTs");
        cots / self.choice_bits as usize
    }

    /// The sender's messages of the instances on its correlated OTs `q` (m per instance, in
    /// order) under its offset `delta`, the first at position `first` of its sequence, into
    /// `out` from instance `at` on: message i of instance k is field (at + k)·N + i.
    ///
    /// # Panics
    /// If the shape is out of range, `q` is not whole instances or `out` too short.
    pub fn send(
        self,
        (hash, delta): (&FixedKeyHash, Block),
        q: &[Block],
        first: u64,
        (out, at): (&mut Fields, usize),
    ) {
        let instances = self.check(q.len());
        let (m, n) = (self.choice_bits as usize, self.messages());
        let mut keys = Vec::with_capacity(BATCH * n * m);
        let mut tweaks = Vec::with_capacity(BATCH * n * m);
        let mut hashed = Vec::with_capacity(BATCH * n * m);
        for start in (0..instances).step_by(BATCH) {
            let end = (start + BATCH).min(instances);
            keys.clear();
            tweaks.clear();
            for k in start..end {
                for i in 0..n {
                    for s in 0..m {
                        let q = q[k * m + s];
                        keys.push(if (i >> s) & 1 == 1 { q ^ delta } else { q });
                        tweaks.push(tweak(first, k * m + s, i));
                    }
                }
            }
            hashed.resize(keys.len(), Block::ZERO);
            hash.tccr(&keys, &tweaks, &mut hashed);
            for (k, per_k) in (start..end).zip(hashed.chunks_exact(n * m)) {
                for (i, terms) in per_k.chunks_exact(m).enumerate() {
                    let sum = terms.iter().fold(0u64, |acc, h| acc ^ h.low());
                    out.set((at + k) * n + i, sum);
                }
            }
        }
    }

    /// The receiver's random choices (into `choices`, fields of m bits) and the messages it
    /// chose (into `messages`, fields of w bits), from instance `at` on, on its correlated OTs
    /// `t` (m per instance, the choice bits their least significant bits), the first at
    /// position `first` of the sender's sequence.
    ///
    /// # Panics
    /// As [`OneOfN::send`].
    pub fn receive(
        self,
        hash: &FixedKeyHash,
        t: &[Block],
        first: u64,
        (choices, messages, at): (&mut Fields, &mut Fields, usize),
    ) {
        self.check(t.len());
        let m = self.choice_bits as usize;
        let instances = t.len() / m;
        let (mut tweaks, mut hashed) = (Vec::with_capacity(BATCH * m), Vec::new());
        for start in (0..instances).step_by(BATCH) {
            let end = (start + BATCH).min(instances);
            let blocks = &t[start * m..end * m];
            tweaks.clear();
            for k in start..end {
                let c = (0..m).fold(0, |c, s| c | ((t[k * m + s].low() & 1) as usize) << s);
                choices.set(at + k, c as u64);
                tweaks.extend((0..m).map(|s| tweak(first, k * m + s, c)));
            }
            hashed.resize(blocks.len(), Block::ZERO);
            hash.tccr(blocks, &tweaks, &mut hashed);
            for (k, terms) in (start..end).zip(hashed.chunks_exact(m)) {
                messages.set(at + k, terms.iter().fold(0u64, |acc, h| acc ^ h.low()));
            }
        }
    }
}

/// The tweak of message `i` on the OT at `first + offset`.
fn tweak(first: u64, offset: usize, i: usize) -> Block {
    Block::from_halves(DOMAIN | i as u64, first.wrapping_add(offset as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_core::Prg;

    /// Correlated OTs as a provider makes them: q with lsb 0, the receiver's q ⊕ c·Δ.
    fn cots(prg: &mut Prg, delta: Block, count: usize) -> (Vec<Block>, Vec<Block>) {
        let q: Vec<Block> = (0..count)
            .map(|_| prg.random_block().with_lsb(false))
            .collect();
        let t = q
            .iter()
            .map(|&q| {
                if prg.random_block().lsb() {
                    q ^ delta
                } else {
                    q
                }
            })
            .collect();
        (q, t)
    }

    #[test]
    fn the_receiver_holds_the_message_of_its_choice_and_the_others_differ() {
        let hash = FixedKeyHash::default();
        let mut prg = Prg::from_seed_block(Block::new(7));
        let delta = prg.random_block().with_lsb(true);
        for (m, w) in [(1, 64), (2, 2), (3, 37), (4, 2), (8, 5)] {
            let shape = OneOfN {
                choice_bits: m,
                message_bits: w,
            };
            let instances = 300;
            let (q, t) = cots(&mut prg, delta, shape.cots(instances));
            let n = shape.messages();
            // Two calls, the second from instance 100 on, as a caller drawing in batches.
            let split = shape.cots(100);
            let mut sent = Fields::zeros(w, instances * n);
            shape.send((&hash, delta), &q[..split], 1000, (&mut sent, 0));
            let next = 1000 + split as u64;
            shape.send((&hash, delta), &q[split..], next, (&mut sent, 100));
            let mut choices = Fields::zeros(m, instances);
            let mut got = Fields::zeros(w, instances);
            shape.receive(&hash, &t[..split], 1000, (&mut choices, &mut got, 0));
            shape.receive(&hash, &t[split..], next, (&mut choices, &mut got, 100));
            let mut others_equal = 0;
            for k in 0..instances {
                let c = choices.get(k) as usize;
                assert_eq!(got.get(k), sent.get(k * n + c), "m {m} w {w} instance {k}");
                others_equal += (0..n)
                    .filter(|&i| i != c && sent.get(k * n + i) == got.get(k))
                    .count();
            }
            // Messages of w bits collide by chance: at w = 2 about a quarter of them.
            let pairs = (instances * (n - 1)) as f64;
            assert!(
                (others_equal as f64) < pairs * (0.5f64.powi(w as i32) + 0.05),
                "m {m} w {w}: {others_equal} of {pairs}"
            );
            // Another position: other messages.
            let mut moved = Fields::zeros(w, instances);
            let far = 1000 + 2 * shape.cots(instances) as u64;
            shape.receive(&hash, &t, far, (&mut choices, &mut moved, 0));
            assert_ne!(moved, got);
        }
    }

    #[test]
    fn fields_round_trip_across_words() {
        for w in [1, 2, 5, 37, 63, 64] {
            let mut f = Fields::zeros(w, 50);
            let v = |k: usize| (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) & field_mask(w);
            for k in 0..50 {
                f.set(k, u64::MAX);
                f.set(k, v(k));
            }
            for k in 0..50 {
                assert_eq!(f.get(k), v(k), "width {w} field {k}");
            }
            let bytes = f.to_bytes();
            assert_eq!(Fields::from_bytes(w, 50, &bytes), Some(f.clone()));
            assert_eq!(Fields::from_bytes(w, 49, &bytes), None);
            if (50 * w) % 8 != 0 {
                let mut high = bytes.clone();
                *high.last_mut().unwrap() |= 0x80;
                assert_eq!(Fields::from_bytes(w, 50, &high), None, "width {w}");
            }
        }
    }
}
