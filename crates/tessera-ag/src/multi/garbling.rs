//! The distributed garbled circuit of WRK17b (§4, Fig. 9) and its evaluation.
//!
//! Every wire w has a mask λ_w, authenticated-shared; free XOR keeps λ_w = λ_u ⊕ λ_v, and NOT
//! adds 1. Each AND gate's λ_u·λ_v comes from a triple by Beaver's trick (its differences opened
//! MAC-checked). For row (a, b) the parties hold shares of r_ab = (λ_u ⊕ a)(λ_v ⊕ b) ⊕ λ_w, and
//! garbler i (every party but 0) encrypts under H(L^i_{u,a}, L^i_{v,b}, gate, row) its share
//! r^i_ab, its MACs of it under every other party's Δ and L^i_{w,0} ⊕ ⊕_j K_i\[r^j_ab\] ⊕
//! r^i_ab·Δ_i. The evaluator, holding the masked values Λ_u, Λ_v and one label of each garbler
//! per wire, opens row (Λ_u, Λ_v) of every garbler, checks each share's MAC under its own Δ,
//! gets Λ_w = ⊕ r^i, and each garbler's label L^i_{w,Λ_w} from the label parts and the MACs
//! under Δ_i. H is the tweakable hash π(2x ⊕ T) ⊕ 2x of x = L_u ⊕ 2·L_v, one block per
//! tweak (row block).
//!
//! Inputs: each input's mask is opened to its owner, who tells every party its masked value;
//! the parties compare a digest of all masked values, and the garblers send the evaluator their
//! labels. Outputs: the evaluator tells each garbler the masked outputs with a digest of that
//! garbler's output labels (which it cannot have for other values without Δ_i), then every
//! output mask is opened to every party.

use super::share::{self, NShares, Party, add_public, xor_entry};
use super::triples::Preprocessed;
use super::{Exchange, Round};
use crate::Error;
use crate::checks::{self, Check};
use crate::combine::Combination;
use crate::share::{gather, scatter};
use crate::wire::{self as kinds, unpack_bits};
use subtle::ConstantTimeEq;
use tessera_circuit::{Circuit, GateKind};
use tessera_core::{Block, FixedKeyHash};
use tessera_net::role::pack_bits;
use tessera_protocols::Session;

/// The high 64 bits of the garbling hash's tweaks (bit 59: apart from the triples' and OTs').
const TWEAK_HIGH: u64 = 1 << 59;

/// The tweak of block `blk` of row `row` of AND gate `gate` of a run's program `program`
/// (every tweak of a run distinct: programs below 2^24, gates below 2^40, rows below 4, blocks
/// below 2^16).
fn tweak((program, gate): (u64, usize), row: usize, blk: usize) -> Block {
    let high = TWEAK_HIGH | program << 24 | (row as u64) << 16 | blk as u64;
    Block::from_halves(high, gate as u64)
}

/// What a run's next program starts from.
#[derive(Debug)]
pub enum Start<'a> {
    /// This party's fresh inputs (input value i of the circuit is party i's).
    Fresh(&'a [bool]),
    /// The state of the circuit's input wires, carried from earlier programs.
    Carried(Carry),
}

/// How a program ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Its outputs are opened to every party.
    Decode,
    /// Its output wires are carried to the next program.
    Carry,
}

/// What a program ended with.
#[derive(Debug)]
pub enum Ended {
    /// The outputs.
    Outputs(Vec<bool>),
    /// The state of its output wires.
    Carried(Carry),
}

/// What a party carries from one program to the next, wire by wire: its mask shares; a
/// garbler's zero labels; the evaluator's masked values and every garbler's label.
#[derive(Clone, Debug)]
pub struct Carry {
    lam: NShares,
    zero: Vec<Block>,
    masked: Vec<bool>,
    labels: Vec<Vec<Block>>,
}

impl Carry {
    /// A store of no wires for `party`.
    pub fn empty(party: Party) -> Self {
        Carry {
            lam: NShares::zeroed(party, 0),
            zero: Vec::new(),
            masked: Vec::new(),
            labels: vec![Vec::new(); if party.me == 0 { party.n - 1 } else { 0 }],
        }
    }

    /// The state of the wires at `positions`, in order.
    pub fn select(&self, positions: &[u32]) -> Carry {
        Carry {
            lam: self.lam.gather(positions),
            zero: gather_if(&self.zero, positions),
            masked: gather_if(&self.masked, positions),
            labels: self.labels.iter().map(|l| gather(l, positions)).collect(),
        }
    }

    /// Puts the wires of `from` at `positions`, the store first grown to `size` positions.
    pub fn place(&mut self, positions: &[u32], from: Carry, size: usize) {
        self.lam.scatter(positions, &from.lam, size);
        if !from.zero.is_empty() {
            scatter(&mut self.zero, positions, &from.zero, size);
        }
        if !from.masked.is_empty() {
            scatter(&mut self.masked, positions, &from.masked, size);
        }
        for (l, f) in self.labels.iter_mut().zip(&from.labels) {
            scatter(l, positions, f, size);
        }
    }
}

/// `v` at `positions`, or nothing where this party keeps none.
fn gather_if<T: Copy>(v: &[T], positions: &[u32]) -> Vec<T> {
    if v.is_empty() {
        Vec::new()
    } else {
        gather(v, positions)
    }
}

/// One party's garbled circuit, ready for the online phase.
pub struct Garbled<'c> {
    party: Party,
    /// The program's number within its run (separates its hash tweaks).
    program: u64,
    circuit: &'c Circuit,
    /// Each wire's mask shares.
    lam: NShares,
    /// Each AND gate's λ_u·λ_v shares.
    products: NShares,
    /// A garbler's zero labels, by wire (empty at the evaluator).
    zero: Vec<Block>,
    /// At the evaluator: each garbler's rows as they came, by garbler slot, AND gate, row and
    /// block (16 bytes each).
    tables: Vec<Vec<u8>>,
    hash: FixedKeyHash,
}

impl std::fmt::Debug for Garbled<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Garbled")
            .field("party", &self.party)
            .finish_non_exhaustive()
    }
}

/// The wire masks: inputs' from `carried` or else from `masks`, AND outputs' from `masks`, the
/// rest derived.
fn wire_masks(
    party: Party,
    circuit: &Circuit,
    masks: &NShares,
    carried: Option<&Carry>,
) -> NShares {
    let mut lam = NShares::zeroed(party, circuit.num_wires as usize);
    let inputs = circuit.num_input_wires() as usize;
    let from = carried.map_or(masks, |c| &c.lam);
    for w in 0..inputs {
        lam.xor_from(w, from, w);
    }
    let mut next = if carried.is_some() { 0 } else { inputs };
    let mut tmp = vec![Block::ZERO; party.width()];
    for g in &circuit.gates {
        let (a, b, out) = (g.a as usize, g.b as usize, g.out as usize);
        tmp.iter_mut().for_each(|t| *t = Block::ZERO);
        match g.kind {
            GateKind::And => {
                xor_entry(&mut tmp, masks.entry(next));
                next += 1;
            }
            GateKind::Xor => {
                xor_entry(&mut tmp, lam.entry(a));
                xor_entry(&mut tmp, lam.entry(b));
            }
            GateKind::Inv => {
                xor_entry(&mut tmp, lam.entry(a));
                add_public(party, &mut tmp, true);
            }
            GateKind::Eqw => xor_entry(&mut tmp, lam.entry(a)),
            GateKind::Eq => {}
        }
        lam.entry_mut(out).copy_from_slice(&tmp);
    }
    lam
}

/// Shares of r_ab for row `row` = 2a + b of an AND gate: λ_uλ_v ⊕ a·λ_v ⊕ b·λ_u ⊕ ab ⊕ λ_w.
fn row_shares(
    party: Party,
    prod: &[Block],
    lu: &[Block],
    lv: &[Block],
    lw: &[Block],
    row: usize,
    out: &mut [Block],
) {
    let (a, b) = (row >> 1 == 1, row & 1 == 1);
    for k in 0..out.len() {
        out[k] = prod[k] ^ lw[k] ^ (lv[k] & Block::mask(a)) ^ (lu[k] & Block::mask(b));
    }
    add_public(party, out, a & b);
}

/// The function-dependent phase: wire masks, Beaver's openings for each AND gate's λ_u·λ_v,
/// and (at the garblers) the garbled rows, sent to the evaluator.
pub fn garble<'c>(
    s: &mut Session,
    ex: &mut Exchange,
    party: Party,
    circuit: &'c Circuit,
    pre: Preprocessed,
    (program, carried): (u64, Option<&Carry>),
) -> Result<Garbled<'c>, Error> {
    let lam = wire_masks(party, circuit, &pre.masks, carried);
    let ands: Vec<_> = circuit
        .gates
        .iter()
        .filter(|g| g.kind == GateKind::And)
        .collect();
    let mut diffs = NShares::zeroed(party, 2 * ands.len());
    for (k, g) in ands.iter().enumerate() {
        diffs.xor_from(2 * k, &lam, g.a as usize);
        diffs.xor_from(2 * k, &pre.x, k);
        diffs.xor_from(2 * k + 1, &lam, g.b as usize);
        diffs.xor_from(2 * k + 1, &pre.y, k);
    }
    let de = share::open_all(s, ex, &diffs, (kinds::N_BEAVER, Check::BeaverMacs))?;
    let mut products = pre.z;
    let mut tmp = vec![Block::ZERO; party.width()];
    for k in 0..ands.len() {
        let (d, e) = (de[2 * k], de[2 * k + 1]);
        for ((t, &y), &x) in tmp.iter_mut().zip(pre.y.entry(k)).zip(pre.x.entry(k)) {
            *t = (y & Block::mask(d)) ^ (x & Block::mask(e));
        }
        add_public(party, &mut tmp, d & e);
        xor_entry(products.entry_mut(k), &tmp);
    }
    let mut g = Garbled {
        party,
        program,
        circuit,
        lam,
        products,
        zero: Vec::new(),
        tables: Vec::new(),
        hash: FixedKeyHash::default(),
    };
    let n = party.n;
    let table_len = ands.len() * 4 * n * 16;
    let mut out = vec![None; n];
    if party.me != 0 {
        g.zero = zero_labels(s, circuit, carried.map(|c| &c.zero[..]));
        out[0] = Some(g.rows());
    }
    let expect = share::expect_from(party, |_| party.me == 0, table_len);
    let got = ex.round(s, Round::new(kinds::N_TABLES, out, expect))?;
    g.tables = got.into_iter().flatten().collect();
    Ok(g)
}

/// A garbler's zero labels: carried or random on inputs, random on constants and AND
/// outputs, free XOR elsewhere.
fn zero_labels(s: &mut Session, circuit: &Circuit, carried: Option<&[Block]>) -> Vec<Block> {
    let mut prg = s.fork_prg();
    let mut zero = prg.random_blocks(circuit.num_wires as usize);
    if let Some(c) = carried {
        zero[..c.len()].copy_from_slice(c);
    }
    for g in &circuit.gates {
        let (a, b, out) = (g.a as usize, g.b as usize, g.out as usize);
        zero[out] = match g.kind {
            GateKind::Xor => zero[a] ^ zero[b],
            GateKind::Inv | GateKind::Eqw => zero[a],
            GateKind::And | GateKind::Eq => zero[out],
        };
    }
    zero
}

impl Garbled<'_> {
    /// This garbler's rows for every AND gate, as bytes.
    fn rows(&self) -> Vec<u8> {
        let (party, n) = (self.party, self.party.n);
        let delta = party.delta;
        let mut r = vec![Block::ZERO; party.width()];
        let mut plain = Vec::with_capacity(4 * n);
        let mut x = Vec::with_capacity(4 * n);
        let mut t = Vec::with_capacity(4 * n);
        let mut pads = vec![Block::ZERO; 4 * n];
        let mut msg = Vec::new();
        let ands = self
            .circuit
            .gates
            .iter()
            .filter(|g| g.kind == GateKind::And);
        for (k, g) in ands.enumerate() {
            let (u, v, w) = (g.a as usize, g.b as usize, g.out as usize);
            let (lu, lv, lw) = (self.lam.entry(u), self.lam.entry(v), self.lam.entry(w));
            plain.clear();
            x.clear();
            t.clear();
            for row in 0..4 {
                row_shares(party, self.products.entry(k), lu, lv, lw, row, &mut r);
                let bit = r[0].lsb();
                let mut label = self.zero[w] ^ (delta & Block::mask(bit));
                for pair in r.chunks_exact(2) {
                    plain.push(pair[0]);
                    label ^= pair[1];
                }
                plain.push(label);
                let la = self.zero[u] ^ (delta & Block::mask(row >> 1 == 1));
                let lb = self.zero[v] ^ (delta & Block::mask(row & 1 == 1));
                for blk in 0..n {
                    x.push(la ^ lb.gf_double());
                    t.push(tweak((self.program, k), row, blk));
                }
            }
            self.hash.tweakable(&x, &t, &mut pads);
            for (p, pad) in plain.iter().zip(&pads) {
                msg.extend_from_slice(&(*p ^ *pad).to_bytes());
            }
        }
        msg
    }

    /// The online phase: inputs (fresh, or the wires carried), evaluation at party 0, and the
    /// outputs to all or carried to the next program.
    pub fn evaluate(
        self,
        s: &mut Session,
        ex: &mut Exchange,
        start: Start<'_>,
        ending: Ending,
    ) -> Result<Ended, Error> {
        let masked = match &start {
            Start::Fresh(inputs) => self.masked_inputs(s, ex, inputs)?,
            Start::Carried(_) => Vec::new(),
        };
        let carried = match start {
            Start::Carried(c) => Some(c),
            Start::Fresh(_) => None,
        };
        let labels = self.input_labels(s, ex, &masked, carried.as_ref())?;
        let evaluated = match labels {
            Some((mut values, mut labels)) => {
                self.walk(&mut values, &mut labels)?;
                Some((values, labels))
            }
            None => None,
        };
        let outputs = self.circuit.output_start() as usize..self.circuit.num_wires as usize;
        if ending == Ending::Carry {
            return Ok(Ended::Carried(self.carry(outputs, evaluated)));
        }
        let out_masked = match evaluated {
            Some((values, labels)) => self.send_outputs(s, ex, &values, &labels)?,
            None => self.receive_outputs(s, ex)?,
        };
        let masks = self.lam.slice(outputs);
        let lam = share::open_all(s, ex, &masks, (kinds::N_OUTPUT_MASKS, Check::OutputMasks))?;
        Ok(Ended::Outputs(
            out_masked.iter().zip(lam).map(|(a, b)| a ^ b).collect(),
        ))
    }

    /// The state of the wires `range` for the next program.
    fn carry(
        &self,
        range: std::ops::Range<usize>,
        evaluated: Option<(Vec<bool>, Vec<Vec<Block>>)>,
    ) -> Carry {
        let lam = self.lam.slice(range.clone());
        let zero = self
            .zero
            .get(range.clone())
            .map(<[Block]>::to_vec)
            .unwrap_or_default();
        let (masked, labels) = match evaluated {
            Some((values, labels)) => (
                values[range.clone()].to_vec(),
                labels.iter().map(|l| l[range.clone()].to_vec()).collect(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        Carry {
            lam,
            zero,
            masked,
            labels,
        }
    }

    /// Opens each input's mask to its owner; every owner tells every party its masked values.
    /// Returns the masked value of every input wire, in order.
    fn masked_inputs(
        &self,
        s: &mut Session,
        ex: &mut Exchange,
        inputs: &[bool],
    ) -> Result<Vec<bool>, Error> {
        let party = self.party;
        let mut masked = Vec::new();
        let owned: Vec<NShares> = (self.circuit.inputs.iter().enumerate())
            .map(|(p, &width)| {
                let start = self.circuit.input_start(p) as usize;
                self.lam.slice(start..start + width as usize)
            })
            .collect();
        let each: Vec<Option<&NShares>> = (0..party.n).map(|p| owned.get(p)).collect();
        let opening = (kinds::N_INPUT_MASKS, Check::InputMaskMacs);
        let lam = share::open_each(s, ex, party, &each, opening)?;
        let mine: Vec<bool> = inputs.iter().zip(lam).map(|(x, l)| x ^ l).collect();
        let msg = pack_bits(mine.iter().copied());
        let out = party.peers().fold(vec![None; party.n], |mut o, j| {
            o[j] = (!mine.is_empty()).then(|| msg.clone());
            o
        });
        let width = |j: usize| self.circuit.inputs.get(j).copied().unwrap_or(0) as usize;
        let expect = (0..party.n)
            .map(|j| (j != party.me && width(j) > 0).then(|| width(j).div_ceil(8)))
            .collect();
        let got = ex.round(s, Round::new(kinds::N_MASKED, out, expect))?;
        for (p, msg) in got.iter().enumerate().take(self.circuit.inputs.len()) {
            match msg {
                Some(msg) => masked.extend(unpack_bits(msg, width(p), kinds::N_MASKED.name)?),
                None if p == party.me => masked.extend_from_slice(&mine),
                None => {}
            }
        }
        Ok(masked)
    }

    /// The wires the garblers send labels for before evaluation: inputs, then constants.
    fn constants(&self) -> impl Iterator<Item = (usize, bool)> + '_ {
        self.circuit
            .gates
            .iter()
            .filter(|g| g.kind == GateKind::Eq)
            .map(|g| (g.out as usize, g.a == 1))
    }

    /// Compares the masked inputs' digest among all parties; the garblers send the evaluator
    /// their labels of the inputs and constants. At the evaluator: every wire's masked value
    /// and each garbler's labels so far.
    #[allow(clippy::type_complexity)]
    fn input_labels(
        &self,
        s: &mut Session,
        ex: &mut Exchange,
        masked: &[bool],
        carried: Option<&Carry>,
    ) -> Result<Option<(Vec<bool>, Vec<Vec<Block>>)>, Error> {
        let party = self.party;
        let echo = tessera_core::digest::tagged(
            b"tessera-ag masked inputs",
            &[&pack_bits(masked.iter().copied())],
        );
        let known: Vec<(usize, bool)> = masked
            .iter()
            .copied()
            .enumerate()
            .chain(self.constants())
            .collect();
        let mut out = vec![None; party.n];
        for j in party.peers() {
            let mut msg = echo.to_vec();
            if j == 0 {
                for &(w, value) in &known {
                    let l = self.zero[w] ^ (party.delta & Block::mask(value));
                    msg.extend_from_slice(&l.to_bytes());
                }
            }
            out[j] = Some(msg);
        }
        let len = |j: usize| {
            32 + if party.me == 0 && j != 0 {
                16 * known.len()
            } else {
                0
            }
        };
        let expect = (0..party.n)
            .map(|j| (j != party.me).then(|| len(j)))
            .collect();
        let got = ex.round(s, Round::new(kinds::N_INPUT_LABELS, out, expect))?;
        let echoes: Vec<Option<Vec<u8>>> = got
            .iter()
            .map(|m| m.as_ref().map(|m| m[..32].to_vec()))
            .collect();
        share::check_echo(&echo, &echoes, Check::InputEcho)?;
        if party.me != 0 {
            return Ok(None);
        }
        let wires = self.circuit.num_wires as usize;
        let mut values = vec![false; wires];
        for &(w, v) in &known {
            values[w] = v;
        }
        let mut labels = Vec::new();
        if let Some(c) = carried {
            values[..c.masked.len()].copy_from_slice(&c.masked);
        }
        for (h, msg) in got.iter().flatten().enumerate() {
            let given = kinds::blocks(&msg[32..], kinds::N_INPUT_LABELS.name)?;
            let mut l = vec![Block::ZERO; wires];
            if let Some(c) = carried {
                l[..c.masked.len()].copy_from_slice(&c.labels[h]);
            }
            for (&(w, _), &b) in known.iter().zip(given.iter()) {
                l[w] = b;
            }
            labels.push(l);
        }
        Ok(Some((values, labels)))
    }

    /// The evaluator's walk through the circuit: masked values and every garbler's labels,
    /// each decrypted row's share checked against its MAC under this party's Δ.
    fn walk(&self, values: &mut [bool], labels: &mut [Vec<Block>]) -> Result<(), Error> {
        let (party, n) = (self.party, self.party.n);
        let mut r = vec![Block::ZERO; party.width()];
        // Every garbler's n blocks of the gate's row, hashed in one call.
        let mut rows = vec![Block::ZERO; (n - 1) * n];
        let (mut x, mut t) = (rows.clone(), rows.clone());
        let mut wrong = Block::ZERO;
        let mut k = 0;
        for g in &self.circuit.gates {
            let (a, b, w) = (g.a as usize, g.b as usize, g.out as usize);
            match g.kind {
                GateKind::Xor => {
                    values[w] = values[a] ^ values[b];
                    labels.iter_mut().for_each(|l| l[w] = l[a] ^ l[b]);
                }
                GateKind::Inv | GateKind::Eqw => {
                    values[w] = values[a];
                    labels.iter_mut().for_each(|l| l[w] = l[a]);
                }
                GateKind::Eq => {}
                GateKind::And => {
                    let row = 2 * usize::from(values[a]) + usize::from(values[b]);
                    let (lu, lv, lw) = (self.lam.entry(a), self.lam.entry(b), self.lam.entry(w));
                    row_shares(party, self.products.entry(k), lu, lv, lw, row, &mut r);
                    // The row's n tweaks, the same for every garbler.
                    for (blk, tw) in t[..n].iter_mut().enumerate() {
                        *tw = tweak((self.program, k), row, blk);
                    }
                    for h in 1..n - 1 {
                        t.copy_within(..n, h * n);
                    }
                    for (x, l) in x.chunks_exact_mut(n).zip(labels.iter()) {
                        x.fill(l[a] ^ l[b].gf_double());
                    }
                    self.hash.tweakable(&x, &t, &mut rows);
                    let mut value = r[0].lsb();
                    let at = (k * 4 + row) * n;
                    for (i, out) in rows.chunks_exact_mut(n).enumerate() {
                        let table = &self.tables[i][16 * at..16 * (at + n)];
                        for (o, c) in out.iter_mut().zip(table.as_chunks::<16>().0) {
                            *o ^= Block::from_bytes(*c);
                        }
                        let share = out[0].lsb();
                        wrong |= out[0] ^ r[2 * i + 1] ^ (party.delta & Block::mask(share));
                        value ^= share;
                    }
                    values[w] = value;
                    for h in 1..n {
                        let mut l = rows[(h - 1) * n + n - 1] ^ r[2 * (h - 1)];
                        for j in (1..n).filter(|&j| j != h) {
                            l ^= rows[(j - 1) * n + if h < j { h } else { h - 1 }];
                        }
                        labels[h - 1][w] = l;
                    }
                    k += 1;
                }
            }
        }
        checks::require(Check::GarbledRowMacs, wrong == Block::ZERO)
    }

    /// The digest of one garbler's output labels and the masked outputs.
    fn output_digest(masked: &[u8], labels: impl Iterator<Item = Block>) -> [u8; 16] {
        let mut c = Combination::new(b"tessera-ag n-party output labels", &[masked]);
        labels.for_each(|l| c.push(l));
        c.finish().to_bytes()
    }

    /// The evaluator tells each garbler the masked outputs with the digest of its labels.
    fn send_outputs(
        &self,
        s: &mut Session,
        ex: &mut Exchange,
        values: &[bool],
        labels: &[Vec<Block>],
    ) -> Result<Vec<bool>, Error> {
        let start = self.circuit.output_start() as usize;
        let outs = &values[start..];
        let packed = pack_bits(outs.iter().copied());
        let mut out = vec![None; self.party.n];
        for h in 1..self.party.n {
            let d = Self::output_digest(&packed, labels[h - 1][start..].iter().copied());
            out[h] = Some([&packed[..], &d].concat());
        }
        let expect = vec![None; self.party.n];
        ex.round(s, Round::new(kinds::N_OUTPUT_LABELS, out, expect))?;
        Ok(outs.to_vec())
    }

    /// A garbler takes the masked outputs if their label digest is right.
    fn receive_outputs(&self, s: &mut Session, ex: &mut Exchange) -> Result<Vec<bool>, Error> {
        let start = self.circuit.output_start() as usize;
        let count = self.circuit.num_output_wires() as usize;
        let bytes = count.div_ceil(8);
        let expect = share::expect_from(self.party, |j| j == 0, bytes + 16);
        let got = ex.round(
            s,
            Round::new(kinds::N_OUTPUT_LABELS, vec![None; self.party.n], expect),
        )?;
        let msg = got[0].as_deref().unwrap_or_default();
        let outs = unpack_bits(&msg[..bytes], count, kinds::N_OUTPUT_LABELS.name)?;
        let delta = self.party.delta;
        let expected = outs
            .iter()
            .enumerate()
            .map(|(i, &v)| self.zero[start + i] ^ (delta & Block::mask(v)));
        let d = Self::output_digest(&msg[..bytes], expected);
        checks::require(Check::OutputLabels, bool::from(d.ct_eq(&msg[bytes..])))?;
        Ok(outs)
    }
}
