//! The PRF-based garbling of Gueron, Lindell, Nof, Pinkas ("Fast garbling of circuits under
//! standard assumptions", CCS 2015), as VASA §4.3.1 batches it: secure if AES is a PRF, with
//! labels as AES keys and no global offset, so XOR gates are not free.
//!
//! Every wire has two independent labels; the least significant bit of a label is its colour,
//! and colour = value ⊕ π for the wire's secret permutation bit π. As an AES key a label is used
//! with its colour bit cleared (F_L below). For a gate g with input labels A_s, B_t indexed by
//! colour:
//!
//! * **AND** (two table blocks): K_st = F_{A_s}(g ‖ 2s+t) ⊕ F_{B_t}(g ‖ 2s+t), eight AES calls
//!   under four keys. With (s*, t*) the colours of the 1-labels, T1 = K_{¬s*,0} ⊕ K_{¬s*,1} and
//!   T2 = K_{0,¬t*} ⊕ K_{1,¬t*} make R_st = K_st ⊕ t·T1 ⊕ s·T2 equal on the three rows whose
//!   output is 0; R on the fourth row is the 1-label. The output permutation bit is fresh
//!   randomness, and the output colour of each row travels, masked by a bit of R, in the two low
//!   bits of T1 and T2 (so AND output labels have 126 key bits). The evaluator computes one
//!   K_st: two AES calls under two keys.
//! * **XOR** (one table block): X_s = F_{A_s}(g ‖ s) and Δ = X_0 ⊕ X_1 become the output's
//!   offset; the second input is translated to it with T = F_{B_1}(g ‖ 2) ⊕ B_0 ⊕ Δ, three AES
//!   calls under three keys. The evaluator computes X_s and F_{B_t}(g ‖ 2) for the label B_t it
//!   holds, and keeps the latter only if t = 1: two AES calls under two keys, whatever its
//!   colours (computing F_{B_1} only when holding B_1, as the paper counts it, would let a timing
//!   observer learn the colour, and with the garbler's permutation bits the value).
//!
//! All selection on the garbler's secret bits and on the evaluator's colours is by masks.

use super::coins::GateCoins;
use super::multi_key::{MultiKeyBatch, tweak};
use super::{GateCost, Offset, Scheme, SchemeCost, wires};
use crate::plan::XorGates;
use tessera_core::hazmat::{Labels, SlotGates};
use tessera_core::{Aes, Backend, Block, Prg};

/// Clears a label's colour bit: the label as an AES key.
const KEY: Block = Block::new(!1);
/// Clears the two low bits that carry AND gates' output colours.
const LOW2: Block = Block::new(!3);

/// `x` where `m` is all ones, `y` where it is zero.
#[inline(always)]
fn select(m: Block, x: Block, y: Block) -> Block {
    y ^ (m & (x ^ y))
}

/// The garbler's labels of one wire: `0[v]` encodes value v. Their colours differ; the colour
/// of `0[0]` is the wire's permutation bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrfWire(pub [Block; 2]);

impl PrfWire {
    /// The permutation bit π (colour of the 0-label).
    fn pi(self) -> bool {
        self.0[0].lsb()
    }

    /// The labels indexed by colour instead of value (a swap when π = 1, by masking).
    fn by_colour(self) -> [Block; 2] {
        let d = Block::mask(self.pi()) & (self.0[0] ^ self.0[1]);
        [self.0[0] ^ d, self.0[1] ^ d]
    }

    /// The wire whose colour-indexed labels are `c` and whose permutation bit is `pi`.
    fn from_colour(c: [Block; 2], pi: bool) -> Self {
        let d = Block::mask(pi) & (c[0] ^ c[1]);
        PrfWire([c[0] ^ d, c[1] ^ d])
    }
}

/// The garbler's secret: the key of the output permutation bits (a PRF of the gate index)
/// and the hidden labels of the constants 0 and 1.
#[derive(Clone, Debug)]
pub struct PrfSecret {
    bits: GateCoins,
    hidden: [Block; 2],
}

impl PrfSecret {
    /// A secret with its key drawn from `prg`.
    pub fn new(prg: &mut Prg) -> Self {
        let bits = GateCoins::new(prg);
        let hidden = [0, 1].map(|v| bits.block(v).with_lsb(true));
        PrfSecret { bits, hidden }
    }
}

/// The PRF-based scheme; see the module documentation.
#[derive(Clone, Debug)]
pub struct Prf {
    batch: MultiKeyBatch,
    coins: Vec<Block>,
}

impl Prf {
    /// The scheme on `aes`'s backend.
    pub fn new(aes: Aes) -> Self {
        Prf {
            batch: MultiKeyBatch::new(aes),
            coins: Vec::new(),
        }
    }
}

impl Scheme for Prf {
    const NAME: &'static str = "prf";
    const CODE: u8 = 4;
    const SUMMARY: &'static str =
        "PRF-based garbling, no free XOR, secure if AES is a PRF (Gueron, Lindell, Nof, Pinkas)";
    const XOR_GATES: XorGates = XorGates::Garbled;
    const COST: SchemeCost = SchemeCost {
        and_garble: GateCost::new(8.0, 4.0),
        and_eval: GateCost::new(2.0, 2.0),
        xor_garble: GateCost::new(3.0, 3.0),
        xor_eval: GateCost::new(2.0, 2.0),
    };
    const TABLE_GRAIN: usize = 1;
    type Wire = PrfWire;
    type Secret = PrfSecret;

    fn with_backend(backend: Backend, _session: Block) -> Result<Self, tessera_core::Error> {
        Ok(Prf::new(Aes::with_backend(backend)?))
    }

    fn random_secret(prg: &mut Prg) -> PrfSecret {
        PrfSecret::new(prg)
    }

    /// Labels are independent: no global offset.
    fn with_offset(_delta: Block, _prg: &mut Prg) -> Option<Offset<Self>> {
        None
    }

    fn random_wire(_secret: &PrfSecret, prg: &mut Prg) -> PrfWire {
        let l0 = prg.random_block();
        PrfWire([l0, prg.random_block().with_lsb(!l0.lsb())])
    }

    fn encode(_secret: &PrfSecret, w: &PrfWire, bit: bool) -> Block {
        select(Block::mask(bit), w.0[1], w.0[0])
    }

    fn decoding_bit(w: &PrfWire) -> bool {
        w.pi()
    }

    /// Not a garbling: this scheme has no free XOR, and its plans ([`XorGates::Garbled`])
    /// contain no free XOR step, so the engine never calls this. It XORs the label pairs.
    fn free_xor(a: PrfWire, b: PrfWire) -> PrfWire {
        PrfWire([a.0[0] ^ b.0[0], a.0[1] ^ b.0[1]])
    }

    fn not(_secret: &PrfSecret, a: PrfWire) -> PrfWire {
        PrfWire([a.0[1], a.0[0]])
    }

    fn constant(secret: &PrfSecret, value: bool) -> PrfWire {
        // The evaluator holds the zero block (colour 0); the other label is secret, so gates
        // reading the constant reveal nothing about their other labels. Each constant has one
        // hidden label, as one wire read by every gate that reads the constant.
        let hidden = secret.hidden[usize::from(value)];
        if value {
            PrfWire([hidden, Block::ZERO])
        } else {
            PrfWire([Block::ZERO, hidden])
        }
    }

    fn and_table_blocks(gates: usize) -> usize {
        2 * gates
    }

    fn xor_table_blocks(gates: usize) -> usize {
        gates
    }

    fn garble_and(
        &mut self,
        secret: &PrfSecret,
        labels: Labels<'_, PrfWire>,
        gates: SlotGates<'_>,
        table: &mut [Block],
    ) {
        let (ids, domain) = (gates.ids, gates.domain);
        secret.bits.fill(gates.domain, ids, &mut self.coins);
        let (read, mut write) = labels.split(gates.out);
        let inputs = wires(read, gates);
        let f = self
            .batch
            .run(inputs.clone().zip(ids), 4, 2, |((a, b), &id), k, blk| {
                let (ka, kb) = (a.by_colour(), b.by_colour());
                k.copy_from_slice(&[ka[0] & KEY, ka[1] & KEY, kb[0] & KEY, kb[1] & KEY]);
                // A_s encrypts rows 2s and 2s + 1; B_t rows t and 2 + t.
                for (x, row) in blk.iter_mut().zip([0, 1, 2, 3, 0, 2, 1, 3]) {
                    *x = tweak(domain, id, row);
                }
            });
        let per_gate = inputs.zip(f.chunks_exact(8)).zip(&self.coins);
        for (g, ((((a, b), f), coins), t)) in per_gate.zip(table.chunks_exact_mut(2)).enumerate() {
            let pc = coins.lsb();
            let k = [f[0] ^ f[4], f[1] ^ f[6], f[2] ^ f[5], f[3] ^ f[7]];
            let (pa, pb) = (a.pi(), b.pi());
            let (ma, mb) = (Block::mask(pa), Block::mask(pb));
            // The colours of the 1-labels are ¬pa, ¬pb: T1 pairs the rows with s = pa, T2
            // those with t = pb.
            let t1 = select(ma, k[2] ^ k[3], k[0] ^ k[1]) & LOW2;
            let t2 = select(mb, k[1] ^ k[3], k[0] ^ k[2]) & LOW2;
            let r = [k[0], k[1] ^ t1, k[2] ^ t2, k[3] ^ t1 ^ t2];
            let row =
                |ms: Block, mt: Block| select(ms, select(mt, r[3], r[2]), select(mt, r[1], r[0]));
            let c0 = row(ma, mb);
            let c1 = row(!ma, !mb);
            write.put(
                g,
                PrfWire([(c0 & LOW2).with_lsb(pc), (c1 & LOW2).with_lsb(!pc)]),
            );
            // Row (s, t) outputs v = (s ⊕ pa)(t ⊕ pb), colour v ⊕ pc; its bit is masked by the
            // colour bit of R_st (which is that of K_st).
            let colour = |s: bool, t: bool| {
                let v = (s ^ pa) & (t ^ pb);
                u128::from(k[2 * usize::from(s) + usize::from(t)].lsb() ^ v ^ pc)
            };
            t[0] = t1 | Block::new(colour(false, false) | colour(false, true) << 1);
            t[1] = t2 | Block::new(colour(true, false) | colour(true, true) << 1);
        }
    }

    fn evaluate_and(&mut self, labels: Labels<'_, Block>, gates: SlotGates<'_>, table: &[Block]) {
        let (ids, domain) = (gates.ids, gates.domain);
        let (read, mut write) = labels.split(gates.out);
        let inputs = wires(read, gates);
        let f = self
            .batch
            .run(inputs.clone().zip(ids), 2, 1, |((a, b), &id), k, blk| {
                k.copy_from_slice(&[a & KEY, b & KEY]);
                let row = tweak(domain, id, 2 * u64::from(a.lsb()) + u64::from(b.lsb()));
                blk.copy_from_slice(&[row, row]);
            });
        let per_gate = inputs.zip(f.chunks_exact(2));
        for (g, (((a, b), f), t)) in per_gate.zip(table.chunks_exact(2)).enumerate() {
            let (s, tt) = (a.lsb(), b.lsb());
            let r = f[0] ^ f[1] ^ (Block::mask(tt) & t[0] & LOW2) ^ (Block::mask(s) & t[1] & LOW2);
            let colours = (t[0].low() & 3) | (t[1].low() & 3) << 2;
            let bit = (colours >> (2 * u32::from(s) + u32::from(tt))) & 1 == 1;
            write.put(g, (r & LOW2).with_lsb(r.lsb() ^ bit));
        }
    }

    fn garble_xor(
        &mut self,
        _secret: &PrfSecret,
        labels: Labels<'_, PrfWire>,
        gates: SlotGates<'_>,
        table: &mut [Block],
    ) {
        let (ids, domain) = (gates.ids, gates.domain);
        let (read, mut write) = labels.split(gates.out);
        let inputs = wires(read, gates);
        let f = self
            .batch
            .run(inputs.clone().zip(ids), 3, 1, |((a, b), &id), k, blk| {
                let (ka, kb) = (a.by_colour(), b.by_colour());
                k.copy_from_slice(&[ka[0] & KEY, ka[1] & KEY, kb[1] & KEY]);
                blk.copy_from_slice(&[
                    tweak(domain, id, 0),
                    tweak(domain, id, 1),
                    tweak(domain, id, 2),
                ]);
            });
        let per_gate = inputs.zip(f.chunks_exact(3));
        for (g, (((a, b), f), t)) in per_gate.zip(table.iter_mut()).enumerate() {
            let b0 = b.by_colour()[0] & KEY;
            let delta = f[0] ^ f[1];
            *t = f[2] ^ b0 ^ delta;
            let base = f[0] ^ b0;
            let colour = [base.with_lsb(false), (base ^ delta).with_lsb(true)];
            write.put(g, PrfWire::from_colour(colour, a.pi() ^ b.pi()));
        }
    }

    fn evaluate_xor(&mut self, labels: Labels<'_, Block>, gates: SlotGates<'_>, table: &[Block]) {
        // Both AES calls for every gate: the count does not depend on the colours.
        let (ids, domain) = (gates.ids, gates.domain);
        let (read, mut write) = labels.split(gates.out);
        let inputs = wires(read, gates);
        let f = self
            .batch
            .run(inputs.clone().zip(ids), 2, 1, |((a, b), &id), k, blk| {
                k.copy_from_slice(&[a & KEY, b & KEY]);
                blk.copy_from_slice(&[tweak(domain, id, u64::from(a.lsb())), tweak(domain, id, 2)]);
            });
        let per_gate = inputs.zip(f.chunks_exact(2));
        for (g, (((a, b), f), &t)) in per_gate.zip(table).enumerate() {
            let m = Block::mask(b.lsb());
            let r = f[0] ^ select(m, t ^ f[1], b & KEY);
            write.put(g, r.with_lsb(a.lsb() ^ b.lsb()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The evaluator's AES work on XOR gates does not depend on its labels' colours: a timing
    /// observer who knows the permutation bits (the garbler) would learn the values otherwise.
    #[test]
    fn xor_evaluation_work_does_not_depend_on_colours() {
        let n = 64;
        let ids: Vec<u32> = (0..n as u32).collect();
        let table = vec![Block::new(7); n];
        let mut work = Vec::new();
        for colours in [0u128, 1] {
            let mut prf = Prf::new(Aes::with_backend(Backend::Portable).unwrap());
            let labels: Vec<Block> = (0..2 * n as u128)
                .map(|k| Block::new(k << 8 | colours))
                .collect();
            let (a, b): (Vec<u32>, Vec<u32>) = (0..n as u32).map(|k| (k, n as u32 + k)).unzip();
            let out_slots: Vec<u32> = (0..n as u32).collect();
            let gates = SlotGates {
                a: &a,
                b: &b,
                out: &out_slots,
                ids: &ids,
                domain: 0,
            };
            let mut out = vec![Block::ZERO; n];
            let labels = Labels::Buffered {
                slots: &labels,
                out: &mut out,
            };
            prf.evaluate_xor(labels, gates, &table);
            work.push(prf.batch.encrypted());
        }
        assert_eq!(work[0], work[1], "AES blocks for colours 0 and 1");
        assert_eq!(work[0], 2 * n as u64);
    }
}
