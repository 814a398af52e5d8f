//! Circuit-based private set intersection, the two PSI benchmarks of VASA (ACSAC 2021) §5.2,
//! each with the plaintext function it computes.
//!
//! * [`scs_psi`]: sort-compare-shuffle (Huang, Evans, Katz, NDSS 2012). Each party sorts its
//!   set locally; the circuit merges the two sorted lists with a bitonic merger, marks equal
//!   neighbours, and shuffles the marked list with a Waksman permutation network whose switches
//!   the garbler sets.
//! * [`phasing_psi`]: circuit PSI with permutation-based hashing (Pinkas, Schneider, Segev,
//!   Zohner, USENIX Security 2015). The evaluator cuckoo-hashes its set into β = ⌈ε n⌉ bins
//!   with 3 hash functions and a stash; the garbler hashes its set into the same bins with all
//!   3 functions (simple hashing), padded to the maximum bin size; the circuit compares each
//!   bin's item with the garbler's items in that bin, and each stash item with the garbler's
//!   whole set. [`PhasingHashing`] does the parties' local hashing.
//!
//! Elements are `bits`-bit unsigned integers, least significant bit first in the circuit.

use crate::builder::{Bit, Builder, Signedness};
use crate::{Circuit, Error};

/// Applies the Waksman permutation network (the arbitrary-size construction of Beauquier and
/// Darrot, "On arbitrary size Waksman networks", 2002) to `v`: `switch(x, y)` is called for
/// every 2 × 2 switch, in a fixed order, and returns the pair swapped or not.
pub fn waksman<T>(v: Vec<T>, switch: &mut dyn FnMut(T, T) -> (T, T)) -> Vec<T> {
    let m = v.len();
    if m < 2 {
        return v;
    }
    let half = m / 2;
    let mut it = v.into_iter();
    let (mut top, mut bottom) = (Vec::with_capacity(half), Vec::with_capacity(m - half));
    for _ in 0..half {
        if let (Some(a), Some(b)) = (it.next(), it.next()) {
            let (a, b) = switch(a, b);
            top.push(a);
            bottom.push(b);
        }
    }
    bottom.extend(it);
    let (top, bottom) = (waksman(top, switch), waksman(bottom, switch));
    // Even sizes: the last pair passes straight through; odd sizes: the last bottom output.
    let out_switches = if m.is_multiple_of(2) { half - 1 } else { half };
    let (mut t, mut b) = (top.into_iter(), bottom.into_iter());
    let mut out = Vec::with_capacity(m);
    for _ in 0..out_switches {
        if let (Some(x), Some(y)) = (t.next(), b.next()) {
            let (x, y) = switch(x, y);
            out.push(x);
            out.push(y);
        }
    }
    out.extend(t);
    out.extend(b);
    out
}

/// Number of switches in the Waksman network on `m` inputs.
pub fn waksman_switches(m: usize) -> usize {
    let mut count = 0;
    waksman(vec![(); m], &mut |a, b| {
        count += 1;
        (a, b)
    });
    count
}

/// The SCS-PSI circuit for two sets of `n` elements (`n` a power of two) of `bits` bits.
///
/// Input value 0 (garbler): its set, sorted ascending, then one control bit per switch of the
/// shuffle ([`waksman_switches`]`(2n − 1)`). Input value 1 (evaluator): its set, sorted
/// ascending. Output: 2n − 1 values of `bits` bits, the merged list's i-th element where it
/// equals the (i + 1)-th and 0 elsewhere, shuffled: the intersection (elements of each set
/// distinct; 0 stands for "none"), in an order the garbler chose. [`scs_psi_plain`] is the same
/// function.
pub fn scs_psi(n: usize, bits: u32) -> Result<Circuit, Error> {
    if !n.is_power_of_two() || !(1..=64).contains(&bits) {
        return Err(Error::Invalid(format!(
            "SCS-PSI needs a power-of-two set size and 1 to 64 bits per element, not {n} and {bits}"
        )));
    }
    let w = bits as usize;
    let switches = waksman_switches(2 * n - 1);
    let mut g = Builder::new();
    let garbler = g.input(checked_width(n * w + switches)?);
    let evaluator = g.input(checked_width(n * w)?);
    let (a, controls) = garbler.split_at(n * w);
    // A ascending then B descending: a bitonic sequence.
    let mut list: Vec<Vec<Bit>> = a.chunks(w).map(<[Bit]>::to_vec).collect();
    list.extend(evaluator.chunks(w).rev().map(<[Bit]>::to_vec));
    bitonic_merge(&mut list, &mut |x, y| {
        let swap = g.lt(&y, &x, Signedness::Unsigned);
        conditional_swap(&mut g, swap, x, y)
    });
    let marked: Vec<Vec<Bit>> = list
        .windows(2)
        .map(|p| {
            let e = g.eq(&p[0], &p[1]);
            p[0].iter().map(|&b| g.and(e, b)).collect()
        })
        .collect();
    let mut controls = controls.iter();
    let shuffled = waksman(marked, &mut |x, y| {
        let c = controls.next().copied().unwrap_or(Bit::Const(false));
        conditional_swap(&mut g, c, x, y)
    });
    g.finish(&[shuffled.concat()])
}

/// The function [`scs_psi`] computes, on integers: `a` and `b` sorted ascending, `controls`
/// one bit per switch.
pub fn scs_psi_plain(a: &[u64], b: &[u64], controls: &[bool]) -> Vec<u64> {
    let mut merged: Vec<u64> = a.iter().chain(b).copied().collect();
    merged.sort_unstable();
    let marked: Vec<u64> = merged
        .windows(2)
        .map(|p| if p[0] == p[1] { p[0] } else { 0 })
        .collect();
    let mut controls = controls.iter();
    waksman(marked, &mut |x, y| {
        if controls.next().copied().unwrap_or(false) {
            (y, x)
        } else {
            (x, y)
        }
    })
}

/// Sorts a bitonic sequence (length a power of two) ascending with `compare_exchange`, which
/// returns its two arguments in ascending order (Batcher's bitonic merger).
fn bitonic_merge<T: Clone>(list: &mut [T], compare_exchange: &mut dyn FnMut(T, T) -> (T, T)) {
    let mut stride = list.len() / 2;
    while stride > 0 {
        for block in list.chunks_mut(2 * stride) {
            let (lo, hi) = block.split_at_mut(stride);
            for (x, y) in lo.iter_mut().zip(hi) {
                let (a, b) = compare_exchange(x.clone(), y.clone());
                *x = a;
                *y = b;
            }
        }
        stride /= 2;
    }
}

/// (x, y) swapped where `swap` is 1: one AND per bit.
fn conditional_swap(g: &mut Builder, swap: Bit, x: Vec<Bit>, y: Vec<Bit>) -> (Vec<Bit>, Vec<Bit>) {
    let d: Vec<Bit> = x
        .iter()
        .zip(&y)
        .map(|(&p, &q)| {
            let diff = g.xor(p, q);
            g.and(swap, diff)
        })
        .collect();
    (g.xor_bits(&x, &d), g.xor_bits(&y, &d))
}

fn checked_width(w: usize) -> Result<u32, Error> {
    u32::try_from(w).map_err(|_| Error::Invalid(format!("an input of {w} bits is too wide")))
}

/// The parameters of circuit-Phasing PSI and the parties' local hashing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhasingHashing {
    /// Elements per set.
    pub n: usize,
    /// Bits per element.
    pub bits: u32,
    /// Number of bins β = ⌈ε n⌉.
    pub bins: usize,
    /// The garbler's bins hold this many items each (padded).
    pub max_bin: usize,
    /// Stash slots of the evaluator's cuckoo table.
    pub stash: usize,
    /// Seeds of the three hash functions.
    pub seeds: [u64; 3],
}

/// Number of cuckoo hash functions.
const HASHES: usize = 3;

/// A 64-bit mixing function (the SplitMix64 finaliser).
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl PhasingHashing {
    /// Parameters for `n` elements of `bits` bits, ε = `epsilon`, a stash of `stash`: the
    /// maximum bin size is the smallest k for which β · Pr[Bin(3n, 1/β) ≥ k] ≤ 2^−40.
    pub fn new(
        n: usize,
        bits: u32,
        epsilon: f64,
        stash: usize,
        seeds: [u64; 3],
    ) -> Result<Self, Error> {
        let bins = (epsilon * n as f64).ceil() as usize;
        let r = usize::BITS - 1 - bins.max(1).leading_zeros();
        if n == 0 || bins < 2 || !(r + 1..=63).contains(&bits) {
            return Err(Error::Invalid(format!(
                "Phasing needs elements, at least 2 bins and more bits than log2(bins): n {n}, bins {bins}, bits {bits}"
            )));
        }
        // pmf of Bin(3n, 1/β) from k = 0 up, then its tail from the top down.
        let balls = HASHES * n;
        let p = 1.0 / bins as f64;
        let top = balls.min(512);
        let mut pmf = Vec::with_capacity(top + 1);
        pmf.push((1.0 - p).powi(balls as i32));
        for k in 0..top {
            let next = pmf[k] * (balls - k) as f64 / (k + 1) as f64 * p / (1.0 - p);
            pmf.push(next);
        }
        let mut tail = 0.0;
        let mut max_bin = top;
        for k in (1..=top).rev() {
            tail += pmf[k];
            // tail = Pr[load ≥ k]: bins of k − 1 fail with probability about β · tail.
            if bins as f64 * tail > 2f64.powi(-40) {
                max_bin = k;
                break;
            }
        }
        Ok(PhasingHashing {
            n,
            bits,
            bins,
            max_bin,
            stash,
            seeds,
        })
    }

    /// Bits x_R that permutation-based hashing drops: ⌊log₂ β⌋.
    fn dropped(&self) -> u32 {
        usize::BITS - 1 - self.bins.leading_zeros()
    }

    /// Bits of a stored item: x_L, the hash function's index (2 bits) and a dummy flag.
    pub fn item_bits(&self) -> u32 {
        self.bits - self.dropped() + 3
    }

    /// Bin of `x` under hash function `i`: (x_R + h_i(x_L)) mod β, so x is recovered from the
    /// bin, x_L and i.
    fn bin(&self, x: u64, i: usize) -> usize {
        let r = self.dropped();
        let (xl, xr) = (x >> r, x & ((1 << r) - 1));
        ((xr + mix(xl ^ self.seeds[i]) % self.bins as u64) % self.bins as u64) as usize
    }

    /// The stored item of `x` placed by function `i`: x_L, then i, flag 0.
    fn item(&self, x: u64, i: usize) -> u64 {
        ((x >> self.dropped()) << 3) | ((i as u64) << 1)
    }

    /// An empty slot on the garbler's side (flag 1, all zero).
    fn garbler_dummy(&self) -> u64 {
        1
    }

    /// An empty slot on the evaluator's side (flag 1, all one): never equals a garbler item.
    fn evaluator_dummy(&self) -> u64 {
        (1u64 << self.item_bits()) - 1
    }

    /// The garbler's simple hashing of `set`: `bins × max_bin` items, each element in the
    /// bins of all three functions, padded with dummies. An error if a bin overflows.
    pub fn garbler_table(&self, set: &[u64]) -> Result<Vec<u64>, Error> {
        let mut table = vec![Vec::new(); self.bins];
        for &x in set {
            for i in 0..HASHES {
                table[self.bin(x, i)].push(self.item(x, i));
            }
        }
        let mut out = Vec::with_capacity(self.bins * self.max_bin);
        for (j, bin) in table.into_iter().enumerate() {
            if bin.len() > self.max_bin {
                return Err(Error::Input(format!(
                    "simple hashing: bin {j} holds {} items, more than the bound {}",
                    bin.len(),
                    self.max_bin
                )));
            }
            out.extend(&bin);
            out.extend(std::iter::repeat_n(
                self.garbler_dummy(),
                self.max_bin - bin.len(),
            ));
        }
        Ok(out)
    }

    /// The evaluator's cuckoo hashing of `set` (random walk, at most 500 evictions per
    /// element, choices drawn from `walk_seed`): `bins` items, then the stash, and each bin's
    /// and stash slot's element (None when empty). An error if the stash overflows.
    #[allow(clippy::type_complexity)]
    pub fn evaluator_table(
        &self,
        set: &[u64],
        walk_seed: u64,
    ) -> Result<(Vec<u64>, Vec<Option<u64>>), Error> {
        let mut slots: Vec<Option<(u64, usize)>> = vec![None; self.bins];
        let mut stash = Vec::new();
        let mut rng = walk_seed;
        for &x in set {
            // The homeless element, and the function that placed it where it was evicted from.
            let (mut item, mut avoid) = (x, HASHES);
            let mut placed = false;
            for _ in 0..500 {
                if let Some(i) = (0..HASHES).find(|&i| slots[self.bin(item, i)].is_none()) {
                    slots[self.bin(item, i)] = Some((item, i));
                    placed = true;
                    break;
                }
                rng = mix(rng.wrapping_add(0x9e37_79b9_7f4a_7c15));
                let mut f = (rng % HASHES as u64) as usize;
                if f == avoid {
                    f = (f + 1) % HASHES;
                }
                if let Some((y, fy)) = slots[self.bin(item, f)].replace((item, f)) {
                    (item, avoid) = (y, fy);
                }
            }
            if !placed {
                if stash.len() == self.stash {
                    return Err(Error::Input(format!(
                        "cuckoo hashing: element {item} does not fit and the stash of {} is full",
                        self.stash
                    )));
                }
                stash.push(item);
            }
        }
        let mut items: Vec<u64> = slots
            .iter()
            .map(|s| s.map_or(self.evaluator_dummy(), |(x, i)| self.item(x, i)))
            .collect();
        let mut elements: Vec<Option<u64>> = slots.iter().map(|s| s.map(|(x, _)| x)).collect();
        for k in 0..self.stash {
            let x = stash.get(k).copied();
            // Stash items are whole elements with a flag bit: dummies all one.
            items.push(x.map_or(self.stash_dummy(), |x| self.stash_item(x)));
            elements.push(x);
        }
        Ok((items, elements))
    }

    /// A whole element as the stash comparison reads it: x, then flag 0.
    fn stash_item(&self, x: u64) -> u64 {
        x << 1
    }

    /// An empty stash slot (flag 1).
    fn stash_dummy(&self) -> u64 {
        (1u64 << (self.bits + 1)) - 1
    }

    /// The garbler's input bits: its hash table, then its whole set for the stash.
    pub fn garbler_input(&self, set: &[u64]) -> Result<Vec<bool>, Error> {
        let table = self.garbler_table(set)?;
        let w = self.item_bits() as usize;
        let mut bits = to_bits(&table, w);
        let whole: Vec<u64> = set.iter().map(|&x| self.stash_item(x)).collect();
        bits.extend(to_bits(&whole, self.bits as usize + 1));
        Ok(bits)
    }

    /// The evaluator's input bits: its cuckoo table, then its stash; and which element each
    /// output bit stands for.
    pub fn evaluator_input(
        &self,
        set: &[u64],
        walk_seed: u64,
    ) -> Result<(Vec<bool>, Vec<Option<u64>>), Error> {
        let (items, elements) = self.evaluator_table(set, walk_seed)?;
        let w = self.item_bits() as usize;
        let mut bits = to_bits(&items[..self.bins], w);
        bits.extend(to_bits(&items[self.bins..], self.bits as usize + 1));
        Ok((bits, elements))
    }
}

/// Values as `w`-bit little-endian bit strings, concatenated.
fn to_bits(values: &[u64], w: usize) -> Vec<bool> {
    values
        .iter()
        .flat_map(|&v| (0..w).map(move |k| (v >> k) & 1 == 1))
        .collect()
}

/// The circuit-Phasing circuit for `h`. Input value 0 (garbler): `bins × max_bin` items of
/// [`PhasingHashing::item_bits`] bits, then its `n` elements with a flag bit (`bits + 1`).
/// Input value 1 (evaluator): `bins` items, then `stash` elements with a flag bit. Output: one
/// bit per bin and stash slot, 1 where the evaluator's item is among the garbler's.
pub fn phasing_psi(h: &PhasingHashing) -> Result<Circuit, Error> {
    let w = h.item_bits() as usize;
    let sw = h.bits as usize + 1;
    let mut g = Builder::new();
    let garbler = g.input(checked_width(h.bins * h.max_bin * w + h.n * sw)?);
    let evaluator = g.input(checked_width(h.bins * w + h.stash * sw)?);
    let (table, whole) = garbler.split_at(h.bins * h.max_bin * w);
    let (cuckoo, stash) = evaluator.split_at(h.bins * w);
    let mut out = Vec::with_capacity(h.bins + h.stash);
    let any = |g: &mut Builder, bits: Vec<Bit>| {
        bits.into_iter()
            .reduce(|a, b| g.or(a, b))
            .unwrap_or(Bit::Const(false))
    };
    for (item, bin) in cuckoo.chunks(w).zip(table.chunks(h.max_bin * w)) {
        let hits: Vec<Bit> = bin.chunks(w).map(|x| g.eq(item, x)).collect();
        out.push(any(&mut g, hits));
    }
    for item in stash.chunks(sw) {
        let hits: Vec<Bit> = whole.chunks(sw).map(|x| g.eq(item, x)).collect();
        out.push(any(&mut g, hits));
    }
    g.finish(&[out])
}

/// The function [`phasing_psi`] computes, on its input bits.
pub fn phasing_psi_plain(h: &PhasingHashing, garbler: &[bool], evaluator: &[bool]) -> Vec<bool> {
    let w = h.item_bits() as usize;
    let sw = h.bits as usize + 1;
    let (table, whole) = garbler.split_at(h.bins * h.max_bin * w);
    let (cuckoo, stash) = evaluator.split_at(h.bins * w);
    let bins = cuckoo
        .chunks(w)
        .zip(table.chunks(h.max_bin * w))
        .map(|(item, bin)| bin.chunks(w).any(|x| x == item));
    let stashed = stash
        .chunks(sw)
        .map(|item| whole.chunks(sw).any(|x| x == item));
    bins.chain(stashed).collect()
}
