//! The online work of one AND layer, without I/O: the opening this party sends and, with the
//! peer's, the layer's output values (module documentation of [`super`]). Used by a whole
//! circuit's online phase and by circuits inside hybrid programs.
//!
//! A layer of at least [`PARALLEL_WORDS`] words (AND gates × SIMD copies / 64) gathers its
//! inputs and computes its openings and outputs in chunks on the party's own rayon pool, when it
//! runs on one of more than one thread ([`tessera_ot::spread`]); writing the outputs back to
//! their wires stays serial.

use super::bits::{self, words};
use super::setup::free_gates;
use super::{BoolCircuit, BoolSharing};
use rayon::prelude::*;
use tessera_circuit::Gate;

/// The layer width, in words, from which the local work is split across threads.
pub const PARALLEL_WORDS: usize = 1 << 12;

/// Gates per parallel chunk of a layer of `s` copies per gate: a multiple of 64 bits, so
/// chunks own whole words.
fn chunk_gates(s: usize, words: usize) -> usize {
    let unit = 64 / gcd(s, 64);
    let threads = rayon::current_num_threads().max(1);
    let per = (words * 64 / s).div_ceil(4 * threads);
    per.div_ceil(unit).max(1) * unit
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Whether a layer of `n` words runs on several threads.
fn parallel(n: usize) -> bool {
    tessera_ot::spread::spreads(n, PARALLEL_WORDS)
}

/// Packs the gates' inputs a and b, `s` copies each, into `x` and `y` (zeroed first).
fn gather(gates: &[Gate], v: &[u64], s: usize, x: &mut [u64], y: &mut [u64]) {
    let w = words(s);
    x.fill(0);
    y.fill(0);
    for (i, g) in gates.iter().enumerate() {
        let (a, b) = (g.a as usize * w, g.b as usize * w);
        bits::put(x, i * s, &v[a..a + w], s);
        bits::put(y, i * s, &v[b..b + w], s);
    }
}

/// Scratch for the layers of one circuit, sized for its widest layer.
#[derive(Debug)]
pub(crate) struct Layers {
    x: Vec<u64>,
    y: Vec<u64>,
    mine: Vec<u64>,
    theirs: Vec<u64>,
}

impl Layers {
    pub(crate) fn new(c: &BoolCircuit) -> Self {
        let widest = (1..=c.layered.depth())
            .map(|l| c.segments[l] - c.segments[l - 1])
            .max()
            .unwrap_or(0);
        Layers {
            x: vec![0; widest],
            y: vec![0; widest],
            mine: vec![0; 2 * widest],
            theirs: vec![0; 2 * widest],
        }
    }

    /// Runs the free gates of depth `d` on the wire values `v` (`words(simd)` words per wire).
    pub(crate) fn free(c: &BoolCircuit, side: usize, d: usize, v: &mut [u64]) {
        let constants = c.sharing == BoolSharing::Aby2 || side == 0;
        free_gates(c.layered.free(d), v, words(c.simd), constants);
    }

    /// Words each party opens for layer `l`: B d and e, β its share of Δz.
    pub(crate) fn opening_words(c: &BoolCircuit, l: usize) -> usize {
        let n = c.segments[l] - c.segments[l - 1];
        match c.sharing {
            BoolSharing::Gmw => 2 * n,
            BoolSharing::Aby2 => n,
        }
    }

    /// This party's opening of layer `l` from the wire values and the layer's setup `and`.
    pub(crate) fn open(
        &mut self,
        c: &BoolCircuit,
        side: usize,
        l: usize,
        v: &[u64],
        and: &[Vec<u64>; 3],
    ) -> &[u64] {
        let s = c.simd;
        let seg = c.segments[l - 1]..c.segments[l];
        let n = seg.len();
        let (x, y) = (&mut self.x[..n], &mut self.y[..n]);
        let [p, q, r] = and;
        let (p, q, r) = (&p[seg.clone()], &q[seg.clone()], &r[seg]);
        let gates = c.layered.ands(l);
        let first = if side == 0 { !0 } else { 0 };
        let sharing = c.sharing;
        let (d, e) = self.mine[..2 * n].split_at_mut(n);
        // One chunk: gather, then B's d = x ⊕ a and e = y ⊕ b, or β's share of
        // Δz = Δx·Δy ⊕ Δx·δy ⊕ Δy·δx ⊕ δxy ⊕ δz (into d).
        let work = |gates: &[Gate],
                    x: &mut [u64],
                    y: &mut [u64],
                    d: &mut [u64],
                    e: &mut [u64],
                    at: usize| {
            gather(gates, v, s, x, y);
            for i in 0..x.len() {
                let k = at + i;
                match sharing {
                    BoolSharing::Gmw => {
                        d[i] = x[i] ^ p[k];
                        e[i] = y[i] ^ q[k];
                    }
                    BoolSharing::Aby2 => {
                        d[i] = (first & x[i] & y[i]) ^ (x[i] & q[k]) ^ (y[i] & p[k]) ^ r[k];
                    }
                }
            }
        };
        if parallel(n) {
            let per = chunk_gates(s, n);
            let cw = per * s / 64;
            x.par_chunks_mut(cw)
                .zip(y.par_chunks_mut(cw))
                .zip(d.par_chunks_mut(cw).zip(e.par_chunks_mut(cw)))
                .zip(gates.par_chunks(per))
                .enumerate()
                .for_each(|(k, (((x, y), (d, e)), g))| work(g, x, y, d, e, k * cw));
        } else {
            work(gates, x, y, d, e, 0);
        }
        match sharing {
            BoolSharing::Gmw => &self.mine[..2 * n],
            BoolSharing::Aby2 => &self.mine[..n],
        }
    }

    /// Where the peer's opening of layer `l` goes.
    pub(crate) fn theirs(&mut self, c: &BoolCircuit, l: usize) -> &mut [u64] {
        &mut self.theirs[..Self::opening_words(c, l)]
    }

    /// Completes layer `l` with the peer's opening (in [`Layers::theirs`]): writes the AND
    /// gates' outputs into `v`.
    pub(crate) fn close(
        &mut self,
        c: &BoolCircuit,
        side: usize,
        l: usize,
        v: &mut [u64],
        and: &[Vec<u64>; 3],
    ) {
        let (s, w) = (c.simd, words(c.simd));
        let seg = c.segments[l - 1]..c.segments[l];
        let n = seg.len();
        let z = &mut self.x[..n];
        let (mine, theirs) = (&self.mine, &self.theirs);
        let first = if side == 0 { !0 } else { 0 };
        let [a, b, cc] = and;
        let (a, b, cc) = (&a[seg.clone()], &b[seg.clone()], &cc[seg]);
        let sharing = c.sharing;
        // B: z = c ⊕ d·b ⊕ e·a (⊕ d·e on side 0); β: Δz, both shares added.
        let word = |i: usize| match sharing {
            BoolSharing::Gmw => {
                let d = mine[i] ^ theirs[i];
                let e = mine[n + i] ^ theirs[n + i];
                cc[i] ^ (d & b[i]) ^ (e & a[i]) ^ (first & d & e)
            }
            BoolSharing::Aby2 => mine[i] ^ theirs[i],
        };
        if parallel(n) {
            z.par_iter_mut().enumerate().for_each(|(i, z)| *z = word(i));
        } else {
            z.iter_mut().enumerate().for_each(|(i, z)| *z = word(i));
        }
        for (i, g) in c.layered.ands(l).iter().enumerate() {
            let o = g.out as usize * w;
            bits::get(z, i * s, s, &mut v[o..o + w]);
        }
    }
}
