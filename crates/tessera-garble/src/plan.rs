//! The order in which gates are garbled and where their labels live (VASA §4.1).
//!
//! A plan is compiled once per circuit and batching strategy and shared by garbler and
//! evaluator, so both process the AND gates, and so read and write the tables, in one order.
//! Labels live in slots, not one per wire: a slot is released after the last step that reads its
//! wire and reused, so memory follows the live wires, not the circuit's size.

use tessera_circuit::analysis::and_depths;
use tessera_circuit::{Circuit, GateKind};

/// The queue length of [`Batching::DYNAMIC`]: 1024 gates, 4096 hashes to garble.
pub const DYNAMIC_MAX: usize = 1024;

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
    /// layers run first.
    Layered,
}

impl Batching {
    /// Dynamic batching with a queue of [`DYNAMIC_MAX`] gates.
    pub const DYNAMIC: Batching = Batching::Dynamic { max: DYNAMIC_MAX };

    /// The strategy a circuit gets by default: layering where dynamic batching would leave the
    /// AES pipeline short of independent calls (mean batch below 32 AND gates, so below 128
    /// hashes), dynamic batching otherwise, since it keeps labels in cache and memory small.
    /// The threshold comes from `tessera bench garble` on the library's circuits.
    pub fn default_for(circuit: &Circuit) -> Batching {
        // The batch sizes only: no need to place labels.
        let (items, ands) = dynamic_order(circuit, DYNAMIC_MAX);
        let batches = count_batches(&items);
        if !ands.is_empty() && (ands.len() as f64) < 32.0 * batches as f64 {
            Batching::Layered
        } else {
            Batching::DYNAMIC
        }
    }

    /// Name as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Batching::Dynamic { .. } => "dynamic",
            Batching::Layered => "layered",
        }
    }
}

/// AND gates handed to the scheme at once: 128 gates are 512 hashes to garble, and the
/// scheme's buffers (about 24 KiB) stay in a 32 KiB L1 cache.
pub(crate) const CHUNK: usize = 128;

/// A slot index.
pub(crate) type Slot = u32;

/// One step of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// out = a ⊕ b.
    Xor { a: Slot, b: Slot, out: Slot },
    /// out = ¬a.
    Inv { a: Slot, out: Slot },
    /// out = a.
    Copy { a: Slot, out: Slot },
    /// out = a public constant.
    Const { value: bool, out: Slot },
    /// AND gates `ands[start..end]` (at most [`CHUNK`]), independent of each other; all are
    /// read before any is written.
    And { start: u32, end: u32 },
}

/// One AND gate of a batch: input and output slots and the gate's index in the circuit (its
/// hash tweak, so every strategy produces the same labels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AndGate {
    pub a: Slot,
    pub b: Slot,
    pub out: Slot,
    pub id: u32,
}

/// A compiled schedule for one circuit.
#[derive(Clone, Debug)]
pub struct Plan {
    pub(crate) steps: Vec<Step>,
    pub(crate) ands: Vec<AndGate>,
    pub(crate) input_slots: Vec<Slot>,
    pub(crate) output_slots: Vec<Slot>,
    pub(crate) num_slots: usize,
    batching: Batching,
    batches: usize,
    xor_gates: usize,
}

/// Sizes of a plan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanStats {
    /// AND gates.
    pub and_gates: usize,
    /// XOR gates.
    pub xor_gates: usize,
    /// Number of AND batches.
    pub batches: usize,
    /// Label slots (the most labels alive at once).
    pub slots: usize,
}

impl PlanStats {
    /// AND gates per batch on average.
    pub fn mean_batch(&self) -> f64 {
        self.and_gates as f64 / self.batches.max(1) as f64
    }
}

/// Gate order before slot assignment: a free gate, or a batch of AND gates (circuit indices).
enum Item {
    Free(usize),
    Batch(std::ops::Range<usize>),
}

impl Plan {
    /// Compiles `circuit` (which must be valid; see [`Circuit::check`]) for `batching`.
    pub fn new(circuit: &Circuit, batching: Batching) -> Plan {
        let (items, and_order) = match batching {
            Batching::Dynamic { max } => dynamic_order(circuit, max.max(1)),
            Batching::Layered => layered_order(circuit),
        };
        let batches = count_batches(&items);
        // Each chunk reads all its inputs before writing, so chunks are the unit of slot reuse.
        let mut chunked = Vec::with_capacity(items.len());
        for item in items {
            match item {
                Item::Free(i) => chunked.push(Item::Free(i)),
                Item::Batch(r) => chunked.extend(
                    r.clone()
                        .step_by(CHUNK)
                        .map(|s| Item::Batch(s..(s + CHUNK).min(r.end))),
                ),
            }
        }
        assign_slots(circuit, batching, batches, &chunked, &and_order)
    }

    /// The strategy it was compiled for.
    pub fn batching(&self) -> Batching {
        self.batching
    }

    /// Its sizes.
    pub fn stats(&self) -> PlanStats {
        PlanStats {
            and_gates: self.ands.len(),
            xor_gates: self.xor_gates,
            batches: self.batches,
            slots: self.num_slots,
        }
    }

    /// Number of input wires the plan expects labels for.
    pub fn num_inputs(&self) -> usize {
        self.input_slots.len()
    }

    /// Number of output wires.
    pub fn num_outputs(&self) -> usize {
        self.output_slots.len()
    }
}

fn count_batches(items: &[Item]) -> usize {
    items.iter().filter(|i| matches!(i, Item::Batch(_))).count()
}

fn dynamic_order(c: &Circuit, max: usize) -> (Vec<Item>, Vec<usize>) {
    let mut items = Vec::new();
    let mut ands = Vec::new();
    // queued[w]: wire w is the output of a queued, not yet executed AND gate.
    let mut queued = vec![false; c.num_wires as usize];
    let mut start = 0;
    let flush = |items: &mut Vec<Item>, ands: &[usize], start: &mut usize, queued: &mut [bool]| {
        if ands.len() > *start {
            for &g in &ands[*start..] {
                queued[c.gates[g].out as usize] = false;
            }
            items.push(Item::Batch(*start..ands.len()));
            *start = ands.len();
        }
    };
    for (i, g) in c.gates.iter().enumerate() {
        if g.inputs().iter().any(|&k| queued[g.input(k) as usize]) {
            flush(&mut items, &ands, &mut start, &mut queued);
        }
        if g.kind == GateKind::And {
            ands.push(i);
            queued[g.out as usize] = true;
            if ands.len() - start >= max {
                flush(&mut items, &ands, &mut start, &mut queued);
            }
        } else {
            items.push(Item::Free(i));
        }
    }
    flush(&mut items, &ands, &mut start, &mut queued);
    (items, ands)
}

fn layered_order(c: &Circuit) -> (Vec<Item>, Vec<usize>) {
    let depth = and_depths(c);
    let levels = depth.iter().copied().max().unwrap_or(0) as usize;
    // Free gates of level L, then AND gates of level L + 1, for each L.
    let mut free: Vec<Vec<usize>> = vec![Vec::new(); levels + 1];
    let mut and: Vec<Vec<usize>> = vec![Vec::new(); levels + 1];
    for (i, g) in c.gates.iter().enumerate() {
        let d = depth[i] as usize;
        if g.kind == GateKind::And {
            and[d - 1].push(i);
        } else {
            free[d].push(i);
        }
    }
    let mut items = Vec::new();
    let mut ands = Vec::new();
    for (f, a) in free.into_iter().zip(and) {
        items.extend(f.into_iter().map(Item::Free));
        if !a.is_empty() {
            items.push(Item::Batch(ands.len()..ands.len() + a.len()));
            ands.extend(a);
        }
    }
    (items, ands)
}

/// Places labels in slots: a wire's slot is freed after the last item that reads it (never for
/// outputs) and reused by later writes. Within an item all reads happen before any write, so
/// an item may write into a slot it frees.
fn assign_slots(
    c: &Circuit,
    batching: Batching,
    batches: usize,
    items: &[Item],
    and_order: &[usize],
) -> Plan {
    let n = c.num_wires as usize;
    let gate_reads = |i: usize| {
        let g = &c.gates[i];
        g.inputs().iter().map(move |&k| g.input(k) as usize)
    };
    // last[w]: 1 + the position of the last item reading w; 0: never read; MAX: an output.
    let mut last = vec![0usize; n];
    for (pos, item) in items.iter().enumerate() {
        match item {
            Item::Free(i) => gate_reads(*i).for_each(|w| last[w] = pos + 1),
            Item::Batch(r) => and_order[r.clone()]
                .iter()
                .for_each(|&i| gate_reads(i).for_each(|w| last[w] = pos + 1)),
        }
    }
    last[c.output_start() as usize..].fill(usize::MAX);

    let mut slots = SlotAllocator {
        slot_of: vec![Slot::MAX; n],
        free: Vec::new(),
        count: 0,
    };
    let num_in = c.num_input_wires() as usize;
    let input_slots: Vec<Slot> = (0..num_in).map(|w| slots.write(w)).collect();
    (0..num_in)
        .filter(|&w| last[w] == 0)
        .for_each(|w| slots.release(w));

    let mut steps = Vec::with_capacity(items.len());
    let mut ands = Vec::with_capacity(and_order.len());
    let mut xor_gates = 0;
    for (pos, item) in items.iter().enumerate() {
        let pos = pos + 1;
        let gates: &[usize] = match item {
            Item::Free(i) => std::slice::from_ref(i),
            Item::Batch(r) => &and_order[r.clone()],
        };
        // Read, then release what is read for the last time, then write.
        let read: Vec<(Slot, Slot)> = gates
            .iter()
            .map(|&i| {
                let g = &c.gates[i];
                let slot = |k: usize| match g.inputs().get(k) {
                    Some(&k) => slots.slot_of[g.input(k) as usize],
                    None => 0,
                };
                (slot(0), slot(1))
            })
            .collect();
        for &i in gates {
            for w in gate_reads(i) {
                if last[w] == pos {
                    slots.release(w);
                }
            }
        }
        let start = ands.len() as u32;
        for (&i, &(a, b)) in gates.iter().zip(&read) {
            let g = &c.gates[i];
            let out = slots.write(g.out as usize);
            match g.kind {
                GateKind::And => ands.push(AndGate {
                    a,
                    b,
                    out,
                    id: i as u32,
                }),
                GateKind::Xor => {
                    xor_gates += 1;
                    steps.push(Step::Xor { a, b, out });
                }
                GateKind::Inv => steps.push(Step::Inv { a, out }),
                GateKind::Eqw => steps.push(Step::Copy { a, out }),
                GateKind::Eq => steps.push(Step::Const {
                    value: g.a == 1,
                    out,
                }),
            }
        }
        if let Item::Batch(_) = item {
            steps.push(Step::And {
                start,
                end: ands.len() as u32,
            });
        }
        for &i in gates {
            let w = c.gates[i].out as usize;
            if last[w] == 0 {
                slots.release(w);
            }
        }
    }
    let output_slots = (c.output_start() as usize..n)
        .map(|w| slots.slot_of[w])
        .collect();
    Plan {
        batches,
        steps,
        ands,
        input_slots,
        output_slots,
        num_slots: slots.count,
        batching,
        xor_gates,
    }
}

/// Slots handed out and taken back, most recently freed first (it is likely still in cache).
struct SlotAllocator {
    slot_of: Vec<Slot>,
    free: Vec<Slot>,
    count: usize,
}

impl SlotAllocator {
    fn write(&mut self, wire: usize) -> Slot {
        let s = self.free.pop().unwrap_or_else(|| {
            self.count += 1;
            (self.count - 1) as Slot
        });
        self.slot_of[wire] = s;
        s
    }

    fn release(&mut self, wire: usize) {
        let s = std::mem::replace(&mut self.slot_of[wire], Slot::MAX);
        if s != Slot::MAX {
            self.free.push(s);
        }
    }
}
