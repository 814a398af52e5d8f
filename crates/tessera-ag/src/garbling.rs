//! The circuit walks of two-party authenticated garbling (KRRW18 §3), on the garbling engine's
//! compiled plans: the same segments, batches and label slots as semi-honest garbling, and the
//! same fused half-gates kernels, with the authenticated parts added around each batch.
//!
//! Every wire w has a mask λ_w = a_w ⊕ b_w, authenticated and shared (a: the garbler's, b: the
//! evaluator's), fresh for input wires and AND outputs and XORed through free gates. The
//! evaluator learns the masked value ẑ_w = z_w ⊕ λ_w and the label L_{w,0} ⊕ ẑ_w·Δ_A. For
//! an AND gate (α, β, γ) the garbler sends, with Λ_w = λ_w·Δ_A shared as (a_w·Δ_A ⊕ K_A\[b_w\],
//! M_B\[b_w\]):
//!
//! G_0 = H(L_{α,0}) ⊕ H(L_{α,1}) ⊕ Λ_β,  G_1 = H(L_{β,0}) ⊕ H(L_{β,1}) ⊕ L_{α,0} ⊕ Λ_α,
//! L_{γ,0} = H(L_{α,0}) ⊕ H(L_{β,0}) ⊕ Λ_γ ⊕ Λ_{αβ},
//!
//! each Λ the garbler's share, and the evaluator adds its shares M_B\[·\] where the formula has Λ.
//! Tessera keeps every zero label's low bit 0, so the evaluator's selection bits are its
//! labels' low bits and the semi-honest kernels run unchanged: the garbler sends the low bit
//! f_γ of each AND output's zero label and flips the label by f_γ·Δ_A, which flips the mask
//! the label stands for; the flips XOR through free gates beside the labels (the constant-1
//! wire carries flip 1), and masks stay as drawn, so the AND products drawn for them stay
//! valid once corrected for the flips.

use crate::combine::Combination;
use crate::share::{Keyring, Shares};
use crate::triples::Triples;
use tessera_core::hazmat::{GateHash, Labels};
use tessera_core::{Block, FixedKeyHash, Prg};
use tessera_garble::{ONE_SLOT, Plan};
use tessera_net::role;

/// The high 64 bits of the authenticated gates' hash tweaks, the base of every program's
/// domain: program i of a run garbles in [`domain`]`(i)`, so that no two gates of a run (a
/// chain's steps, a file's windows, whose carried wires a later program reads again) share a
/// tweak.
pub const DOMAIN: u64 = 0xa6 << 48;

/// The tweak domain of a run's program `i` (below 2^48).
pub fn domain(i: u64) -> u64 {
    DOMAIN | (i & ((1 << 48) - 1))
}

/// The gate hash: π(2x ⊕ j) ⊕ 2x over the fixed-key permutation (VASA §4.3.1 "PRP").
const HASH: GateHash = GateHash::Prp;

/// Per-slot state of one party, one slot array per part, walked by the plan's free steps.
#[derive(Clone, Debug)]
pub struct Slots {
    /// Labels: the garbler's zero labels, the evaluator's active labels.
    pub label: Vec<Block>,
    /// This party's shares of the masks: MACs (low bit = the share) and keys for the peer's.
    pub mac: Vec<Block>,
    /// Keys.
    pub key: Vec<Block>,
    /// Label flips, 0 or 1 in the low bit.
    pub flip: Vec<Block>,
}

impl Slots {
    /// Slots for `plan` with the masks of its input wires (the first of `masks`) loaded.
    pub fn new(plan: &Plan, masks: &Shares) -> Slots {
        let n = plan.slots();
        let mut s = Slots {
            label: vec![Block::ZERO; n],
            mac: vec![Block::ZERO; n],
            key: vec![Block::ZERO; n],
            flip: vec![Block::ZERO; n],
        };
        s.flip[ONE_SLOT as usize] = Block::new(1);
        for (i, slot) in plan.input_slots().enumerate() {
            (s.mac[slot], s.key[slot]) = masks.get(i);
        }
        s
    }

    /// Puts `labels` and `flips` on the input wires, in order.
    pub fn load_inputs<'a>(
        &mut self,
        plan: &Plan,
        labels: impl Iterator<Item = &'a Block>,
        flips: impl Iterator<Item = &'a bool>,
    ) {
        for ((slot, &label), &flip) in plan.input_slots().zip(labels).zip(flips) {
            self.label[slot] = label;
            self.flip[slot] = Block::new(u128::from(flip));
        }
    }

    /// Runs segment `k`'s free steps on every part.
    pub fn free(&mut self, plan: &Plan, k: usize) {
        for part in [
            &mut self.label,
            &mut self.mac,
            &mut self.key,
            &mut self.flip,
        ] {
            plan.run_free(k, part);
        }
    }

    /// Slot `s`'s flip.
    fn flipped(&self, s: u32) -> bool {
        self.flip[s as usize].lsb()
    }
}

/// Beaver's differences to open, e = λ_α ⊕ x then f = λ_β ⊕ y, per AND gate in plan order:
/// the masks of the gate's inputs (walked through the free gates from `masks`, the input wires'
/// then the AND outputs') and the triple's `t`.
pub fn beaver_differences(plan: &Plan, masks: &Shares, t: &Triples) -> Shares {
    let inputs = plan.input_slots().len();
    let (mut mac, mut key) = (
        vec![Block::ZERO; plan.slots()],
        vec![Block::ZERO; plan.slots()],
    );
    for (i, slot) in plan.input_slots().enumerate() {
        (mac[slot], key[slot]) = masks.get(i);
    }
    let ands = t.len();
    let mut d = Shares::zeroed(2 * ands);
    let mut g = 0;
    for k in 0..plan.segments() {
        plan.run_free(k, &mut mac);
        plan.run_free(k, &mut key);
        let gates = plan.batch(k, DOMAIN);
        for i in 0..gates.out.len() {
            let (a, b, out) = (
                gates.a[i] as usize,
                gates.b[i] as usize,
                gates.out[i] as usize,
            );
            let ((xm, xk), (ym, yk)) = (t.x.get(g), t.y.get(g));
            d.set(g, (mac[a] ^ xm, key[a] ^ xk));
            d.set(ands + g, (mac[b] ^ ym, key[b] ^ yk));
            (mac[out], key[out]) = masks.get(inputs + g);
            g += 1;
        }
    }
    d
}

/// \[λ_α λ_β\] = \[z\] ⊕ e·\[y\] ⊕ f·\[x\] ⊕ e·f from the opened differences (`e_f`: e then f).
pub fn products(ring: Keyring, t: &Triples, e_f: &[bool]) -> Shares {
    let n = t.len();
    let mut p = Shares::default();
    for k in 0..n {
        let (e, f) = (e_f[k], e_f[n + k]);
        let (em, fm) = (Block::mask(e), Block::mask(f));
        let ((zm, zk), (ym, yk), (xm, xk)) = (t.z.get(k), t.y.get(k), t.x.get(k));
        p.push((zm ^ (ym & em) ^ (xm & fm), zk ^ (yk & em) ^ (xk & fm)));
        p.add_public(ring, k, e & f);
    }
    p
}

/// The garbler's share of Λ_w = λ_w·Δ for a mask share (MAC, key), with flip `f`:
/// (a_w ⊕ f)·Δ ⊕ K\[b_w\].
fn garbler_lambda((mac, key): (Block, Block), f: bool, delta: Block) -> Block {
    (delta & Block::mask(mac.lsb() ^ f)) ^ key
}

/// What the garbler sends for a circuit and keeps for the checks.
#[derive(Clone, Debug, Default)]
pub struct Garbled {
    /// G_0, G_1 per AND gate.
    pub tables: Vec<Block>,
    /// f_γ per AND gate.
    pub flips: Vec<bool>,
    /// The zero label of each AND output, after its flip.
    pub and_labels: Vec<Block>,
}

/// The garbler's walk: garbles every AND gate of `plan` into `out`, given the masks of the input
/// wires and AND outputs (`masks`) and the AND products of their masks (`products`), with
/// `slots` holding the input wires' zero labels. Leaves every wire's zero label, mask and
/// flip in `slots`.
pub fn garble(
    plan: &Plan,
    (masks, products): (&Shares, &Shares),
    (delta, domain): (Block, u64),
    slots: &mut Slots,
    out: &mut Garbled,
) {
    let hash = FixedKeyHash::default();
    let inputs = plan.input_slots().len();
    let mut g = 0;
    for k in 0..plan.segments() {
        slots.free(plan, k);
        let gates = plan.batch(k, domain);
        let n = gates.out.len();
        if n == 0 {
            continue;
        }
        let at = out.tables.len();
        out.tables.resize(at + 2 * n, Block::ZERO);
        let table = &mut out.tables[at..];
        hash.half_gates_garble(
            HASH,
            delta,
            Labels::in_place(&mut slots.label),
            gates,
            table,
        );
        for i in 0..n {
            let (a, b, c) = (gates.a[i], gates.b[i], gates.out[i] as usize);
            let (fa, fb) = (slots.flipped(a), slots.flipped(b));
            let la = garbler_lambda((slots.mac[a as usize], slots.key[a as usize]), fa, delta);
            let lb = garbler_lambda((slots.mac[b as usize], slots.key[b as usize]), fb, delta);
            table[2 * i] ^= lb;
            table[2 * i + 1] ^= la;
            // Λ_{α'β'} = Λ_{αβ} ⊕ f_α·Λ'_β ⊕ f_β·Λ'_α ⊕ f_α·f_β·Δ, for the flipped masks.
            let lab = garbler_lambda(products.get(g), false, delta)
                ^ (lb & Block::mask(fa))
                ^ (la & Block::mask(fb))
                ^ (delta & Block::mask(fa & fb));
            let mask = masks.get(inputs + g);
            let zero = slots.label[c] ^ garbler_lambda(mask, false, delta) ^ lab;
            let f = zero.lsb();
            slots.label[c] = zero ^ (delta & Block::mask(f));
            slots.flip[c] = Block::new(u128::from(f));
            (slots.mac[c], slots.key[c]) = mask;
            out.flips.push(f);
            out.and_labels.push(slots.label[c]);
            g += 1;
        }
    }
}

/// What the evaluator learns from evaluating: the true masked value of each AND output, the
/// digest of their labels, and the digest of the MACs it expects from the garbler's
/// consistency check. Both digests are random linear combinations ([`crate::combine`]) whose
/// weights follow from the masked values ([`LABELS`], [`CONSISTENCY`]).
#[derive(Clone, Debug, Default)]
pub struct Evaluated {
    /// ẑ_γ per AND gate, packed.
    pub masked: Vec<u8>,
    /// The combination of the AND outputs' labels.
    pub label_digest: Block,
    /// The combination of K_B\[c_A\] ⊕ c_B·Δ_B per AND gate.
    pub check_digest: Block,
}

/// What the label digest combines.
pub const LABELS: &[u8] = b"tessera-ag AND labels";
/// What the consistency digest combines.
pub const CONSISTENCY: &[u8] = b"tessera-ag consistency MACs";

/// The evaluator's walk over `plan` with the garbler's `tables` and `flips`, from `slots`
/// holding the input wires' active labels (low bit = masked value) and masks.
pub fn evaluate(
    plan: &Plan,
    (masks, products): (&Shares, &Shares),
    (ring, domain): (Keyring, u64),
    (tables, flips): (&[Block], &[bool]),
    slots: &mut Slots,
) -> Evaluated {
    let hash = FixedKeyHash::default();
    let inputs = plan.input_slots().len();
    let (mut labels, mut check) = (Vec::with_capacity(flips.len()), Vec::new());
    let mut masked = Vec::with_capacity(flips.len());
    let mut table = Vec::new();
    let mut g = 0;
    for k in 0..plan.segments() {
        slots.free(plan, k);
        let gates = plan.batch(k, domain);
        let n = gates.out.len();
        if n == 0 {
            continue;
        }
        table.clear();
        table.extend_from_slice(&tables[2 * g..2 * (g + n)]);
        for i in 0..n {
            table[2 * i] ^= slots.mac[gates.b[i] as usize];
            table[2 * i + 1] ^= slots.mac[gates.a[i] as usize];
        }
        hash.half_gates_eval(HASH, Labels::in_place(&mut slots.label), gates, &table);
        for i in 0..n {
            let (a, b, c) = (
                gates.a[i] as usize,
                gates.b[i] as usize,
                gates.out[i] as usize,
            );
            let (fa, fb) = (slots.flipped(a as u32), slots.flipped(b as u32));
            let (mp, kp) = products.get(g);
            let m_ab = mp ^ (slots.mac[b] & Block::mask(fa)) ^ (slots.mac[a] & Block::mask(fb));
            let mask = masks.get(inputs + g);
            slots.label[c] ^= mask.0 ^ m_ab;
            slots.flip[c] = Block::new(u128::from(flips[g]));
            (slots.mac[c], slots.key[c]) = mask;
            labels.push(slots.label[c]);
            // The consistency check with the true masked values ẑ = low bit ⊕ flip.
            let z = |s: usize| slots.label[s].lsb() ^ slots.flip[s].lsb();
            let (za, zb, zc) = (z(a), z(b), z(c));
            masked.push(zc);
            let c_b =
                (za & slots.mac[b].lsb()) ^ (zb & slots.mac[a].lsb()) ^ mp.lsb() ^ mask.0.lsb();
            let key = (slots.key[b] & Block::mask(za))
                ^ (slots.key[a] & Block::mask(zb))
                ^ kp
                ^ mask.1
                ^ ((ring.delta ^ Block::new(1)) & Block::mask((za & zb) ^ zc));
            check.push(key ^ (ring.delta & Block::mask(c_b)));
            g += 1;
        }
    }
    let masked = role::pack_bits(masked.into_iter());
    let combine = |what: &[u8], values: &[Block]| {
        let mut c = Combination::new(what, &[&masked]);
        c.extend(values);
        c.finish()
    };
    Evaluated {
        label_digest: combine(LABELS, &labels),
        check_digest: combine(CONSISTENCY, &check),
        masked,
    }
}

/// The garbler's side of the checks (KRRW18 §3): given the evaluator's masked values of the
/// input wires and AND outputs (`packed`, as sent), the digest of the labels the evaluator must
/// hold, L_{γ,0} ⊕ (ẑ_γ ⊕ f_γ)·Δ; the digest of M_A\[c_A\] per AND gate, where
/// c = (ẑ_α ⊕ λ_α)(ẑ_β ⊕ λ_β) ⊕ ẑ_γ ⊕ λ_γ is 0 for an honest evaluation; and the masked values
/// of the output wires. The digests are combinations as in [`Evaluated`].
pub fn garbler_check(
    plan: &Plan,
    (masks, products): (&Shares, &Shares),
    garbled: &Garbled,
    (input_masked, and_masked, packed): (&[bool], &[bool], &[u8]),
    delta: Block,
) -> (Block, Block, Vec<bool>) {
    let inputs = plan.input_slots().len();
    let n = plan.slots();
    let (mut z, mut mac) = (vec![Block::ZERO; n], vec![Block::ZERO; n]);
    z[ONE_SLOT as usize] = Block::new(1);
    for (i, slot) in plan.input_slots().enumerate() {
        z[slot] = Block::new(u128::from(input_masked[i]));
        mac[slot] = masks.get(i).0;
    }
    let mut labels = Combination::new(LABELS, &[packed]);
    let mut check = Combination::new(CONSISTENCY, &[packed]);
    let mut g = 0;
    for k in 0..plan.segments() {
        plan.run_free(k, &mut z);
        plan.run_free(k, &mut mac);
        let gates = plan.batch(k, DOMAIN);
        for i in 0..gates.out.len() {
            let (a, b, c) = (
                gates.a[i] as usize,
                gates.b[i] as usize,
                gates.out[i] as usize,
            );
            let (za, zb, zc) = (z[a].lsb(), z[b].lsb(), and_masked[g]);
            let m = (mac[b] & Block::mask(za))
                ^ (mac[a] & Block::mask(zb))
                ^ products.get(g).0
                ^ masks.get(inputs + g).0
                ^ Block::new(u128::from((za & zb) ^ zc));
            check.push(m);
            labels.push(garbled.and_labels[g] ^ (delta & Block::mask(zc ^ garbled.flips[g])));
            z[c] = Block::new(u128::from(zc));
            mac[c] = masks.get(inputs + g).0;
            g += 1;
        }
    }
    let outputs = plan.output_slots().map(|s| z[s].lsb()).collect();
    (labels.finish(), check.finish(), outputs)
}

/// Random zero labels for `n` input wires, low bit 0.
pub fn zero_labels(n: usize, prg: &mut Prg) -> Vec<Block> {
    (0..n).map(|_| prg.random_block().with_lsb(false)).collect()
}
