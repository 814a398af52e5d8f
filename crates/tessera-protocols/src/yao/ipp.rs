//! Inter-party parallel Yao (UltraSFE §4.3, "IPP"): both parties garble. The circuit is cut
//! into independent partitions and a tail ([`Partitions`]); the partitions are dealt to the two
//! parties by size (the largest left to the party with less work), each party garbles its own
//! and evaluates the other's, so neither sits idle while the other garbles (garbling costs
//! twice the hashes of evaluation). The party holding input value 0 ("A") garbles the tail.
//!
//! Inputs: each party garbles under its own free-XOR offset Δ (its OT sender's, as in
//! [`crate::yao`]), so both parties' inputs are encoded twice: its own bits by itself, the
//! peer's by correlated OT with that Δ, once per direction.
//!
//! Recombination, as XOR shares: an output wire v of a partition garbled by B reaches A as
//! an active label whose colour c = v ⊕ d, where d is the colour of B's zero-label (B's
//! decoding bit). So v = c ⊕ d is XOR-shared: c at A, d at B. For the tail, A draws two
//! fresh input wires, W_c (its own input c, whose active label it sends) and W_d (B's input d,
//! by correlated OT under Δ_A), and uses W_c ⊕ W_d as v's wire: by free XOR, the XOR of the
//! two active labels B holds is v's active label. A learns only c, uniform because d is B's
//! secret coin; B learns labels only. This needs free XOR: the PRF-based scheme is refused.
//! Outputs go to both: each party sends, for every output wire, its decoding bit where it
//! garbled the wire and its label's colour where it evaluated it.
//!
//! Security is semi-honest under the assumptions of the scheme and the OT (each party is the
//! garbler of some gates and the evaluator of the others; a malicious party could garble
//! another function).

use crate::yao::{YaoRole, check_circuit, fingerprint_of, hello};
use crate::{Error, Session};
use tessera_circuit::Circuit;
use tessera_core::{Block, Prg};
use tessera_garble::{
    Evaluator, Garbler, InputEncoding, Partitions, Plan, Scheme, SchemeKind, SchemeVisitor, Source,
    TableReader, XorGates, gather, table_blocks,
};
use tessera_net::role;
use tessera_net::{Channel, Kind, Phase, Space};

/// A party's input labels under its own garbling, for the peer.
pub const LABELS: Kind = Kind::new(0x40, "ipp input labels");
/// One partition's tables.
pub const TABLES: Kind = Kind::new(0x41, "ipp partition tables");
/// A's active labels of its shares c.
pub const SHARES: Kind = Kind::new(0x42, "ipp share labels");
/// The tail's tables.
pub const TAIL: Kind = Kind::new(0x43, "ipp tail tables");
/// Each party's half of the outputs: decoding bits and colours.
pub const REVEAL: Kind = Kind::new(0x44, "ipp output halves");

/// SHA-256 of what both parties must agree on: the protocol, the scheme, the circuit.
pub fn fingerprint(circuit: &Circuit, scheme: SchemeKind) -> [u8; 32] {
    fingerprint_of(b"tessera/yao-ipp", scheme, &[], circuit)
}

/// What an IPP run gives a party.
#[derive(Clone, Debug, PartialEq)]
pub struct IppOutcome {
    /// The circuit's output bits, all values concatenated.
    pub output: Vec<bool>,
    /// AND gates this party garbled.
    pub garbled_and: usize,
    /// AND gates this party evaluated.
    pub evaluated_and: usize,
    /// Time and traffic of each phase.
    pub phases: Vec<Phase>,
}

/// Which party garbles each partition (true: A, the holder of input value 0): the largest
/// left to the party with less work so far; the tail is A's.
pub fn owners(parts: &Partitions) -> Vec<bool> {
    let and = parts.and_gates();
    let mut owner = vec![true; parts.len()];
    let mut load = [0usize; 2];
    for &k in parts.by_size() {
        let b = load[1] < load[0];
        owner[k] = !b;
        load[usize::from(b)] += and[k];
    }
    owner
}

/// Runs `circuit` with `peer`: this party holds input value 0 if its id is the lower one,
/// else value 1, with bits `input`. A failure stops both parties, the peer told why.
pub fn run(
    session: &mut Session,
    peer: usize,
    circuit: &Circuit,
    scheme: SchemeKind,
    input: &[bool],
) -> Result<IppOutcome, Error> {
    session.run(|s| {
        check_circuit(circuit)?;
        if scheme.xor_gates() != XorGates::Free {
            return Err(Error::Input(format!(
                "inter-party parallel garbling recombines by free XOR; scheme {scheme} has none"
            )));
        }
        let a = s.id() < peer;
        let value = usize::from(!a);
        if input.len() != circuit.inputs[value] as usize {
            return Err(Error::Input(format!(
                "input value {value} has {} bits, got {}",
                circuit.inputs[value],
                input.len()
            )));
        }
        let space = s.space(peer)?;
        let role = if a {
            YaoRole::Garbler
        } else {
            YaoRole::Evaluator
        };
        let block = hello(s, (peer, space), role, scheme, fingerprint(circuit, scheme))?;
        let parts = s.phase("partition", |_| {
            Partitions::new(circuit, 1, |c| Plan::default_for(c, XorGates::Free))
        })?;
        let mut outcome = scheme.visit(Party {
            s,
            peer: (peer, space),
            circuit,
            parts: &parts,
            a,
            input,
            block,
        })?;
        outcome.phases = s.take_phases();
        Ok(outcome)
    })
}

/// One party's run for the scheme chosen at run time.
struct Party<'a> {
    s: &'a mut Session,
    peer: (usize, Space),
    circuit: &'a Circuit,
    parts: &'a Partitions,
    a: bool,
    input: &'a [bool],
    block: Block,
}

impl SchemeVisitor for Party<'_> {
    type Output = Result<IppOutcome, Error>;
    fn visit<S: Scheme>(self) -> Self::Output {
        party::<S>(self)
    }
}

/// Correlated OT both ways, A's sender first: returns this party's offset with the wires of
/// the peer's `theirs` input wires, and the active labels of `mine` under the peer's offset.
type InputOt<S> = (
    tessera_garble::Offset<S>,
    Vec<<S as Scheme>::Wire>,
    Vec<Block>,
);

fn input_ot<S: Scheme>(
    s: &mut Session,
    (peer, a): (usize, bool),
    theirs: usize,
    mine: &[bool],
) -> Result<InputOt<S>, Error> {
    let mut prg = s.fork_prg();
    let choices = tessera_ot::ChoiceBits::from_bools(mine);
    let choices = choices.as_choices();
    s.with_ot_pair(peer, |snd, rcv, ch| {
        let offset = S::with_offset(snd.delta(), &mut prg)
            .ok_or_else(|| Error::Input(format!("scheme {} has no offset", S::NAME)))?;
        let mut zero = vec![Block::ZERO; theirs];
        let mut active = vec![Block::ZERO; mine.len()];
        if a {
            snd.send_correlated(ch, &mut zero)?;
            rcv.receive_correlated(ch, choices, &mut active)?;
        } else {
            rcv.receive_correlated(ch, choices, &mut active)?;
            snd.send_correlated(ch, &mut zero)?;
        }
        let wires = zero.into_iter().map(offset.wire).collect();
        Ok((offset, wires, active))
    })
}

/// The tail's input labels: circuit inputs from `inputs`, outputs of partitions garbled by
/// the tail's garbler from `outs`, and the crossing wires' labels from `shared`, in order.
fn tail_inputs<L: Copy + Default>(
    sources: &[Source],
    (owner, tail): (&[bool], usize),
    (inputs, outs): (&[L], &[Vec<L>]),
    mut shared: impl Iterator<Item = L>,
) -> Vec<L> {
    sources
        .iter()
        .map(|src| match *src {
            Source::Input(w) => inputs[w as usize],
            Source::Part { part, index } if owner[part as usize] == owner[tail] => {
                outs[part as usize][index as usize]
            }
            Source::Part { .. } => shared.next().unwrap_or_default(),
        })
        .collect()
}

/// What a party holds through a run: its encoding (its own and the peer's inputs under its
/// offset, then the crossing shares'), its active labels under the peer's offset, and what
/// garbling and evaluating each partition gave.
struct State<S: Scheme> {
    enc: InputEncoding<S>,
    to_wire: fn(Block) -> S::Wire,
    prg: Prg,
    active: Vec<Block>,
    garbler: Garbler<S>,
    evaluator: Evaluator<S>,
    /// Output wires of the partitions this party garbled.
    outs_g: Vec<Vec<S::Wire>>,
    /// Output labels of the partitions it evaluated.
    outs_e: Vec<Vec<Block>>,
    tables: Vec<Block>,
    garbled_and: usize,
    evaluated_and: usize,
}

impl<S: Scheme> State<S> {
    /// Garbles partition `k` (`and` AND gates) on its input wires `inputs` into the tables
    /// buffer, keeping its output wires.
    fn garble(
        &mut self,
        (plan, k): (&Plan, usize),
        inputs: &[S::Wire],
        and: usize,
    ) -> Result<(), Error> {
        self.tables.clear();
        let secret = &self.enc.secret;
        let o = self
            .garbler
            .garble_in(plan, k as u64, secret, inputs, &mut self.tables)?;
        self.outs_g[k] = o.to_vec();
        self.garbled_and += and;
        Ok(())
    }

    /// Evaluates partition `k` (`and` AND gates) on its active labels with the tables in the
    /// buffer, keeping its output labels.
    fn evaluate(
        &mut self,
        (plan, k): (&Plan, usize),
        labels: &[Block],
        and: usize,
    ) -> Result<(), Error> {
        let mut reader = TableReader::new(&self.tables);
        let o = self
            .evaluator
            .evaluate_in(plan, k as u64, labels, &mut reader)?;
        self.outs_e[k] = o.to_vec();
        self.evaluated_and += and;
        Ok(())
    }
}

fn party<S: Scheme>(mut p: Party<'_>) -> Result<IppOutcome, Error> {
    let mut st = inputs::<S>(&mut p)?;
    partitions(&mut p, &mut st)?;
    tail(&mut p, &mut st)?;
    let output = reveal(&mut p, &st)?;
    Ok(IppOutcome {
        output,
        garbled_and: st.garbled_and,
        evaluated_and: st.evaluated_and,
        phases: Vec::new(),
    })
}

/// Inputs: this party's wires for every input (its own drawn, the peer's by OT), and its
/// labels under the peer's garbling (its own by OT, the peer's sent).
fn inputs<S: Scheme>(p: &mut Party<'_>) -> Result<State<S>, Error> {
    let c = p.circuit;
    let scheme = S::with_backend(p.s.backend(), p.block)?;
    let value = usize::from(!p.a);
    let start = |v: usize| c.input_start(v) as usize;
    let (mine, theirs) = (
        start(value)..start(value) + c.inputs[value] as usize,
        start(1 - value)..start(1 - value) + c.inputs[1 - value] as usize,
    );
    let ((peer, space), a, input) = (p.peer, p.a, p.input);
    let (offset, peer_wires, my_active) = p.s.phase("input-ot", |s| {
        input_ot::<S>(s, (peer, a), theirs.len(), input)
    })?;
    let mut prg = p.s.fork_prg();
    let mut enc = InputEncoding::<S> {
        secret: offset.secret,
        wires: vec![S::Wire::default(); c.num_input_wires() as usize],
    };
    for w in &mut enc.wires[mine.clone()] {
        *w = S::random_wire(&enc.secret, &mut prg);
    }
    enc.wires[theirs.clone()].copy_from_slice(&peer_wires);
    let labels = enc.encode(mine.start, p.input);
    let mut active = vec![Block::ZERO; enc.wires.len()];
    active[mine].copy_from_slice(&my_active);
    let mut ch = p.s.channel(peer);
    ch.send_blocks(space.tag(LABELS), &labels)?;
    ch.recv_blocks(space.tag(LABELS), &mut active[theirs])?;
    let parts = p.parts.len();
    Ok(State {
        enc,
        to_wire: offset.wire,
        prg,
        active,
        garbler: Garbler::new(scheme.clone()),
        evaluator: Evaluator::new(scheme),
        outs_g: vec![Vec::new(); parts],
        outs_e: vec![Vec::new(); parts],
        tables: Vec::new(),
        garbled_and: 0,
        evaluated_and: 0,
    })
}

/// Each party garbles its partitions, then evaluates the peer's.
fn partitions<S: Scheme>(p: &mut Party<'_>, st: &mut State<S>) -> Result<(), Error> {
    let (parts, (peer, space)) = (p.parts, p.peer);
    let owner = owners(parts);
    let tail = parts.len() - 1;
    let and = parts.and_gates();
    let mut buf = Vec::new();
    p.s.phase("garble", |s| -> Result<(), Error> {
        let mut ch = s.channel(peer);
        for k in (0..tail).filter(|&k| owner[k] == p.a) {
            let (plan, sources) = parts.part(k);
            gather(sources, &st.enc.wires, &[], &mut buf);
            st.garble((plan, k), &buf, and[k])?;
            ch.send_blocks(space.tag(TABLES), &st.tables)?;
        }
        Ok(ch.flush()?)
    })?;
    let mut labels = Vec::new();
    p.s.phase("evaluate", |s| -> Result<(), Error> {
        let mut ch = s.channel(peer);
        for k in (0..tail).filter(|&k| owner[k] != p.a) {
            let (plan, sources) = parts.part(k);
            gather(sources, &st.active, &[], &mut labels);
            st.tables.resize(table_blocks::<S>(plan), Block::ZERO);
            ch.recv_blocks(space.tag(TABLES), &mut st.tables)?;
            st.evaluate((plan, k), &labels, and[k])?;
        }
        Ok(())
    })
}

/// The tail, garbled by A: outputs of B's partitions cross as XOR shares.
fn tail<S: Scheme>(p: &mut Party<'_>, st: &mut State<S>) -> Result<(), Error> {
    let (parts, (peer, space)) = (p.parts, p.peer);
    let owner = owners(parts);
    let tail = parts.len() - 1;
    let and = parts.and_gates()[tail];
    let (tail_plan, tail_sources) = parts.part(tail);
    let crossing: Vec<(usize, usize)> = tail_sources
        .iter()
        .filter_map(|s| match *s {
            Source::Part { part, index } if owner[part as usize] != owner[tail] => {
                Some((part as usize, index as usize))
            }
            _ => None,
        })
        .collect();
    let a = p.a;
    p.s.phase("tail", |s| -> Result<(), Error> {
        if a {
            // c: the colours of B's output labels this party evaluated.
            let c_bits: Vec<bool> = crossing
                .iter()
                .map(|&(k, i)| st.outs_e[k][i].lsb())
                .collect();
            let mut zero = vec![Block::ZERO; crossing.len()];
            s.with_ot_sender(peer, |ot, ch| Ok(ot.send_correlated(ch, &mut zero)?))?;
            // W_c: fresh wires after the circuit's inputs, encoded like them.
            let n = st.enc.wires.len();
            for _ in 0..crossing.len() {
                let w = S::random_wire(&st.enc.secret, &mut st.prg);
                st.enc.wires.push(w);
            }
            let c_labels = st.enc.encode(n, &c_bits);
            let (wires, w_c) = st.enc.wires.split_at(n);
            let w_d = zero.into_iter().map(st.to_wire);
            let shared = w_c.iter().zip(w_d).map(|(&x, y)| S::free_xor(x, y));
            let ins = tail_inputs(tail_sources, (&owner, tail), (wires, &st.outs_g), shared);
            st.garble((tail_plan, tail), &ins, and)?;
            let mut ch = s.channel(peer);
            ch.send_blocks(space.tag(SHARES), &c_labels)?;
            ch.send_blocks(space.tag(TAIL), &st.tables)?;
            return Ok(ch.flush()?);
        }
        // d: the decoding bits of this party's crossing output wires.
        let d_bits: tessera_ot::ChoiceBits = crossing
            .iter()
            .map(|&(k, i)| S::decoding_bit(&st.outs_g[k][i]))
            .collect();
        let mut act_d = vec![Block::ZERO; crossing.len()];
        s.with_ot_receiver(peer, |ot, ch| {
            Ok(ot.receive_correlated(ch, d_bits.as_choices(), &mut act_d)?)
        })?;
        let mut ch = s.channel(peer);
        let mut act_c = vec![Block::ZERO; crossing.len()];
        ch.recv_blocks(space.tag(SHARES), &mut act_c)?;
        st.tables.resize(table_blocks::<S>(tail_plan), Block::ZERO);
        ch.recv_blocks(space.tag(TAIL), &mut st.tables)?;
        let shared = act_c.iter().zip(&act_d).map(|(&x, &y)| x ^ y);
        let ins = tail_inputs(
            tail_sources,
            (&owner, tail),
            (&st.active, &st.outs_e),
            shared,
        );
        st.evaluate((tail_plan, tail), &ins, and)
    })
}

/// Outputs to both: decoding bits where this party garbled, colours where it evaluated.
fn reveal<S: Scheme>(p: &mut Party<'_>, st: &State<S>) -> Result<Vec<bool>, Error> {
    let owner = owners(p.parts);
    let half: Vec<bool> = p
        .parts
        .outputs()
        .iter()
        .map(|src| match *src {
            Source::Input(w) => S::decoding_bit(&st.enc.wires[w as usize]),
            Source::Part { part, index } if owner[part as usize] == p.a => {
                S::decoding_bit(&st.outs_g[part as usize][index as usize])
            }
            Source::Part { part, index } => st.outs_e[part as usize][index as usize].lsb(),
        })
        .collect();
    let packed = role::pack_bits(half.iter().copied());
    let mut theirs_half = vec![0u8; packed.len()];
    let (peer, space) = p.peer;
    let mut ch = p.s.channel(peer);
    ch.send(space.tag(REVEAL), &packed)?;
    ch.recv_into(space.tag(REVEAL), &mut theirs_half)?;
    Ok(half
        .iter()
        .enumerate()
        .map(|(k, &h)| h ^ role::packed_bit(&theirs_half, k))
        .collect())
}
