//! The setup's cores: per sharing the exchange that completes [`Prepared`] from
//! the Boolean triples (B: the input masks; β: the masks of every wire and the Beaver products
//! of the AND gates' masks).

use super::bits::{self, words};
use super::{BoolCircuit, BoolSharing, Incoming, MASKS, PRODUCTS, Packed, Prepared, read_bits};
use crate::Error;
use tessera_circuit::GateKind;
use tessera_core::Prg;
use tessera_net::Kind;
use tessera_net::role::{Next, Outbox, Role};
use tessera_ot::triples::BoolTriples;

impl BoolCircuit {
    /// Words of the per-AND vectors, all layer segments.
    pub(crate) fn and_words(&self) -> usize {
        self.segments[self.layered.depth()]
    }

    /// Bits of all AND gates in layer order, `simd` per gate, laid out in the layer segments.
    pub(crate) fn segment_bits(&self, flat: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; self.and_words()];
        for l in 1..=self.layered.depth() {
            let n = self.layered.ands(l).len() * self.simd;
            let at = self.layered.ands_before(l) * self.simd;
            bits::get(
                flat,
                at,
                n,
                &mut out[self.segments[l - 1]..self.segments[l]],
            );
        }
        out
    }

    /// β: every wire's mask share, from the input wires' in `delta` (`words(simd)` words per
    /// wire), gate by gate in layer order, fresh random at AND outputs. Returns the AND gates'
    /// input masks δx and δy and their fresh output masks δz, segmented.
    pub(crate) fn propagate_masks(&self, delta: &mut [u64], prg: &mut Prg) -> [Vec<u64>; 3] {
        let (s, w) = (self.simd, words(self.simd));
        let total = self.and_words();
        let mut and = [vec![0u64; total], vec![0u64; total], vec![0u64; total]];
        let mut fresh = vec![0u64; w];
        for d in 0..=self.layered.depth() {
            if d > 0 {
                let seg = self.segments[d - 1]..self.segments[d];
                for (i, g) in self.layered.ands(d).iter().enumerate() {
                    let (a, b, o) = (g.a as usize * w, g.b as usize * w, g.out as usize * w);
                    bits::put(&mut and[0][seg.clone()], i * s, &delta[a..a + w], s);
                    bits::put(&mut and[1][seg.clone()], i * s, &delta[b..b + w], s);
                    bits::random(prg, s, &mut fresh);
                    bits::put(&mut and[2][seg.clone()], i * s, &fresh, s);
                    delta[o..o + w].copy_from_slice(&fresh);
                }
            }
            free_gates(self.layered.free(d), delta, w, false);
        }
        and
    }
}

/// The setup's exchange, for either sharing.
pub(super) struct SetupRole<'c> {
    c: &'c BoolCircuit,
    side: usize,
    prepared: Option<Prepared>,
    /// The triples, segmented (β keeps them for the Beaver step).
    triples: [Vec<u64>; 3],
    /// β: this party's shares of the AND outputs' masks δz, segmented.
    dz: Vec<u64>,
    /// What this party posts: B its input masks; β its Beaver openings.
    post: Vec<u64>,
}

impl<'c> SetupRole<'c> {
    pub(super) fn new(
        c: &'c BoolCircuit,
        side: usize,
        fingerprint: [u8; 32],
        t: &BoolTriples,
        mut prg: Prg,
    ) -> Self {
        let flat = |v: &[tessera_core::Block]| -> Vec<u64> {
            v.iter().flat_map(|b| [b.low(), b.high()]).collect()
        };
        let triples = [&t.a, &t.b, &t.c].map(|v| c.segment_bits(&flat(v)));
        let w = words(c.simd);
        let mut prepared = Prepared {
            fingerprint,
            side,
            and: Default::default(),
            inputs: vec![0; c.circuit.num_input_wires() as usize * w],
            outputs: Vec::new(),
        };
        let mut role = SetupRole {
            c,
            side,
            prepared: None,
            triples,
            dz: Vec::new(),
            post: Vec::new(),
        };
        // Both sharings: random masks on this party's own inputs.
        let own = c.input_wires(side);
        for &wire in &own {
            bits::random(
                &mut prg,
                c.simd,
                &mut prepared.inputs[wire * w..(wire + 1) * w],
            );
        }
        match c.sharing {
            BoolSharing::Gmw => {
                prepared.and = std::mem::take(&mut role.triples);
                role.post = vec![0u64; words(own.len() * c.simd)];
                for (i, &wire) in own.iter().enumerate() {
                    let mask = &prepared.inputs[wire * w..(wire + 1) * w];
                    bits::put(&mut role.post, i * c.simd, mask, c.simd);
                }
            }
            BoolSharing::Aby2 => role.masks(&mut prepared, &mut prg),
        }
        role.prepared = Some(prepared);
        role
    }

    /// β: every wire's mask share; the AND gates' mask shares into `prepared.and[0..2]`, fresh
    /// δz into `dz`, the output wires' into `outputs`, and the Beaver openings of δx ∧ δy into
    /// `post`.
    fn masks(&mut self, prepared: &mut Prepared, prg: &mut Prg) {
        let c = self.c;
        let w = words(c.simd);
        let mut delta = vec![0u64; c.circuit.num_wires as usize * w];
        delta[..prepared.inputs.len()].copy_from_slice(&prepared.inputs);
        let [x, y, dz] = c.propagate_masks(&mut delta, prg);
        let and = [x, y, Vec::new()];
        self.dz = dz;
        let out_start = c.circuit.output_start() as usize * w;
        prepared.outputs = delta[out_start..].to_vec();
        // Beaver: open δx ⊕ a and δy ⊕ b.
        self.post = and[0]
            .iter()
            .zip(&self.triples[0])
            .map(|(x, a)| x ^ a)
            .chain(and[1].iter().zip(&self.triples[1]).map(|(y, b)| y ^ b))
            .collect();
        prepared.and = and;
    }

    /// Bits of the message each party posts: B the peer's input masks; β both openings.
    fn message_bits(&self, side: usize) -> usize {
        match self.c.sharing {
            BoolSharing::Gmw => self.c.input_wires(side).len() * self.c.simd,
            BoolSharing::Aby2 => 128 * self.c.segments[self.c.layered.depth()],
        }
    }

    fn kind(&self) -> Kind {
        match self.c.sharing {
            BoolSharing::Gmw => MASKS,
            BoolSharing::Aby2 => PRODUCTS,
        }
    }
}

/// Runs free gates on wire values of `w` words each. `constants`: whether this party applies
/// INV and constants (B: party 0; β's public values: both; β's masks: neither, as INV keeps a
/// mask and a constant's mask is zero).
pub(super) fn free_gates(
    gates: &[tessera_circuit::Gate],
    v: &mut [u64],
    w: usize,
    constants: bool,
) {
    let flip = if constants { !0 } else { 0 };
    for g in gates {
        let (a, b, o) = (g.a as usize * w, g.b as usize * w, g.out as usize * w);
        match g.kind {
            GateKind::Xor => (0..w).for_each(|i| v[o + i] = v[a + i] ^ v[b + i]),
            GateKind::Inv => (0..w).for_each(|i| v[o + i] = v[a + i] ^ flip),
            GateKind::Eqw => (0..w).for_each(|i| v[o + i] = v[a + i]),
            GateKind::Eq => v[o..o + w].fill(flip & 0u64.wrapping_sub(u64::from(g.a))),
            // Free segments hold no AND gates (`Layered`).
            GateKind::And => {}
        }
    }
}

impl Role for SetupRole<'_> {
    type Incoming<'a> = Incoming<'a>;
    type Output = Prepared;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<Incoming<'_>>,
        out: &mut O,
    ) -> Result<Next<Prepared>, Error> {
        let kind = self.kind();
        let peer_bits = self.message_bits(1 - self.side);
        let Some(msg) = incoming else {
            let bits = self.message_bits(self.side);
            match self.c.sharing {
                BoolSharing::Gmw => out.post(&Packed::<{ MASKS.id }> {
                    bits,
                    words: &self.post,
                })?,
                BoolSharing::Aby2 => out.post(&Packed::<{ PRODUCTS.id }> {
                    bits,
                    words: &self.post,
                })?,
            }
            out.flush()?;
            return Ok(Next::exact(kind, super::bytes_of(peer_bits)));
        };
        let mut theirs = vec![0u64; words(peer_bits)];
        read_bits(1 - self.side, kind, msg.bytes, peer_bits, &mut theirs)?;
        let Some(mut prepared) = self.prepared.take() else {
            return Err(Error::Input("the setup has already finished".into()));
        };
        let (c, w) = (self.c, words(self.c.simd));
        match c.sharing {
            BoolSharing::Gmw => {
                for (i, wire) in c.input_wires(1 - self.side).into_iter().enumerate() {
                    bits::get(
                        &theirs,
                        i * c.simd,
                        c.simd,
                        &mut prepared.inputs[wire * w..(wire + 1) * w],
                    );
                }
            }
            BoolSharing::Aby2 => {
                // δxy = c ⊕ d·b ⊕ e·a (⊕ d·e on side 0); the online phase needs δxy ⊕ δz.
                let total = self.dz.len();
                let [ta, tb, tc] = &self.triples;
                let first = if self.side == 0 { !0 } else { 0 };
                prepared.and[2] = (0..total)
                    .map(|i| {
                        let d = self.post[i] ^ theirs[i];
                        let e = self.post[total + i] ^ theirs[total + i];
                        tc[i] ^ (d & tb[i]) ^ (e & ta[i]) ^ (first & d & e) ^ self.dz[i]
                    })
                    .collect();
            }
        }
        Ok(Next::Done(prepared))
    }
}
