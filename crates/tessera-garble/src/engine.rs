//! Running a [`Plan`]: free operations as one flat stream over the slot array, batches handed
//! to the scheme, which gathers its inputs from the slots inside its fused kernels (VASA
//! §4.2.1 steps 1-5: gather inputs, prepare, AES, finish, store) and write the outputs straight
//! to their slots (a plan's batches never write a slot they read), the tables straight into
//! the room the [`TableSink`] lends. With several threads a batch is split among them in
//! circuit order ([`crate::crew`]), so the tables do not depend on the thread count; each
//! thread then writes its outputs to a buffer, scattered to the slots once the batch is done.

use crate::Error;
use crate::crew::{Crew, Share, useful_threads};
use crate::plan::{CHUNK, ONE_SLOT, Plan, RESERVED};
use crate::scheme::Scheme;
use crate::tables::{TableSink, TableSource};
use std::ops::Range;
use std::sync::{Mutex, PoisonError, RwLock};
use tessera_core::Block;
use tessera_core::hazmat::{Labels, SlotGates, SlotSteps};

/// Table blocks of a batch of `gates` gates, XOR gates if `xor`: the tables of its
/// [`CHUNK`]-sized pieces one after another.
fn batch_table_blocks<S: Scheme>(xor: bool, gates: usize) -> usize {
    let blocks = |n| {
        if xor {
            S::xor_table_blocks(n)
        } else {
            S::and_table_blocks(n)
        }
    };
    (gates / CHUNK) * blocks(CHUNK) + blocks(gates % CHUNK)
}

/// Table blocks a garbling of `plan` with scheme `S` writes.
pub fn table_blocks<S: Scheme>(plan: &Plan) -> usize {
    batch_tables::<S>(plan).sum()
}

/// Table blocks of each batch a garbling of `plan` with scheme `S` writes, in order: what
/// each [`TableSink::commit`] passes on, whatever the garbler's thread count.
pub fn batch_tables<S: Scheme>(plan: &Plan) -> impl Iterator<Item = usize> + '_ {
    (0..plan.segments.len()).filter_map(|k| {
        let (_, gates) = plan.segment(k);
        (!gates.is_empty()).then(|| batch_table_blocks::<S>(plan.segments[k].xor, gates.len()))
    })
}

/// Tweak domains run below this bound (the PRF scheme keeps two bits of the tweak's high half
/// for its rows).
pub const DOMAINS: u64 = 1 << 62;

fn check<S: Scheme>(plan: &Plan, domain: u64) -> Result<(), Error> {
    if domain >= DOMAINS {
        return Err(Error::Inputs(format!(
            "tweak domain {domain} is not below 2^62"
        )));
    }
    if plan.xor_gates() != S::XOR_GATES {
        return Err(Error::WrongPlan {
            scheme: S::NAME,
            plan: plan.xor_gates(),
        });
    }
    Ok(())
}

fn check_inputs(plan: &Plan, inputs: usize) -> Result<(), Error> {
    if inputs != plan.num_inputs() {
        return Err(Error::Inputs(format!(
            "the circuit has {} input wires, got {} labels",
            plan.num_inputs(),
            inputs
        )));
    }
    Ok(())
}

/// One party's labels and how it treats the free operations.
trait Party {
    type Label: Copy + Default + Send + Sync;
    /// The labels of the constants 0 and 1.
    fn constants(&self) -> [Self::Label; 2];
    /// Free XOR steps `range` of a free-XOR plan, each out = a ⊕ b.
    fn xor_steps(steps: &SlotSteps, range: Range<usize>, labels: &mut [Self::Label]);
    /// out = ¬a, for plans with garbled XOR (whose free operations are copies and NOTs).
    fn not(&self, a: Self::Label) -> Self::Label;
}

/// A party's slot array, kept across runs and placed in its buffer so that the first input
/// slot starts a 64-byte line: a run of consecutive input slots (a wide gate's operands) is
/// then read by the kernels' plain loads a whole line at a time, none split across two.
#[derive(Debug, Default)]
struct SlotArray<L> {
    buf: Vec<L>,
    at: usize,
    len: usize,
}

impl<L: Copy + Default> SlotArray<L> {
    /// The input slots of `plan`, the array sized for the plan.
    fn inputs(&mut self, plan: &Plan) -> &mut [L] {
        let size = std::mem::size_of::<L>().max(1);
        let spare = 64 / size;
        // Every slot is written before it is read, so no pass clears it.
        self.buf.resize(plan.num_slots + spare, L::default());
        let first_input = self.buf.as_ptr() as usize + RESERVED * size;
        let skip = first_input.next_multiple_of(64) - first_input;
        self.at = if skip.is_multiple_of(size) {
            skip / size
        } else {
            0
        };
        self.len = plan.num_slots;
        &mut self[plan.input_slots()]
    }
}

impl<L> std::ops::Deref for SlotArray<L> {
    type Target = [L];
    fn deref(&self) -> &[L] {
        &self.buf[self.at..self.at + self.len]
    }
}

impl<L> std::ops::DerefMut for SlotArray<L> {
    fn deref_mut(&mut self) -> &mut [L] {
        &mut self.buf[self.at..self.at + self.len]
    }
}

/// Checks that `labels` is sized for `plan` (its inputs placed) and fills the constants.
fn load<P: Party>(party: &P, plan: &Plan, labels: &mut [P::Label]) -> Result<(), Error> {
    if labels.len() != plan.num_slots {
        return Err(Error::Inputs(
            "the input wires were not placed for this plan".into(),
        ));
    }
    labels[..RESERVED].copy_from_slice(&party.constants());
    Ok(())
}

/// Runs free operations `range` of `plan` (see [`Plan`] for their two forms).
fn run_free<P: Party>(party: &P, plan: &Plan, range: Range<usize>, labels: &mut [P::Label]) {
    if plan.xor_gates() == crate::XorGates::Free {
        P::xor_steps(&plan.free, range, labels);
    } else {
        for [a, b, o] in plan.free.get(range) {
            let l = labels[a as usize];
            labels[o as usize] = if b == ONE_SLOT { party.not(l) } else { l };
        }
    }
}

/// Gates `range` of `plan`, garbled in tweak domain `domain`, as the kernels read them.
fn slot_gates(plan: &Plan, domain: u64, range: Range<usize>) -> SlotGates<'_> {
    SlotGates {
        a: &plan.gates.a[range.clone()],
        b: &plan.gates.b[range.clone()],
        out: &plan.gates.out[range.clone()],
        ids: &plan.ids[range],
        domain,
    }
}

/// Writes the output labels of gates `range` of `plan`, computed by a thread sharing the batch,
/// to their slots.
fn scatter<L: Copy>(plan: &Plan, range: Range<usize>, out: &[L], labels: &mut [L]) {
    for (&s, &l) in plan.gates.out[range].iter().zip(out) {
        labels[s as usize] = l;
    }
}

/// Gates of a thread's share cut into [`CHUNK`]-sized pieces from its start: the pieces the
/// scheme is called on. Shares start at multiples of the scheme's table grain, so for schemes
/// whose grain is a chunk these are the pieces of the whole batch.
fn pieces(share: Range<usize>) -> impl Iterator<Item = Range<usize>> {
    let mut at = share.start;
    std::iter::from_fn(move || {
        (at < share.end).then(|| {
            let end = (at + CHUNK).min(share.end);
            let piece = at..end;
            at = end;
            piece
        })
    })
}

/// What one thread produces for its share of a batch, when threads share the batch: output
/// labels and tables.
#[derive(Debug, Default)]
struct ShareOut<L> {
    out: Vec<L>,
    table: Vec<Block>,
}

/// Garbles circuits with scheme `S`, on one thread or several (fine-grained parallel
/// garbling, UltraSFE §4: the gates of a batch shared among threads).
#[derive(Debug)]
pub struct Garbler<S: Scheme> {
    scheme: S,
    threads: usize,
    labels: SlotArray<S::Wire>,
}

impl<S: Scheme> Clone for Garbler<S> {
    fn clone(&self) -> Self {
        Garbler::with_threads(self.scheme.clone(), self.threads)
    }
}

struct Garbling<'a, S: Scheme> {
    secret: &'a S::Secret,
}

impl<S: Scheme> Party for Garbling<'_, S> {
    type Label = S::Wire;
    fn constants(&self) -> [S::Wire; 2] {
        [
            S::constant(self.secret, false),
            S::constant(self.secret, true),
        ]
    }
    fn xor_steps(steps: &SlotSteps, range: Range<usize>, labels: &mut [S::Wire]) {
        S::xor_steps(steps, range, labels);
    }
    fn not(&self, a: S::Wire) -> S::Wire {
        S::not(self.secret, a)
    }
}

/// Garbles gates `share` of `plan` (one batch, XOR gates if `xor`) in tweak domain `domain`:
/// the output wires where `labels` says, the tables into `table`.
fn garble_share<S: Scheme>(
    scheme: &mut S,
    secret: &S::Secret,
    (plan, domain): (&Plan, u64),
    (xor, share): (bool, Range<usize>),
    mut labels: Labels<'_, S::Wire>,
    mut table: &mut [Block],
) {
    for piece in pieces(share) {
        let n = piece.len();
        let blocks = batch_table_blocks::<S>(xor, n);
        let (t, rest) = std::mem::take(&mut table).split_at_mut(blocks);
        let (gates, labels) = (slot_gates(plan, domain, piece), labels.take(n));
        if xor {
            scheme.garble_xor(secret, labels, gates, t);
        } else {
            scheme.garble_and(secret, labels, gates, t);
        }
        table = rest;
    }
}

impl<S: Scheme> Garbler<S> {
    /// A garbler using `scheme` on one thread.
    pub fn new(scheme: S) -> Self {
        Garbler::with_threads(scheme, 1)
    }

    /// A garbler using `scheme` on `threads` threads (at least one). The tables and labels do
    /// not depend on the thread count.
    pub fn with_threads(scheme: S, threads: usize) -> Self {
        Garbler {
            scheme,
            threads: threads.max(1),
            labels: SlotArray::default(),
        }
    }

    /// Garbles `plan` with the input wires `inputs` (one per input wire) and the circuit's
    /// `secret`, writing each batch's tables to `sink` as soon as they exist. Returns the
    /// output wires.
    pub fn garble(
        &mut self,
        plan: &Plan,
        secret: &S::Secret,
        inputs: &[S::Wire],
        sink: &mut impl TableSink,
    ) -> Result<&[S::Wire], Error> {
        self.garble_in(plan, 0, secret, inputs, sink)
    }

    /// [`Garbler::garble`] in tweak domain `domain` (below [`DOMAINS`]): runs of one plan
    /// under one secret (the steps of a streamed circuit) must each have their own, or their
    /// gates would share tweaks.
    pub fn garble_in(
        &mut self,
        plan: &Plan,
        domain: u64,
        secret: &S::Secret,
        inputs: &[S::Wire],
        sink: &mut impl TableSink,
    ) -> Result<&[S::Wire], Error> {
        check_inputs(plan, inputs.len())?;
        self.inputs(plan).copy_from_slice(inputs);
        self.garble_placed(plan, domain, secret, sink)
    }

    /// The slots of `plan`'s input wires, in order, in this garbler's slot array: wires placed
    /// here before [`Garbler::garble_placed`] are garbled without the copy
    /// [`Garbler::garble_in`] makes of its inputs. The slots are reused during a garbling, so
    /// the inputs are placed again before each.
    pub fn inputs(&mut self, plan: &Plan) -> &mut [S::Wire] {
        self.labels.inputs(plan)
    }

    /// [`Garbler::garble_in`] on the input wires placed with [`Garbler::inputs`].
    pub fn garble_placed(
        &mut self,
        plan: &Plan,
        domain: u64,
        secret: &S::Secret,
        sink: &mut impl TableSink,
    ) -> Result<&[S::Wire], Error> {
        check::<S>(plan, domain)?;
        let party = Garbling::<S> { secret };
        load(&party, plan, &mut self.labels)?;
        let threads = useful_threads(plan.batch_sizes(), S::TABLE_GRAIN, self.threads);
        if threads == 1 {
            for k in 0..plan.segments.len() {
                let (free, gates) = plan.segment(k);
                run_free(&party, plan, free, &mut self.labels);
                if gates.is_empty() {
                    continue;
                }
                let xor = plan.segments[k].xor;
                let table = sink.reserve(batch_table_blocks::<S>(xor, gates.len()));
                let labels = Labels::in_place(&mut self.labels);
                let run = (plan, domain);
                garble_share(&mut self.scheme, secret, run, (xor, gates), labels, table);
                sink.commit()?;
            }
        } else {
            self.garble_parallel((plan, domain, threads), &party, sink)?;
        }
        Ok(&self.labels[plan.output_slots()])
    }

    /// Garbles `plan` on `threads` threads, each batch wide enough shared among them
    /// ([`Crew`]), the others run in place by the calling thread.
    fn garble_parallel(
        &mut self,
        (plan, domain, threads): (&Plan, u64, usize),
        party: &Garbling<'_, S>,
        sink: &mut impl TableSink,
    ) -> Result<(), Error> {
        let secret = party.secret;
        let labels = RwLock::new(std::mem::take(&mut self.labels));
        let shares: Vec<Mutex<ShareOut<S::Wire>>> =
            (0..threads).map(|_| Mutex::default()).collect();
        // Thread t's share of `batch`: its outputs to its buffer, its tables to `room` (the
        // calling thread's go straight to the sink) or else to its buffer.
        let part = |scheme: &mut S, t: usize, batch: &Share, room: Option<&mut [Block]>| {
            let slots = labels.read().unwrap_or_else(PoisonError::into_inner);
            let mut dst = shares[t].lock().unwrap_or_else(PoisonError::into_inner);
            let ShareOut { out, table } = &mut *dst;
            let range = batch.range(t);
            out.resize(range.len(), S::Wire::default());
            let table = room.unwrap_or_else(|| {
                table.resize(batch_table_blocks::<S>(batch.xor, range.len()), Block::ZERO);
                table
            });
            let (run, share) = ((plan, domain), (batch.xor, range));
            let labels = Labels::Buffered { slots: &slots, out };
            garble_share(scheme, secret, run, share, labels, table);
        };
        let work = |scheme: &mut S, t: usize, batch: &Share| part(scheme, t, batch, None);
        let result = Crew::run(threads, &self.scheme, work, |crew| {
            for k in 0..plan.segments.len() {
                let (free, gates) = plan.segment(k);
                let mut l = labels.write().unwrap_or_else(PoisonError::into_inner);
                run_free(party, plan, free, &mut l);
                if gates.is_empty() {
                    continue;
                }
                let xor = plan.segments[k].xor;
                let batch = crew.share(xor, gates.clone(), S::TABLE_GRAIN);
                if !batch.is_shared() {
                    let table = sink.reserve(batch_table_blocks::<S>(xor, gates.len()));
                    let labels = Labels::in_place(&mut l);
                    garble_share(
                        crew.scheme(),
                        secret,
                        (plan, domain),
                        (xor, gates),
                        labels,
                        table,
                    );
                    sink.commit()?;
                    continue;
                }
                drop(l);
                // One batch, one commit: the stream's pieces do not depend on the threads.
                let table = sink.reserve(batch_table_blocks::<S>(xor, gates.len()));
                let (mine, theirs) =
                    table.split_at_mut(batch_table_blocks::<S>(xor, batch.range(0).len()));
                crew.batch(&batch, |scheme| part(scheme, 0, &batch, Some(mine)));
                let mut l = labels.write().unwrap_or_else(PoisonError::into_inner);
                let mut at = 0;
                for (t, share) in shares.iter().enumerate() {
                    let range = batch.range(t);
                    if range.is_empty() {
                        continue;
                    }
                    let share = share.lock().unwrap_or_else(PoisonError::into_inner);
                    if t > 0 {
                        theirs[at..at + share.table.len()].copy_from_slice(&share.table);
                        at += share.table.len();
                    }
                    scatter(plan, range, &share.out, &mut l);
                }
                sink.commit()?;
            }
            Ok(())
        });
        self.labels = labels.into_inner().unwrap_or_else(PoisonError::into_inner);
        result
    }
}

/// Evaluates circuits garbled with scheme `S`.
#[derive(Debug)]
pub struct Evaluator<S> {
    scheme: S,
    threads: usize,
    labels: SlotArray<Block>,
}

impl<S: Scheme> Clone for Evaluator<S> {
    fn clone(&self) -> Self {
        Evaluator::with_threads(self.scheme.clone(), self.threads)
    }
}

/// The evaluator's free steps: XOR labels, keep them through NOT, zero for constants.
struct Evaluating;

impl Party for Evaluating {
    type Label = Block;
    fn constants(&self) -> [Block; 2] {
        [Block::ZERO; 2]
    }
    fn xor_steps(steps: &SlotSteps, range: Range<usize>, labels: &mut [Block]) {
        steps.xor(range, labels);
    }
    fn not(&self, a: Block) -> Block {
        a
    }
}

/// Evaluates gates `share` of one batch of `plan` (in tweak domain `domain`) with their
/// tables `table`, the outputs where `labels` says.
fn evaluate_share<S: Scheme>(
    scheme: &mut S,
    (plan, domain): (&Plan, u64),
    (xor, share): (bool, Range<usize>),
    mut labels: Labels<'_, Block>,
    mut table: &[Block],
) {
    for piece in pieces(share) {
        let n = piece.len();
        let (t, rest) = table.split_at(batch_table_blocks::<S>(xor, n));
        let (gates, labels) = (slot_gates(plan, domain, piece), labels.take(n));
        if xor {
            scheme.evaluate_xor(labels, gates, t);
        } else {
            scheme.evaluate_and(labels, gates, t);
        }
        table = rest;
    }
}

/// Where an evaluation stands: the next segment of its plan, and whether that segment's
/// batch waits for its tables. Made by [`Evaluator::start`], moved on by
/// [`Evaluator::next_tables`] and [`Evaluator::feed`], so an evaluation can wait for each
/// batch's tables (from a peer, one message at a time).
#[derive(Debug)]
pub struct Evaluation<'p> {
    plan: &'p Plan,
    cursor: Cursor,
}

/// An evaluation's place in a plan held elsewhere.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor {
    domain: u64,
    at: usize,
    pending: bool,
}

impl<S: Scheme> Evaluator<S> {
    /// An evaluator using `scheme` on one thread.
    pub fn new(scheme: S) -> Self {
        Evaluator::with_threads(scheme, 1)
    }

    /// An evaluator using `scheme` on `threads` threads (at least one) in
    /// [`Evaluator::evaluate`]; the step-by-step API runs on one.
    pub fn with_threads(scheme: S, threads: usize) -> Self {
        Evaluator {
            scheme,
            threads: threads.max(1),
            labels: SlotArray::default(),
        }
    }

    /// Starts evaluating `plan` on the active input labels `inputs`.
    pub fn start<'p>(&mut self, plan: &'p Plan, inputs: &[Block]) -> Result<Evaluation<'p>, Error> {
        self.start_in(plan, 0, inputs)
    }

    /// [`Evaluator::start`] in tweak domain `domain` (see [`Garbler::garble_in`]).
    pub fn start_in<'p>(
        &mut self,
        plan: &'p Plan,
        domain: u64,
        inputs: &[Block],
    ) -> Result<Evaluation<'p>, Error> {
        check_inputs(plan, inputs.len())?;
        self.inputs(plan).copy_from_slice(inputs);
        self.start_placed(plan, domain)
    }

    /// The slots of `plan`'s active input labels in this evaluator's slot array (see
    /// [`Garbler::inputs`]).
    pub fn inputs(&mut self, plan: &Plan) -> &mut [Block] {
        self.labels.inputs(plan)
    }

    /// [`Evaluator::start_in`] on the labels placed with [`Evaluator::inputs`].
    pub fn start_placed<'p>(
        &mut self,
        plan: &'p Plan,
        domain: u64,
    ) -> Result<Evaluation<'p>, Error> {
        let cursor = self.start_cursor(plan, domain)?;
        Ok(Evaluation { plan, cursor })
    }

    /// [`Evaluator::start_placed`] for a plan the caller keeps beside the cursor.
    pub(crate) fn start_cursor(&mut self, plan: &Plan, domain: u64) -> Result<Cursor, Error> {
        check::<S>(plan, domain)?;
        load(&Evaluating, plan, &mut self.labels)?;
        Ok(Cursor {
            domain,
            at: 0,
            pending: false,
        })
    }

    /// Runs the free steps up to the next batch and returns how many table blocks it needs,
    /// or `None` when the circuit is done.
    pub fn next_tables(&mut self, ev: &mut Evaluation<'_>) -> Option<usize> {
        self.next_tables_at(ev.plan, &mut ev.cursor)
    }

    /// [`Evaluator::next_tables`] at `cursor` in `plan`.
    pub(crate) fn next_tables_at(&mut self, plan: &Plan, ev: &mut Cursor) -> Option<usize> {
        while !ev.pending {
            let (free, gates) = plan.segments.get(ev.at).map(|_| plan.segment(ev.at))?;
            run_free(&Evaluating, plan, free, &mut self.labels);
            if gates.is_empty() {
                ev.at += 1;
            } else {
                ev.pending = true;
            }
        }
        let (_, gates) = plan.segment(ev.at);
        Some(batch_table_blocks::<S>(
            plan.segments[ev.at].xor,
            gates.len(),
        ))
    }

    /// Evaluates the waiting batch with its tables (as many blocks as
    /// [`Evaluator::next_tables`] said).
    pub fn feed(&mut self, ev: &mut Evaluation<'_>, table: &[Block]) -> Result<(), Error> {
        self.feed_at(ev.plan, &mut ev.cursor, table)
    }

    /// [`Evaluator::feed`] at `cursor` in `plan`.
    pub(crate) fn feed_at(
        &mut self,
        plan: &Plan,
        ev: &mut Cursor,
        table: &[Block],
    ) -> Result<(), Error> {
        if !ev.pending {
            return Err(Error::Inputs("tables fed with no batch waiting".into()));
        }
        let (_, gates) = plan.segment(ev.at);
        let xor = plan.segments[ev.at].xor;
        let need = batch_table_blocks::<S>(xor, gates.len());
        if table.len() != need {
            return Err(Error::Truncated {
                needed: need,
                available: table.len(),
            });
        }
        let (batch, run) = ((xor, gates), (plan, ev.domain));
        let labels = Labels::in_place(&mut self.labels);
        evaluate_share(&mut self.scheme, run, batch, labels, table);
        ev.pending = false;
        ev.at += 1;
        Ok(())
    }

    /// The active output labels of a finished evaluation.
    pub fn outputs(&mut self, ev: &Evaluation<'_>) -> &[Block] {
        self.outputs_of(ev.plan)
    }

    /// The active output labels of a finished evaluation of `plan`.
    pub(crate) fn outputs_of(&self, plan: &Plan) -> &[Block] {
        &self.labels[plan.output_slots()]
    }

    /// Evaluates `plan` on the active input labels `inputs`, reading tables from `source`
    /// (which must then be exhausted). Returns the active output labels.
    pub fn evaluate(
        &mut self,
        plan: &Plan,
        inputs: &[Block],
        source: &mut impl TableSource,
    ) -> Result<&[Block], Error> {
        self.evaluate_in(plan, 0, inputs, source)
    }

    /// [`Evaluator::evaluate`] in tweak domain `domain` (see [`Garbler::garble_in`]).
    pub fn evaluate_in(
        &mut self,
        plan: &Plan,
        domain: u64,
        inputs: &[Block],
        source: &mut impl TableSource,
    ) -> Result<&[Block], Error> {
        check_inputs(plan, inputs.len())?;
        self.inputs(plan).copy_from_slice(inputs);
        self.evaluate_placed(plan, domain, source)
    }

    /// [`Evaluator::evaluate_in`] on the labels placed with [`Evaluator::inputs`].
    pub fn evaluate_placed(
        &mut self,
        plan: &Plan,
        domain: u64,
        source: &mut impl TableSource,
    ) -> Result<&[Block], Error> {
        let mut ev = self.start_placed(plan, domain)?;
        let threads = useful_threads(plan.batch_sizes(), S::TABLE_GRAIN, self.threads);
        if threads == 1 {
            while let Some(n) = self.next_tables(&mut ev) {
                let table = source.take(n)?;
                self.feed(&mut ev, table)?;
            }
        } else {
            self.evaluate_parallel((plan, domain, threads), source)?;
        }
        source.finish()?;
        Ok(self.outputs_of(plan))
    }

    /// Evaluates `plan` on `threads` threads, as [`Garbler::garble_parallel`] garbles it.
    fn evaluate_parallel(
        &mut self,
        (plan, domain, threads): (&Plan, u64, usize),
        source: &mut impl TableSource,
    ) -> Result<(), Error> {
        let labels = RwLock::new(std::mem::take(&mut self.labels));
        // The batch's tables, copied out of the source so every thread can read them.
        let tables = RwLock::new(Vec::new());
        let outs: Vec<Mutex<Vec<Block>>> = (0..threads).map(|_| Mutex::default()).collect();
        let work = |scheme: &mut S, t: usize, batch: &Share| {
            let slots = labels.read().unwrap_or_else(PoisonError::into_inner);
            let tables = tables.read().unwrap_or_else(PoisonError::into_inner);
            let mut out = outs[t].lock().unwrap_or_else(PoisonError::into_inner);
            let range = batch.range(t);
            let skip = batch_table_blocks::<S>(batch.xor, range.start - batch.gates.start);
            let table = tables.get(skip..).unwrap_or_default();
            out.resize(range.len(), Block::ZERO);
            let labels = Labels::Buffered {
                slots: &slots,
                out: &mut out,
            };
            evaluate_share(scheme, (plan, domain), (batch.xor, range), labels, table);
        };
        let result = Crew::run(threads, &self.scheme, work, |crew| {
            for k in 0..plan.segments.len() {
                let (free, gates) = plan.segment(k);
                let mut l = labels.write().unwrap_or_else(PoisonError::into_inner);
                run_free(&Evaluating, plan, free, &mut l);
                if gates.is_empty() {
                    continue;
                }
                let xor = plan.segments[k].xor;
                let batch = crew.share(xor, gates.clone(), S::TABLE_GRAIN);
                if !batch.is_shared() {
                    let table = source.take(batch_table_blocks::<S>(xor, gates.len()))?;
                    let labels = Labels::in_place(&mut l);
                    evaluate_share(crew.scheme(), (plan, domain), (xor, gates), labels, table);
                    continue;
                }
                drop(l);
                {
                    let table = source.take(batch_table_blocks::<S>(xor, gates.len()))?;
                    let mut t = tables.write().unwrap_or_else(PoisonError::into_inner);
                    t.clear();
                    t.extend_from_slice(table);
                }
                crew.batch(&batch, |scheme| work(scheme, 0, &batch));
                let mut l = labels.write().unwrap_or_else(PoisonError::into_inner);
                for (t, out) in outs.iter().enumerate() {
                    let range = batch.range(t);
                    if !range.is_empty() {
                        let out = out.lock().unwrap_or_else(PoisonError::into_inner);
                        scatter(plan, range, &out, &mut l);
                    }
                }
            }
            Ok(())
        });
        self.labels = labels.into_inner().unwrap_or_else(PoisonError::into_inner);
        result
    }
}
