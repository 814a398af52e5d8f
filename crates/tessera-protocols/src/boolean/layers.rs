//! The online work of one AND layer, without I/O: the opening this party sends and, with the
//! peer's, the layer's output values (module documentation of [`super`]). Used by a whole
//! circuit's online phase and by circuits inside hybrid programs.

use super::bits::{self, words};
use super::setup::free_gates;
use super::{BoolCircuit, BoolSharing};

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
        let (s, w) = (c.simd, words(c.simd));
        let seg = c.segments[l - 1]..c.segments[l];
        let n = seg.len();
        let (x, y) = (&mut self.x[..n], &mut self.y[..n]);
        x.fill(0);
        y.fill(0);
        for (i, g) in c.layered.ands(l).iter().enumerate() {
            let (a, b) = (g.a as usize * w, g.b as usize * w);
            bits::put(x, i * s, &v[a..a + w], s);
            bits::put(y, i * s, &v[b..b + w], s);
        }
        let [p, q, r] = and;
        let (p, q, r) = (&p[seg.clone()], &q[seg.clone()], &r[seg]);
        match c.sharing {
            // d = x ⊕ a, e = y ⊕ b.
            BoolSharing::Gmw => {
                let (d, e) = self.mine[..2 * n].split_at_mut(n);
                for i in 0..n {
                    d[i] = x[i] ^ p[i];
                    e[i] = y[i] ^ q[i];
                }
            }
            // This party's share of Δz = Δx·Δy ⊕ Δx·δy ⊕ Δy·δx ⊕ δxy ⊕ δz.
            BoolSharing::Aby2 => {
                let first = if side == 0 { !0 } else { 0 };
                for i in 0..n {
                    self.mine[i] = (first & x[i] & y[i]) ^ (x[i] & q[i]) ^ (y[i] & p[i]) ^ r[i];
                }
            }
        }
        &self.mine[..Self::opening_words(c, l)]
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
        match c.sharing {
            // z = c ⊕ d·b ⊕ e·a (⊕ d·e on side 0).
            BoolSharing::Gmw => {
                let [a, b, cc] = and;
                let (a, b, cc) = (&a[seg.clone()], &b[seg.clone()], &cc[seg]);
                let first = if side == 0 { !0 } else { 0 };
                for i in 0..n {
                    let d = self.mine[i] ^ self.theirs[i];
                    let e = self.mine[n + i] ^ self.theirs[n + i];
                    z[i] = cc[i] ^ (d & b[i]) ^ (e & a[i]) ^ (first & d & e);
                }
            }
            BoolSharing::Aby2 => {
                for ((z, m), t) in z.iter_mut().zip(&self.mine).zip(&self.theirs) {
                    *z = m ^ t;
                }
            }
        }
        for (i, g) in c.layered.ands(l).iter().enumerate() {
            let o = g.out as usize * w;
            bits::get(z, i * s, s, &mut v[o..o + w]);
        }
    }
}
