//! The order in which gates are garbled and where their labels live (VASA §4.1).
//!
//! A plan is compiled once per circuit and batching strategy and shared by garbler and
//! evaluator, so both process the AND gates, and so read and write the tables, in one order.
//! Labels live in slots, not one per wire: a slot is released after the last step that reads its
//! wire and reused, so memory follows the live wires, not the circuit's size.
//!
//! For free-XOR schemes only AND gates are batched. Schemes without free XOR (the PRF-based
//! scheme of Gueron, Lindell, Nof, Pinkas) need AES for XOR gates too: their plans batch XOR
//! gates in a second queue that shares the gate index with the AND queue (VASA §4.3.1).

use tessera_circuit::{Circuit, Gate, GateKind};
use tessera_core::Block;
use tessera_core::hazmat::{SlotGates, SlotSteps};

/// The queue length of [`Batching::DYNAMIC`]: 1024 gates, 4096 hashes to garble.
pub const DYNAMIC_MAX: usize = 1024;

/// Whether XOR gates are free (free-XOR schemes) or garbled in batches like AND gates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XorGates {
    /// XOR gates cost nothing: the engine XORs labels in place.
    Free,
    /// XOR gates are hashed and write tables: batched in their own queue.
    Garbled,
}

impl XorGates {
    /// Whether gates of `kind` go through the scheme in batches.
    fn batched(self, kind: GateKind) -> bool {
        kind == GateKind::And || (self == XorGates::Garbled && kind == GateKind::Xor)
    }
}

/// How AND gates are grouped into batches for the hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Batching {
    /// VASA §4.1.1: walk the gates in circuit order, queue AND gates, and hash the queue when a
    /// gate reads a queued output or the queue holds `max` gates (regular early execution, so
    /// the queued labels are still in cache when they are hashed).
    Dynamic {
        /// Queue length that triggers execution.
        max: usize,
    },
    /// VASA §4.1.2: all AND gates at one AND-depth form one batch; the free gates between two
    /// layers run first. Where that would hold more than 2^18 labels at once, the levels are
    /// counted within windows of 2^16 gates in circuit order instead, one window after another.
    Layered,
}

impl Batching {
    /// Dynamic batching with a queue of 1024 gates (`DYNAMIC_MAX`).
    pub const DYNAMIC: Batching = Batching::Dynamic { max: DYNAMIC_MAX };

    /// No batching: a queue of one gate, so each gate is hashed as soon as it is reached, with
    /// nothing deferred, through the same kernels. The reference against which VASA's Table 4
    /// (seed 000, §5.2) measures batching ("Ref": ABY hashing gate by gate).
    pub const NONE: Batching = Batching::Dynamic { max: 1 };

    /// The strategy a circuit gets by default: layering where dynamic batching would leave the
    /// AES pipeline short of independent calls (mean batch below 32 AND gates, so below 128
    /// hashes), dynamic batching otherwise, since it keeps labels in cache and memory small.
    /// The threshold comes from `tessera bench garble` on the library's circuits.
    pub fn default_for(circuit: &Circuit) -> Batching {
        Batching::default_in(circuit, &mut Scratch::default())
    }

    /// [`Batching::default_for`] with the compiler's working arrays `scratch`.
    fn default_in(circuit: &Circuit, scratch: &mut Scratch) -> Batching {
        // The batch sizes only: no need to keep the order.
        let mut counts = Counts::default();
        dynamic_order(circuit, DYNAMIC_MAX, XorGates::Free, &mut counts, scratch);
        if counts.gates > 0 && (counts.gates as f64) < 32.0 * counts.batches as f64 {
            Batching::Layered
        } else {
            Batching::DYNAMIC
        }
    }

    /// Name as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Batching::Dynamic { max } if max <= 1 => "none",
            Batching::Dynamic { .. } => "dynamic",
            Batching::Layered => "layered",
        }
    }
}

/// Gates handed to the scheme at once: 128 AND gates are 512 hashes to garble, and the
/// schemes' buffers (about 24 KiB) stay in a 32 KiB L1 cache. A batch's tables are its
/// chunks' tables one after another, so the stream is the same however the chunks are shared
/// among threads.
pub(crate) const CHUNK: usize = 128;

/// The most gates in one batch: a wider layer is split into batches of this size, so the
/// slots a batch holds beyond the live wires (its outputs are placed before its inputs are
/// freed) and the tables sent at once (128 KiB for half-gates) stay bounded whatever the
/// circuit's width.
pub(crate) const BATCH_MAX: usize = 4096;

/// A slot index.
pub type Slot = u32;

/// The slot that always holds the label of the constant 0 (the evaluator's zero block).
pub const ZERO_SLOT: Slot = 0;
/// The slot that always holds the label of the constant 1.
pub const ONE_SLOT: Slot = 1;
/// Slots reserved for the constants; the inputs follow them, in order.
pub const RESERVED: usize = 2;

/// Struct-of-arrays slot indices: operation k reads `a[k]` and `b[k]` and writes `out[k]`.
#[derive(Clone, Debug, Default)]
pub(crate) struct SlotOps {
    pub a: Vec<Slot>,
    pub b: Vec<Slot>,
    pub out: Vec<Slot>,
}

impl SlotOps {
    fn with_capacity(n: usize) -> Self {
        SlotOps {
            a: Vec::with_capacity(n),
            b: Vec::with_capacity(n),
            out: Vec::with_capacity(n),
        }
    }

    fn push(&mut self, a: Slot, b: Slot, out: Slot) {
        self.a.push(a);
        self.b.push(b);
        self.out.push(out);
    }

    fn len(&self) -> usize {
        self.out.len()
    }
}

/// A stretch of the plan: free operations `free[..free_end]` from where the last segment
/// stopped, then the batch `gates[..gates_end]` (empty for the last segment), all AND or (for
/// garbled XOR) all XOR gates, independent of each other, none writing a slot that one of
/// them reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    pub free_end: u32,
    pub gates_end: u32,
    pub xor: bool,
}

/// A compiled schedule for one circuit: flat streams of slot indices, with no per-gate
/// dispatch left for the engine.
///
/// * Free operations are one stream. With free XOR every one is `out = a ⊕ b`: a NOT gate
///   XORs the constant-1 slot, a copy the constant-0 slot, a constant copies one of them.
///   With garbled XOR (no XOR gates are free) they are `out = a`, negated where `b` is the
///   constant-1 slot.
/// * Batched gates are one stream with their gate index (the hash tweak, so every strategy
///   produces the same labels); the scheme reads their inputs straight from the slot array.
/// * Slots: the two constants, the inputs in order, the outputs in order (never reused, so
///   inputs are loaded by one copy and output labels read where they lie), then the other
///   wires' slots, each reused once its wire is read for the last time. A batch writing no
///   circuit output writes consecutive slots, so the kernels store its outputs with plain
///   stores rather than scattering them (on AES-128, 4 % faster garbling, 3 % evaluation).
///
/// Every index is below the slot count by construction.
#[derive(Clone, Debug)]
pub struct Plan {
    pub(crate) free: SlotSteps,
    pub(crate) gates: SlotOps,
    pub(crate) ids: Vec<u32>,
    pub(crate) segments: Vec<Segment>,
    /// Inputs: slots `RESERVED..RESERVED + num_inputs`, in order, so loading them is one copy.
    pub(crate) num_inputs: usize,
    /// Outputs: the slots right after the inputs, in order, written by their gates and never
    /// reused, so the output labels are read where they lie.
    pub(crate) num_outputs: usize,
    pub(crate) num_slots: usize,
    batching: Batching,
    xor: XorGates,
    batches: usize,
    and_gates: usize,
    xor_gates: usize,
}

/// Sizes of a plan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanStats {
    /// AND gates.
    pub and_gates: usize,
    /// XOR gates.
    pub xor_gates: usize,
    /// Number of batches (AND and, for garbled XOR, XOR batches).
    pub batches: usize,
    /// Label slots (the most labels alive at once, plus the two constants).
    pub slots: usize,
}

impl PlanStats {
    /// AND gates per batch on average (free-XOR plans).
    pub fn mean_batch(&self) -> f64 {
        self.and_gates as f64 / self.batches.max(1) as f64
    }
}

/// Gate order before slot assignment: a free gate (its circuit index), or a batch of at
/// most [`BATCH_MAX`] AND (or garbled XOR) gates (positions `start..end` of
/// [`Schedule::order`]). Gate indices fit in 32 bits, as wires do, so an item takes 12 bytes
/// (a circuit of 10^8 gates orders in at most 1.2 GB).
#[derive(Clone, Copy)]
enum Item {
    Free(u32),
    Batch(u32, u32),
}

impl Item {
    /// The item's gates (circuit indices), with the batched gates' `order`.
    fn gates<'a>(&'a self, order: &'a [u32]) -> &'a [u32] {
        match self {
            Item::Free(i) => std::slice::from_ref(i),
            &Item::Batch(start, end) => &order[start as usize..end as usize],
        }
    }
}

/// Where an ordering puts the gates: free gates one by one, batched gates a batch at a time.
trait Order {
    fn free(&mut self, gate: usize);
    fn batch(&mut self, gates: impl ExactSizeIterator<Item = usize>);
}

/// An order for [`assign_slots`]: the items, and the batched gates' circuit indices in
/// execution order.
#[derive(Default)]
struct Schedule {
    items: Vec<Item>,
    order: Vec<u32>,
}

impl Order for Schedule {
    fn free(&mut self, gate: usize) {
        self.items.push(Item::Free(gate as u32));
    }

    /// Appends the batch, split into batches of at most [`BATCH_MAX`] gates.
    fn batch(&mut self, gates: impl ExactSizeIterator<Item = usize>) {
        let start = self.order.len();
        self.order.extend(gates.map(|i| i as u32));
        let end = self.order.len();
        self.items.extend(
            (start..end)
                .step_by(BATCH_MAX)
                .map(|s| Item::Batch(s as u32, (s + BATCH_MAX).min(end) as u32)),
        );
    }
}

impl Schedule {
    /// An empty schedule with room for every gate of `c` (address space only: pages are
    /// touched as the schedule grows, and it never grows by copying).
    fn for_circuit(c: &Circuit) -> Self {
        Schedule {
            items: Vec::with_capacity(c.gates.len()),
            order: Vec::with_capacity(c.gates.len()),
        }
    }
}

/// Per-wire working arrays that the compiler's passes take in turn. A fresh array of 4 bytes
/// a wire costs a page fault every 1024 wires (BioMatch: 100 MB and 25 000 faults each, and a
/// compilation used eight), so the passes of one compilation share three.
#[derive(Default)]
struct Scratch {
    wires: [Vec<u32>; 3],
}

impl Scratch {
    /// `K` (at most 3) arrays of `n` entries, array k filled with `fill[k]`; the others are
    /// freed, so a pass holds no more than it uses.
    fn arrays<const K: usize>(&mut self, n: usize, fill: [u32; K]) -> [&mut [u32]; K] {
        const { assert!(K <= 3, "three working arrays") };
        let (used, unused) = self.wires.split_at_mut(K);
        unused.iter_mut().for_each(|array| *array = Vec::new());
        let mut wires = used.iter_mut();
        fill.map(|value| {
            let array = wires.next().expect("K ≤ 3");
            array.clear();
            array.resize(n, value);
            array.as_mut_slice()
        })
    }
}

/// Only the number of batches and of batched gates: what [`Batching::default_for`] weighs.
#[derive(Default)]
struct Counts {
    batches: usize,
    gates: usize,
}

impl Order for Counts {
    fn free(&mut self, _gate: usize) {}

    fn batch(&mut self, gates: impl ExactSizeIterator<Item = usize>) {
        self.batches += 1;
        self.gates += gates.len();
    }
}

impl Plan {
    /// Compiles `circuit` (which must be valid; see [`Circuit::check`]) for `batching` and a
    /// free-XOR scheme.
    pub fn new(circuit: &Circuit, batching: Batching) -> Plan {
        Plan::with_xor(circuit, batching, XorGates::Free)
    }

    /// Compiles `circuit` for `batching`, with XOR gates free or garbled in batches (a scheme's
    /// `Scheme::XOR_GATES`).
    pub fn with_xor(circuit: &Circuit, batching: Batching, xor: XorGates) -> Plan {
        Plan::compile(circuit, (batching, xor), &mut Scratch::default())
    }

    /// [`Plan::with_xor`] with the compiler's working arrays `scratch`.
    fn compile(
        circuit: &Circuit,
        (batching, xor): (Batching, XorGates),
        scratch: &mut Scratch,
    ) -> Plan {
        let c = circuit;
        match batching {
            Batching::Dynamic { max } => {
                let mut schedule = Schedule::for_circuit(c);
                dynamic_order(c, max.max(1), xor, &mut schedule, scratch);
                assign_slots(c, (batching, xor), &schedule, scratch)
            }
            Batching::Layered => {
                // Levelled whole only where the lower bound leaves room for it (no need to
                // count where every wire fits: a 2^16-gate window of a file, say).
                let fits = RESERVED + c.num_wires as usize <= LAYER_SLOTS
                    || RESERVED + levelled_live(c, xor, scratch) <= LAYER_SLOTS;
                let whole = fits
                    .then(|| Plan::layered(c, xor, c.gates.len(), scratch))
                    .filter(|whole| whole.num_slots <= LAYER_SLOTS);
                whole.unwrap_or_else(|| Plan::layered(c, xor, LAYER_WINDOW, scratch))
            }
        }
    }

    /// Compiles `circuit` for the batching it gets by default ([`Batching::default_for`]) and
    /// a scheme with `xor` gates: what a protocol runs.
    pub fn default_for(circuit: &Circuit, xor: XorGates) -> Plan {
        let mut scratch = Scratch::default();
        let batching = Batching::default_in(circuit, &mut scratch);
        Plan::compile(circuit, (batching, xor), &mut scratch)
    }

    /// [`Batching::Layered`] with the levels counted within windows of `window` gates in
    /// circuit order, one window after another: what [`Plan::with_xor`] compiles where
    /// levelling the whole circuit would hold more than 2^18 labels at once.
    pub fn layered_in_windows(circuit: &Circuit, xor: XorGates, window: usize) -> Plan {
        Plan::layered(circuit, xor, window, &mut Scratch::default())
    }

    /// [`Batching::Layered`] in windows of `window` gates, with the compiler's working arrays
    /// `scratch`.
    fn layered(c: &Circuit, xor: XorGates, window: usize, scratch: &mut Scratch) -> Plan {
        let schedule = layered_order(c, xor, window, scratch);
        assign_slots(c, (Batching::Layered, xor), &schedule, scratch)
    }

    /// The strategy it was compiled for.
    pub fn batching(&self) -> Batching {
        self.batching
    }

    /// Whether it garbles XOR gates.
    pub fn xor_gates(&self) -> XorGates {
        self.xor
    }

    /// Its sizes.
    pub fn stats(&self) -> PlanStats {
        PlanStats {
            and_gates: self.and_gates,
            xor_gates: self.xor_gates,
            batches: self.batches,
            slots: self.num_slots,
        }
    }

    /// Gates in each batch, in order: what decides whether threads can share any.
    pub(crate) fn batch_sizes(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.segments.len()).map(|k| self.segment(k).1.len())
    }

    /// Number of input wires the plan expects labels for.
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    /// Number of output wires.
    pub fn num_outputs(&self) -> usize {
        self.num_outputs
    }

    /// The slots of the input labels.
    pub fn input_slots(&self) -> std::ops::Range<usize> {
        RESERVED..RESERVED + self.num_inputs
    }

    /// The slots of the output labels.
    pub fn output_slots(&self) -> std::ops::Range<usize> {
        let start = RESERVED + self.num_inputs;
        start..start + self.num_outputs
    }
}

/// A free-XOR plan as another protocol walks it: a protocol that keeps more than one label per
/// wire (authenticated garbling keeps a label, a mask's MAC and key and more) runs each
/// segment's free steps on each of its slot arrays, then its batch of AND gates.
impl Plan {
    /// How many segments: each is free steps, then a batch of AND gates (maybe none).
    pub fn segments(&self) -> usize {
        self.segments.len()
    }

    /// Slots a slot array for this plan needs.
    pub fn slots(&self) -> usize {
        self.num_slots
    }

    /// Runs segment `k`'s free steps on `slots`: each writes a ⊕ b, the constants read from
    /// [`ZERO_SLOT`] and [`ONE_SLOT`] (NOT is XOR with the constant 1, a constant a copy of its
    /// slot).
    ///
    /// # Panics
    /// If the plan garbles XOR gates, `k` is not a segment or `slots` is shorter than
    /// [`Plan::slots`].
    pub fn run_free(&self, k: usize, slots: &mut [Block]) {
        assert_eq!(self.xor, XorGates::Free, "free steps of a free-XOR plan");
        let (free, _) = self.segment(k);
        self.free.xor(free, slots);
    }

    /// Segment `k`'s AND gates as the kernels read them, tweaks in `domain`.
    ///
    /// # Panics
    /// If `k` is not a segment.
    pub fn batch(&self, k: usize, domain: u64) -> SlotGates<'_> {
        let (_, g) = self.segment(k);
        SlotGates {
            a: &self.gates.a[g.clone()],
            b: &self.gates.b[g.clone()],
            out: &self.gates.out[g.clone()],
            ids: &self.ids[g],
            domain,
        }
    }
}

impl Plan {
    /// Segment k's free operations and batched gates: index ranges into `free` and `gates`.
    pub(crate) fn segment(&self, k: usize) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let (f0, g0) = match k.checked_sub(1) {
            Some(p) => (
                self.segments[p].free_end as usize,
                self.segments[p].gates_end as usize,
            ),
            None => (0, 0),
        };
        let s = self.segments[k];
        (f0..s.free_end as usize, g0..s.gates_end as usize)
    }
}

/// Dynamic batching's order (VASA §4.1.1) into `to`: AND gates (and garbled XOR gates, in a
/// queue of their own) queue up until a gate reads a queued gate's output or a queue holds
/// `max` gates; then the AND queue runs, then the XOR queue.
fn dynamic_order(
    c: &Circuit,
    max: usize,
    xor: XorGates,
    to: &mut impl Order,
    scratch: &mut Scratch,
) {
    let mut queue: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    // queued[w] == epoch: wire w is the output of a gate queued since the last flush.
    let [queued] = scratch.arrays(c.num_wires as usize, [0]);
    let mut epoch = 1u32;
    let flush = |queue: &mut [Vec<usize>; 2], to: &mut _| {
        for q in queue.iter_mut().filter(|q| !q.is_empty()) {
            Order::batch(to, q.drain(..));
        }
    };
    for (i, g) in c.gates.iter().enumerate() {
        if g.inputs()
            .iter()
            .any(|&k| queued[g.input(k) as usize] == epoch)
        {
            flush(&mut queue, to);
            epoch += 1;
        }
        if xor.batched(g.kind) {
            let which = usize::from(g.kind == GateKind::Xor);
            queue[which].push(i);
            queued[g.out as usize] = epoch;
            if queue[which].len() >= max {
                flush(&mut queue, to);
                epoch += 1;
            }
        } else {
            to.free(i);
        }
    }
    flush(&mut queue, to);
}

/// The most slots a plan levelled over the whole circuit may take (4 MiB of labels) before the
/// levels are taken within windows of [`LAYER_WINDOW`] gates instead: levelling a whole
/// circuit of many independent parts keeps one level of every part live at once (BioMatch's
/// 512 distances: 1.75 M slots, and 3× slower for it), while parts laid one after another
/// (MExp's 32 exponentiations) need the whole circuit in view to be batched at all.
const LAYER_SLOTS: usize = 1 << 18;

/// Gates in circuit order levelled together where the whole circuit would take too many slots.
const LAYER_WINDOW: usize = 1 << 16;

/// A lower bound on the slots (besides the constants) of the layered order over the whole
/// circuit, found without building it: the most wires that hold a slot across one boundary
/// between its steps (step 2L: the free gates of level L; step 2L − 1: the batches of level L,
/// levels as [`tessera_circuit::analysis::depths`] counts batched gates). A wire holds its
/// slot across the boundaries after the step that writes it (inputs from the start) up to the
/// last step that reads it; outputs hold theirs throughout, as [`assign_slots`] places them.
/// One pass in circuit order.
fn levelled_live(c: &Circuit, xor: XorGates, scratch: &mut Scratch) -> usize {
    let n = c.num_wires as usize;
    let outputs = c.output_start() as usize;
    // Input wires that are not outputs too.
    let inputs = (c.num_input_wires() as usize).min(outputs);
    // Per wire: its level (the batched gates on the longest path to it), and 1 + the last
    // boundary it holds a slot across, or its first if none (so it counts nowhere).
    let [level, end] = scratch.arrays(n, [0, 0]);
    // live[k] − live[k − 1], for the boundaries k: +1 where a wire's slot starts to be held,
    // −1 after the last boundary it is held across.
    let mut change = vec![0i64; 2];
    let add = |change: &mut Vec<i64>, k: usize, d: i64| {
        if change.len() <= k {
            change.resize(k + 1, 0);
        }
        change[k] += d;
    };
    // Inputs hold theirs from the start, outputs from the start to the end.
    add(&mut change, 0, (inputs + (n - outputs)) as i64);
    end[..inputs].fill(1);
    let mut steps = 0;
    for g in &c.gates {
        let reads = || g.inputs().iter().map(|&k| g.input(k) as usize);
        let batched = xor.batched(g.kind);
        let l = reads().map(|w| level[w]).max().unwrap_or(0) + u32::from(batched);
        let step = if batched { 2 * l - 1 } else { 2 * l };
        for w in reads() {
            end[w] = end[w].max(step + 1);
        }
        let out = g.out as usize;
        level[out] = l;
        if out < outputs {
            add(&mut change, step as usize + 1, 1);
            end[out] = step + 1;
        }
        steps = steps.max(step + 1);
    }
    add(&mut change, steps as usize + 1, -((n - outputs) as i64));
    for &e in &end[..outputs] {
        add(&mut change, e as usize, -1);
    }
    let mut live = 0i64;
    change
        .iter()
        .map(|d| {
            live += d;
            live
        })
        .max()
        .unwrap_or(0) as usize
}

/// The key of a batched AND gate in [`layered_order`]'s sort within a level, after every free
/// gate's depth (a depth is at most the gates of a window, below `u32::MAX - 1`, as gate
/// indices fit in 32 bits).
const AND_KEY: u32 = u32::MAX - 1;
/// The key of a batched XOR gate, after the AND gates.
const XOR_KEY: u32 = u32::MAX;

/// Layered order (VASA §4.1.2) of windows of `size` gates in circuit order, one after
/// another: in each, the free gates of level L, then the AND (and garbled XOR) batches of
/// level L + 1, for each L, levels counted from the window's start.
fn layered_order(c: &Circuit, xor: XorGates, size: usize, scratch: &mut Scratch) -> Schedule {
    let n = c.num_wires as usize;
    // Per wire, within the window that wrote it: the batched gates on the longest path from
    // the window's start (the gate included), and a free gate's depth among the free gates of
    // its level (1 + the deepest input written by a free gate of the same level). Wires from
    // before the window count as depth 0.
    let [level, chain, window_of] = scratch.arrays(n, [0, 0, u32::MAX]);
    let mut schedule = Schedule::for_circuit(c);
    let size = size.max(1);
    // Per gate of a window: its level and its key within the level (a free gate's depth, then
    // AND, then XOR); the window's gates sorted by level (counting), then by key and index.
    let mut placed: Vec<(u32, u32)> = Vec::new();
    let (mut by_key, mut by_level, mut starts) = (Vec::new(), Vec::new(), Vec::new());
    for (window, gates) in c.gates.chunks(size).enumerate() {
        let first = window * size;
        let window = window as u32;
        let in_window = |w: usize, window_of: &[u32]| window_of[w] == window;
        placed.clear();
        // The most levels and the deepest free gate in the window.
        let (mut levels, mut depths) = (0, 0);
        for g in gates {
            let reads = || g.inputs().iter().map(|&k| g.input(k) as usize);
            let below = reads()
                .filter(|&w| in_window(w, window_of))
                .map(|w| level[w])
                .max()
                .unwrap_or(0);
            let out = g.out as usize;
            window_of[out] = window;
            let key = if xor.batched(g.kind) {
                level[out] = below + 1;
                if g.kind == GateKind::Xor {
                    XOR_KEY
                } else {
                    AND_KEY
                }
            } else {
                let d = reads()
                    .filter(|&w| in_window(w, window_of) && level[w] == below)
                    .map(|w| chain[w])
                    .max()
                    .unwrap_or(0)
                    + 1;
                (level[out], chain[out]) = (below, d);
                depths = depths.max(d);
                d
            };
            levels = levels.max(below as usize + 1);
            placed.push((below, key));
        }
        // Stably by key, then stably by level: by (level, key, index), without comparing.
        let rank = |key: u32| match key {
            AND_KEY => depths as usize + 1,
            XOR_KEY => depths as usize + 2,
            d => d as usize,
        };
        let all = 0..placed.len() as u32;
        let bucket = |j: u32| rank(placed[j as usize].1);
        counting_sort(all, bucket, depths as usize + 3, &mut starts, &mut by_key);
        let bucket = |j: u32| placed[j as usize].0 as usize;
        counting_sort(
            by_key.iter().copied(),
            bucket,
            levels,
            &mut starts,
            &mut by_level,
        );
        // Each level: its free gates by depth (then in circuit order, so inputs still come
        // first: gates next to each other are then independent, and the engine's loads need
        // not wait for the stores just before them), then the AND batch, then the XOR batch.
        for level in starts.windows(2).map(|w| &by_level[w[0]..w[1]]) {
            let key = |j: &u32| placed[*j as usize].1;
            let frees = level.partition_point(|j| key(j) < AND_KEY);
            let ands = level.partition_point(|j| key(j) < XOR_KEY);
            let gate = |j: &u32| first + *j as usize;
            level[..frees].iter().for_each(|j| schedule.free(gate(j)));
            for batch in [&level[frees..ands], &level[ands..]] {
                if !batch.is_empty() {
                    schedule.batch(batch.iter().map(gate));
                }
            }
        }
    }
    schedule
}

/// `items` sorted stably by `bucket` (each below `buckets`) into `out`, and where each bucket
/// starts in it into `starts` (`buckets + 1` entries, the last the end).
fn counting_sort(
    items: impl Iterator<Item = u32> + Clone,
    bucket: impl Fn(u32) -> usize,
    buckets: usize,
    starts: &mut Vec<usize>,
    out: &mut Vec<u32>,
) {
    starts.clear();
    starts.resize(buckets + 1, 0);
    items.clone().for_each(|i| starts[bucket(i) + 1] += 1);
    for b in 1..=buckets {
        starts[b] += starts[b - 1];
    }
    out.clear();
    out.resize(starts[buckets], 0);
    // starts[b] moves from bucket b's start to its end (bucket b + 1's start) as it fills.
    for i in items {
        let at = &mut starts[bucket(i)];
        out[*at] = i;
        *at += 1;
    }
    starts.rotate_right(1);
    starts[0] = 0;
}

/// Items between the one [`assign_slots`] works on and the one whose gate it asks for.
const AHEAD: usize = 16;

/// Places labels in slots: a wire's slot is freed after the last item that reads it (never for
/// outputs) and reused by later writes. A free gate reads before it writes, so it may write
/// the slot it frees; a batch never writes a slot it reads, since the engine writes its
/// outputs in place while other gates of the batch are still being read. Slots 0 and 1 hold
/// the constants.
fn assign_slots(
    c: &Circuit,
    (batching, xor): (Batching, XorGates),
    Schedule { items, order }: &Schedule,
    scratch: &mut Scratch,
) -> Plan {
    let n = c.num_wires as usize;
    let gate_reads = |i: u32| {
        let g = &c.gates[i as usize];
        g.inputs().iter().map(move |&k| g.input(k) as usize)
    };
    // The gates of a layered order are read out of circuit order, and a window of them is
    // about as large as a core's L2 cache: ask for the first gate of an item a few items
    // ahead, so its miss overlaps the work between (a batch's own gates are independent
    // loads, which overlap without help).
    let ahead = |pos: usize| {
        let next = items.get(pos + AHEAD).map(|item| item.gates(order));
        if let Some(&i) = next.and_then(|gates| gates.first()) {
            tessera_core::hazmat::hint::prefetch_value(&c.gates[i as usize]);
        }
    };
    // last[w]: 1 + the position of the last item reading w; 0: never read; MAX: an output.
    let [last, slot_of] = scratch.arrays(n, [0, Slot::MAX]);
    for (pos, item) in items.iter().enumerate() {
        ahead(pos);
        for &i in item.gates(order) {
            gate_reads(i).for_each(|w| last[w] = pos as u32 + 1);
        }
    }
    last[c.output_start() as usize..].fill(u32::MAX);

    let num_in = c.num_input_wires() as usize;
    let num_out = c.num_output_wires() as usize;
    // Output wires are the last ones, apart from the inputs (the circuit's shape rules).
    let outputs = (c.output_start() as usize, (RESERVED + num_in) as Slot);
    let mut slots = SlotAllocator::new(slot_of, outputs);
    // The first writes take fresh slots in order: the inputs fill RESERVED..RESERVED + num_in.
    for w in 0..num_in {
        let s = slots.write(w);
        debug_assert_eq!(s as usize, RESERVED + w, "input slots out of order");
    }
    slots.count += num_out;
    (0..num_in)
        .filter(|&w| last[w] == 0)
        .for_each(|w| slots.release(w));

    let mut plan = Plan {
        // Sized once: growing them would copy them and touch their pages twice.
        free: SlotSteps::with_capacity(c.gates.len() - order.len()),
        gates: SlotOps::with_capacity(order.len()),
        ids: Vec::with_capacity(order.len()),
        segments: Vec::new(),
        num_inputs: num_in,
        num_outputs: num_out,
        num_slots: 0,
        batching,
        xor,
        batches: 0,
        and_gates: 0,
        xor_gates: 0,
    };
    let mut read = Vec::new();
    for (pos, item) in items.iter().enumerate() {
        ahead(pos);
        let pos = pos as u32 + 1;
        match *item {
            Item::Free(i) => place_free(&c.gates[i as usize], (pos, last), &mut slots, &mut plan),
            Item::Batch(..) => {
                let gates = item.gates(order);
                place_batch(c, gates, (pos, last), (&mut slots, &mut plan), &mut read);
            }
        }
    }
    plan.segments.push(Segment {
        free_end: plan.free.len() as u32,
        gates_end: plan.gates.len() as u32,
        xor: false,
    });
    plan.num_slots = slots.count;
    plan
}

/// The slots `g` reads first and second (the zero slot for a second input it lacks).
fn input_slots(g: &Gate, slot_of: &[Slot]) -> (Slot, Slot) {
    let slot = |k: usize| match g.inputs().get(k) {
        Some(&k) => slot_of[g.input(k) as usize],
        None => ZERO_SLOT,
    };
    (slot(0), slot(1))
}

/// Releases the wires `g` reads for the last time at item `pos` (`last` as in
/// [`assign_slots`]).
fn release_read(g: &Gate, (pos, last): (u32, &[u32]), slots: &mut SlotAllocator) {
    for &k in g.inputs() {
        let w = g.input(k) as usize;
        if last[w] == pos {
            slots.release(w);
        }
    }
}

/// Places free gate `g`, item `pos` of a schedule whose wires are read last by items `last`
/// (as in [`assign_slots`]): reads its inputs' slots, releases those read for the last time,
/// writes its output (perhaps to a slot just released) and releases it if it is never read.
fn place_free(g: &Gate, (pos, last): (u32, &[u32]), slots: &mut SlotAllocator, plan: &mut Plan) {
    let (a, b) = input_slots(g, slots.slot_of);
    release_read(g, (pos, last), slots);
    let out = slots.write(g.out as usize);
    plan.xor_gates += usize::from(g.kind == GateKind::Xor);
    // A free gate as `out = a ⊕ b` over the constant slots (see [`Plan`]).
    let (a, b) = match g.kind {
        // AND gates are always batched: this arm sees free XOR gates only.
        GateKind::Xor | GateKind::And => (a, b),
        GateKind::Inv => (a, ONE_SLOT),
        GateKind::Eqw => (a, ZERO_SLOT),
        GateKind::Eq if g.a == 1 => (ONE_SLOT, ZERO_SLOT),
        GateKind::Eq => (ZERO_SLOT, ZERO_SLOT),
    };
    plan.free.push(a, b, out);
    if last[g.out as usize] == 0 {
        slots.release(g.out as usize);
    }
}

/// Places the batch `gates` (circuit indices), item `pos` (`last` as in [`assign_slots`]):
/// reads every input's slot (into `read`), writes the outputs, to consecutive slots where none
/// is a circuit output (those have theirs; the kernels then store them with plain stores), and
/// only then releases what the batch reads for the last time, since the engine writes its
/// outputs in place while other gates of the batch are still being read; then the outputs
/// never read.
fn place_batch(
    c: &Circuit,
    gates: &[u32],
    (pos, last): (u32, &[u32]),
    (slots, plan): (&mut SlotAllocator, &mut Plan),
    read: &mut Vec<(Slot, Slot)>,
) {
    read.clear();
    read.extend(
        gates
            .iter()
            .map(|&i| input_slots(&c.gates[i as usize], slots.slot_of)),
    );
    let first_out = slots.outputs.0;
    let run = gates
        .iter()
        .all(|&i| (c.gates[i as usize].out as usize) < first_out)
        .then(|| slots.take_run(gates.len()));
    for (k, (&i, &(a, b))) in gates.iter().zip(read.iter()).enumerate() {
        let g = &c.gates[i as usize];
        let out = match run {
            Some(first) => slots.place(g.out as usize, first + k as Slot),
            None => slots.write(g.out as usize),
        };
        plan.and_gates += usize::from(g.kind == GateKind::And);
        plan.xor_gates += usize::from(g.kind == GateKind::Xor);
        plan.gates.push(a, b, out);
        plan.ids.push(i);
    }
    for &i in gates {
        release_read(&c.gates[i as usize], (pos, last), slots);
    }
    plan.batches += 1;
    plan.segments.push(Segment {
        free_end: plan.free.len() as u32,
        gates_end: plan.gates.len() as u32,
        xor: c.gates[gates[0] as usize].kind == GateKind::Xor,
    });
    for &i in gates {
        let w = c.gates[i as usize].out as usize;
        if last[w] == 0 {
            slots.release(w);
        }
    }
}

/// Slots handed out and taken back, of two kinds that never mix: single slots, reused most
/// recently freed first (likely still in cache), and run slots, which hold a batch's outputs
/// in consecutive slots and are reused by later runs only (first fit), so single writes do not
/// fragment the free runs.
struct SlotAllocator<'a> {
    slot_of: &'a mut [Slot],
    /// Freed single slots, most recent last.
    free: Vec<Slot>,
    /// Bit s: run slot s is free.
    free_run: Vec<u64>,
    /// No word of `free_run` before this one has a bit set.
    first_free: usize,
    /// Bit s: slot s is a run slot.
    run_slot: Vec<u64>,
    count: usize,
    /// The first output wire and its slot: output wires have slots of their own, in order.
    outputs: (usize, Slot),
}

/// Bit `s` of `bits`.
fn bit(bits: &[u64], s: usize) -> bool {
    bits.get(s / 64).is_some_and(|w| w >> (s % 64) & 1 == 1)
}

/// Sets bit `s` of `bits` to `value`.
fn set_bit(bits: &mut Vec<u64>, s: usize, value: bool) {
    if bits.len() <= s / 64 {
        bits.resize(s / 64 + 1, 0);
    }
    let mask = 1u64 << (s % 64);
    if value {
        bits[s / 64] |= mask;
    } else {
        bits[s / 64] &= !mask;
    }
}

impl<'a> SlotAllocator<'a> {
    /// An allocator placing wires in `slot_of` (every entry `Slot::MAX`: no slot yet).
    fn new(slot_of: &'a mut [Slot], outputs: (usize, Slot)) -> Self {
        SlotAllocator {
            slot_of,
            free: Vec::new(),
            free_run: Vec::new(),
            first_free: 0,
            run_slot: Vec::new(),
            count: RESERVED,
            outputs,
        }
    }

    fn write(&mut self, wire: usize) -> Slot {
        let (first_out, out_slot) = self.outputs;
        let s = if wire >= first_out {
            out_slot + (wire - first_out) as Slot
        } else {
            self.free.pop().unwrap_or_else(|| {
                self.count += 1;
                (self.count - 1) as Slot
            })
        };
        self.slot_of[wire] = s;
        s
    }

    /// Gives `wire` slot `s` of a run from [`Self::take_run`].
    fn place(&mut self, wire: usize, s: Slot) -> Slot {
        self.slot_of[wire] = s;
        s
    }

    /// Takes `n` consecutive run slots: the first run of free ones, else fresh ones at the end
    /// (after the free run slots that end the array). Returns the first.
    fn take_run(&mut self, n: usize) -> Slot {
        let (start, len) = self.first_free_run(n);
        let first = if len > 0 && (len >= n || start + len >= self.count) {
            start
        } else {
            self.count
        };
        for s in first..first + n {
            set_bit(&mut self.free_run, s, false);
            set_bit(&mut self.run_slot, s, true);
        }
        while self.free_run.get(self.first_free).is_some_and(|&w| w == 0) {
            self.first_free += 1;
        }
        self.count = self.count.max(first + n);
        first as Slot
    }

    /// The first run of at least `n` free run slots below the slot count, else the run of them
    /// that ends the array (length 0 if none does): (its first slot, its length). Whole words
    /// at a time, from the first word holding a free run slot.
    fn first_free_run(&self, n: usize) -> (usize, usize) {
        let (mut start, mut len) = (0, 0);
        for (k, &word) in self.free_run.iter().enumerate().skip(self.first_free) {
            let base = k * 64;
            if base >= self.count {
                break;
            }
            let mut at = 0;
            while at < 64 {
                let rest = word >> at;
                // Free slots from `at` on, then taken ones (to the word's end if none is free).
                let free = (rest.trailing_ones() as usize).min(64 - at);
                if free > 0 {
                    if len == 0 {
                        start = base + at;
                    }
                    len += free;
                    if len >= n {
                        return (start, len);
                    }
                    at += free;
                }
                if base + at >= self.count {
                    // A run up to here ends the array.
                    return (start, len);
                }
                if at < 64 {
                    len = 0;
                    at += ((rest >> free).trailing_zeros() as usize).min(64 - at);
                }
            }
        }
        (start, len)
    }

    fn release(&mut self, wire: usize) {
        let s = std::mem::replace(&mut self.slot_of[wire], Slot::MAX);
        if s != Slot::MAX {
            if bit(&self.run_slot, s as usize) {
                set_bit(&mut self.free_run, s as usize, true);
                self.first_free = self.first_free.min(s as usize / 64);
            } else {
                self.free.push(s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_circuit::library::{builtin, ultrasfe};

    /// The live wires counted without levelling are a lower bound on the slots of the levelled
    /// plan, so a plan is never windowed that would have fitted whole.
    #[test]
    fn levelled_live_wires_bound_the_layered_slots() {
        let circuits = ["aes128", "sha256", "mul64", "levels16", "mvmul"]
            .map(|name| builtin(name).and_then(Result::ok).unwrap())
            .into_iter()
            .chain([ultrasfe::biomatch(8, 2, 16).unwrap()]);
        for c in circuits {
            for xor in [XorGates::Free, XorGates::Garbled] {
                let scratch = &mut Scratch::default();
                let live = RESERVED + levelled_live(&c, xor, scratch);
                let slots = Plan::layered(&c, xor, c.gates.len(), scratch).num_slots;
                assert!(live <= slots, "{xor:?}: {live} live, {slots} slots");
            }
        }
        // BioMatch with the seed's parameters is windowed without being levelled whole.
        let big = ultrasfe::biomatch(512, 4, 64).unwrap();
        assert!(levelled_live(&big, XorGates::Free, &mut Scratch::default()) > LAYER_SLOTS);
    }

    /// The unbatched reference hashes one gate per batch (every AND gate, and every XOR gate
    /// of a scheme that garbles them), in circuit order, and says so by name.
    #[test]
    fn no_batching_is_one_gate_per_batch() {
        for name in ["aes128", "sha1", "mul64"] {
            let c = builtin(name).and_then(Result::ok).unwrap();
            for xor in [XorGates::Free, XorGates::Garbled] {
                let plan = Plan::with_xor(&c, Batching::NONE, xor);
                let stats = plan.stats();
                let batched = match xor {
                    XorGates::Free => stats.and_gates,
                    XorGates::Garbled => stats.and_gates + stats.xor_gates,
                };
                assert_eq!(stats.batches, batched, "{name} {xor:?}");
                assert_eq!(plan.batching.name(), "none");
            }
        }
        assert_eq!(Batching::DYNAMIC.name(), "dynamic");
    }

    /// Batches that write no circuit output write consecutive slots, and the run slots they
    /// take keep the slot count within 1.5 times that of placing every label on its own.
    #[test]
    fn batches_write_runs_of_slots() {
        for name in ["aes128", "sha256", "sha1", "mul64"] {
            let c = builtin(name).and_then(Result::ok).unwrap();
            for batching in [Batching::DYNAMIC, Batching::Layered] {
                let plan = Plan::new(&c, batching);
                let outputs = plan.output_slots();
                let mut runs = 0;
                for k in 0..plan.segments.len() {
                    let (_, gates) = plan.segment(k);
                    let out = &plan.gates.out[gates];
                    if out.iter().any(|&s| outputs.contains(&(s as usize))) {
                        continue;
                    }
                    let consecutive = out.windows(2).all(|w| w[1] == w[0] + 1);
                    assert!(consecutive, "{name} {batching:?} segment {k}");
                    runs += 1;
                }
                assert!(runs > 0, "{name} {batching:?}");
                let live = RESERVED + levelled_live(&c, XorGates::Free, &mut Scratch::default());
                if batching == Batching::Layered {
                    assert!(
                        2 * plan.num_slots <= 3 * live,
                        "{name}: {} slots",
                        plan.num_slots
                    );
                }
            }
        }
    }

    /// The engine writes a batch's outputs in place while the batch is still being read, so
    /// no batch may write a slot it reads.
    #[test]
    fn no_batch_writes_a_slot_it_reads() {
        let circuits = ["aes128", "sha256", "mul64", "levels16"]
            .map(|name| builtin(name).and_then(Result::ok).unwrap())
            .into_iter()
            .chain([ultrasfe::biomatch(8, 2, 16).unwrap()]);
        for c in circuits {
            for xor in [XorGates::Free, XorGates::Garbled] {
                let plans = [
                    Plan::with_xor(&c, Batching::DYNAMIC, xor),
                    Plan::with_xor(&c, Batching::Dynamic { max: 3 }, xor),
                    Plan::with_xor(&c, Batching::Layered, xor),
                    Plan::layered_in_windows(&c, xor, 50),
                ];
                for plan in plans {
                    for k in 0..plan.segments.len() {
                        let (_, gates) = plan.segment(k);
                        let read: std::collections::HashSet<Slot> = plan.gates.a[gates.clone()]
                            .iter()
                            .chain(&plan.gates.b[gates.clone()])
                            .copied()
                            .collect();
                        let clash = plan.gates.out[gates].iter().find(|s| read.contains(s));
                        assert_eq!(clash, None, "{:?} {xor:?} segment {k}", plan.batching);
                    }
                }
            }
        }
    }

    /// Runs taken word by word are the first fit a slot-by-slot scan finds: random takes and
    /// releases against that scan.
    #[test]
    fn runs_are_first_fit() {
        let first_fit = |a: &SlotAllocator, n: usize| {
            let (mut start, mut len) = (0, 0);
            for s in 0..a.count {
                if len == n {
                    break;
                }
                if bit(&a.free_run, s) {
                    start = if len == 0 { s } else { start };
                    len += 1;
                } else {
                    len = 0;
                }
            }
            if len > 0 && (len == n || start + len == a.count) {
                start
            } else {
                a.count
            }
        };
        let mut prg = tessera_core::Prg::from_seed_block(tessera_core::Block::new(5));
        let wires = 1 << 20;
        let mut slot_of = vec![Slot::MAX; wires];
        let mut a = SlotAllocator::new(&mut slot_of, (wires, 0));
        let (mut live, mut next) = (Vec::new(), 0);
        for _ in 0..3000 {
            let r = prg.random_block().low() as usize;
            if !r.is_multiple_of(3) || live.is_empty() {
                let n = (r >> 8) % 300 + 1;
                let want = first_fit(&a, n);
                let got = a.take_run(n) as usize;
                assert_eq!(got, want, "{n} slots");
                for k in 0..n {
                    a.place(next, (got + k) as Slot);
                    live.push(next);
                    next += 1;
                }
            } else {
                for _ in 0..(r >> 8) % 200 {
                    let k = prg.random_block().low() as usize % live.len().max(1);
                    if k < live.len() {
                        a.release(live.swap_remove(k));
                    }
                }
            }
        }
    }
}
